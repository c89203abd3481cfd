//! Reading a file piece by piece under the fixed character cap: the shared
//! engine of vault_scan and manual_scan (seeds 000 and 004), and the output
//! records they share.

use schemars::JsonSchema;
use serde::Serialize;

use crate::args::Args;
use crate::error::{Error, Result};
use crate::text::{self, Lines};

/// A 1-based inclusive line range as the seeds print it.
#[derive(Clone, Copy, Debug, Serialize, JsonSchema, PartialEq, Eq)]
pub struct LineRange {
    pub start_line: u64,
    pub end_line: u64,
}

/// `{ "char_offset": n | null }`
#[derive(Clone, Copy, Debug, Serialize, JsonSchema)]
pub struct CharCursor {
    pub char_offset: Option<u64>,
}

#[derive(Debug, Serialize, JsonSchema)]
pub struct ScanApplied {
    pub max_chars: u64,
}

#[derive(Debug, Serialize, JsonSchema)]
pub struct ScanOutput {
    pub text: String,
    pub applied_range: LineRange,
    pub next_cursor: CharCursor,
    pub eof: bool,
    pub truncated: bool,
    /// `none` or `max_chars`.
    pub truncated_reason: String,
    pub applied: ScanApplied,
}

/// Where a scan starts, as the arguments said (validated against the file later).
#[derive(Clone, Copy, Debug)]
pub enum ScanStart {
    /// `start_line` (wins) or `cursor.start_line`; the flag says which.
    Line {
        line: i64,
        from_cursor: bool,
    },
    /// `cursor.char_offset` (or 004's number|string shorthand).
    Offset(i64),
    Beginning,
}

impl ScanStart {
    /// `start_line`, else `cursor.start_line`, else `cursor.char_offset`, else line 1.
    /// `cursor` may be an object or, where `shorthand` is allowed (004), a
    /// number or numeric string meaning `char_offset`.
    pub fn from_args_with(args: &Args, shorthand: bool) -> Result<ScanStart> {
        let top = args.int("start_line", 1)?;
        let (line, offset) = match args.get("cursor") {
            Some(serde_json::Value::Number(_) | serde_json::Value::String(_)) if shorthand => {
                (None, args.int_lenient("cursor", 0)?)
            }
            _ => match args.obj("cursor")? {
                Some(c) => (c.int("start_line", 1)?, c.int("char_offset", 0)?),
                None => (None, None),
            },
        };
        Ok(match (top, line, offset) {
            (Some(l), _, _) => ScanStart::Line {
                line: l,
                from_cursor: false,
            },
            (None, Some(l), _) => ScanStart::Line {
                line: l,
                from_cursor: true,
            },
            (None, None, Some(o)) => ScanStart::Offset(o),
            _ => ScanStart::Beginning,
        })
    }

    pub fn from_args(args: &Args) -> Result<ScanStart> {
        Self::from_args_with(args, false)
    }
}

/// A bounded read of `[start, limit)` of a file: its text, the lines it
/// spans, and where a scan would resume (the one place vault_read,
/// manual_read and the scans compute these).
pub struct Window {
    pub text: String,
    pub chars: u64,
    pub range: LineRange,
    /// Resume point; null when the text reaches the end of the file.
    pub next_cursor: CharCursor,
    /// The text stops before the end of the file.
    pub truncated: bool,
    /// The character cap (not `limit`) stopped it.
    pub capped: bool,
}

pub fn window(
    content: &str,
    lines: &Lines,
    start: usize,
    limit: usize,
    max_chars: usize,
) -> Window {
    let c = text::cut(lines, start, limit, max_chars);
    let truncated = c.end < content.len();
    Window {
        chars: c.chars as u64,
        range: LineRange {
            start_line: c.start_line as u64,
            end_line: c.end_line as u64,
        },
        next_cursor: CharCursor {
            char_offset: truncated.then(|| text::char_offset(content, c.end) as u64),
        },
        truncated,
        capped: c.capped,
        text: c.text,
    }
}

/// One window of `content` from `start`, at most `max_chars` characters.
pub fn scan(content: &str, start: ScanStart, max_chars: usize) -> Result<ScanOutput> {
    let lines = Lines::new(content);
    let total = lines.count();
    let start_byte = match start {
        ScanStart::Line { line, from_cursor } => {
            let key = if from_cursor {
                "cursor.start_line"
            } else {
                "start_line"
            };
            if line as usize > total.max(1) {
                return Err(Error::invalid_parameter(
                    key,
                    format!(
                        "`{key}` is {line} but the file has {total} line{}",
                        if total == 1 { "" } else { "s" }
                    ),
                )
                .with("total_lines", total as u64));
            }
            lines.start(line as usize)
        }
        ScanStart::Offset(off) => text::byte_of_char(content, off as usize).ok_or_else(|| {
            Error::invalid_parameter(
                "cursor.char_offset",
                format!(
                    "`cursor.char_offset` is {off} but the file has {} characters",
                    content.chars().count()
                ),
            )
        })?,
        ScanStart::Beginning => 0,
    };
    let w = window(content, &lines, start_byte, content.len(), max_chars);
    Ok(ScanOutput {
        applied_range: w.range,
        next_cursor: w.next_cursor,
        eof: !w.truncated,
        truncated: w.truncated,
        truncated_reason: if w.capped { "max_chars" } else { "none" }.to_owned(),
        applied: ScanApplied {
            max_chars: max_chars as u64,
        },
        text: w.text,
    })
}
