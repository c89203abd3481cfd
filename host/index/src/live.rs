//! A [`SectionIndex`] kept up to date with a writable root: opened on first
//! use (or by the start-up background sync, so `initialize` never waits for
//! tantivy), re-checked before a search only when the file watcher saw a
//! change — only the files it names, when it can name them, else all of
//! them (always, where no watcher could be set up) — and told about each
//! write through the server so the next search sees it.

use std::sync::{Mutex, OnceLock};

use super::{Extracted, SectionIndex, SyncOptions, SyncStats};
use crate::error::Result;
use crate::fs::{Changes, Listener, Listeners, RelPath, Root, Watch};

pub struct LiveIndex {
    /// What the index is of ("manuals", "vault", "vibe"), for logs.
    what: &'static str,
    name: String,
    state_dir: Option<std::path::PathBuf>,
    root_path: std::path::PathBuf,
    indexable: fn(&RelPath) -> bool,
    extract: fn(&RelPath, &str) -> Extracted,
    /// Who hears of the watcher's changes besides the index.
    listeners: Listeners,
    inner: OnceLock<Result<Inner>>,
}

struct Inner {
    index: SectionIndex,
    watch: Watch,
    /// Held during a sync.
    state: Mutex<State>,
}

#[derive(Default)]
struct State {
    /// Whether the first full sync has run.
    synced: bool,
    /// Bumped by every sync or write that changed the index (and by the
    /// first sync), so that caches of search results know when to drop.
    generation: u64,
    /// Bumped whenever a file the index does not hold (an attachment next
    /// to the notes) may have changed, for those who keep a list of them.
    others: u64,
}

impl State {
    fn saw(&mut self, stats: &SyncStats) {
        if stats.added + stats.updated + stats.deleted > 0 || !self.synced {
            self.generation += 1;
        }
    }
}

impl LiveIndex {
    /// An index of the files of `root` that `indexable` accepts, split by
    /// `extract`; kept under the state folder by a name derived from the root.
    pub fn new(
        what: &'static str,
        root: &Root,
        state_dir: Option<&std::path::Path>,
        indexable: fn(&RelPath) -> bool,
        extract: fn(&RelPath, &str) -> Extracted,
    ) -> LiveIndex {
        LiveIndex {
            what,
            name: format!(
                "{what}-{}",
                &blake3::hash(root.path().to_string_lossy().as_bytes()).to_hex()[..16]
            ),
            state_dir: state_dir.map(ToOwned::to_owned),
            root_path: root.path().to_owned(),
            indexable,
            extract,
            listeners: Listeners::default(),
            inner: OnceLock::new(),
        }
    }

    fn inner(&self) -> Result<&Inner> {
        self.inner
            .get_or_init(|| {
                let index = match SectionIndex::open(self.state_dir.as_deref(), &self.name) {
                    Ok(i) => i,
                    Err(e) => {
                        tracing::warn!("{} index kept in memory: {}", self.what, e.message);
                        SectionIndex::open(None, &self.name)?
                    }
                };
                Ok(Inner {
                    index,
                    watch: Watch::start(&self.root_path, self.listeners.clone()),
                    state: Mutex::new(State::default()),
                })
            })
            .as_ref()
            .map_err(Clone::clone)
    }

    /// Hear of every change the file watcher sees below the root, from the
    /// moment the index is opened (none where no watcher could be set up).
    pub fn listen(&self, listener: Listener) {
        self.listeners.add(listener);
    }

    /// The index, opened if it was not yet.
    pub fn index(&self) -> Result<&SectionIndex> {
        Ok(&self.inner()?.index)
    }

    /// Re-check the files if anything may have changed (the first call
    /// indexes everything); `None` when there was nothing to check.
    pub fn refresh(&self, root: &Root) -> Result<Option<SyncStats>> {
        let inner = self.inner()?;
        let mut state = inner.state.lock().unwrap_or_else(|e| e.into_inner());
        let changes = inner.watch.take_changes();
        if state.synced {
            match changes {
                Changes::Nothing => return Ok(None),
                Changes::Paths(paths) => {
                    if let Some(files) = self.just_files(inner, root, &paths) {
                        if files.iter().any(|f| !(self.indexable)(f)) {
                            state.others += 1;
                        }
                        let stats =
                            inner
                                .index
                                .update_files(root, &files, self.indexable, self.extract)?;
                        state.saw(&stats);
                        return Ok(Some(stats));
                    }
                }
                Changes::Everything => {}
            }
        }
        let stats = self.sync_locked(inner, root, &SyncOptions::default())?;
        state.saw(&stats);
        state.others += 1;
        state.synced = true;
        Ok(Some(stats))
    }

    /// The first sync of a root kura writes to: the temporary files a
    /// crash left are swept first, so they are never indexed.
    pub fn start_up(&self, root: &Root) -> Result<Option<SyncStats>> {
        root.sweep_temp_files();
        self.refresh(root)
    }

    /// The index's generation: it changes whenever what a search can find
    /// may have changed.
    pub fn generation(&self) -> u64 {
        self.inner().map_or(0, |i| {
            i.state.lock().unwrap_or_else(|e| e.into_inner()).generation
        })
    }

    /// Changes whenever a file the index does not hold may have changed
    /// (every time, where no watcher could be set up), as far as the last
    /// re-check knows: a list of such files made at one value is current
    /// while it stays.
    pub fn others_generation(&self) -> u64 {
        self.inner().map_or(0, |i| {
            i.state.lock().unwrap_or_else(|e| e.into_inner()).others
        })
    }

    /// The files behind the watcher's paths, or None when a whole walk is
    /// needed: a path is a folder, or is gone and held indexed files (a
    /// folder removed or renamed), or lies outside the root.
    fn just_files(
        &self,
        inner: &Inner,
        root: &Root,
        paths: &[std::path::PathBuf],
    ) -> Option<Vec<RelPath>> {
        let mut out = Vec::new();
        for p in paths {
            let rel = p.strip_prefix(&self.root_path).ok()?.to_str()?;
            if rel.is_empty() {
                return None; // the root itself
            }
            let Ok(path) = RelPath::parse(rel, false) else {
                return None;
            };
            match root.stat(&path) {
                Ok(Some(s)) if s.is_dir => return None,
                Ok(Some(_)) => out.push(path),
                Ok(None) => {
                    if inner.index.files().has_under(&path.to_string()) {
                        return None;
                    }
                    out.push(path); // a file gone (or a temporary one)
                }
                // Through a link that leaves the root: never indexed.
                Err(_) => continue,
            }
        }
        Some(out)
    }

    /// Re-check every file now, whatever the watcher says.
    pub fn recheck(&self, root: &Root) -> Result<SyncStats> {
        self.sync(root, &SyncOptions::default())
    }

    /// Re-check now with options: one folder only, a full rebuild, progress.
    pub fn sync(&self, root: &Root, options: &SyncOptions) -> Result<SyncStats> {
        let inner = self.inner()?;
        let mut state = inner.state.lock().unwrap_or_else(|e| e.into_inner());
        let whole = options.under.is_none();
        let taken = if whole {
            inner.watch.take_changes()
        } else {
            Changes::Nothing
        };
        let stats = match self.sync_locked(inner, root, options) {
            Ok(stats) => stats,
            Err(e) => {
                // A sync stopped half-way (cancelled) may have changed the
                // index, and the changes it took from the watcher may lie
                // in files it did not reach: the next search re-checks all.
                state.generation += 1;
                if !matches!(taken, Changes::Nothing) {
                    state.synced = false;
                }
                return Err(e);
            }
        };
        state.saw(&stats);
        state.others += 1;
        state.synced |= whole;
        Ok(stats)
    }

    fn sync_locked(&self, inner: &Inner, root: &Root, options: &SyncOptions) -> Result<SyncStats> {
        let start = match options.under {
            Some(u) => RelPath::parse(u, false)?,
            None => RelPath::root(),
        };
        let files: Vec<_> = root
            .walk_files(&start)?
            .into_iter()
            .filter(|(p, _)| (self.indexable)(p))
            .collect();
        inner.index.sync_with(root, &files, self.extract, options)
    }

    /// Index one file as it is now, right after the server wrote it (the
    /// next search sees it; tantivy commits it then or once writes pause);
    /// whether that worked.
    pub fn written(&self, root: &Root, path: &RelPath) -> bool {
        let done = self.inner().and_then(|i| {
            let stats = i
                .index
                .update_written(root, path, self.indexable, self.extract)?;
            let mut state = i.state.lock().unwrap_or_else(|e| e.into_inner());
            if state.synced {
                state.saw(&stats);
            }
            if !(self.indexable)(path) {
                state.others += 1;
            }
            Ok(stats)
        });
        if let Err(e) = &done {
            // The watcher has seen the write too: the next search re-checks.
            tracing::warn!(
                "{} index: {} (re-checked before the next search)",
                self.what,
                e.message
            );
        }
        done.is_ok()
    }
}
