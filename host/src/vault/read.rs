//! vault_ls, vault_read and vault_scan (seed 000).

use schemars::JsonSchema;
use serde::Serialize;

use super::{CharCursor, LineRange, Vault};
use crate::args::Args;
use crate::error::{Error, Result};
use crate::fs::{EntryKind, RelPath};
use crate::text::{self, Lines};

#[derive(Debug, Serialize, JsonSchema)]
pub struct LsItem {
    pub name: String,
    pub path: String,
    /// `dir` or `file`.
    pub kind: String,
}

#[derive(Debug, Serialize, JsonSchema)]
pub struct LsOutput {
    /// The listed folder, or null for the vault root.
    pub base_path: Option<String>,
    pub items: Vec<LsItem>,
}

#[derive(Debug, Serialize, JsonSchema)]
pub struct ReadApplied {
    pub full: bool,
    pub max_chars: u64,
}

#[derive(Debug, Serialize, JsonSchema)]
pub struct ReadOutput {
    pub text: String,
    pub truncated: bool,
    pub returned_chars: u64,
    pub applied_range: LineRange,
    pub next_cursor: CharCursor,
    /// `none`, `range_end` or `max_chars`.
    pub truncated_reason: String,
    pub applied: ReadApplied,
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

/// The common result of cutting a window out of a file.
struct Cut {
    text: String,
    chars: usize,
    start_line: usize,
    end_line: usize,
    /// Byte where the window ends.
    end: usize,
    capped: bool,
}

fn cut(lines: &Lines, start: usize, limit: usize, max_chars: usize) -> Cut {
    let t = lines.text();
    let w = text::window(t, start, limit, max_chars);
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

/// A line number in `1..=total`; an empty file accepts line 1 (and yields nothing).
fn check_line(args: &Args, key: &str, line: i64, total: usize) -> Result<usize> {
    let line = line as usize;
    if line > total.max(1) {
        let name = args.name(key);
        return Err(Error::invalid_parameter(
            &name,
            format!(
                "`{name}` is {line} but the file has {total} line{}",
                if total == 1 { "" } else { "s" }
            ),
        )
        .with("total_lines", total as u64));
    }
    Ok(line)
}

impl Vault {
    pub fn ls(&self, args: Args) -> Result<LsOutput> {
        // 000's `path`; 001's `relative_dir` is accepted as the same thing.
        let raw = match args.str("path")? {
            Some(p) => Some(p),
            None => args.str("relative_dir")?,
        };
        let dir = RelPath::parse(raw.unwrap_or(""), true)?;
        let entries = self.root.list(&dir)?;
        let base = (!dir.is_root()).then(|| dir.to_string());
        Ok(LsOutput {
            base_path: base,
            items: entries
                .into_iter()
                .map(|e| LsItem {
                    path: dir.join(&e.name).to_string(),
                    name: e.name,
                    kind: match e.kind {
                        EntryKind::Dir => "dir",
                        EntryKind::File => "file",
                    }
                    .to_owned(),
                })
                .collect(),
        })
    }

    fn file_path(&self, args: &Args) -> Result<RelPath> {
        RelPath::parse(args.req_str("path")?, false)
    }

    pub fn read(&self, args: Args) -> Result<ReadOutput> {
        let path = self.file_path(&args)?;
        let full = args.bool("full")?.unwrap_or(false);
        let range = args.obj("range")?;
        let (start, end) = match &range {
            Some(r) => (r.int("start_line", 1)?, r.int("end_line", 1)?),
            None => (None, None),
        };
        if let (Some(s), Some(e)) = (start, end)
            && s > e
        {
            return Err(Error::invalid_parameter(
                "range",
                format!("`range.start_line` ({s}) must not be greater than `range.end_line` ({e})"),
            ));
        }
        if !full && range.is_none() {
            return Err(Error::invalid_parameter(
                "range",
                "`range` is required when `full` is false (give `range.start_line`/`end_line`, or `full: true`)",
            ));
        }
        let content = self.root.read_text(&path)?;
        let lines = Lines::new(&content);
        let total = lines.count();
        let (from, to) = if full {
            (1, total.max(1))
        } else {
            let r = range.as_ref().expect("checked above");
            let from = check_line(r, "start_line", start.unwrap_or(1), total)?;
            // An end past the last line reads to the end (reported in applied_range).
            let to = end
                .map_or(total, |e| (e as usize).min(total))
                .max(from.min(total));
            (from, to)
        };
        let start_byte = lines.start(from);
        let limit = if total == 0 { 0 } else { lines.end(to) };
        let c = cut(&lines, start_byte, limit, self.max_chars);
        let reason = if c.capped {
            "max_chars"
        } else if c.end < content.len() {
            "range_end"
        } else {
            "none"
        };
        let truncated = c.end < content.len();
        Ok(ReadOutput {
            returned_chars: c.chars as u64,
            truncated,
            applied_range: LineRange {
                start_line: c.start_line as u64,
                end_line: c.end_line as u64,
            },
            next_cursor: CharCursor {
                char_offset: truncated.then(|| text::char_offset(&content, c.end) as u64),
            },
            truncated_reason: reason.to_owned(),
            applied: ReadApplied {
                full,
                max_chars: self.max_chars as u64,
            },
            text: c.text,
        })
    }

    pub fn scan(&self, args: Args) -> Result<ScanOutput> {
        let path = self.file_path(&args)?;
        let top_line = args.int("start_line", 1)?;
        let cursor = args.obj("cursor")?;
        let (cur_line, cur_offset) = match &cursor {
            Some(c) => (c.int("start_line", 1)?, c.int("char_offset", 0)?),
            None => (None, None),
        };
        let content = self.root.read_text(&path)?;
        let lines = Lines::new(&content);
        let total = lines.count();
        // start_line wins over the cursor; cursor.start_line over its char_offset.
        let start_byte = if let Some(l) = top_line {
            lines.start(check_line(&args, "start_line", l, total)?)
        } else if let Some(l) = cur_line {
            lines.start(check_line(
                cursor.as_ref().expect("cursor"),
                "start_line",
                l,
                total,
            )?)
        } else if let Some(off) = cur_offset {
            text::byte_of_char(&content, off as usize).ok_or_else(|| {
                Error::invalid_parameter(
                    "cursor.char_offset",
                    format!(
                        "`cursor.char_offset` is {off} but the file has {} characters",
                        content.chars().count()
                    ),
                )
            })?
        } else {
            0
        };
        let c = cut(&lines, start_byte, content.len(), self.max_chars);
        let eof = c.end >= content.len();
        Ok(ScanOutput {
            applied_range: LineRange {
                start_line: c.start_line as u64,
                end_line: c.end_line as u64,
            },
            next_cursor: CharCursor {
                char_offset: (!eof).then(|| text::char_offset(&content, c.end) as u64),
            },
            eof,
            truncated: !eof,
            truncated_reason: if c.capped { "max_chars" } else { "none" }.to_owned(),
            applied: ScanApplied {
                max_chars: self.max_chars as u64,
            },
            text: c.text,
        })
    }
}
