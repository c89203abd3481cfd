//! Recording a call: its commit (the trees, the commit, its line in the
//! list), and the recovery of what a killed kura left pending, each under
//! the history's lock.

use std::collections::{BTreeMap, HashSet};
use std::sync::Arc;

use gix::ObjectId;

use crate::Inner;
use crate::call::{self, Meta, Touched};
use crate::error::{Code, Result};
use crate::fs::RelPath;
use crate::log::{Entry, FileChange, TRAILER};
use crate::store::{Author, Blobs, Store};

fn action(before: &Option<String>, after: &Option<String>) -> &'static str {
    match (before, after) {
        (None, _) => "created",
        (_, None) => "deleted",
        _ => "modified",
    }
}

/// The line of a commit's message that names its call ([`call::key`]).
const CALL: &str = "Kura-Call: ";

impl Inner {
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
            self.record(meta, change, made, removed, (false, &t.key), &t.blobs)?;
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
        (recovered, key): (bool, &str),
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
        let mut message = format!(
            "{title}\n\n{TRAILER}{}\n",
            serde_json::to_string(&entry).unwrap_or_default()
        );
        if !key.is_empty() {
            message.push_str(&format!("{CALL}{key}\n"));
        }
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
        // The calls still running (read without their locks), by when they
        // began: what one begun after a stopped call found at a path is
        // what came after that call there, when no committing call says
        // (a listing's recovery, a start's).
        let mut running = Vec::new();
        for (file, _, _) in listed {
            let name = format!("{folder}/{file}");
            let Ok(Some(held)) = self.kura.try_lock(&name) else {
                // A call in progress, or queued for its commit.
                if let Ok(Some(text)) = self.kura.read(&name) {
                    let live = call::parse_pending(&String::from_utf8_lossy(&text));
                    running.push((live.meta.at, call::tracks(&live.steps)));
                }
                continue;
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
        let kept = self
            .store
            .held(
                tracks
                    .iter()
                    .flat_map(|t| t.values())
                    .filter_map(|t| hex(&t.last))
                    .filter(|id| !blobs.contains_key(id)),
            )
            .map_err(|e| self.fault("cannot be read", e))?;
        for (i, (name, _held, pending)) in left.into_iter().enumerate() {
            let mut change = BTreeMap::new();
            for (path, t) in &tracks[i] {
                let at_hand = |s: &Option<String>, blobs: &Blobs| {
                    hex(s).is_none_or(|id| blobs.contains_key(&id) || kept.contains(&id))
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
                        .or_else(|| then.get(path).cloned())
                        .or_else(|| {
                            running
                                .iter()
                                .filter(|(at, t)| *at > pending.meta.at && t.contains_key(path))
                                .min_by_key(|(at, _)| *at)
                                .map(|(_, t)| t[path].before.clone())
                        });
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
            let key = match meta.at {
                0 => String::new(), // a kura's from before calls had one
                at => call::key(&name, at),
            };
            if fresh && !self.listed_already(&meta, &change, &key)? {
                self.record(&meta, change, made, removed, (true, &key), &blobs)?;
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

    /// Wait for this process's calls queued before now, and record what a
    /// stopped kura left pending, if it left anything: a change answered by
    /// a kura killed before its commit is in the next listing (or undo) of
    /// any kura, not only after that kura's next commit or start.
    ///
    /// Only when another process's pending files are there (a live kura
    /// keeps its emptied ones), and under the history's lock, as a commit
    /// recovers: a probe of their locks outside it could make a commit take
    /// a dead call's file for a live one. A failure is logged: the listing
    /// goes on with what is recorded.
    pub(crate) fn settled(&self) -> Result<()> {
        self.queue.settle();
        let ours = format!("{}-", crate::fs::process_tag());
        let others = match self.kura.list("pending") {
            Ok(listed) => listed.iter().any(|(file, _, _)| !file.starts_with(&ours)),
            Err(e) => {
                tracing::warn!("{} history: pending calls not looked at ({e})", self.name);
                false
            }
        };
        if others {
            let recovered = self.lock().and_then(|_held| {
                self.recover(&Default::default())
                    .and_then(|()| self.catch_up())
            });
            if let Err(e) = recovered {
                tracing::warn!("{} history: {}", self.name, e.message);
            }
        }
        Ok(())
    }

    /// Whether the call `key` of `meta`, whose pending file is found
    /// again, was committed already: its pending file could not be emptied
    /// (the next commit finds it), or it came back full after a power cut
    /// (its emptying is not synced) when later changes of its files were
    /// listed since. A commit carries its call's key; a pending file of a
    /// kura from before keys is taken as committed when its change is the
    /// newest listed change of its files, by the same session and tool
    /// (the same edit made again after an undo is not).
    fn listed_already(
        &self,
        meta: &Meta,
        change: &BTreeMap<String, (Option<String>, Option<String>)>,
        key: &str,
    ) -> Result<bool> {
        if !key.is_empty() {
            // Its commit is no older than its pending file (an hour of
            // clock skew between two kuras allowed). Known either way
            // unless the walk met the pruned boundary first.
            let since = i64::try_from(meta.at / 1_000_000_000).unwrap_or(0) - 3600;
            let carried = self
                .store
                .carries(&format!("{CALL}{key}"), since)
                .map_err(|e| self.fault("cannot be read", e))?;
            if let Some(known) = carried {
                return Ok(known);
            }
        }
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
}
