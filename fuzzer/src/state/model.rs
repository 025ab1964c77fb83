//! The model of SPEC.md's token state machine (sections 4.1 to 4.5 and 5.2 to 5.4): which
//! tokens a sequence holds, their owner, session and scope, whether each access and refresh
//! token still works, what each WebSocket connection may remember, and whether the
//! subaccount's login is disabled. A connection is relied on to remember only a session
//! token `public/auth` issued on it (5.2: a connection "authenticated with a session
//! token"); whether passing a token in a call authenticates the connection is not stated.
//!
//! [`Model::predict`] says what a conforming server answers a step: a result, an error, or
//! either where SPEC.md leaves it open, with the clause a wrong answer breaks.
//! [`Model::apply`] then moves the model by what the server actually answered, so a step
//! whose outcome was open leaves the model where the server went. Where SPEC.md does not
//! say what becomes of a token (an old refresh token after rotation, a session's previous
//! access token, the other tokens of an account after a logout), the model marks it
//! unknown and predicts either for it. Pure code: no I/O, no clock.

use std::collections::{BTreeMap, BTreeSet};

use super::slots;
use super::{Action, SeqStep, Who};
use harness_protocol::auth::scope::Scope;
use harness_protocol::spec;
use harness_protocol::wire::TransportKind;

/// What the server must answer (the runner's [`Outcome`], `Any` where SPEC.md leaves it
/// open), the clause a wrong answer breaks and why: the type the single-request oracle
/// predicts with too.
pub use crate::prediction::Prediction;
use harness_model::check::Outcome;

/// An error, as `clause` says of the `what` of step `step` (0-based), invalidated.
fn invalidated(clause: &'static str, what: &str, step: usize) -> Prediction {
    let why = format!("the {what} of step {} was invalidated", step + 1);
    Prediction::new(Outcome::Error, clause, why)
}

/// Whether a token works, and if not, the clause that says it must not.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Validity {
    /// It works.
    Valid,
    /// It must not work, by this clause.
    Invalid(&'static str),
    /// SPEC.md does not say.
    Unknown,
}

/// What kind of token it is (SPEC.md 5.4: `connection` or `session:<name>`).
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum TokenKind {
    /// Connection-scoped.
    Connection,
    /// Of the named session.
    Session(String),
    /// Not known (an exchanged token: the response shape is not shown).
    Unknown,
}

/// One token pair a step issued.
#[derive(Clone, Debug)]
pub struct TokenState {
    /// Whose it is.
    pub owner: Who,
    /// Connection or session.
    pub kind: TokenKind,
    /// The scope granted, when the answer said.
    pub granted: Option<Scope>,
    /// The access token.
    pub access: Validity,
    /// The refresh token.
    pub refresh: Validity,
    /// The main account obtained it for the subaccount (`public/exchange_token`): SPEC.md
    /// 4.5 says a disabled subaccount "remains reachable through the main account", so a
    /// disable need not end it.
    pub through_main: bool,
    /// The WebSocket connection it was issued on, if any ([`CLOSED`] once that connection
    /// closed). SPEC.md 5.4 names the scope `connection` without saying more, so a
    /// connection-scoped token may be bound to the connection that issued it.
    pub issued_on: Option<String>,
    /// For a token of a session it opened (a session login, a fork, an exchange): the
    /// count of sessions its owner had opened in the run with it ([`slots::SessionsOpened`]).
    pub opened: Option<u64>,
}

/// What [`TokenState::issued_on`] becomes when its connection closes: no connection's name.
pub const CLOSED: &str = "\u{0}closed";

/// What the server answered a step, as far as the model needs it.
#[derive(Clone, Debug, Default)]
pub struct Observed {
    /// A result (not an error, not a throttling answer).
    pub result: bool,
    /// The answer carried an access token.
    pub issued_token: bool,
    /// The granted `scope` of a token set, when given.
    pub granted: Option<String>,
}

/// The state of one sequence.
#[derive(Clone, Debug, Default)]
pub struct Model {
    tokens: BTreeMap<usize, TokenState>,
    /// Per connection name: the tokens it may remember (`None`: none at all).
    memory: BTreeMap<String, BTreeSet<Option<usize>>>,
    /// `Some(true)`: the subaccount's login is disabled; `None`: not known.
    sub_disabled: Option<bool>,
    /// Steps whose nonce went out (signed logins and signed headers).
    nonces_used: BTreeSet<usize>,
    /// The sessions of one key the target keeps at least ([`slots::SLOTS_SPEC_GUARANTEES`] unless the target file says).
    slots: u32,
    /// The sessions each account has opened in the run so far ([`slots::SessionsOpened::now`]).
    sessions_now: [u64; 2],
}

impl Model {
    /// A model with no token and the subaccount's login enabled, of a target that keeps
    /// at least `slots` sessions of one key ([`slots::SLOTS_SPEC_GUARANTEES`] where its
    /// target file does not say).
    pub fn new(slots: u32) -> Model {
        Model {
            sub_disabled: Some(false),
            slots,
            ..Model::default()
        }
    }

    /// Learns how many sessions each account has opened in the run so far (by every
    /// sequence), before the next prediction.
    pub fn sessions_opened(&mut self, now: [u64; 2]) {
        self.sessions_now = now;
    }

    /// Notes that step `index`'s token opened a session, the `count`-th of its owner's.
    pub fn opened_session(&mut self, index: usize, count: u64) {
        if let Some(token) = self.tokens.get_mut(&index) {
            token.opened = Some(count);
        }
    }

    /// Whether step `index`'s token opened a session (a session login, a fork, or an
    /// exchange, whose kind is not shown): the steps the run counts ([`slots::SessionsOpened`]).
    pub fn opens_session(&self, index: usize, step: &SeqStep) -> Option<Who> {
        let token = self.tokens.get(&index)?;
        let opens = match &step.action {
            Action::Login { .. } => matches!(token.kind, TokenKind::Session(_)),
            Action::Fork { .. } | Action::Exchange { .. } => true,
            _ => false,
        };
        opens.then_some(token.owner)
    }

    /// Either, where the session of step `token`'s token may have been ended for a newer
    /// one: its owner opened at least as many sessions since as the target may not keep
    /// beside it (SPEC.md 8: "the number of session slots: not shown").
    fn maybe_ended_for_newer(&self, token: usize) -> Option<Prediction> {
        let state = self.tokens.get(&token)?;
        let opened = state.opened?;
        let newer = self.sessions_now[slots::slot(state.owner)].saturating_sub(opened);
        (newer >= u64::from(self.slots)).then(|| {
            Prediction::either(format!(
                "{newer} newer sessions of its account were opened since the session of step {}; a target keeps at least {} (SPEC.md 8: \"the number of session slots: not shown\"; 4.3: \"both sessions can run concurrently under one key\"; [limits] session_slots)",
                token + 1,
                self.slots
            ))
        })
    }

    /// Whether the subaccount's login is disabled (`None`: not known).
    pub fn sub_disabled(&self) -> Option<bool> {
        self.sub_disabled
    }

    /// The token step `index` issued, if it issued one.
    pub fn token(&self, index: usize) -> Option<&TokenState> {
        self.tokens.get(&index)
    }

    /// What the server must answer `step`, sent over `connection` (on WebSocket).
    pub fn predict(&self, step: &SeqStep, connection: Option<&str>) -> Prediction {
        if let Some(token) = used_token(step)
            && self.bound_elsewhere(token, connection)
        {
            return Prediction::either(format!(
                "the connection-scoped token of step {} was issued on another WebSocket connection, to which it may be bound (5.4 names the scope connection without saying more)",
                token + 1
            ));
        }
        if let Some(either) = used_token(step).and_then(|token| self.maybe_ended_for_newer(token)) {
            return either;
        }
        match &step.action {
            Action::Login { who, grant, .. } => self.predict_login(*who, *grant),
            Action::ReplayLogin { of } => {
                self.replay(*of, "auth.client_signature.nonce_single_use")
            }
            Action::Signed { replay_of: None } => Prediction::new(
                Outcome::Result,
                "auth.signed.accepted",
                "a signed header with a fresh nonce",
            ),
            Action::Signed {
                replay_of: Some(of),
            } => self.replay(*of, "auth.signed.nonce_single_use"),
            Action::Refresh { of } => self.predict_refresh(*of),
            Action::Fork { of, .. } => self.predict_fork(*of),
            Action::Exchange { of } => self.predict_exchange(*of),
            Action::Logout { .. } if step.transport != TransportKind::Ws => Prediction::new(
                Outcome::Error,
                "auth.logout.ws_only",
                "logout over HTTP (4.4: WebSocket only)",
            ),
            Action::Logout { token } => match self.access(*token) {
                Validity::Invalid(clause) => invalidated(clause, "token", *token),
                // "Parameters and result: not shown" (4.4).
                _ => Prediction::either("the result of logout is not shown (4.4)"),
            },
            Action::Toggle { token, .. } => {
                self.predict_with_token(*token, spec::TOGGLE_LOGIN_METHOD, |_| {
                    // The second factor may be required (5.7); the target file does not say.
                    Prediction::either("the account may need a second factor (5.7)")
                })
            }
            Action::DeleteMember { token } => {
                self.predict_with_token(*token, spec::DELETE_MEMBER_METHOD, |_| {
                    Prediction::either("the token's scope grants what delete_member needs")
                })
            }
            Action::Private {
                token: Some(token),
                method,
            } => self.predict_private(*token, method, step.transport),
            Action::Private {
                token: None,
                method,
            } => self.predict_remembered(connection, method),
        }
    }

    /// A login with the account's key: a result, but for a subaccount whose login may be
    /// disabled.
    fn predict_login(&self, who: Who, grant: super::Grant) -> Prediction {
        if who == Who::Sub && self.sub_disabled != Some(false) {
            return Prediction::either("a disabled subaccount's key login is not described (4.5)");
        }
        let clause = match grant {
            super::Grant::ClientCredentials => "auth.client_credentials.accepted",
            super::Grant::ClientSignature => "auth.client_signature.accepted",
        };
        Prediction::new(Outcome::Result, clause, "a login with the account's key")
    }

    /// A refresh with step `of`'s refresh token: a result while it is valid, an error once
    /// it was invalidated.
    fn predict_refresh(&self, of: usize) -> Prediction {
        match self.tokens.get(&of).map(|token| token.refresh) {
            Some(Validity::Valid) => Prediction::new(
                Outcome::Result,
                "auth.refresh.rotates",
                format!("the refresh token of step {} works", of + 1),
            ),
            Some(Validity::Invalid(clause)) => Prediction::new(
                Outcome::Error,
                clause,
                format!("the refresh token of step {} was invalidated", of + 1),
            ),
            _ => Prediction::either("what became of this refresh token is open"),
        }
    }

    /// A private call with step `token`'s access token, over `transport`.
    fn predict_private(&self, token: usize, method: &str, transport: TransportKind) -> Prediction {
        let clause = if transport == TransportKind::Ws {
            "auth.ws.access_token"
        } else {
            "auth.http.bearer"
        };
        self.predict_with_token(token, method, |why| {
            Prediction::new(Outcome::Result, clause, why)
        })
    }

    /// Whether the token of step `token` is not known to be of a session (connection-scoped,
    /// or exchanged: its kind is not shown), was issued on a WebSocket connection, and
    /// `connection` is not that one.
    fn bound_elsewhere(&self, token: usize, connection: Option<&str>) -> bool {
        self.tokens.get(&token).is_some_and(|state| {
            !matches!(state.kind, TokenKind::Session(_))
                && state
                    .issued_on
                    .as_deref()
                    .is_some_and(|issued| Some(issued) != connection)
        })
    }

    fn access(&self, token: usize) -> Validity {
        self.tokens
            .get(&token)
            .map_or(Validity::Unknown, |token| token.access)
    }

    fn owner_validity(&self, owner: Who) -> Validity {
        if owner == Who::Sub && self.sub_disabled != Some(false) {
            Validity::Unknown
        } else {
            Validity::Valid
        }
    }

    fn replay(&self, of: usize, clause: &'static str) -> Prediction {
        if self.nonces_used.contains(&of) {
            Prediction::new(
                Outcome::Error,
                clause,
                format!("the nonce of step {} was used already", of + 1),
            )
        } else {
            Prediction::either("the replayed step never went out")
        }
    }

    fn predict_fork(&self, of: usize) -> Prediction {
        let Some(token) = self.tokens.get(&of) else {
            return Prediction::either("no token to fork");
        };
        match (&token.kind, token.refresh) {
            (TokenKind::Connection, _) => Prediction::new(
                Outcome::Error,
                "auth.fork_token.connection_refused",
                format!("the token of step {} is connection-scoped", of + 1),
            ),
            (_, Validity::Invalid(clause)) => Prediction::new(
                Outcome::Error,
                clause,
                format!("the refresh token of step {} was invalidated", of + 1),
            ),
            (TokenKind::Session(name), Validity::Valid) => Prediction::new(
                Outcome::Result,
                "auth.fork_token.accepted",
                format!("the token of step {} is of session {name}", of + 1),
            ),
            _ => Prediction::either("the token's session or refresh token is not known"),
        }
    }

    fn predict_exchange(&self, of: usize) -> Prediction {
        let Some(token) = self.tokens.get(&of) else {
            return Prediction::either("no token to exchange");
        };
        match token.refresh {
            Validity::Invalid(clause) => invalidated(clause, "refresh token", of),
            Validity::Valid if token.owner == Who::Main && self.sub_disabled == Some(false) => {
                Prediction::new(
                    Outcome::Result,
                    "auth.exchange_token.accepted",
                    format!("the main account's refresh token of step {} works", of + 1),
                )
            }
            _ => Prediction::either(
                "an exchange by the subaccount itself, to a disabled one, or with a refresh token of open fate",
            ),
        }
    }

    /// A call with the access token of step `token`: an error when it no longer works or
    /// its granted scope lacks what `method` needs, else what `valid` says.
    fn predict_with_token(
        &self,
        token: usize,
        method: &str,
        valid: impl FnOnce(String) -> Prediction,
    ) -> Prediction {
        let Some(state) = self.tokens.get(&token) else {
            return Prediction::either("no such token");
        };
        match state.access {
            Validity::Invalid(clause) => invalidated(clause, "token", token),
            Validity::Unknown => Prediction::either(format!(
                "what became of the token of step {} is open",
                token + 1
            )),
            Validity::Valid => {
                let Some(spec) = harness_protocol::spec::method(method) else {
                    return Prediction::either("a method the spec does not list");
                };
                let Some(granted) = &state.granted else {
                    return Prediction::either("the granted scope is not known");
                };
                if let Some(missing) = spec.scope.iter().find(|need| !granted.grants(need)) {
                    return Prediction::new(
                        Outcome::Error,
                        spec.scope_clause,
                        format!("the token of step {} lacks {missing}", token + 1),
                    );
                }
                valid(format!("the token of step {} works", token + 1))
            }
        }
    }

    /// A tokenless call on a connection: what each token it may remember predicts, when
    /// they all agree.
    fn predict_remembered(&self, connection: Option<&str>, method: &str) -> Prediction {
        let nothing = none();
        let memory = connection
            .and_then(|name| self.memory.get(name))
            .unwrap_or(&nothing);
        let predictions: Vec<Prediction> = memory
            .iter()
            .map(|remembered| match remembered {
                None => Prediction::new(
                    Outcome::Error,
                    "auth.private.requires_token",
                    "no token, and none the connection remembers",
                ),
                Some(token) => self.maybe_ended_for_newer(*token).unwrap_or_else(|| {
                    self.predict_with_token(*token, method, |why| {
                        Prediction::new(
                            Outcome::Result,
                            "auth.ws.session_memory",
                            format!("the connection remembers its session token: {why}"),
                        )
                    })
                }),
            })
            .collect();
        // When they agree, a remembered token's reason is the more telling one ("none"
        // sorts first).
        match predictions.split_last() {
            Some((last, rest)) if rest.iter().all(|other| other.outcome == last.outcome) => {
                last.clone()
            }
            _ => Prediction::either("the connection may remember one of several tokens"),
        }
    }
}

/// The earlier step whose token `step` uses, if it uses one.
fn used_token(step: &SeqStep) -> Option<usize> {
    match &step.action {
        Action::Refresh { of } | Action::Fork { of, .. } | Action::Exchange { of } => Some(*of),
        Action::Logout { token }
        | Action::Toggle { token, .. }
        | Action::DeleteMember { token }
        | Action::Private {
            token: Some(token), ..
        } => Some(*token),
        _ => None,
    }
}

fn none() -> BTreeSet<Option<usize>> {
    BTreeSet::from([None])
}

mod apply;
#[cfg(test)]
mod tests;
