//! Text machinery shared by every domain: line tables, character windows
//! (counted in Unicode scalar values) and the normalisation used for loose
//! matching.

pub mod front;
pub mod lang;
pub mod markdown;
pub mod reference;
pub use kura_text::{Folded, compare, facet, normalize, phrase, tokenize};

/// The SHA-256 of a file's bytes in lowercase hex: the `hash` a read
/// returns and a write's `expected_hash` is compared with (vault and vibe).
pub fn sha256(bytes: &[u8]) -> String {
    use sha2::Digest;
    sha2::Sha256::digest(bytes)
        .iter()
        .map(|b| format!("{b:02x}"))
        .collect()
}

/// Byte offsets of the starts of a text's lines. Lines end at `\n`; a final
/// line without `\n` still counts; an empty text has no lines.
pub struct Lines<'a> {
    text: &'a str,
    starts: Vec<usize>,
}

impl<'a> Lines<'a> {
    pub fn new(text: &'a str) -> Self {
        let mut starts = Vec::new();
        if !text.is_empty() {
            starts.push(0);
            // `match_indices` of one character finds it with memchr: many
            // bytes at a time rather than one.
            starts.extend(
                text.match_indices('\n')
                    .map(|(i, _)| i + 1)
                    .filter(|&next| next < text.len()),
            );
        }
        Lines { text, starts }
    }

    pub fn text(&self) -> &'a str {
        self.text
    }

    pub fn count(&self) -> usize {
        self.starts.len()
    }

    /// Byte where 1-based `line` starts; `count()+1` maps to the end of text.
    pub fn start(&self, line: usize) -> usize {
        self.starts
            .get(line - 1)
            .copied()
            .unwrap_or(self.text.len())
    }

    /// Byte just past 1-based `line`, its `\n` included.
    pub fn end(&self, line: usize) -> usize {
        self.start(line + 1)
    }

    /// The 1-based line holding byte `b` (the last line for the end of text).
    pub fn line_of(&self, b: usize) -> usize {
        match self.starts.binary_search(&b) {
            Ok(i) => i + 1,
            Err(i) => i.max(1),
        }
    }

    /// The text of 1-based `line` without its line ending.
    pub fn line(&self, line: usize) -> &'a str {
        let s = &self.text[self.start(line)..self.end(line)];
        let s = s.strip_suffix('\n').unwrap_or(s);
        s.strip_suffix('\r').unwrap_or(s)
    }
}

/// A window of text cut by a character cap.
#[derive(Debug, PartialEq, Eq)]
pub struct Window {
    pub start: usize,
    pub end: usize,
    pub chars: usize,
    /// The cap stopped the window before `limit`.
    pub capped: bool,
}

/// Take up to `max_chars` characters of `text[start..limit]`. When the cap
/// cuts, the window ends after the last complete line in it, or mid-line only
/// when not even one line fits; resuming at `end` repeats and loses nothing.
pub fn window(text: &str, start: usize, limit: usize, max_chars: usize) -> Window {
    let mut chars = 0;
    let mut end = start;
    let mut capped = false;
    for c in text[start..limit].chars() {
        if chars == max_chars {
            capped = true;
            break;
        }
        chars += 1;
        end += c.len_utf8();
    }
    if capped && let Some(nl) = text[start..end].rfind('\n') {
        let cut = start + nl + 1;
        chars -= text[cut..end].chars().count();
        end = cut;
    }
    Window {
        start,
        end,
        chars,
        capped,
    }
}

/// The common result of cutting a window out of a file.
pub struct Cut {
    pub text: String,
    pub chars: usize,
    pub start_line: usize,
    pub end_line: usize,
    /// Byte where the window ends.
    pub end: usize,
    pub capped: bool,
}

/// Cut `[start, limit)` of the text under a character cap, with the line
/// numbers it spans.
pub fn cut(lines: &Lines, start: usize, limit: usize, max_chars: usize) -> Cut {
    let t = lines.text();
    let w = window(t, start, limit, max_chars);
    let start_line = if lines.count() == 0 {
        1
    } else {
        lines.line_of(start)
    };
    let end_line = if w.end > w.start {
        lines.line_of(w.end - 1)
    } else {
        start_line.min(lines.count())
    };
    Cut {
        text: t[w.start..w.end].to_owned(),
        chars: w.chars,
        start_line,
        end_line,
        end: w.end,
        capped: w.capped,
    }
}

/// Character offset of byte `b`.
pub fn char_offset(text: &str, b: usize) -> usize {
    text[..b].chars().count()
}

/// Byte of character offset `c`, or None past the end (`c == len` is the end).
pub fn byte_of_char(text: &str, c: usize) -> Option<usize> {
    if c == 0 {
        return Some(0);
    }
    match text.char_indices().nth(c) {
        Some((b, _)) => Some(b),
        None if text.chars().count() == c => Some(text.len()),
        None => None,
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn sha256_is_the_standard_one() {
        assert_eq!(
            sha256(b"abc"),
            "ba7816bf8f01cfea414140de5dae2223b00361a396177a9cb410ff61f20015ad"
        );
    }

    #[test]
    fn lines_count_and_bounds() {
        assert_eq!(Lines::new("").count(), 0);
        assert_eq!(Lines::new("a").count(), 1);
        assert_eq!(Lines::new("a\n").count(), 1);
        let l = Lines::new("a\r\nbb\nc");
        assert_eq!(l.count(), 3);
        assert_eq!(l.line(1), "a");
        assert_eq!(l.line(3), "c");
        assert_eq!(l.line_of(0), 1);
        assert_eq!(l.line_of(3), 2);
        assert_eq!(l.line_of(7), 3);
    }

    #[test]
    fn window_prefers_line_boundaries_and_counts_scalars() {
        let t = "ab\ncd\nef";
        assert_eq!(
            window(t, 0, t.len(), 4),
            Window {
                start: 0,
                end: 3,
                chars: 3,
                capped: true
            }
        );
        let t = "日本語の文";
        let w = window(t, 0, t.len(), 2);
        assert_eq!((w.chars, &t[..w.end], w.capped), (2, "日本", true));
        let w = window(t, 0, t.len(), 5);
        assert!(!w.capped);
    }

    #[test]
    fn resuming_windows_cover_the_text_exactly() {
        let t = "first line\nsecond 行 line\n\u{1F600}\u{1F600}\u{1F600}\nend";
        for cap in 1..12 {
            let mut at = 0;
            let mut out = String::new();
            while at < t.len() {
                let w = window(t, at, t.len(), cap);
                assert!(w.end > at);
                out.push_str(&t[w.start..w.end]);
                at = w.end;
            }
            assert_eq!(out, t, "cap {cap}");
        }
    }

    #[test]
    fn char_offsets_round_trip() {
        let t = "aé日\u{1F600}z";
        for c in 0..=5 {
            let b = byte_of_char(t, c).unwrap();
            assert_eq!(char_offset(t, b), c);
        }
        assert_eq!(byte_of_char(t, 6), None);
    }
}
