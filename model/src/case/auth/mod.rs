//! How a step authenticates: [`Auth`] has one variant per `auth.mode` of the case file, and
//! each holds only what its mode uses, so a `token` under `client_credentials` or a `sign_uri`
//! under `bearer` cannot be written down in Rust. The case file keeps its one flat `auth`
//! table: `table.rs` holds that table as serde reads and writes it (unknown keys refused),
//! and the conversion from it refuses a key its mode does not use, naming the modes that do.

mod table;

use serde::{Deserialize, Serialize};

/// How a step authenticates: the case file's `auth` table, by its `mode`.
#[derive(Clone, Debug, Default, PartialEq, Eq, Deserialize, Serialize)]
#[serde(try_from = "table::AuthTable", into = "table::AuthTable")]
pub enum Auth {
    /// No credentials (`mode = "none"`, the default).
    #[default]
    None,
    /// A bearer token: header on HTTP, `params.access_token` on WebSocket.
    Bearer(Bearer),
    /// The `public/auth` parameters of `client_credentials` (SPEC.md 5.3).
    ClientCredentials(Login),
    /// The `public/auth` parameters of `client_signature` (SPEC.md 5.5).
    ClientSignature(ClientSignature),
    /// `Authorization: Basic` (SPEC.md 5.6).
    Basic(Basic),
    /// `Authorization: <scheme> id=..,ts=..,nonce=..,sig=..` (SPEC.md 5.6).
    Signed(Signed),
    /// The Direct Access API key as bearer (`fixtures.direct_access_key`, SPEC.md 5.8).
    ApiKey(ApiKey),
}

/// A `bearer` step: whose token, and where it comes from.
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub struct Bearer {
    /// Account role whose token is used (default `main`), or [`Auth::ANY_ACCOUNT`].
    pub account: Option<String>,
    /// A login as the account, or a token the step gives.
    pub token: BearerToken,
    /// Sends the account's second factor (see [`SecondFactorCode`]).
    pub second_factor: Option<SecondFactorCode>,
}

/// Where a `bearer` step's token comes from.
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum BearerToken {
    /// A `client_credentials` login as the step's account, once per execution, account and
    /// scope.
    Login(BearerLogin),
    /// This token (a template, e.g. a captured one) instead of a login (`token`).
    Given(String),
}

impl Default for BearerToken {
    fn default() -> BearerToken {
        BearerToken::Login(BearerLogin::default())
    }
}

/// The login of a `bearer` step that gives no token.
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub struct BearerLogin {
    /// The scope to request.
    pub scope: Option<String>,
    /// A requirement (`account:read`, `block_rfq:read`, ...) the token must lack for the
    /// step to mean anything. SPEC.md does not say what a requested scope grants beyond
    /// what it names, so when the granted `scope` grants this requirement the case is
    /// skipped with that reason instead of expecting a refusal.
    pub lacks: Option<String>,
    /// A requirement (`mainaccount`, ...) the token must carry for the step to mean
    /// anything, since a requested scope cannot ask for it (5.4 does not list it among the
    /// values to request): when the granted scope lacks it, the case is skipped.
    pub grants: Option<String>,
}

/// What a `public/auth` login step says whatever its grant: the `client_credentials` step
/// is this alone, and a `client_signature` step ([`ClientSignature`]) adds its signature.
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub struct Login {
    /// Account role whose credentials are used (default `main`).
    pub account: Option<String>,
    /// Log in (or sign) with the nearest wrong secret.
    pub wrong_secret: bool,
    /// A requirement the granted scope must lack, or the case is skipped (as a `bearer`
    /// login's [`BearerLogin::lacks`]).
    pub lacks: Option<String>,
    /// Parameters the mode fills in that this step leaves out, to send a login missing them.
    pub omit: Vec<LoginParam>,
    /// Sends the account's second factor (see [`SecondFactorCode`]).
    pub second_factor: Option<SecondFactorCode>,
}

/// A `client_signature` login step: a [`Login`] and how it is signed.
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub struct ClientSignature {
    /// Whose credentials, and how the login goes wrong.
    pub login: Login,
    /// The timestamp, nonce and hex of the signature.
    pub signature: Signature,
    /// The data field (a template).
    pub data: Option<String>,
    /// Send no `nonce` and sign with an empty one (excludes [`Signature::nonce`]).
    pub no_nonce: bool,
    /// Drop the LF after the nonce when data is empty.
    pub no_trailing_lf: bool,
}

/// An `Authorization: Basic` step.
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub struct Basic {
    /// Account role whose credentials are used (default `main`).
    pub account: Option<String>,
    /// Send the nearest wrong secret.
    pub wrong_secret: bool,
    /// Send the account's client id with the secret of this role's key instead (another key
    /// of the same user: `main_second`, SPEC.md 5.3 "up to 8 client ids").
    pub secret_of: Option<String>,
    /// Send the secret cut short: a server comparing a prefix accepts it.
    pub short_secret: Option<ShortSecret>,
    /// Sends the account's second factor (see [`SecondFactorCode`]).
    pub second_factor: Option<SecondFactorCode>,
}

/// A `signed` step: the signed `Authorization` header.
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub struct Signed {
    /// Account role whose credentials are used (default `main`).
    pub account: Option<String>,
    /// Sign with the nearest wrong secret.
    pub wrong_secret: bool,
    /// Sends the account's second factor (see [`SecondFactorCode`]).
    pub second_factor: Option<SecondFactorCode>,
    /// The timestamp, nonce and hex of the signature.
    pub signature: Signature,
    /// Sign this URI instead of the one requested.
    pub sign_uri: Option<String>,
    /// Sign this body (a template) instead of the one sent.
    pub sign_body: Option<String>,
    /// Sign the HTTP method in lower case (5.6 asks for it upper-case).
    pub lowercase_method: bool,
    /// Sign with the secret of this role's key while the header names the account's client
    /// id (another key of the same user: `main_second`).
    pub secret_of: Option<String>,
}

/// How a `basic` step cuts its secret short.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Deserialize, Serialize)]
#[serde(rename_all = "snake_case")]
pub enum ShortSecret {
    /// The secret without its last character.
    Truncated,
    /// No secret at all (`client_id:`).
    Empty,
}

impl ShortSecret {
    /// `secret` cut as this says.
    pub fn apply(self, secret: &str) -> String {
        match self {
            ShortSecret::Truncated => {
                let mut characters = secret.chars();
                characters.next_back();
                characters.as_str().to_owned()
            }
            ShortSecret::Empty => String::new(),
        }
    }
}

/// An `api_key` step: the target's Direct Access key, or a wrong one.
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub struct ApiKey {
    /// Send the key with its last character changed.
    pub wrong_secret: bool,
}

/// What the two signature modes (`client_signature`, `signed`) may do to their signature.
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub struct Signature {
    /// Milliseconds added to the current time.
    pub timestamp_offset_ms: i64,
    /// The side of the 60 s window the timestamp must stay on whatever the target's clock
    /// skew (`[limits] clock_skew_ms`): the offset moves toward now by the skew for
    /// `inside`, further back for `outside`.
    pub clock_skew: Option<SkewSide>,
    /// The nonce; `"reuse"` reuses the nonce of the previous signed step.
    pub nonce: Option<String>,
    /// Send the hex upper-case.
    pub uppercase_hex: bool,
    /// The right signature with its last hex digit changed, the nearest miss of a wrong key
    /// (a server comparing only a prefix accepts it).
    pub altered_signature: bool,
}

/// A parameter a login mode fills in, which a step may leave out (`omit`).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum LoginParam {
    /// `grant_type`.
    GrantType,
    /// `client_id`.
    ClientId,
}

impl LoginParam {
    /// The parameter's name.
    pub fn name(self) -> &'static str {
        match self {
            LoginParam::GrantType => "grant_type",
            LoginParam::ClientId => "client_id",
        }
    }

    fn from_name(name: &str) -> Option<LoginParam> {
        [LoginParam::GrantType, LoginParam::ClientId]
            .into_iter()
            .find(|param| param.name() == name)
    }
}

/// Which second-factor code a step sends: the account's second factor (SPEC.md 5.7) in
/// the parameter the target file names (`[accounts.<role>] second_factor`). A target file
/// without it skips the execution with the reason.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Deserialize, Serialize)]
#[serde(rename_all = "snake_case")]
pub enum SecondFactorCode {
    /// The current code of the account's TOTP secret.
    Valid,
    /// A well-formed code that is not the current one.
    Wrong,
}

/// Which side of the signature window a timestamp is meant for.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Deserialize, Serialize)]
#[serde(rename_all = "snake_case")]
pub enum SkewSide {
    /// Just inside: the skew moves the timestamp toward now (never past it).
    Inside,
    /// Just outside: the skew moves the timestamp further into the past.
    Outside,
}

impl SkewSide {
    /// `offset_ms` moved by `skew_ms` to this side of the window.
    pub fn apply(self, offset_ms: i64, skew_ms: u64) -> i64 {
        let skew = i64::try_from(skew_ms).unwrap_or(i64::MAX);
        match self {
            SkewSide::Inside => offset_ms.saturating_add(skew).min(0),
            SkewSide::Outside => offset_ms.saturating_sub(skew),
        }
    }
}

/// The names of the authentication mechanisms (`auth.mode`), one per [`Auth`] variant.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq, Deserialize, Serialize)]
#[serde(rename_all = "snake_case")]
pub enum AuthMode {
    /// [`Auth::None`].
    #[default]
    None,
    /// [`Auth::Bearer`].
    Bearer,
    /// [`Auth::ClientCredentials`].
    ClientCredentials,
    /// [`Auth::ClientSignature`].
    ClientSignature,
    /// [`Auth::Basic`].
    Basic,
    /// [`Auth::Signed`].
    Signed,
    /// [`Auth::ApiKey`].
    ApiKey,
}

impl Auth {
    /// `account = "any"`: the rule holds whatever account the step goes as, so the run puts
    /// the execution on the account whose paced budget has the most room (`main` or
    /// `two_factor`, among those the target file gives; `main` outside a planned run).
    pub const ANY_ACCOUNT: &'static str = "any";
    /// The roles an `any` account is drawn from, in order of preference, for a case that
    /// reads no one's history: every step expects a refusal, or only that the call is
    /// answered ([`crate::case::Case::spread_roles`]).
    pub const SPREAD_ROLES: [&'static str; 3] = ["main", "two_factor", "sub"];
    /// The roles of a case that judges what a page holds: not `sub`, a subaccount whose
    /// history may well be empty, where such a check would pass on nothing; its history is
    /// read by cases of its own.
    pub const READING_ROLES: [&'static str; 2] = ["main", "two_factor"];

    /// A `bearer` login as `account` (default `main`).
    pub fn bearer(account: Option<&str>) -> Auth {
        Auth::Bearer(Bearer {
            account: account.map(str::to_owned),
            ..Bearer::default()
        })
    }

    /// A `bearer` step with a given token (a template).
    pub fn bearer_token(token: impl Into<String>) -> Auth {
        Auth::Bearer(Bearer {
            token: BearerToken::Given(token.into()),
            ..Bearer::default()
        })
    }

    /// The mode's name.
    pub fn mode(&self) -> AuthMode {
        match self {
            Auth::None => AuthMode::None,
            Auth::Bearer(_) => AuthMode::Bearer,
            Auth::ClientCredentials(_) => AuthMode::ClientCredentials,
            Auth::ClientSignature(_) => AuthMode::ClientSignature,
            Auth::Basic(_) => AuthMode::Basic,
            Auth::Signed(_) => AuthMode::Signed,
            Auth::ApiKey(_) => AuthMode::ApiKey,
        }
    }

    /// The account role the step names, for the modes that go as an account.
    pub fn account(&self) -> Option<&str> {
        self.account_slot()?.as_deref()
    }

    /// The account role slot of the modes that go as an account.
    pub fn account_slot(&self) -> Option<&Option<String>> {
        match self {
            Auth::None | Auth::ApiKey(_) => None,
            Auth::Bearer(Bearer { account, .. })
            | Auth::ClientCredentials(Login { account, .. })
            | Auth::ClientSignature(ClientSignature {
                login: Login { account, .. },
                ..
            })
            | Auth::Basic(Basic { account, .. })
            | Auth::Signed(Signed { account, .. }) => Some(account),
        }
    }

    /// The account role slot of the modes that go as an account, to change it.
    pub fn account_slot_mut(&mut self) -> Option<&mut Option<String>> {
        match self {
            Auth::None | Auth::ApiKey(_) => None,
            Auth::Bearer(Bearer { account, .. })
            | Auth::ClientCredentials(Login { account, .. })
            | Auth::ClientSignature(ClientSignature {
                login: Login { account, .. },
                ..
            })
            | Auth::Basic(Basic { account, .. })
            | Auth::Signed(Signed { account, .. }) => Some(account),
        }
    }

    /// The second factor the step sends, if any.
    pub fn second_factor(&self) -> Option<SecondFactorCode> {
        match self {
            Auth::None | Auth::ApiKey(_) => None,
            Auth::Bearer(Bearer { second_factor, .. })
            | Auth::ClientCredentials(Login { second_factor, .. })
            | Auth::ClientSignature(ClientSignature {
                login: Login { second_factor, .. },
                ..
            })
            | Auth::Basic(Basic { second_factor, .. })
            | Auth::Signed(Signed { second_factor, .. }) => *second_factor,
        }
    }

    /// Whether the step sends the nearest wrong secret (or key).
    pub fn wrong_secret(&self) -> bool {
        match self {
            Auth::None | Auth::Bearer(_) => false,
            Auth::ClientCredentials(Login { wrong_secret, .. })
            | Auth::ClientSignature(ClientSignature {
                login: Login { wrong_secret, .. },
                ..
            })
            | Auth::Basic(Basic { wrong_secret, .. })
            | Auth::Signed(Signed { wrong_secret, .. })
            | Auth::ApiKey(ApiKey { wrong_secret }) => *wrong_secret,
        }
    }

    /// The role whose secret the step sends or signs with under its account's client id.
    pub fn secret_of(&self) -> Option<&str> {
        match self {
            Auth::Basic(Basic { secret_of, .. }) | Auth::Signed(Signed { secret_of, .. }) => {
                secret_of.as_deref()
            }
            _ => None,
        }
    }

    /// A login's requirement the granted scope must lack (`lacks`).
    pub fn lacks(&self) -> Option<&str> {
        match self {
            Auth::Bearer(Bearer {
                token: BearerToken::Login(login),
                ..
            }) => login.lacks.as_deref(),
            other => other.login()?.lacks.as_deref(),
        }
    }

    /// The login of the two `public/auth` modes.
    pub fn login(&self) -> Option<&Login> {
        match self {
            Auth::ClientCredentials(login)
            | Auth::ClientSignature(ClientSignature { login, .. }) => Some(login),
            _ => None,
        }
    }

    /// The login of the two `public/auth` modes, to change it.
    pub fn login_mut(&mut self) -> Option<&mut Login> {
        match self {
            Auth::ClientCredentials(login)
            | Auth::ClientSignature(ClientSignature { login, .. }) => Some(login),
            _ => None,
        }
    }

    /// The token a `bearer` step gives instead of logging in.
    pub fn given_token(&self) -> Option<&str> {
        match self {
            Auth::Bearer(Bearer {
                token: BearerToken::Given(token),
                ..
            }) => Some(token),
            _ => None,
        }
    }

    /// The signature of the two signature modes.
    pub fn signature(&self) -> Option<&Signature> {
        match self {
            Auth::ClientSignature(ClientSignature { signature, .. })
            | Auth::Signed(Signed { signature, .. }) => Some(signature),
            _ => None,
        }
    }

    /// The signature of the two signature modes, to change it.
    pub fn signature_mut(&mut self) -> Option<&mut Signature> {
        match self {
            Auth::ClientSignature(ClientSignature { signature, .. })
            | Auth::Signed(Signed { signature, .. }) => Some(signature),
            _ => None,
        }
    }
}
