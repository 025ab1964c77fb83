//! Moving the model by what the server answered: tokens issued, refreshed, forked,
//! exchanged or logged out, the subaccount's login toggled, and what a WebSocket connection
//! may remember once a token was presented or issued on it (SPEC.md 5.2).

use std::collections::BTreeSet;

use super::{Model, Observed, TokenKind, TokenState, Validity, none};
use crate::auth::scope::Scope;
use crate::fuzz::state::{Action, SeqStep, Who};

impl Model {
    /// Moves the model by what the server answered `step` (step number `index`).
    pub fn apply(
        &mut self,
        index: usize,
        step: &SeqStep,
        connection: Option<&str>,
        observed: &Observed,
    ) {
        match &step.action {
            Action::ReplayLogin { of }
            | Action::Signed {
                replay_of: Some(of),
            } => {
                self.nonces_used.insert(*of);
            }
            Action::Login { .. } | Action::Signed { replay_of: None } => {
                self.nonces_used.insert(index);
            }
            _ => {}
        }
        self.remember_presented(step, connection, observed.result);
        if !observed.result {
            return;
        }
        let granted = observed.granted.as_deref().map(Scope::parse);
        match &step.action {
            Action::Login { who, session, .. } => {
                let kind = match (&granted, session) {
                    (Some(scope), _) if scope.session.is_some() => {
                        TokenKind::Session(scope.session.clone().unwrap_or_default())
                    }
                    (_, Some(name)) => TokenKind::Session(name.clone()),
                    (_, None) => TokenKind::Connection,
                };
                let validity = if *who == Who::Sub && self.sub_disabled != Some(false) {
                    Validity::Unknown
                } else {
                    Validity::Valid
                };
                self.issue(index, *who, kind, granted, validity, observed, connection);
            }
            Action::Refresh { of } => self.apply_refresh(index, *of, granted, observed, connection),
            Action::Fork { of, name } => {
                if let Some(old) = self.tokens.get_mut(of) {
                    old.refresh = Validity::Unknown;
                    let (owner, old_granted) = (old.owner, old.granted.clone());
                    let granted = granted.or(old_granted);
                    let kind = TokenKind::Session(name.clone());
                    let validity = self.owner_validity(owner);
                    self.issue(index, owner, kind, granted, validity, observed, connection);
                }
            }
            Action::Exchange { of } => {
                if let Some(old) = self.tokens.get_mut(of) {
                    old.refresh = Validity::Unknown;
                    let validity = self.owner_validity(Who::Sub);
                    self.issue(
                        index,
                        Who::Sub,
                        TokenKind::Unknown,
                        granted,
                        validity,
                        observed,
                        connection,
                    );
                }
            }
            Action::Logout { token } => self.apply_logout(*token),
            Action::Toggle { enable, .. } => {
                self.sub_disabled = Some(!enable);
                if !enable {
                    for token in self.tokens.values_mut().filter(|t| t.owner == Who::Sub) {
                        token.access =
                            Validity::Invalid("m.toggle_subaccount_login.disable_ends_sessions");
                        token.refresh = Validity::Unknown;
                    }
                }
            }
            Action::ReplayLogin { .. }
            | Action::Signed { .. }
            | Action::DeleteMember { .. }
            | Action::Private { .. } => {}
        }
    }

    /// A token presented in `params.access_token` authenticates the connection: one that
    /// answered with a result is remembered if session-scoped (5.2); any other may be (the
    /// server may remember connection tokens too, or a token whose call it then refused).
    fn remember_presented(&mut self, step: &SeqStep, connection: Option<&str>, result: bool) {
        let presented = match step.action {
            Action::Private {
                token: Some(token), ..
            }
            | Action::Toggle { token, .. }
            | Action::DeleteMember { token }
            | Action::Logout { token } => token,
            _ => return,
        };
        let (Some(name), Some(state)) = (connection, self.tokens.get(&presented)) else {
            return;
        };
        let certain = result && matches!(state.kind, TokenKind::Session(_));
        let memory = self.memory.entry(name.to_owned()).or_insert_with(none);
        if certain {
            *memory = BTreeSet::from([Some(presented)]);
        } else {
            memory.insert(Some(presented));
        }
    }

    #[expect(clippy::too_many_arguments, reason = "one token's facts, written once")]
    fn issue(
        &mut self,
        index: usize,
        owner: Who,
        kind: TokenKind,
        granted: Option<Scope>,
        access: Validity,
        observed: &Observed,
        connection: Option<&str>,
    ) {
        if !observed.issued_token {
            return;
        }
        let refresh = access;
        self.tokens.insert(
            index,
            TokenState {
                owner,
                kind,
                granted,
                access,
                refresh,
            },
        );
        // A token issued on a connection may be remembered by it (5.2 leaves open whether
        // issuing counts as authenticating, and whether a connection token is remembered).
        if let Some(name) = connection {
            self.memory
                .entry(name.to_owned())
                .or_insert_with(none)
                .insert(Some(index));
        }
    }

    fn apply_refresh(
        &mut self,
        index: usize,
        of: usize,
        granted: Option<Scope>,
        observed: &Observed,
        connection: Option<&str>,
    ) {
        let Some(old) = self.tokens.get_mut(&of) else {
            return;
        };
        // 5.3 says the result carries a new refresh token, not what the old one does after.
        old.refresh = Validity::Unknown;
        old.access = match old.kind {
            TokenKind::Connection => Validity::Invalid("auth.refresh.connection_invalidates"),
            // The session goes on; whether its previous access token does is open.
            TokenKind::Session(_) | TokenKind::Unknown => Validity::Unknown,
        };
        let (owner, kind, old_granted) = (old.owner, old.kind.clone(), old.granted.clone());
        let validity = self.owner_validity(owner);
        let granted = granted.or(old_granted);
        self.issue(index, owner, kind, granted, validity, observed, connection);
    }

    fn apply_logout(&mut self, token: usize) {
        let Some(owner) = self.tokens.get(&token).map(|state| state.owner) else {
            return;
        };
        // "Invalidates the tokens" (4.4): this pair. Which other tokens of the account go
        // with it is open.
        for (index, state) in &mut self.tokens {
            if *index == token {
                state.access = Validity::Invalid("auth.logout.invalidates");
                state.refresh = Validity::Invalid("auth.logout.invalidates");
            } else if state.owner == owner {
                state.access = match state.access {
                    Validity::Invalid(clause) => Validity::Invalid(clause),
                    _ => Validity::Unknown,
                };
                state.refresh = match state.refresh {
                    Validity::Invalid(clause) => Validity::Invalid(clause),
                    _ => Validity::Unknown,
                };
            }
        }
    }
}
