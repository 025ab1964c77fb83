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
        table.check_signature_keys()?;
        let omit = table.omitted_params()?;
        table.check_bearer_keys()?;
        table.check_account_keys()?;
        Ok(auth_of(table, omit))
    }
}

/// `Err` naming `rule` when a key is `given` and the table's `mode` is none of `modes`.
fn refuse(
    mode: AuthMode,
    given: bool,
    modes: &[AuthMode],
    rule: &'static str,
) -> Result<(), AuthTableError> {
    if given && !modes.contains(&mode) {
        Err(AuthTableError::KeyOfAnotherMode { mode, rule })
    } else {
        Ok(())
    }
}

impl AuthTable {
    /// Refuses the keys of a signature (`client_signature`, `signed`) and of the header
    /// modes (`basic`, `signed`) under another mode, and `no_nonce` beside `nonce`.
    fn check_signature_keys(&self) -> Result<(), AuthTableError> {
        let mode = self.mode;
        let (basic, signature, signed) =
            (AuthMode::Basic, AuthMode::ClientSignature, AuthMode::Signed);
        let signature_given = self.timestamp_offset_ms != 0
            || self.clock_skew.is_some()
            || self.nonce.is_some()
            || self.uppercase_hex
            || self.altered_signature;
        refuse(
            mode,
            signature_given,
            &[signature, signed],
            "timestamp_offset_ms, clock_skew, nonce, uppercase_hex and altered_signature apply to client_signature and signed auth only",
        )?;
        refuse(
            mode,
            self.data.is_some() || self.no_trailing_lf || self.no_nonce,
            &[signature],
            "data, no_trailing_lf and no_nonce apply to client_signature auth only",
        )?;
        if self.no_nonce && self.nonce.is_some() {
            return Err(AuthTableError::NonceAndNoNonce);
        }
        refuse(
            mode,
            self.sign_uri.is_some() || self.sign_body.is_some() || self.lowercase_method,
            &[signed],
            "sign_uri, sign_body and lowercase_method apply to signed auth only",
        )?;
        refuse(
            mode,
            self.secret_of.is_some(),
            &[basic, signed],
            "secret_of applies to basic and signed auth only (a login names another client_id in its params)",
        )?;
        refuse(
            mode,
            self.short_secret.is_some(),
            &[basic],
            "short_secret applies to basic auth only",
        )
    }

    /// The login parameters `omit` names, refused under a mode that is no login.
    fn omitted_params(&self) -> Result<Vec<LoginParam>, AuthTableError> {
        refuse(
            self.mode,
            !self.omit.is_empty(),
            &[AuthMode::ClientCredentials, AuthMode::ClientSignature],
            "omit applies to client_credentials and client_signature auth only",
        )?;
        self.omit
            .iter()
            .map(|name| {
                LoginParam::from_name(name)
                    .ok_or_else(|| AuthTableError::UnknownOmit { name: name.clone() })
            })
            .collect()
    }

    /// Refuses a bearer login's keys under another mode, and beside a given token.
    fn check_bearer_keys(&self) -> Result<(), AuthTableError> {
        let mode = self.mode;
        let bearer = AuthMode::Bearer;
        refuse(
            mode,
            self.token.is_some() || self.scope.is_some(),
            &[bearer],
            "token and scope apply to bearer auth only",
        )?;
        refuse(
            mode,
            self.grants.is_some(),
            &[bearer],
            "grants applies to bearer auth only",
        )?;
        refuse(
            mode,
            self.lacks.is_some(),
            &[
                bearer,
                AuthMode::ClientCredentials,
                AuthMode::ClientSignature,
            ],
            "lacks applies to bearer, client_credentials and client_signature auth only",
        )?;
        if self.token.is_some()
            && (self.scope.is_some() || self.lacks.is_some() || self.grants.is_some())
        {
            return Err(AuthTableError::TokenWithLoginKeys);
        }
        Ok(())
    }

    /// Refuses `wrong_secret` under a mode that sends no secret, and `account` and
    /// `second_factor` under one that goes as no account.
    fn check_account_keys(&self) -> Result<(), AuthTableError> {
        let mode = self.mode;
        let (bearer, basic, api_key) = (AuthMode::Bearer, AuthMode::Basic, AuthMode::ApiKey);
        let (credentials, signature, signed) = (
            AuthMode::ClientCredentials,
            AuthMode::ClientSignature,
            AuthMode::Signed,
        );
        refuse(
            mode,
            self.wrong_secret,
            &[credentials, signature, basic, signed, api_key],
            "wrong_secret applies to client_credentials, client_signature, basic, signed and api_key auth only",
        )?;
        let account_modes = [bearer, credentials, signature, basic, signed];
        refuse(
            mode,
            self.account.is_some(),
            &account_modes,
            "account applies to the modes that go as an account (not none or api_key)",
        )?;
        refuse(
            mode,
            self.second_factor.is_some(),
            &account_modes,
            "second_factor applies to the modes that go as an account (not none or api_key)",
        )
    }
}

/// The checked `table` as its mode's [`Auth`], with the login parameters it omits.
fn auth_of(table: AuthTable, omit: Vec<LoginParam>) -> Auth {
    let signature_plan = Signature {
        timestamp_offset_ms: table.timestamp_offset_ms,
        clock_skew: table.clock_skew,
        nonce: table.nonce,
        uppercase_hex: table.uppercase_hex,
        altered_signature: table.altered_signature,
    };
    let (account, wrong_secret, second_factor) =
        (table.account, table.wrong_secret, table.second_factor);
    match table.mode {
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
    }
}

impl From<Auth> for AuthTable {
    fn from(auth: Auth) -> AuthTable {
        let base = AuthTable {
            mode: auth.mode(),
            ..AuthTable::default()
        };
        match auth {
            Auth::None => base,
            Auth::Bearer(bearer) => bearer_table(bearer, base),
            Auth::ClientCredentials(login) => login_table(login, base),
            Auth::ClientSignature(ClientSignature {
                login,
                signature,
                data,
                no_nonce,
                no_trailing_lf,
            }) => with_signature(
                AuthTable {
                    data,
                    no_nonce,
                    no_trailing_lf,
                    ..login_table(login, base)
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
            Auth::Signed(signed_auth) => with_signature(
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

/// `table` with a bearer step's keys: its account and second factor, and its token or
/// the keys of its login.
fn bearer_table(bearer: Bearer, base: AuthTable) -> AuthTable {
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

/// `base` with a login's keys (`client_credentials`, and the login of `client_signature`).
fn login_table(login: Login, base: AuthTable) -> AuthTable {
    AuthTable {
        account: login.account,
        wrong_secret: login.wrong_secret,
        lacks: login.lacks,
        omit: login
            .omit
            .into_iter()
            .map(|param| param.name().to_owned())
            .collect(),
        second_factor: login.second_factor,
        ..base
    }
}

/// `table` with a signature plan's keys.
fn with_signature(table: AuthTable, signature: Signature) -> AuthTable {
    AuthTable {
        timestamp_offset_ms: signature.timestamp_offset_ms,
        clock_skew: signature.clock_skew,
        nonce: signature.nonce,
        uppercase_hex: signature.uppercase_hex,
        altered_signature: signature.altered_signature,
        ..table
    }
}
