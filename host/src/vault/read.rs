//! vault_ls, vault_read and vault_scan (seed 000).

use schemars::JsonSchema;
use serde::Serialize;

use super::Vault;
use crate::args::Args;
use crate::error::{Error, Result};
use crate::fs::{EntryKind, RelPath, io_error};
use crate::scan::{self, CharCursor, LineRange, ScanOutput, ScanStart};

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
        // Streamed: only the returned window is held, whatever the file's size.
        let mut file = self.root.open_file(&path)?;
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
                let r = range.as_ref().expect("only a range can start past line 1");
                r.line_in("start_line", from, lines)?;
                return Err(Error::internal("a start line inside the file was refused"));
            }
            Err(scan::Stop::NotText) => {
                return Err(io_error(std::io::ErrorKind::InvalidData.into(), &path));
            }
            Err(scan::Stop::Io(e)) => return Err(io_error(e, &path)),
        };
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
        })
    }

    pub fn scan(&self, args: Args) -> Result<ScanOutput> {
        let path = self.file_path(&args)?;
        let start = ScanStart::from_args(&args)?;
        let file = self.root.open_file(&path)?;
        scan::scan_stream(file, start, self.max_chars, |e| io_error(e, &path))
    }
}
