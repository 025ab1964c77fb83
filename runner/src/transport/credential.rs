//! What credentials add to a request, built in one place for every sender: the runner's
//! steps (`run/auth.rs`) and the fuzzer's requests (`fuzz/send.rs`) both call these, so a
//! login, a signature or a header is made the same way whoever sends it.
//!
//! SPEC.md 5.3 (`client_credentials`: the secret as a parameter), 5.5 (`client_signature`:
//! timestamp, nonce and the HMAC of `timestamp\nnonce\ndata`), 5.6 (`Basic` and the signed
//! header, whose plan is [`ClientSession::signed_plan`](super::ClientSession::signed_plan))
//! and 5.8 (the Direct Access key as a bearer). A wrong secret is always the nearest miss:
//! the right one with its last character changed, so a server that compares all but the
//! last character fails as surely as one that accepts anything.

use serde_json::{Map, Value};

use harness_protocol::auth::sign;

use super::{Authorization, Credentials};

/// `secret`, or, when `wrong`, the nearest wrong one: the same length with only its last
/// character changed.
pub(crate) fn spoiled(secret: String, wrong: bool) -> String {
    if !wrong {
        return secret;
    }
    let mut characters: Vec<char> = secret.chars().collect();
    match characters.last_mut() {
        Some(last) => *last = if *last == 'x' { 'y' } else { 'x' },
        None => characters.push('x'),
    }
    characters.into_iter().collect()
}

impl Credentials {
    /// These credentials, with the nearest wrong secret when `wrong`.
    pub(crate) fn spoiled(mut self, wrong: bool) -> Credentials {
        self.secret = spoiled(self.secret, wrong);
        self
    }
}

/// The `client_secret` parameter of a `client_credentials` login (5.3).
pub(crate) fn insert_client_secret(params: &mut Map<String, Value>, credentials: &Credentials) {
    params.insert(
        "client_secret".to_owned(),
        Value::from(credentials.secret.clone()),
    );
}

/// How a `client_signature` login is signed (5.5), with the defects a sender may ask for.
#[derive(Clone, Debug, Default)]
pub struct SignatureParams {
    /// `timestamp`, in milliseconds.
    pub timestamp: u64,
    /// `nonce`; `None` leaves the parameter out (and signs an empty nonce).
    pub nonce: Option<String>,
    /// The `data` signed, as the server will read it.
    pub data: String,
    /// Send the signature in upper-case hex.
    pub uppercase: bool,
    /// Sign `timestamp\nnonce` without the line feed that ends an empty `data`.
    pub no_trailing_lf: bool,
    /// Send the signature with its last hex digit changed.
    pub altered: bool,
}

/// Adds `timestamp`, `nonce` and `signature` of a `client_signature` login (5.5) to
/// `params`; the error says why the string to sign could not be framed.
pub(crate) fn insert_client_signature(
    params: &mut Map<String, Value>,
    credentials: &Credentials,
    plan: &SignatureParams,
) -> Result<(), sign::SignError> {
    let nonce = plan.nonce.as_deref().unwrap_or_default();
    let secret = &credentials.secret;
    let mut signature = if plan.no_trailing_lf && plan.data.is_empty() {
        sign::hmac_hex(
            secret.as_bytes(),
            format!("{}\n{nonce}", plan.timestamp).as_bytes(),
        )
    } else {
        sign::client_signature(secret, plan.timestamp, nonce, &plan.data)?
    };
    if plan.uppercase {
        signature = signature.to_ascii_uppercase();
    }
    if plan.altered {
        signature = sign::altered_signature(&signature);
    }
    params.insert("timestamp".to_owned(), Value::from(plan.timestamp));
    if let Some(nonce) = &plan.nonce {
        params.insert("nonce".to_owned(), Value::from(nonce.clone()));
    }
    params.insert("signature".to_owned(), Value::from(signature));
    Ok(())
}

/// The `Authorization: Basic` header of 5.6.
pub fn basic(credentials: &Credentials) -> Authorization {
    Authorization::Value(sign::basic_header_value(
        &credentials.client_id,
        &credentials.secret,
    ))
}

/// The Direct Access key as a bearer (5.8).
pub(crate) fn api_key(key: &str) -> Authorization {
    Authorization::Value(format!("Bearer {key}"))
}

#[cfg(test)]
mod tests {
    use super::*;

    fn main_account() -> Credentials {
        Credentials {
            client_id: "id".to_owned(),
            secret: "s3cret".to_owned(),
        }
    }

    #[test]
    fn the_wrong_secret_is_the_nearest_miss() {
        assert_eq!(spoiled("abc".to_owned(), true), "abx");
        assert_eq!(spoiled("abx".to_owned(), true), "aby");
        assert_eq!(spoiled(String::new(), true), "x");
        assert_eq!(spoiled("abc".to_owned(), false), "abc");
    }

    #[test]
    fn a_client_signature_verifies_and_an_omitted_nonce_is_left_out() {
        let mut params = Map::new();
        let plan = SignatureParams {
            timestamp: 1_700_000_000_000,
            nonce: Some("n1".to_owned()),
            data: "d".to_owned(),
            ..SignatureParams::default()
        };
        insert_client_signature(&mut params, &main_account(), &plan).unwrap();
        let expected = sign::client_signature("s3cret", plan.timestamp, "n1", "d").unwrap();
        assert_eq!(params["signature"], Value::from(expected));
        assert_eq!(params["nonce"], "n1");
        let mut without = Map::new();
        let plan = SignatureParams {
            nonce: None,
            uppercase: true,
            ..plan
        };
        insert_client_signature(&mut without, &main_account(), &plan).unwrap();
        assert!(!without.contains_key("nonce"));
        let signature = without["signature"].as_str().unwrap();
        assert_eq!(signature, signature.to_ascii_uppercase());
    }
}
