//! What a method body sees of its request: the server state, the checked parameters, the
//! caller and, over WebSocket, the connection; and how the request arrived.

use super::fault::Fault;
use super::params::{Origin, Params};
use super::principal::{HttpAuth, Principal};
use super::state::User;
use super::tokens::Issued;
use super::{Connection, ServerState};
use harness_protocol::jsonrpc::ErrorObject;
use harness_protocol::spec;

/// How the request arrived, with what authentication needs from that transport.
pub(crate) enum Transport<'a> {
    Http(HttpAuth<'a>),
    Ws(&'a mut Connection),
}

/// The faults that distort one method's `count` bounds (see [`Ctx::count`]).
pub(crate) struct CountFaults {
    /// 0 is accepted (none: no fault of the method does it).
    pub(crate) zero: Option<Fault>,
    /// The least legal count is refused.
    pub(crate) min_refused: Fault,
    /// One above the most is accepted (none: no fault of the method does it).
    pub(crate) over_max: Option<Fault>,
    /// The most is refused.
    pub(crate) max_refused: Fault,
    /// The default is half again as large.
    pub(crate) default_raised: Fault,
    /// The default is half as large.
    pub(crate) default_lowered: Fault,
    /// The default holds on the first page only: a continuation page without `count` gets
    /// the most.
    pub(crate) default_first_page_only: Fault,
}

/// The faults that distort the parameters every paged method of the spec table shares
/// (see [`Ctx::paged_params`]).
pub(crate) struct PagedFaults {
    /// Every `currency` is accepted.
    pub(crate) currency_any: Fault,
    /// The last listed `currency` is refused.
    pub(crate) currency_last_refused: Fault,
    /// What distorts `count`.
    pub(crate) count: CountFaults,
}

/// A paged method's shared parameters, checked.
pub(crate) struct PagedParams<'p> {
    /// `currency`, one of the listed values.
    pub(crate) currency: Option<&'p str>,
    /// `count` as requested, or the default when absent.
    pub(crate) count: i64,
    /// The default `count`, as the faults distort it.
    pub(crate) default_count: i64,
}

/// Everything a method body sees.
pub(crate) struct Ctx<'a> {
    pub(crate) state: &'a ServerState,
    /// The method's entry in the spec table: its listed values, bounds and defaults.
    pub(crate) method: &'static spec::Method,
    pub(crate) params: Params,
    pub(crate) principal: Option<Principal>,
    /// The WebSocket connection; `None` over HTTP.
    pub(crate) connection: Option<&'a mut Connection>,
    /// Where the parameters came from: a query string, or JSON (a JSON-RPC body over HTTP
    /// or a WebSocket message).
    pub(crate) origin: Origin,
}

impl Ctx<'_> {
    /// Whether the request came as a JSON-RPC body over HTTP (neither a query string nor a
    /// WebSocket message).
    pub(crate) fn in_http_body(&self) -> bool {
        self.origin == Origin::Json && self.connection.is_none()
    }

    /// The authenticated caller; private methods always have one.
    pub(crate) fn caller(&self) -> Result<&Principal, ErrorObject> {
        self.principal
            .as_ref()
            .ok_or_else(|| ErrorObject::unauthorized("missing access token"))
    }

    /// The calling user's record.
    pub(crate) fn caller_user(&self) -> Result<&User, ErrorObject> {
        let user_id = self.caller()?.user_id;
        self.state
            .user(user_id)
            .ok_or_else(|| ErrorObject::unauthorized("unknown user"))
    }

    /// Refuses the call unless the caller's scope grants `requirement` (SPEC.md 5.4).
    pub(crate) fn require(&self, requirement: &str) -> Result<(), ErrorObject> {
        let caller = self.caller()?;
        let unchecked = self.state.fault(Fault::ScopeNotEnforced)
            || (self.state.fault(Fault::ScopeNotEnforcedForSub)
                && caller.user_id == super::state::SUB_ID);
        // `basic-refused-account-read`: Basic works on every method but the account family's.
        let basic_refused = self.state.fault(Fault::BasicRefusedAccountRead)
            && caller.path == super::principal::AuthPath::Basic
            && requirement.starts_with("account:");
        if basic_refused {
            return Err(ErrorObject::unauthorized(
                "basic authorization not accepted here",
            ));
        }
        if unchecked || caller.scope.grants(requirement) {
            Ok(())
        } else {
            Err(ErrorObject::unauthorized(&format!(
                "scope {requirement} required"
            )))
        }
    }

    /// Refuses a caller whose token lacks a scope requirement the spec table states for
    /// the method (SPEC.md 5.4: all must be granted).
    pub(crate) fn require_stated_scope(&self) -> Result<(), ErrorObject> {
        self.method
            .scope
            .iter()
            .try_for_each(|requirement| self.require(requirement))
    }

    /// A string parameter restricted to the values the spec table lists for it, unless
    /// `widened` (a fault) lets every value through; `last_refused` (a fault) forgets the
    /// last listed value, as a server with an outdated list would.
    pub(crate) fn listed(
        &self,
        name: &str,
        widened: bool,
        last_refused: bool,
    ) -> Result<Option<&str>, ErrorObject> {
        let listed = self
            .method
            .param(name)
            .and_then(spec::Param::listed)
            .unwrap_or_default();
        let listed = match listed.split_last() {
            Some((_, known)) if last_refused => known,
            _ => listed,
        };
        self.params.one_of(name, listed, widened)
    }

    /// How many entries a page holds for a requested `count`: the count itself, fewer under
    /// the judge's short-pages knob, and about half under the `short-pages` variant.
    pub(crate) fn page_len(&self, count: i64) -> usize {
        let count = usize::try_from(count).unwrap_or(1).max(1);
        let count = if self.variant(super::Variant::ShortPages) {
            count.div_ceil(2)
        } else {
            count
        };
        self.state.knobs().page_len(count)
    }

    /// The `count` parameter checked against the spec table's bounds as the method's count
    /// faults distort them, with the default it takes when absent: returns both.
    pub(crate) fn count(&self, faults: &CountFaults) -> Result<(i64, i64), ErrorObject> {
        let (min, max, default) = self.method.count_bounds().unwrap_or((1, 1, 1));
        let min = if faults.zero.is_some_and(|fault| self.fault(fault)) {
            0
        } else {
            min + i64::from(self.fault(faults.min_refused))
        };
        let max = max + i64::from(faults.over_max.is_some_and(|fault| self.fault(fault)))
            - i64::from(self.fault(faults.max_refused));
        let default = if self.fault(faults.default_raised) {
            default + default / 2
        } else if self.fault(faults.default_lowered) {
            default / 2
        } else if (self.fault(faults.default_first_page_only) && self.params.has("continuation"))
            || (self.fault(Fault::TxlogDefaultIgnoredWithSubaccount)
                && self.params.has("subaccount_id"))
        {
            // Both faults take the table's maximum where the default is due.
            max
        } else {
            default
        };
        // Under `counts-clamped` a count outside the range is taken as the nearest bound
        // (SPEC.md states the range, not what a count outside it gets).
        if self.variant(super::Variant::CountsClamped)
            && let Some(count) = self.params.int("count")
        {
            return Ok((count.clamp(min, max), default));
        }
        Ok((self.params.count("count", min, max, default)?, default))
    }

    /// The caller's scope and the shared parameters of a paged method (`currency`,
    /// `count`), checked in that order as the method's faults distort them.
    pub(crate) fn paged_params(
        &self,
        faults: &PagedFaults,
    ) -> Result<PagedParams<'_>, ErrorObject> {
        self.require_stated_scope()?;
        let currency = self.listed(
            "currency",
            self.fault(faults.currency_any),
            self.fault(faults.currency_last_refused),
        )?;
        let (count, default_count) = self.count(&faults.count)?;
        Ok(PagedParams {
            currency,
            count,
            default_count,
        })
    }

    /// Whether a spec-open variant is on.
    pub(crate) fn variant(&self, variant: super::Variant) -> bool {
        self.state.variant(variant)
    }

    /// Whether a fault switch is on.
    pub(crate) fn fault(&self, fault: Fault) -> bool {
        self.state.fault(fault)
    }

    /// On WebSocket, remembers a newly issued session-scoped token for the connection's
    /// later requests (SPEC.md 5.2); connection-scoped tokens are not remembered.
    pub(crate) fn remember(&mut self, issued: &Issued) {
        let forget = self.state.fault(Fault::WsSessionForgotten);
        let any_token = self.state.variant(super::Variant::WsRemembersAnyToken);
        if let Some(connection) = self.connection.as_deref_mut()
            && (issued.scope.session.is_some() || any_token)
            && !forget
        {
            self.state.share_session(&issued.access_token);
            connection.session_token = Some(issued.access_token.clone());
        }
    }
}
