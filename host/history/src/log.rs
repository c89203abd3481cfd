//! The list of changes: one JSON line per change in `kura/changes.jsonl`
//! beside the repository (and the same line in the change's commit
//! message, so the list can be rebuilt from git), read incrementally.

use std::collections::{BTreeMap, HashMap, HashSet};
use std::sync::Arc;

use gix::ObjectId;
use schemars::JsonSchema;
use serde::{Deserialize, Serialize};

use crate::Inner;
use crate::call::{self, Meta, Touched};
use crate::error::{Code, Error, Result};
use crate::fs::RelPath;
use crate::store::{Author, Blobs, Store};

/// The trailer of a change's commit message that carries its entry.
const TRAILER: &str = "Kura-Change: ";

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

fn action(before: &Option<String>, after: &Option<String>) -> &'static str {
    match (before, after) {
        (None, _) => "created",
        (_, None) => "deleted",
        _ => "modified",
    }
}

impl Inner {
    fn list_name(&self) -> String {
        "changes.jsonl".into()
    }

    /// Commit the call's part in this root (under the lock), record what a
    /// killed kura left first, and let its pending file go.
    pub(crate) fn commit(self: &Arc<Self>, meta: &Meta, mut t: Touched) -> Result<()> {
        if self.unmerged.load(std::sync::atomic::Ordering::Relaxed) >= crate::UNMERGED_MAX {
            self.merge_now();
        }
        let _held = self.lock()?;
        // What this call found is what came after any call left pending.
        let then = call::tracks(&t.steps)
            .into_iter()
            .map(|(path, track)| (path, track.before))
            .collect();
        self.recover(&then)?;
        // A kura killed between its commit and its list line, while others
        // went on committing: its change is listed before this one.
        self.catch_up()?;
        let change = call::net(&t.steps);
        if !change.is_empty() || !t.made.is_empty() || !t.removed.is_empty() {
            let (made, removed) = (std::mem::take(&mut t.made), std::mem::take(&mut t.removed));
            self.record(meta, change, made, removed, false, &t.blobs)?;
            self.after_commit();
        }
        // Emptied (not synced: one that comes back full after a power cut
        // is found listed already, as long as its change is still the
        // newest of its files — see `listed_already`) and kept, still locked,
        // for this process's next call: creating a file costs more than
        // the rest of the record on some disks. One that cannot be emptied
        // is let go, and the next commit finds it recorded already.
        if let Some((mut file, name)) = t.pending {
            use std::io::Seek as _;
            let emptied = kura_core::fault::step()
                .and_then(|()| file.set_len(0))
                .and_then(|()| file.seek(std::io::SeekFrom::Start(0)));
            match emptied {
                Ok(_) => self
                    .spare
                    .lock()
                    .unwrap_or_else(|e| e.into_inner())
                    .push((file, name)),
                Err(e) => tracing::warn!("{} history: a call's record stays ({e})", self.name),
            }
        }
        Ok(())
    }

    /// Commit one change and add its line to the list.
    fn record(
        &self,
        meta: &Meta,
        change: BTreeMap<String, (Option<String>, Option<String>)>,
        made: Vec<String>,
        removed: Vec<String>,
        recovered: bool,
        blobs: &Blobs,
    ) -> Result<String> {
        let files: Vec<FileChange> = change
            .iter()
            .map(|(path, (b, a))| FileChange {
                path: path.clone(),
                action: action(b, a).into(),
                before: b.clone(),
                after: a.clone(),
            })
            .collect();
        let mut entry = Entry {
            id: String::new(),
            time: chrono::Utc::now().to_rfc3339_opts(chrono::SecondsFormat::Secs, true),
            tool: meta.tool.clone(),
            args: meta.args.clone(),
            client: meta.who.client.clone(),
            session: meta.who.session.clone(),
            files,
            made,
            removed,
            undoes: meta.undoes.clone(),
            recovered,
            undone_by: None,
        };
        let ids = |s: &Option<String>| {
            s.as_deref()
                .and_then(|h| ObjectId::from_hex(h.as_bytes()).ok())
        };
        let states: BTreeMap<String, _> = change
            .iter()
            .map(|(p, (b, a))| (p.clone(), (ids(b), ids(a))))
            .collect();
        // Only the blobs the change names: a file written twice by one
        // call keeps its first and last states.
        let named: Blobs = states
            .values()
            .flat_map(|(b, a)| [*b, *a])
            .flatten()
            .filter_map(|id| blobs.get(&id).map(|bytes| (id, bytes.clone())))
            .collect();
        let title = match entry.files.as_slice() {
            [one] => format!("{}: {} {}", entry.tool, one.action, one.path),
            many => format!("{}: {} files", entry.tool, many.len()),
        };
        let message = format!(
            "{title}\n\n{TRAILER}{}\n",
            serde_json::to_string(&entry).unwrap_or_default()
        );
        let client = if entry.client.is_empty() {
            "kura"
        } else {
            entry.client.as_str()
        };
        let commit = self
            .store
            .commit(
                (&self.state, &self.dir),
                "found changed outside kura\n",
                &states,
                &named,
                &message,
                Author {
                    name: client,
                    email: &entry.session,
                },
            )
            .map_err(|e| self.fault("cannot record the change", e))?;
        entry.id = commit.to_string();
        let mut line = serde_json::to_string(&entry).unwrap_or_default();
        line.push('\n');
        self.kura
            .append(&self.list_name(), line.as_bytes())
            .map_err(|e| self.fault("cannot list the change", e))?;
        Ok(entry.id)
    }

    /// Record the calls a stopped kura left (pending files no one holds),
    /// oldest first, each as the change its own steps say it made. A path
    /// counts as changed by a call unless what came after it — what the
    /// next call left pending found there, or else what the file holds
    /// now — is what the call found (killed before its write reached the
    /// file). What the file holds beyond the call's after-state is not the
    /// call's: the next change of that file records it as changed outside
    /// kura, and an undo of the call meets `conflict` there.
    pub(crate) fn recover(&self, then: &BTreeMap<String, Option<String>>) -> Result<()> {
        let folder = "pending";
        let listed = self
            .kura
            .list(folder)
            .map_err(|e| self.fault("cannot be read", e))?;
        let mut left = Vec::new();
        for (file, _, _) in listed {
            let name = format!("{folder}/{file}");
            let Ok(Some(held)) = self.kura.try_lock(&name) else {
                continue; // a call in progress, or queued for its commit
            };
            let text = self
                .kura
                .read(&name)
                .map_err(|e| self.fault("cannot be read", e))?
                .unwrap_or_default();
            let pending = call::parse_pending(&String::from_utf8_lossy(&text));
            left.push((name, held, pending));
        }
        left.sort_by(|a, b| (a.2.meta.at, &a.0).cmp(&(b.2.meta.at, &b.0)));
        let hex = |h: &Option<String>| {
            h.as_deref()
                .and_then(|h| ObjectId::from_hex(h.as_bytes()).ok())
        };
        let mut blobs = Blobs::new();
        for s in left.iter().flat_map(|(_, _, p)| &p.steps) {
            for (id, kept) in [(&s.before, &s.kept), (&s.after, &s.wrote)] {
                if let (Some(id), Some(bytes)) = (hex(id), kept.as_deref().and_then(call::kept)) {
                    blobs.entry(id).or_insert(bytes);
                }
            }
        }
        let tracks: Vec<_> = left
            .iter()
            .map(|(_, _, p)| call::tracks(&p.steps))
            .collect();
        for (i, (name, _held, pending)) in left.into_iter().enumerate() {
            let mut change = BTreeMap::new();
            for (path, t) in &tracks[i] {
                let at_hand = |s: &Option<String>, blobs: &Blobs| {
                    hex(s).is_none_or(|id| blobs.contains_key(&id) || self.store.has(id))
                };
                let before = &t.before;
                let after = if t.last_done {
                    // Made: whatever the file holds since is someone
                    // else's change.
                    t.last.clone()
                } else if at_hand(&t.last, &blobs) || t.last_moved {
                    // Not said done: made if what came after shows it
                    // (killed between the write and its `done` line), else
                    // what the last step said done left, if one did.
                    // (Only compared: its bytes need not be at hand.)
                    let next = tracks[i + 1..]
                        .iter()
                        .find_map(|n| n.get(path).map(|n| n.before.clone()))
                        .or_else(|| then.get(path).cloned());
                    let seen = match next {
                        Some(b) => b,
                        None => self.id_now(path)?,
                    };
                    match &t.done {
                        _ if seen == t.last => t.last.clone(),
                        Some(done) => done.clone(),
                        None => continue, // nothing of it reached the file
                    }
                } else {
                    // A pending file of a kura before the after-state was
                    // kept: what came after is all there is.
                    self.state_of(path, &mut blobs)?
                };
                // (A call committed whose pending file stayed is found by
                // `listed_already` below: comparing with what the tree
                // holds dropped the deletion of a file it never held.)
                if after != *before {
                    change.insert(path.clone(), (before.clone(), after));
                }
            }
            let call::Pending {
                meta,
                made,
                removed,
                ..
            } = pending;
            let fresh = !change.is_empty() || !made.is_empty() || !removed.is_empty();
            if fresh && !self.listed_already(&meta, &change)? {
                self.record(&meta, change, made, removed, true, &blobs)?;
                tracing::info!(
                    "{} history: recorded a change a stopped kura left pending",
                    self.name
                );
            }
            self.kura
                .remove(&name)
                .map_err(|e| self.fault("cannot finish a pending record", e))?;
        }
        Ok(())
    }

    /// Whether `change` by `meta`'s call is the newest listed change of
    /// its files already: a call committed whose pending file could not be
    /// emptied (the next commit, in the same process, finds it) is not
    /// recorded twice, while the same edit made again after an undo is.
    fn listed_already(
        &self,
        meta: &Meta,
        change: &BTreeMap<String, (Option<String>, Option<String>)>,
    ) -> Result<bool> {
        if change.is_empty() {
            return Ok(false);
        }
        let newest = self
            .committed(&[])?
            .into_iter()
            .rev()
            .find(|e| e.files.iter().any(|f| change.contains_key(&f.path)));
        Ok(newest.is_some_and(|e| {
            e.tool == meta.tool
                && e.session == meta.who.session
                && change.iter().all(|(path, (b, a))| {
                    e.files
                        .iter()
                        .any(|f| f.path == *path && f.before == *b && f.after == *a)
                })
        }))
    }

    /// The blobs every pending file names (calls in progress or queued,
    /// and those a stopped kura left), read without their locks.
    pub(crate) fn pending_blobs(&self) -> Result<HashSet<ObjectId>> {
        let mut out = HashSet::new();
        let listed = self
            .kura
            .list("pending")
            .map_err(|e| self.fault("cannot be read", e))?;
        for (file, _, _) in listed {
            let text = self
                .kura
                .read(&format!("pending/{file}"))
                .map_err(|e| self.fault("cannot be read", e))?
                .unwrap_or_default();
            for s in call::parse_pending(&String::from_utf8_lossy(&text)).steps {
                out.extend(
                    [s.before, s.after]
                        .into_iter()
                        .flatten()
                        .filter_map(|h| ObjectId::from_hex(h.as_bytes()).ok()),
                );
            }
        }
        Ok(out)
    }

    /// What `path` holds now, as a blob id (None: no file), its bytes
    /// added to `blobs` so that an undo can restore it — unless it is too
    /// large to read whole, when only its id is had.
    fn state_of(&self, path: &str, blobs: &mut Blobs) -> Result<Option<String>> {
        let p = RelPath::parse(path, false)?;
        match self.reader.read(&p) {
            Ok(bytes) => {
                let id = Store::id_of(&bytes);
                blobs.entry(id).or_insert(bytes);
                Ok(Some(id.to_string()))
            }
            Err(e) if e.code == Code::NotFound => Ok(None),
            Err(_) => self.id_now(path),
        }
    }

    /// What `path` holds now, as a blob id (None: no file), hashed as it
    /// streams by.
    fn id_now(&self, path: &str) -> Result<Option<String>> {
        self.reader.file_id(&RelPath::parse(path, false)?)
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
        self.queue.settle();
        self.committed(needles)
    }

    /// [`Self::entries`] without waiting for the queued calls (a prune,
    /// which the commits may be waiting for).
    pub(crate) fn committed(&self, needles: &[String]) -> Result<Vec<Entry>> {
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
        Ok(cache
            .lines_with(needles)
            .filter_map(|l| serde_json::from_str::<Entry>(l).ok())
            .map(|mut e| {
                e.undone_by = cache.undone.get(&e.id).cloned();
                e
            })
            .collect())
    }

    pub(crate) fn list(
        &self,
        filter: &Filter,
        offset: usize,
        limit: usize,
    ) -> Result<(Vec<Entry>, usize)> {
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
        let text = |id: &Option<String>| -> Result<String> {
            let Some(id) = id else {
                return Ok(String::new());
            };
            let oid =
                ObjectId::from_hex(id.as_bytes()).map_err(|e| self.fault("holds a bad id", e))?;
            if !self.store.has(oid) {
                // Renamed: the bytes went with the name, not into the store.
                return Ok(format!(
                    "(blob {id}: renamed, its bytes not kept by the history)\n"
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

/// A unified diff of `before` → `after` by lines, three lines of context,
/// under the names `old` and `new`. The one place `similar` is called: its
/// diff is generic all the way down, and each crate that called it built
/// its own copy (half of this crate's machine code, and a sixth of the
/// `kura` library's), so `kura setup`'s dry run calls this one.
pub fn unified_diff(before: &str, after: &str, old: &str, new: &str) -> String {
    similar::TextDiff::from_lines(before, after)
        .unified_diff()
        .context_radius(3)
        .header(old, new)
        .to_string()
}

/// The id a file's bytes have in the history.
pub(crate) fn id_of(bytes: &[u8]) -> String {
    Store::id_of(bytes).to_string()
}
