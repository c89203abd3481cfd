//! Citations of source lines written in an artifact: `L12`, `L12-L18`
//! (`-`, `–`, `—` or `~` between, the second `L` optional),
//! `(source.md:12-18)` (several ranges after the colon, comma-separated) and
//! `source_lines: 12-18, 30` markers (to the end of the line, brackets
//! allowed). `L` forms and `source_lines:` cite the audited source; a
//! parenthesised citation cites the file it names, which counts only when
//! that name is the source's path, a trailing part of it, or its name
//! without `.md`.

use std::ops::Range;

/// One citation found in a text.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Cite {
    /// Where it is written (byte offsets in the scanned text).
    pub span: Range<usize>,
    /// Inclusive line ranges, as written (start may be 0 or past the source).
    pub ranges: Vec<(u32, u32)>,
    /// It cites the audited source (not another file).
    pub this_source: bool,
}

fn is_word(c: char) -> bool {
    c.is_alphanumeric() || c == '_'
}

/// Digits at `i`: (value, saturating at u32::MAX; byte after them).
fn number(s: &str, i: usize) -> Option<(u32, usize)> {
    let digits = s[i..].bytes().take_while(u8::is_ascii_digit).count();
    if digits == 0 {
        return None;
    }
    let v = s[i..i + digits].bytes().fold(0u64, |v, d| {
        (v * 10 + u64::from(d - b'0')).min(u64::from(u32::MAX))
    });
    Some((v as u32, i + digits))
}

fn skip_spaces(s: &str, mut i: usize) -> usize {
    while s[i..].starts_with([' ', '\t']) {
        i += 1;
    }
    i
}

/// A range dash at `i` (after optional spaces): the byte after it.
fn dash(s: &str, i: usize) -> Option<usize> {
    let i = skip_spaces(s, i);
    let c = s[i..].chars().next()?;
    matches!(c, '-' | '–' | '—' | '~').then(|| skip_spaces(s, i + c.len_utf8()))
}

/// `N`, `LN`, `N-M`, `LN-LM` at `i`: the range and the byte after it.
fn range(s: &str, i: usize) -> Option<((u32, u32), usize)> {
    let lead = usize::from(s[i..].starts_with('L'));
    let (a, mut end) = number(s, i + lead)?;
    let mut b = a;
    if let Some(j) = dash(s, end) {
        let lead = usize::from(s[j..].starts_with('L'));
        if let Some((v, e)) = number(s, j + lead) {
            b = v;
            end = e;
        }
    }
    Some(((a.min(b), a.max(b)), end))
}

/// Comma-separated ranges at `i` (spaces allowed): ranges and the byte after.
fn range_list(s: &str, mut i: usize) -> (Vec<(u32, u32)>, usize) {
    let mut out = Vec::new();
    loop {
        let j = skip_spaces(s, i);
        let Some((r, end)) = range(s, j) else {
            return (out, i);
        };
        out.push(r);
        i = end;
        let k = skip_spaces(s, i);
        if s[k..].starts_with(',') {
            i = k + 1;
        } else {
            return (out, i);
        }
    }
}

/// Does the name written in a citation denote `source`?
fn names_source(name: &str, source: &str) -> bool {
    let trim = |p: &str| {
        p.strip_suffix(".md")
            .unwrap_or(p)
            .trim_start_matches("./")
            .to_owned()
    };
    let (name, source) = (trim(name), trim(source));
    source == name || source.ends_with(&format!("/{name}"))
}

/// Every citation in `text`, in order.
pub fn scan(text: &str, source: &str) -> Vec<Cite> {
    let mut out = Vec::new();
    let mut i = 0;
    while i < text.len() {
        let rest = &text[i..];
        let prev = text[..i].chars().next_back();
        let at_word_start = !prev.is_some_and(is_word);
        if at_word_start && rest.len() >= 13 && rest[..13].eq_ignore_ascii_case("source_lines:") {
            let start = skip_spaces(text, i + 13);
            let open = usize::from(text[start..].starts_with('['));
            let (ranges, mut end) = range_list(text, start + open);
            if !ranges.is_empty() {
                if open == 1 && text[skip_spaces(text, end)..].starts_with(']') {
                    end = skip_spaces(text, end) + 1;
                }
                out.push(Cite {
                    span: i..end,
                    ranges,
                    this_source: true,
                });
                i = end;
                continue;
            }
        }
        if at_word_start
            && rest.starts_with('L')
            && let Some((r, end)) = range(text, i)
            && !text[end..].chars().next().is_some_and(is_word)
        {
            out.push(Cite {
                span: i..end,
                ranges: vec![r],
                this_source: true,
            });
            i = end;
            continue;
        }
        if rest.starts_with('(')
            && let Some(colon) = rest.find(':')
        {
            let name = &rest[1..colon];
            // A file name: a path-like word, or the source's own name.
            let plausible = !name.is_empty()
                && !name.contains(|c: char| c.is_whitespace() || "()[]".contains(c))
                && (name.contains(['.', '/']) || names_source(name, source));
            if plausible {
                let (ranges, end) = range_list(text, i + colon + 1);
                let close = skip_spaces(text, end);
                if !ranges.is_empty() && text[close..].starts_with(')') {
                    out.push(Cite {
                        span: i..close + 1,
                        ranges,
                        this_source: names_source(name, source),
                    });
                    i = close + 1;
                    continue;
                }
            }
        }
        i += rest.chars().next().map_or(1, char::len_utf8);
    }
    out
}

/// `text` without its citations (for titles and for telling a line that only
/// cites from one that says something).
pub fn strip(text: &str, cites: &[Cite]) -> String {
    let mut out = String::with_capacity(text.len());
    let mut at = 0;
    for c in cites {
        out.push_str(&text[at..c.span.start]);
        at = c.span.end;
    }
    out.push_str(&text[at..]);
    out
}

#[cfg(test)]
mod tests {
    use super::*;

    fn ranges(text: &str) -> Vec<(u32, u32, bool)> {
        scan(text, "notes/source.md")
            .into_iter()
            .flat_map(|c| {
                c.ranges
                    .into_iter()
                    .map(move |(a, b)| (a, b, c.this_source))
            })
            .collect()
    }

    #[test]
    fn line_forms() {
        assert_eq!(ranges("see L12"), vec![(12, 12, true)]);
        assert_eq!(
            ranges("L12-L18 and L3–5, L7 ~ L9."),
            vec![(12, 18, true), (3, 5, true), (7, 9, true)]
        );
        assert_eq!(ranges("(L20-L10)"), vec![(10, 20, true)]);
    }

    #[test]
    fn words_that_only_look_like_citations_are_not() {
        assert!(ranges("HTML5 uses XL12 and L12a or URL1").is_empty());
        assert!(ranges("Level 3 of Lx").is_empty());
    }

    #[test]
    fn parenthesised_citations_name_their_file() {
        assert_eq!(ranges("(source.md:12-18)"), vec![(12, 18, true)]);
        assert_eq!(ranges("(notes/source.md:3)"), vec![(3, 3, true)]);
        assert_eq!(ranges("(source:4-5, 9)"), vec![(4, 5, true), (9, 9, true)]);
        assert_eq!(ranges("(other.md:1-2)"), vec![(1, 2, false)]);
        assert_eq!(ranges("(ratio: 3)"), vec![]);
        assert!(ranges("(see: later)").is_empty());
    }

    #[test]
    fn source_lines_markers() {
        assert_eq!(
            ranges("source_lines: 12-18, 30"),
            vec![(12, 18, true), (30, 30, true)]
        );
        assert_eq!(
            ranges("Source_Lines: [L1-L4, 9-10]"),
            vec![(1, 4, true), (9, 10, true)]
        );
        assert!(ranges("source_lines: none").is_empty());
    }

    #[test]
    fn huge_numbers_saturate() {
        assert_eq!(ranges("L99999999999"), vec![(u32::MAX, u32::MAX, true)]);
    }

    #[test]
    fn strip_removes_the_citations() {
        let t = "Install it (L3-L5) then run source_lines: 9";
        assert_eq!(strip(t, &scan(t, "s.md")), "Install it () then run ");
    }
}
