#![no_main]
// The property lives in the library; see harness_server::serve::fuzz_targets.
libfuzzer_sys::fuzz_target!(|data: &[u8]| harness_server::serve::fuzz_targets::query_params_coerce(data));
