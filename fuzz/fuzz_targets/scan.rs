//! cargo-fuzz's entry for [`kura_fuzz::scan`] (its body and what it checks).
#![no_main]

libfuzzer_sys::fuzz_target!(|input: (&str, u8, u16)| kura_fuzz::scan::run(
    input.0, input.1, input.2
));
