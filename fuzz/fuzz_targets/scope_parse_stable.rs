#![no_main]
// The property lives in the library; see harness::fuzz::properties.
libfuzzer_sys::fuzz_target!(|data: &[u8]| harness::fuzz::properties::scope_parse_stable(data));
