//! Reading a target file: the file's tables as serde reads them (unknown keys refused),
//! checked (URLs, race rounds, the paced rate, `ca_file`, the names SPEC.md does not show)
//! and converted to a [`Target`], secrets resolved from the file or the environment.

use std::collections::BTreeMap;
use std::path::Path;

use serde::Deserialize;

use harness_protocol::auth::sign::DEFAULT_SCHEME;
use harness_protocol::file_error::{FileError, line_of};

use super::second_factor::{SecondFactorFile, second_factor_of};
use super::{
    Account, DirectAccessOrder, ExpiredOption, Fixtures, OrderRead, RateLimits,
    SubscriptionRequest, Target, TlsTrust, key_line, names, resolve_secret, subscription,
};

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
    resting_close_price: Option<f64>,
    order_read: Option<OrderRead>,
    direct_access_order_read: Option<OrderRead>,
    direct_access_key: Option<String>,
    direct_access_key_env: Option<String>,
    subscription: Option<SubscriptionRequest>,
    raw_feed_subscription: Option<SubscriptionRequest>,
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
        check_urls(path, text, &file)?;
        let accounts = accounts_of(path, text, file.accounts, lookup_env)?;
        let fixtures = match file.fixtures {
            None => Fixtures::default(),
            Some(spanned) => fixtures_of(path, text, spanned, lookup_env)?,
        };
        check_rate_and_ca_file(path, text, &file.limits, file.ca_file.as_deref())?;
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
}

/// Checks the file's URLs (each with its schemes and a host) and its `race_rounds`.
fn check_urls(path: &Path, text: &str, file: &TargetFile) -> Result<(), FileError> {
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
    Ok(())
}

/// The `[accounts.<role>]` tables as accounts by role, their secrets resolved.
fn accounts_of(
    path: &Path,
    text: &str,
    files: BTreeMap<String, toml::Spanned<AccountFile>>,
    lookup_env: &dyn Fn(&str) -> Option<String>,
) -> Result<BTreeMap<String, Account>, FileError> {
    let mut accounts = BTreeMap::new();
    for (role, spanned) in files {
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
    Ok(accounts)
}

/// The `[fixtures]` table as [`Fixtures`], the Direct Access key resolved.
fn fixtures_of(
    path: &Path,
    text: &str,
    spanned: toml::Spanned<FixturesFile>,
    lookup_env: &dyn Fn(&str) -> Option<String>,
) -> Result<Fixtures, FileError> {
    let line = line_of(text, spanned.span().start);
    let fixtures = spanned.into_inner();
    subscription::check(path, text, "subscription", fixtures.subscription.as_ref())?;
    subscription::check(
        path,
        text,
        "raw_feed_subscription",
        fixtures.raw_feed_subscription.as_ref(),
    )?;
    super::order_read::check(
        path,
        text,
        &fixtures.order_read,
        &fixtures.direct_access_order_read,
    )?;
    if let Some(price) = fixtures.resting_close_price
        && !(price > 0.0 && price.is_finite())
    {
        return Err(FileError::new(
            path,
            key_line(text, "resting_close_price"),
            "resting_close_price must be a positive number",
        ));
    }
    Ok(Fixtures {
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
        resting_close_price: fixtures.resting_close_price,
        order_read: fixtures.order_read,
        direct_access_order_read: fixtures.direct_access_order_read,
        direct_access_key: resolve_secret(
            path,
            line,
            "direct_access_key",
            fixtures.direct_access_key,
            fixtures.direct_access_key_env,
            lookup_env,
        )?,
        subscription: fixtures.subscription,
        raw_feed_subscription: fixtures.raw_feed_subscription,
    })
}

/// Checks that the paced rate is a positive number and that `ca_file`, when given, names
/// something.
fn check_rate_and_ca_file(
    path: &Path,
    text: &str,
    limits: &RateLimits,
    ca_file: Option<&str>,
) -> Result<(), FileError> {
    if !(limits.transaction_log_per_second > 0.0 && limits.transaction_log_per_second.is_finite()) {
        return Err(FileError::new(
            path,
            key_line(text, "transaction_log_per_second"),
            "transaction_log_per_second must be a positive number",
        ));
    }
    if ca_file.is_some_and(str::is_empty) {
        return Err(FileError::new(
            path,
            key_line(text, "ca_file"),
            "ca_file must name a PEM file",
        ));
    }
    Ok(())
}

/// Checks that `url` starts with one of `schemes` and a host.
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
