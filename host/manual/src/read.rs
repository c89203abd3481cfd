//! manual_read and manual_scan (seed 004).

use schemars::JsonSchema;
use serde::Serialize;

use super::{FileType, Manuals};
use crate::args::{Input, line_in};
use crate::error::{Code, Error, Result};
use crate::scan::{self, CharCursor, Cursor, LineRange, ScanOutput, ScanStart};
use crate::text::{Lines, markdown};

/// `max_sections` of scope=sections (fixed by 004).
const MAX_SECTIONS: usize = 20;
/// A snippet: this many lines from `start_line`, at most this many characters.
const SNIPPET_LINES: usize = 5;
const SNIPPET_CHARS: usize = 1200;

#[derive(Debug, Serialize, JsonSchema)]
pub struct ReadApplied {
    /// `snippet`, `section`, `sections` or `file`.
    pub scope: String,
    pub max_sections: Option<u64>,
    pub max_chars: u64,
    /// `read`, or `scan_fallback` when a section was asked for again.
    pub mode: String,
}

#[derive(Debug, Serialize, JsonSchema)]
pub struct ReadOutput {
    pub text: String,
    /// The text stops before the end of the file.
    pub truncated: bool,
    /// `none`, `scope_end` (the scope ended first) or `max_chars`.
    pub truncated_reason: String,
    /// Lines the text spans.
    pub applied_range: LineRange,
    /// Where manual_scan would continue (null at the end of the file).
    pub next_cursor: CharCursor,
    pub applied: ReadApplied,
}

/// How [`Manuals::read_ref`] reads.
pub struct RefRead {
    /// The argument holding the reference (`ref`, or the bridge's `from_ref`).
    pub key: &'static str,
    pub max_chars: usize,
    /// Count the read as the session's (004's repeated-section fallback).
    pub session: bool,
}

#[derive(Debug, Serialize, JsonSchema)]
pub struct ManualScanOutput {
    pub manual_id: String,
    pub path: String,
    #[serde(flatten)]
    pub scan: ScanOutput,
}

/// Move byte `b` back (`forward=false`) or forward by up to `n` characters.
fn shift(text: &str, b: usize, n: usize, forward: bool) -> usize {
    if n == 0 {
        return b;
    }
    if forward {
        text[b..]
            .char_indices()
            .nth(n)
            .map_or(text.len(), |(i, _)| b + i)
    } else {
        text[..b]
            .char_indices()
            .rev()
            .nth(n - 1)
            .map_or(0, |(i, _)| i)
    }
}

/// The ways manual_read reads around a line.
pub const SCOPES: [&str; 4] = ["snippet", "section", "sections", "file"];

#[derive(Input)]
pub struct ReadInput {
    /// A manual_find next_action's ref
    pub r#ref: ManualRef,
    /// How much around the line (default section)
    #[arg(one_of = SCOPES)]
    pub scope: Option<&'static str>,
    /// Allow a whole .md file (needs ALLOW_FILE_SCOPE)
    pub allow_file: Option<bool>,
    /// Context around a snippet
    pub expand: Option<Expand>,
}

/// A place in a manual, as manual_find's next actions give it.
#[derive(Input)]
pub struct ManualRef {
    /// Manual id (folder name)
    pub manual_id: String,
    /// File in the manual
    pub path: String,
    /// A line in the section (default 1)
    #[arg(min = 1)]
    pub start_line: Option<i64>,
}

#[derive(Input, Default)]
pub struct Expand {
    /// Chars before
    #[arg(min = 0)]
    pub before_chars: Option<i64>,
    /// Chars after
    #[arg(min = 0)]
    pub after_chars: Option<i64>,
}

#[derive(Input)]
pub struct ScanInput {
    /// Manual id (folder name)
    pub manual_id: String,
    /// File in the manual
    pub path: String,
    /// Start line, 1-based (wins over cursor)
    #[arg(min = 1)]
    pub start_line: Option<i64>,
    /// Previous call's next_cursor
    pub cursor: Option<Cursor>,
}

impl Manuals {
    pub fn read(&self, input: ReadInput) -> Result<ReadOutput> {
        self.read_ref(
            input,
            &RefRead {
                key: "ref",
                max_chars: self.max_chars,
                session: true,
            },
        )
    }

    /// manual_read's reading, shared with the bridge tools (which read under
    /// their own `max_chars`, and do not count as the session's reads);
    /// `how.key` names the reference in errors.
    pub fn read_ref(&self, input: ReadInput, how: &RefRead) -> Result<ReadOutput> {
        let r = &input.r#ref;
        let at = format!("{}.", how.key);
        let (manual, full, ty) = self.file(&r.manual_id, &r.path, &at)?;
        let start = r.start_line;
        let scope = input.scope;
        let allow_file = input.allow_file;
        let expand = input.expand.unwrap_or_default();
        let (before, after) = (
            expand.before_chars.unwrap_or(0),
            expand.after_chars.unwrap_or(0),
        );
        let scope = scope.unwrap_or(match ty {
            FileType::Md => "section",
            FileType::Json => "file",
        });
        self.check_scope(ty, scope, allow_file)?;
        let content = self.root.read_text(&full)?;
        let lines = Lines::new(&content);
        let total = lines.count();
        let line = line_in(&format!("{at}start_line"), start.unwrap_or(1), total)?;
        let path_in_manual = full.segments()[1..].join("/");
        let (from, to, mode) = match scope {
            "file" => (1, total, "read"),
            "snippet" => (line, (line + SNIPPET_LINES - 1).min(total), "read"),
            _ => {
                let sections = markdown::sections(&content);
                let idx = sections
                    .iter()
                    .rposition(|s| s.start_line <= line)
                    .unwrap_or(0);
                let Some(sec) = sections.get(idx) else {
                    // A file with no text at all.
                    return Ok(self.window(
                        &content,
                        &lines,
                        (1, 0),
                        (0, 0),
                        scope,
                        "read",
                        None,
                        how.max_chars,
                    ));
                };
                let mut end = sec.end_line;
                if scope == "sections" {
                    for s in sections.iter().skip(idx + 1).take(MAX_SECTIONS - 1) {
                        if s.level <= sec.level {
                            break;
                        }
                        end = s.end_line;
                    }
                }
                let key = (manual.to_string(), path_in_manual.clone(), sec.start_line);
                if how.session && scope == "section" && self.seen_before(key) && end < total {
                    // 004: the same section asked for again means "go on": scan
                    // the file from the line after it.
                    return scan_fallback(&content, end + 1, scope, how.max_chars);
                }
                (sec.start_line, end, "read")
            }
        };
        let max_sections = (scope == "sections").then_some(MAX_SECTIONS as u64);
        Ok(self.window(
            &content,
            &lines,
            (from, to),
            (before as usize, after as usize),
            scope,
            mode,
            max_sections,
            how.max_chars,
        ))
    }

    /// The scope fits the file's type, and a whole .md file is read only
    /// when both the server and the call allow it.
    fn check_scope(&self, ty: FileType, scope: &str, allow_file: Option<bool>) -> Result<()> {
        if ty == FileType::Json && matches!(scope, "section" | "sections") {
            return Err(Error::new(
                Code::InvalidScope,
                format!("`{scope}` does not apply to a .json file; use scope=file or snippet"),
            )
            .with("scope", scope));
        }
        if ty == FileType::Md
            && scope == "file"
            && !(self.allow_file_scope && allow_file == Some(true))
        {
            return Err(Error::new(
                Code::Forbidden,
                "a whole .md file is read only when the server allows it (ALLOW_FILE_SCOPE=true) and the call sets allow_file=true; \
                 read by section or scan with manual_scan",
            )
            .with("allow_file_scope", self.allow_file_scope)
            .with("allow_file", allow_file.unwrap_or(false)));
        }
        Ok(())
    }

    #[allow(clippy::too_many_arguments)]
    fn window(
        &self,
        content: &str,
        lines: &Lines,
        (from, to): (usize, usize),
        (before, after): (usize, usize),
        scope: &str,
        mode: &str,
        max_sections: Option<u64>,
        max_chars: usize,
    ) -> ReadOutput {
        let total = lines.count();
        let (mut s, mut e) = if total == 0 {
            (0, 0)
        } else {
            (lines.start(from), lines.end(to))
        };
        s = shift(content, s, before, false);
        e = shift(content, e, after, true);
        let cap = if scope == "snippet" {
            (SNIPPET_CHARS + before + after).min(max_chars)
        } else {
            max_chars
        };
        let w = scan::window(content, lines, s, e, cap);
        ReadOutput {
            truncated: w.truncated,
            truncated_reason: if w.capped {
                "max_chars"
            } else if w.truncated {
                "scope_end"
            } else {
                "none"
            }
            .into(),
            applied_range: w.range,
            next_cursor: w.next_cursor,
            applied: ReadApplied {
                scope: scope.into(),
                max_sections,
                max_chars: max_chars as u64,
                mode: mode.into(),
            },
            text: w.text,
        }
    }

    pub fn scan(&self, input: ScanInput) -> Result<ManualScanOutput> {
        let (manual, full, _) = self.file(&input.manual_id, &input.path, "")?;
        let start = ScanStart::new(input.start_line, input.cursor);
        // Streamed: only the returned window is held, whatever the file's size.
        let file = self.root.open_file(&full)?;
        Ok(ManualScanOutput {
            manual_id: manual.to_string(),
            path: full.segments()[1..].join("/"),
            scan: scan::scan_stream(file, start, self.max_chars, |e| {
                crate::fs::io_error(e, &full)
            })?,
        })
    }
}

/// manual_read's answer when it scans on from `line` instead of reading.
fn scan_fallback(content: &str, line: usize, scope: &str, max_chars: usize) -> Result<ReadOutput> {
    let s = scan::scan(
        content,
        ScanStart::Line {
            line: line as i64,
            from_cursor: false,
        },
        max_chars,
    )?;
    Ok(ReadOutput {
        truncated: !s.eof,
        truncated_reason: if s.eof {
            "none"
        } else {
            s.truncated_reason.as_str()
        }
        .into(),
        applied_range: s.applied_range,
        next_cursor: s.next_cursor,
        applied: ReadApplied {
            scope: scope.into(),
            max_sections: None,
            max_chars: max_chars as u64,
            mode: "scan_fallback".into(),
        },
        text: s.text,
    })
}

#[cfg(test)]
mod tests {
    use super::shift;

    #[test]
    fn shift_moves_by_characters() {
        let t = "aé日\u{1F600}z";
        assert_eq!(shift(t, t.len(), 2, false), t.len() - 5); // 😀 (4 bytes) + z
        assert_eq!(shift(t, 0, 2, true), 3);
        assert_eq!(shift(t, 0, 99, true), t.len());
        assert_eq!(shift(t, 3, 99, false), 0);
        assert_eq!(shift(t, 3, 0, false), 3);
    }
}
