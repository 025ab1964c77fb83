//! The cargo-fuzz entry points: each turns the fuzzer's bytes into the input of one library
//! property (decoding structured inputs with `arbitrary` exactly as
//! `libfuzzer_sys::fuzz_target!` does) and reports a broken property as a panic, which is
//! what libFuzzer records as a crash.
//!
//! The same table replays `fuzz/regressions/<target>/*` as an ordinary test, so a crash
//! found once stays fixed.

use arbitrary::{Arbitrary, Unstructured};

use crate::auth::{scope, sign};
use crate::{case, jsonrpc, serve, target_file};

/// A property over raw fuzzer bytes.
pub type Property = fn(&[u8]) -> Result<(), String>;

/// Declares each target's property and its entry point, a function of the same name that
/// panics when the property breaks. Each `fuzz_target!` calls its entry point directly, so
/// its binary links only its own property: libFuzzer scans every coverage counter of the
/// binary after each execution, and fewer counters mean more executions per second.
macro_rules! targets {
    ($($name:ident => $property:expr;)+) => {
        /// Every fuzz target of `fuzz/fuzz_targets/`, by name.
        pub const TARGETS: &[(&str, Property)] = &[$((stringify!($name), $property)),+];

        $(
            #[doc = concat!("The body of the `", stringify!($name), "` fuzz target.")]
            ///
            /// # Panics
            ///
            /// When the property does not hold: the fuzzer records the input as a crash.
            pub fn $name(data: &[u8]) {
                let property: Property = $property;
                if let Err(violation) = property(data) {
                    panic!("{}: {violation}", stringify!($name));
                }
            }
        )+
    };
}

targets! {
    envelope_parse_answers => jsonrpc::envelope_parse_answers;
    signed_header_roundtrip => |data| text(data).map_or(Ok(()), sign::signed_header_roundtrip);
    string_to_sign_roundtrip => |data| {
        structured(data).map_or(Ok(()), |input| sign::string_to_sign_roundtrip(&input))
    };
    client_signature_verifies => |data| {
        structured(data).map_or(Ok(()), |input| sign::client_signature_verifies(&input))
    };
    query_params_coerce => |data| {
        structured(data).map_or(Ok(()), |input| serve::query_params_coerce(&input))
    };
    scope_parse_stable => |data| text(data).map_or(Ok(()), scope::scope_parse_stable);
    case_parse_no_panic => case::case_parse_no_panic;
    target_parse_roundtrip => target_file::target_parse_roundtrip;
    dispatch_envelope => serve::dispatch_envelope;
}

/// Runs the named target's property; `None` for an unknown name.
pub fn run(name: &str, data: &[u8]) -> Option<Result<(), String>> {
    TARGETS
        .iter()
        .find(|(target_name, _)| *target_name == name)
        .map(|(_, property)| property(data))
}

fn text(data: &[u8]) -> Option<&str> {
    std::str::from_utf8(data).ok()
}

/// Decodes a structured input the way `fuzz_target!(|input: T| ..)` does.
fn structured<'a, T: Arbitrary<'a>>(data: &'a [u8]) -> Option<T> {
    T::arbitrary_take_rest(Unstructured::new(data)).ok()
}

#[cfg(test)]
mod tests;
