//! The manual domain (seed 004): read-only reference manuals under
//! `MANUALS_ROOT`, one folder per manual (`manual_id` = folder name) holding
//! `.md` and `.json` files. Browsing (`manual_ls`, `manual_toc`) and reading
//! (`manual_read`, `manual_scan`) read files directly; search (`manual_find`,
//! `manual_hits`) goes through a [`SectionIndex`] of every manual, re-checked
//! before a search whenever the file watcher saw a change.

mod tools;

// The layers below, under the names this crate's modules use.
use kura_core::{args, config, error, fs, job, scan, text};
use kura_domain as domain;
use kura_index as index;
use kura_plugins as plugins;

mod browse;
pub mod find;
mod hits;
pub mod languages;
pub mod name;
mod read;
pub mod synonyms;
mod trace;
pub mod units;

use std::collections::HashSet;
use std::path::Path;
use std::sync::{Arc, Mutex, MutexGuard};
use std::time::Duration;

use crate::config::Config;
use crate::domain::StartError;
use crate::domain::search::dense::{Dense, Meaning};
use crate::domain::search::encoder::Source;
use crate::domain::search::lexicon::Translator;
use crate::domain::{Domain, IndexNow, Opening, RootSpec, Spec, StartUp};
use crate::error::{Code, Error, Result};
use crate::fs::{RelPath, Root};
use crate::index::{Extracted, LiveIndex, SyncStats};
use crate::plugins::Plugins;

pub use browse::{LsInput, LsOutput, TocInput, TocOutput};
pub use find::{FindInput, FindOutput, FindSettings};
pub use hits::{HitsInput, HitsOutput};
pub use read::{ManualRef, ManualScanOutput, ReadInput, ReadOutput, RefRead, ScanInput};

/// How many (manual, file, section) reads a session remembers for 004's
/// repeated-section fallback; the oldest half is forgotten past this.
const SEEN_CAP: usize = 4096;

pub struct Manuals {
    pub root: Root,
    pub allow_file_scope: bool,
    pub max_chars: usize,
    /// Sections already read in this session (stdio: one session per process).
    seen: Mutex<HashSet<(String, String, usize)>>,
    index: LiveIndex,
    plugins: Arc<Plugins>,
    find: FindSettings,
    traces: Mutex<trace::Store<find::Trace>>,
    /// The dense signal (issue 27's sentence vectors).
    pub(crate) meaning: Meaning,
    state_dir: Option<std::path::PathBuf>,
    /// The installed synonym dictionary, read on first use (None inside:
    /// none installed).
    synonyms: std::sync::OnceLock<Option<kura_text::synonyms::Synonyms>>,
    synonyms_enabled: bool,
    /// The installed bilingual lexicon.
    translator: Translator,
    /// What each manual is written in.
    languages: crate::text::lang::Judged,
}

/// How manual search is set up (from the configuration).
pub struct ManualsConfig {
    pub allow_file_scope: bool,
    pub max_chars: usize,
    /// Where the index lives; `None` keeps it in memory.
    pub state_dir: Option<std::path::PathBuf>,
    pub find: FindSettings,
    /// Use the sentence encoder when its model is installed.
    pub dense: bool,
    /// Expand queries with synonyms.
    pub synonyms: bool,
    pub translations: bool,
    pub trace_ttl: Duration,
    pub trace_max_keep: usize,
}

pub static DOMAIN: Spec = Spec {
    name: "manual",
    root: Some(RootSpec {
        setting: "manuals_root",
        path: root_of,
        writable: false,
    }),
    offer: Some("read-only manuals ({tools})"),
    tools: tools::TOOLS,
    needs: &[],
    open,
    errors: domain::as_is,
};

fn root_of(c: &Config) -> Option<&Path> {
    c.manuals_root.as_deref()
}

impl ManualsConfig {
    pub fn of(config: &Config, state_dir: Option<&Path>) -> ManualsConfig {
        ManualsConfig {
            allow_file_scope: config.allow_file_scope,
            max_chars: config.scan_max_chars as usize,
            state_dir: state_dir.map(Path::to_owned),
            find: FindSettings {
                default_manual_id: config.default_manual_id.clone(),
                late_rerank: config.late_rerank_enabled || config.plugins.reranker.path.is_some(),
                claim_graph: config.claim_graph_enabled,
                corrective: config.corrective_enabled,
                cache_default: config.sem_cache_enabled,
                cache_max_gap: config.sem_cache_max_summary_gap,
                cache_max_conflict: config.sem_cache_max_summary_conflict,
                signals: find::signals::SIGNALS.with(
                    find::signals::Feature::Coverage,
                    config.sparse_query_coverage_weight,
                ),
            },
            dense: config.dense_search_enabled,
            synonyms: config.synonyms_enabled,
            translations: config.translations_enabled,
            trace_ttl: Duration::from_secs(config.trace_ttl_sec.max(1) as u64),
            trace_max_keep: config.trace_max_keep.max(1) as usize,
        }
    }
}

fn open(mut o: Opening<'_>) -> std::result::Result<Arc<dyn Domain>, StartError> {
    let root = o.root();
    let settings = ManualsConfig::of(o.config, o.state_path());
    let manuals =
        Manuals::new(root, o.plugins.clone(), settings).map_err(|e| StartError::Root {
            name: DOMAIN
                .root
                .as_ref()
                .map(|r| r.setting.to_ascii_uppercase())
                .unwrap_or_default(),
            path: o
                .config
                .manuals_root
                .as_ref()
                .map(|p| p.display().to_string())
                .unwrap_or_default(),
            message: e.message,
        })?;
    Ok(Arc::new(manuals))
}

impl Domain for Manuals {
    fn spec(&self) -> &'static Spec {
        &DOMAIN
    }

    fn start_up(self: Arc<Self>) -> Option<StartUp> {
        Some(Box::new(move || {
            let stats = self.refresh_stats()?.1;
            // The lexical index first: search works (lexically) meanwhile.
            self.dense_now();
            Ok(stats)
        }))
    }

    fn index_now(&self, _: &IndexNow<'_>) -> Result<Option<String>> {
        let t = std::time::Instant::now();
        let s = self.recheck()?;
        Ok(Some(IndexNow::line("manuals", s, t.elapsed().as_millis())))
    }
}

/// The file types a manual may hold.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum FileType {
    Md,
    Json,
}

impl FileType {
    pub fn of(path: &RelPath) -> Option<FileType> {
        match path.extension()?.to_ascii_lowercase().as_str() {
            "md" | "markdown" => Some(FileType::Md),
            "json" => Some(FileType::Json),
            _ => None,
        }
    }

    pub fn as_str(self) -> &'static str {
        match self {
            FileType::Md => "md",
            FileType::Json => "json",
        }
    }
}

/// A manual is a folder: files directly under the root belong to none.
fn indexable(path: &RelPath) -> bool {
    path.segments().len() >= 2 && FileType::of(path).is_some()
}

impl Manuals {
    pub fn new(root: Root, plugins: Arc<Plugins>, cfg: ManualsConfig) -> Result<Self> {
        let index = LiveIndex::new(
            "manuals",
            &root,
            cfg.state_dir.as_deref(),
            indexable,
            |path, text| Extracted::from(units::extract(path, text)),
        );
        let encoder = Source {
            state_dir: cfg.state_dir.clone(),
            plugins: Some(plugins.clone()),
            enabled: cfg.dense,
        };
        let meaning = Meaning::new("manuals", name::title, encoder);
        let translator = Translator::new(cfg.state_dir.clone(), cfg.translations);
        Ok(Manuals {
            root,
            allow_file_scope: cfg.allow_file_scope,
            max_chars: cfg.max_chars,
            seen: Mutex::new(HashSet::new()),
            index,
            plugins,
            find: cfg.find,
            traces: Mutex::new(trace::Store::new(cfg.trace_ttl, cfg.trace_max_keep)),
            meaning,
            state_dir: cfg.state_dir,
            synonyms: std::sync::OnceLock::new(),
            synonyms_enabled: cfg.synonyms,
            translator,
            languages: Default::default(),
        })
    }

    /// The synonyms of `query`'s words for a search of `scope` (none when
    /// expansion is off).
    pub fn synonyms_of(&self, query: &str, scope: Option<&str>) -> Vec<String> {
        if !self.synonyms_enabled {
            return Vec::new();
        }
        let installed = self
            .synonyms
            .get_or_init(|| synonyms::installed(self.state_dir.as_deref()));
        synonyms::of_query(installed.as_ref(), &self.root, scope, query)
    }

    /// `query`'s words in English, when it is in Japanese and `manual` is
    /// not (none when translation is off, no lexicon is installed, or the
    /// encoder has not said what script the manual is in).
    pub fn translations_of(&self, query: &str, manual: Option<&str>) -> Vec<String> {
        match (manual, self.meaning.built()) {
            (Some(m), Some(d)) if d.latin(m) => self.translator.translate(query),
            _ => Vec::new(),
        }
    }

    fn traces(&self) -> MutexGuard<'_, trace::Store<find::Trace>> {
        self.traces.lock().unwrap_or_else(|e| e.into_inner())
    }

    /// Bring the index up to date if anything may have changed; returns the
    /// index generation. The first call indexes everything.
    pub fn refresh(&self) -> Result<u64> {
        Ok(self.refresh_stats()?.0)
    }

    /// [`Manuals::refresh`] with what the sync did (`None`: nothing to check).
    pub fn refresh_stats(&self) -> Result<(u64, Option<SyncStats>)> {
        let stats = self.index.refresh(&self.root)?;
        Ok((self.index.generation(), stats))
    }

    /// Re-check every file now, whatever the watcher says (for the benchmark
    /// of an unchanged corpus, and for filesystems without change events).
    pub fn recheck(&self) -> Result<SyncStats> {
        self.index.recheck(&self.root)
    }

    /// The dense signal, building its vectors first if no one has (a
    /// concurrent caller waits for the same build); None without a model.
    pub fn dense_now(&self) -> Option<&Dense> {
        self.meaning.build(&self.index, &self.root)
    }

    /// The dense signal if its vectors are built, brought up to the index's
    /// `generation` (the texts that changed are embedded now).
    fn dense(&self, generation: u64) -> Option<&Dense> {
        self.meaning.current(&self.index, &self.root, generation)
    }

    /// A manual id, the parameter `name`: one folder directly under the root.
    fn manual(&self, id: &str, name: &str) -> Result<RelPath> {
        let p = RelPath::parse(id, false)?;
        if p.segments().len() != 1 {
            return Err(Error::invalid_parameter(
                name,
                format!(
                    "`{id}` is not a manual id (a manual is one folder directly under the manuals root)"
                ),
            ));
        }
        match self.root.stat(&p)? {
            Some(s) if s.is_dir => Ok(p),
            Some(_) => Err(Error::invalid_parameter(
                name,
                format!("`{id}` is a file, not a manual"),
            )),
            None => {
                Err(Error::new(Code::NotFound, format!("no manual `{id}`")).with("manual_id", id))
            }
        }
    }

    /// A manual file: `path` inside the manual `manual_id`, `.md` or
    /// `.json`; the parameters are named `{at}manual_id` and `{at}path`.
    fn file(&self, manual_id: &str, path: &str, at: &str) -> Result<(RelPath, RelPath, FileType)> {
        let manual = self.manual(manual_id, &format!("{at}manual_id"))?;
        let path = RelPath::parse(path, false)?;
        let ty = FileType::of(&path).ok_or_else(|| {
            Error::invalid_parameter(
                &format!("{at}path"),
                format!("`{path}` is not a manual file (.md or .json)"),
            )
        })?;
        let mut full = manual.clone();
        for s in path.segments() {
            full = full.join(s);
        }
        Ok((manual, full, ty))
    }

    /// Remember a section read; true if it had been read before.
    fn seen_before(&self, key: (String, String, usize)) -> bool {
        let mut seen = self.seen.lock().unwrap_or_else(|e| e.into_inner());
        if seen.len() >= SEEN_CAP {
            let keep: HashSet<_> = seen.iter().skip(SEEN_CAP / 2).cloned().collect();
            *seen = keep;
        }
        !seen.insert(key)
    }
}
