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

pub use live::LiveIndex;

use std::collections::BTreeMap;
use std::path::Path;
use std::sync::Arc;

use serde::Serialize;
use tantivy::collector::TopDocs;
use tantivy::directory::MmapDirectory;
use tantivy::query::{BooleanQuery, BoostQuery, Occur, Query, TermQuery};
use tantivy::schema::{
    Field, IndexRecordOption, STORED, STRING, Schema, TextFieldIndexing, TextOptions, Value,
};
use tantivy::tokenizer::Language;
use tantivy::{DocSet, Index, IndexReader, IndexWriter, ReloadPolicy, TantivyDocument, Term};

use crate::error::{Error, Result};
use crate::fs::{FileStat, RelPath, Root, StateDir};
use crate::text::reference::references;
use flush::{Core, Flusher};
use manifest::{FileState, Manifest, Store};

/// Bump when the schema or the analyzer changes: an index of another version
/// is rebuilt.
pub const FORMAT: u32 = 7;

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
    pub meta: Option<serde_json::Value>,
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
    pub meta: Option<&'a serde_json::Value>,
}

/// Which units a search looks at.
#[derive(Clone, Copy, Debug, Default)]
pub struct Filter<'a> {
    /// Only files under this first folder.
    pub scope: Option<&'a str>,
    /// Only units carrying every one of these tags.
    pub tags: &'a [&'a str],
    /// Match the query against file names (and references) only.
    pub names_only: bool,
}

/// A term to look for in the body of each hit ([`Search::probes`]).
#[derive(Clone, Debug)]
pub struct Probe {
    /// A term as the analyzer makes them.
    pub term: String,
    /// Also any body word that starts with `term`.
    pub prefix: bool,
}

/// Whether to keep a hit, by its file path and first line.
pub type Keep<'a> = dyn Fn(&str, u64) -> bool + 'a;

/// One search of a [`SectionIndex`]: the query and what to bring back.
/// `Search { fetch: 50, ..Search::new(text, 10) }` sets what differs.
#[derive(Clone, Copy)]
pub struct Search<'a> {
    /// The user's text, analysed into terms (never parsed as syntax).
    pub text: &'a str,
    /// Hits returned at most.
    pub limit: usize,
    /// Hits looked at, so that `limit` remain after `keep`.
    pub fetch: usize,
    /// Which units are searched.
    pub only: Filter<'a>,
    /// Keeps a hit by its file path and first line; None keeps every hit.
    pub keep: Option<&'a Keep<'a>>,
    /// Terms to look for in each hit's body, from the postings (no text is
    /// read): [`Hit::marks`].
    pub probes: &'a [Probe],
    /// Count every unit that matches (before `keep`): [`Results::matched`].
    pub count: bool,
}

impl<'a> Search<'a> {
    pub fn new(text: &'a str, limit: usize) -> Search<'a> {
        Search {
            text,
            limit,
            fetch: limit,
            only: Filter::default(),
            keep: None,
            probes: &[],
            count: false,
        }
    }
}

/// What a [`Search`] found.
#[derive(Debug, Default)]
pub struct Results {
    /// Best first.
    pub hits: Vec<Hit>,
    /// Units matching the query within [`Search::only`] (0 unless counted).
    pub matched: usize,
}

/// One search hit.
#[derive(Clone, Debug)]
pub struct Hit {
    pub file: String,
    pub start_line: u64,
    pub end_line: u64,
    pub heading: String,
    /// Empty from the index (bodies are not stored); the domain fills it
    /// from the file when it needs it.
    pub body: String,
    pub score: f32,
    /// Which of [`Search::probes`] the body holds, in their order.
    pub marks: Vec<bool>,
}

#[derive(Clone, Copy, Debug, Default, PartialEq, Eq, Serialize, schemars::JsonSchema)]
pub struct SyncStats {
    pub scanned: u64,
    pub added: u64,
    pub updated: u64,
    pub deleted: u64,
    pub unchanged: u64,
}

struct Fields {
    file: Field,
    /// The first segment of `file` (the manual), for scoped searches.
    scope: Field,
    start_line: Field,
    end_line: Field,
    heading: Field,
    body: Field,
    /// The file's name: its path below the scope, without the extension
    /// ([`name_of`]). In many manual sets the file name is the title and
    /// the body never repeats it.
    name: Field,
    /// The chapter, section and page references of the file's name and the
    /// unit's heading path, whole (`第2章-6`, `5.6`, `crontab(5)`), so a query
    /// naming one finds it however common its digits are.
    refs: Field,
    /// The file's [`Extracted::tags`], for filters.
    tag: Field,
}

fn schema() -> (Schema, Fields) {
    let mut b = Schema::builder();
    let text = |tokenizer: &str, stored: bool| {
        let o = TextOptions::default().set_indexing_options(
            TextFieldIndexing::default()
                .set_tokenizer(tokenizer)
                .set_index_option(IndexRecordOption::WithFreqs),
        );
        if stored { o.set_stored() } else { o }
    };
    let fields = Fields {
        file: b.add_text_field("file", STRING | STORED),
        scope: b.add_text_field("scope", STRING),
        start_line: b.add_u64_field("start_line", STORED),
        end_line: b.add_u64_field("end_line", STORED),
        heading: b.add_text_field("heading", text(analyzer::PLAIN, true)),
        // Not stored: the text is in the file (see `Hit::body`), and a small
        // document store keeps loading 200 candidates cheap.
        body: b.add_text_field("body", text(analyzer::PLAIN, false)),
        name: b.add_text_field("name", text(analyzer::PLAIN, false)),
        refs: b.add_text_field("refs", STRING),
        tag: b.add_text_field("tag", STRING),
    };
    (b.build(), fields)
}

/// The searchable name of a file key: the path below its first segment
/// (the manual, the project; a one-segment key keeps it), without the
/// extension, folders separated by spaces.
fn name_of(file: &str) -> String {
    stem_below_scope(file).replace('/', " ")
}

/// A file key's path below its first segment (a one-segment key keeps it),
/// without the extension: `manual/man5/crontab.5.md` → `man5/crontab.5`.
pub fn stem_below_scope(file: &str) -> &str {
    let below = file.split_once('/').map_or(file, |(_, rest)| rest);
    below
        .rsplit_once('.')
        .filter(|(_, ext)| !ext.contains('/'))
        .map_or(below, |(stem, _)| stem)
}

/// What every unit of a file carries: its key, name and the name's
/// references (worked out once per file, not per unit).
struct FileFields<'a> {
    key: &'a str,
    name: String,
    refs: Vec<String>,
}

impl<'a> FileFields<'a> {
    fn new(key: &'a str) -> FileFields<'a> {
        let name = name_of(key);
        let refs = references(&name);
        FileFields { key, name, refs }
    }
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
            meta: self.meta.as_ref(),
        }
    }
}

pub struct SectionIndex {
    fields: Fields,
    core: Arc<Core>,
    flusher: Flusher,
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
        let (schema, fields) = schema();
        let mut store = None;
        let mut manifest = Manifest::default();
        let mut files = None;
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
        })
    }

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

    /// Bring just these files up to date (after a write through the server):
    /// each is re-read if it changed, dropped if it is gone, or dropped when
    /// `indexable` says it is not a file this index holds.
    pub fn update_files<E: Into<Extracted>>(
        &self,
        root: &Root,
        paths: &[RelPath],
        indexable: impl Fn(&RelPath) -> bool,
        extract: impl Fn(&RelPath, &str) -> E,
    ) -> Result<SyncStats> {
        self.update(root, paths, indexable, extract, Commit::Now)
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

    fn doc(&self, file: &FileFields, unit: &Unit, tags: &[String]) -> TantivyDocument {
        let f = &self.fields;
        let mut d = TantivyDocument::default();
        d.add_text(f.file, file.key);
        d.add_text(f.scope, file.key.split('/').next().unwrap_or(""));
        d.add_u64(f.start_line, unit.start_line);
        d.add_u64(f.end_line, unit.end_line);
        d.add_text(f.heading, &unit.heading);
        d.add_text(f.body, &unit.body);
        let mut refs = file.refs.clone();
        refs.extend(references(&unit.heading));
        refs.sort();
        refs.dedup();
        for r in refs {
            d.add_text(f.refs, r);
        }
        d.add_text(f.name, &file.name);
        for t in tags {
            d.add_text(f.tag, t);
        }
        d
    }

    /// Words of the body field that share `word`'s English or Spanish stem
    /// (`watcher` → `watchers`; `computada` → `computadas`), from the term
    /// dictionary: stemming happens at query time, for the query's few words,
    /// instead of for every word of every document at indexing time.
    fn variants(&self, searcher: &tantivy::Searcher, word: &str) -> Vec<String> {
        const MAX_VARIANTS: usize = 32;
        let mut out: Vec<String> = Vec::new();
        for lang in [Language::English, Language::Spanish] {
            let stem = analyzer::stem(lang, word);
            if stem.chars().count() < 3 {
                continue;
            }
            let mut upper = stem.clone().into_bytes();
            if let Some(last) = upper.last_mut() {
                *last = last.saturating_add(1);
            }
            for seg in searcher.segment_readers() {
                let Ok(inv) = seg.inverted_index(self.fields.body) else {
                    continue;
                };
                let Ok(mut stream) = inv
                    .terms()
                    .range()
                    .ge(stem.as_bytes())
                    .lt(&upper)
                    .into_stream()
                else {
                    continue;
                };
                let mut seen = 0;
                while stream.advance() && seen < 4 * MAX_VARIANTS {
                    seen += 1;
                    let Ok(t) = std::str::from_utf8(stream.key()) else {
                        continue;
                    };
                    if t != word && !out.iter().any(|o| o == t) && analyzer::stem(lang, t) == stem {
                        out.push(t.to_owned());
                        if out.len() >= MAX_VARIANTS {
                            return out;
                        }
                    }
                }
            }
        }
        out
    }

    /// How many units the index holds.
    pub fn len(&self) -> u64 {
        self.core.flush_for_search();
        self.core.reader.searcher().num_docs()
    }

    pub fn is_empty(&self) -> bool {
        self.len() == 0
    }

    /// BM25 over heading (×`HEADING_BOOST`), body and file name
    /// (×`NAME_BOOST`) for the analyzer terms of the query, whole
    /// chapter/section/page references (×`REFERENCE_BOOST`), and body words
    /// sharing a query word's English or Spanish stem (×`STEM_BOOST`,
    /// [`SectionIndex::variants`]); restricted by [`Search::only`], kept by
    /// [`Search::keep`], each hit marked with the [`Search::probes`] its body
    /// holds.
    pub fn search(&self, q: &Search) -> Result<Results> {
        self.core.flush_for_search();
        let searcher = self.core.reader.searcher();
        let (found, matched) = self.search_in(&searcher, q)?;
        let marks = self.marks(&searcher, &found, q.probes)?;
        let hits = found
            .into_iter()
            .zip(marks)
            .map(|((mut h, _), m)| {
                h.marks = m;
                h
            })
            .collect();
        Ok(Results { hits, matched })
    }

    /// For each hit, which probes occur in its body, from the postings: a
    /// probe is a term, or with `prefix` any word of the body starting with it.
    fn marks(
        &self,
        searcher: &tantivy::Searcher,
        found: &[(Hit, tantivy::DocAddress)],
        probes: &[Probe],
    ) -> Result<Vec<Vec<bool>>> {
        const MAX_EXPANSIONS: usize = 64;
        if probes.is_empty() {
            return Ok(vec![Vec::new(); found.len()]);
        }
        let mut marks = vec![vec![false; probes.len()]; found.len()];
        // Candidates by segment, in doc order (postings are read forward).
        let mut by_segment: BTreeMap<u32, Vec<(u32, usize)>> = BTreeMap::new();
        for (i, (_, addr)) in found.iter().enumerate() {
            by_segment
                .entry(addr.segment_ord)
                .or_default()
                .push((addr.doc_id, i));
        }
        for (seg, docs) in &mut by_segment {
            docs.sort_unstable();
            let reader = searcher.segment_reader(*seg);
            let inv = reader.inverted_index(self.fields.body).map_err(internal)?;
            for (p, probe) in probes.iter().enumerate() {
                let mut terms = vec![probe.term.clone()];
                if probe.prefix {
                    let mut upper = probe.term.clone().into_bytes();
                    if let Some(last) = upper.last_mut() {
                        *last = last.saturating_add(1);
                    }
                    let mut stream = inv
                        .terms()
                        .range()
                        .ge(probe.term.as_bytes())
                        .lt(&upper)
                        .into_stream()
                        .map_err(internal)?;
                    while stream.advance() && terms.len() < MAX_EXPANSIONS {
                        if let Ok(t) = std::str::from_utf8(stream.key())
                            && t != probe.term
                        {
                            terms.push(t.to_owned());
                        }
                    }
                }
                for t in terms {
                    let term = Term::from_field_text(self.fields.body, &t);
                    let Some(mut postings) = inv
                        .read_postings(&term, IndexRecordOption::Basic)
                        .map_err(internal)?
                    else {
                        continue;
                    };
                    for &(doc, i) in docs.iter() {
                        // `seek` only moves forward: a posting already past
                        // `doc` answers without it.
                        let at = if postings.doc() >= doc {
                            postings.doc()
                        } else {
                            postings.seek(doc)
                        };
                        if at == doc {
                            marks[i][p] = true;
                        }
                    }
                }
            }
        }
        Ok(marks)
    }

    fn search_in(
        &self,
        searcher: &tantivy::Searcher,
        req: &Search,
    ) -> Result<(Vec<(Hit, tantivy::DocAddress)>, usize)> {
        let (query, limit, fetch, only) = (req.text, req.limit, req.fetch, req.only);
        const HEADING_BOOST: f32 = 2.0;
        const NAME_BOOST: f32 = 2.0;
        const REFERENCE_BOOST: f32 = 3.0;
        const STEM_BOOST: f32 = 0.5;
        let f = &self.fields;
        let mut clauses: Vec<(Occur, Box<dyn Query>)> = Vec::new();
        let term_q = |field: Field, t: &str, boost: f32| -> (Occur, Box<dyn Query>) {
            let q = TermQuery::new(
                Term::from_field_text(field, t),
                IndexRecordOption::WithFreqs,
            );
            (Occur::Should, Box::new(BoostQuery::new(Box::new(q), boost)))
        };
        let terms = crate::text::tokenize::weighted_query_terms(query);
        for (t, w) in &terms {
            if !only.names_only {
                clauses.push(term_q(f.body, t, *w));
                clauses.push(term_q(f.heading, t, HEADING_BOOST * w));
            }
            clauses.push(term_q(f.name, t, NAME_BOOST * w));
        }
        for r in references(query) {
            let q = TermQuery::new(Term::from_field_text(f.refs, &r), IndexRecordOption::Basic);
            clauses.push((
                Occur::Should,
                Box::new(BoostQuery::new(Box::new(q), REFERENCE_BOOST)),
            ));
        }
        let tv = std::time::Instant::now();
        for (t, _) in &terms {
            if !only.names_only
                && t.chars().count() >= 4
                && !t.chars().any(crate::text::tokenize::is_cjk)
            {
                for v in self.variants(searcher, t) {
                    clauses.push(term_q(f.body, &v, STEM_BOOST));
                    clauses.push(term_q(f.heading, &v, HEADING_BOOST * STEM_BOOST));
                }
            }
        }
        if clauses.is_empty() {
            return Ok((vec![], 0));
        }
        let q: Box<dyn Query> = Box::new(BooleanQuery::new(clauses));
        // Scope and tags filter; they add nothing to the score.
        let exact = |field: Field, value: &str| -> (Occur, Box<dyn Query>) {
            let t = TermQuery::new(
                Term::from_field_text(field, value),
                IndexRecordOption::Basic,
            );
            (Occur::Must, Box::new(BoostQuery::new(Box::new(t), 0.0)))
        };
        let mut must = vec![(Occur::Must, q)];
        must.extend(only.scope.map(|s| exact(f.scope, s)));
        must.extend(only.tags.iter().map(|t| exact(f.tag, t)));
        let q: Box<dyn Query> = if must.len() == 1 {
            must.pop().expect("one clause").1
        } else {
            Box::new(BooleanQuery::new(must))
        };
        let t0 = std::time::Instant::now();
        let top_docs = TopDocs::with_limit(fetch.max(limit).max(1)).order_by_score();
        let (top, matched) = if req.count {
            searcher
                .search(&q, &(top_docs, tantivy::collector::Count))
                .map_err(internal)?
        } else {
            (searcher.search(&q, &top_docs).map_err(internal)?, 0)
        };
        let t1 = std::time::Instant::now();
        let mut out = Vec::new();
        for (score, addr) in top {
            let doc: TantivyDocument = searcher.doc(addr).map_err(internal)?;
            let text = |field: Field| {
                doc.get_first(field)
                    .and_then(|v| v.as_str())
                    .unwrap_or("")
                    .to_owned()
            };
            let file = text(f.file);
            let start_line = doc
                .get_first(f.start_line)
                .and_then(|v| v.as_u64())
                .unwrap_or(1);
            if req.keep.is_some_and(|keep| !keep(&file, start_line)) {
                continue;
            }
            out.push((
                Hit {
                    start_line,
                    end_line: doc
                        .get_first(f.end_line)
                        .and_then(|v| v.as_u64())
                        .unwrap_or(1),
                    heading: text(f.heading),
                    body: String::new(),
                    file,
                    score,
                    marks: Vec::new(),
                },
                addr,
            ));
            if out.len() >= limit {
                break;
            }
        }
        tracing::debug!(
            target: "kura::timing",
            "index search {:.2}ms, load {} docs {:.2}ms, variants {:.2}ms",
            (t1 - t0).as_secs_f64() * 1e3,
            out.len(),
            t1.elapsed().as_secs_f64() * 1e3,
            (t0 - tv).as_secs_f64() * 1e3
        );
        Ok((out, matched))
    }
}

#[cfg(test)]
mod tests {
    #![allow(clippy::disallowed_methods)] // fixtures are written with std::fs
    use super::*;

    #[test]
    fn a_file_name_is_its_path_below_the_scope_without_extension() {
        assert_eq!(
            name_of("m/第２章-６ 壊れたシステム.md"),
            "第２章-６ 壊れたシステム"
        );
        assert_eq!(name_of("manpages-ja/man5/crontab.5.md"), "man5 crontab.5");
        assert_eq!(name_of("note.md"), "note");
        assert_eq!(name_of("a.b/c"), "c");
    }

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
