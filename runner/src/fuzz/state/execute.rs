//! Sending a sequence step by step over HTTP and its WebSocket connections, judging each
//! answer against the model before the next step goes out.
//!
//! Tokens, login parameters and signed headers are kept per step, so later steps can use
//! an old token, refresh it again, or replay a nonce. A step whose token never came (its
//! issuing step was refused where SPEC.md left that open) is skipped. Each WebSocket
//! connection of the sequence is opened on first use and closed after a logout on it, or
//! at the end. The paced method takes its account's budget through the sender's pacer,
//! waiting at most the run's `paced_wait`; a paced step the budget has no room for is
//! skipped, so a sequence never holds its worker behind the budget.

use std::collections::BTreeMap;

use serde_json::{Map, Value, json};

use super::assess::{self, Seen};
use super::model::{Model, Observed, Outcome};
use super::{Action, Grant, SeqStep, Sequence, Who};
use crate::fuzz::send::Sender;
use crate::transport::{
    self, Authorization, Exchange, Outgoing, SignatureParams, SignedPlan, TransportErrorKind,
    WsSession, place_bearer,
};
use harness_model::case::TransportKind;
use harness_model::check::{Finding, Redactor};
use harness_protocol::auth::nonce::fresh_nonce;
use harness_protocol::spec;

/// The scope every login asks for (with `session:<name>` when it names one): enough for
/// the private calls, the toggle, and a `delete_member` that must be refused for lack of
/// `mainaccount`.
pub(crate) const LOGIN_SCOPE: &str = "account:read_write trade:read";

/// What came of running a sequence.
#[derive(Clone, Debug, Default)]
pub(crate) struct SequenceRun {
    /// Requests sent.
    pub(crate) sent: usize,
    /// Steps predicted to give a result, an error, or either.
    pub(crate) predicted: [usize; 3],
    /// Steps skipped: the token they need never came, or the paced budget had no room.
    pub(crate) skipped: Vec<usize>,
    /// Answers throttled, not judged.
    pub(crate) throttled: usize,
    /// Steps that got no answer (timed out, refused): not judged.
    pub(crate) unanswered: usize,
    /// Steps calling the paced method that were sent, and those skipped for want of room
    /// in its budget.
    pub(crate) paced: [usize; 2],
    /// The first step that broke the model, with the failure on it.
    pub(crate) failure: Option<(usize, Finding)>,
    /// What the model predicted of each step sent (`None`: skipped or not reached).
    pub(crate) outcomes: Vec<Option<Outcome>>,
}

/// A token set as a step received it.
#[derive(Clone, Debug, Default)]
struct Held {
    access: String,
    refresh: String,
}

/// Sends `sequence`, its JSON-RPC ids from `first_id` on, and stops at the first step that
/// breaks the model.
pub(crate) async fn execute(
    sender: &Sender,
    redactor: &Redactor,
    sequence: &Sequence,
    first_id: u64,
) -> SequenceRun {
    let names = sequence.connection_names();
    let mut run = SequenceRun {
        outcomes: vec![None; sequence.steps.len()],
        ..SequenceRun::default()
    };
    let mut model = Model::new();
    let mut held: Vec<Option<Held>> = vec![None; sequence.steps.len()];
    let mut sent_params: Vec<Option<Map<String, Value>>> = vec![None; sequence.steps.len()];
    let mut plans: Vec<Option<SignedPlan>> = vec![None; sequence.steps.len()];
    let mut connections: BTreeMap<String, Option<WsSession>> = BTreeMap::new();
    for (index, step) in sequence.steps.iter().enumerate() {
        let connection = names[index].as_deref();
        let prediction = model.predict(step, connection);
        let Some((outgoing, _)) = build(sender, step, &held, &sent_params, &plans) else {
            run.skipped.push(index);
            continue;
        };
        if harness_protocol::spec::is_paced(step.action.method()) {
            let token = step
                .action
                .depends_on()
                .and_then(|of| held.get(of).cloned().flatten());
            let paced = sender
                .pace_within(
                    token.as_ref().map(|held| held.access.as_str()),
                    sender.paced_wait,
                )
                .await;
            // No room in the budget: the call is skipped, not waited for, and the model
            // learns nothing from it (a read of the log changes no token).
            if !paced {
                run.skipped.push(index);
                run.paced[1] += 1;
                continue;
            }
            run.paced[0] += 1;
        }
        run.outcomes[index] = Some(prediction.outcome);
        run.predicted[match prediction.outcome {
            Outcome::Result => 0,
            Outcome::Error => 1,
            Outcome::Any => 2,
        }] += 1;
        let id = first_id + index as u64;
        let exchange = match (step.transport, connection) {
            (TransportKind::Ws, Some(name)) => {
                let ws = connections.entry(name.to_owned()).or_default();
                match sender
                    .session()
                    .call_over(TransportKind::Ws, id, &outgoing, ws)
                    .await
                {
                    Ok(exchange) => exchange,
                    Err(error) => {
                        sender.breaker_observes(&error);
                        run.sent += 1;
                        if crate::run::is_no_answer(error.kind) {
                            run.unanswered += 1;
                            break;
                        }
                        let message = format!("the WebSocket could not be opened: {error}");
                        run.failure = Some((
                            index,
                            crate::fuzz::prediction::broken("transport.ws", message),
                        ));
                        break;
                    }
                }
            }
            (transport, _) => sender.session().call_http(transport, id, &outgoing).await,
        };
        sender.observe(&exchange);
        run.sent += 1;
        // No answer (timed out, refused): nothing to judge, so the sequence ends without a
        // finding, counted; the run's breaker decides whether the target stopped answering.
        if exchange.failure.as_ref().is_some_and(|failure| {
            matches!(
                failure.kind,
                TransportErrorKind::Timeout | TransportErrorKind::Connect
            )
        }) {
            run.unanswered += 1;
            break;
        }
        if let Action::Signed { replay_of: None } = step.action
            && let Some(Authorization::Signed(plan)) = &outgoing.authorization
        {
            plans[index] = Some(plan.clone());
        }
        sent_params[index] = Some(outgoing.params.clone());
        let seen = seen(sender, &exchange, redactor);
        let mut broken = match &seen {
            Seen::Nothing(what) => Some(crate::fuzz::prediction::broken(
                transport_clause(step.transport),
                what.clone(),
            )),
            seen => assess::outcome(&prediction, seen),
        };
        let mut observed = Observed::default();
        match &seen {
            Seen::Result(result) => {
                observed.result = true;
                let access = result.get("access_token").and_then(Value::as_str);
                observed.issued_token = access.is_some();
                observed.granted = result
                    .get("scope")
                    .and_then(Value::as_str)
                    .map(str::to_owned);
                if broken.is_none() {
                    broken = token_set_broken(step, &model, &held, result);
                }
                if let Some(access) = access {
                    held[index] = Some(Held {
                        access: access.to_owned(),
                        refresh: result
                            .get("refresh_token")
                            .and_then(Value::as_str)
                            .unwrap_or_default()
                            .to_owned(),
                    });
                }
            }
            Seen::Throttled => run.throttled += 1,
            Seen::Error(..) | Seen::Nothing(_) => {}
        }
        if let Some(mut finding) = broken {
            finding.message = redactor.text(&finding.message);
            run.failure = Some((index, finding));
            break;
        }
        model.apply(index, step, connection, &observed);
        if matches!(step.action, Action::Logout { .. })
            && let Some(name) = connection
            && let Some(Some(ws)) = connections.remove(name)
        {
            ws.close().await;
        }
    }
    for ws in connections.into_values().flatten() {
        ws.close().await;
    }
    if sequence
        .steps
        .iter()
        .any(|step| matches!(step.action, Action::Toggle { enable: false, .. }))
        && model.sub_disabled() != Some(false)
    {
        run.sent += enable_subaccount(sender, first_id + sequence.steps.len() as u64).await;
    }
    run
}

/// Enables the subaccount's login again after a sequence that disabled it and stopped
/// (at a failure, or cut by the shrinker), so the next sequence starts from an enabled
/// login as the model assumes: a fresh login of the main account and a toggle, not judged.
/// The requests sent.
async fn enable_subaccount(sender: &Sender, id: u64) -> usize {
    let session = sender.session();
    let Some(credentials) = session.credentials("main") else {
        return 0;
    };
    let login = crate::transport::ClientSession::login_request(&credentials, Some(LOGIN_SCOPE));
    let answer = session.call_http(TransportKind::HttpBody, id, &login).await;
    let token = answer
        .response
        .as_ref()
        .and_then(|received| received.json.as_ref())
        .and_then(crate::transport::Token::from_answer);
    let (Some(token), Some(sid)) = (token, sender.target.fixtures.subaccount_id) else {
        return 1;
    };
    let mut params = Map::new();
    params.insert("sid".to_owned(), json!(sid));
    params.insert("state".to_owned(), json!("enable"));
    let toggle = Outgoing {
        method: spec::TOGGLE_LOGIN_METHOD.to_owned(),
        params,
        raw: None,
        authorization: place_bearer(TransportKind::HttpBody, &token.access, &mut Map::new()),
    };
    session
        .call_http(TransportKind::HttpBody, id + 1, &toggle)
        .await;
    2
}

/// The request of a step and the account it acts for; `None` when a token it needs never
/// came.
fn build(
    sender: &Sender,
    step: &SeqStep,
    held: &[Option<Held>],
    sent_params: &[Option<Map<String, Value>>],
    plans: &[Option<SignedPlan>],
) -> Option<(Outgoing, Who)> {
    let target = &sender.target;
    let token_of = |index: &usize| held.get(*index).cloned().flatten();
    let mut params = Map::new();
    let mut authorization = None;
    let mut account = Who::Main;
    match &step.action {
        Action::Login {
            who,
            grant,
            session,
        } => {
            account = *who;
            params = login_params(sender, *who, *grant, session.as_deref());
        }
        Action::ReplayLogin { of } => params = sent_params.get(*of).cloned().flatten()?,
        Action::Refresh { of } => {
            params.insert("grant_type".to_owned(), json!("refresh_token"));
            params.insert("refresh_token".to_owned(), json!(token_of(of)?.refresh));
        }
        Action::Fork { of, name } => {
            let names = target.param_names.get(spec::FORK_TOKEN_METHOD)?;
            params.insert(
                names.get("refresh_token")?.clone(),
                json!(token_of(of)?.refresh),
            );
            params.insert(names.get("session_name")?.clone(), json!(name));
        }
        Action::Exchange { of } => {
            params.insert("refresh_token".to_owned(), json!(token_of(of)?.refresh));
            params.insert(
                "subject_id".to_owned(),
                json!(target.fixtures.subaccount_id?),
            );
        }
        Action::Logout { token }
        | Action::Private {
            token: Some(token), ..
        } => {
            authorization = place_bearer(step.transport, &token_of(token)?.access, &mut params);
        }
        Action::Toggle { token, enable } => {
            params.insert("sid".to_owned(), json!(target.fixtures.subaccount_id?));
            let state = if *enable { "enable" } else { "disable" };
            params.insert("state".to_owned(), json!(state));
            authorization = place_bearer(step.transport, &token_of(token)?.access, &mut params);
        }
        Action::DeleteMember { token } => {
            params.insert("member_id".to_owned(), json!(target.fixtures.member_id?));
            authorization = place_bearer(step.transport, &token_of(token)?.access, &mut params);
        }
        Action::Private { token: None, .. } => {}
        Action::Signed { replay_of } => {
            let plan = match replay_of {
                Some(of) => plans.get(*of).cloned().flatten()?,
                None => {
                    let credentials = sender.session().credentials("main").unwrap_or_default();
                    let session = sender.session();
                    session.signed_plan(credentials, session.timestamp(0), fresh_nonce())
                }
            };
            authorization = Some(Authorization::Signed(plan));
        }
    }
    if harness_protocol::spec::is_paced(step.action.method()) {
        // What the `require-unflagged` reading asks for too: a currency and a window, here
        // the whole history, and no count, so the default page size shows (4.8).
        let now = sender.session().timestamp(0);
        let currency = target
            .fixtures
            .currency
            .clone()
            .unwrap_or_else(|| "BTC".to_owned());
        params.insert("currency".to_owned(), json!(currency));
        params.insert("start_timestamp".to_owned(), json!(0));
        params.insert("end_timestamp".to_owned(), json!(now));
    }
    let outgoing = Outgoing {
        method: step.action.method().to_owned(),
        params,
        raw: None,
        authorization,
    };
    Some((outgoing, account))
}

/// The scope a login asks for: [`LOGIN_SCOPE`], and `session:<name>` with a session name.
pub(crate) fn login_scope(session: Option<&str>) -> String {
    match session {
        Some(name) => format!("{LOGIN_SCOPE} session:{name}"),
        None => LOGIN_SCOPE.to_owned(),
    }
}

/// `public/auth` parameters of a login by `grant` for `who`, asking for [`LOGIN_SCOPE`].
fn login_params(
    sender: &Sender,
    who: Who,
    grant: Grant,
    session: Option<&str>,
) -> Map<String, Value> {
    let credentials = sender.session().credentials(who.role()).unwrap_or_default();
    let mut params = Map::new();
    params.insert("client_id".to_owned(), json!(credentials.client_id));
    params.insert("scope".to_owned(), json!(login_scope(session)));
    match grant {
        Grant::ClientCredentials => {
            params.insert("grant_type".to_owned(), json!("client_credentials"));
            transport::insert_client_secret(&mut params, &credentials);
        }
        Grant::ClientSignature => {
            params.insert("grant_type".to_owned(), json!("client_signature"));
            let plan = SignatureParams {
                timestamp: sender.session().timestamp(0),
                nonce: Some(fresh_nonce()),
                ..SignatureParams::default()
            };
            // Empty data always frames (SPEC.md 5.5), so this cannot fail.
            let _ = transport::insert_client_signature(&mut params, &credentials, &plan);
        }
    }
    params
}

fn seen(sender: &Sender, exchange: &Exchange, redactor: &Redactor) -> Seen {
    if let Some(failure) = &exchange.failure {
        return Seen::Nothing(format!("no answer: {}", redactor.text(&failure.message)));
    }
    let answer = exchange
        .response
        .as_ref()
        .and_then(|received| received.json.as_ref());
    Seen::of(answer, &sender.target.limits.throttle_codes)
}

fn transport_clause(transport: TransportKind) -> &'static str {
    match transport {
        TransportKind::HttpQuery => "transport.http.query",
        TransportKind::HttpBody => "transport.http.body",
        TransportKind::Ws | TransportKind::Rest => "transport.ws",
    }
}

/// The token set of a refresh against SPEC.md 5.3 ([`assess::refreshed`]; a fork's
/// response shape is not shown, 4.3), and the default page of the paced call.
fn token_set_broken(
    step: &SeqStep,
    model: &Model,
    held: &[Option<Held>],
    result: &Value,
) -> Option<Finding> {
    match &step.action {
        Action::Private { method, .. } if harness_protocol::spec::is_paced(method) => {
            assess::default_page(method, result)
        }
        Action::Refresh { of } => {
            let old = held.get(*of).cloned().flatten()?;
            let kind = &model.token(*of)?.kind;
            assess::refreshed(&old.access, &old.refresh, kind, result)
        }
        _ => None,
    }
}
