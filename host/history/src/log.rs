//! The list of changes: one JSON line per change in `kura/changes.jsonl`
//! beside the repository (and the same line in the change's commit
//! message, so the list can be rebuilt from git), read incrementally.

use std::collections::{HashMap, HashSet};

use gix::ObjectId;
use schemars::JsonSchema;
use serde::{Deserialize, Serialize};

use crate::Inner;
use crate::call;
use crate::error::{Code, Error, Result};
use crate::fs::RelPath;
use crate::store::Store;

/// The trailer of a change's commit message that carries its entry.
pub(crate) const TRAILER: &str = "Kura-Change: ";

/// One change: one tool call's effect on one root.
#[derive(Clone, Debug, Serialize, Deserialize, JsonSchema)]
pub struct Entry {
    /// The change's id: its commit in the history repository
    pub id: String,
    /// When it was recorded (RFC 3339, UTC)
    pub time: String,
    /// The tool that made it (`kura` for a change kura made on its own, such
    /// as a move finished at start-up)
    pub tool: String,
    /// The tool's arguments as JSON, cut to 300 characters
    pub args: String,
    /// The client's name (its clientInfo)
    pub client: String,
    /// The session: a stdio process or an HTTP session
    pub session: String,
    /// The files it changed, each with its blob id before and after (null:
    /// no file)
    pub files: Vec<FileChange>,
    /// Folders it made
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub made: Vec<String>,
    /// Folders it removed
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub removed: Vec<String>,
    /// The changes this one undid (an undo)
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub undoes: Vec<String>,
    /// Recorded at a later start: kura stopped between the write and its
    /// record
    #[serde(default, skip_serializing_if = "std::ops::Not::not")]
    pub recovered: bool,
    /// The change that undid this one, if one did (and was not undone)
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub undone_by: Option<String>,
}

#[derive(Clone, Debug, Serialize, Deserialize, JsonSchema)]
pub struct FileChange {
    pub path: String,
    /// `created`, `modified` or `deleted`
    pub action: String,
    pub before: Option<String>,
    pub after: Option<String>,
}

/// Which changes a listing shows.
#[derive(Clone, Debug, Default)]
pub struct Filter {
    /// A file, or a folder (every file below it); None: all.
    pub path: Option<RelPath>,
    pub session: Option<String>,
    pub client: Option<String>,
}

impl Filter {
    /// Whether it admits every change.
    fn admits_all(&self) -> bool {
        self.path.as_ref().is_none_or(RelPath::is_root)
            && self.session.is_none()
            && self.client.is_none()
    }

    fn admits(&self, e: &Entry) -> bool {
        self.session.as_ref().is_none_or(|s| e.session == *s)
            && self.client.as_ref().is_none_or(|c| e.client == *c)
            && self.path.as_ref().is_none_or(|p| {
                p.is_root() || {
                    let p = p.to_string();
                    let under = |f: &str| f == p || f.starts_with(&format!("{p}/"));
                    e.files.iter().any(|f| under(&f.path))
                        || e.made.iter().chain(&e.removed).any(|f| under(f))
                }
            })
    }
}

impl Cache {
    /// A line's change, marked with the live undo that took it back.
    fn entry(&self, line: &str) -> Option<Entry> {
        let mut e = serde_json::from_str::<Entry>(line).ok()?;
        e.undone_by = self.undone.get(&e.id).cloned();
        Some(e)
    }

    fn line(&self, i: usize) -> &str {
        let end = self.starts.get(i + 1).copied().unwrap_or(self.text.len());
        self.text[self.starts[i]..end].trim_end()
    }

    /// The lines that contain each of `needles`, oldest first (each line
    /// searched on its own: `str::contains` is vectorised for short
    /// needles, a search of the whole text is not, and ran 4x slower).
    fn lines_with<'a>(&'a self, needles: &'a [String]) -> impl Iterator<Item = &'a str> + 'a {
        (0..self.starts.len())
            .map(|i| self.line(i))
            .filter(|l| needles.iter().all(|n| l.contains(n.as_str())))
    }
}

impl Filter {
    /// Strings the JSON line of every change the filter admits contains
    /// (a cheap test before a line is parsed).
    fn needles(&self) -> Vec<String> {
        let json = |s: &str| serde_json::to_string(s).unwrap_or_default();
        let mut out = Vec::new();
        if let Some(p) = self.path.as_ref().filter(|p| !p.is_root()) {
            let quoted = json(&p.to_string());
            out.push(quoted[1..quoted.len() - 1].to_owned());
        }
        if let Some(s) = &self.session {
            out.push(format!("\"session\":{}", json(s)));
        }
        if let Some(c) = &self.client {
            out.push(format!("\"client\":{}", json(c)));
        }
        out
    }
}

/// The list as read so far: its lines as written, parsed only when a
/// listing may show them (a fresh process listing one note among 100,000
/// changes parses that note's, not all).
#[derive(Default)]
pub(crate) struct Cache {
    /// Bytes of `changes.jsonl` read, and which file (its inode) they were.
    read: usize,
    file: u64,
    /// The list's whole lines read so far, and where each begins.
    text: String,
    starts: Vec<usize>,
    /// Each change undone by a live undo, and that undo.
    undone: HashMap<String, String>,
    /// How many lines `undone` was worked out for.
    marked: usize,
}

/// The key every undo's line has (and no other line: `args` is a string,
/// its quotes escaped).
const UNDOES: &str = "\"undoes\":";

impl Inner {
    pub(crate) fn list_name(&self) -> String {
        "changes.jsonl".into()
    }

    /// Add to the list the changes git has and the list lacks (a kura
    /// stopped between the commit and the line).
    pub(crate) fn catch_up(&self) -> Result<()> {
        self.refresh()?;
        let last = {
            let cache = self.log.lock().unwrap_or_else(|e| e.into_inner());
            (0..cache.starts.len())
                .rev()
                .find_map(|i| serde_json::from_str::<Entry>(cache.line(i)).ok())
                .and_then(|e| ObjectId::from_hex(e.id.as_bytes()).ok())
        };
        let head = self
            .store
            .head()
            .map_err(|e| self.fault("cannot be read", e))?;
        if head.is_none() || head == last {
            return Ok(());
        }
        let missing = self
            .store
            .messages_since(last)
            .map_err(|e| self.fault("cannot be read", e))?;
        for (id, message) in missing {
            let Some(json) = message.lines().find_map(|l| l.strip_prefix(TRAILER)) else {
                continue;
            };
            let Ok(mut entry) = serde_json::from_str::<Entry>(json) else {
                continue;
            };
            entry.id = id.to_string();
            let mut line = serde_json::to_string(&entry).unwrap_or_default();
            line.push('\n');
            self.kura
                .append(&self.list_name(), line.as_bytes())
                .map_err(|e| self.fault("cannot list a change", e))?;
        }
        Ok(())
    }

    /// Write the list anew without its changes up to `boundary` (the
    /// newest pruned), keeping what was appended since; under the lock.
    pub(crate) fn drop_listed(&self, boundary: &str) -> Result<()> {
        let text = self
            .kura
            .read(&self.list_name())
            .map_err(|e| self.fault("cannot be read", e))?
            .unwrap_or_default();
        let text = String::from_utf8_lossy(&text);
        let mut kept = String::new();
        let mut past = false;
        for line in text.lines() {
            if past {
                kept.push_str(line);
                kept.push('\n');
            } else if serde_json::from_str::<Entry>(line).is_ok_and(|e| e.id == boundary) {
                past = true;
            }
        }
        if !past {
            return Err(self.fault(
                "cannot be pruned",
                format!("the change {boundary} is not listed"),
            ));
        }
        self.kura
            .write(&self.list_name(), kept.as_bytes())
            .map_err(|e| self.fault("cannot be pruned", e))?;
        *self.log.lock().unwrap_or_else(|e| e.into_inner()) = Cache::default();
        Ok(())
    }

    /// Read what was added to the list since the last look.
    fn refresh(&self) -> Result<()> {
        let mut cache = self.log.lock().unwrap_or_else(|e| e.into_inner());
        let read = self
            .kura
            .read_from(&self.list_name(), cache.read as u64)
            .map_err(|e| self.fault("cannot be read", e))?;
        let Some((len, file, fresh)) = read else {
            *cache = Cache::default();
            return Ok(());
        };
        if (len as usize) < cache.read || (cache.read > 0 && file != cache.file) {
            // Written anew (pruned): read it all again.
            *cache = Cache::default();
            drop(cache);
            return self.refresh();
        }
        cache.file = file;
        // Only whole lines: another kura may be appending one.
        let end = fresh.iter().rposition(|b| *b == b'\n').map_or(0, |i| i + 1);
        let mut fresh = fresh;
        fresh.truncate(end);
        let chunk = String::from_utf8(fresh)
            .unwrap_or_else(|e| String::from_utf8_lossy(e.as_bytes()).into_owned());
        let base = cache.text.len();
        if !chunk.is_empty() {
            cache.starts.push(base);
        }
        cache.starts.extend(
            chunk
                .match_indices('\n')
                .map(|(at, _)| base + at + 1)
                .filter(|at| *at < base + chunk.len()),
        );
        if cache.text.is_empty() {
            cache.text = chunk;
        } else {
            cache.text.push_str(&chunk);
        }
        cache.read += end;
        Ok(())
    }

    /// The changes whose line contains every one of `needles`, oldest
    /// first, each marked with the live undo that took it back; this
    /// process's calls queued for their commit come first.
    pub(crate) fn entries(&self, needles: &[String]) -> Result<Vec<Entry>> {
        self.settled()?;
        self.committed(needles)
    }

    /// [`Self::entries`] without waiting for the queued calls (a prune,
    /// which the commits may be waiting for).
    pub(crate) fn committed(&self, needles: &[String]) -> Result<Vec<Entry>> {
        let cache = self.marked()?;
        Ok(cache
            .lines_with(needles)
            .filter_map(|l| cache.entry(l))
            .collect())
    }

    /// The list read up to now, each change's live undo worked out.
    fn marked(&self) -> Result<std::sync::MutexGuard<'_, Cache>> {
        self.refresh()?;
        let mut cache = self.log.lock().unwrap_or_else(|e| e.into_inner());
        if cache.marked != cache.starts.len() {
            // Newest first: an undo is newer than what it undid, and one
            // that was itself undone takes nothing back.
            let mut undone: HashMap<String, String> = HashMap::new();
            let needle = [UNDOES.to_owned()];
            let undos: Vec<&str> = cache.lines_with(&needle).collect();
            for line in undos.into_iter().rev() {
                let Ok(e) = serde_json::from_str::<Entry>(line) else {
                    continue;
                };
                if !undone.contains_key(&e.id) {
                    for u in e.undoes {
                        undone.insert(u, e.id.clone());
                    }
                }
            }
            cache.undone = undone;
            cache.marked = cache.starts.len();
        }
        Ok(cache)
    }

    pub(crate) fn list(
        &self,
        filter: &Filter,
        offset: usize,
        limit: usize,
    ) -> Result<(Vec<Entry>, usize)> {
        if filter.admits_all() {
            // Every line is a change: only the page's are parsed.
            self.settled()?;
            let cache = self.marked()?;
            let total = cache.starts.len();
            let page = (0..total)
                .rev()
                .skip(offset)
                .take(limit)
                .filter_map(|i| cache.entry(cache.line(i)))
                .collect();
            return Ok((page, total));
        }
        let entries = self.entries(&filter.needles())?;
        let mut total = 0;
        let mut page = Vec::new();
        for e in entries.into_iter().rev().filter(|e| filter.admits(e)) {
            if total >= offset && page.len() < limit {
                page.push(e);
            }
            total += 1;
        }
        Ok((page, total))
    }

    pub(crate) fn find(&self, id: &str) -> Result<Entry> {
        let id = id.trim().to_ascii_lowercase();
        let unknown = || {
            Error::new(
                Code::NotFound,
                format!("no change `{id}` in the {} history", self.name),
            )
            .with("change", id.clone())
        };
        if id.len() < 7 || !id.bytes().all(|b| b.is_ascii_hexdigit()) {
            return Err(unknown());
        }
        // Each line begins with its id.
        let found: Vec<Entry> = self
            .entries(&[format!("{{\"id\":\"{id}")])?
            .into_iter()
            .filter(|e| e.id.starts_with(&id))
            .take(2)
            .collect();
        match found.as_slice() {
            [] => Err(unknown()),
            [one] => Ok(one.clone()),
            _ => Err(Error::invalid_parameter(
                "change",
                format!("`{id}` names more than one change; give more of its id"),
            )),
        }
    }

    pub(crate) fn session_changes(&self, session: &str) -> Result<Vec<Entry>> {
        let filter = Filter {
            session: Some(session.to_owned()),
            ..Filter::default()
        };
        let entries = self.entries(&filter.needles())?;
        let ours: HashSet<String> = entries
            .iter()
            .filter(|e| e.session == session)
            .map(|e| e.id.clone())
            .collect();
        Ok(entries
            .into_iter()
            .rev()
            .filter(|e| e.session == session)
            // Undone by another session's undo: already taken back.
            .filter(|e| e.undone_by.as_ref().is_none_or(|u| ours.contains(u)))
            .collect())
    }

    pub(crate) fn diff(&self, entry: &Entry, max_chars: usize) -> Result<(String, bool)> {
        let id = |id: &str| {
            ObjectId::from_hex(id.as_bytes()).map_err(|e| self.fault("holds a bad id", e))
        };
        let mut named = Vec::new();
        for f in &entry.files {
            for h in [&f.before, &f.after].into_iter().flatten() {
                named.push(id(h)?);
            }
        }
        let held = self
            .store
            .held(named)
            .map_err(|e| self.fault("cannot be read", e))?;
        let text = |h: &Option<String>| -> Result<String> {
            let Some(h) = h else {
                return Ok(String::new());
            };
            let oid = id(h)?;
            if !held.contains(&oid) {
                // Renamed: the bytes went with the name, not into the store.
                return Ok(format!(
                    "(blob {h}: renamed, its bytes not kept by the history)\n"
                ));
            }
            let bytes = self
                .store
                .blob(oid)
                .map_err(|e| self.fault("cannot be read", e))?;
            Ok(String::from_utf8_lossy(&bytes).into_owned())
        };
        let mut out = String::new();
        for f in &entry.files {
            let (before, after) = (text(&f.before)?, text(&f.after)?);
            let old = if f.before.is_some() {
                format!("a/{}", f.path)
            } else {
                "/dev/null".into()
            };
            let new = if f.after.is_some() {
                format!("b/{}", f.path)
            } else {
                "/dev/null".into()
            };
            out.push_str(&unified_diff(&before, &after, &old, &new));
            if out.chars().count() > max_chars {
                return Ok((call::cut(&out, max_chars), true));
            }
        }
        Ok((out, false))
    }
}

/// How long a diff looks for its shortest form.
const DIFF_TIMEOUT: std::time::Duration = std::time::Duration::from_millis(500);

/// A unified diff of `before` → `after` by lines, three lines of context,
/// under the names `old` and `new`. The one place `similar` is called: its
/// diff is generic all the way down, and each crate that called it built
/// its own copy (half of this crate's machine code, and a sixth of the
/// `kura` library's), so `kura setup`'s dry run calls this one.
///
/// The search for the shortest diff stops at [`DIFF_TIMEOUT`] (two 16 MiB
/// notes that share little are quadratic work for Myers' algorithm): past
/// it the diff is still right, only longer than it need be.
pub fn unified_diff(before: &str, after: &str, old: &str, new: &str) -> String {
    similar::TextDiff::configure()
        .timeout(DIFF_TIMEOUT)
        .diff_lines(before, after)
        .unified_diff()
        .context_radius(3)
        .header(old, new)
        .to_string()
}

/// The id a file's bytes have in the history.
pub(crate) fn id_of(bytes: &[u8]) -> String {
    Store::id_of(bytes).to_string()
}
