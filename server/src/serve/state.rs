//! Building the server state (users, secrets, fixtures) and describing it as a [`Target`];
//! the transport-free entry point [`ServerState::dispatch_message`] is `message.rs`.
//!
//! Three users exist: `main` (full rights including `mainaccount`, 2FA off), `two_factor`
//! (a second main account with 2FA on) and `sub` (a subaccount of `main`); the main user has
//! a second API key, `main_second` (SPEC.md 5.3: "A user may configure up to 8 client ids"),
//! the key whose secret is the nearest miss of main's own. Client ids are fixed so logs read
//! well; secrets and the Direct Access key are random per start.

use std::collections::{BTreeMap, HashSet};
use std::net::SocketAddr;
use std::sync::atomic::{AtomicBool, AtomicU64};
use std::sync::{Mutex, MutexGuard, PoisonError};

use rand::Rng;
use rand::distr::Alphanumeric;

use super::fault::{Fault, FaultSet};
use super::fixtures::{self, DEFAULT_INSTRUMENT, FIXTURE_MEMBER_ID};
use super::ledger::{Holder, Ledger};
use super::rate::RateLimiter;
use super::tokens::{RefreshRecord, TokenStore};
use super::{ServeConfig, ServerState};
use harness_model::target_file::{
    Account, ExpiredOption, FactorCode, Fixtures, SecondFactor, Secret, Target,
};
use harness_protocol::auth::nonce::ReplayCache;
use harness_protocol::auth::scope::Scope;
use harness_protocol::spec;
use harness_protocol::spec::SIGNATURE_WINDOW_MS;

/// The throttling code of the `other-error-codes` variant, which its target file lists.
pub(crate) const OTHER_THROTTLE_CODE: i64 = 10429;

/// Nonces remembered at most. Kept for [`NONCE_RETENTION_MS`], this allows over 1,600 signed
/// requests a second, sustained, before the cache refuses new ones (a refusal, never a
/// replay let through), beyond what a test run sends.
const NONCE_CAPACITY: usize = 1_000_000;
/// How long the reference remembers a used nonce past the 60 s window: SPEC.md 5.5 and
/// 5.6 ("The nonce is single use") set no time bound, a server must set one, and this one
/// outlasts any run of the suite (which reuses a nonce a few seconds after its timestamp
/// left the window: cases/auth/*_nonce_after_window.toml).
const NONCE_RETENTION_MS: u64 = 600_000;

/// User id of the main account.
pub(crate) const MAIN_ID: u64 = 100_001;
/// User id of the 2FA main account.
pub(crate) const TWO_FACTOR_ID: u64 = 100_002;
/// User id of the main account's subaccount.
pub(crate) const SUB_ID: u64 = 100_011;
/// The subaccount of the `two_factor` user: what its second-factor calls act on. It logs in
/// with no key of the target file.
pub(crate) const TWO_FACTOR_SUB_ID: u64 = 100_012;
const TWO_FACTOR_SUB_ROLE: &str = "two_factor_sub";
/// The role of the main user's second API key (the target file's `[accounts.main_second]`).
pub(crate) const MAIN_SECOND_ROLE: &str = "main_second";

/// One user and its API key.
#[derive(Debug)]
pub(crate) struct User {
    pub(crate) role: &'static str,
    pub(crate) client_id: &'static str,
    pub(crate) client_secret: Secret,
    pub(crate) user_id: u64,
    /// The widest scope a token of this user may carry.
    pub(crate) maximum: Scope,
    pub(crate) two_factor: bool,
    /// The TOTP secret of a 2FA user's second factor.
    pub(crate) totp_secret: Option<Secret>,
    /// The main account this user belongs to (itself for a main account).
    pub(crate) main_id: u64,
    /// Whether Direct Access trading is enabled (SPEC.md section 4.11).
    pub(crate) direct_access: bool,
}

impl User {
    pub(crate) fn is_subaccount(&self) -> bool {
        self.main_id != self.user_id
    }
}

/// Locks a mutex, carrying on after a panic elsewhere: every critical section leaves its
/// data consistent at each step, so a poisoned lock holds nothing half-written.
pub(crate) fn lock<T>(mutex: &Mutex<T>) -> MutexGuard<'_, T> {
    mutex.lock().unwrap_or_else(PoisonError::into_inner)
}

fn random_secret(length: usize) -> String {
    rand::rng()
        .sample_iter(&Alphanumeric)
        .take(length)
        .map(char::from)
        .collect()
}

/// The parameter names SPEC.md does not show, as the reference reads them: the
/// token-issuing method whose names 4.3 leaves out (`session_param` for the session's
/// name), and the typed log's keywords.
fn param_names(session_param: &str) -> BTreeMap<String, BTreeMap<String, String>> {
    spec::token_issuing_methods()
        .filter(|method| !method.params_shown)
        .map(|method| {
            let names = BTreeMap::from([
                ("refresh_token".to_owned(), "refresh_token".to_owned()),
                ("session_name".to_owned(), session_param.to_owned()),
            ]);
            (method.name.to_owned(), names)
        })
        .chain([(
            spec::TYPED_LOG_METHOD.to_owned(),
            BTreeMap::from([("keywords".to_owned(), fixtures::KEYWORDS_PARAM.to_owned())]),
        )])
        .collect()
}

/// The field names SPEC.md does not give, as the reference writes them; `member_names`:
/// the member record's identifier and name.
fn field_names(member_names: (&str, &str)) -> BTreeMap<String, BTreeMap<String, String>> {
    BTreeMap::from([
        (
            "member".to_owned(),
            BTreeMap::from([
                ("identifier".to_owned(), member_names.0.to_owned()),
                ("name".to_owned(), member_names.1.to_owned()),
            ]),
        ),
        (
            "exchange_token".to_owned(),
            BTreeMap::from([("access_token".to_owned(), "access_token".to_owned())]),
        ),
        (
            "fork_token".to_owned(),
            BTreeMap::from([("access_token".to_owned(), "access_token".to_owned())]),
        ),
        (
            "trigger_history".to_owned(),
            ["order_type", "label", "post_only", "reduce_only"]
                .into_iter()
                .map(|field| (field.to_owned(), field.to_owned()))
                .collect(),
        ),
        (
            "currency".to_owned(),
            BTreeMap::from([
                (
                    "cross_collateral".to_owned(),
                    fixtures::CURRENCY_CROSS_COLLATERAL.to_owned(),
                ),
                (
                    "networks".to_owned(),
                    fixtures::CURRENCY_NETWORKS.to_owned(),
                ),
            ]),
        ),
        (
            "transaction_log".to_owned(),
            BTreeMap::from([
                (
                    "delivery_settlement_price".to_owned(),
                    fixtures::LOG_DELIVERY_SETTLEMENT_PRICE.to_owned(),
                ),
                (
                    "delivery_index_price".to_owned(),
                    fixtures::LOG_DELIVERY_INDEX_PRICE.to_owned(),
                ),
            ]),
        ),
        (
            "token_set".to_owned(),
            BTreeMap::from([
                (
                    "state_copy".to_owned(),
                    fixtures::TOKEN_STATE_COPY.to_owned(),
                ),
                ("idp_login".to_owned(), fixtures::TOKEN_IDP_LOGIN.to_owned()),
            ]),
        ),
    ])
}

/// The reference's users, each key a record: the main user's two keys, the user with a
/// second factor, and a subaccount of each, every one with a fresh secret.
fn users(config: &ServeConfig) -> Vec<User> {
    let full = "account:read_write trade:read_write wallet:read_write block_rfq:read_write";
    let user = |role, client_id, user_id, main_id, two_factor| User {
        role,
        client_id,
        client_secret: Secret::new(random_secret(24)),
        user_id,
        maximum: Scope::parse(&if main_id == user_id {
            format!("{full} mainaccount")
        } else {
            full.to_owned()
        }),
        two_factor,
        totp_secret: two_factor
            .then(|| Secret::new(harness_protocol::auth::second_factor::fresh_totp_secret())),
        main_id,
        direct_access: user_id == MAIN_ID,
    };
    let main = user(
        "main",
        "ref-main",
        MAIN_ID,
        MAIN_ID,
        config.knobs.two_factor_main,
    );
    // The main user's second key: another client id and secret of the same user, with
    // the same rights and the same second factor (a factor is the user's, not a key's).
    let main_second = User {
        totp_secret: main.totp_secret.clone(),
        ..user(
            MAIN_SECOND_ROLE,
            "ref-main-2",
            MAIN_ID,
            MAIN_ID,
            config.knobs.two_factor_main,
        )
    };
    // `user(MAIN_ID)` finds `main` first: the user's record is its first key's.
    vec![
        main,
        main_second,
        user("two_factor", "ref-2fa", TWO_FACTOR_ID, TWO_FACTOR_ID, true),
        user("sub", "ref-sub", SUB_ID, MAIN_ID, false),
        user(
            TWO_FACTOR_SUB_ROLE,
            "ref-2fa-sub",
            TWO_FACTOR_SUB_ID,
            TWO_FACTOR_ID,
            false,
        ),
    ]
}

impl ServerState {
    /// Fresh state for `config`: new secrets, the fixed fixture data, no tokens.
    pub fn new(config: &ServeConfig) -> ServerState {
        let users = users(config);
        let ledger = Ledger::generate(
            &Holder {
                user_id: MAIN_ID,
                username: "ref_main",
            },
            &Holder {
                user_id: SUB_ID,
                username: "ref_sub",
            },
            config.faults.contains(&Fault::ExpiryWithDelivery),
            config.log_entries,
        );
        let mut limits = config.limits.clone();
        if config.variants.contains(&super::Variant::RatePerUserBurst1) {
            limits.transaction_log_burst = 1;
            limits.transaction_log_counted_per = harness_model::target_file::CountedPer::Account;
        }
        ServerState {
            faults: FaultSet::new(&config.faults),
            variants: super::variant::VariantSet::new(&config.variants),
            clock: config.clock.clone(),
            rate: Mutex::new(RateLimiter::new(
                &limits,
                config.faults.contains(&Fault::TxlogRefillHalfRate),
            )),
            limits,
            max_body_bytes: config.max_body_bytes,
            users,
            direct_access_key: Secret::new(format!("da-{}", random_secret(24))),
            instruments: fixtures::instruments(),
            ledger,
            tokens: Mutex::new(TokenStore::with_lifetime_cap(config.knobs.token_lifetime_s)),
            nonces: Mutex::new(
                ReplayCache::new(SIGNATURE_WINDOW_MS, NONCE_CAPACITY)
                    .remembering_for(NONCE_RETENTION_MS),
            ),
            window_nonces: Mutex::new(ReplayCache::new(SIGNATURE_WINDOW_MS, NONCE_CAPACITY)),
            members: Mutex::new(
                fixtures::members(MAIN_ID, SUB_ID, TWO_FACTOR_ID)
                    .into_iter()
                    .fold(
                        BTreeMap::new(),
                        |mut by_owner: BTreeMap<u64, Vec<fixtures::Member>>, member| {
                            by_owner.entry(member.owner_id).or_default().push(member);
                            by_owner
                        },
                    ),
            ),
            disabled_logins: Mutex::new(HashSet::new()),
            closed_positions: Mutex::new(HashSet::new()),
            portfolio_locked: AtomicBool::new(false),
            orders: super::orders::OrderBook::default(),
            mmp_reset_reported_ms: AtomicU64::new(0),
            deferred: super::deferred::Deferred::default(),
            arrivals: super::arrivals::Arrivals::default(),
            subscribers: super::subscription::Subscribers::default(),
            shared_session: Mutex::new(None),
            signature_scheme: config.signature_scheme.clone(),
            knobs: config.knobs.clone(),
            observer: config.observer.clone(),
            next_seq: AtomicU64::new(1),
            next_connection: AtomicU64::new(1),
        }
    }

    /// The target description of a server listening on `addr`.
    pub(crate) fn target(&self, addr: SocketAddr) -> Target {
        let origin = format!("http://{addr}");
        let accounts = self.target_accounts();
        // What the reference chose where SPEC.md leaves a point open and a client must know:
        // its throttling code, fork_token's parameter names and the member record's field names.
        let mut limits = self.limits.clone();
        if self.variant(super::Variant::OtherErrorCodes) {
            limits.throttle_codes = vec![OTHER_THROTTLE_CODE];
        }
        let session_param = if self.variant(super::Variant::ForkTokenNames) {
            "name"
        } else {
            "session_name"
        };
        let member_names =
            super::fixtures::member_field_names(self.variant(super::Variant::MemberFieldNames));
        // Under `mmp-none-triggered` no status is held: none is advertised.
        let mmp_held = !self.variants.has(super::Variant::MmpNoneTriggered);
        Target {
            name: "reference".to_owned(),
            base_url: format!("{origin}{}", spec::API_PREFIX),
            ws_url: Some(format!("ws://{addr}{}", spec::WS_PATH)),
            direct_access_url: Some(format!("{origin}/direct")),
            signature_scheme: self.signature_scheme.clone(),
            allow_destructive: true,
            races: true,
            race_rounds: None,
            accounts,
            fixtures: self.target_fixtures(mmp_held),
            limits,
            tls: harness_model::target_file::TlsTrust::default(),
            param_names: param_names(session_param),
            field_names: field_names(member_names),
        }
    }

    /// The target file's accounts: every key but the second factor's subaccount, the
    /// second-factor user also as the main account without Direct Access trading.
    fn target_accounts(&self) -> BTreeMap<String, Account> {
        let mut accounts: BTreeMap<String, Account> = self
            .users
            .iter()
            .filter(|user| user.role != TWO_FACTOR_SUB_ROLE)
            .map(|user| {
                (
                    user.role.to_owned(),
                    Account {
                        client_id: user.client_id.to_owned(),
                        client_secret: user.client_secret.clone(),
                        second_factor: user.totp_secret.clone().map(|totp_secret| SecondFactor {
                            parameter: fixtures::SECOND_FACTOR_PARAM.to_owned(),
                            code: match &self.knobs.two_factor_code {
                                Some(code) => FactorCode::Fixed(Secret::new(code.clone())),
                                None => FactorCode::Totp(totp_secret),
                            },
                        }),
                    },
                )
            })
            .collect();
        // The two_factor account is also the main account without Direct Access trading
        // (SPEC.md 4.11), under the role the delete_member case goes as.
        if let Some(two_factor) = accounts.get("two_factor").cloned() {
            accounts.insert("no_direct_access".to_owned(), two_factor);
        }
        accounts
    }

    /// The target file's fixtures; `mmp_held`: the market maker protection statuses are
    /// advertised (not under `mmp-none-triggered`).
    fn target_fixtures(&self, mmp_held: bool) -> Fixtures {
        Fixtures {
            subaccount_id: Some(SUB_ID),
            member_id: Some(FIXTURE_MEMBER_ID),
            kept_member_id: Some(fixtures::KEPT_MEMBER_ID),
            second_member_id: Some(fixtures::SECOND_MEMBER_ID),
            two_factor_subaccount_id: Some(TWO_FACTOR_SUB_ID),
            no_direct_access_member_id: Some(fixtures::NO_DIRECT_ACCESS_MEMBER_ID),
            mmp_reset_index: mmp_held.then(|| fixtures::MMP_RESET_INDEX.to_owned()),
            mmp_triggered_index: mmp_held.then(|| fixtures::MMP_TRIGGERED_INDEX.to_owned()),
            mmp_block_rfq_index: mmp_held.then(|| fixtures::MMP_BLOCK_RFQ_INDEX.to_owned()),
            instrument_name: Some(DEFAULT_INSTRUMENT.to_owned()),
            other_instrument_name: Some(fixtures::OTHER_INSTRUMENT.to_owned()),
            currency: Some("BTC".to_owned()),
            positions: self
                .instruments
                .iter()
                .map(|instrument| instrument.name.to_owned())
                .collect(),
            expired_otm_option: Some(ExpiredOption {
                instrument_name: super::ledger::EXPIRED_OTM_OPTION.to_owned(),
                currency: "BTC".to_owned(),
                expired_at: Some(super::ledger::EXPIRED_OTM_AT_MS),
            }),
            expired_otm_options: Vec::new(),
            direct_access_order: Some(super::direct_order::fixture()),
            resting_close_price: Some(super::orders::RESTING_CLOSE_PRICE),
            order_read: Some(super::orders::read_fixture(false)),
            direct_access_order_read: Some(super::orders::read_fixture(true)),
            direct_access_key: Some(self.direct_access_key.clone()),
            subscription: Some(super::subscription::public_fixture()),
            raw_feed_subscription: Some(super::subscription::raw_feed_fixture()),
        }
    }

    /// Whether a spec-open variant is on.
    pub(crate) fn variant(&self, variant: super::Variant) -> bool {
        self.variants.has(variant)
    }

    /// Whether a fault switch is on.
    pub(crate) fn fault(&self, fault: Fault) -> bool {
        self.faults.has(fault)
    }

    /// Milliseconds since the epoch, from the configured clock.
    pub(crate) fn now_ms(&self) -> u64 {
        self.clock.now_ms()
    }

    /// Keeps a session token a connection remembers where every connection finds it, as a
    /// server that remembers the session per process rather than per connection would:
    /// only under the `ws-session-shared` fault.
    pub(crate) fn share_session(&self, token: &str) {
        if self.fault(Fault::WsSessionShared) {
            *lock(&self.shared_session) = Some(token.to_owned());
        }
    }

    /// The session token another connection remembered (see [`ServerState::share_session`]).
    pub(crate) fn shared_session(&self) -> Option<String> {
        lock(&self.shared_session).clone()
    }

    /// The user with this client id.
    pub(crate) fn user_by_client(&self, client_id: &str) -> Option<&User> {
        self.users.iter().find(|user| user.client_id == client_id)
    }

    /// The user with this user id.
    pub(crate) fn user(&self, user_id: u64) -> Option<&User> {
        self.users.iter().find(|user| user.user_id == user_id)
    }

    /// Every access and refresh token the server still remembers issuing (the latest
    /// 10,000 pairs of each user, revoked ones included), so a test can check that none of
    /// them reaches a report, a log or the terminal.
    pub fn issued_tokens(&self) -> Vec<String> {
        lock(&self.tokens).issued_tokens()
    }

    /// A copy of a live refresh token's record.
    pub(crate) fn tokens_refresh(&self, token: &str) -> Option<RefreshRecord> {
        let now_ms = self.now_ms();
        lock(&self.tokens).refresh(token, now_ms).cloned()
    }

    /// Whether `sub_id` is a subaccount of `main_id`.
    pub(crate) fn is_subaccount_of(&self, sub_id: u64, main_id: u64) -> bool {
        self.user(sub_id)
            .is_some_and(|user| user.is_subaccount() && user.main_id == main_id)
    }
}
