//! The second factor of an account (SPEC.md 5.7 says which methods need it, not how it is
//! sent): `second_factor = { parameter = "...", <source> }` in `[accounts.<role>]`, whose
//! source is exactly one of `totp_secret`, `totp_secret_env` (a base32 TOTP secret: the
//! current code of it) and `code`, `code_env` (a fixed code a test environment accepts).
//! Every source is a secret: held in [`Secret`], never printed, redacted from reports.
//! A TOTP secret no code can be derived from is a [`SecondFactorError`].

use std::path::Path;

use serde::Deserialize;

use harness_protocol::auth::second_factor::{self, SecondFactorError};
use harness_protocol::file_error::FileError;

use super::{Secret, resolve_secret};

/// The second factor of an account with 2FA enabled (SPEC.md 5.7 names no parameter for it):
/// the parameter that carries it and where its codes come from.
#[derive(Clone, Debug, PartialEq)]
pub struct SecondFactor {
    /// The request parameter carrying the code.
    pub parameter: String,
    /// Where the code comes from.
    pub code: FactorCode,
}

/// Where a second factor's code comes from. Both are secrets: never printed, redacted.
#[derive(Clone, Debug, PartialEq)]
pub enum FactorCode {
    /// A base32 TOTP secret (RFC 6238, SHA-1, 30 s, 6 digits): the current code of it.
    Totp(Secret),
    /// A fixed code the target accepts (a test environment's), always the same.
    Fixed(Secret),
}

impl FactorCode {
    /// The secret value behind the codes (the TOTP secret, or the fixed code).
    pub fn secret(&self) -> &Secret {
        match self {
            FactorCode::Totp(secret) | FactorCode::Fixed(secret) => secret,
        }
    }

    /// The code valid at `unix_s`; the error says why the TOTP secret is unusable.
    pub fn valid(&self, unix_s: u64) -> Result<String, SecondFactorError> {
        match self {
            FactorCode::Totp(secret) => second_factor::totp_code(secret.expose(), unix_s),
            FactorCode::Fixed(code) => Ok(code.expose().to_owned()),
        }
    }

    /// A well-formed code that is not valid at `unix_s`; the error says why the TOTP
    /// secret is unusable.
    pub fn wrong(&self, unix_s: u64) -> Result<String, SecondFactorError> {
        match self {
            FactorCode::Totp(secret) => second_factor::wrong_totp_code(secret.expose(), unix_s),
            FactorCode::Fixed(code) => Ok(second_factor::wrong_fixed_code(code.expose())),
        }
    }
}

#[derive(Deserialize)]
#[serde(deny_unknown_fields)]
pub(super) struct SecondFactorFile {
    parameter: String,
    totp_secret: Option<String>,
    totp_secret_env: Option<String>,
    code: Option<String>,
    code_env: Option<String>,
}

impl SecondFactorFile {
    /// The keys of the four sources this factor gives.
    fn sources_given(&self) -> Vec<&'static str> {
        [
            ("totp_secret", self.totp_secret.is_some()),
            ("totp_secret_env", self.totp_secret_env.is_some()),
            ("code", self.code.is_some()),
            ("code_env", self.code_env.is_some()),
        ]
        .into_iter()
        .filter_map(|(key, given)| given.then_some(key))
        .collect()
    }
}

/// The second factor of `[accounts.<role>]`: exactly one of `totp_secret`, `totp_secret_env`,
/// `code`, `code_env`; a TOTP secret must be base32, a code not empty.
pub(super) fn second_factor_of(
    path: &Path,
    line: usize,
    role: &str,
    factor: SecondFactorFile,
    lookup_env: &dyn Fn(&str) -> Option<String>,
) -> Result<SecondFactor, FileError> {
    let error = |message: String| FileError::new(path, line, message);
    let what = format!("accounts.{role}.second_factor");
    let given = factor.sources_given();
    if given.len() != 1 {
        return Err(error(if given.is_empty() {
            format!(
                "{what} needs one of totp_secret, totp_secret_env (a TOTP secret), code, code_env (a fixed code)"
            )
        } else {
            format!(
                "{what} gives {}: give exactly one of totp_secret, totp_secret_env, code, code_env",
                given.join(" and ")
            )
        }));
    }
    let code = if factor.code.is_some() || factor.code_env.is_some() {
        let code = resolve_secret(
            path,
            line,
            "second_factor.code",
            factor.code,
            factor.code_env,
            lookup_env,
        )?
        .filter(|code| !code.expose().trim().is_empty())
        .ok_or_else(|| error(format!("{what}: the code is empty")))?;
        FactorCode::Fixed(code)
    } else {
        let secret = resolve_secret(
            path,
            line,
            "second_factor.totp_secret",
            factor.totp_secret,
            factor.totp_secret_env,
            lookup_env,
        )?
        .ok_or_else(|| error(format!("{what} needs totp_secret or totp_secret_env")))?;
        if let Err(message) = second_factor::totp_code(secret.expose(), 0) {
            return Err(error(format!("{what}: {message}")));
        }
        FactorCode::Totp(secret)
    };
    Ok(SecondFactor {
        parameter: factor.parameter,
        code,
    })
}
