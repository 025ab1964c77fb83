//! The oracle's rules between parameters, and the refusals of single methods the spec
//! table cannot express: `get_mmp_status`'s group and scope, the second factor of a 2fa
//! account, `public/auth`'s grants, `exchange_token`'s refresh token.

use serde_json::{Map, Value};

use super::auth::auth_params_refusal;
use super::{OracleKnowledge, Prediction, error};
use crate::{FuzzRequest, RequestAuth};
use harness_model::case::Auth;
use harness_protocol::auth::scope::Scope;
use harness_protocol::spec::{self, Method};
use harness_protocol::wire::TransportKind;

/// A request's parameters as text, the way the server reads them: over a query string
/// every value is text, whatever its JSON type was.
struct ParamText<'a> {
    params: &'a Map<String, Value>,
    mmp_group: Option<String>,
    index_name: Option<String>,
    requested_scope: Option<String>,
}

impl<'a> ParamText<'a> {
    /// The text of `request`'s parameters.
    fn of(request: &'a FuzzRequest) -> ParamText<'a> {
        let params: &Map<String, Value> = &request.params;
        let query = request.transport == TransportKind::HttpQuery;
        // Over a query string every value is text, whatever its JSON type was.
        let owned = |name: &str| match params.get(name) {
            Some(Value::String(text)) => Some(text.clone()),
            Some(value) if query => harness_protocol::wire::query_value(value),
            _ => None,
        };
        ParamText {
            params,
            mmp_group: owned("mmp_group"),
            index_name: owned("index_name"),
            requested_scope: owned("scope"),
        }
    }

    /// Parameter `name` as text.
    fn text(&self, name: &str) -> Option<&str> {
        match name {
            "mmp_group" => self.mmp_group.as_deref(),
            "index_name" => self.index_name.as_deref(),
            "scope" => self.requested_scope.as_deref(),
            _ => self.params.get(name).and_then(Value::as_str),
        }
    }
}

/// Rules between parameters, and per-method refusals the table cannot express.
pub(super) fn method_refusal(
    request: &FuzzRequest,
    rule: &Method,
    knowledge: &OracleKnowledge,
) -> Option<Prediction> {
    let params = ParamText::of(request);
    match rule.name {
        spec::MMP_STATUS_METHOD => mmp_status_refusal(&params, knowledge),
        name if harness_protocol::spec::NEEDS_SECOND_FACTOR.contains(&name) => {
            second_factor_refusal(request, &params, knowledge)
        }
        spec::AUTH_METHOD => auth_params_refusal(request, knowledge),
        spec::EXCHANGE_TOKEN_METHOD => exchange_token_refusal(request, &params, knowledge),
        _ => None,
    }
}

/// `get_mmp_status`: a group without an index (4.6), `block_rfq` without its scope.
fn mmp_status_refusal(params: &ParamText<'_>, knowledge: &OracleKnowledge) -> Option<Prediction> {
    if params
        .text("mmp_group")
        .is_some_and(|group| !group.is_empty())
        && params.text("index_name").is_none()
    {
        return Some(error(
            "m.get_mmp_status.mmp_group_requires_index",
            "mmp_group without index_name",
        ));
    }
    if params.text("mmp_group").is_some_and(str::is_empty) && params.text("index_name").is_none() {
        // 4.6: mmp_group "requires index_name", and empty "targets the default
        // orders MMP group (not an error)": read either way.
        return Some(Prediction::either("an empty mmp_group without index_name"));
    }
    let block_rfq = params
        .params
        .get("block_rfq")
        .is_some_and(|flag| flag == &Value::Bool(true) || flag == "true");
    if block_rfq
        && let Some(granted) = &knowledge.granted
        && !granted.grants(spec::MMP_BLOCK_RFQ_SCOPE)
    {
        return Some(error(
            "m.get_mmp_status.scope",
            "block_rfq without block_rfq:read",
        ));
    }
    None
}

/// A method that needs the second factor, called by the 2fa account without it (13668).
fn second_factor_refusal(
    request: &FuzzRequest,
    params: &ParamText<'_>,
    knowledge: &OracleKnowledge,
) -> Option<Prediction> {
    if !matches!(&request.auth, RequestAuth::Step(Auth::Bearer(bearer)) if bearer.account.as_deref() == Some("two_factor"))
    {
        return None;
    }
    // 13668 is the answer to a call that lacks only the second factor: SPEC.md
    // does not say which refusal comes first when the parameters are wrong too
    // (a subaccount that is not the account's, a state outside the two).
    let own_subaccount = knowledge.two_factor_subaccount.is_some_and(|id| {
        params.params.get("sid").and_then(Value::as_u64) == Some(id)
            || params.text("sid") == Some(id.to_string().as_str())
    });
    let state_listed = matches!(params.text("state"), Some("enable" | "disable"));
    if !(own_subaccount && state_listed) {
        return Some(Prediction::error(
            "auth.two_factor.13668",
            "a 2fa account without the second factor, and parameters that may be refused first",
        ));
    }
    Some(
        error(
            "auth.two_factor.13668",
            "a 2fa account without the second factor",
        )
        .with_code(harness_protocol::spec::SECOND_FACTOR_ERROR_CODE),
    )
}

/// `exchange_token`: a scope wider than the caller's (either), a refresh token never issued.
fn exchange_token_refusal(
    request: &FuzzRequest,
    params: &ParamText<'_>,
    knowledge: &OracleKnowledge,
) -> Option<Prediction> {
    if let (Some(granted), Some(requested)) = (&knowledge.granted, params.text("scope"))
        && !Scope::parse(requested).within(granted)
    {
        // "must not exceed the caller's permissions": refusing it and capping it
        // both keep the rule, and the response shape is not shown (4.2).
        return Some(Prediction::either(""));
    }
    if !matches!(request.auth, RequestAuth::RefreshOf { .. }) {
        return Some(error(
            "auth.exchange_token.accepted",
            "a refresh token that was never issued",
        ));
    }
    None
}
