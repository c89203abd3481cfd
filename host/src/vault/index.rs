//! The vault's search index (tantivy, one per vault root): its notes
//! (`.md`, `.markdown`, `.txt`; `.system/` left out) split at their headings.
//! A search re-checks the files only when the file watcher saw a change (or
//! always, where no watcher could be set up); a write through the server
//! re-indexes its file before it returns, so the next search sees it.

use std::sync::{Mutex, OnceLock};

use crate::error::Result;
use crate::fs::{RelPath, Root, Watch};
use crate::index::{SectionIndex, SyncStats, markdown_units};

pub struct VaultIndex {
    name: String,
    state_dir: Option<std::path::PathBuf>,
    root_path: std::path::PathBuf,
    /// Opened on first use (or by the background sync at start-up), so
    /// that `initialize` never waits for tantivy.
    inner: OnceLock<Result<Inner>>,
}

struct Inner {
    index: SectionIndex,
    watch: Watch,
    /// Whether the first full sync has run; held during a sync.
    synced: Mutex<bool>,
}

/// Whether the index holds this file.
pub fn indexable(p: &RelPath) -> bool {
    let reserved = p.segments().first().is_some_and(|s| s == ".system");
    let ext = p.extension().map(|e| e.to_ascii_lowercase());
    !reserved && matches!(ext.as_deref(), Some("md" | "markdown" | "txt"))
}

fn extract(_: &RelPath, text: &str) -> Vec<crate::index::Unit> {
    markdown_units(text)
}

impl VaultIndex {
    pub fn new(root: &Root, state_dir: Option<&std::path::Path>) -> VaultIndex {
        VaultIndex {
            name: format!(
                "vault-{}",
                &blake3::hash(root.path().to_string_lossy().as_bytes()).to_hex()[..16]
            ),
            state_dir: state_dir.map(ToOwned::to_owned),
            root_path: root.path().to_owned(),
            inner: OnceLock::new(),
        }
    }

    fn inner(&self) -> Result<&Inner> {
        self.inner
            .get_or_init(|| {
                let index = match SectionIndex::open(self.state_dir.as_deref(), &self.name) {
                    Ok(i) => i,
                    Err(e) => {
                        tracing::warn!("vault index kept in memory: {}", e.message);
                        SectionIndex::open(None, &self.name)?
                    }
                };
                Ok(Inner {
                    index,
                    watch: Watch::start(&self.root_path),
                    synced: Mutex::new(false),
                })
            })
            .as_ref()
            .map_err(Clone::clone)
    }

    /// The index, opened if it was not yet.
    pub fn index(&self) -> Result<&SectionIndex> {
        Ok(&self.inner()?.index)
    }

    /// Re-check the files if anything may have changed (the first call
    /// indexes everything); `None` when there was nothing to check.
    pub fn refresh(&self, root: &Root) -> Result<Option<SyncStats>> {
        self.sync(root, false)
    }

    /// Re-check every file now, whatever the watcher says.
    pub fn recheck(&self, root: &Root) -> Result<SyncStats> {
        Ok(self.sync(root, true)?.unwrap_or_default())
    }

    fn sync(&self, root: &Root, force: bool) -> Result<Option<SyncStats>> {
        let inner = self.inner()?;
        let mut synced = inner.synced.lock().unwrap_or_else(|e| e.into_inner());
        let changed = inner.watch.take_changed();
        if *synced && !changed && !force {
            return Ok(None);
        }
        let files: Vec<_> = root
            .walk_files(&RelPath::root())?
            .into_iter()
            .filter(|(p, _)| indexable(p))
            .collect();
        let stats = inner.index.sync(root, &files, extract)?;
        *synced = true;
        Ok(Some(stats))
    }

    /// Index one file as it is now, right after the server wrote it.
    pub fn written(&self, root: &Root, path: &RelPath) {
        let done = self.inner().and_then(|i| {
            i.index
                .update_files(root, std::slice::from_ref(path), indexable, extract)
        });
        if let Err(e) = done {
            // The watcher has seen the write too: the next search re-checks.
            tracing::warn!(
                "vault index: {} (re-checked before the next search)",
                e.message
            );
        }
    }
}
