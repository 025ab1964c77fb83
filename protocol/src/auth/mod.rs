//! Authentication as SPEC.md section 5 describes it, shared by both sides of the wire:
//! the runner signs with it, the reference server and the client judge verify with it.
//!
//! - [`sign`]: the two HMAC-SHA256 string-to-sign framings, the signed `Authorization`
//!   header and HTTP Basic.
//! - [`nonce`]: fresh nonces and the bounded replay cache.
//! - [`scope`]: the space-separated scope grammar of section 5.4.
//! - [`second_factor`]: the TOTP codes of the second factor of section 5.7.
//! - [`clock`]: the only place in the crate that reads the system clock.

pub mod clock;
pub mod nonce;
pub mod scope;
pub mod second_factor;
pub mod sign;
