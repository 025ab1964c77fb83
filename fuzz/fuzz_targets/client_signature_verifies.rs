#![no_main]
// The property lives in the library; see harness::fuzz::properties.
libfuzzer_sys::fuzz_target!(|data: &[u8]| harness::fuzz::properties::client_signature_verifies(data));
