//! cargo-fuzz's entry for [`kura_fuzz::framing`] (its body and what it checks).
#![no_main]

libfuzzer_sys::fuzz_target!(|line: &[u8]| kura_fuzz::framing::run(line));
