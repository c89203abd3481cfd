//! When an index's changes become visible to searches.
//!
//! A sync (the start-up walk, a reindex, the watcher's re-check) commits
//! before it returns. A write through the server only hands its units to
//! tantivy's writer and marks the index dirty: tantivy's commit costs
//! ~10 ms whatever the size of the change (it closes a segment and writes
//! and syncs eight files), twenty times the write itself. The commit then
//! happens on the next search, or [`IDLE`] after the last write (at most
//! [`MOST`] after the first), whichever comes first, so a search always sees
//! every write that returned before it.
//!
//! Nothing is lost by waiting: the written file is durable before the tool
//! returns, and the saved manifest follows the commits, so after a crash
//! the next start finds the file unlike its manifest entry and indexes it.

use std::collections::BTreeSet;
use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::mpsc::{RecvTimeoutError, Sender, channel};
use std::sync::{Arc, Mutex, Weak};
use std::time::{Duration, Instant};

use tantivy::directory::MmapDirectory;
use tantivy::{IndexReader, IndexWriter};

use super::internal;
use super::manifest::{Manifest, Store};
use crate::error::Result;

/// How long the writes must pause before the background commit.
const IDLE: Duration = Duration::from_millis(100);
/// The longest a write waits for the background commit while writes go on.
const MOST: Duration = Duration::from_secs(1);

/// An index's committed state and what is waiting to be committed.
pub(super) struct Core {
    pub reader: IndexReader,
    pub writer: Mutex<IndexWriter>,
    pub manifest: Mutex<Manifest>,
    /// Where the manifest is saved (None: an index in RAM).
    pub store: Option<Store>,
    /// The index's folder (None: an index in RAM), for its map of open files.
    files: Option<MmapDirectory>,
    /// Whether the writer holds changes no commit has made visible.
    dirty: AtomicBool,
}

impl Core {
    pub fn new(
        reader: IndexReader,
        writer: IndexWriter,
        manifest: Manifest,
        store: Option<Store>,
        files: Option<MmapDirectory>,
    ) -> Core {
        Core {
            reader,
            writer: Mutex::new(writer),
            manifest: Mutex::new(manifest),
            store,
            files,
            dirty: AtomicBool::new(false),
        }
    }

    /// Commit the writer's changes with the manifest's unsaved entries,
    /// make them visible, and save the manifest.
    pub fn commit(&self, manifest: &mut Manifest, writer: &mut IndexWriter) -> Result<()> {
        if manifest.unsaved.is_empty() {
            self.dirty.store(false, Ordering::Release);
            return Ok(());
        }
        let t = Instant::now();
        let changed: Vec<String> = std::mem::take(&mut manifest.unsaved).into_iter().collect();
        let plan = manifest.plan(changed.len());
        let committed = writer.prepare_commit().and_then(|mut commit| {
            commit.set_payload(&plan.payload());
            commit.commit()
        });
        if let Err(e) = committed {
            manifest.unsaved = changed.into_iter().collect::<BTreeSet<_>>();
            return Err(internal(e));
        }
        let committed = t.elapsed();
        self.dirty.store(false, Ordering::Release);
        self.reader.reload().map_err(internal)?;
        self.forget_closed_files();
        let reloaded = t.elapsed();
        if let Some(store) = &self.store {
            store.save(manifest, &changed, plan);
        }
        tracing::debug!(
            target: "kura::timing",
            "index commit {:.2}ms, reload {:.2}ms, manifest {:.2}ms ({} files changed)",
            committed.as_secs_f64() * 1e3,
            (reloaded - committed).as_secs_f64() * 1e3,
            (t.elapsed() - reloaded).as_secs_f64() * 1e3,
            changed.len()
        );
        Ok(())
    }

    /// Drop the entries of files no reader holds any more (segments merged
    /// away or deleted) from tantivy's map of the folder's memory-mapped
    /// files. tantivy keeps an entry for every file it ever opened until
    /// asked for that map, so a server that commits all day — every write
    /// is a commit and a few new segment files — grew by about two megabytes
    /// a minute under a steady load of writes.
    fn forget_closed_files(&self) {
        if let Some(dir) = &self.files {
            dir.get_cache_info();
        }
    }

    /// Note that the writer holds changes to commit soon.
    pub fn mark_dirty(&self) {
        self.dirty.store(true, Ordering::Release);
    }

    /// Commit now if a write is waiting.
    pub fn flush(&self) -> Result<()> {
        if !self.dirty.load(Ordering::Acquire) {
            return Ok(());
        }
        let mut manifest = self.manifest.lock().unwrap_or_else(|e| e.into_inner());
        let mut writer = self.writer.lock().unwrap_or_else(|e| e.into_inner());
        self.commit(&mut manifest, &mut writer)
    }

    /// [`Core::flush`] before a search: a failed commit is logged and the
    /// search sees the last commit (the next search tries again).
    pub fn flush_for_search(&self) {
        if let Err(e) = self.flush() {
            tracing::warn!("index commit before a search: {}", e.message);
        }
    }
}

/// The thread that commits an index's writes once they pause, started on
/// the first write; it ends when the index is dropped.
#[derive(Default)]
pub(super) struct Flusher {
    tx: Mutex<Option<Sender<()>>>,
}

impl Flusher {
    /// Say a write is waiting for `core`'s commit.
    pub fn poke(&self, core: &Arc<Core>) {
        let mut tx = self.tx.lock().unwrap_or_else(|e| e.into_inner());
        if tx.as_ref().is_some_and(|t| t.send(()).is_ok()) {
            return;
        }
        let (sender, rx) = channel::<()>();
        let weak = Arc::downgrade(core);
        let started = std::thread::Builder::new()
            .name("kura-index-commit".into())
            .spawn(move || run(&weak, &rx));
        match started {
            Ok(_) => {
                let _ = sender.send(());
                *tx = Some(sender);
            }
            // Without the thread the next search commits.
            Err(e) => tracing::warn!("cannot start the index commit thread: {e}"),
        }
    }
}

fn run(core: &Weak<Core>, rx: &std::sync::mpsc::Receiver<()>) {
    while rx.recv().is_ok() {
        let first = Instant::now();
        loop {
            let wait = MOST.saturating_sub(first.elapsed()).min(IDLE);
            match rx.recv_timeout(wait) {
                Ok(()) if first.elapsed() < MOST => continue,
                Err(RecvTimeoutError::Disconnected) => return, // the index commits as it drops
                _ => break,
            }
        }
        let Some(core) = core.upgrade() else { return };
        if let Err(e) = core.flush() {
            tracing::warn!("index commit after a write: {}", e.message);
        }
    }
}
