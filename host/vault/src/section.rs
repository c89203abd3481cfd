//! vault_edit: append to, prepend to or replace the body of one section of
//! a note, named by its heading path (`Projects > Kura`, or its last
//! headings while they name one section). A section runs from its heading
//! to the next heading of the same or a higher level: its subsections are
//! part of it. The optimistic-concurrency check is vibe's `update_doc`'s:
//! `expected_hash`, the SHA-256 vault_read reports, refuses the write with
//! `conflict` when the note changed since it was read.

use schemars::JsonSchema;
use serde::Serialize;

use super::Vault;
use crate::args::Input;
use crate::error::{Code, Error, Result};
use crate::fs::RelPath;
use crate::plugins::WriteKind;
use crate::text::markdown::{Section, sections};
use crate::text::{Lines, sha256};

/// How vault_edit changes the section.
pub const EDITS: [&str; 3] = ["append", "prepend", "replace"];

#[derive(Input)]
pub struct EditInput {
    /// Existing note, vault-relative
    pub path: String,
    /// Heading path: `Projects > Kura`, or `Kura` if unique
    #[arg(nonempty)]
    pub heading: String,
    /// At section end, under its heading, or instead of its body
    #[arg(one_of = EDITS)]
    pub mode: &'static str,
    /// Text to add, or the new body
    #[arg(text)]
    pub content: String,
    /// vault_read's `hash`; changed since: `conflict`
    pub expected_hash: Option<String>,
}

#[derive(Debug, Serialize, JsonSchema)]
pub struct EditOutput {
    pub written_path: String,
    /// The section's lines after the edit, heading included.
    pub start_line: u64,
    pub end_line: u64,
    /// The note's SHA-256 after the edit (the next edit's `expected_hash`).
    pub hash: String,
}

fn words(heading: &str) -> Vec<String> {
    heading
        .split('>')
        .map(|s| s.trim().trim_start_matches('#').trim().to_lowercase())
        .collect()
}

/// The one section whose heading path ends with `wanted`.
fn pick<'a>(all: &'a [Section], wanted: &str, path: &RelPath) -> Result<&'a Section> {
    let want = words(wanted);
    let fits: Vec<&Section> = all
        .iter()
        .filter(|s| s.level > 0 && s.path.len() >= want.len())
        .filter(|s| {
            let tail = &s.path[s.path.len() - want.len()..];
            tail.iter()
                .zip(&want)
                .all(|(a, b)| a.trim().to_lowercase() == *b)
        })
        .collect();
    let name = |s: &Section| s.path.join(" > ");
    match fits.as_slice() {
        [one] => Ok(one),
        [] => {
            let have: Vec<String> = all
                .iter()
                .filter(|s| s.level > 0)
                .map(name)
                .take(30)
                .collect();
            Err(Error::new(
                Code::NotFound,
                format!(
                    "`{path}` has no heading `{wanted}`; its headings: {}",
                    have.join("; ")
                ),
            )
            .with("path", path.to_string()))
        }
        many => Err(Error::invalid_parameter(
            "heading",
            format!(
                "`{wanted}` names {} sections of `{path}`; give more of the path: {}",
                many.len(),
                many.iter().map(|s| name(s)).collect::<Vec<_>>().join("; ")
            ),
        )),
    }
}

/// Byte offsets in `text` of the section's body: after its heading (a
/// setext heading's underline included) to the start of the next heading
/// of the same or a higher level.
fn body(text: &str, all: &[Section], s: &Section) -> (usize, usize) {
    let lines = Lines::new(text);
    let mut head_end = s.start_line;
    let next = lines.line(s.start_line + 1);
    let underline = !next.trim().is_empty()
        && next.trim().chars().all(|c| c == '=' || c == '-')
        && !lines.line(s.start_line).trim_start().starts_with('#');
    if underline && s.start_line < lines.count() {
        head_end += 1;
    }
    let start = lines.end(head_end);
    let end = all
        .iter()
        .find(|o| o.start_line > s.start_line && o.level > 0 && o.level <= s.level)
        .map_or(text.len(), |o| lines.start(o.start_line));
    (start.min(text.len()), end.max(start.min(text.len())))
}

/// The note's new text: `content` appended, prepended or in place of the body.
fn edit(text: &str, (start, end): (usize, usize), mode: &str, content: &str) -> String {
    let mut add = content.to_owned();
    if !add.is_empty() && !add.ends_with('\n') {
        add.push('\n');
    }
    let mut out = String::with_capacity(text.len() + add.len() + 1);
    let head = &text[..start];
    out.push_str(head);
    if !head.is_empty() && !head.ends_with('\n') {
        out.push('\n'); // a heading on the file's last line
    }
    let old = &text[start..end];
    match mode {
        "prepend" => {
            out.push_str(&add);
            out.push_str(old);
        }
        "append" => {
            // After the body's last line that is not blank: the blank lines
            // that set the next heading apart stay where they are.
            let kept = old.trim_end_matches(['\n', '\r', ' ', '\t']);
            let cut = if kept.is_empty() {
                0
            } else {
                kept.len()
                    + old[kept.len()..]
                        .find('\n')
                        .map_or(old.len() - kept.len(), |i| i + 1)
            };
            out.push_str(&old[..cut]);
            if cut > 0 && !old[..cut].ends_with('\n') {
                out.push('\n');
            }
            out.push_str(&add);
            out.push_str(&old[cut..]);
        }
        _ => {
            out.push_str(&add);
            // Keep the blank line before the next heading.
            if end < text.len() && old.ends_with("\n\n") && !add.ends_with("\n\n") {
                out.push('\n');
            }
        }
    }
    out.push_str(&text[end..]);
    out
}

impl Vault {
    pub fn edit(&self, input: EditInput) -> Result<EditOutput> {
        let path = RelPath::parse(&input.path, false)?;
        let done = self.root.update(&path, |current| {
            let Some(current) = current else {
                // The policy still speaks first for a reserved path.
                self.policy("vault_edit", WriteKind::Replace, &path, false)?;
                return Err(Error::new(Code::NotFound, format!("`{path}` does not exist"))
                    .with("path", path.to_string()));
            };
            if let Some(want) = &input.expected_hash
                && sha256(current) != want.to_lowercase()
            {
                return Err(Error::new(
                    Code::Conflict,
                    format!("`{path}` changed since it was read (expected_hash does not match); read it again"),
                )
                .with("path", path.to_string())
                .with("expected_hash", want.as_str()));
            }
            let text = std::str::from_utf8(current).map_err(|_| {
                Error::invalid_parameter("path", format!("`{path}` is not a UTF-8 text file"))
            })?;
            let all = sections(text);
            let s = pick(&all, &input.heading, &path)?;
            let range = body(text, &all, s);
            let new = edit(text, range, input.mode, &input.content);
            // Only an edit that adds at the very end is an append (all a
            // daily note takes); any other is a replace.
            let kind = if new.starts_with(text) {
                WriteKind::Append
            } else {
                WriteKind::Replace
            };
            self.policy("vault_edit", kind, &path, true)?;
            let heading = s.start_line as u64;
            let after = sections(&new);
            let end = after
                .iter()
                .find(|o| o.start_line as u64 > heading && o.level > 0 && o.level <= s.level)
                .map_or(Lines::new(&new).count() as u64, |o| o.start_line as u64 - 1);
            let hash = sha256(new.as_bytes());
            Ok(Some((new.into_bytes(), (heading, end, hash))))
        })?;
        let (start_line, end_line, hash) = done.expect("an edit always writes");
        self.index.written(&self.root, &path);
        tracing::info!(tool = "vault_edit", path = %path, mode = input.mode, "write");
        Ok(EditOutput {
            written_path: path.to_string(),
            start_line,
            end_line,
            hash,
        })
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    const NOTE: &str = "# Projects\nintro\n\n## Kura\n- one\n\n### Notes\nn\n\n## Other\nx\n";

    fn apply(heading: &str, mode: &str, content: &str) -> String {
        let all = sections(NOTE);
        let p = RelPath::parse("n.md", false).unwrap();
        let s = pick(&all, heading, &p).unwrap();
        edit(NOTE, body(NOTE, &all, s), mode, content)
    }

    #[test]
    fn append_goes_after_the_section_and_its_subsections() {
        assert_eq!(
            apply("Projects > Kura", "append", "- two"),
            "# Projects\nintro\n\n## Kura\n- one\n\n### Notes\nn\n- two\n\n## Other\nx\n"
        );
        assert_eq!(
            apply("other", "append", "y"),
            "# Projects\nintro\n\n## Kura\n- one\n\n### Notes\nn\n\n## Other\nx\ny\n"
        );
    }

    #[test]
    fn prepend_goes_right_under_the_heading() {
        assert_eq!(
            apply("## Kura", "prepend", "first"),
            "# Projects\nintro\n\n## Kura\nfirst\n- one\n\n### Notes\nn\n\n## Other\nx\n"
        );
    }

    #[test]
    fn replace_swaps_the_body_and_keeps_the_gap_before_the_next_heading() {
        assert_eq!(
            apply("Kura", "replace", "new body"),
            "# Projects\nintro\n\n## Kura\nnew body\n\n## Other\nx\n"
        );
    }

    #[test]
    fn a_heading_named_twice_needs_its_path() {
        let text = "# A\n## Log\nx\n# B\n## Log\ny\n";
        let all = sections(text);
        let p = RelPath::parse("n.md", false).unwrap();
        assert_eq!(
            pick(&all, "Log", &p).unwrap_err().code,
            Code::InvalidParameter
        );
        assert_eq!(pick(&all, "B > Log", &p).unwrap().start_line, 5);
        assert_eq!(pick(&all, "Nope", &p).unwrap_err().code, Code::NotFound);
    }

    #[test]
    fn a_setext_heading_s_underline_stays_with_it() {
        let text = "Title\n=====\nbody\n";
        let all = sections(text);
        let s = pick(&all, "Title", &RelPath::parse("n.md", false).unwrap()).unwrap();
        assert_eq!(
            edit(text, body(text, &all, s), "prepend", "top"),
            "Title\n=====\ntop\nbody\n"
        );
    }

    #[test]
    fn a_heading_on_the_last_line_without_newline_gets_its_body_below() {
        let text = "# Only";
        let all = sections(text);
        let s = pick(&all, "Only", &RelPath::parse("n.md", false).unwrap()).unwrap();
        assert_eq!(
            edit(text, body(text, &all, s), "append", "x"),
            "# Only\nx\n"
        );
    }
}
