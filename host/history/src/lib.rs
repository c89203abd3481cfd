//! Every change kura makes to a root's files, kept so that it can be seen,
//! attributed and undone.
//!
//! One git repository per root, in the state folder (`history/<root>/`, a
//! bare repository: `git -C <state>/history/vault-<hash> log -p` reads it), written
//! through `gix`. Its tree is kura's view of the files it has touched: each
//! tool call that changed something is one commit (the call's tool, a
//! bounded summary of its arguments, the client and session in the
//! message), preceded by a commit of what kura found changed outside it
//! when a file it is about to change differs from what it last wrote. Beside
//! the repository, `kura/changes.jsonl` lists the changes (one JSON line
//! each, also carried in the commit message, so a lost line is rebuilt from
//! git), which is what listing reads.
//!
//! The bytes a change replaces are in the object store before the change
//! is made: the root calls [`History`] through [`fs::Recorder`] first, and a
//! refusal there refuses the write. A call's steps are also written to a
//! pending file (fsynced, locked while the call runs): a kura killed
//! between a write and its commit leaves it, and the next start or commit
//! records what the files show.

use kura_core::{error, fs};

mod call;
mod delta;
mod log;
mod pack;
mod prune;
mod queue;
mod record;
mod store;
mod undo;

pub use call::{Call, Who, process_session};
pub use log::{Entry, FileChange, Filter, unified_diff};
pub use prune::{Floor, Measure, Retention, measure};
pub use queue::settle_all;
pub use undo::{Conflict, Plan, Restore};

use std::sync::{Arc, Mutex};

use kura_core::fault;

use crate::error::{Code, Error, Result};
use crate::fs::{RelPath, Root, StateDir};

/// One root's history (cheap to clone: a handle).
#[derive(Clone)]
pub struct History {
    inner: Arc<Inner>,
}

pub(crate) struct Inner {
    /// The root's name (`vault`, `vibe`).
    name: &'static str,
    /// Its folder in the state folder: `history/<name>-<hash of the root's
    /// path>` (two vaults served with one state folder keep two histories).
    dir: String,
    state: StateDir,
    /// `kura/` in the history's folder: the lock, the list of changes, the
    /// pending calls.
    kura: StateDir,
    store: store::Store,
    /// Top folders whose files are kura's own, never recorded (`.system`).
    skip: Vec<&'static str>,
    log: Mutex<log::Cache>,
    /// A second handle on the root, to see what a killed call left.
    reader: Root,
    /// How much of the history to keep, and whether a prune is due.
    retention: Mutex<Retention>,
    prune_wanted: std::sync::atomic::AtomicBool,
    /// The merge of packs running in the background, if one is.
    merging: Mutex<Option<std::thread::JoinHandle<()>>>,
    /// Empty pending files of this process, locked, for its next calls.
    spare: Mutex<Vec<(std::fs::File, String)>>,
    /// Commits made by this process.
    commits: std::sync::atomic::AtomicUsize,
    /// Calls waiting for their commit.
    queue: queue::Queue,
    /// Packs this process's commits wrote since the last merge began.
    unmerged: std::sync::atomic::AtomicUsize,
}

impl History {
    /// Open (creating it the first time) the history of `root`, named
    /// `name`, in the state folder; record what a killed kura left pending.
    /// Files under the `skip` top folders are never recorded.
    pub fn open(
        state: &StateDir,
        name: &'static str,
        root: &Root,
        skip: &[&'static str],
    ) -> Result<History> {
        let failed = |e: std::io::Error| {
            Error::new(
                Code::FilesystemError,
                format!("the {name} history in the state folder cannot be opened: {e}"),
            )
        };
        let state = state.try_clone().map_err(failed)?;
        let folder = folder_of(name, root);
        // Two kuras starting together must not both make the repository
        // (the second would find the first's half-made folder).
        let making = state.lock(&format!("{folder}.lock")).map_err(failed)?;
        let dir = state.ensure_dir(&folder).map_err(failed)?;
        let exists = state
            .read(&format!("{folder}/HEAD"))
            .map_err(failed)?
            .is_some();
        let store = store::Store::open(&dir, exists).map_err(|e| {
            Error::new(
                Code::FilesystemError,
                format!(
                    "the {name} history ({}) cannot be opened: {e}",
                    dir.display()
                ),
            )
        })?;
        if !exists {
            // Which root this history is of, for a person listing them.
            let said = format!("{}\n", root.path().display());
            state
                .write(&format!("{folder}/kura/root"), said.as_bytes())
                .map_err(failed)?;
        }
        drop(making);
        let kura = state.sub(&format!("{folder}/kura")).map_err(failed)?;
        let history = History {
            inner: Arc::new(Inner {
                kura,
                name,
                dir: folder,
                reader: root.try_clone().map_err(failed)?,
                state,
                store,
                skip: skip.to_vec(),
                log: Mutex::new(log::Cache::default()),
                commits: std::sync::atomic::AtomicUsize::new(0),
                spare: Mutex::new(Vec::new()),
                merging: Mutex::new(None),
                retention: Mutex::new(Retention::default()),
                prune_wanted: std::sync::atomic::AtomicBool::new(false),
                queue: queue::Queue::default(),
                unmerged: std::sync::atomic::AtomicUsize::new(0),
            }),
        };
        queue::opened(&history.inner);
        {
            let _held = history.inner.lock()?;
            history.inner.recover(&Default::default())?;
            history.inner.catch_up()?;
            history.inner.pack(pack::PACK_AT);
        }
        history.inner.merge_later();
        Ok(history)
    }

    /// Keep the history to `retention` from now on: what it no longer
    /// keeps is pruned in the background, now and every
    /// [`PRUNE_EVERY`] commits.
    pub fn keep(&self, retention: Retention) {
        *self
            .inner
            .retention
            .lock()
            .unwrap_or_else(|e| e.into_inner()) = retention;
        self.inner.prune_later();
    }

    /// Prune what the retention no longer keeps, now; how many changes
    /// went.
    pub fn prune(&self) -> Result<usize> {
        let r = *self
            .inner
            .retention
            .lock()
            .unwrap_or_else(|e| e.into_inner());
        self.inner.prune(r)
    }

    /// Wait until the calls this process made are committed (a reader
    /// of the repository itself, or a process about to exit; listings
    /// wait by themselves).
    pub fn settle(&self) {
        self.inner.queue.settle();
    }

    pub fn name(&self) -> &'static str {
        self.inner.name
    }

    /// The repository's folder (for `git -C`).
    pub fn path(&self) -> std::path::PathBuf {
        self.inner.state.path().join(&self.inner.dir)
    }

    /// The changes that match `filter`, newest first, each with the id of
    /// the change that undid it (if one did), from `offset`, at most
    /// `limit`; and how many matched in all.
    pub fn list(
        &self,
        filter: &Filter,
        offset: usize,
        limit: usize,
    ) -> Result<(Vec<Entry>, usize)> {
        self.inner.list(filter, offset, limit)
    }

    /// One change by its id (or a prefix of it, at least 7 characters).
    pub fn find(&self, id: &str) -> Result<Entry> {
        self.inner.find(id)
    }

    /// The unified diff of one change, at most `max_chars` characters, and
    /// whether it was cut.
    pub fn diff(&self, entry: &Entry, max_chars: usize) -> Result<(String, bool)> {
        self.inner.diff(entry, max_chars)
    }

    /// What undoing `targets` (newest first) would do to `root`'s files,
    /// and what stands in the way.
    pub fn plan_undo(&self, root: &Root, targets: Vec<Entry>) -> Result<Plan> {
        undo::plan(root, targets)
    }

    /// Carry out `plan` through `root` (whose recorder is this history), all
    /// or nothing; the call's change is marked as undoing the plan's
    /// changes.
    pub fn apply_undo(&self, root: &Root, plan: &Plan) -> Result<()> {
        undo::apply(&self.inner, root, plan)
    }

    /// Finish what undos a killed kura left halfway, through `root` (whose
    /// recorder is this history): at start-up, before any call.
    pub fn finish_undos(&self, root: &Root) {
        undo::finish(&self.inner, root);
    }

    /// The changes of `session` an undo of the session takes back, newest
    /// first: all of them but those already undone by a change of another
    /// session.
    pub fn session_changes(&self, session: &str) -> Result<Vec<Entry>> {
        self.inner.session_changes(session)
    }

    /// The history as the root's recorder.
    pub fn recorder(&self) -> Arc<dyn fs::Recorder> {
        Arc::new(self.clone())
    }
}

/// Commits between two looks at how many packs there are.
const MERGE_EVERY: usize = 5;
/// Packs this process may write past the last merge before its next
/// commit waits for a merge: a quarter of the object store's slots.
const UNMERGED_MAX: usize = pack::PACK_SLOTS as usize / 4;
/// Commits between two looks at what the retention no longer keeps.
pub const PRUNE_EVERY: usize = 500;

/// The history's folder in the state folder for root `name` at its path.
pub fn folder_of(name: &str, root: &Root) -> String {
    let h = blake3::hash(root.path().to_string_lossy().as_bytes()).to_hex();
    format!("history/{name}-{}", &h[..16])
}

impl Inner {
    /// The history's lock, across processes: commits are made one at a time.
    fn lock(&self) -> Result<std::fs::File> {
        self.kura
            .lock("lock")
            .map_err(|e| self.fault("cannot be locked", e))
    }

    fn fault(&self, what: &str, e: impl std::fmt::Display) -> Error {
        Error::new(
            Code::FilesystemError,
            format!(
                "the {} history {what} ({e}); kura changes nothing it cannot keep a copy of",
                self.name
            ),
        )
        .with("reason", "history")
    }

    /// Pack the loose objects when there are at least `at` (left by a
    /// kura before issue 54's packs, or by git). A failure loses nothing
    /// (they stay loose) and is logged.
    fn pack(&self, at: usize) {
        match self.store.pack_loose(&self.state, &self.dir, at) {
            Ok(0) => {}
            Ok(n) => tracing::info!("{} history: {n} loose objects packed", self.name),
            Err(e) => tracing::warn!("{} history: loose objects not packed ({e})", self.name),
        }
    }

    /// Merge the smaller packs when there are many, under the merge's
    /// own lock (one merge at a time across processes; commits go on
    /// meanwhile: a merge removes only packs it has rewritten whole).
    fn merge(&self) {
        let Ok(Some(merging)) = self.kura.try_lock("merge.lock") else {
            return;
        };
        self.merge_held(merging);
    }

    /// Merge the packs now, waiting for a merge in progress to end first:
    /// this process's commits wrote so many packs since the last merge
    /// that the object store could run out of slots for them (a writer
    /// faster than the merges). Run before the history's lock is taken
    /// (a prune holds the merge's lock, then takes the history's).
    fn merge_now(&self) {
        match self.kura.lock("merge.lock") {
            Ok(merging) => self.merge_held(merging),
            Err(e) => tracing::warn!("{} history: packs not merged ({e})", self.name),
        }
    }

    fn merge_held(&self, _merging: std::fs::File) {
        self.unmerged.store(0, std::sync::atomic::Ordering::Relaxed);
        match self.store.merge_packs(&self.state, &self.dir) {
            Ok(0) => {}
            Ok(n) => {
                tracing::debug!("{} history: {n} packs merged", self.name);
                self.reopen();
            }
            Err(e) => tracing::warn!("{} history: packs not merged ({e})", self.name),
        }
    }

    /// A fresh object store once packs went (see `store::Store::reopen`).
    fn reopen(&self) {
        if let Err(e) = self.store.reopen() {
            tracing::warn!("{} history: not opened anew ({e})", self.name);
        }
    }

    /// [`Self::merge`] on a thread of its own, unless one runs already: a
    /// write does not wait for it.
    fn merge_later(self: &Arc<Self>) {
        self.later(|me| me.merge());
    }

    /// Pruning on the background thread (then a merge); when the thread
    /// is busy, its job prunes when it ends.
    fn prune_later(self: &Arc<Self>) {
        self.prune_wanted
            .store(true, std::sync::atomic::Ordering::Relaxed);
        self.later(|me| me.merge());
    }

    /// Prune, if asked to, what the retention no longer keeps.
    fn prune_if_wanted(self: &Arc<Self>) {
        if !self
            .prune_wanted
            .swap(false, std::sync::atomic::Ordering::Relaxed)
        {
            return;
        }
        let r = *self.retention.lock().unwrap_or_else(|e| e.into_inner());
        if r != Retention::default()
            && let Err(e) = self.prune(r)
        {
            tracing::warn!("{} history: {}", self.name, e.message);
        }
    }

    /// Run `work` on the history's background thread, unless it is busy;
    /// a prune asked for meanwhile comes first.
    fn later(self: &Arc<Self>, work: impl FnOnce(&Arc<Self>) + Send + 'static) {
        let mut slot = self.merging.lock().unwrap_or_else(|e| e.into_inner());
        if slot.as_ref().is_some_and(|h| !h.is_finished()) {
            return;
        }
        let me = self.clone();
        *slot = std::thread::Builder::new()
            .name("kura-history".into())
            .spawn(move || {
                // Each under its name in a test's fault plan (a kill point
                // at each of its write steps); nothing in the `kura` binary.
                let prune = |me: &Arc<Self>| fault::task("history_prune", || me.prune_if_wanted());
                prune(&me);
                fault::task("history_merge", || work(&me));
                prune(&me);
            })
            .ok();
    }

    /// Wait for the queued commits, then for a merge in progress, if one
    /// is.
    #[cfg(test)]
    fn settle(&self) {
        self.queue.settle();
        let running = self
            .merging
            .lock()
            .unwrap_or_else(|e| e.into_inner())
            .take();
        if let Some(h) = running {
            let _ = h.join();
        }
    }

    /// After a commit (each writes a pack): every [`MERGE_EVERY`] commits,
    /// see whether the packs are to be merged.
    fn after_commit(self: &Arc<Self>) {
        let n = self
            .commits
            .fetch_add(1, std::sync::atomic::Ordering::Relaxed)
            + 1;
        self.unmerged
            .fetch_add(1, std::sync::atomic::Ordering::Relaxed);
        if n.is_multiple_of(PRUNE_EVERY) {
            self.prune_later();
        } else if n.is_multiple_of(MERGE_EVERY) {
            self.merge_later();
        }
    }

    fn skipped(&self, p: &RelPath) -> bool {
        p.segments()
            .first()
            .is_some_and(|top| self.skip.iter().any(|s| top.eq_ignore_ascii_case(s)))
    }
}

impl fs::Recorder for History {
    fn file(&self, p: &RelPath, before: Option<&[u8]>, after: Option<&[u8]>) -> Result<()> {
        if self.inner.skipped(p) {
            return Ok(());
        }
        // A fault here (the tests' harness) is a history that cannot be
        // kept: the write is refused.
        kura_core::fault::step().map_err(|e| self.inner.fault(&format!("cannot keep `{p}`"), e))?;
        let id = |b: Option<&[u8]>| b.map(|b| store::Store::id_of(b).to_string());
        let step = call::Step {
            path: p.to_string(),
            before: id(before),
            after: id(after),
            kept: None,
            wrote: None,
            moved: false,
            done: false,
        };
        call::record(&self.inner, step, before, after)
    }

    fn folder(&self, p: &RelPath, made: bool) {
        if !self.inner.skipped(p) {
            call::record_folder(&self.inner, p.to_string(), made);
        }
    }

    fn unmade(&self, p: &RelPath) {
        if !self.inner.skipped(p) {
            call::unmade(&self.inner, p);
        }
    }

    fn made(&self, p: &RelPath) {
        if !self.inner.skipped(p) {
            call::made(&self.inner, p);
        }
    }

    fn moved(&self, from: &RelPath, to: &RelPath, file: &fs::Moved<'_>) -> Result<()> {
        kura_core::fault::step()
            .map_err(|e| self.inner.fault(&format!("cannot keep `{from}`"), e))?;
        let step = |path: &RelPath, before: Option<&str>, after: Option<&str>| call::Step {
            path: path.to_string(),
            before: before.map(str::to_owned),
            after: after.map(str::to_owned),
            kept: None,
            wrote: None,
            moved: true,
            done: false,
        };
        // A name that is kura's own (`.system/`) on one side only: the
        // other side is a file appearing or going.
        if !self.inner.skipped(from) {
            call::record(&self.inner, step(from, Some(&file.id), None), None, None)?;
        }
        if !self.inner.skipped(to) {
            // Refused: the rename is not made, nor is its first half.
            call::record(&self.inner, step(to, None, Some(&file.id)), None, None)
                .inspect_err(|_| call::unmade(&self.inner, from))?;
        }
        Ok(())
    }
}

/// The id `bytes` have in a history (a git blob id, hex): what
/// `vault_history` and `vault_undo` name a file's state by.
pub fn blob_id(bytes: &[u8]) -> String {
    store::Store::id_of(bytes).to_string()
}

/// The session of the call in progress on this thread, if one is.
pub fn current_session() -> Option<String> {
    call::current_who().map(|w| w.session)
}

/// The refusal of an undo whose files changed since.
pub fn conflict_error(history: &History, plan: &Plan) -> Error {
    undo::conflict(&history.inner, plan)
}

/// A recorder that refuses every change, saying `why` (a root whose history
/// cannot be kept).
pub fn refusing(why: String) -> Arc<dyn fs::Recorder> {
    Arc::new(Refusing(why))
}

struct Refusing(String);

impl fs::Recorder for Refusing {
    fn file(&self, p: &RelPath, _: Option<&[u8]>, _: Option<&[u8]>) -> Result<()> {
        Err(Error::new(
            Code::FilesystemError,
            format!(
                "`{p}` was not changed: {}, so the change could not be undone",
                self.0
            ),
        )
        .with("path", p.to_string())
        .with("reason", "history"))
    }

    fn changing_folder(&self, p: &RelPath) -> Result<()> {
        self.file(p, None, None)
    }

    fn folder(&self, _: &RelPath, _: bool) {}

    fn moved(&self, from: &RelPath, _: &RelPath, _: &fs::Moved<'_>) -> Result<()> {
        self.file(from, None, None)
    }
}

#[cfg(test)]
mod tests;
