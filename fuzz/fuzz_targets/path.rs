//! cargo-fuzz's entry for [`kura_fuzz::path`] (its body and what it checks).
#![no_main]

libfuzzer_sys::fuzz_target!(|input: &str| kura_fuzz::path::run(input));
