//! The history tools' inputs, outputs and work, shared by the domains whose
//! roots kura writes (the vault's `vault_history`/`vault_undo`, vibe's
//! `history`/`undo`): each declares its pair over its own root and history.

use schemars::JsonSchema;
use serde::Serialize;

use crate::args::Input;
use crate::error::{Code, Error, Result};
use crate::fs::{Recorder, RelPath, Root};
use kura_core::lock::Locks;
pub use kura_history::{Call, Entry, History, Who, process_session, settle_all};
use kura_history::{Filter, Restore};

/// How many changes a listing gives unless asked.
const LIST_DEFAULT: usize = 20;

#[derive(Input)]
pub struct HistoryInput {
    /// File or folder (default: all)
    pub path: Option<String>,
    /// Only this session's (`current`: yours)
    pub session: Option<String>,
    /// Only this client's
    pub client: Option<String>,
    /// One change, with its diff
    pub change: Option<String>,
    /// Per page (default 20)
    #[arg(min = 1, max = 100)]
    pub limit: Option<i64>,
    /// From `next_cursor`
    #[arg(min = 0)]
    pub cursor: Option<i64>,
}

#[derive(Debug, Serialize, JsonSchema)]
pub struct HistoryOutput {
    /// Newest first
    pub changes: Vec<Entry>,
    /// Matching in all
    pub total: u64,
    pub next_cursor: Option<u64>,
    /// With `change`: its unified diff (cut: ends with `…`)
    #[serde(skip_serializing_if = "Option::is_none")]
    pub diff: Option<String>,
    /// Your session
    pub session: String,
}

#[derive(Input)]
pub struct UndoInput {
    /// Change id
    pub change: Option<String>,
    /// A whole session (`current`: yours)
    pub session: Option<String>,
    /// Report only
    pub dry_run: Option<bool>,
}

#[derive(Debug, Serialize, JsonSchema)]
pub struct UndoOutput {
    /// Newest first
    pub undone: Vec<String>,
    pub files: Vec<Restore>,
    pub folders_made: Vec<String>,
    pub folders_removed: Vec<String>,
    pub dry_run: bool,
}

/// The history, or why there is none.
fn kept(history: Option<&History>) -> Result<&History> {
    history.ok_or_else(|| {
        Error::new(
            Code::NotFound,
            "kura keeps no history here: it runs without a state folder, or the history could not be opened (its log at start says why, and every change is refused)",
        )
    })
}

/// `current` is the caller's own session.
fn session_of(s: Option<String>) -> Option<String> {
    s.map(|s| {
        if s == "current" {
            kura_history::current_session().unwrap_or(s)
        } else {
            s
        }
    })
}

/// A history listing; `relative` maps a tool's path to the root's.
pub fn list(
    history: Option<&History>,
    input: HistoryInput,
    max_chars: usize,
    relative: impl Fn(&str) -> Result<RelPath>,
) -> Result<HistoryOutput> {
    let history = kept(history)?;
    let session = kura_history::current_session().unwrap_or_default();
    if let Some(id) = &input.change {
        let entry = history.find(id)?;
        let (diff, _) = history.diff(&entry, max_chars)?;
        return Ok(HistoryOutput {
            changes: vec![entry],
            total: 1,
            next_cursor: None,
            diff: Some(diff),
            session,
        });
    }
    let filter = Filter {
        path: input.path.as_deref().map(relative).transpose()?,
        session: session_of(input.session),
        client: input.client,
    };
    let offset = input.cursor.unwrap_or(0) as usize;
    let limit = input.limit.map_or(LIST_DEFAULT, |l| l as usize);
    let (changes, total) = history.list(&filter, offset, limit)?;
    let next = offset + changes.len();
    Ok(HistoryOutput {
        changes,
        total: total as u64,
        next_cursor: (next < total).then_some(next as u64),
        diff: None,
        session,
    })
}

/// Undo a change or a session through `root` as tool `tool`; `written`
/// is told of each file it changed (the domain's index).
pub fn undo(
    history: Option<&History>,
    root: &Root,
    input: UndoInput,
    tool: &str,
    written: impl Fn(&RelPath),
) -> Result<UndoOutput> {
    let history = kept(history)?;
    let targets = match (&input.change, session_of(input.session)) {
        (Some(id), None) => {
            let entry = history.find(id)?;
            if let Some(by) = &entry.undone_by {
                return Err(Error::new(
                    Code::Conflict,
                    format!("change `{id}` was undone already by `{by}`; undo that one to redo it"),
                )
                .with("undone_by", by.clone()));
            }
            vec![entry]
        }
        (None, Some(session)) => {
            let changes = history.session_changes(&session)?;
            if changes.is_empty() {
                return Err(Error::new(
                    Code::NotFound,
                    format!("session `{session}` changed nothing here that is not undone already"),
                )
                .with("session", session));
            }
            changes
        }
        _ => {
            return Err(Error::invalid_parameter(
                "change",
                "give either `change` (a change's id) or `session`",
            ));
        }
    };
    let plan = history.plan_undo(root, targets)?;
    let dry_run = input.dry_run.unwrap_or(false);
    if !dry_run {
        history.apply_undo(root, &plan)?;
    } else if !plan.conflicts.is_empty() {
        return Err(kura_history::conflict_error(history, &plan));
    }
    if !dry_run {
        for f in &plan.files {
            if let Ok(p) = RelPath::parse(&f.path, false) {
                written(&p);
            }
        }
    }
    tracing::info!(
        tool,
        undone = plan.changes.len(),
        files = plan.files.len(),
        dry_run,
        "undo"
    );
    Ok(UndoOutput {
        undone: plan.changes,
        files: plan.files,
        folders_made: plan.make,
        folders_removed: plan.remove,
        dry_run,
    })
}

/// How much of each root's history the settings keep.
pub fn retention(config: &kura_core::config::Config) -> kura_history::Retention {
    let n = |v: i64| u64::try_from(v).unwrap_or(0);
    kura_history::Retention {
        days: n(config.history_days),
        max_bytes: n(config.history_max_mb).saturating_mul(1 << 20),
        floor: kura_history::Floor {
            changes: usize::try_from(config.history_keep_changes).unwrap_or(0),
            days: n(config.history_keep_days),
        },
    }
}

/// A domain's root with its history attached, from the state folder's
/// `history/<name>`: every change through the root is kept first. Without
/// a usable history the root refuses every change (nothing it wrote could
/// be undone), and says why.
pub fn attach(
    root: Root,
    o: &crate::Opening<'_>,
    name: &'static str,
    skip: &[&'static str],
) -> (Root, Option<History>) {
    let locks = Locks::of(o.config);
    let opened = match o.state {
        Some(s) => History::open(s, name, &root, skip),
        None => Err(Error::new(
            Code::FilesystemError,
            "kura has no state folder to keep its history in",
        )),
    };
    let (recorder, history) = match opened {
        Ok(h) => {
            h.keep(retention(o.config));
            (h.recorder(), Some(h))
        }
        Err(e) => {
            tracing::warn!("{name}: {}; changes are refused", e.message);
            (kura_history::refusing(e.message), None)
        }
    };
    let guarded = Guarded { locks, recorder };
    let root = root.with_recorder(std::sync::Arc::new(guarded));
    if let Some(h) = &history {
        h.finish_undos(&root);
    }
    (root, history)
}

/// The locks first, then the history: a locked file is refused before
/// anything is kept or written.
struct Guarded {
    locks: Locks,
    recorder: std::sync::Arc<dyn Recorder>,
}

impl Recorder for Guarded {
    fn file(&self, p: &RelPath, before: Option<&[u8]>, after: Option<&[u8]>) -> Result<()> {
        self.locks.check(p, before)?;
        self.recorder.file(p, before, after)
    }

    fn changing_folder(&self, p: &RelPath) -> Result<()> {
        self.locks.check(p, None)?;
        self.recorder.changing_folder(p)
    }

    fn folder(&self, p: &RelPath, made: bool) {
        self.recorder.folder(p, made)
    }

    fn moved(&self, from: &RelPath, to: &RelPath, file: &kura_core::fs::Moved<'_>) -> Result<()> {
        self.locks.check(from, Some(file.head))?;
        self.locks.check(to, None)?;
        self.recorder.moved(from, to, file)
    }

    fn unmade(&self, p: &RelPath) {
        self.recorder.unmade(p)
    }

    fn made(&self, p: &RelPath) {
        self.recorder.made(p)
    }
}
