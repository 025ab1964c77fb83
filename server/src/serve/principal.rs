//! Who is calling: the principal a private request runs as, from an access token
//! (WebSocket `params.access_token`, a remembered session token, or HTTP `Bearer`), or
//! directly from an API key over HTTP (`Basic` or the signed header of SPEC.md 5.6).
//!
//! Bad credentials (wrong secret, wrong signature, stale timestamp, reused nonce) are
//! 13004 `invalid_credentials`; a missing, unknown, expired or revoked token is 13009
//! `unauthorized`. Both signature schemes share the server's one replay cache, so a nonce
//! is single use across them.

use harness_protocol::auth::nonce::NonceVerdict;
use harness_protocol::auth::scope::Scope;
use harness_protocol::auth::sign::{self, SignedHeader};
use harness_protocol::jsonrpc::ErrorObject;

use super::ServerState;
use super::fault::{Fault, race_pause};
use super::state::{User, lock};
use super::tokens::Ending;

/// How far a signature timestamp may stray under the `*-window-wide` faults: 10 minutes.
const WIDE_WINDOW_MS: u64 = 600_000;

/// How old a signature timestamp may be under the `*-window-narrow` faults: 10 s.
const NARROW_WINDOW_MS: u64 = 10_000;

/// How old a signature timestamp may be under the `*-window-61s` faults: one second more
/// than SPEC.md's 60 s, which only a timestamp just past the window shows.
const LATE_WINDOW_MS: u64 = 61_000;

/// The signature window a server keeps: SPEC.md's 60 s, or what a `*-window-wide`,
/// `*-window-narrow` or `*-window-61s` fault makes of it.
pub(crate) fn signature_window_ms(wide: bool, narrow: bool, late: bool) -> u64 {
    if wide {
        WIDE_WINDOW_MS
    } else if late {
        LATE_WINDOW_MS
    } else if narrow {
        NARROW_WINDOW_MS
    } else {
        harness_protocol::spec::SIGNATURE_WINDOW_MS
    }
}

/// How a request's caller was authenticated: the path of SPEC.md 5.2 or 5.6 it came by.
/// A rule owed whatever the path (the second factor of 5.7) is broken on one path alone by
/// the faults that ask for it.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(crate) enum AuthPath {
    /// `Authorization: Bearer` over HTTP.
    HttpBearer,
    /// `params.access_token` over WebSocket.
    WsToken,
    /// The session token a WebSocket connection remembers.
    WsRemembered,
    /// `Authorization: Basic`.
    Basic,
    /// The signed `Authorization` header.
    Signed,
    /// No credentials (what the `private-without-token` fault lets through).
    Anonymous,
}

/// The identity and rights a request runs with.
#[derive(Clone, Debug)]
pub(crate) struct Principal {
    pub(crate) user_id: u64,
    pub(crate) scope: Scope,
    /// How the caller was authenticated.
    pub(crate) path: AuthPath,
    /// The access token presented, when the request used one.
    pub(crate) access_token: Option<String>,
    /// Whose rate-limit bucket the request draws from.
    pub(crate) rate_key: String,
}

/// What HTTP authentication needs to know about a request.
#[derive(Clone, Copy, Debug)]
pub(crate) struct HttpAuth<'a> {
    /// The `Authorization` header, if any.
    pub(crate) authorization: Option<&'a str>,
    /// The HTTP method, as received.
    pub(crate) method: &'a str,
    /// Path and query exactly as received: the signed request data uses it verbatim.
    pub(crate) uri: &'a str,
    /// The path alone, which only the `signed-uri-without-query` fault signs.
    pub(crate) path: &'a str,
    /// The raw body bytes.
    pub(crate) body: &'a [u8],
    /// The client's address: which TCP connection the request came on.
    pub(crate) peer: Option<std::net::SocketAddr>,
}

impl ServerState {
    /// The principal of a live access token (under the `token-outlives-expires-in` fault,
    /// of an expired one too).
    pub(crate) fn principal_from_token(&self, token: &str) -> Result<Principal, ErrorObject> {
        let outlives = self.fault(Fault::TokenOutlivesExpiresIn);
        self.principal_from_token_at(token, if outlives { 0 } else { self.now_ms() })
    }

    /// The principal of an access token that was live at `now_ms`.
    pub(crate) fn principal_from_token_at(
        &self,
        token: &str,
        now_ms: u64,
    ) -> Result<Principal, ErrorObject> {
        let tokens = lock(&self.tokens);
        let record = tokens
            .access(token, now_ms)
            .ok_or_else(|| ErrorObject::unauthorized("invalid, expired or revoked access token"))?;
        Ok(Principal {
            user_id: record.user_id,
            scope: record.scope.clone(),
            path: AuthPath::HttpBearer,
            access_token: Some(token.to_owned()),
            rate_key: format!("token:{token}"),
        })
    }

    /// The principal of a session token a WebSocket connection remembers whose disable or
    /// logout ended it: what only the `disable-keeps-ws-remembered` and
    /// `logout-keeps-ws-remembered` faults honour; `None` on the correct server.
    pub(crate) fn principal_remembered_after_end(&self, token: &str) -> Option<Principal> {
        let endings = [
            (Fault::DisableKeepsWsRemembered, Ending::Disable),
            (Fault::LogoutKeepsWsRemembered, Ending::Logout),
        ];
        let now_ms = self.now_ms();
        let tokens = lock(&self.tokens);
        let record = endings
            .iter()
            .filter(|(fault, _)| self.fault(*fault))
            .find_map(|(_, ending)| tokens.ended_by(token, *ending, now_ms))?;
        Some(Principal {
            user_id: record.user_id,
            scope: record.scope.clone(),
            path: AuthPath::WsRemembered,
            access_token: Some(token.to_owned()),
            rate_key: format!("token:{token}"),
        })
    }

    /// The principal of an HTTP request's `Authorization` header; `None` without one.
    pub(crate) fn principal_from_header(
        &self,
        http: &HttpAuth<'_>,
    ) -> Result<Option<Principal>, ErrorObject> {
        let Some(value) = http.authorization else {
            return Ok(None);
        };
        let scheme = value.trim().split(' ').next().unwrap_or_default();
        if scheme.eq_ignore_ascii_case("bearer") {
            if self.fault(Fault::BearerHeaderIgnored) {
                return Err(ErrorObject::unauthorized("bearer tokens are not accepted"));
            }
            let token = value.trim()[scheme.len()..].trim();
            if self.fault(Fault::BearerRefusesForked) && lock(&self.tokens).is_forked(token) {
                return Err(ErrorObject::unauthorized("forked tokens are not accepted"));
            }
            return self.principal_from_token(token).map(Some);
        }
        if scheme.eq_ignore_ascii_case("basic") {
            return self.principal_from_basic(value).map(Some);
        }
        if scheme.eq_ignore_ascii_case(&self.signature_scheme)
            || (self.knobs().any_signature_scheme && value.contains("sig="))
        {
            return self.principal_from_signed(value, scheme, http).map(Some);
        }
        Err(ErrorObject::unauthorized(
            "unsupported authorization scheme",
        ))
    }

    /// The main account with its full rights: what the `private-without-token` fault
    /// runs a credential-less request as.
    pub(crate) fn main_principal(&self) -> Option<Principal> {
        self.user(super::state::MAIN_ID)
            .map(|user| key_principal(user, "anonymous", AuthPath::Anonymous))
    }

    /// Whether a presented client secret is the account's, compared in constant time; under
    /// the `secret-last-char-ignored` fault, a comparison off by one that leaves out the last
    /// character.
    pub(crate) fn secret_accepted(&self, expected: &str, presented: &str) -> bool {
        if self.fault(Fault::SecretLastCharIgnored)
            && expected.len() == presented.len()
            && let Some((cut, _)) = expected.char_indices().last()
            && presented.is_char_boundary(cut)
        {
            return sign::signatures_match(&expected[..cut], &presented[..cut]);
        }
        sign::signatures_match(expected, presented)
    }

    /// Whether a presented signature is the expected one; under the
    /// `signature-prefix-compared` fault, only their first 32 hex digits are compared.
    pub(crate) fn signature_accepted(&self, expected: &str, presented: &str) -> bool {
        const PREFIX: usize = 32;
        if self.fault(Fault::SignaturePrefixCompared)
            && expected.len() == presented.len()
            && expected.len() > PREFIX
            && expected.is_char_boundary(PREFIX)
            && presented.is_char_boundary(PREFIX)
        {
            return sign::signatures_match(&expected[..PREFIX], &presented[..PREFIX]);
        }
        sign::signatures_match(expected, presented)
    }

    fn principal_from_basic(&self, value: &str) -> Result<Principal, ErrorObject> {
        let (client_id, client_secret) = sign::parse_basic(value)
            .ok_or_else(|| ErrorObject::invalid_credentials("malformed basic authorization"))?;
        let user = self
            .user_by_client(&client_id)
            .ok_or_else(|| ErrorObject::invalid_credentials("unknown client id"))?;
        let expected = user.client_secret.expose();
        // `basic-secret-prefix`: a secret the right one starts with (empty, truncated).
        let secret_ok = self.secret_accepted(expected, &client_secret)
            || (self.fault(Fault::BasicSecretPrefix) && expected.starts_with(&client_secret))
            || (self.fault(Fault::BasicAnyKeyOfUser)
                && self
                    .other_keys(user)
                    .any(|key| self.secret_accepted(key.client_secret.expose(), &client_secret)));
        if !secret_ok && !self.fault(Fault::BasicAnySecret) {
            return Err(ErrorObject::invalid_credentials("wrong client secret"));
        }
        Ok(key_principal(user, &client_id, AuthPath::Basic))
    }

    fn principal_from_signed(
        &self,
        value: &str,
        scheme: &str,
        http: &HttpAuth<'_>,
    ) -> Result<Principal, ErrorObject> {
        let header = SignedHeader::parse(value, scheme)
            .map_err(|error| ErrorObject::invalid_credentials(&error.to_string()))?;
        let user = self
            .user_by_client(&header.client_id)
            .ok_or_else(|| ErrorObject::invalid_credentials("unknown client id"))?;
        let window = signature_window_ms(
            self.fault(Fault::SignedWindowWide),
            self.fault(Fault::SignedWindowNarrow),
            self.fault(Fault::SignedWindow61s),
        );
        self.check_timestamp(header.timestamp, window)?;
        let decoded;
        let uri = if self.fault(Fault::SignedUriWithoutQuery) {
            http.path
        } else if self.fault(Fault::SignedDecodedQuery) {
            decoded = decoded_uri(http.uri);
            &decoded
        } else {
            http.uri
        };
        let body = if self.fault(Fault::SignedBodyUnsigned) {
            &[][..]
        } else {
            http.body
        };
        let fields = sign::HttpSignedFields {
            timestamp: header.timestamp,
            nonce: &header.nonce,
            method: http.method,
            uri,
            body,
        };
        let invalid = |error: sign::SignError| ErrorObject::invalid_credentials(&error.to_string());
        let matches = |secret: &str| -> Result<bool, ErrorObject> {
            let expected = sign::http_signature(secret, &fields).map_err(invalid)?;
            // `signed-method-any-case`: the method signed in lower case passes too.
            let lower = self.fault(Fault::SignedMethodAnyCase)
                && self.signature_accepted(
                    &sign::http_signature_lowercase_method(secret, &fields).map_err(invalid)?,
                    &header.signature,
                );
            Ok(lower || self.signature_accepted(&expected, &header.signature))
        };
        let mut accepted = matches(user.client_secret.expose())?;
        if !accepted && self.fault(Fault::SignedAnyKeyOfUser) {
            for key in self.other_keys(user) {
                accepted = accepted || matches(key.client_secret.expose())?;
            }
        }
        if !self.fault(Fault::SignedUnchecked) && !accepted {
            return Err(ErrorObject::invalid_credentials("signature does not match"));
        }
        if !self.fault(Fault::SignedNonceReuse) {
            // The `signed-nonce-per-connection` fault keeps one nonce cache per connection.
            let nonce = match http.peer {
                Some(peer) if self.fault(Fault::SignedNoncePerConnection) => {
                    format!("{peer}\u{0}{}", header.nonce)
                }
                _ if self.fault(Fault::SignedNonceWithTimestamp) => {
                    format!("{}\u{0}{}", header.nonce, header.timestamp)
                }
                _ => header.nonce.clone(),
            };
            if self.fault(Fault::RaceSignedNonce) {
                self.use_nonce_in_two_steps(&header.client_id, &nonce, header.timestamp)?;
            } else {
                self.use_nonce(&header.client_id, &nonce, header.timestamp)?;
            }
        }
        Ok(key_principal(user, &header.client_id, AuthPath::Signed))
    }

    /// The other API keys of `key`'s user (SPEC.md 5.3: "A user may configure up to 8
    /// client ids"), whose secrets only the `*-any-key-of-user` faults accept for it.
    pub(crate) fn other_keys<'a>(&'a self, key: &'a User) -> impl Iterator<Item = &'a User> {
        self.users
            .iter()
            .filter(move |other| other.user_id == key.user_id && other.client_id != key.client_id)
    }

    /// Refuses a signature timestamp more than the window away from now, in either
    /// direction: a clock a little ahead of ours is tolerated, a replay from the past or
    /// a request pre-signed for the future is not.
    pub(crate) fn check_timestamp(&self, timestamp: u64, window: u64) -> Result<(), ErrorObject> {
        let now_ms = self.now_ms();
        if now_ms.saturating_sub(timestamp) > window {
            return Err(ErrorObject::invalid_credentials("timestamp is too old"));
        }
        if timestamp.saturating_sub(now_ms) > window
            && !self.variant(super::Variant::FutureTimestamps)
        {
            return Err(ErrorObject::invalid_credentials(
                "timestamp is too far in the future",
            ));
        }
        Ok(())
    }

    /// Records a nonce as used in two steps, the check and, after [`race_pause`], the
    /// update: how the `race-sig-nonce` and `race-signed-nonce` faults let copies released
    /// together through.
    pub(crate) fn use_nonce_in_two_steps(
        &self,
        client_id: &str,
        nonce: &str,
        timestamp: u64,
    ) -> Result<(), ErrorObject> {
        if lock(&self.nonces).contains(client_id, nonce, self.now_ms()) {
            return Err(ErrorObject::invalid_credentials("nonce already used"));
        }
        race_pause();
        match lock(&self.nonces).check_and_insert(client_id, nonce, timestamp, self.now_ms()) {
            NonceVerdict::Full => Err(ErrorObject::too_many_requests()),
            NonceVerdict::Fresh | NonceVerdict::Reused => Ok(()),
        }
    }

    /// Records a nonce as used; a second use is refused, within the window or after it
    /// (the nonces are kept past it: `state.rs` NONCE_RETENTION_MS).
    pub(crate) fn use_nonce(
        &self,
        client_id: &str,
        nonce: &str,
        timestamp: u64,
    ) -> Result<(), ErrorObject> {
        let cache = if self.fault(Fault::SigNonceForgottenAfterWindow) {
            &self.window_nonces
        } else {
            &self.nonces
        };
        let verdict = lock(cache).check_and_insert(client_id, nonce, timestamp, self.now_ms());
        match verdict {
            NonceVerdict::Fresh => Ok(()),
            NonceVerdict::Reused => Err(ErrorObject::invalid_credentials("nonce already used")),
            // Refusing is the only safe answer: forgetting old nonces would let replays in.
            NonceVerdict::Full => Err(ErrorObject::too_many_requests()),
        }
    }
}

/// A principal authenticated by API key: the user's full rights, bucketed by client id.
fn key_principal(user: &User, client_id: &str, path: AuthPath) -> Principal {
    let mut scope = user.maximum.clone();
    scope.connection = true;
    Principal {
        user_id: user.user_id,
        scope,
        path,
        access_token: None,
        rate_key: format!("client:{client_id}"),
    }
}

/// `uri` with its query string percent-decoded (`+` read as a space): the request data
/// of the `signed-decoded-query` fault.
fn decoded_uri(uri: &str) -> String {
    match uri.split_once('?') {
        None => uri.to_owned(),
        Some((path, query)) => {
            let pairs: Vec<String> = form_urlencoded::parse(query.as_bytes())
                .map(|(name, value)| format!("{name}={value}"))
                .collect();
            format!("{path}?{}", pairs.join("&"))
        }
    }
}
