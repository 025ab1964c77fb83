//! The second factor of SPEC.md 5.7, as a target file describes it. SPEC.md says which
//! methods need it and what a call without it gets (13668), but not how it is sent: the
//! target file names the parameter that carries it and a TOTP secret (RFC 6238: HMAC-SHA1,
//! 30 s steps, 6 digits, the common authenticator-app form) from which the harness derives
//! the current code, or a fixed code a test environment accepts. The reference server
//! verifies with the same functions. A secret that is not base32 is a
//! [`SecondFactorError`].

use totp_rs::{Algorithm, Secret, Totp};

/// Why no code could be derived from a target file's TOTP secret.
#[derive(Clone, Debug, PartialEq, Eq, thiserror::Error)]
pub enum SecondFactorError {
    /// The secret does not decode as base32.
    #[error("the TOTP secret is not base32: {source}")]
    NotBase32 {
        /// The decoder's complaint.
        #[source]
        source: totp_rs::SecretParseError,
    },
}

/// Digits of a code.
const DIGITS: u8 = 6;
/// Seconds a code is valid for.
const STEP_S: u64 = 30;

/// The TOTP of a base32 secret, accepting one step of drift either way.
fn totp(base32_secret: &str) -> Result<Totp, SecondFactorError> {
    let secret = Secret::try_from_base32(base32_secret.trim())
        .map_err(|source| SecondFactorError::NotBase32 { source })?;
    Ok(totp_rs::Builder::new()
        .with_algorithm(Algorithm::SHA1)
        .with_digits(DIGITS)
        .with_step_duration(STEP_S)
        .with_skew(1)
        .with_secret(secret)
        .build_noncompliant())
}

/// The code of `base32_secret` at `unix_s`; the error says why the secret is unusable.
pub fn totp_code(base32_secret: &str, unix_s: u64) -> Result<String, SecondFactorError> {
    Ok(totp(base32_secret)?.generate(unix_s).to_string())
}

/// A code that is never the right one at `unix_s`: the right one with every digit moved
/// by five, so it is well formed and wrong within the drift the verifier allows.
pub fn wrong_totp_code(base32_secret: &str, unix_s: u64) -> Result<String, SecondFactorError> {
    let right = totp(base32_secret)?;
    let mut code: String = right
        .generate(unix_s)
        .to_string()
        .chars()
        .map(|digit| {
            digit
                .to_digit(10)
                .map_or(digit, |d| char::from(b'0' + ((d + 5) % 10) as u8))
        })
        .collect();
    // Moving every digit by five could land on the code of a neighbouring step.
    while right.check(&code, unix_s).is_some() {
        code = format!("{:06}", (code.parse::<u32>().unwrap_or(0) + 1) % 1_000_000);
    }
    Ok(code)
}

/// Whether `code` is the code of `base32_secret` at `unix_s`, one step either way.
pub fn totp_accepts(base32_secret: &str, code: &str, unix_s: u64) -> bool {
    totp(base32_secret).is_ok_and(|totp| totp.check(code.trim(), unix_s).is_some())
}

/// A code that is not the fixed code `code`: each digit moved by five (`000000` becomes
/// `555555`), so it keeps the code's form; a code without digits gets its last character
/// changed instead.
pub fn wrong_fixed_code(code: &str) -> String {
    let moved: String = code
        .chars()
        .map(|c| {
            c.to_digit(10)
                .map_or(c, |d| char::from(b'0' + ((d + 5) % 10) as u8))
        })
        .collect();
    if moved != code {
        return moved;
    }
    let mut characters: Vec<char> = code.chars().collect();
    match characters.last_mut() {
        Some(last) => *last = if *last == 'x' { 'y' } else { 'x' },
        None => characters.push('x'),
    }
    characters.into_iter().collect()
}

/// A fresh random base32 TOTP secret of 20 bytes.
pub fn fresh_totp_secret() -> String {
    use rand::RngCore;
    let mut bytes = [0u8; 20];
    rand::rng().fill_bytes(&mut bytes);
    Secret::from(bytes).to_base32()
}

#[cfg(test)]
mod tests {
    use super::*;

    /// RFC 6238 appendix B, SHA-1, the secret "12345678901234567890" (in base32), 6 digits.
    #[test]
    fn codes_match_rfc_6238() {
        let secret = "GEZDGNBVGY3TQOJQGEZDGNBVGY3TQOJQ";
        assert_eq!(totp_code(secret, 59).unwrap(), "287082");
        assert_eq!(totp_code(secret, 1_111_111_109).unwrap(), "081804");
        assert!(totp_accepts(secret, "081804", 1_111_111_109 + 30));
        assert!(!totp_accepts(secret, "081804", 1_111_111_109 + 120));
        let wrong = wrong_totp_code(secret, 1_111_111_109).unwrap();
        assert_eq!(wrong.len(), 6);
        assert!(!totp_accepts(secret, &wrong, 1_111_111_109));
        assert!(totp_code("not base32!", 0).is_err());
        assert_eq!(wrong_fixed_code("000000"), "555555");
        assert_eq!(wrong_fixed_code("ab"), "ax");
        assert_eq!(wrong_fixed_code(""), "x");
        let fresh = fresh_totp_secret();
        assert!(totp_accepts(
            &fresh,
            &totp_code(&fresh, 1_000).unwrap(),
            1_000
        ));
    }
}
