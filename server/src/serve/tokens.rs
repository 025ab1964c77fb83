//! Issued tokens: access tokens with their owner, scope and expiry, and the refresh tokens
//! that lead to them (SPEC.md sections 2.1 and 5.3).
//!
//! Every access token and refresh token is an independent record, so revoking one (logout,
//! a connection-scoped refresh, a disabled subaccount) never needs to walk a chain. The
//! store is bounded: each user holds at most [`PER_USER`] pairs (one more ends the oldest),
//! expired records are pruned when it grows, and past a hard cap new tokens are refused
//! rather than letting a flood of `public/auth` calls exhaust memory.

use std::collections::{HashMap, HashSet, VecDeque};

use rand::Rng;
use rand::distr::Alphanumeric;
use serde_json::{Value, json};

use harness_protocol::auth::scope::{Access, Scope};

/// Token lifetime when the scope has no `expires:<n>`, in seconds.
pub(crate) const DEFAULT_EXPIRES_IN: u64 = 900;

/// Refresh tokens outlive their access token so a client can come back after expiry.
const REFRESH_LIFETIME_MS: u64 = 30 * 24 * 3_600_000;

/// Records kept before expired ones are pruned.
const PRUNE_AT: usize = 100_000;

/// Records kept at most; a `public/auth` flood past this is refused with 10028.
const CAPACITY: usize = 1_000_000;

/// Token pairs one user holds at most; issuing one more ends the user's oldest pair. A full
/// conformance run issues a few hundred per account; a client that logs in on every
/// request in a load test stays at about 7 MB per account instead of growing for the
/// 15 minutes its tokens live. Ending the oldest rather than refusing the newest keeps the
/// flooding client (and everyone else on the account) able to log in.
pub(crate) const PER_USER: usize = 10_000;

/// What an access token stands for.
#[derive(Clone, Debug)]
pub(crate) struct AccessRecord {
    pub(crate) user_id: u64,
    pub(crate) scope: Scope,
    pub(crate) expires_at_ms: u64,
    pub(crate) refresh_token: String,
}

/// What a refresh token stands for.
#[derive(Clone, Debug)]
pub(crate) struct RefreshRecord {
    pub(crate) user_id: u64,
    pub(crate) scope: Scope,
    pub(crate) access_token: String,
    expires_at_ms: u64,
}

/// How an access token was ended before its time, for the faults that keep it working on
/// one path after its end.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(crate) enum Ending {
    /// Its subaccount's login was disabled (SPEC.md 4.5).
    Disable,
    /// It was logged out (SPEC.md 4.4).
    Logout,
}

/// A freshly issued pair, ready to become the token set of section 2.1.
#[derive(Clone, Debug)]
pub(crate) struct Issued {
    pub(crate) access_token: String,
    pub(crate) refresh_token: String,
    pub(crate) expires_in: u64,
    pub(crate) scope: Scope,
}

impl Issued {
    /// The token set of SPEC.md section 2.1.
    pub(crate) fn token_set(&self, token_type: &str) -> Value {
        let mut set = json!({
            "access_token": self.access_token,
            "token_type": token_type,
            "expires_in": self.expires_in,
            "refresh_token": self.refresh_token,
            "scope": self.scope.to_string(),
            "enabled_features": [],
        });
        if let (Some(name), Some(object)) = (&self.scope.session, set.as_object_mut()) {
            object.insert("sid".to_owned(), Value::String(format!("session-{name}")));
        }
        set
    }
}

/// The token store. Not synchronised itself: the server keeps it behind a mutex.
#[derive(Debug, Default)]
pub(crate) struct TokenStore {
    access: HashMap<String, AccessRecord>,
    refresh: HashMap<String, RefreshRecord>,
    /// Each user's pairs (access, refresh) in the order issued, live or revoked, at most
    /// [`PER_USER`] each.
    issued: HashMap<u64, VecDeque<(String, String)>>,
    /// The longest lifetime a token gets, in seconds (the token-expiry scenario).
    lifetime_cap: Option<u64>,
    /// Access and refresh tokens a main account obtained for a subaccount through
    /// `public/exchange_token`, which the `disable-keeps-exchanged` variant keeps working
    /// after the subaccount's login is disabled.
    through_main: HashSet<String>,
    /// Access records ended by a disable or a logout, kept only for the
    /// `*-keeps-ws-remembered` faults, which let a WebSocket connection that remembers one go
    /// on with it; always empty on the correct server.
    set_aside: HashMap<String, (AccessRecord, Ending)>,
    /// Each forked session's access token by the refresh token it was forked from, and the
    /// access tokens forks issued: kept only for the `fork-ends-on-refresh` and
    /// `bearer-refuses-forked` faults; always empty on the correct server.
    forks: HashMap<String, String>,
    forked: HashSet<String>,
    /// The slots each session (user, name) took by its refreshes: counted only under the
    /// `refresh-takes-session-slot` fault; always empty on the correct server.
    session_slots: HashMap<(u64, String), usize>,
}

impl TokenStore {
    /// A store whose tokens live at most `lifetime_cap` seconds.
    pub(crate) fn with_lifetime_cap(lifetime_cap: Option<u64>) -> TokenStore {
        TokenStore {
            lifetime_cap,
            ..TokenStore::default()
        }
    }

    /// Issues an access and refresh token; `None` when the store is full.
    pub(crate) fn issue(&mut self, user_id: u64, scope: Scope, now_ms: u64) -> Option<Issued> {
        if self.access.len() + self.refresh.len() >= PRUNE_AT {
            self.prune(now_ms);
        }
        if self.access.len() + self.refresh.len() >= CAPACITY {
            return None;
        }
        let expires_in = scope
            .expires
            .unwrap_or(DEFAULT_EXPIRES_IN)
            .min(self.lifetime_cap.unwrap_or(u64::MAX));
        let access_token = random_token("at");
        let refresh_token = random_token("rt");
        self.access.insert(
            access_token.clone(),
            AccessRecord {
                user_id,
                scope: scope.clone(),
                expires_at_ms: now_ms.saturating_add(expires_in.saturating_mul(1_000)),
                refresh_token: refresh_token.clone(),
            },
        );
        self.refresh.insert(
            refresh_token.clone(),
            RefreshRecord {
                user_id,
                scope: scope.clone(),
                access_token: access_token.clone(),
                expires_at_ms: now_ms.saturating_add(REFRESH_LIFETIME_MS),
            },
        );
        let issued = self.issued.entry(user_id).or_default();
        issued.push_back((access_token.clone(), refresh_token.clone()));
        if issued.len() > PER_USER
            && let Some((oldest_access, oldest_refresh)) = issued.pop_front()
        {
            self.access.remove(&oldest_access);
            self.refresh.remove(&oldest_refresh);
        }
        Some(Issued {
            access_token,
            refresh_token,
            expires_in,
            scope,
        })
    }

    /// The live access token's record; expired ones count as absent.
    pub(crate) fn access(&self, token: &str, now_ms: u64) -> Option<&AccessRecord> {
        self.access
            .get(token)
            .filter(|record| record.expires_at_ms > now_ms)
    }

    /// The live refresh token's record.
    pub(crate) fn refresh(&self, token: &str, now_ms: u64) -> Option<&RefreshRecord> {
        self.refresh
            .get(token)
            .filter(|record| record.expires_at_ms > now_ms)
    }

    /// Makes `issued` carry the old refresh token instead of its own new one: what the
    /// `refresh-same-token` fault hands out.
    pub(crate) fn keep_refresh(&mut self, issued: &mut Issued, old_refresh: &str) {
        self.refresh.remove(&issued.refresh_token);
        if let Some(record) = self.refresh.get_mut(old_refresh) {
            record.access_token = issued.access_token.clone();
        }
        if let Some(record) = self.access.get_mut(&issued.access_token) {
            record.refresh_token = old_refresh.to_owned();
        }
        issued.refresh_token = old_refresh.to_owned();
    }

    /// Makes an access token stop working.
    pub(crate) fn revoke_access(&mut self, token: &str) {
        self.access.remove(token);
    }

    /// Makes a refresh token stop working.
    pub(crate) fn revoke_refresh(&mut self, token: &str) {
        self.refresh.remove(token);
    }

    /// Keeps the record of an access token about to be ended, for a fault that still
    /// honours it where a WebSocket connection remembers it.
    pub(crate) fn set_aside(&mut self, token: &str, ending: Ending) {
        if let Some(record) = self.access.get(token) {
            self.set_aside
                .insert(token.to_owned(), (record.clone(), ending));
        }
    }

    /// Keeps the records of every access token of `user_id`, which a disable is about to
    /// end (see [`TokenStore::set_aside`]).
    pub(crate) fn set_aside_user(&mut self, user_id: u64, ending: Ending) {
        let owned: Vec<String> = self
            .access
            .iter()
            .filter(|(_, record)| record.user_id == user_id)
            .map(|(token, _)| token.clone())
            .collect();
        owned.iter().for_each(|token| self.set_aside(token, ending));
    }

    /// The record of an access token that `ending` ended before its expiry, if it was set
    /// aside and has not expired since.
    pub(crate) fn ended_by(
        &self,
        token: &str,
        ending: Ending,
        now_ms: u64,
    ) -> Option<&AccessRecord> {
        self.set_aside
            .get(token)
            .filter(|(record, how)| *how == ending && record.expires_at_ms > now_ms)
            .map(|(record, _)| record)
    }

    /// Notes a fork of the session whose refresh token is `origin`, for the faults that
    /// treat forked tokens apart.
    pub(crate) fn note_fork(&mut self, origin: &str, issued: &Issued) {
        self.forks
            .insert(origin.to_owned(), issued.access_token.clone());
        self.forked.insert(issued.access_token.clone());
    }

    /// The access token of the session last forked from the refresh token `origin`.
    pub(crate) fn fork_of(&self, origin: &str) -> Option<&String> {
        self.forks.get(origin)
    }

    /// Whether public/fork_token issued this access token (noted by [`TokenStore::note_fork`]).
    pub(crate) fn is_forked(&self, token: &str) -> bool {
        self.forked.contains(token)
    }

    /// Takes one more slot for the session `name` of `user_id` on its refresh, as the
    /// `refresh-takes-session-slot` fault does; `false` when the session holds `most`.
    pub(crate) fn take_session_slot(&mut self, user_id: u64, name: &str, most: usize) -> bool {
        let held = self
            .session_slots
            .entry((user_id, name.to_owned()))
            .or_insert(1);
        if *held >= most {
            return false;
        }
        *held += 1;
        true
    }

    /// Marks a pair a main account obtained for one of its subaccounts.
    pub(crate) fn mark_through_main(&mut self, issued: &Issued) {
        self.through_main.insert(issued.access_token.clone());
        self.through_main.insert(issued.refresh_token.clone());
    }

    /// Whether a main account obtained this token's pair for a subaccount, or refreshed or
    /// forked it from one it obtained.
    pub(crate) fn is_through_main(&self, token: &str) -> bool {
        self.through_main.contains(token)
    }

    /// Ends every session of a user (a subaccount whose login was disabled), but for the
    /// pairs its main account obtained for it when `keep_through_main` holds.
    pub(crate) fn revoke_user(&mut self, user_id: u64, keep_through_main: bool) {
        self.revoke_user_access(user_id, keep_through_main);
        let through_main = &self.through_main;
        let kept = |token: &String| keep_through_main && through_main.contains(token);
        self.refresh
            .retain(|token, record| record.user_id != user_id || kept(token));
    }

    /// Ends the access tokens of a user as [`TokenStore::revoke_user`] does, but not its
    /// refresh tokens: what the `disable-keeps-refresh` fault does.
    pub(crate) fn revoke_user_access(&mut self, user_id: u64, keep_through_main: bool) {
        let through_main = &self.through_main;
        let kept = |token: &String| keep_through_main && through_main.contains(token);
        self.access
            .retain(|token, record| record.user_id != user_id || kept(token));
    }

    /// The access and refresh tokens [`TokenStore::revoke_user`] would revoke now: what
    /// the `race-disable` fault revokes a few ms later.
    pub(crate) fn user_tokens(
        &self,
        user_id: u64,
        keep_through_main: bool,
    ) -> (Vec<String>, Vec<String>) {
        let ended = |token: &String, owner: u64| {
            owner == user_id && !(keep_through_main && self.through_main.contains(token))
        };
        let access = self
            .access
            .iter()
            .filter(|(token, record)| ended(token, record.user_id))
            .map(|(token, _)| token.clone())
            .collect();
        let refresh = self
            .refresh
            .iter()
            .filter(|(token, record)| ended(token, record.user_id))
            .map(|(token, _)| token.clone())
            .collect();
        (access, refresh)
    }

    /// Every token of the pairs each user holds (live, expired or revoked): what tests
    /// search reports for, since a revoked token must not leak either.
    pub(crate) fn issued_tokens(&self) -> Vec<String> {
        self.issued
            .values()
            .flatten()
            .flat_map(|(access, refresh)| [access.clone(), refresh.clone()])
            .collect()
    }

    fn prune(&mut self, now_ms: u64) {
        self.access
            .retain(|_, record| record.expires_at_ms > now_ms);
        self.refresh
            .retain(|_, record| record.expires_at_ms > now_ms);
        self.set_aside
            .retain(|_, (record, _)| record.expires_at_ms > now_ms);
        let (access, refresh) = (&self.access, &self.refresh);
        self.through_main
            .retain(|token| access.contains_key(token) || refresh.contains_key(token));
        self.forks.retain(|origin, _| refresh.contains_key(origin));
        self.forked.retain(|token| access.contains_key(token));
    }
}

/// The scope to grant: the requested one bounded by the account's maximum (section 5.4).
///
/// Areas the request names get the lower of the requested and the permitted level; when the
/// request names no area at all (for example only `session:bot`) the account's full rights
/// are granted, as a scope that only names a session asks for nothing less. `connection` is
/// added unless a session is requested, since every token is one or the other.
pub(crate) fn grant_scope(requested: Option<&str>, maximum: &Scope, keep_unnamed: bool) -> Scope {
    let requested = Scope::parse(requested.unwrap_or(""));
    let names_an_area = !requested.access.is_empty();
    let mut granted = Scope::default();
    if names_an_area && keep_unnamed {
        granted.access = maximum.access.clone();
    }
    if names_an_area {
        for (area, level) in &requested.access {
            if let Some(permitted) = maximum.access.get(area) {
                granted
                    .access
                    .insert(area.clone(), (*level).min(*permitted));
            }
        }
    } else {
        granted.access = maximum.access.clone();
    }
    granted.mainaccount = maximum.mainaccount && (requested.mainaccount || !names_an_area);
    granted.connection = requested.session.is_none();
    granted.session = requested.session;
    granted.expires = requested.expires;
    granted.ip = requested.ip;
    granted
}

/// The lower of two scopes area by area: what a token for `subject` may keep of `scope`.
pub(crate) fn bound_scope(scope: &Scope, maximum: &Scope) -> Scope {
    let mut bounded = scope.clone();
    bounded.access = scope
        .access
        .iter()
        .map(|(area, level)| {
            let permitted = maximum.access.get(area).copied().unwrap_or(Access::None);
            (area.clone(), (*level).min(permitted))
        })
        .collect();
    bounded.mainaccount = scope.mainaccount && maximum.mainaccount;
    bounded
}

fn random_token(prefix: &str) -> String {
    let body: String = rand::rng()
        .sample_iter(&Alphanumeric)
        .take(32)
        .map(char::from)
        .collect();
    format!("{prefix}{body}")
}

#[cfg(test)]
mod tests {
    use super::*;

    fn maximum() -> Scope {
        Scope::parse("account:read_write trade:read_write wallet:read_write mainaccount")
    }

    #[test]
    fn no_request_grants_everything_with_connection() {
        let granted = grant_scope(None, &maximum(), false);
        assert!(granted.connection);
        assert!(granted.mainaccount);
        assert!(granted.grants("wallet:read_write"));
    }

    #[test]
    fn requested_areas_are_capped_and_others_dropped() {
        let granted = grant_scope(
            Some("account:read block_rfq:read session:bot"),
            &maximum(),
            false,
        );
        assert!(granted.grants("account:read"));
        assert!(!granted.grants("account:read_write"));
        assert!(!granted.grants("trade:read"));
        assert!(!granted.mainaccount);
        assert!(!granted.connection);
        assert_eq!(granted.session.as_deref(), Some("bot"));
        assert!(!granted.access.contains_key("block_rfq"));
    }

    #[test]
    fn unnamed_areas_keep_the_maximum_when_asked_to() {
        let granted = grant_scope(Some("account:read"), &maximum(), true);
        assert!(granted.grants("account:read"));
        assert!(!granted.grants("account:read_write"));
        assert!(granted.grants("trade:read_write"));
        assert!(granted.to_string().contains("trade:read_write"));
    }

    #[test]
    fn refresh_of_revoked_pair_fails() {
        let mut store = TokenStore::default();
        let issued = store
            .issue(1, grant_scope(None, &maximum(), false), 0)
            .unwrap();
        assert!(store.access(&issued.access_token, 1).is_some());
        assert!(store.access(&issued.access_token, 900_001).is_none());
        store.revoke_user(1, false);
        assert!(store.refresh(&issued.refresh_token, 1).is_none());
    }

    #[test]
    fn a_disable_keeps_the_pairs_obtained_through_the_main_account_only_when_asked() {
        let mut store = TokenStore::default();
        let scope = || grant_scope(None, &maximum(), false);
        let own = store.issue(1, scope(), 0).unwrap();
        let exchanged = store.issue(1, scope(), 0).unwrap();
        store.mark_through_main(&exchanged);
        store.revoke_user(1, true);
        assert!(store.access(&own.access_token, 1).is_none());
        assert!(store.access(&exchanged.access_token, 1).is_some());
        assert!(store.refresh(&exchanged.refresh_token, 1).is_some());
        store.revoke_user(1, false);
        assert!(store.access(&exchanged.access_token, 1).is_none());
    }

    #[test]
    fn a_record_set_aside_outlives_its_end_only_for_its_own_ending() {
        let mut store = TokenStore::default();
        let issued = store
            .issue(1, grant_scope(None, &maximum(), false), 0)
            .unwrap();
        store.set_aside_user(1, Ending::Disable);
        store.revoke_user(1, false);
        assert!(store.access(&issued.access_token, 1).is_none());
        assert!(
            store
                .ended_by(&issued.access_token, Ending::Disable, 1)
                .is_some()
        );
        assert!(
            store
                .ended_by(&issued.access_token, Ending::Logout, 1)
                .is_none()
        );
        assert!(
            store
                .ended_by(&issued.access_token, Ending::Disable, 900_001)
                .is_none()
        );
    }

    #[test]
    fn a_user_past_the_cap_loses_the_oldest_pair_only() {
        let mut store = TokenStore::default();
        let first = store
            .issue(1, grant_scope(None, &maximum(), false), 0)
            .unwrap();
        let other = store
            .issue(2, grant_scope(None, &maximum(), false), 0)
            .unwrap();
        for _ in 1..PER_USER {
            store
                .issue(1, grant_scope(None, &maximum(), false), 0)
                .unwrap();
        }
        assert!(store.access(&first.access_token, 1).is_some());
        let newest = store
            .issue(1, grant_scope(None, &maximum(), false), 0)
            .unwrap();
        assert!(store.access(&first.access_token, 1).is_none());
        assert!(store.refresh(&first.refresh_token, 1).is_none());
        assert!(store.access(&newest.access_token, 1).is_some());
        assert!(store.access(&other.access_token, 1).is_some());
        assert_eq!(store.access.len(), PER_USER + 1);
        assert_eq!(store.issued_tokens().len(), 2 * (PER_USER + 1));
    }
}
