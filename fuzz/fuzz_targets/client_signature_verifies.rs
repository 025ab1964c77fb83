#![no_main]
// The property lives in the library; see harness::fuzz::target.
libfuzzer_sys::fuzz_target!(|data: &[u8]| harness::fuzz::target::client_signature_verifies(data));
