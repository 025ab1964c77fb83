//! Moving the model by what the server answered: tokens issued, refreshed, forked,
//! exchanged or logged out, the subaccount's login toggled, and what a WebSocket connection
//! may remember once a token was presented or issued on it (SPEC.md 5.2).

use std::collections::BTreeSet;

use super::{Model, Observed, TokenKind, TokenState, Validity, none};
use crate::state::{Action, SeqStep, Who};
use harness_protocol::auth::scope::Scope;

impl Model {
    /// Moves the model by what the server answered `step` (step number `index`).
    pub fn apply(
        &mut self,
        index: usize,
        step: &SeqStep,
        connection: Option<&str>,
        observed: &Observed,
    ) {
        self.note_nonce(index, step);
        self.remember_presented(step, connection);
        if !observed.result {
            return;
        }
        let granted = observed.granted.as_deref().map(Scope::parse);
        match &step.action {
            Action::Login { who, session, .. } => {
                self.apply_login(index, *who, session, granted, observed, connection);
            }
            Action::Refresh { of } => self.apply_refresh(index, *of, granted, observed, connection),
            Action::Fork { of, name } => {
                self.apply_fork(index, *of, name, granted, observed, connection);
            }
            Action::Exchange { of } => {
                self.apply_exchange(index, *of, granted, observed, connection);
            }
            Action::Logout { token } => {
                self.apply_logout(*token);
                self.close_connection(connection);
            }
            Action::Toggle { enable, .. } => self.apply_toggle(*enable),
            Action::ReplayLogin { .. }
            | Action::Signed { .. }
            | Action::DeleteMember { .. }
            | Action::Private { .. } => {}
        }
    }

    /// A login or a signed request uses its nonce (a replay, the nonce of the step it
    /// replays), answered or not.
    fn note_nonce(&mut self, index: usize, step: &SeqStep) {
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
    }

    /// A login's result: a token of the session the answer grants or the login asked for
    /// (else a connection token), valid unless the subaccount's login may be disabled.
    fn apply_login(
        &mut self,
        index: usize,
        who: Who,
        session: &Option<String>,
        granted: Option<Scope>,
        observed: &Observed,
        connection: Option<&str>,
    ) {
        let kind = match (&granted, session) {
            (Some(scope), _) if scope.session.is_some() => {
                TokenKind::Session(scope.session.clone().unwrap_or_default())
            }
            (_, Some(name)) => TokenKind::Session(name.clone()),
            (_, None) => TokenKind::Connection,
        };
        let validity = if who == Who::Sub && self.sub_disabled != Some(false) {
            Validity::Unknown
        } else {
            Validity::Valid
        };
        let session = matches!(kind, TokenKind::Session(_))
            && granted
                .as_ref()
                .is_some_and(|scope| scope.session.is_some());
        self.issue(index, who, kind, granted, validity, observed, connection);
        if session && validity == Validity::Valid {
            self.authenticated_by_auth(index, connection);
        }
    }

    /// A fork's result: a session token of the forked token's owner and scope; the forked
    /// token's refresh token may or may not go on.
    fn apply_fork(
        &mut self,
        index: usize,
        of: usize,
        name: &str,
        granted: Option<Scope>,
        observed: &Observed,
        connection: Option<&str>,
    ) {
        let Some(old) = self.tokens.get_mut(&of) else {
            return;
        };
        old.refresh = Validity::Unknown;
        let (owner, old_granted) = (old.owner, old.granted.clone());
        let through_main = old.through_main;
        // The session the answer grants, as the server names it; else the one
        // asked for.
        let kind = TokenKind::Session(
            granted
                .as_ref()
                .and_then(|scope| scope.session.clone())
                .unwrap_or_else(|| name.to_owned()),
        );
        let granted = granted.or(old_granted);
        let validity = self.owner_validity(owner);
        self.issue(index, owner, kind, granted, validity, observed, connection);
        self.inherit_through_main(index, through_main);
    }

    /// An exchange's result: a token of the subaccount, obtained through the main account.
    fn apply_exchange(
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
        self.inherit_through_main(index, true);
    }

    /// A logout on WebSocket closes the connection (execute.rs): what it issued is bound
    /// to no connection a later step can reach.
    fn close_connection(&mut self, connection: Option<&str>) {
        if let Some(name) = connection {
            for state in self.tokens.values_mut() {
                if state.issued_on.as_deref() == Some(name) {
                    state.issued_on = Some(super::CLOSED.to_owned());
                }
            }
        }
    }

    /// The subaccount's login toggled: disabled, its own sessions end (4.5); whether a
    /// token the main account obtained for it does is open: it "remains reachable through
    /// the main account".
    fn apply_toggle(&mut self, enable: bool) {
        self.sub_disabled = Some(!enable);
        if !enable {
            for token in self.tokens.values_mut().filter(|t| t.owner == Who::Sub) {
                token.access = if token.through_main {
                    match token.access {
                        Validity::Invalid(clause) => Validity::Invalid(clause),
                        _ => Validity::Unknown,
                    }
                } else {
                    Validity::Invalid("m.toggle_subaccount_login.disable_ends_sessions")
                };
                token.refresh = Validity::Unknown;
            }
        }
    }

    /// A token presented in `params.access_token` may be remembered by the connection, but
    /// need not be: SPEC.md 5.2 speaks of a connection "authenticated with a session token",
    /// and does not say that passing one in a call authenticates it (the
    /// `ws-remembers-auth-only` variant).
    fn remember_presented(&mut self, step: &SeqStep, connection: Option<&str>) {
        let presented = match step.action {
            Action::Private {
                token: Some(token), ..
            }
            | Action::Toggle { token, .. }
            | Action::DeleteMember { token }
            | Action::Logout { token } => token,
            _ => return,
        };
        let (Some(name), true) = (connection, self.tokens.contains_key(&presented)) else {
            return;
        };
        self.memory
            .entry(name.to_owned())
            .or_insert_with(none)
            .insert(Some(presented));
    }

    /// A session token `public/auth` issued on the connection authenticated it: the
    /// connection remembers that token (5.2), and no longer nothing.
    fn authenticated_by_auth(&mut self, token: usize, connection: Option<&str>) {
        if let Some(name) = connection {
            self.memory
                .insert(name.to_owned(), BTreeSet::from([Some(token)]));
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
                through_main: false,
                issued_on: connection.map(str::to_owned),
                opened: None,
            },
        );
        // A token issued on a connection may be remembered by it (whether a connection
        // token is, or a token another method than public/auth issued, is open); a session
        // token public/auth issued is (`authenticated_by_auth`).
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
        let (through_main, opened) = (old.through_main, old.opened);
        let validity = self.owner_validity(owner);
        let granted = granted.or(old_granted);
        self.issue(index, owner, kind, granted, validity, observed, connection);
        self.inherit_through_main(index, through_main);
        // "For a session-scoped token the session stays the same" (5.3): as old as before.
        if let Some(token) = self.tokens.get_mut(&index) {
            token.opened = opened;
        }
    }

    /// A token refreshed or forked from one the main account obtained for the subaccount
    /// was obtained through the main account too: its holder is the main account.
    fn inherit_through_main(&mut self, index: usize, through_main: bool) {
        if let Some(token) = self.tokens.get_mut(&index) {
            token.through_main |= through_main;
        }
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
