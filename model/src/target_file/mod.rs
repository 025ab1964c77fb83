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
//!
//! [limits]                                       # pacing of private/get_transaction_log
//! transaction_log_per_second = 1.0
//! transaction_log_burst = 1
//! transaction_log_counted_per = "account"        # or "token": what one budget covers
//! throttle_codes = [10028]                       # error codes that mean "slow down": retried
//! session_limit_codes = [13040]                  # "session slots full": such a step is skipped
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

use harness_protocol::auth::sign::DEFAULT_SCHEME;
use harness_protocol::file_error::{FileError, line_of};

mod limits;
mod names;
mod property;
mod second_factor;
mod secret;
mod trust;

pub use limits::{CountedPer, RateLimits};

pub use property::target_parse_roundtrip;
pub use second_factor::{FactorCode, SecondFactor};
use second_factor::{SecondFactorFile, second_factor_of};
pub use secret::Secret;
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

fn races_default() -> bool {
    true
}

#[derive(Deserialize)]
#[serde(deny_unknown_fields)]
struct TargetFile {
    name: String,
    base_url: String,
    ws_url: Option<String>,
    direct_access_url: Option<String>,
    signature_scheme: Option<String>,
    #[serde(default)]
    allow_destructive: bool,
    #[serde(default = "races_default")]
    races: bool,
    race_rounds: Option<u32>,
    #[serde(default)]
    accounts: BTreeMap<String, toml::Spanned<AccountFile>>,
    #[serde(default)]
    fixtures: Option<toml::Spanned<FixturesFile>>,
    #[serde(default)]
    limits: RateLimits,
    ca_file: Option<String>,
    #[serde(default)]
    accept_invalid_certs: bool,
    #[serde(default)]
    param_names: names::Names,
    #[serde(default)]
    field_names: names::Names,
}

#[derive(Deserialize)]
#[serde(deny_unknown_fields)]
struct AccountFile {
    client_id: String,
    client_secret: Option<String>,
    client_secret_env: Option<String>,
    second_factor: Option<toml::Spanned<SecondFactorFile>>,
}

#[derive(Deserialize)]
#[serde(deny_unknown_fields)]
struct FixturesFile {
    subaccount_id: Option<u64>,
    member_id: Option<u64>,
    kept_member_id: Option<u64>,
    second_member_id: Option<u64>,
    two_factor_subaccount_id: Option<u64>,
    no_direct_access_member_id: Option<u64>,
    mmp_reset_index: Option<String>,
    mmp_triggered_index: Option<String>,
    mmp_block_rfq_index: Option<String>,
    instrument_name: Option<String>,
    other_instrument_name: Option<String>,
    currency: Option<String>,
    #[serde(default)]
    positions: Vec<String>,
    expired_otm_option: Option<ExpiredOption>,
    #[serde(default)]
    expired_otm_options: Vec<ExpiredOption>,
    direct_access_order: Option<DirectAccessOrder>,
    direct_access_key: Option<String>,
    direct_access_key_env: Option<String>,
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
    /// Reads and checks a target file, and the CA file it names.
    pub fn load(path: &Path) -> Result<Target, FileError> {
        let text = std::fs::read_to_string(path).map_err(|error| {
            FileError::new(path, 0, format!("failed to read target file: {error}"))
        })?;
        let target = Target::parse(path, &text, &|name| std::env::var(name).ok())?;
        target.tls.ca_certificates().map_err(|message| {
            FileError::new(
                path,
                key_line(&text, "ca_file"),
                format!("ca_file: {message}"),
            )
        })?;
        Ok(target)
    }

    /// Parses target-file text; `lookup_env` resolves `*_env` secrets. A relative `ca_file`
    /// is resolved against `path`'s directory; the file is not read (see [`Target::load`]).
    pub fn parse(
        path: &Path,
        text: &str,
        lookup_env: &dyn Fn(&str) -> Option<String>,
    ) -> Result<Target, FileError> {
        let file: TargetFile =
            toml::from_str(text).map_err(|error| FileError::from_toml(path, text, &error))?;
        let url_line = |key: &str| key_line(text, key);
        check_url(
            path,
            url_line("base_url"),
            "base_url",
            &file.base_url,
            &["http://", "https://"],
        )?;
        if let Some(ws_url) = &file.ws_url {
            check_url(
                path,
                url_line("ws_url"),
                "ws_url",
                ws_url,
                &["ws://", "wss://"],
            )?;
        }
        if let Some(direct) = &file.direct_access_url {
            check_url(
                path,
                url_line("direct_access_url"),
                "direct_access_url",
                direct,
                &["http://", "https://"],
            )?;
        }
        if let Some(rounds) = file.race_rounds
            && !(1..=1000).contains(&rounds)
        {
            return Err(FileError::new(
                path,
                url_line("race_rounds"),
                format!("race_rounds is {rounds}; a race runs 1 to 1000 rounds"),
            ));
        }
        let mut accounts = BTreeMap::new();
        for (role, spanned) in file.accounts {
            let line = line_of(text, spanned.span().start);
            let account = spanned.into_inner();
            let secret = resolve_secret(
                path,
                line,
                "client_secret",
                account.client_secret,
                account.client_secret_env,
                lookup_env,
            )?
            .ok_or_else(|| {
                FileError::new(
                    path,
                    line,
                    format!("account \"{role}\" needs client_secret or client_secret_env"),
                )
            })?;
            let second_factor = match account.second_factor {
                None => None,
                Some(spanned) => {
                    let line = line_of(text, spanned.span().start);
                    Some(second_factor_of(
                        path,
                        line,
                        &role,
                        spanned.into_inner(),
                        lookup_env,
                    )?)
                }
            };
            accounts.insert(
                role,
                Account {
                    client_id: account.client_id,
                    client_secret: secret,
                    second_factor,
                },
            );
        }
        let fixtures = match file.fixtures {
            None => Fixtures::default(),
            Some(spanned) => {
                let line = line_of(text, spanned.span().start);
                let fixtures = spanned.into_inner();
                Fixtures {
                    subaccount_id: fixtures.subaccount_id,
                    member_id: fixtures.member_id,
                    kept_member_id: fixtures.kept_member_id,
                    second_member_id: fixtures.second_member_id,
                    two_factor_subaccount_id: fixtures.two_factor_subaccount_id,
                    no_direct_access_member_id: fixtures.no_direct_access_member_id,
                    mmp_reset_index: fixtures.mmp_reset_index,
                    mmp_triggered_index: fixtures.mmp_triggered_index,
                    mmp_block_rfq_index: fixtures.mmp_block_rfq_index,
                    instrument_name: fixtures.instrument_name,
                    other_instrument_name: fixtures.other_instrument_name,
                    currency: fixtures.currency,
                    positions: fixtures.positions,
                    expired_otm_option: fixtures.expired_otm_option,
                    expired_otm_options: fixtures.expired_otm_options,
                    direct_access_order: fixtures.direct_access_order,
                    direct_access_key: resolve_secret(
                        path,
                        line,
                        "direct_access_key",
                        fixtures.direct_access_key,
                        fixtures.direct_access_key_env,
                        lookup_env,
                    )?,
                }
            }
        };
        if !(file.limits.transaction_log_per_second > 0.0
            && file.limits.transaction_log_per_second.is_finite())
        {
            return Err(FileError::new(
                path,
                url_line("transaction_log_per_second"),
                "transaction_log_per_second must be a positive number",
            ));
        }
        if file.ca_file.as_deref().is_some_and(str::is_empty) {
            return Err(FileError::new(
                path,
                url_line("ca_file"),
                "ca_file must name a PEM file",
            ));
        }
        names::check_param_names(path, text, &file.param_names)?;
        names::check_field_names(path, text, &file.field_names)?;
        let tls = TlsTrust {
            ca_file: file
                .ca_file
                .map(|ca_file| path.parent().unwrap_or_else(|| Path::new("")).join(ca_file)),
            accept_invalid_certs: file.accept_invalid_certs,
        };
        Ok(Target {
            name: file.name,
            base_url: file.base_url.trim_end_matches('/').to_owned(),
            ws_url: file.ws_url,
            direct_access_url: file
                .direct_access_url
                .map(|url| url.trim_end_matches('/').to_owned()),
            signature_scheme: file
                .signature_scheme
                .unwrap_or_else(|| DEFAULT_SCHEME.to_owned()),
            allow_destructive: file.allow_destructive,
            races: file.races,
            race_rounds: file.race_rounds,
            accounts,
            fixtures,
            limits: file.limits,
            tls,
            param_names: file.param_names,
            field_names: file.field_names,
        })
    }

    /// The target as a target file. Secrets are written in clear: this is for a server's own
    /// description of itself (`harness serve`), whose credentials are not secret.
    pub fn to_toml(&self) -> String {
        let mut out = String::new();
        let quote = |text: &str| toml::Value::String(text.to_owned()).to_string();
        out.push_str(&format!("name = {}\n", quote(&self.name)));
        out.push_str(&format!("base_url = {}\n", quote(&self.base_url)));
        if let Some(ws_url) = &self.ws_url {
            out.push_str(&format!("ws_url = {}\n", quote(ws_url)));
        }
        if let Some(direct) = &self.direct_access_url {
            out.push_str(&format!("direct_access_url = {}\n", quote(direct)));
        }
        out.push_str(&format!(
            "signature_scheme = {}\n",
            quote(&self.signature_scheme)
        ));
        out.push_str(&format!("allow_destructive = {}\n", self.allow_destructive));
        if !self.races {
            out.push_str("races = false\n");
        }
        if let Some(rounds) = self.race_rounds {
            out.push_str(&format!("race_rounds = {rounds}\n"));
        }
        if let Some(ca_file) = &self.tls.ca_file {
            out.push_str(&format!(
                "ca_file = {}\n",
                quote(&ca_file.to_string_lossy())
            ));
        }
        if self.tls.accept_invalid_certs {
            out.push_str("accept_invalid_certs = true\n");
        }
        for (role, account) in &self.accounts {
            // A role that is not a bare key (a space, a dot, a quote) is written quoted, or
            // it would name another table or none.
            let bare = !role.is_empty()
                && role
                    .chars()
                    .all(|c| c.is_ascii_alphanumeric() || c == '_' || c == '-');
            let role = if bare { role.clone() } else { quote(role) };
            out.push_str(&format!(
                "\n[accounts.{role}]\nclient_id = {}\nclient_secret = {}\n",
                quote(&account.client_id),
                quote(account.client_secret.expose())
            ));
            if let Some(factor) = &account.second_factor {
                let key = match factor.code {
                    FactorCode::Totp(_) => "totp_secret",
                    FactorCode::Fixed(_) => "code",
                };
                out.push_str(&format!(
                    "second_factor = {{ parameter = {}, {key} = {} }}\n",
                    quote(&factor.parameter),
                    quote(factor.code.secret().expose())
                ));
            }
        }
        out.push_str("\n[fixtures]\n");
        let fixtures = toml::to_string(&self.fixtures).unwrap_or_default();
        out.push_str(&fixtures);
        let inline = |option: &ExpiredOption| {
            let expired_at = option
                .expired_at
                .map(|at| format!(", expired_at = {at}"))
                .unwrap_or_default();
            format!(
                "{{ instrument_name = {}, currency = {}{expired_at} }}",
                quote(&option.instrument_name),
                quote(&option.currency)
            )
        };
        if let Some(option) = &self.fixtures.expired_otm_option {
            out.push_str(&format!("expired_otm_option = {}\n", inline(option)));
        }
        if !self.fixtures.expired_otm_options.is_empty() {
            let options: Vec<String> = self
                .fixtures
                .expired_otm_options
                .iter()
                .map(inline)
                .collect();
            out.push_str(&format!("expired_otm_options = [{}]\n", options.join(", ")));
        }
        if let Some(order) = &self.fixtures.direct_access_order {
            let params = toml::Value::try_from(&order.params)
                .map(|params| params.to_string())
                .unwrap_or_else(|_| "{}".to_owned());
            out.push_str(&format!(
                "direct_access_order = {{ method = {}, params = {params} }}\n",
                quote(&order.method)
            ));
        }
        if let Some(key) = &self.fixtures.direct_access_key {
            out.push_str(&format!("direct_access_key = {}\n", quote(key.expose())));
        }
        out.push_str("\n[limits]\n");
        out.push_str(&toml::to_string(&self.limits).unwrap_or_default());
        for (table, tables) in [
            ("param_names", &self.param_names),
            ("field_names", &self.field_names),
        ] {
            for (key, names) in tables {
                out.push_str(&format!("\n[{table}.{}]\n", quote(key)));
                for (name, target_name) in names {
                    out.push_str(&format!("{} = {}\n", quote(name), quote(target_name)));
                }
            }
        }
        out
    }

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

fn check_url(
    path: &Path,
    line: usize,
    key: &str,
    url: &str,
    schemes: &[&str],
) -> Result<(), FileError> {
    // A host must follow the scheme: "http:///" would be trimmed to "http:" on loading.
    let has_host = |scheme: &&str| {
        url.strip_prefix(*scheme)
            .is_some_and(|rest| !rest.is_empty() && !rest.starts_with('/'))
    };
    if schemes.iter().any(has_host) {
        Ok(())
    } else {
        Err(FileError::new(
            path,
            line,
            format!(
                "{key} \"{url}\" must start with {} and a host",
                schemes.join(" or ")
            ),
        ))
    }
}

#[cfg(test)]
mod tests;
