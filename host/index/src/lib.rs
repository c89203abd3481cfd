//! Search indexes (tantivy). One [`SectionIndex`] per domain root, kept in the
//! state folder outside the roots (in RAM when there is none). A unit is a
//! section of a file (a whole `.json` file is one unit); the domain says how a
//! file splits into units. [`SectionIndex::sync`] brings the index up to date
//! by comparing each file's size and mtime, then its content hash, so only
//! changed files are re-read and re-indexed. Queries are built from analyzer
//! terms, never from a query parser, so user text is always just text.

// The layers below, under the names this crate's modules use.
use kura_core::{error, fs, job, text};

mod analyzer;
mod flush;
mod live;
mod manifest;
mod query;
mod schema;
mod sync;

pub use live::LiveIndex;
pub use query::{Filter, Hit, Keep, Probe, Results, Search};
pub use schema::stem_below_scope;
pub use sync::{Files, SyncOptions, SyncStats};

use std::path::Path;
use std::sync::Arc;

use tantivy::directory::MmapDirectory;
use tantivy::schema::Schema;
use tantivy::{Index, IndexReader, ReloadPolicy};

use crate::error::{Error, Result};
use crate::fs::StateDir;
use flush::{Core, Flusher};
use manifest::{Manifest, Store};
use schema::Fields;

/// Bump when the schema or the analyzer changes: an index of another version
/// is rebuilt.
pub const FORMAT: u32 = 11;

/// What the domain extracts from one file.
#[derive(Clone, Debug, PartialEq)]
pub struct Unit {
    pub start_line: u64,
    pub end_line: u64,
    /// Heading titles, outermost first, joined with " > ".
    pub heading: String,
    pub body: String,
}

/// What the domain extracts from one file: its units, the tags every unit
/// carries (exact terms a search may require, e.g. `folder:tasks`), and any
/// metadata the domain wants kept with the file in the manifest.
#[derive(Clone, Debug, Default)]
pub struct Extracted {
    pub units: Vec<Unit>,
    pub tags: Vec<String>,
    /// Kept as its JSON text: a parsed `Value` costs several times the
    /// bytes in memory, and the domain reads it only when the file changes.
    pub meta: Option<Box<serde_json::value::RawValue>>,
}

impl From<Vec<Unit>> for Extracted {
    fn from(units: Vec<Unit>) -> Self {
        Extracted {
            units,
            ..Extracted::default()
        }
    }
}

/// A file the index holds, as the manifest knows it.
#[derive(Clone, Copy, Debug)]
pub struct FileInfo<'a> {
    pub size: u64,
    pub mtime_ns: i128,
    /// Creation time (0: unknown).
    pub ctime_ns: i128,
    /// The digest of the content the index holds for the file.
    pub hash: &'a str,
    pub meta: Option<&'a serde_json::value::RawValue>,
}

/// A markdown text's sections (split at headings, fence-aware) as units.
pub fn markdown_units(text: &str) -> Vec<Unit> {
    let lines = crate::text::Lines::new(text);
    crate::text::markdown::sections(text)
        .into_iter()
        .map(|s| Unit {
            start_line: s.start_line as u64,
            end_line: s.end_line as u64,
            heading: s.path.join(" > "),
            body: text[lines.start(s.start_line)..lines.end(s.end_line)].to_owned(),
        })
        .collect()
}

pub struct SectionIndex {
    fields: Fields,
    core: Arc<Core>,
    flusher: Flusher,
    /// The index folder's lock, held while this process owns the folder.
    _owner: Option<std::fs::File>,
}

impl Drop for SectionIndex {
    fn drop(&mut self) {
        if let Err(e) = self.core.flush() {
            tracing::warn!("index commit on close: {}", e.message);
        }
    }
}

fn internal(e: impl std::fmt::Display) -> Error {
    Error::internal(format!("index: {e}"))
}

/// A reader of `index`, kura's analyzer registered first (a reader opens
/// every segment: a damaged one fails here, not in a search).
fn open_reader(index: &Index) -> Result<IndexReader> {
    index
        .tokenizers()
        .register(analyzer::PLAIN, analyzer::plain());
    index
        .reader_builder()
        .reload_policy(ReloadPolicy::Manual)
        .try_into()
        .map_err(internal)
}

/// The index saved in `path`, its reader and its manifest, if all three are
/// sound and of this version. `Err(None)`: there is none yet; `Err(Some)`:
/// why the one there cannot be used.
fn reuse(
    path: &Path,
    schema: &Schema,
    saved: &Store,
) -> std::result::Result<(Index, MmapDirectory, IndexReader, Manifest), Option<String>> {
    let cannot = |e: &dyn std::fmt::Display| Some(format!("it cannot be opened ({e})"));
    let dir = MmapDirectory::open(path).map_err(|e| cannot(&e))?;
    if !Index::exists(&dir).map_err(|e| cannot(&e))? {
        return Err(None);
    }
    let index = Index::open(dir.clone()).map_err(|e| cannot(&e))?;
    if index.schema() != *schema {
        return Err(Some("it was built by another version of kura".into()));
    }
    let payload = index
        .load_metas()
        .map_err(|e| Some(format!("its metadata cannot be read ({e})")))?
        .payload;
    let manifest = saved.load(payload.as_deref()).ok_or_else(|| {
        Some("its manifest is missing, damaged, of another version or behind its index".into())
    })?;
    let reader = open_reader(&index)
        .map_err(|e| Some(format!("a segment cannot be read ({})", e.message)))?;
    Ok((index, dir, reader, manifest))
}

impl SectionIndex {
    /// Open (or create) the index named `name` in the state folder, or in RAM.
    /// An index on disk is reused only when it has this version's schema, a
    /// manifest of this [`FORMAT`] that matches its last commit, and every
    /// segment opens; anything else (another version's index, a damaged
    /// manifest, a truncated segment) is emptied and rebuilt from the files,
    /// as at a first start — never read as it is.
    pub fn open(state: Option<&Path>, name: &str) -> Result<SectionIndex> {
        let (schema, fields) = schema::schema();
        let mut store = None;
        let mut manifest = Manifest::default();
        let mut files = None;
        let mut owner = None;
        // The folder's lock first: another kura process (another version,
        // perhaps) serving from this state folder owns the index there, and
        // this one must neither read it half-written nor rebuild it under
        // that process. It then keeps an index of its own in memory.
        let state = match state {
            Some(dir) => {
                let sd = StateDir::open(dir).map_err(internal)?;
                match sd
                    .try_lock(&format!("index/{name}.lock"))
                    .map_err(internal)?
                {
                    Some(lock) => {
                        owner = Some(lock);
                        Some(dir)
                    }
                    None => {
                        tracing::warn!(
                            "the {name} index in the state folder is in use by another kura process; this one keeps its {name} index in memory"
                        );
                        None
                    }
                }
            }
            None => None,
        };
        let (index, reader) = match state {
            Some(dir) => {
                let sd = StateDir::open(dir).map_err(internal)?;
                let sub = format!("index/{name}");
                let path = sd.ensure_dir(&sub).map_err(internal)?;
                let saved = Store::new(sd, sub.clone(), FORMAT);
                let opened = match reuse(&path, &schema, &saved) {
                    Ok((index, dir, reader, saved)) => {
                        manifest = saved;
                        files = Some(dir);
                        (index, reader)
                    }
                    Err(why) => {
                        if let Some(why) = why {
                            tracing::info!("the {name} index is rebuilt: {why}");
                        }
                        saved.clear().map_err(internal)?;
                        let dir = MmapDirectory::open(&path).map_err(internal)?;
                        let index = Index::create(
                            dir.clone(),
                            schema.clone(),
                            tantivy::IndexSettings::default(),
                        )
                        .map_err(internal)?;
                        files = Some(dir);
                        let reader = open_reader(&index)?;
                        (index, reader)
                    }
                };
                store = Some(saved);
                opened
            }
            None => {
                let index = Index::create_in_ram(schema);
                let reader = open_reader(&index)?;
                (index, reader)
            }
        };
        // One indexing thread: a second one gains ~20% on two cores (the
        // extracting thread competes for them) and costs ~30 MB of peak RSS.
        let writer = index
            .writer_with_num_threads(1, 50_000_000)
            .map_err(internal)?;
        Ok(SectionIndex {
            fields,
            core: Arc::new(Core::new(reader, writer, manifest, store, files)),
            flusher: Flusher::default(),
            _owner: owner,
        })
    }

    /// How many units the index holds.
    pub fn len(&self) -> u64 {
        self.core.flush_for_search();
        self.core.reader.searcher().num_docs()
    }

    pub fn is_empty(&self) -> bool {
        self.len() == 0
    }
}

#[cfg(test)]
mod tests {
    #![allow(clippy::disallowed_methods)] // fixtures are written with std::fs
    use super::*;
    use crate::fs::{FileStat, RelPath, Root};

    fn setup() -> (tempfile::TempDir, Root) {
        let t = tempfile::tempdir().unwrap();
        std::fs::create_dir_all(t.path().join("root/m")).unwrap();
        std::fs::write(t.path().join("root/m/a.md"), "# 算出プロパティ\n算出プロパティはキャッシュされます。\n## Cómo funciona\nLas funciones calculadas se almacenan.\n").unwrap();
        std::fs::write(
            t.path().join("root/m/b.md"),
            "# Watchers\nA watcher runs a callback when state changes.\n",
        )
        .unwrap();
        let r = Root::open(&t.path().join("root")).unwrap();
        (t, r)
    }

    /// The fixtures are markdown: split at their headings.
    fn markdown_file(_: &RelPath, text: &str) -> Vec<Unit> {
        markdown_units(text)
    }

    fn files(r: &Root) -> Vec<(RelPath, FileStat)> {
        r.walk_files(&RelPath::root()).unwrap()
    }

    fn sync(ix: &SectionIndex, r: &Root) -> SyncStats {
        ix.sync(r, &files(r), markdown_file).unwrap()
    }

    #[test]
    fn a_second_process_never_rebuilds_a_live_index() {
        let (t, r) = setup();
        let state = t.path().join("state");
        let first = SectionIndex::open(Some(&state), "m").unwrap();
        sync(&first, &r);
        let n = first.len();
        assert!(n > 0);
        // Another version's manifest would make a start rebuild; the
        // folder's owner is alive, so the second keeps its index in memory.
        let second = SectionIndex::open(Some(&state), "m").unwrap();
        assert_eq!(second.len(), 0, "the second index is its own");
        sync(&second, &r);
        assert_eq!(first.len(), n, "the live index was not touched");
        drop(second);
        drop(first);
        // Its owner gone, the next start reuses the folder.
        let third = SectionIndex::open(Some(&state), "m").unwrap();
        assert_eq!(third.len(), n);
    }

    #[test]
    fn japanese_spanish_and_english_queries_find_their_sections() {
        let (_t, r) = setup();
        let ix = SectionIndex::open(None, "t").unwrap();
        assert_eq!(sync(&ix, &r).added, 2);
        let top = |q: &str| {
            ix.search(&Search::new(q, 3))
                .unwrap()
                .hits
                .first()
                .map(|h| (h.file.clone(), h.start_line))
        };
        assert_eq!(top("キャッシュ"), Some(("m/a.md".into(), 1)));
        assert_eq!(
            top("función calculada"),
            Some(("m/a.md".into(), 3)),
            "stemmed Spanish"
        );
        assert_eq!(
            top("watching callbacks"),
            Some(("m/b.md".into(), 1)),
            "stemmed English"
        );
        assert_eq!(top("C++ (\"rate-limiting\") auth.py:"), None);
    }

    #[test]
    fn sections_lists_every_unit_and_present_says_which_terms_a_scope_uses() {
        let (_t, r) = setup();
        let ix = SectionIndex::open(None, "t").unwrap();
        sync(&ix, &r);
        let mut all: Vec<(String, u64)> = ix
            .sections()
            .unwrap()
            .into_iter()
            .map(|h| (h.file, h.start_line))
            .collect();
        all.sort();
        assert_eq!(
            all,
            [
                ("m/a.md".into(), 1),
                ("m/a.md".into(), 3),
                ("m/b.md".into(), 1)
            ]
        );
        let terms = ["キャ".to_owned(), "watcher".to_owned(), "zebra".to_owned()];
        assert_eq!(ix.present(&terms, Some("m")).unwrap(), [true, true, false]);
        assert_eq!(
            ix.present(&terms, Some("elsewhere")).unwrap(),
            [false, false, false]
        );
    }

    #[test]
    fn a_manifest_that_lost_a_committed_change_means_a_rebuild_without_duplicates() {
        let (t, r) = setup();
        let state = t.path().join("state");
        let ix = SectionIndex::open(Some(&state), "t").unwrap();
        sync(&ix, &r);
        std::fs::write(t.path().join("root/m/c.md"), "# Zebra\nA zebra.\n").unwrap();
        assert_eq!(sync(&ix, &r).added, 1);
        drop(ix);
        // As if the process died between tantivy's commit and the journal.
        let dir = state.join("index/t");
        for e in std::fs::read_dir(&dir).unwrap() {
            let p = e.unwrap().path();
            if p.extension().is_some_and(|x| x == "log") {
                std::fs::remove_file(p).unwrap();
            }
        }
        let ix = SectionIndex::open(Some(&state), "t").unwrap();
        assert_eq!(sync(&ix, &r).added, 3, "rebuilt from scratch");
        assert_eq!(
            ix.search(&Search::new("zebra", 5)).unwrap().hits.len(),
            1,
            "no unit twice"
        );
    }

    fn written(ix: &SectionIndex, r: &Root, path: &str) -> SyncStats {
        let p = RelPath::parse(path, false).unwrap();
        ix.update_written(r, &p, |_| true, markdown_file).unwrap()
    }

    fn copy_dir(from: &Path, to: &Path) {
        std::fs::create_dir_all(to).unwrap();
        for e in std::fs::read_dir(from).unwrap() {
            let e = e.unwrap();
            if e.file_type().unwrap().is_dir() {
                copy_dir(&e.path(), &to.join(e.file_name()));
            } else if let Err(err) = std::fs::copy(e.path(), to.join(e.file_name())) {
                // tantivy's background merges and clean-ups remove files no
                // commit refers to: one gone since the listing is not needed.
                assert_eq!(err.kind(), std::io::ErrorKind::NotFound, "{err}");
            }
        }
    }

    #[test]
    fn a_write_is_seen_by_the_next_search_without_waiting_for_the_commit() {
        let (t, r) = setup();
        let ix = SectionIndex::open(Some(&t.path().join("state")), "t").unwrap();
        sync(&ix, &r);
        for i in 0..3 {
            std::fs::write(
                t.path().join(format!("root/m/z{i}.md")),
                "# Zebra
A zebra.
",
            )
            .unwrap();
            assert_eq!(written(&ix, &r, &format!("m/z{i}.md")).added, 1);
            assert_eq!(
                ix.search(&Search::new("zebra", 9)).unwrap().hits.len(),
                i + 1,
                "write {i} visible at once"
            );
        }
        std::fs::write(
            t.path().join("root/m/z0.md"),
            "# Okapi
An okapi.
",
        )
        .unwrap();
        written(&ix, &r, "m/z0.md");
        std::fs::remove_file(t.path().join("root/m/z1.md")).unwrap();
        written(&ix, &r, "m/z1.md");
        assert_eq!(ix.search(&Search::new("zebra", 9)).unwrap().hits.len(), 1);
        assert_eq!(ix.search(&Search::new("okapi", 9)).unwrap().hits.len(), 1);
    }

    #[test]
    fn writes_are_committed_in_the_background_once_they_pause() {
        let (t, r) = setup();
        let state = t.path().join("state");
        let ix = SectionIndex::open(Some(&state), "t").unwrap();
        sync(&ix, &r);
        let payload = || {
            Index::open_in_dir(state.join("index/t"))
                .unwrap()
                .load_metas()
                .unwrap()
                .payload
        };
        let before = payload();
        std::fs::write(
            t.path().join("root/m/z.md"),
            "# Zebra
A zebra.
",
        )
        .unwrap();
        written(&ix, &r, "m/z.md");
        assert_eq!(payload(), before, "not committed by the write itself");
        let start = std::time::Instant::now();
        while payload() == before {
            assert!(start.elapsed().as_secs() < 10, "never committed");
            std::thread::sleep(std::time::Duration::from_millis(20));
        }
    }

    #[test]
    fn a_crash_before_the_deferred_commit_loses_no_write() {
        let (t, r) = setup();
        let state = t.path().join("state");
        let ix = SectionIndex::open(Some(&state), "t").unwrap();
        sync(&ix, &r);
        std::fs::write(
            t.path().join("root/m/z.md"),
            "# Zebra
A zebra.
",
        )
        .unwrap();
        std::fs::write(
            t.path().join("root/m/b.md"),
            "# Watchers
An okapi.
",
        )
        .unwrap();
        written(&ix, &r, "m/z.md");
        written(&ix, &r, "m/b.md");
        // What the disk holds if the process dies now: the last commit.
        let crashed = t.path().join("crashed");
        copy_dir(&state, &crashed);
        let again = SectionIndex::open(Some(&crashed), "t").unwrap();
        let s = sync(&again, &r);
        assert_eq!((s.added, s.updated, s.unchanged), (1, 1, 1));
        for (q, n) in [("zebra", 1), ("okapi", 1), ("callback", 0)] {
            assert_eq!(
                again.search(&Search::new(q, 9)).unwrap().hits.len(),
                n,
                "{q}"
            );
        }
        drop(ix);
    }

    #[test]
    fn sync_is_incremental_and_sees_changes_and_deletions() {
        let (t, r) = setup();
        let state = t.path().join("state");
        let ix = SectionIndex::open(Some(&state), "t").unwrap();
        assert_eq!(
            sync(&ix, &r),
            SyncStats {
                scanned: 2,
                added: 2,
                ..Default::default()
            }
        );
        assert_eq!(
            sync(&ix, &r),
            SyncStats {
                scanned: 2,
                unchanged: 2,
                ..Default::default()
            }
        );
        std::fs::write(
            t.path().join("root/m/b.md"),
            "# Watchers\nA zebra appears.\n",
        )
        .unwrap();
        let s = sync(&ix, &r);
        assert_eq!((s.updated, s.unchanged), (1, 1));
        assert_eq!(ix.search(&Search::new("zebra", 3)).unwrap().hits.len(), 1);
        assert!(
            ix.search(&Search::new("callback", 3))
                .unwrap()
                .hits
                .is_empty()
        );
        std::fs::remove_file(t.path().join("root/m/b.md")).unwrap();
        assert_eq!(sync(&ix, &r).deleted, 1);
        assert!(ix.search(&Search::new("zebra", 3)).unwrap().hits.is_empty());
        drop(ix);
        // Reopened from the state folder: nothing to re-read.
        let ix = SectionIndex::open(Some(&state), "t").unwrap();
        assert_eq!(
            sync(&ix, &r),
            SyncStats {
                scanned: 1,
                unchanged: 1,
                ..Default::default()
            }
        );
        assert_eq!(
            ix.search(&Search::new("キャッシュ", 3)).unwrap().hits.len(),
            1
        );
    }
}
