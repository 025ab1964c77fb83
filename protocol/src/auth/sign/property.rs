//! Properties of the signing code, shared by the cargo-fuzz targets (`fuzz/`) and the
//! proptest tests beside this file: the signed header parses back to what was built, both
//! strings to sign split back into their fields, and a signature verifies only as made.
//!
//! Each property returns the first broken rule, a [`SignPropertyError`], instead of
//! panicking, so the caller decides how to report it.

use sha2::{Digest, Sha256};

use super::{
    DEFAULT_SCHEME, HeaderError, HttpSignedFields, SignError, SignedHeader, client_signature,
    client_string_to_sign, http_string_to_sign, parse_client_string_to_sign,
    parse_http_string_to_sign, verify_client_signature,
};

/// The rule of a signing property that does not hold.
#[derive(Clone, Debug, PartialEq, Eq, thiserror::Error)]
pub enum SignPropertyError {
    /// A signed header, built from what it parsed as, parses to other fields.
    #[error("{text:?} parsed as {header:?}, built as {built:?}, parsed again as {again:?}")]
    HeaderRoundtrip {
        /// The header text.
        text: String,
        /// What it parsed as.
        header: Box<SignedHeader>,
        /// The header value built from it.
        built: String,
        /// What that value parsed as.
        again: Box<Result<SignedHeader, HeaderError>>,
    },
    /// The client string to sign splits into other fields than it was built from.
    #[error("client string {text:?} splits into {:?}", parse_client_string_to_sign(.text))]
    ClientStringSplit {
        /// The string to sign.
        text: String,
    },
    /// The client string to sign was refused without a line feed in its nonce.
    #[error("client string refused: {0}")]
    ClientStringRefused(#[source] SignError),
    /// The HTTP string to sign splits into other fields than it was built from.
    #[error("http string {bytes:?} splits into {:?}", parse_http_string_to_sign(.bytes))]
    HttpStringSplit {
        /// The string to sign.
        bytes: Vec<u8>,
    },
    /// The HTTP string to sign was built with a line feed in a field a line feed follows.
    #[error("http string with LF in a field built: {bytes:?}")]
    HttpStringWithLineFeed {
        /// The string to sign.
        bytes: Vec<u8>,
    },
    /// The HTTP string to sign was refused without a line feed in its fields.
    #[error("http string refused: {0}")]
    HttpStringRefused(#[source] SignError),
    /// `client_signature` was refused without a line feed in its nonce.
    #[error("signing refused: {0}")]
    SigningRefused(#[source] SignError),
    /// The signature is not 64 lowercase hex digits.
    #[error("{signature:?} is not 64 lowercase hex digits")]
    NotLowerHex {
        /// The signature.
        signature: String,
    },
    /// The signature is not the HMAC computed from its definition.
    #[error("{signature} differs from the reference HMAC {reference}")]
    NotReference {
        /// The signature.
        signature: String,
        /// The HMAC computed here.
        reference: String,
    },
    /// The signature does not verify.
    #[error("{signature} does not verify")]
    DoesNotVerify {
        /// The signature.
        signature: String,
    },
    /// The signature with one digit changed verifies.
    #[error("tampered {tampered} verifies")]
    TamperedVerifies {
        /// The changed signature.
        tampered: String,
    },
    /// The signature in upper case verifies.
    #[error("upper-case {upper} verifies")]
    UpperCaseVerifies {
        /// The signature in upper case.
        upper: String,
    },
}

/// Fields of both strings to sign.
#[derive(Clone, Debug, Default)]
#[cfg_attr(any(test, feature = "arbitrary"), derive(arbitrary::Arbitrary))]
pub struct SignInput {
    /// `timestamp`.
    pub timestamp: u64,
    /// `nonce`.
    pub nonce: String,
    /// `data` of `client_signature`.
    pub data: String,
    /// The HTTP method.
    pub method: String,
    /// The request URI.
    pub uri: String,
    /// The request body.
    pub body: Vec<u8>,
}

/// A signature to make, and a change to try against it.
#[derive(Clone, Debug, Default)]
#[cfg_attr(any(test, feature = "arbitrary"), derive(arbitrary::Arbitrary))]
pub struct SignatureInput {
    /// The client secret.
    pub(crate) secret: String,
    /// `timestamp`.
    pub timestamp: u64,
    /// `nonce`.
    pub nonce: String,
    /// `data`.
    pub data: String,
    /// Which hex digit of the signature to change.
    pub(crate) tamper_at: u8,
    /// What to add to it (modulo 16; 0 becomes 1).
    pub(crate) tamper_by: u8,
}

/// Property `signed_header_roundtrip`: any text that parses as a signed header builds a
/// header value that parses to the same fields (parse, build, parse is parse).
pub fn signed_header_roundtrip(text: &str) -> Result<(), SignPropertyError> {
    let scheme = text.trim().split(' ').next().unwrap_or(DEFAULT_SCHEME);
    for scheme in [scheme, DEFAULT_SCHEME] {
        let Ok(header) = SignedHeader::parse(text, scheme) else {
            continue;
        };
        let built = header.to_header_value();
        let again = SignedHeader::parse(&built, scheme);
        if again.as_ref() != Ok(&header) {
            return Err(SignPropertyError::HeaderRoundtrip {
                text: text.to_owned(),
                header: Box::new(header),
                built,
                again: Box::new(again),
            });
        }
    }
    Ok(())
}

/// Whether [`SignedHeader::to_header_value`] of these fields can be parsed back: no field
/// holds the pair separator, no value ends in whitespace (pairs are trimmed), and the scheme
/// is one word.
pub fn header_is_representable(header: &SignedHeader) -> bool {
    let value_ok = |value: &str| !value.contains(',') && value.trim_end() == value;
    !header.scheme.is_empty()
        && !header.scheme.contains(char::is_whitespace)
        && [&header.client_id, &header.nonce, &header.signature]
            .into_iter()
            .all(|value| value_ok(value))
}

/// Property `string_to_sign_roundtrip`: both framings of section 5.5 and 5.6 split back into
/// exactly the fields they were built from, so two different requests never share a string
/// to sign; a field is refused exactly when it holds LF where LF separates.
pub fn string_to_sign_roundtrip(input: &SignInput) -> Result<(), SignPropertyError> {
    let nonce_lf = input.nonce.contains('\n');
    match client_string_to_sign(input.timestamp, &input.nonce, &input.data) {
        Ok(text) => {
            let parsed = parse_client_string_to_sign(&text);
            let expected = (input.timestamp, input.nonce.as_str(), input.data.as_str());
            if parsed != Some(expected) {
                return Err(SignPropertyError::ClientStringSplit { text });
            }
        }
        Err(SignError::LineFeedIn("nonce")) if nonce_lf => {}
        Err(error) => return Err(SignPropertyError::ClientStringRefused(error)),
    }
    let separators_clean = !nonce_lf && !input.method.contains('\n') && !input.uri.contains('\n');
    let built = http_string_to_sign(&HttpSignedFields {
        timestamp: input.timestamp,
        nonce: &input.nonce,
        method: &input.method,
        uri: &input.uri,
        body: &input.body,
    });
    match (built, separators_clean) {
        (Ok(bytes), true) => {
            let parsed = parse_http_string_to_sign(&bytes);
            let method = input.method.to_ascii_uppercase();
            let expected = HttpSignedFields {
                timestamp: input.timestamp,
                nonce: &input.nonce,
                method: &method,
                uri: &input.uri,
                body: &input.body,
            };
            if parsed != Some(expected) {
                return Err(SignPropertyError::HttpStringSplit { bytes });
            }
        }
        (Err(_), false) => {}
        (Ok(bytes), false) => {
            return Err(SignPropertyError::HttpStringWithLineFeed { bytes });
        }
        (Err(error), true) => return Err(SignPropertyError::HttpStringRefused(error)),
    }
    Ok(())
}

/// Property `client_signature_verifies`: the signature is 64 lowercase hex digits, equals an
/// HMAC-SHA256 computed here from its definition (RFC 2104) rather than with the `hmac`
/// crate, verifies, and stops verifying when any digit changes or when given in upper case.
pub fn client_signature_verifies(input: &SignatureInput) -> Result<(), SignPropertyError> {
    let SignatureInput {
        secret,
        timestamp,
        nonce,
        data,
        ..
    } = input;
    let signature = match client_signature(secret, *timestamp, nonce, data) {
        Ok(signature) => signature,
        Err(_) if nonce.contains('\n') => return Ok(()),
        Err(error) => return Err(SignPropertyError::SigningRefused(error)),
    };
    let is_lower_hex = |c: char| c.is_ascii_digit() || ('a'..='f').contains(&c);
    if signature.len() != 64 || !signature.chars().all(is_lower_hex) {
        return Err(SignPropertyError::NotLowerHex { signature });
    }
    let message = format!("{timestamp}\n{nonce}\n{data}");
    let reference = hex::encode(reference_hmac_sha256(secret.as_bytes(), message.as_bytes()));
    if signature != reference {
        return Err(SignPropertyError::NotReference {
            signature,
            reference,
        });
    }
    if !verify_client_signature(secret, *timestamp, nonce, data, &signature) {
        return Err(SignPropertyError::DoesNotVerify { signature });
    }
    let at = usize::from(input.tamper_at) % signature.len();
    let digit = u32::from_str_radix(&signature[at..=at], 16).unwrap_or(0);
    let by = u32::from(input.tamper_by % 16).max(1);
    let replacement = char::from_digit((digit + by) % 16, 16).unwrap_or('0');
    let tampered = format!("{}{replacement}{}", &signature[..at], &signature[at + 1..]);
    if verify_client_signature(secret, *timestamp, nonce, data, &tampered) {
        return Err(SignPropertyError::TamperedVerifies { tampered });
    }
    let upper = signature.to_ascii_uppercase();
    if upper != signature && verify_client_signature(secret, *timestamp, nonce, data, &upper) {
        return Err(SignPropertyError::UpperCaseVerifies { upper });
    }
    Ok(())
}

/// HMAC-SHA256 written out from RFC 2104: the key padded to the block size (hashed first
/// when longer), inner hash over `key ^ ipad || message`, outer over `key ^ opad || inner`.
fn reference_hmac_sha256(key: &[u8], message: &[u8]) -> [u8; 32] {
    const BLOCK: usize = 64;
    let mut block = [0u8; BLOCK];
    if key.len() > BLOCK {
        block[..32].copy_from_slice(&Sha256::digest(key));
    } else {
        block[..key.len()].copy_from_slice(key);
    }
    let inner = Sha256::new()
        .chain_update(block.map(|byte| byte ^ 0x36))
        .chain_update(message)
        .finalize();
    Sha256::new()
        .chain_update(block.map(|byte| byte ^ 0x5c))
        .chain_update(inner)
        .finalize()
        .into()
}
