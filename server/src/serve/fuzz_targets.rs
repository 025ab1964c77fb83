//! The reference server's cargo-fuzz entry points: the query-string coercion and the
//! envelope dispatch of `serve`, declared with `harness_model::declare_fuzz_targets!` as the parser
//! and signer targets are. Only these two targets of `fuzz/` build this crate.

use harness_model::fuzz_targets::structured;

use crate::serve::{self, ServePropertyError};

harness_model::declare_fuzz_targets! {
    error = ServePropertyError;
    query_params_coerce => |data| {
        structured(data).map_or(Ok(()), |input| serve::query_params_coerce(&input))
    };
    dispatch_envelope => serve::dispatch_envelope;
}
