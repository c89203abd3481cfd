//! cargo-fuzz's entry for [`kura_fuzz::args`] (its body and what it checks).
#![no_main]

libfuzzer_sys::fuzz_target!(|data: &[u8]| kura_fuzz::args::run(data));
