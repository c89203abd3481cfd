//! The vibe domain (seed 002, settled in docs/decisions.md, "vibe workspaces"): project
//! workspaces under `VIBE_ROOT`, one folder per project, each with the eight
//! folders of [`FOLDERS`]. A document is a `.md` file directly inside one of
//! them (`{project}/{folder}/{file}`); search runs on a [`LiveIndex`] of their
//! chunks, whose manifest also keeps each document's [`doc::DocMeta`] so that
//! listing tasks and counting them never re-reads the files. Every write is
//! atomic and re-indexes its file before it returns. Errors use 002's
//! envelope and upper-case codes ([`VibeCode`]).

mod tools;

// The layers below, under the names this crate's modules use.
use kura_core::{args, config, error, fs, job, text};
use kura_domain as domain;
use kura_index as index;

pub mod doc;
mod history;
mod prompt;
mod read;
mod search;
mod surfaces;
mod write;

use serde_json::Value;

use std::path::Path;
use std::sync::Arc;

use crate::args::Input;
use crate::config::Config;
use crate::domain::StartError;
use crate::domain::search::dense::Meaning;
use crate::domain::search::encoder::Source;
use crate::domain::{Domain, IndexNow, Opening, RootSpec, Spec, StartUp};
use crate::error::{Code, Error, Result, VibeCode};
use crate::fs::{RelPath, Root};
use crate::index::{Extracted, LiveIndex, SectionIndex, SyncOptions};
use crate::job::Job;

pub use prompt::PROMPTS;
pub use read::{DocOutput, ListTasksOutput, PlanOutput, ProjectDetail, ProjectsOutput};
pub use read::{GetPlanInput, ListTasksInput, ReadDocInput};
pub use search::{BOOSTS, SearchInput, SearchOutput};
pub use write::{
    CreateDocInput, CreatePlanInput, CreateTaskInput, LogSessionInput, UpdateDocInput,
    UpdateTaskStatusInput,
};
pub use write::{
    CreateDocOutput, CreatePlanOutput, CreateTaskOutput, LogSessionOutput, ReindexOutput,
    UpdateDocOutput, UpdateStatusOutput, slug,
};

/// The folders of a project (002); any other is `INVALID_FOLDER`.
pub const FOLDERS: [&str; 8] = [
    "tasks",
    "plans",
    "sessions",
    "reports",
    "changelog",
    "references",
    "scratch",
    "assets",
];

/// Task statuses (002); any other is `INVALID_STATUS`.
pub const STATUSES: [&str; 4] = ["pending", "in-progress", "done", "blocked"];

/// A document's `metadata.type`, from its folder.
/// A document's title as its file name says it, for its sentence vectors
/// (`p/tasks/003-disenar-schema-sqlite.md` → `003 disenar schema sqlite`).
fn doc_title(file: &str) -> String {
    let name = file.rsplit('/').next().unwrap_or(file);
    let stem = name.rsplit_once('.').map_or(name, |(stem, _)| stem);
    stem.replace(['-', '_'], " ")
}

pub fn doc_type(folder: &str) -> &'static str {
    match folder {
        "tasks" => "task",
        "plans" => "plan",
        "sessions" => "session",
        "reports" => "report",
        "changelog" => "changelog",
        "references" => "reference",
        "scratch" => "scratch",
        "assets" => "asset",
        _ => "doc",
    }
}

pub struct Vibe {
    pub root: Root,
    pub index: LiveIndex,
    /// search's dense signal (the chunks' sentence vectors).
    pub meaning: Meaning,
    /// Every change to the workspace's files, to list and undo.
    pub history: Option<crate::domain::history::History>,
    /// What each project (and the whole workspace) is written in.
    languages: crate::text::lang::Judged,
}

pub static DOMAIN: Spec = Spec {
    name: "vibe",
    root: Some(RootSpec {
        setting: "vibe_root",
        path: root_of,
        writable: true,
    }),
    offer: Some(
        "vibe project workspaces ({tools}; resources vibe://projects, prompts \
         project_briefing and session_start)",
    ),
    tools: tools::TOOLS,
    needs: &[],
    open,
    errors: as_vibe,
};

fn root_of(c: &Config) -> Option<&Path> {
    c.vibe_root.as_deref()
}

fn open(mut o: Opening<'_>) -> std::result::Result<Arc<dyn Domain>, StartError> {
    let (root, history) = {
        let root = o.root();
        crate::domain::history::attach(root, &o, "vibe", &[])
    };
    let mut vibe = Vibe::new(root, o.state_path(), o.encoder());
    vibe.history = history;
    Ok(Arc::new(vibe))
}

impl Domain for Vibe {
    fn surfaces(self: Arc<Self>) -> Option<Arc<dyn crate::domain::surface::Surfaces>> {
        Some(self)
    }

    fn spec(&self) -> &'static Spec {
        &DOMAIN
    }

    fn start_up(self: Arc<Self>) -> Option<StartUp> {
        Some(Box::new(move || {
            let stats = self.index.start_up(&self.root)?;
            // The lexical index first: search works (lexically) meanwhile.
            self.meaning.build(&self.index, &self.root);
            Ok(stats)
        }))
    }

    fn index_now(&self, now: &IndexNow<'_>) -> Result<Option<String>> {
        let input = ReindexInput {
            project: now.project.map(str::to_owned),
            full: Some(now.full),
        };
        let report = |done, total| (now.progress)("vibe", done, total);
        let r = self.reindex(input, Job::reporting(&report))?;
        Ok(Some(IndexNow::line(
            "vibe",
            r.stats.files,
            r.stats.duration_ms as u128,
        )))
    }
}

/// Whether the index holds this file: `{project}/{folder}/{name}.md`.
pub fn indexable(p: &RelPath) -> bool {
    let s = p.segments();
    let ext = p.extension().map(|e| e.to_ascii_lowercase());
    s.len() == 3
        && !s[0].starts_with('.')
        && FOLDERS.contains(&s[1].as_str())
        && !s[2].starts_with('.')
        && matches!(ext.as_deref(), Some("md" | "markdown"))
}

fn extract(p: &RelPath, text: &str) -> Extracted {
    let s = p.segments();
    let stem = s[2].rsplit_once('.').map_or(s[2].as_str(), |(a, _)| a);
    let meta = doc::meta(text, stem, s[1] == "tasks");
    Extracted {
        units: doc::chunks(text),
        tags: vec![format!("folder:{}", s[1])],
        meta: serde_json::value::to_raw_value(&meta).ok(),
    }
}

/// Any error as one of 002's: argument problems by the parameter they name,
/// file-system refusals as `INVALID_PATH` / `FILE_NOT_FOUND`, faults as
/// `FILESYSTEM_ERROR`.
pub fn as_vibe(e: Error) -> Error {
    let code = match e.code {
        Code::Vibe(_) => return e,
        Code::InvalidParameter => {
            let param = e.details.get("parameter").and_then(Value::as_str);
            match param.map(|p| p.split(['.', '[']).next().unwrap_or(p)) {
                Some("query" | "queries" | "limit") => VibeCode::InvalidQuery,
                Some("status") => VibeCode::InvalidStatus,
                Some("folder") => VibeCode::InvalidFolder,
                _ => VibeCode::InvalidParameter,
            }
        }
        Code::InvalidPath | Code::OutOfScope | Code::Forbidden => VibeCode::InvalidPath,
        Code::NotFound => VibeCode::FileNotFound,
        Code::InvalidScope => VibeCode::InvalidParameter,
        Code::Conflict
        | Code::FilesystemError
        | Code::Internal
        | Code::PluginFailed
        | Code::Timeout => VibeCode::FilesystemError,
        Code::Cancelled => VibeCode::IndexError,
    };
    Error {
        code: Code::Vibe(code),
        ..e
    }
}

fn index_error(e: Error) -> Error {
    if e.code == Code::Cancelled {
        return Error::vibe(VibeCode::IndexError, e.message);
    }
    Error::vibe(
        VibeCode::IndexError,
        format!("the index failed: {}", e.message),
    )
}

/// A local calendar date (`YYYY-MM-DD`) of a modification time.
pub fn local_date(mtime_ns: i128) -> String {
    let secs = (mtime_ns / 1_000_000_000) as i64;
    chrono::DateTime::from_timestamp(secs, 0)
        .map(|t| {
            t.with_timezone(&chrono::Local)
                .format("%Y-%m-%d")
                .to_string()
        })
        .unwrap_or_default()
}

/// A single path segment a tool may name (a project, a file): not empty,
/// not `.`/`..`, no `/`, `\` or control character.
fn segment<'a>(param: &str, value: &'a str) -> Result<&'a str> {
    let bad = value.is_empty()
        || value == "."
        || value == ".."
        || value.contains(['/', '\\'])
        || value.chars().any(char::is_control);
    if bad {
        return Err(Error::vibe(
            VibeCode::InvalidPath,
            format!("`{param}` must be one file or folder name inside VIBE_ROOT, got {value:?}"),
        )
        .with("parameter", param)
        .with("value", value));
    }
    Ok(value)
}

#[derive(Input)]
pub struct ReindexInput {
    /// Only this project (default: all)
    pub project: Option<String>,
    /// Rebuild every file (default false)
    pub full: Option<bool>,
}

impl Vibe {
    /// The workspaces at `root`, their index kept in `state_dir` (in
    /// memory without one), with the dense signal of the `encoder`'s.
    pub fn new(root: Root, state_dir: Option<&std::path::Path>, encoder: Source) -> Vibe {
        let index = LiveIndex::new("vibe", &root, state_dir, indexable, extract);
        let meaning = Meaning::new("vibe", doc_title, encoder);
        Vibe {
            root,
            index,
            meaning,
            history: None,
            languages: Default::default(),
        }
    }

    /// A project named by `param`: one folder directly under the root.
    fn project(&self, param: &str, name: &str) -> Result<RelPath> {
        let name = segment(param, name)?;
        let p = RelPath::parse(name, false).map_err(as_vibe)?;
        match self.root.stat(&p) {
            Ok(Some(s)) if s.is_dir && !name.starts_with('.') => Ok(p),
            Ok(_)
            | Err(Error {
                code: Code::NotFound,
                ..
            }) => Err(Error::vibe(
                VibeCode::ProjectNotFound,
                format!("project '{name}' does not exist in VIBE_ROOT"),
            )
            .with("project", name)),
            Err(e) => Err(as_vibe(e)),
        }
    }

    /// The `project` argument, checked: a project that exists.
    fn project_arg(&self, name: &str) -> Result<(String, RelPath)> {
        let p = self.project("project", name)?;
        Ok((name.to_owned(), p))
    }

    /// An optional `project` argument, checked.
    fn project_filter(&self, name: Option<String>) -> Result<Option<String>> {
        if let Some(p) = &name {
            self.project("project", p)?;
        }
        Ok(name)
    }

    /// The index, brought up to date with the files first.
    fn fresh(&self) -> Result<&SectionIndex> {
        self.index.refresh(&self.root).map_err(index_error)?;
        self.index.index().map_err(index_error)
    }

    /// Re-index a file the server just wrote (002's `"indexed": true`).
    fn written(&self, path: &RelPath) -> bool {
        self.index.written(&self.root, path)
    }

    /// The projects: folders directly under the root, by name.
    pub fn projects(&self) -> Result<Vec<String>> {
        Ok(self
            .root
            .list(&RelPath::root())?
            .into_iter()
            .filter(|e| e.kind == crate::fs::EntryKind::Dir && !e.name.starts_with('.'))
            .map(|e| e.name)
            .collect())
    }

    /// reindex (002): incremental by size + mtime + content hash, or `full`;
    /// one project or all.
    pub fn reindex(&self, input: ReindexInput, job: Job) -> Result<ReindexOutput> {
        let project = self.project_filter(input.project)?;
        let full = input.full.unwrap_or(false);
        let started = std::time::Instant::now();
        let options = SyncOptions {
            under: project.as_deref(),
            full,
            job,
        };
        let stats = self.index.sync(&self.root, &options).map_err(index_error)?;
        let duration_ms = started.elapsed().as_millis() as u64;
        tracing::info!(
            project = project.as_deref().unwrap_or("*"),
            full,
            scanned = stats.scanned,
            added = stats.added,
            updated = stats.updated,
            deleted = stats.deleted,
            duration_ms,
            "reindex"
        );
        Ok(write::reindex_output(project, stats, duration_ms))
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn rel(s: &str) -> RelPath {
        RelPath::parse(s, false).unwrap()
    }

    #[test]
    fn only_markdown_documents_in_project_folders_are_indexed() {
        assert!(indexable(&rel("p/tasks/001-a.md")));
        assert!(indexable(&rel("p/plans/execution-plan.MD")));
        assert!(!indexable(&rel("p/notes/a.md")), "not a project folder");
        assert!(!indexable(&rel("p/tasks/old/a.md")), "too deep");
        assert!(!indexable(&rel("p/README.md")), "not in a folder");
        assert!(!indexable(&rel(".trash/tasks/a.md")), "hidden project");
        assert!(!indexable(&rel("p/assets/logo.png")));
    }

    #[test]
    fn argument_errors_map_to_the_closest_code_of_002() {
        let code = |param: &str| {
            as_vibe(Error::invalid_parameter(param, "x"))
                .code
                .as_str()
                .to_owned()
        };
        assert_eq!(code("query"), "INVALID_QUERY");
        assert_eq!(code("limit"), "INVALID_QUERY");
        assert_eq!(code("status"), "INVALID_STATUS");
        assert_eq!(code("steps[2]"), "INVALID_PARAMETER");
        let gone = Error::new(Code::NotFound, "x");
        assert_eq!(as_vibe(gone).code.as_str(), "FILE_NOT_FOUND");
        let out = Error::new(Code::OutOfScope, "x");
        assert_eq!(as_vibe(out).code.as_str(), "INVALID_PATH");
    }

    #[test]
    fn segments_refuse_traversal_and_separators() {
        for bad in ["", ".", "..", "a/b", "..\\x", "a\nb"] {
            assert!(segment("project", bad).is_err(), "{bad:?}");
        }
        assert!(segment("project", "vibeMCP").is_ok());
    }
}
