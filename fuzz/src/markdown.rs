//! The markdown readers: any text gives sections that stay inside its
//! lines, and front matter that splits the text exactly (what kura writes
//! back reads the same); a vibe document's fields, chunks and status edit
//! never panic.

use kura::text::{Lines, markdown};
use kura::vibe::doc;

pub fn run(text: &str) {
    let total = Lines::new(text).count();
    for s in markdown::sections(text) {
        assert!(s.start_line >= 1 && s.start_line <= s.end_line.max(s.start_line));
        assert!(s.end_line <= total.max(1));
    }
    let _ = markdown::headings(text);

    let split = doc::split(text);
    assert_eq!(format!("{}{}", split.front_raw, split.body), text);
    if let Some(front) = &split.front {
        let rendered = doc::render_front(front);
        let again = doc::split(&rendered);
        if !front.is_empty() {
            assert_eq!(again.front.as_ref(), Some(front), "{rendered}");
        }
    }
    let _ = doc::meta(text, "fuzz", true);
    let _ = doc::chunks(text);
    let (changed, _) = doc::set_status(text, "done");
    let _ = doc::split(&changed);
}
