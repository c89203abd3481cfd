//! The markdown section reader: any text, sections that tile its lines.
#![no_main]

use kura::text::{Lines, markdown};
use libfuzzer_sys::fuzz_target;

fuzz_target!(|text: &str| {
    let total = Lines::new(text).count();
    for s in markdown::sections(text) {
        assert!(s.start_line >= 1 && s.start_line <= s.end_line.max(s.start_line));
        assert!(s.end_line <= total.max(1));
    }
    let _ = markdown::headings(text);
});
