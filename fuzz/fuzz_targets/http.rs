//! cargo-fuzz's entry for [`kura_fuzz::http`] (its body and what it checks).
#![no_main]

libfuzzer_sys::fuzz_target!(|data: &[u8]| kura_fuzz::http::run(data));
