//! The `auth` table of a case file as serde reads and writes it: one flat table of every
//! mode's keys (unknown ones refused), and its conversion to and from [`Auth`], which refuses
//! a key the table's `mode` does not use and names the modes that do ([`AuthTableError`]).

use serde::{Deserialize, Serialize};

use super::{
    ApiKey, Auth, AuthMode, Basic, Bearer, BearerLogin, BearerToken, ClientSignature, Login,
    LoginParam, SecondFactorCode, ShortSecret, Signature, Signed, SkewSide,
};

/// The `auth` table of a case file as it is written: every key of every mode, each checked
/// against `mode` when it becomes an [`Auth`].
#[derive(Clone, Debug, Default, PartialEq, Deserialize, Serialize)]
#[serde(deny_unknown_fields)]
pub(crate) struct AuthTable {
    #[serde(default, skip_serializing_if = "crate::case::write::is_default")]
    mode: AuthMode,
    #[serde(skip_serializing_if = "Option::is_none")]
    account: Option<String>,
    #[serde(skip_serializing_if = "Option::is_none")]
    token: Option<String>,
    #[serde(skip_serializing_if = "Option::is_none")]
    scope: Option<String>,
    #[serde(skip_serializing_if = "Option::is_none")]
    lacks: Option<String>,
    #[serde(skip_serializing_if = "Option::is_none")]
    grants: Option<String>,
    #[serde(default, skip_serializing_if = "crate::case::write::is_false")]
    wrong_secret: bool,
    #[serde(default, skip_serializing_if = "crate::case::write::is_zero")]
    timestamp_offset_ms: i64,
    #[serde(skip_serializing_if = "Option::is_none")]
    clock_skew: Option<SkewSide>,
    #[serde(skip_serializing_if = "Option::is_none")]
    nonce: Option<String>,
    #[serde(skip_serializing_if = "Option::is_none")]
    data: Option<String>,
    #[serde(default, skip_serializing_if = "crate::case::write::is_false")]
    no_nonce: bool,
    #[serde(default, skip_serializing_if = "crate::case::write::is_false")]
    no_trailing_lf: bool,
    #[serde(default, skip_serializing_if = "crate::case::write::is_false")]
    uppercase_hex: bool,
    #[serde(default, skip_serializing_if = "crate::case::write::is_false")]
    altered_signature: bool,
    #[serde(skip_serializing_if = "Option::is_none")]
    sign_uri: Option<String>,
    #[serde(skip_serializing_if = "Option::is_none")]
    sign_body: Option<String>,
    #[serde(default, skip_serializing_if = "crate::case::write::is_false")]
    lowercase_method: bool,
    #[serde(skip_serializing_if = "Option::is_none")]
    secret_of: Option<String>,
    #[serde(skip_serializing_if = "Option::is_none")]
    short_secret: Option<ShortSecret>,
    #[serde(skip_serializing_if = "Option::is_none")]
    second_factor: Option<SecondFactorCode>,
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    omit: Vec<String>,
}

/// Why an `auth` table makes no [`Auth`].
#[derive(Clone, Debug, PartialEq, Eq, thiserror::Error)]
pub(crate) enum AuthTableError {
    /// A key the table's mode does not use; the rule names the modes that do.
    #[error("{rule}")]
    KeyOfAnotherMode {
        /// The table's mode.
        mode: AuthMode,
        /// Which modes the key applies to.
        rule: &'static str,
    },
    /// `no_nonce` beside `nonce`.
    #[error("no_nonce and nonce exclude each other")]
    NonceAndNoNonce,
    /// `omit` names a parameter the modes do not fill in.
    #[error("omit names \"{name}\"; the auth modes fill in only grant_type and client_id")]
    UnknownOmit {
        /// The name in `omit`.
        name: String,
    },
    /// A bearer step with a given token and a key of a bearer login.
    #[error("a bearer step with a token logs in with no scope, lacks or grants")]
    TokenWithLoginKeys,
}

impl TryFrom<AuthTable> for Auth {
    type Error = AuthTableError;

    fn try_from(table: AuthTable) -> Result<Auth, AuthTableError> {
        let mode = table.mode;
        let refuse = |given: bool, modes: &[AuthMode], rule: &'static str| {
            if given && !modes.contains(&mode) {
                Err(AuthTableError::KeyOfAnotherMode { mode, rule })
            } else {
                Ok(())
            }
        };
        let (bearer, basic, api_key) = (AuthMode::Bearer, AuthMode::Basic, AuthMode::ApiKey);
        let (credentials, signature, signed) = (
            AuthMode::ClientCredentials,
            AuthMode::ClientSignature,
            AuthMode::Signed,
        );
        let signature_given = table.timestamp_offset_ms != 0
            || table.clock_skew.is_some()
            || table.nonce.is_some()
            || table.uppercase_hex
            || table.altered_signature;
        refuse(
            signature_given,
            &[signature, signed],
            "timestamp_offset_ms, clock_skew, nonce, uppercase_hex and altered_signature apply to client_signature and signed auth only",
        )?;
        refuse(
            table.data.is_some() || table.no_trailing_lf || table.no_nonce,
            &[signature],
            "data, no_trailing_lf and no_nonce apply to client_signature auth only",
        )?;
        if table.no_nonce && table.nonce.is_some() {
            return Err(AuthTableError::NonceAndNoNonce);
        }
        refuse(
            table.sign_uri.is_some() || table.sign_body.is_some() || table.lowercase_method,
            &[signed],
            "sign_uri, sign_body and lowercase_method apply to signed auth only",
        )?;
        refuse(
            table.secret_of.is_some(),
            &[basic, signed],
            "secret_of applies to basic and signed auth only (a login names another client_id in its params)",
        )?;
        refuse(
            table.short_secret.is_some(),
            &[basic],
            "short_secret applies to basic auth only",
        )?;
        refuse(
            !table.omit.is_empty(),
            &[credentials, signature],
            "omit applies to client_credentials and client_signature auth only",
        )?;
        let omit = table
            .omit
            .iter()
            .map(|name| {
                LoginParam::from_name(name)
                    .ok_or_else(|| AuthTableError::UnknownOmit { name: name.clone() })
            })
            .collect::<Result<Vec<_>, _>>()?;
        refuse(
            table.token.is_some() || table.scope.is_some(),
            &[bearer],
            "token and scope apply to bearer auth only",
        )?;
        refuse(
            table.grants.is_some(),
            &[bearer],
            "grants applies to bearer auth only",
        )?;
        refuse(
            table.lacks.is_some(),
            &[bearer, credentials, signature],
            "lacks applies to bearer, client_credentials and client_signature auth only",
        )?;
        if table.token.is_some()
            && (table.scope.is_some() || table.lacks.is_some() || table.grants.is_some())
        {
            return Err(AuthTableError::TokenWithLoginKeys);
        }
        refuse(
            table.wrong_secret,
            &[credentials, signature, basic, signed, api_key],
            "wrong_secret applies to client_credentials, client_signature, basic, signed and api_key auth only",
        )?;
        let account_modes = [bearer, credentials, signature, basic, signed];
        refuse(
            table.account.is_some(),
            &account_modes,
            "account applies to the modes that go as an account (not none or api_key)",
        )?;
        refuse(
            table.second_factor.is_some(),
            &account_modes,
            "second_factor applies to the modes that go as an account (not none or api_key)",
        )?;
        let signature_plan = Signature {
            timestamp_offset_ms: table.timestamp_offset_ms,
            clock_skew: table.clock_skew,
            nonce: table.nonce,
            uppercase_hex: table.uppercase_hex,
            altered_signature: table.altered_signature,
        };
        let (account, wrong_secret, second_factor) =
            (table.account, table.wrong_secret, table.second_factor);
        Ok(match mode {
            AuthMode::None => Auth::None,
            AuthMode::Bearer => Auth::Bearer(Bearer {
                account,
                token: match table.token {
                    Some(token) => BearerToken::Given(token),
                    None => BearerToken::Login(BearerLogin {
                        scope: table.scope,
                        lacks: table.lacks,
                        grants: table.grants,
                    }),
                },
                second_factor,
            }),
            AuthMode::ClientCredentials => Auth::ClientCredentials(Login {
                account,
                wrong_secret,
                lacks: table.lacks,
                omit,
                second_factor,
            }),
            AuthMode::ClientSignature => Auth::ClientSignature(ClientSignature {
                login: Login {
                    account,
                    wrong_secret,
                    lacks: table.lacks,
                    omit,
                    second_factor,
                },
                data: table.data,
                no_nonce: table.no_nonce,
                no_trailing_lf: table.no_trailing_lf,
                signature: signature_plan,
            }),
            AuthMode::Basic => Auth::Basic(Basic {
                account,
                wrong_secret,
                secret_of: table.secret_of,
                short_secret: table.short_secret,
                second_factor,
            }),
            AuthMode::Signed => Auth::Signed(Signed {
                account,
                wrong_secret,
                second_factor,
                signature: signature_plan,
                sign_uri: table.sign_uri,
                sign_body: table.sign_body,
                lowercase_method: table.lowercase_method,
                secret_of: table.secret_of,
            }),
            AuthMode::ApiKey => Auth::ApiKey(ApiKey { wrong_secret }),
        })
    }
}

impl From<Auth> for AuthTable {
    fn from(auth: Auth) -> AuthTable {
        let mode = auth.mode();
        let omitted = |omit: Vec<LoginParam>| {
            omit.into_iter()
                .map(|param| param.name().to_owned())
                .collect()
        };
        let signed = |table: AuthTable, signature: Signature| AuthTable {
            timestamp_offset_ms: signature.timestamp_offset_ms,
            clock_skew: signature.clock_skew,
            nonce: signature.nonce,
            uppercase_hex: signature.uppercase_hex,
            altered_signature: signature.altered_signature,
            ..table
        };
        let base = AuthTable {
            mode,
            ..AuthTable::default()
        };
        match auth {
            Auth::None => base,
            Auth::Bearer(bearer) => {
                let table = AuthTable {
                    account: bearer.account,
                    second_factor: bearer.second_factor,
                    ..base
                };
                match bearer.token {
                    BearerToken::Given(token) => AuthTable {
                        token: Some(token),
                        ..table
                    },
                    BearerToken::Login(login) => AuthTable {
                        scope: login.scope,
                        lacks: login.lacks,
                        grants: login.grants,
                        ..table
                    },
                }
            }
            Auth::ClientCredentials(login) => AuthTable {
                account: login.account,
                wrong_secret: login.wrong_secret,
                lacks: login.lacks,
                omit: omitted(login.omit),
                second_factor: login.second_factor,
                ..base
            },
            Auth::ClientSignature(ClientSignature {
                login,
                signature,
                data,
                no_nonce,
                no_trailing_lf,
            }) => signed(
                AuthTable {
                    account: login.account,
                    wrong_secret: login.wrong_secret,
                    lacks: login.lacks,
                    omit: omitted(login.omit),
                    second_factor: login.second_factor,
                    data,
                    no_nonce,
                    no_trailing_lf,
                    ..base
                },
                signature,
            ),
            Auth::Basic(basic) => AuthTable {
                account: basic.account,
                wrong_secret: basic.wrong_secret,
                secret_of: basic.secret_of,
                short_secret: basic.short_secret,
                second_factor: basic.second_factor,
                ..base
            },
            Auth::Signed(signed_auth) => signed(
                AuthTable {
                    account: signed_auth.account,
                    wrong_secret: signed_auth.wrong_secret,
                    second_factor: signed_auth.second_factor,
                    sign_uri: signed_auth.sign_uri,
                    sign_body: signed_auth.sign_body,
                    lowercase_method: signed_auth.lowercase_method,
                    secret_of: signed_auth.secret_of,
                    ..base
                },
                signed_auth.signature,
            ),
            Auth::ApiKey(key) => AuthTable {
                wrong_secret: key.wrong_secret,
                ..base
            },
        }
    }
}
