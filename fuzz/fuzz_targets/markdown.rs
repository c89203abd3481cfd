//! cargo-fuzz's entry for [`kura_fuzz::markdown`] (its body and what it checks).
#![no_main]

libfuzzer_sys::fuzz_target!(|text: &str| kura_fuzz::markdown::run(text));
