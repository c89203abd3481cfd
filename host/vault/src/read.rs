//! vault_ls, vault_read and vault_scan (seed 000).

use schemars::JsonSchema;
use serde::Serialize;

use super::Vault;
use crate::args::{Input, line_in};
use crate::error::{Error, Result};
use crate::fs::{EntryKind, RelPath, io_error};
use crate::scan::{self, CharCursor, LineRange, ScanCursor, ScanOutput, ScanStart};

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
    /// At the root: the languages the notes are written in, most first,
    /// each with its share of the text (judged on a sample of them).
    #[serde(skip_serializing_if = "Vec::is_empty")]
    pub languages: Vec<crate::text::lang::Share>,
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
    /// The whole note's SHA-256 (vault_edit's `expected_hash`); null for a
    /// file over MAX_FILE_BYTES, which kura never rewrites.
    pub hash: Option<String>,
}

#[derive(Input)]
pub struct LsInput {
    /// Folder (default: vault root)
    pub path: Option<String>,
    /// Seed 001's name for `path`, accepted as the same thing.
    #[arg(hidden)]
    pub relative_dir: Option<String>,
}

#[derive(Input)]
pub struct ReadInput {
    /// File, vault-relative
    pub path: String,
    /// From line 1 (at most {scan_max_chars} characters)
    pub full: Option<bool>,
    /// Lines to read (required unless `full`)
    pub range: Option<ReadRange>,
}

#[derive(Input)]
pub struct ReadRange {
    /// First line, 1-based
    #[arg(min = 1)]
    pub start_line: Option<i64>,
    /// Last line, inclusive (may pass the end)
    #[arg(min = 1)]
    pub end_line: Option<i64>,
}

#[derive(Input)]
pub struct ScanInput {
    /// File, vault-relative
    pub path: String,
    /// Start line, 1-based (wins over cursor)
    #[arg(min = 1)]
    pub start_line: Option<i64>,
    /// Previous call's next_cursor
    pub cursor: Option<ScanCursor>,
}

impl Vault {
    pub fn ls(&self, input: LsInput) -> Result<LsOutput> {
        let raw = input.path.or(input.relative_dir);
        let dir = RelPath::parse(raw.as_deref().unwrap_or(""), true)?;
        let entries = self.root.list(&dir)?;
        let base = (!dir.is_root()).then(|| dir.to_string());
        let languages = match dir.is_root() {
            true => self.written()?.profile.shares(),
            false => Vec::new(),
        };
        Ok(LsOutput {
            base_path: base,
            languages,
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

    pub fn read(&self, input: ReadInput) -> Result<ReadOutput> {
        let path = RelPath::parse(&input.path, false)?;
        let full = input.full.unwrap_or(false);
        let range = input.range;
        let (start, end) = match &range {
            Some(r) => (r.start_line, r.end_line),
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
        // Streamed: only the returned window is held, whatever the file's size.
        // One open serves both the window and the hash: a note rewritten
        // meanwhile cannot pair one version's text with another's hash.
        let mut file = self.root.open_file(&path)?.hashing();
        let from = if full { 1 } else { start.unwrap_or(1) };
        let limit = match end {
            Some(e) if !full => scan::Limit::EndOfLine(e as usize),
            _ => scan::Limit::Eof,
        };
        let w = match scan::stream_window(
            &mut file,
            scan::At::Line(from as usize),
            limit,
            self.max_chars,
        ) {
            Ok(w) => w,
            Err(scan::Stop::Past { lines, .. }) => {
                line_in("range.start_line", from, lines)?;
                return Err(Error::internal("a start line inside the file was refused"));
            }
            Err(scan::Stop::NotText) => {
                return Err(io_error(std::io::ErrorKind::InvalidData.into(), &path));
            }
            Err(scan::Stop::Io(e)) => return Err(io_error(e, &path)),
        };
        let hash = file
            .finish_hash(self.root.max_file_bytes())
            .map_err(|e| io_error(e, &path))?;
        let reason = if w.capped {
            "max_chars"
        } else if w.truncated {
            "range_end"
        } else {
            "none"
        };
        Ok(ReadOutput {
            returned_chars: w.chars,
            truncated: w.truncated,
            applied_range: w.range,
            next_cursor: w.next_cursor,
            truncated_reason: reason.to_owned(),
            applied: ReadApplied {
                full,
                max_chars: self.max_chars as u64,
            },
            text: w.text,
            hash,
        })
    }

    pub fn scan(&self, input: ScanInput) -> Result<ScanOutput> {
        let path = RelPath::parse(&input.path, false)?;
        let start = ScanStart::new(input.start_line, input.cursor.map(Into::into));
        let file = self.root.open_file(&path)?;
        scan::scan_stream(file, start, self.max_chars, |e| io_error(e, &path))
    }
}
