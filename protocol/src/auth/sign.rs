//! HMAC-SHA256 signing of SPEC.md sections 5.5 and 5.6, and HTTP Basic.
//!
//! Two framings exist. `client_signature` (for `public/auth` and WebSocket) signs
//! `timestamp LF nonce LF data`; the HTTP signed header signs
//! `timestamp LF nonce LF METHOD LF URI LF body LF`. Both end with the last field followed
//! by nothing (client) or LF (HTTP), exactly as the spec writes them.
//!
//! Framing is unambiguous only if no field but the last can contain LF. The timestamp is
//! digits; a nonce, a method or a URI containing LF is refused with
//! [`SignError::LineFeedIn`], so two different inputs can never share a string to sign.

use std::fmt;

use base64::Engine;
use base64::engine::general_purpose::STANDARD as BASE64;
use hmac::{Hmac, Mac};
use sha2::Sha256;

/// The signed-header scheme name SPEC.md uses; deployments may use another one.
pub const DEFAULT_SCHEME: &str = "svc-hmac-sha256";

/// Why a string to sign could not be built.
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum SignError {
    /// A field that is followed by a separator contains LF, which would make the framing
    /// ambiguous.
    LineFeedIn(&'static str),
}

impl fmt::Display for SignError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            SignError::LineFeedIn(field) => {
                write!(
                    f,
                    "{field} contains a line feed, which would make the string to sign ambiguous"
                )
            }
        }
    }
}

impl std::error::Error for SignError {}

/// Lowercase hex of HMAC-SHA256 of `message` keyed with `secret`.
pub fn hmac_hex(secret: &[u8], message: &[u8]) -> String {
    // HMAC accepts keys of any length, so this cannot fail.
    let mut mac = <Hmac<Sha256> as Mac>::new_from_slice(secret).expect("hmac takes any key length");
    mac.update(message);
    hex::encode(mac.finalize().into_bytes())
}

/// A key made ready once for many signatures: HMAC's key schedule (two of the four
/// SHA-256 blocks of a short message) is paid at construction, not per signature.
#[derive(Clone)]
pub struct Signer {
    keyed: Hmac<Sha256>,
}

impl fmt::Debug for Signer {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str("Signer([redacted])")
    }
}

impl Signer {
    /// A signer for this secret.
    pub fn new(secret: &str) -> Signer {
        // HMAC accepts keys of any length, so this cannot fail.
        Signer {
            keyed: <Hmac<Sha256> as Mac>::new_from_slice(secret.as_bytes())
                .expect("hmac takes any key length"),
        }
    }

    /// Lowercase hex HMAC-SHA256 of the concatenated parts.
    pub(crate) fn hex_of(&self, parts: &[&[u8]]) -> String {
        let mut mac = self.keyed.clone();
        for part in parts {
            mac.update(part);
        }
        hex::encode(mac.finalize().into_bytes())
    }

    /// The `client_signature` of section 5.5; equal to [`client_signature`].
    pub fn client_signature(
        &self,
        timestamp: u64,
        nonce: &str,
        data: &str,
    ) -> Result<String, SignError> {
        if nonce.contains('\n') {
            return Err(SignError::LineFeedIn("nonce"));
        }
        let mut digits = itoa_buffer(timestamp);
        let timestamp = digits.as_str();
        Ok(self.hex_of(&[
            timestamp.as_bytes(),
            b"\n",
            nonce.as_bytes(),
            b"\n",
            data.as_bytes(),
        ]))
    }
}

/// Decimal digits of a timestamp without a heap allocation.
struct Digits {
    buffer: [u8; 20],
    start: usize,
}

impl Digits {
    fn as_str(&mut self) -> &str {
        std::str::from_utf8(&self.buffer[self.start..]).unwrap_or("0")
    }
}

fn itoa_buffer(mut value: u64) -> Digits {
    let mut buffer = [b'0'; 20];
    let mut start = 20;
    loop {
        start -= 1;
        buffer[start] = b'0' + (value % 10) as u8;
        value /= 10;
        if value == 0 {
            break;
        }
    }
    Digits { buffer, start }
}

/// `timestamp LF nonce LF data` (section 5.5): with empty data it still ends with LF.
pub fn client_string_to_sign(timestamp: u64, nonce: &str, data: &str) -> Result<String, SignError> {
    if nonce.contains('\n') {
        return Err(SignError::LineFeedIn("nonce"));
    }
    Ok(format!("{timestamp}\n{nonce}\n{data}"))
}

/// The `client_signature` of section 5.5.
pub fn client_signature(
    secret: &str,
    timestamp: u64,
    nonce: &str,
    data: &str,
) -> Result<String, SignError> {
    let string_to_sign = client_string_to_sign(timestamp, nonce, data)?;
    Ok(hmac_hex(secret.as_bytes(), string_to_sign.as_bytes()))
}

/// Splits a `client_signature` string to sign back into its fields, the inverse of
/// [`client_string_to_sign`].
pub(crate) fn parse_client_string_to_sign(text: &str) -> Option<(u64, &str, &str)> {
    let (timestamp, rest) = text.split_once('\n')?;
    let (nonce, data) = rest.split_once('\n')?;
    Some((timestamp.parse().ok()?, nonce, data))
}

/// Splits an HTTP string to sign back into its fields, the inverse of
/// [`http_string_to_sign`]. The body may hold LF: it is everything between the URI's LF and
/// the final LF.
pub(crate) fn parse_http_string_to_sign(bytes: &[u8]) -> Option<HttpSignedFields<'_>> {
    let mut fields = bytes.splitn(5, |byte| *byte == b'\n');
    let timestamp = std::str::from_utf8(fields.next()?).ok()?.parse().ok()?;
    let nonce = std::str::from_utf8(fields.next()?).ok()?;
    let method = std::str::from_utf8(fields.next()?).ok()?;
    let uri = std::str::from_utf8(fields.next()?).ok()?;
    let body = fields.next()?.strip_suffix(b"\n")?;
    Some(HttpSignedFields {
        timestamp,
        nonce,
        method,
        uri,
        body,
    })
}

/// Whether `presented` is the `client_signature` of section 5.5 for these fields: lowercase
/// hex only, compared in constant time.
pub(crate) fn verify_client_signature(
    secret: &str,
    timestamp: u64,
    nonce: &str,
    data: &str,
    presented: &str,
) -> bool {
    client_signature(secret, timestamp, nonce, data)
        .is_ok_and(|expected| signatures_match(&expected, presented))
}

/// Request data of section 5.6: upper-case method LF URI (with query) LF body LF.
pub fn request_data(method: &str, uri: &str, body: &[u8]) -> Result<Vec<u8>, SignError> {
    if method.contains('\n') {
        return Err(SignError::LineFeedIn("method"));
    }
    if uri.contains('\n') {
        return Err(SignError::LineFeedIn("uri"));
    }
    let mut data = Vec::with_capacity(method.len() + uri.len() + body.len() + 3);
    data.extend_from_slice(method.to_ascii_uppercase().as_bytes());
    data.push(b'\n');
    data.extend_from_slice(uri.as_bytes());
    data.push(b'\n');
    data.extend_from_slice(body);
    data.push(b'\n');
    Ok(data)
}

/// What the HTTP signature of section 5.6 covers: the fields of its string to sign.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct HttpSignedFields<'a> {
    /// Milliseconds since the epoch.
    pub timestamp: u64,
    /// The nonce.
    pub nonce: &'a str,
    /// The HTTP method; signed upper-case.
    pub method: &'a str,
    /// The URI with its query.
    pub uri: &'a str,
    /// The request body.
    pub body: &'a [u8],
}

impl<'a> HttpSignedFields<'a> {
    /// The fields of a `GET` of `uri` with no body.
    pub fn get(timestamp: u64, nonce: &'a str, uri: &'a str) -> HttpSignedFields<'a> {
        HttpSignedFields {
            timestamp,
            nonce,
            method: "GET",
            uri,
            body: b"",
        }
    }
}

/// The string to sign of section 5.6: timestamp LF nonce LF request data.
pub(crate) fn http_string_to_sign(fields: &HttpSignedFields<'_>) -> Result<Vec<u8>, SignError> {
    if fields.nonce.contains('\n') {
        return Err(SignError::LineFeedIn("nonce"));
    }
    let mut text = format!("{}\n{}\n", fields.timestamp, fields.nonce).into_bytes();
    text.extend_from_slice(&request_data(fields.method, fields.uri, fields.body)?);
    Ok(text)
}

/// The HTTP signature of section 5.6.
pub fn http_signature(secret: &str, fields: &HttpSignedFields<'_>) -> Result<String, SignError> {
    let string_to_sign = http_string_to_sign(fields)?;
    Ok(hmac_hex(secret.as_bytes(), &string_to_sign))
}

/// The HTTP signature of section 5.6 over the method in lower case: the defect of a signer
/// that forgets to upper-case it, which a test sends and only a faulty server accepts.
pub fn http_signature_lowercase_method(
    secret: &str,
    fields: &HttpSignedFields<'_>,
) -> Result<String, SignError> {
    let mut text = http_string_to_sign(fields)?;
    let start = format!("{}\n{}\n", fields.timestamp, fields.nonce).len();
    if let Some(method) = text.get_mut(start..start + fields.method.len()) {
        method.make_ascii_lowercase();
    }
    Ok(hmac_hex(secret.as_bytes(), &text))
}

/// The fields of `Authorization: <scheme> id=..,ts=..,nonce=..,sig=..`.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct SignedHeader {
    /// The scheme name, [`DEFAULT_SCHEME`] unless the deployment uses another.
    pub(crate) scheme: String,
    /// `id`: the client id.
    pub client_id: String,
    /// `ts`: milliseconds since the epoch.
    pub timestamp: u64,
    /// `nonce`.
    pub nonce: String,
    /// `sig`: lowercase hex HMAC-SHA256.
    pub signature: String,
}

/// Why an `Authorization` value is not a well-formed signed header.
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum HeaderError {
    /// The value does not start with the expected scheme name.
    WrongScheme,
    /// A pair is not `key=value`.
    NotAPair(String),
    /// A key other than id, ts, nonce and sig.
    UnknownKey(String),
    /// A key appears twice.
    DuplicateKey(String),
    /// A required key is absent.
    MissingKey(&'static str),
    /// `ts` is not a decimal integer.
    BadTimestamp(String),
}

impl fmt::Display for HeaderError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            HeaderError::WrongScheme => {
                write!(f, "authorization header does not use the signed scheme")
            }
            HeaderError::NotAPair(text) => write!(f, "\"{text}\" is not a key=value pair"),
            HeaderError::UnknownKey(key) => write!(f, "unknown key \"{key}\" in signed header"),
            HeaderError::DuplicateKey(key) => {
                write!(f, "key \"{key}\" appears twice in signed header")
            }
            HeaderError::MissingKey(key) => write!(f, "signed header has no \"{key}\""),
            HeaderError::BadTimestamp(text) => write!(f, "ts \"{text}\" is not an integer"),
        }
    }
}

impl std::error::Error for HeaderError {}

impl SignedHeader {
    /// Signs a request and builds the header fields.
    pub fn sign(
        scheme: &str,
        client_id: &str,
        secret: &str,
        fields: &HttpSignedFields<'_>,
    ) -> Result<SignedHeader, SignError> {
        Ok(SignedHeader {
            scheme: scheme.to_owned(),
            client_id: client_id.to_owned(),
            timestamp: fields.timestamp,
            nonce: fields.nonce.to_owned(),
            signature: http_signature(secret, fields)?,
        })
    }

    /// The `Authorization` header value.
    pub fn to_header_value(&self) -> String {
        format!(
            "{} id={},ts={},nonce={},sig={}",
            self.scheme, self.client_id, self.timestamp, self.nonce, self.signature
        )
    }

    /// Parses an `Authorization` value of scheme `scheme` (compared without regard to ASCII
    /// case). Pairs may come in any order, with or without spaces after the commas.
    pub fn parse(value: &str, scheme: &str) -> Result<SignedHeader, HeaderError> {
        let value = value.trim();
        let (head, rest) = value.split_once(' ').ok_or(HeaderError::WrongScheme)?;
        if !head.eq_ignore_ascii_case(scheme) {
            return Err(HeaderError::WrongScheme);
        }
        let (mut client_id, mut timestamp, mut nonce, mut signature) = (None, None, None, None);
        for pair in rest.split(',') {
            let pair = pair.trim();
            let (key, field_value) = pair
                .split_once('=')
                .ok_or_else(|| HeaderError::NotAPair(pair.to_owned()))?;
            let slot = match key {
                "id" => &mut client_id,
                "ts" => &mut timestamp,
                "nonce" => &mut nonce,
                "sig" => &mut signature,
                other => return Err(HeaderError::UnknownKey(other.to_owned())),
            };
            if slot.replace(field_value.to_owned()).is_some() {
                return Err(HeaderError::DuplicateKey(key.to_owned()));
            }
        }
        let timestamp_text = timestamp.ok_or(HeaderError::MissingKey("ts"))?;
        Ok(SignedHeader {
            scheme: head.to_owned(),
            client_id: client_id.ok_or(HeaderError::MissingKey("id"))?,
            timestamp: timestamp_text
                .parse()
                .map_err(|_| HeaderError::BadTimestamp(timestamp_text.clone()))?,
            nonce: nonce.ok_or(HeaderError::MissingKey("nonce"))?,
            signature: signature.ok_or(HeaderError::MissingKey("sig"))?,
        })
    }
}

/// `Basic <BASE64(client_id:client_secret)>` (section 5.6).
pub fn basic_header_value(client_id: &str, client_secret: &str) -> String {
    format!(
        "Basic {}",
        BASE64.encode(format!("{client_id}:{client_secret}"))
    )
}

/// The client id and secret of a `Basic` header value, if it is one.
pub fn parse_basic(value: &str) -> Option<(String, String)> {
    let (scheme, encoded) = value.trim().split_once(' ')?;
    if !scheme.eq_ignore_ascii_case("basic") {
        return None;
    }
    let decoded = String::from_utf8(BASE64.decode(encoded.trim()).ok()?).ok()?;
    let (client_id, client_secret) = decoded.split_once(':')?;
    Some((client_id.to_owned(), client_secret.to_owned()))
}

/// `signature` with its last hex digit changed (`0` for any other digit, `1` for `0`): the
/// nearest miss of a right signature, which only a server comparing every digit refuses.
pub fn altered_signature(signature: &str) -> String {
    let mut altered = signature.to_owned();
    match altered.pop() {
        Some('0') => altered.push('1'),
        Some(_) => altered.push('0'),
        None => {}
    }
    altered
}

/// Whether two signatures are equal, in time that does not depend on where they differ.
pub fn signatures_match(expected: &str, presented: &str) -> bool {
    expected.len() == presented.len()
        && expected
            .bytes()
            .zip(presented.bytes())
            .fold(0u8, |acc, (a, b)| acc | (a ^ b))
            == 0
}

mod property;

pub use property::{
    SignInput, SignPropertyError, SignatureInput, client_signature_verifies,
    header_is_representable, signed_header_roundtrip, string_to_sign_roundtrip,
};

#[cfg(test)]
mod tests;
