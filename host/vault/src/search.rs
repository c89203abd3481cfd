//! vault_search (001): a line search over the vault's text files in one of
//! three modes. `regex` (the default) uses the linear-time `regex` crate; an
//! invalid pattern falls back to `plain` (001 allows it) and says so in
//! `applied`. `loose` matches lines holding every query word after NFKC and
//! case folding, in any order.

use std::io::{BufRead, Read};

use globset::GlobBuilder;
use regex::RegexBuilder;
use schemars::JsonSchema;
use serde::Serialize;

use super::Vault;
use crate::args::Input;
use crate::error::{Error, Result};
use crate::fs::RelPath;
use crate::text::normalize;

const LIMIT_MAX: i64 = 1000;

#[derive(Input)]
pub struct SearchInput {
    /// Text or regex to find
    #[arg(query)]
    pub query: String,
    /// regex (default), plain (as typed) or loose (word by word)
    #[arg(one_of = ["plain", "regex", "loose"])]
    pub mode: Option<&'static str>,
    /// e.g. `projects/**/*.md`
    pub glob: Option<String>,
    /// Only under this folder
    pub relative_dir: Option<String>,
    /// Max results (default 50)
    #[arg(min = 1, max = LIMIT_MAX)]
    pub limit: Option<i64>,
    /// A vault_notes `filter`
    pub filter: Option<String>,
}
/// A line is searched in its first this many bytes (the rest is skipped
/// unread into memory), so one huge line costs no more than this.
const LINE_MAX: usize = 1 << 20;

/// Lines of a stream without their endings (`\n`, `\r\n`), each cut at
/// `LINE_MAX` bytes; an error for bytes that are not UTF-8.
struct LineReader<R> {
    r: R,
    buf: Vec<u8>,
    text: String,
}

impl<R: BufRead> LineReader<R> {
    fn new(r: R) -> Self {
        LineReader {
            r,
            buf: Vec::new(),
            text: String::new(),
        }
    }

    fn next_line(&mut self) -> Option<std::result::Result<&str, ()>> {
        self.buf.clear();
        let mut any = false;
        loop {
            let Ok(chunk) = self.r.fill_buf() else {
                return Some(Err(()));
            };
            if chunk.is_empty() {
                break;
            }
            any = true;
            let (take, done) = match chunk.iter().position(|&b| b == b'\n') {
                Some(i) => (i + 1, true),
                None => (chunk.len(), false),
            };
            let room = LINE_MAX.saturating_sub(self.buf.len());
            self.buf.extend_from_slice(&chunk[..take.min(room)]);
            self.r.consume(take);
            if done {
                break;
            }
        }
        if !any {
            return None;
        }
        let mut end = self.buf.len();
        for ending in [b'\n', b'\r'] {
            if end > 0 && self.buf[end - 1] == ending {
                end -= 1;
            }
        }
        self.buf.truncate(end);
        let valid = match std::str::from_utf8(&self.buf) {
            Ok(_) => end,
            // Cut at LINE_MAX inside a character: keep what is whole.
            Err(e) if e.error_len().is_none() && end >= LINE_MAX => e.valid_up_to(),
            Err(_) => return Some(Err(())),
        };
        self.text.clear();
        self.text
            .push_str(std::str::from_utf8(&self.buf[..valid]).unwrap_or_default());
        Some(Ok(&self.text))
    }
}
const SNIPPET_CHARS: usize = 240;

#[derive(Debug, Serialize, JsonSchema)]
pub struct SearchResult {
    pub path: String,
    /// 1-based line of the match.
    pub line: u64,
    pub snippet: String,
}

#[derive(Debug, Serialize, JsonSchema)]
pub struct SearchApplied {
    /// The mode actually used: `plain`, `regex` or `loose`.
    pub mode: String,
    pub limit: u64,
    /// Why a `regex` query fell back to `plain`, when it did.
    pub regex_error: Option<String>,
}

#[derive(Debug, Serialize, JsonSchema)]
pub struct SearchOutput {
    pub results: Vec<SearchResult>,
    pub applied: SearchApplied,
}

enum Matcher {
    Plain(String),
    Regex(regex::Regex),
    Loose(Vec<String>),
}

impl Matcher {
    /// Byte offset of the match in `line`, if the line matches.
    fn find(&self, line: &str) -> Option<usize> {
        match self {
            Matcher::Plain(q) => line.find(q.as_str()),
            Matcher::Regex(r) => r.find(line).map(|m| m.start()),
            Matcher::Loose(words) => {
                let norm = normalize(line);
                if !words.iter().all(|w| norm.contains(w.as_str())) {
                    return None;
                }
                // Offsets in the normalised line do not map back exactly; the
                // snippet is centred on the first word where it can be found.
                Some(line.to_lowercase().find(words[0].as_str()).unwrap_or(0))
            }
        }
    }
}

fn snippet(line: &str, at: usize) -> String {
    let total = line.chars().count();
    if total <= SNIPPET_CHARS {
        return line.to_owned();
    }
    let at_char = line[..at.min(line.len())].chars().count();
    let start = at_char
        .saturating_sub(SNIPPET_CHARS / 3)
        .min(total - SNIPPET_CHARS);
    let body: String = line.chars().skip(start).take(SNIPPET_CHARS).collect();
    format!(
        "{}{body}{}",
        if start > 0 { "…" } else { "" },
        if start + SNIPPET_CHARS < total {
            "…"
        } else {
            ""
        }
    )
}

/// A glob on vault-relative paths; a bad pattern is `invalid_parameter`.
pub(super) fn glob_matcher(pattern: &str, name: &str) -> Result<globset::GlobMatcher> {
    if pattern.len() > crate::args::QUERY_MAX_CHARS {
        return Err(Error::invalid_parameter(
            name,
            format!(
                "`{name}` is {} bytes long; at most {} are accepted",
                pattern.len(),
                crate::args::QUERY_MAX_CHARS
            ),
        ));
    }
    Ok(GlobBuilder::new(pattern)
        .build()
        .map_err(|e| {
            Error::invalid_parameter(name, format!("`{name}` is not a valid pattern: {e}"))
        })?
        .compile_matcher())
}

impl Vault {
    pub fn search(&self, input: SearchInput, job: crate::job::Job) -> Result<SearchOutput> {
        let query = input.query.as_str();
        let mode = input.mode.unwrap_or("regex");
        let limit = input.limit.unwrap_or(50);
        let glob = match &input.glob {
            Some(g) => Some(glob_matcher(g, "glob")?),
            None => None,
        };
        let dir = RelPath::parse(input.relative_dir.as_deref().unwrap_or(""), true)?;
        let kept = self.kept_by(input.filter.as_deref(), job)?;
        let mut regex_error = None;
        let matcher = match mode {
            "plain" => Matcher::Plain(query.to_owned()),
            "loose" => {
                let words: Vec<String> = normalize(query)
                    .split_whitespace()
                    .map(str::to_owned)
                    .collect();
                if words.is_empty() {
                    return Err(Error::invalid_parameter(
                        "query",
                        "`query` has no words to match",
                    ));
                }
                Matcher::Loose(words)
            }
            _ => match RegexBuilder::new(query).size_limit(1 << 20).build() {
                Ok(r) => Matcher::Regex(r),
                Err(e) => {
                    regex_error = Some(e.to_string());
                    Matcher::Plain(query.to_owned())
                }
            },
        };
        let applied_mode = match matcher {
            Matcher::Plain(_) => "plain",
            Matcher::Regex(_) => "regex",
            Matcher::Loose(_) => "loose",
        };
        let mut results = Vec::new();
        'files: for (file, _) in self.root.walk_files(&dir)? {
            let rel = file.to_string();
            if super::notes::is_reserved(&file) || super::notes::is_trash(&file) {
                continue; // the server's own state, or deleted notes
            }
            if glob.as_ref().is_some_and(|g| !g.is_match(&rel)) {
                continue;
            }
            if kept.as_ref().is_some_and(|k| !k.contains(&rel)) {
                continue;
            }
            // Streamed a line at a time: a file costs one line (at most
            // LINE_MAX bytes of it), whatever its size.
            let Ok(reader) = self.root.open_file(&file) else {
                continue; // gone since the walk
            };
            let mut lines = LineReader::new(reader.take(self.root.max_file_bytes()));
            let mut n = 0u64;
            while let Some(line) = lines.next_line() {
                n += 1;
                let Ok(line) = line else {
                    continue 'files; // not text, or unreadable: not a note
                };
                if let Some(at) = matcher.find(line) {
                    results.push(SearchResult {
                        path: rel.clone(),
                        line: n,
                        snippet: snippet(line, at),
                    });
                    if results.len() as i64 >= limit {
                        break 'files;
                    }
                }
            }
        }
        Ok(SearchOutput {
            results,
            applied: SearchApplied {
                mode: applied_mode.to_owned(),
                limit: limit as u64,
                regex_error,
            },
        })
    }
}
