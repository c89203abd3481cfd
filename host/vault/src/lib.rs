//! The vault domain (seeds 000 and 001): a markdown notes folder with the
//! append-only `daily/` and the reserved `.system/`. Reads go straight to the
//! files; every write asks the write-policy plugin first and is atomic.

mod tools;

// The layers below, under the names this crate's modules use.
use kura_core::{args, config, error, fs, job, policy, scan, text};
use kura_domain as domain;
use kura_index as index;
use kura_plugins as plugins;

pub mod action;
mod audit;
mod base;
pub mod coverage;
mod dql;
pub mod expr;
mod filter;
mod find;
pub mod graph;
mod history;
mod languages;
mod links;
mod moves;
pub mod notes;
mod query;
mod read;
mod search;
mod section;
mod tasks;
mod write;

use std::path::Path;
use std::sync::Arc;

use crate::config::Config;
use crate::domain::StartError;
use crate::domain::search::dense::Meaning;
use crate::domain::{Domain, IndexNow, Opening, RootSpec, Spec, StartUp};
use crate::fs::Root;
use crate::plugins::Plugins;

pub use crate::scan::ScanOutput;
pub use audit::{AuditInput, AuditOutput};
pub use base::{BaseInput, BaseOutput};
pub use coverage::{CoverageInput, CoverageOutput};
pub use find::{FindInput, FindOutput};
pub use links::{LinksInput, LinksOutput, NotesInput, NotesOutput};
pub use moves::{DeleteInput, DeleteOutput, MoveInput, MoveOutput};
pub use read::{LsInput, ReadInput, ScanInput};
pub use read::{LsOutput, ReadOutput};
pub use search::{SearchInput, SearchOutput};
pub use section::{EditInput, EditOutput};
pub use tasks::{TaskStatusInput, TaskStatusOutput, TasksInput, TasksOutput};
pub use write::{Copied, CreateInput, MODES, ReplaceInput, ReplaceOutput, WriteInput, WriteOutput};

pub struct Vault {
    pub root: Root,
    pub plugins: Arc<Plugins>,
    /// vault_find's index of the notes.
    pub index: crate::index::LiveIndex,
    /// The fixed character cap of reads and scans (`SCAN_MAX_CHARS`).
    pub max_chars: usize,
    /// `COVERAGE_MIN_RATIO`: coverage that counts as enough.
    pub coverage_min_ratio: f64,
    /// `MARGINAL_GAIN_MIN`: below this, another pass adds too little.
    pub marginal_gain_min: f64,
    /// vault_find's dense signal (the notes' sentence vectors).
    pub meaning: Meaning,
    /// The notes' links, tags and properties, derived from the index.
    pub graph: graph::Kept,
    /// `LINK_EVIDENCE_ENABLED`: vault_find weighs links between its hits.
    pub link_evidence: bool,
    /// Where a move keeps its journal (none: moves are refused).
    pub state: Option<crate::fs::StateDir>,
    /// One move (or undo) at a time.
    pub moving: std::sync::Mutex<()>,
    /// Every change to the vault's files, to list and undo (none: kura has
    /// no state folder, and the root refuses changes).
    pub history: Option<crate::domain::history::History>,
    /// What the notes are written in.
    pub languages: crate::text::lang::Judged,
    /// `QUERY_BUDGET_MS`: how long one filter or base may evaluate.
    pub query_budget_ms: u64,
}

/// The names this vault's move journals start with in the state folder.
pub fn journal_prefix(root: &Root) -> String {
    moves::journal_prefix(root)
}

pub static DOMAIN: Spec = Spec {
    name: "vault",
    root: Some(RootSpec {
        setting: "vault_root",
        path: root_of,
        writable: true,
    }),
    offer: Some("a markdown vault of notes ({tools})"),
    tools: tools::TOOLS,
    needs: &[],
    open,
    errors: domain::as_is,
};

fn root_of(c: &Config) -> Option<&Path> {
    c.vault_root.as_deref()
}

/// The vault's own files, never kept in its history: the audit records.
const UNRECORDED: &[&str] = &[".system"];

fn open(mut o: Opening<'_>) -> Result<Arc<dyn Domain>, StartError> {
    let (root, history) = {
        let root = o.root();
        crate::domain::history::attach(root, &o, "vault", UNRECORDED)
    };
    let state = o.state.and_then(|s| s.try_clone().ok());
    if let Some(state) = &state {
        // A move a killed process left half-done is finished first.
        moves::replay(&root, state);
    }
    let meaning = Meaning::new(
        "vault",
        |file| find::note_title(file).to_owned(),
        o.encoder(),
    );
    Ok(Arc::new(Vault {
        index: notes::open(&root, o.state_path()),
        meaning,
        root,
        plugins: o.plugins.clone(),
        max_chars: o.config.scan_max_chars as usize,
        coverage_min_ratio: o.config.coverage_min_ratio,
        marginal_gain_min: o.config.marginal_gain_min,
        graph: graph::Kept::default(),
        link_evidence: o.config.link_evidence_enabled,
        state,
        moving: std::sync::Mutex::new(()),
        history,
        languages: Default::default(),
        query_budget_ms: o.config.query_budget_ms.max(1) as u64,
    }))
}

impl Domain for Vault {
    fn spec(&self) -> &'static Spec {
        &DOMAIN
    }

    fn start_up(self: Arc<Self>) -> Option<StartUp> {
        Some(Box::new(move || {
            let stats = self.index.start_up(&self.root)?;
            // The lexical index first: vault_find works (lexically) meanwhile.
            self.meaning.build(&self.index, &self.root);
            Ok(stats)
        }))
    }

    fn confirmation(
        &self,
        tool: &str,
        args: &serde_json::Map<String, serde_json::Value>,
    ) -> Option<String> {
        self.regrets(tool, args)
    }

    fn index_now(&self, now: &IndexNow<'_>) -> crate::error::Result<Option<String>> {
        let t = std::time::Instant::now();
        let report = |done, total| (now.progress)("vault", done, total);
        let options = crate::index::SyncOptions {
            full: now.full,
            job: crate::job::Job::reporting(&report),
            ..Default::default()
        };
        let s = self.index.sync(&self.root, &options)?;
        Ok(Some(IndexNow::line("vault", s, t.elapsed().as_millis())))
    }
}
