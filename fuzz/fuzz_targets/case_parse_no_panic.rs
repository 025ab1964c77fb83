#![no_main]
// The property lives in the library; see harness_model::fuzz_targets.
libfuzzer_sys::fuzz_target!(|data: &[u8]| harness_model::fuzz_targets::case_parse_no_panic(data));
