//! Path parsing: never a panic, and a parsed path holds only plain names.

use kura::fs::RelPath;

pub fn run(input: &str) {
    for allow_root in [false, true] {
        if let Ok(p) = RelPath::parse(input, allow_root) {
            for seg in p.segments() {
                assert!(!seg.is_empty() && seg != "." && seg != "..");
                assert!(!seg.contains('/'));
            }
            assert_eq!(RelPath::parse(&p.to_string(), true).ok(), Some(p));
        }
    }
}
