//! Keeping a [`SectionIndex`] up to date: a sync over a root's files
//! (size and mtime, then the content hash), the watcher's files, a file the
//! server just wrote; and the manifest's view of what is indexed.

use serde::Serialize;
use tantivy::{IndexWriter, Term};

use crate::error::Result;
use crate::fs::{FileStat, RelPath, Root};
use crate::manifest::{FileState, Manifest};
use crate::schema::FileFields;
use crate::{Extracted, FileInfo, SectionIndex, internal};

#[derive(Clone, Copy, Debug, Default, PartialEq, Eq, Serialize, schemars::JsonSchema)]
pub struct SyncStats {
    pub scanned: u64,
    pub added: u64,
    pub updated: u64,
    pub deleted: u64,
    pub unchanged: u64,
}

/// How [`SectionIndex::sync_with`] runs.
#[derive(Default)]
pub struct SyncOptions<'a> {
    /// The files given are those under this folder: index entries elsewhere
    /// are left alone (not taken for deleted).
    pub under: Option<&'a str>,
    /// Re-read and re-index every file, whatever its size, mtime and hash.
    pub full: bool,
    /// Told (files done, files in all) after each file; once cancelled, the
    /// sync keeps what it did and stops (see [`SectionIndex::sync_with`]).
    pub job: crate::job::Job<'a>,
}

/// One sync's locks and running totals.
struct Batch<'a> {
    manifest: std::sync::MutexGuard<'a, Manifest>,
    writer: std::sync::MutexGuard<'a, IndexWriter>,
    stats: SyncStats,
    full: bool,
}

/// When a batch's changes are committed (see the `flush` module).
#[derive(Clone, Copy, PartialEq, Eq)]
enum Commit {
    Now,
    Soon,
}

/// The manifest's view of the indexed files (see [`SectionIndex::files`]).
pub struct Files<'a>(std::sync::MutexGuard<'a, Manifest>);

impl Files<'_> {
    pub fn get(&self, key: &str) -> Option<FileInfo<'_>> {
        self.0.files.get(key).map(FileState::info)
    }

    /// Whether the index holds a file below folder `dir`.
    pub fn has_under(&self, dir: &str) -> bool {
        let prefix = format!("{dir}/");
        self.0
            .files
            .range(prefix.clone()..)
            .next()
            .is_some_and(|(k, _)| k.starts_with(&prefix))
    }

    /// Every file, in path order.
    pub fn iter(&self) -> impl Iterator<Item = (&str, FileInfo<'_>)> {
        self.0.files.iter().map(|(k, v)| (k.as_str(), v.info()))
    }
}

impl FileState {
    fn info(&self) -> FileInfo<'_> {
        FileInfo {
            size: self.size,
            mtime_ns: self.mtime_ns,
            ctime_ns: self.ctime_ns,
            hash: &self.hash,
            meta: self.meta.as_deref(),
        }
    }
}

impl SectionIndex {
    /// Bring the index up to date with `files` (every indexable file of the
    /// root, with its stat). `extract` splits a file's text into units.
    pub fn sync<E: Into<Extracted>>(
        &self,
        root: &Root,
        files: &[(RelPath, FileStat)],
        extract: impl Fn(&RelPath, &str) -> E,
    ) -> Result<SyncStats> {
        self.sync_with(root, files, extract, &SyncOptions::default())
    }

    /// [`SectionIndex::sync`] with options: a part of the root only, a full
    /// rebuild, progress reports.
    pub fn sync_with<E: Into<Extracted>>(
        &self,
        root: &Root,
        files: &[(RelPath, FileStat)],
        extract: impl Fn(&RelPath, &str) -> E,
        options: &SyncOptions,
    ) -> Result<SyncStats> {
        let mut batch = self.batch();
        batch.full = options.full;
        let mut seen = std::collections::HashSet::new();
        let total = files.len() as u64;
        for (done, (path, stat)) in files.iter().enumerate() {
            if let Err(cancelled) = options.job.check("the index sync") {
                // Each file done so far is indexed as it is now and the
                // others as they were: committed, that is a consistent
                // index. Files not reached are not taken for deleted.
                self.finish(batch, Commit::Now)?;
                return Err(cancelled);
            }
            seen.insert(path.to_string());
            self.apply(&mut batch, root, path, Some(stat), &extract)?;
            options.job.report(done as u64 + 1, total);
        }
        let under = options.under.map(|u| format!("{u}/"));
        let gone: Vec<String> = batch
            .manifest
            .files
            .keys()
            .filter(|k| !seen.contains(*k))
            .filter(|k| under.as_ref().is_none_or(|u| k.starts_with(u.as_str())))
            .cloned()
            .collect();
        for key in gone {
            self.forget(&mut batch, &key);
        }
        self.finish(batch, Commit::Now)
    }

    /// Bring just these files up to date (those the watcher named): each
    /// is re-read if it changed, dropped if it is gone, or dropped when
    /// `indexable` says it is not a file this index holds. The manifest
    /// (and what is derived from it) follows at once; tantivy commits like
    /// after a write, before the next search or once changes pause, so an
    /// editor saving keystroke by keystroke pays for one commit.
    pub fn update_files<E: Into<Extracted>>(
        &self,
        root: &Root,
        paths: &[RelPath],
        indexable: impl Fn(&RelPath) -> bool,
        extract: impl Fn(&RelPath, &str) -> E,
    ) -> Result<SyncStats> {
        self.update(root, paths, indexable, extract, Commit::Soon)
    }

    /// [`SectionIndex::update_files`] for a file the server just wrote:
    /// committed on the next search or once writes pause (the `flush`
    /// module), so a burst of writes pays for one commit.
    pub fn update_written<E: Into<Extracted>>(
        &self,
        root: &Root,
        path: &RelPath,
        indexable: impl Fn(&RelPath) -> bool,
        extract: impl Fn(&RelPath, &str) -> E,
    ) -> Result<SyncStats> {
        self.update(
            root,
            std::slice::from_ref(path),
            indexable,
            extract,
            Commit::Soon,
        )
    }

    fn update<E: Into<Extracted>>(
        &self,
        root: &Root,
        paths: &[RelPath],
        indexable: impl Fn(&RelPath) -> bool,
        extract: impl Fn(&RelPath, &str) -> E,
        when: Commit,
    ) -> Result<SyncStats> {
        let mut batch = self.batch();
        for path in paths {
            let stat = if indexable(path) {
                root.stat(path)?.filter(|s| !s.is_dir)
            } else {
                None
            };
            self.apply(&mut batch, root, path, stat.as_ref(), &extract)?;
        }
        self.finish(batch, when)
    }

    fn batch(&self) -> Batch<'_> {
        Batch {
            manifest: self.core.manifest.lock().unwrap_or_else(|e| e.into_inner()),
            writer: self.core.writer.lock().unwrap_or_else(|e| e.into_inner()),
            stats: SyncStats::default(),
            full: false,
        }
    }

    /// Drop a file that is gone from the index and the manifest.
    fn forget(&self, batch: &mut Batch, key: &str) {
        batch
            .writer
            .delete_term(Term::from_field_text(self.fields.file, key));
        batch.manifest.files.remove(key);
        batch.manifest.unsaved.insert(key.to_owned());
        batch.stats.deleted += 1;
    }

    /// Make the batch's changes visible to searches and save the manifest
    /// (its state goes into the commit's payload, so that an index and a
    /// manifest that do not match are seen at the next start) — now, or
    /// soon (the `flush` module). A commit also takes any earlier change
    /// that was waiting.
    fn finish(&self, mut batch: Batch, when: Commit) -> Result<SyncStats> {
        if batch.manifest.unsaved.is_empty() {
            return Ok(batch.stats);
        }
        if when == Commit::Soon {
            self.core.mark_dirty();
            self.flusher.poke(&self.core);
            return Ok(batch.stats);
        }
        self.core.commit(&mut batch.manifest, &mut batch.writer)?;
        Ok(batch.stats)
    }

    /// Index one file as it is now (`stat` None: it is gone).
    fn apply<E: Into<Extracted>>(
        &self,
        batch: &mut Batch,
        root: &Root,
        path: &RelPath,
        stat: Option<&FileStat>,
        extract: &impl Fn(&RelPath, &str) -> E,
    ) -> Result<()> {
        batch.stats.scanned += 1;
        let key = path.to_string();
        let known = batch.manifest.files.get(&key);
        let Some(stat) = stat else {
            if known.is_some() {
                self.forget(batch, &key);
            }
            return Ok(());
        };
        let fresh =
            |k: &FileState| !batch.full && k.size == stat.size && k.mtime_ns == stat.mtime_ns;
        if known.is_some_and(fresh) {
            batch.stats.unchanged += 1;
            return Ok(());
        }
        let Ok((bytes, cut)) = root.read_prefix(path) else {
            return Ok(()); // vanished or unreadable since the walk: next sync decides
        };
        if cut {
            tracing::warn!(
                path = %path,
                size = stat.size,
                indexed = bytes.len(),
                "file over max_file_bytes: only its first bytes are indexed"
            );
        }
        let mut state = FileState {
            size: stat.size,
            mtime_ns: stat.mtime_ns,
            ctime_ns: stat.ctime_ns,
            hash: blake3::hash(&bytes).to_hex().to_string(),
            meta: None,
        };
        let was_indexed = known.is_some();
        if let Some(k) = known.filter(|k| !batch.full && k.hash == state.hash) {
            // Touched but not changed: remember the new mtime only.
            state.meta = k.meta.clone();
            batch.stats.unchanged += 1;
            batch.manifest.files.insert(key.clone(), state);
            batch.manifest.unsaved.insert(key);
            return Ok(());
        }
        if was_indexed {
            batch.stats.updated += 1;
            batch
                .writer
                .delete_term(Term::from_field_text(self.fields.file, &key));
        } else {
            batch.stats.added += 1;
        }
        let text = String::from_utf8_lossy(&bytes);
        let extracted: Extracted = extract(path, &text).into();
        let file = FileFields::new(&key);
        for unit in &extracted.units {
            batch
                .writer
                .add_document(self.doc(&file, unit, &extracted.tags))
                .map_err(internal)?;
        }
        state.meta = extracted.meta;
        batch.manifest.files.insert(key.clone(), state);
        batch.manifest.unsaved.insert(key);
        Ok(())
    }

    /// The files the index holds, with their manifest entries. Holds the
    /// manifest's lock: drop it before syncing.
    pub fn files(&self) -> Files<'_> {
        Files(self.core.manifest.lock().unwrap_or_else(|e| e.into_inner()))
    }
}
