//! The target file: the one way to describe a server to the harness (URLs, accounts,
//! fixtures, limits, TLS trust). `harness serve` writes one for the reference server; users
//! write one for theirs. Secrets may come from environment variables (`client_secret_env`,
//! `direct_access_key_env`) and are held in [`Secret`], which never prints its value.
//!
//! The keys:
//!
//! ```toml
//! name = "staging"                               # for reports
//! base_url = "https://api.example.com/api/v2"    # http:// or https://
//! ws_url = "wss://api.example.com/ws/api/v2"     # optional; ws:// or wss://
//! direct_access_url = "https://da.example.com"   # optional; http:// or https://
//! signature_scheme = "svc-hmac-sha256"           # optional; the signed header's scheme name
//! allow_destructive = false                      # cases that change state run only if true
//! races = true                                   # false: no race step (copies released together) runs
//! race_rounds = 20                               # optional; rounds of every race, instead of each case's own
//! ca_file = "staging-ca.pem"                     # optional; one more CA bundle (PEM) to trust,
//!                                                # relative to this file's directory
//! accept_invalid_certs = false                   # loopback only, unless --allow-invalid-certs
//!
//! [accounts.main]                                # also two_factor, sub, ...
//! client_id = "..."
//! client_secret_env = "STAGING_SECRET"           # or client_secret = "..."
//! # An account with 2FA: the parameter carrying the second factor (SPEC.md 5.7 names none)
//! # and the TOTP secret of its codes (RFC 6238, SHA-1, 30 s, 6 digits; or totp_secret_env):
//! # second_factor = { parameter = "authorization_data", totp_secret_env = "TWO_FA_TOTP" }
//! # or a fixed code a test environment accepts (or code_env); exactly one of the four:
//! # second_factor = { parameter = "otp", code = "000000" }
//!
//! [accounts.main_second]                         # optional: another key of main's user
//! client_id = "..."                              # (SPEC.md 5.3: up to 8 client ids)
//! client_secret_env = "STAGING_SECOND_SECRET"
//!
//! [fixtures]                                     # all optional
//! subaccount_id = 7
//! member_id = 9
//! kept_member_id = 10                           # a member the suite never deletes
//! second_member_id = 11                         # a member deleted after member_id
//! instrument_name = "BTC-PERPETUAL"
//! other_instrument_name = "BTC-27JUN25-100000-C" # a second instrument, best of another kind
//! currency = "BTC"
//! direct_access_key_env = "STAGING_DA_KEY"       # or direct_access_key = "..."
//! two_factor_subaccount_id = 12                  # a subaccount of the two_factor account
//! no_direct_access_member_id = 4                # a member of [accounts.no_direct_access], a
//!                                                # main account without Direct Access (4.11)
//! mmp_reset_index = "btc_usd"                   # an MMP status frozen until manual reset
//! mmp_triggered_index = "eth_usdc"              # another order/quote status triggered all run
//! mmp_block_rfq_index = "btc_usdc"              # a Block RFQ status triggered all run
//! expired_otm_option = { instrument_name = "BTC-31JAN25-100000-C", currency = "BTC", expired_at = 1738310400000 }
//! # more options that expired out of the money, each checked as the one above is:
//! expired_otm_options = [{ instrument_name = "ETH-31JAN25-4000-C", currency = "ETH", expired_at = 1738310400000 }]
//! # a Direct Access order far from the market, sent to {direct_access_url} with the key as
//! # lock_portfolio is (SPEC.md 3: rejected once the portfolio is locked; a throwaway one):
//! direct_access_order = { method = "private/buy", params = { instrument_name = "BTC-PERPETUAL", amount = 10, type = "limit", price = 1 } }
//! # the request that subscribes to a busy public channel over WebSocket (SPEC.md 6 shows
//! # none), and one to a channel of the raw event feed (5.1: authenticated connections only):
//! subscription = { method = "public/subscribe", params = { channels = ["book.BTC-PERPETUAL.100ms"] } }
//! raw_feed_subscription = { method = "private/subscribe", params = { channels = ["trades.BTC-PERPETUAL.raw"] } }
//! # a request that reads an order back by id (SPEC.md describes none) and the order_state
//! # values that mean open and cancelled (3: "not shown beyond the sample state filled"):
//! order_read = { method = "private/get_order_state", param = "order_id", open_states = ["open"], cancelled_states = ["cancelled"] }
//! # the same over Direct Access, and where the id is in direct_access_order's answer:
//! direct_access_order_read = { method = "private/get_order_state", param = "order_id", id_path = "result.order.order_id", open_states = ["open"], cancelled_states = ["cancelled"] }
//! resting_close_price = 10000000                 # a close_position limit price that rests
//!
//! [limits]                                       # pacing of private/get_transaction_log
//! transaction_log_per_second = 1.0
//! transaction_log_burst = 1
//! transaction_log_counted_per = "account"        # or "token": what one budget covers
//! throttle_codes = [10028]                       # error codes that mean "slow down": retried
//! session_limit_codes = [13040]                  # "session slots full": such a step is skipped
//! session_slots = 16                            # sessions of one key kept at least (fuzz: else 2)
//! clock_skew_ms = 0                              # how far the target's clock may be off ours
//!
//! [param_names."public/fork_token"]              # names SPEC.md does not show (4.3); cases
//! refresh_token = "refresh_token"                # calling such a method are skipped without
//! session_name = "session_name"                  # them
//!
//! [field_names.member]                           # fields SPEC.md describes without
//! identifier = "member_id"                       # names (2.6); checks reading such a
//! name = "name"                                  # field are skipped without them
//! # also [field_names.currency] cross_collateral, networks (2.5), [field_names.trigger_history]
//! # order_type, label, post_only, reduce_only (2.2), [field_names.exchange_token] access_token (4.2)
//! ```

use std::collections::BTreeMap;
use std::path::Path;

use serde::{Deserialize, Serialize};

use harness_protocol::file_error::FileError;

mod limits;
mod names;
mod order_read;
mod parse;
mod property;
mod second_factor;
mod secret;
mod subscription;
mod trust;
mod write;

pub use limits::{CountedPer, RateLimits};

pub use property::{TargetPropertyError, target_parse_roundtrip};
pub use second_factor::{FactorCode, SecondFactor};
pub use secret::Secret;
pub use subscription::{SUBSCRIPTION_KEYS, SubscriptionRequest};
pub use trust::{CaFileError, TlsTrust, is_loopback};

/// A described server.
#[derive(Clone, Debug, PartialEq)]
pub struct Target {
    /// A name for reports.
    pub name: String,
    /// `{base_url}`, ending in `/api/v2`.
    pub base_url: String,
    /// The WebSocket JSON-RPC URL, if the server has one.
    pub ws_url: Option<String>,
    /// `{direct_access_url}`; `lock_portfolio` lives at `{this}/api/v2/private/lock_portfolio`.
    pub direct_access_url: Option<String>,
    /// The scheme name of the signed `Authorization` header.
    pub signature_scheme: String,
    /// Whether cases that change state may run.
    pub allow_destructive: bool,
    /// Whether race steps (copies of a request released together) may run; `races = false`
    /// skips every case with one.
    pub races: bool,
    /// The rounds of every race step, instead of each case's own `rounds` (1 to 1000).
    pub race_rounds: Option<u32>,
    /// Accounts by role: `main`, `two_factor`, `sub`, ...
    pub accounts: BTreeMap<String, Account>,
    /// Fixture values the cases use.
    pub fixtures: Fixtures,
    /// Rate limits the runner respects.
    pub limits: RateLimits,
    /// Which server certificates the harness trusts.
    pub tls: TlsTrust,
    /// For methods whose parameter names SPEC.md does not show (`public/fork_token`): the
    /// target's name for each parameter the harness sends, by method and harness name.
    pub param_names: BTreeMap<String, BTreeMap<String, String>>,
    /// For fields SPEC.md describes without showing their names (`spec::UNNAMED_FIELDS`):
    /// the target's name of each, by record and field. A check on a field not named here
    /// is skipped with the reason.
    pub field_names: BTreeMap<String, BTreeMap<String, String>>,
}

/// One API key.
#[derive(Clone, Debug, PartialEq)]
pub struct Account {
    /// The client id.
    pub client_id: String,
    /// The client secret.
    pub client_secret: Secret,
    /// How the account gives the second factor of SPEC.md 5.7, where it has one.
    pub second_factor: Option<SecondFactor>,
}

/// Values of the target's data that cases refer to as `{{fixtures.<name>}}`.
#[derive(Clone, Debug, Default, PartialEq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct Fixtures {
    /// A subaccount user id of the main account.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub subaccount_id: Option<u64>,
    /// A Direct Access member id that may be deleted.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub member_id: Option<u64>,
    /// Another member of the main account, which the suite never deletes: what remains
    /// after `member_id` is deleted holds it (SPEC.md 4.11: "members remaining").
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub kept_member_id: Option<u64>,
    /// A second member of the main account that may be deleted: the suite deletes it after
    /// `member_id`, in the same execution, and its answer shows `member_id` still gone
    /// (SPEC.md describes no other list of members).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub second_member_id: Option<u64>,
    /// A subaccount user id of the `two_factor` account: what its second-factor calls act on.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub two_factor_subaccount_id: Option<u64>,
    /// A member id of the `no_direct_access` account, a main account whose Direct Access
    /// trading is not enabled: SPEC.md 4.11 makes every `delete_member` of that account
    /// fail, and a member it owns is what shows a server that skips the requirement (a
    /// member of another account is refused as unknown all the same).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub no_direct_access_member_id: Option<u64>,
    /// The `index_name` of an MMP status the main account holds frozen until manual reset
    /// (`frozen_until` 0, SPEC.md 2.4): a triggered status every `get_mmp_status` call that
    /// covers its index must report (4.6).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub mmp_reset_index: Option<String>,
    /// The `index_name` of another order/quote MMP status the main account holds triggered
    /// for the whole run (frozen until manual reset, or until a time after the run): a
    /// second triggered status, so that a call without `index_name` is shown to return
    /// every one (4.6), not one alone.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub mmp_triggered_index: Option<String>,
    /// The `index_name` of a Block RFQ MMP status the main account holds triggered for the
    /// whole run: reported with `block_rfq` true, and not among the order/quote statuses
    /// (2.4: "Block RFQ status is separate from order/quote status").
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub mmp_block_rfq_index: Option<String>,
    /// An instrument with a position that may be closed and a book summary.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub instrument_name: Option<String>,
    /// A second instrument with a book summary, best of another kind (an option beside a
    /// future): the book summary's rules are checked on it too, so a server answering
    /// `instrument_name`'s summary whatever is asked is caught.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub other_instrument_name: Option<String>,
    /// A currency with data.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub currency: Option<String>,
    /// Instruments with an open position the suite may close, one per execution of a
    /// closing case (`{{fixtures.position}}`): a closed position cannot be closed again.
    /// Without the list, `instrument_name` is the one position.
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub positions: Vec<String>,
    /// An option of the target's history that expired out of the money, with the currency
    /// of its transaction log: the rule of SPEC.md 4.8 on its expiry entry is checked on it
    /// (serialized as an inline table by [`Target::to_toml`]).
    #[serde(default, skip_serializing)]
    pub expired_otm_option: Option<ExpiredOption>,
    /// More options of the target's history that expired out of the money, each checked
    /// as `expired_otm_option` is: a server may break the rule for one currency only
    /// (serialized as an array of inline tables by [`Target::to_toml`]).
    #[serde(default, skip_serializing)]
    pub expired_otm_options: Vec<ExpiredOption>,
    /// A Direct Access order request (SPEC.md describes none: 3 and 4.13 only say that
    /// such orders are "rejected until the portfolio is unlocked"), far from the market,
    /// sent to `{direct_access_url}` with the API key as `lock_portfolio` is (serialized as
    /// an inline table by [`Target::to_toml`]).
    #[serde(default, skip_serializing)]
    pub direct_access_order: Option<DirectAccessOrder>,
    /// The request that subscribes to a busy public channel over WebSocket (SPEC.md 6:
    /// "after subscribing, the server pushes notifications"; it shows no subscription), sent
    /// as it is (serialized as an inline table by [`Target::to_toml`]).
    #[serde(default, skip_serializing)]
    pub subscription: Option<SubscriptionRequest>,
    /// The request that subscribes to a channel of the raw event feed over WebSocket (5.1:
    /// authenticated connections have "access to the raw event feed"; it shows no channel).
    #[serde(default, skip_serializing)]
    pub raw_feed_subscription: Option<SubscriptionRequest>,
    /// A limit price at which the closing order of `close_position` rests rather than
    /// fills, for every position of the pool (far from the market on the side of the
    /// close): an open order for the rule of SPEC.md 4.4 that logout keeps it.
    #[serde(default, skip_serializing)]
    pub resting_close_price: Option<f64>,
    /// A request of the JSON-RPC interface that reads an order back by id (SPEC.md
    /// describes none), and which `order_state` values mean open and cancelled (serialized
    /// as an inline table by [`Target::to_toml`]).
    #[serde(default, skip_serializing)]
    pub order_read: Option<OrderRead>,
    /// The same over the Direct Access interface, sent with the API key as
    /// `lock_portfolio` is, with `id_path`: where the answer to `direct_access_order` holds
    /// the order's id (SPEC.md shows no such answer).
    #[serde(default, skip_serializing)]
    pub direct_access_order_read: Option<OrderRead>,
    /// The Direct Access API key (not serialized: see [`Target::to_toml`]).
    #[serde(skip)]
    pub direct_access_key: Option<Secret>,
}

/// A request of the Direct Access interface that places an order: the method, whose path
/// goes after `{direct_access_url}/api/v2/`, and its parameters.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct DirectAccessOrder {
    /// The method, e.g. `private/buy`.
    pub method: String,
    /// Its parameters, sent as query parameters.
    #[serde(default)]
    pub params: serde_json::Map<String, serde_json::Value>,
}

/// A request that reads an order back by id, which SPEC.md does not describe ("Order
/// state set and transitions of orders: not shown beyond the sample state filled", 3):
/// the method, the parameter carrying the id, and which `order_state` values of its result
/// mean open and cancelled. A state it names neither way is not judged.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct OrderRead {
    /// The method, e.g. `private/get_order_state`.
    pub method: String,
    /// The parameter carrying the order id, e.g. `order_id`.
    pub param: String,
    /// The path of the order id in the answer that placed the order (Direct Access only:
    /// `close_position`'s is `result.order.order_id`, SPEC.md 2.7).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub id_path: Option<String>,
    /// The `order_state` values of an open order (at least one).
    pub open_states: Vec<String>,
    /// The `order_state` values of a cancelled order (may be empty: a cancelled order is
    /// then not told from a filled one, and only warns).
    #[serde(default)]
    pub cancelled_states: Vec<String>,
}

/// An option that expired out of the money, and the currency whose log holds its entries.
#[derive(Clone, Debug, PartialEq, Eq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct ExpiredOption {
    /// The option's instrument name.
    pub instrument_name: String,
    /// The `currency` of `private/get_transaction_log` whose entries include it.
    pub currency: String,
    /// When it expired (the timestamp of its `expiry` entry, ms): the check reads a day
    /// either side of it, not the whole log (`harness run --full-walks` reads the whole
    /// log, and without it the check is skipped with the reason).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub expired_at: Option<u64>,
}

impl Fixtures {
    /// The options that expired out of the money the rule of SPEC.md 4.8 is checked on:
    /// `expired_otm_option`, then `expired_otm_options`.
    pub fn expired_option_pool(&self) -> Vec<&ExpiredOption> {
        self.expired_otm_option
            .iter()
            .chain(&self.expired_otm_options)
            .collect()
    }

    /// The positions closing cases draw from: `positions`, else `instrument_name`.
    pub fn position_pool(&self) -> Vec<&str> {
        if self.positions.is_empty() {
            self.instrument_name.as_deref().into_iter().collect()
        } else {
            self.positions.iter().map(String::as_str).collect()
        }
    }
}

/// Where a secret's value comes from.
fn resolve_secret(
    path: &Path,
    line: usize,
    what: &str,
    inline: Option<String>,
    from_env: Option<String>,
    lookup_env: &dyn Fn(&str) -> Option<String>,
) -> Result<Option<Secret>, FileError> {
    match (inline, from_env) {
        (Some(_), Some(_)) => Err(FileError::new(
            path,
            line,
            format!("give either {what} or {what}_env, not both"),
        )),
        (Some(value), None) => Ok(Some(Secret::new(value))),
        (None, Some(variable)) => match lookup_env(&variable) {
            Some(value) if !value.is_empty() => Ok(Some(Secret::new(value))),
            _ => Err(FileError::new(
                path,
                line,
                format!("environment variable {variable} (for {what}) is not set"),
            )),
        },
        (None, None) => Ok(None),
    }
}

impl Target {
    /// Every secret value the target holds, for redaction.
    pub fn secrets(&self) -> Vec<String> {
        let mut secrets: Vec<String> = self
            .accounts
            .values()
            .map(|account| account.client_secret.expose().to_owned())
            .collect();
        secrets.extend(self.accounts.values().filter_map(|account| {
            account
                .second_factor
                .as_ref()
                .map(|factor| factor.code.secret().expose().to_owned())
        }));
        if let Some(key) = &self.fixtures.direct_access_key {
            secrets.push(key.expose().to_owned());
        }
        secrets
    }
}

/// The 1-based line where `key` is set, 0 if no line starts with it.
fn key_line(text: &str, key: &str) -> usize {
    text.lines()
        .position(|line| line.trim_start().starts_with(key))
        .map_or(0, |index| index + 1)
}

#[cfg(test)]
mod tests;
