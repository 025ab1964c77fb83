//! The cargo-fuzz entry points of the parsers and signers: each turns the fuzzer's bytes into
//! the input of one library property (decoding structured inputs with `arbitrary` exactly as
//! `libfuzzer_sys::fuzz_target!` does) and reports a broken property as a panic, which is
//! what libFuzzer records as a crash.
//!
//! These targets need nothing of the runner or the reference server, so `fuzz/` builds them
//! from this crate alone; the server's own targets are in `harness_server::serve::fuzz_targets`,
//! declared with the same [`declare_fuzz_targets!`](crate::declare_fuzz_targets) macro. The harness's
//! integration tests replay `fuzz/corpus/seed/` and `fuzz/regressions/` through both tables.

use arbitrary::{Arbitrary, Unstructured};

use harness_protocol::auth::scope::{self, ScopePropertyError};
use harness_protocol::auth::sign::{self, SignPropertyError};
use harness_protocol::jsonrpc::{self, EnvelopePropertyError};

use crate::case::{self, CasePropertyError};
use crate::target_file::{self, TargetPropertyError};

/// A property over raw fuzzer bytes; the error is the rule it found broken.
pub type Property<E> = fn(&[u8]) -> Result<(), E>;

/// The rule one property of this crate's table found broken.
#[derive(Clone, Debug, PartialEq, thiserror::Error)]
pub enum PropertyError {
    /// `envelope_parse_answers`.
    #[error(transparent)]
    Envelope(#[from] EnvelopePropertyError),
    /// `signed_header_roundtrip`, `string_to_sign_roundtrip` or `client_signature_verifies`.
    #[error(transparent)]
    Sign(#[from] SignPropertyError),
    /// `scope_parse_stable`.
    #[error(transparent)]
    Scope(#[from] ScopePropertyError),
    /// `case_parse_no_panic`.
    #[error(transparent)]
    Case(#[from] CasePropertyError),
    /// `target_parse_roundtrip`.
    #[error(transparent)]
    Target(#[from] TargetPropertyError),
}

/// Declares each target's property and its entry point, a function of the same name that
/// panics when the property breaks, and `TARGETS`, the table of them by name, whose
/// properties return the table's error type (`error = ...;`, which each property's error
/// converts into). Each `fuzz_target!` calls its entry point directly, so its binary links
/// only its own property: libFuzzer scans every coverage counter of the binary after each
/// execution, and fewer counters mean more executions per second.
#[macro_export]
macro_rules! declare_fuzz_targets {
    (error = $error:ty; $($name:ident => $property:expr;)+) => {
        /// Every fuzz target of this table, by name.
        pub const TARGETS: &[(&str, $crate::fuzz_targets::Property<$error>)] = &[$((
            stringify!($name),
            |data| {
                let property: $crate::fuzz_targets::Property<_> = $property;
                property(data).map_err(<$error>::from)
            },
        )),+];

        $(
            #[doc = concat!("The body of the `", stringify!($name), "` fuzz target.")]
            ///
            /// # Panics
            ///
            /// When the property does not hold: the fuzzer records the input as a crash.
            pub fn $name(data: &[u8]) {
                let property: $crate::fuzz_targets::Property<_> = $property;
                if let Err(violation) = property(data) {
                    panic!("{}: {violation}", stringify!($name));
                }
            }
        )+
    };
}

declare_fuzz_targets! {
    error = PropertyError;
    envelope_parse_answers => jsonrpc::envelope_parse_answers;
    signed_header_roundtrip => |data| text(data).map_or(Ok(()), sign::signed_header_roundtrip);
    string_to_sign_roundtrip => |data| {
        structured(data).map_or(Ok(()), |input| sign::string_to_sign_roundtrip(&input))
    };
    client_signature_verifies => |data| {
        structured(data).map_or(Ok(()), |input| sign::client_signature_verifies(&input))
    };
    scope_parse_stable => |data| text(data).map_or(Ok(()), scope::scope_parse_stable);
    case_parse_no_panic => case::case_parse_no_panic;
    target_parse_roundtrip => target_file::target_parse_roundtrip;
}

/// The fuzzer's bytes as text; `None` when they are not UTF-8 (which a text property skips).
pub fn text(data: &[u8]) -> Option<&str> {
    std::str::from_utf8(data).ok()
}

/// Decodes a structured input the way `fuzz_target!(|input: T| ..)` does.
pub fn structured<'a, T: Arbitrary<'a>>(data: &'a [u8]) -> Option<T> {
    T::arbitrary_take_rest(Unstructured::new(data)).ok()
}
