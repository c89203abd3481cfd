//! Where a markdown link's destination is written. pulldown-cmark gives a
//! link's whole span and its destination decoded (escapes and entities
//! resolved), not the destination's own bytes; a move must replace exactly
//! those bytes and nothing else (never a title that happens to repeat the
//! destination), so they are found here by CommonMark's grammar for a link
//! destination, starting where the grammar says it starts.

use std::ops::Range;

/// The raw destination of an inline link `[text](dest "title")` or an
/// image, whose text ends at `text_end` (the end of its last inner event,
/// or just after `[` when it has none): the bytes of `dest` (inside `<` `>`
/// when angled) and whether it is angled.
pub fn inline(text: &str, text_end: usize, span_end: usize) -> Option<(Range<usize>, bool)> {
    let rest = text.get(text_end..span_end)?;
    let open = text_end + rest.find("](")? + 2;
    scan(text, open, span_end)
}

/// The raw destination of a reference definition `[label]: dest "title"`
/// that starts at or after `span.start`.
pub fn definition(text: &str, span: Range<usize>) -> Option<(Range<usize>, bool)> {
    let bytes = text.as_bytes();
    let mut i = span.start + text.get(span.clone())?.find('[')? + 1;
    // The label holds no unescaped bracket.
    while i < span.end {
        match bytes[i] {
            b'\\' => i += 2,
            b']' => break,
            _ => i += 1,
        }
    }
    if bytes.get(i + 1) != Some(&b':') {
        return None;
    }
    scan(text, i + 2, span.end)
}

/// The destination that starts after optional spaces and at most one line
/// break from `at`.
fn scan(text: &str, at: usize, end: usize) -> Option<(Range<usize>, bool)> {
    let bytes = &text.as_bytes()[..end.min(text.len())];
    let mut i = at;
    let mut breaks = 0;
    while let Some(&b) = bytes.get(i) {
        match b {
            b' ' | b'\t' => i += 1,
            b'\n' | b'\r' if breaks == 0 => {
                breaks += 1;
                i += 1;
            }
            _ => break,
        }
    }
    if bytes.get(i) == Some(&b'<') {
        let start = i + 1;
        let mut j = start;
        while let Some(&b) = bytes.get(j) {
            match b {
                b'\\' => j += 2,
                b'>' => return Some((start..j, true)),
                b'\n' | b'\r' | b'<' => return None,
                _ => j += 1,
            }
        }
        return None;
    }
    let start = i;
    let mut depth = 0usize;
    let mut j = start;
    while let Some(&b) = bytes.get(j) {
        match b {
            b'\\' if bytes.get(j + 1).is_some_and(u8::is_ascii_punctuation) => j += 2,
            b'(' => {
                depth += 1;
                j += 1;
            }
            b')' if depth == 0 => break,
            b')' => {
                depth -= 1;
                j += 1;
            }
            b if b.is_ascii_whitespace() || b.is_ascii_control() => break,
            _ => j += 1,
        }
    }
    (j > start).then_some((start..j, false))
}

/// `raw` with CommonMark's backslash escapes removed: what pulldown-cmark
/// decodes a destination to when it holds no entity.
fn unescaped(raw: &str) -> String {
    let mut out = String::with_capacity(raw.len());
    let mut chars = raw.chars().peekable();
    while let Some(c) = chars.next() {
        match chars.peek() {
            Some(&n) if c == '\\' && n.is_ascii_punctuation() => {
                out.push(n);
                chars.next();
            }
            _ => out.push(c),
        }
    }
    out
}

/// Whether `raw` is the writing of the destination pulldown-cmark decoded
/// as `dest`: a check that the grammar above found the same bytes the
/// parser read. Entities are taken on trust (their table is the parser's).
pub fn spells(raw: &str, dest: &str) -> bool {
    raw.contains('&') || unescaped(raw) == dest
}

/// The end of the path part of a raw destination: its first `#` that is
/// not escaped.
pub fn path_end(raw: &str) -> usize {
    let b = raw.as_bytes();
    let mut i = 0;
    while i < b.len() {
        match b[i] {
            b'\\' => i += 2,
            b'#' => return i,
            _ => i += 1,
        }
    }
    raw.len()
}

#[cfg(test)]
mod tests {
    use super::*;

    fn inline_of(s: &str) -> &str {
        let (r, _) = inline(s, s.find(']').unwrap(), s.len()).unwrap();
        &s[r]
    }

    #[test]
    fn the_destination_is_found_by_the_grammar_not_by_its_text() {
        assert_eq!(inline_of("[Draft.md](Draft.md \"Draft.md\")"), "Draft.md");
        assert_eq!(inline_of("[x](a(b)c.md 'a(b)c.md')"), "a(b)c.md");
        assert_eq!(inline_of("[x](Plan\\_v2.md)"), "Plan\\_v2.md");
        assert_eq!(inline_of("[x](a\\)b.md)"), "a\\)b.md");
        assert_eq!(inline_of("[x](\n  <a b.md> (t))"), "a b.md");
        let s = "[r]: <my note.md> \"t\"";
        assert_eq!(&s[definition(s, 0..s.len()).unwrap().0], "my note.md");
        let s = "[a\\]b]:\n  x.md";
        assert_eq!(&s[definition(s, 0..s.len()).unwrap().0], "x.md");
    }

    #[test]
    fn a_spelling_is_checked_against_the_parser_s_reading() {
        assert!(spells("Plan\\_v2.md", "Plan_v2.md"));
        assert!(spells("A&amp;B.md", "A&B.md"));
        assert!(!spells("Draft.md", "Other.md"));
        assert_eq!(path_end("a.md#h"), 4);
        assert_eq!(path_end("a\\#b.md#h"), 7);
    }
}
