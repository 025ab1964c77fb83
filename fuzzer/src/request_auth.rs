//! How a generated request authenticates: in the words of a case step's `auth`
//! ([`Auth`], which the executor fills in and a finding's case file writes as it is), or,
//! for the two logins a step's `auth` cannot state, as the steps that send them
//! (`steps.rs`): a `client_credentials` login without its secret, and a refresh with the
//! refresh token of a login of the request's own.
//!
//! A replay (the request sent twice with one nonce, the second judged) is a signature mode
//! whose nonce is [`REUSE`], as the second of its two steps says; a replay released
//! together with the original (a race of the two, at most one of which may succeed) has
//! the nonce [`TOGETHER`], which never reaches a step: its case step is a race whose two
//! copies carry one fresh nonce (`steps.rs`).

use serde::{Deserialize, Serialize};

use harness_model::case::{
    ApiKey, Auth, Basic, Bearer, BearerLogin, BearerToken, ClientSignature, Login, Signature,
    Signed,
};

/// The nonce of a signed step that reuses the previous signed step's.
pub(crate) const REUSE: &str = "reuse";

/// The nonce of a replay released together with the original (the fuzzer's own mark).
pub(crate) const TOGETHER: &str = "together";

/// The token of a request with an access token that was never issued.
const NEVER_ISSUED: &str = "never-issued-token";

/// How a request authenticates.
#[derive(Clone, Debug, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum RequestAuth {
    /// As a step states it (`none`, `bearer`, `basic`, `signed`, `client_credentials`,
    /// `client_signature`, `api_key`): the executor adds the secrets, timestamps and nonces.
    Step(Auth),
    /// `public/auth` with `client_credentials` and no `client_secret`: the generator put
    /// the other parameters in, and the step sends no credentials of its own.
    NoSecret {
        /// Account role.
        account: String,
    },
    /// A fresh login's refresh token as `params.refresh_token`.
    RefreshOf {
        /// Account role.
        account: String,
        /// The scope requested at that login.
        scope: Option<String>,
    },
}

impl RequestAuth {
    /// No credentials.
    pub(crate) const NONE: RequestAuth = RequestAuth::Step(Auth::None);

    /// A login token of `account`, with an optional scope.
    pub(crate) fn bearer(account: &str, scope: Option<String>) -> RequestAuth {
        RequestAuth::Step(Auth::Bearer(Bearer {
            account: Some(account.to_owned()),
            token: BearerToken::Login(BearerLogin {
                scope,
                ..BearerLogin::default()
            }),
            second_factor: None,
        }))
    }

    /// An access token that was never issued.
    pub(crate) fn bogus_token() -> RequestAuth {
        RequestAuth::Step(Auth::bearer_token(NEVER_ISSUED))
    }

    /// `Authorization: Basic` of `account`.
    pub(crate) fn basic(account: &str, wrong_secret: bool) -> RequestAuth {
        RequestAuth::Step(Auth::Basic(Basic {
            account: Some(account.to_owned()),
            wrong_secret,
            ..Basic::default()
        }))
    }

    /// The signed header of `account` with `signature`.
    pub(crate) fn signed(account: &str, wrong_secret: bool, signature: Signature) -> RequestAuth {
        RequestAuth::Step(Auth::Signed(Signed {
            account: Some(account.to_owned()),
            wrong_secret,
            signature,
            ..Signed::default()
        }))
    }

    /// A `client_credentials` login of `account`.
    pub(crate) fn client_credentials(account: &str, wrong_secret: bool) -> RequestAuth {
        RequestAuth::Step(Auth::ClientCredentials(Login {
            account: Some(account.to_owned()),
            wrong_secret,
            ..Login::default()
        }))
    }

    /// A `client_signature` login of `account` with `signature`.
    pub(crate) fn client_signature(
        account: &str,
        wrong_secret: bool,
        signature: Signature,
    ) -> RequestAuth {
        RequestAuth::Step(Auth::ClientSignature(ClientSignature {
            login: Login {
                account: Some(account.to_owned()),
                wrong_secret,
                ..Login::default()
            },
            signature,
            ..ClientSignature::default()
        }))
    }

    /// The Direct Access key, or a wrong one.
    pub(crate) fn api_key(right: bool) -> RequestAuth {
        RequestAuth::Step(Auth::ApiKey(ApiKey {
            wrong_secret: !right,
        }))
    }

    /// Whether the request carries a token that was never issued.
    pub(crate) fn is_bogus_token(&self) -> bool {
        matches!(self, RequestAuth::Step(auth) if auth.given_token() == Some(NEVER_ISSUED))
    }

    /// Whether the request is sent twice with one nonce, the second judged.
    pub(crate) fn is_replay(&self) -> bool {
        let (RequestAuth::Step(Auth::Signed(Signed { signature, .. }))
        | RequestAuth::Step(Auth::ClientSignature(ClientSignature { signature, .. }))) = self
        else {
            return false;
        };
        matches!(signature.nonce.as_deref(), Some(REUSE | TOGETHER))
    }

    /// Whether the request is a replay released together with the original.
    pub(crate) fn is_raced_replay(&self) -> bool {
        self.signature()
            .is_some_and(|signature| signature.nonce.as_deref() == Some(TOGETHER))
    }

    /// The request's signature, in a signing mode.
    fn signature(&self) -> Option<&Signature> {
        match self {
            RequestAuth::Step(Auth::Signed(Signed { signature, .. }))
            | RequestAuth::Step(Auth::ClientSignature(ClientSignature { signature, .. })) => {
                Some(signature)
            }
            _ => None,
        }
    }

    /// The same request as a replay released together with the original, when it is a
    /// replay.
    pub(crate) fn raced(mut self) -> RequestAuth {
        if let RequestAuth::Step(Auth::Signed(Signed { signature, .. }))
        | RequestAuth::Step(Auth::ClientSignature(ClientSignature { signature, .. })) = &mut self
            && signature.nonce.as_deref() == Some(REUSE)
        {
            signature.nonce = Some(TOGETHER.to_owned());
        }
        self
    }

    /// Whether the request is a `client_credentials` or `client_signature` login.
    pub(crate) fn is_login(&self) -> bool {
        matches!(
            self,
            RequestAuth::NoSecret { .. }
                | RequestAuth::Step(Auth::ClientCredentials(_) | Auth::ClientSignature(_))
        )
    }

    /// The account role of the request's credentials.
    pub(crate) fn account(&self) -> Option<&str> {
        match self {
            RequestAuth::Step(auth) => auth.account(),
            RequestAuth::NoSecret { account } | RequestAuth::RefreshOf { account, .. } => {
                Some(account)
            }
        }
    }
}

/// A signature `offset_ms` from now, sent twice with one nonce when `replay`.
pub(crate) fn signature(offset_ms: i64, replay: bool) -> Signature {
    Signature {
        timestamp_offset_ms: offset_ms,
        nonce: replay.then(|| REUSE.to_owned()),
        ..Signature::default()
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// A request's credentials survive the corpus and report files (JSON) as they were,
    /// and a replay stays one.
    #[test]
    fn every_kind_of_credentials_round_trips_through_json() {
        let every = [
            RequestAuth::NONE,
            RequestAuth::bearer("main", Some("account:read".to_owned())),
            RequestAuth::bogus_token(),
            RequestAuth::basic("main", true),
            RequestAuth::signed("main", false, signature(-90_000, true)),
            RequestAuth::client_credentials("main", true),
            RequestAuth::client_signature("main", false, signature(0, true)),
            RequestAuth::api_key(false),
            RequestAuth::NoSecret {
                account: "main".to_owned(),
            },
            RequestAuth::RefreshOf {
                account: "main".to_owned(),
                scope: None,
            },
        ];
        for auth in every {
            let text = serde_json::to_string(&auth).unwrap();
            let again: RequestAuth = serde_json::from_str(&text).unwrap();
            assert_eq!(again, auth, "{text}");
            assert_eq!(again.is_replay(), auth.is_replay());
        }
        assert!(RequestAuth::signed("main", false, signature(0, true)).is_replay());
        assert!(RequestAuth::bogus_token().is_bogus_token());
        assert!(!RequestAuth::bearer("main", None).is_bogus_token());
    }
}
