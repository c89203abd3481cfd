//! Scan cursors: the streamed window equals the in-memory scan for any
//! buffer size, and resuming from each cursor covers the text exactly.

use kura::scan::{self, ScanStart};

pub fn run(text: &str, buf: u8, cap: u16) {
    let cap = usize::from(cap % 64) + 1;
    let reader = std::io::BufReader::with_capacity(usize::from(buf % 8) + 1, text.as_bytes());
    let streamed = scan::scan_stream(reader, ScanStart::Beginning, cap, |e| {
        kura::error::Error::internal(e.to_string())
    })
    .unwrap();
    let in_memory = scan::scan(text, ScanStart::Beginning, cap).unwrap();
    assert_eq!(streamed.text, in_memory.text);
    let mut at = ScanStart::Beginning;
    let mut out = String::new();
    loop {
        let s = scan::scan(text, at, cap).unwrap();
        out.push_str(&s.text);
        match s.next_cursor.char_offset {
            Some(c) => at = ScanStart::Offset(c as i64),
            None => break,
        }
    }
    assert_eq!(out, text);
}
