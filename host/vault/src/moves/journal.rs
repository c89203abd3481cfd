//! A move's journal: its steps, written to the state folder before the
//! first of them, with what undoing each needs (the old text of every
//! rewritten note). A move carries its steps out in order; when one fails,
//! the steps done are undone in reverse, so the vault is as it was; a
//! process killed half-way leaves the journal, and the next start (of this
//! or another process on the same state folder) finishes it or, when it
//! cannot be finished, undoes it. A step is never skipped: each is looked
//! at first (done, to do, or impossible because something else changed
//! the file), and only a step the journal can prove done is passed over.
//!
//! One journal per move (`moves/vault-<root>-<pid>-<n>.json`); every
//! process moving in one vault holds `moves/vault-<root>.lock` from the
//! plan to the journal's removal, so a journal found while holding that
//! lock belongs to a process that died.

use serde::{Deserialize, Serialize};

use crate::error::{Code, Error, Result};
use crate::fs::{RelPath, Root, StateDir};
use crate::policy;

/// One step of a move.
#[derive(Clone, Debug, Serialize, Deserialize, PartialEq)]
#[serde(rename_all = "snake_case")]
pub(super) enum Op {
    /// Give note `path` the text `text` in place of the text hashed `was`
    /// (`old`, kept to undo it).
    Write {
        path: String,
        was: String,
        #[serde(default)]
        old: Option<String>,
        text: String,
    },
    /// Make folder `dir`, which did not exist when the move was planned
    /// (undone: removed while it is empty).
    Mkdir {
        dir: String,
    },
    Rename {
        from: String,
        to: String,
    },
    /// Remove this folder and those below it that the move emptied.
    Prune {
        dir: String,
    },
}

#[derive(Debug, Serialize, Deserialize)]
pub(super) struct Journal {
    pub kura_move: u32,
    pub ops: Vec<Op>,
    /// How the move ended, recorded before the journal is removed: a
    /// journal whose removal failed is then only removed later, never
    /// carried out again (an undone move done after all) or undone.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub ended: Option<Ended>,
}

#[derive(Clone, Copy, Debug, Serialize, Deserialize, PartialEq)]
#[serde(rename_all = "snake_case")]
pub(super) enum Ended {
    Done,
    Undone,
}

impl Journal {
    /// Record that the move ended (`how`), then remove the journal `name`.
    /// A failure to record still removes it; a failure to remove leaves a
    /// journal that says it ended.
    pub fn close(mut self, state: &StateDir, name: &str, how: Ended) {
        self.ended = Some(how);
        let recorded = serde_json::to_vec(&self)
            .map_err(std::io::Error::other)
            .and_then(|bytes| state.write(name, &bytes));
        if let Err(e) = recorded {
            tracing::warn!(journal = name, "how a move ended cannot be recorded: {e}");
        }
        if let Err(e) = state.remove(name) {
            tracing::warn!(journal = name, "a move's journal cannot be removed: {e}");
        }
    }
}

/// The journal's format: 2 keeps the old texts (1 did not: a journal of
/// format 1 can be finished but not undone); 3 makes the folders a move
/// brings (so an undone move takes them away, and empty ones move too).
pub(super) const FORMAT: u32 = 3;

pub(super) fn digest(bytes: &[u8]) -> String {
    blake3::hash(bytes).to_hex().to_string()
}

/// What a step finds before it is carried out (or undone).
#[derive(Debug, PartialEq)]
enum State {
    Done,
    ToDo,
}

fn rel(p: &str) -> Result<RelPath> {
    RelPath::parse(p, false)
}

/// The refusal of a step whose file something else changed.
fn changed(path: &str, what: &str) -> Error {
    Error::new(
        Code::Conflict,
        format!("`{path}` {what} while the move ran; kura leaves it as it is"),
    )
    .with("path", path.to_owned())
}

/// The content hash of the file at `p`, None when there is none.
fn hash_of(root: &Root, p: &RelPath) -> Result<Option<String>> {
    match root.stat(p)? {
        None => Ok(None),
        Some(s) if s.is_dir => Ok(Some(String::new())),
        Some(_) => Ok(Some(digest(&root.read(p)?))),
    }
}

/// Where step `i` stands, given the steps after it (a note rewritten in
/// place and then renamed is found at its new name).
fn state(root: &Root, ops: &[Op], i: usize) -> Result<State> {
    match &ops[i] {
        Op::Write {
            path, was, text, ..
        } => {
            let new = digest(text.as_bytes());
            let mut at = rel(path)?;
            let mut now = hash_of(root, &at)?;
            if now.is_none() {
                // Renamed already by a later step?
                if let Some(Op::Rename { to, .. }) = ops[i + 1..]
                    .iter()
                    .find(|o| matches!(o, Op::Rename { from, .. } if from == path))
                {
                    at = rel(to)?;
                    now = hash_of(root, &at)?;
                }
            }
            match now {
                Some(h) if h == new => Ok(State::Done),
                Some(h) if h == *was => Ok(State::ToDo),
                Some(_) => Err(changed(path, "was changed")),
                None => Err(changed(path, "was removed")),
            }
        }
        Op::Rename { from, to } => {
            let (a, b) = (rel(from)?, rel(to)?);
            let case_only = root.folds_case() && from.to_lowercase() == to.to_lowercase();
            match (root.stat(&a)?.is_some(), root.stat(&b)?.is_some()) {
                (true, _) if case_only => Ok(State::ToDo),
                (true, false) => Ok(State::ToDo),
                (false, true) => Ok(State::Done),
                (true, true) => Err(changed(to, "was created")),
                (false, false) => Err(changed(from, "was removed")),
            }
        }
        Op::Mkdir { dir } => match root.stat(&rel(dir)?)? {
            Some(s) if s.is_dir => Ok(State::Done),
            Some(_) => Err(changed(dir, "was created as a file")),
            None => Ok(State::ToDo),
        },
        Op::Prune { .. } => Ok(State::ToDo),
    }
}

/// Carry out step `op`.
fn apply(root: &Root, op: &Op) -> Result<()> {
    match op {
        Op::Write {
            path, was, text, ..
        } => {
            let p = rel(path)?;
            root.update(&p, |current| match current {
                Some(c) if digest(c) == *was => Ok(Some((text.as_bytes().to_vec(), ()))),
                Some(_) => Err(changed(path, "was changed")),
                None => Err(changed(path, "was removed")),
            })?;
            Ok(())
        }
        Op::Mkdir { dir } => root.make_dir(&rel(dir)?),
        Op::Rename { from, to } => root.rename_file(&rel(from)?, &rel(to)?),
        // An empty folder left behind loses nothing: not worth undoing a
        // move for. A locked one is: the move is refused whole.
        Op::Prune { dir } => match root.remove_empty_dirs(&rel(dir)?) {
            Err(e) if e.code == Code::Forbidden => Err(e),
            Err(e) => {
                tracing::warn!(folder = %dir, "an emptied folder stays: {}", e.message);
                Ok(())
            }
            Ok(()) => Ok(()),
        },
    }
}

/// Undo step `op`, done (or found done).
fn unapply(root: &Root, op: &Op) -> Result<()> {
    match op {
        Op::Write {
            path,
            was,
            old,
            text,
        } => {
            let Some(old) = old else {
                return Err(Error::new(
                    Code::Conflict,
                    format!(
                        "`{path}` cannot be given back its text: the journal (format 1) did not keep it"
                    ),
                ));
            };
            let new = digest(text.as_bytes());
            root.update(&rel(path)?, |current| match current {
                Some(c) if digest(c) == new => Ok(Some((old.as_bytes().to_vec(), ()))),
                Some(c) if digest(c) == *was => Ok(None),
                Some(_) => Err(changed(path, "was changed")),
                None => Err(changed(path, "was removed")),
            })?;
            Ok(())
        }
        Op::Rename { from, to } => root.rename_file(&rel(to)?, &rel(from)?),
        // Only while empty: a file another program put there meanwhile
        // keeps its folder.
        Op::Mkdir { dir } => root.remove_dir_if_empty(&rel(dir)?),
        Op::Prune { .. } => Ok(()),
    }
}

/// How far a run got: the steps carried out (or found done), and the
/// failure that stopped it.
pub(super) struct Stopped {
    pub done: usize,
    pub error: Error,
}

/// Every step's state among the first `n`, looked at before any is
/// touched: a journal one of whose steps can be neither done nor undone (a
/// note changed since) is not begun at all, rather than carried or undone
/// half-way. (A step's state does not depend on the steps before it being
/// carried out: relinks come first, each on its own note, then renames.)
fn states(root: &Root, ops: &[Op], n: usize) -> Result<Vec<State>> {
    (0..n).map(|i| state(root, ops, i)).collect()
}

/// Carry `ops` out in order, passing over those already done.
pub(super) fn run(root: &Root, ops: &[Op]) -> std::result::Result<(), Stopped> {
    let states = states(root, ops, ops.len()).map_err(|error| Stopped { done: 0, error })?;
    for (i, s) in states.iter().enumerate() {
        if *s == State::ToDo {
            apply(root, &ops[i]).map_err(|error| Stopped { done: i, error })?;
        }
    }
    Ok(())
}

/// Undo the first `done` of `ops`, last first; a step found not done is
/// passed over (a process killed before it). Nothing is undone unless
/// every one of them can be.
pub(super) fn undo(root: &Root, ops: &[Op], done: usize) -> Result<()> {
    let states = states(root, ops, done)?;
    for i in (0..done).rev() {
        if states[i] == State::Done {
            unapply(root, &ops[i])?;
        }
    }
    Ok(())
}

/// The baseline write rules, applied again to a journal found in the
/// state folder: it may not be kura's (anything that can write the state
/// folder can leave one), so it reaches no reserved path and changes no
/// daily note but by relinking.
fn admissible(ops: &[Op], folds_case: bool) -> std::result::Result<(), String> {
    let judged = |p: &str| {
        let p = rel(p).map_err(|e| e.message)?;
        Ok::<_, String>(crate::write::judged_path(&p, folds_case))
    };
    for op in ops {
        let checks: Vec<(policy::Kind, String)> = match op {
            Op::Write { path, .. } => vec![(policy::Kind::Relink, judged(path)?)],
            Op::Rename { from, to } => vec![
                (policy::Kind::MoveFrom, judged(from)?),
                (policy::Kind::MoveTo, judged(to)?),
            ],
            Op::Prune { dir } => vec![(policy::Kind::MoveFrom, judged(dir)?)],
            Op::Mkdir { dir } => {
                let dir = judged(dir)?;
                policy::check_folder(&dir).map_err(|d| format!("`{dir}`: {}", d.message))?;
                continue;
            }
        };
        for (kind, path) in checks {
            policy::check(kind, &path, true).map_err(|d| format!("`{path}`: {}", d.message))?;
        }
    }
    Ok(())
}

/// The vault's journals and its lock, by name in the state folder.
pub(super) struct Names {
    pub prefix: String,
}

impl Names {
    pub fn of(root: &Root) -> Names {
        let h = blake3::hash(root.path().to_string_lossy().as_bytes()).to_hex();
        Names {
            prefix: format!("vault-{}", &h[..16]),
        }
    }

    pub fn lock(&self) -> String {
        format!("moves/{}.lock", self.prefix)
    }

    /// A name no other move of any process has.
    pub fn new_journal(&self) -> String {
        static N: std::sync::atomic::AtomicU64 = std::sync::atomic::AtomicU64::new(0);
        let n = N.fetch_add(1, std::sync::atomic::Ordering::Relaxed);
        let t = std::time::SystemTime::now()
            .duration_since(std::time::UNIX_EPOCH)
            .map_or(0, |d| d.as_nanos());
        format!(
            "moves/{}-{}-{n:x}-{t:x}.json",
            self.prefix,
            kura_core::fs::process_tag()
        )
    }

    /// This vault's journals in the state folder (format 1's single
    /// `vault-<root>.json` included), oldest first.
    pub fn journals(&self, state: &StateDir) -> Vec<String> {
        let mut found: Vec<(std::time::SystemTime, String)> = state
            .list("moves")
            .unwrap_or_default()
            .into_iter()
            .filter(|(name, ..)| name.starts_with(&self.prefix) && name.ends_with(".json"))
            .map(|(name, _, t)| (t, format!("moves/{name}")))
            .collect();
        found.sort();
        found.into_iter().map(|(_, n)| n).collect()
    }
}

/// Finish, or else undo, every move a killed process left in the state
/// folder, before anything else reads or writes the vault. Returns how
/// many steps they had. A journal that cannot be read or is refused by
/// the write rules is set aside (renamed `.refused`) and nothing of it is
/// done; one that can be neither finished nor undone stays, for the next
/// start, and is logged as an error with what is wrong.
pub fn replay(root: &Root, state: &StateDir) -> usize {
    let names = Names::of(root);
    let journals = names.journals(state);
    if journals.is_empty() {
        return 0;
    }
    // A live process moving in this vault holds the lock until its
    // journal is gone: wait for it, then every journal left is orphaned.
    let Ok(_lock) = state.lock(&names.lock()) else {
        tracing::warn!(
            "the moves' lock in the state folder cannot be taken; journals are left for the next start"
        );
        return 0;
    };
    replay_held(root, state)
}

/// [`replay`] by a process that holds the moves' lock: at the start of a
/// move, a journal another kura left when it died (while this one ran) is
/// finished or undone before the new move plans anything.
pub(super) fn replay_held(root: &Root, state: &StateDir) -> usize {
    let mut steps = 0;
    for name in Names::of(root).journals(state) {
        steps += replay_one(root, state, &name);
    }
    steps
}

fn replay_one(root: &Root, state: &StateDir, name: &str) -> usize {
    let set_aside = |why: &str| {
        tracing::error!(
            journal = name,
            "a move's journal is set aside, nothing of it done: {why}"
        );
        if let Ok(Some(bytes)) = state.read(name) {
            let _ = state.write(&format!("{name}.refused"), &bytes);
        }
        let _ = state.remove(name);
    };
    let journal: Journal = match state.read(name) {
        Ok(Some(bytes)) => match serde_json::from_slice(&bytes) {
            Ok(j) => j,
            Err(e) => {
                set_aside(&format!("it cannot be read ({e})"));
                return 0;
            }
        },
        Ok(None) => return 0,
        Err(e) => {
            tracing::warn!(journal = name, "a move's journal cannot be read: {e}");
            return 0;
        }
    };
    if let Some(how) = journal.ended {
        tracing::info!(
            journal = name,
            "a move that ended ({how:?}) left its journal; removed, nothing changed"
        );
        if let Err(e) = state.remove(name) {
            tracing::warn!(journal = name, "a move's journal cannot be removed: {e}");
        }
        return 0;
    }
    if let Err(why) = admissible(&journal.ops, root.folds_case()) {
        set_aside(&format!("the write rules refuse it ({why})"));
        return 0;
    }
    let n = journal.ops.len();
    // Its own change in the history (not the caller's, when a move finds
    // it): a change of kura's, whose undo takes back the settlement whole.
    let mut args = serde_json::Map::new();
    args.insert("settled".into(), name.into());
    let _call = crate::domain::history::Call::begin(
        "kura",
        Some(&args),
        &crate::domain::history::Who {
            client: "kura".into(),
            session: crate::domain::history::process_session("start"),
        },
    );
    let how = match run(root, &journal.ops) {
        Ok(()) => {
            tracing::info!(steps = n, "an interrupted move was finished");
            Ended::Done
        }
        Err(stop) => match undo(root, &journal.ops, journal.ops.len()) {
            Ok(()) => {
                tracing::warn!(
                    steps = n,
                    "an interrupted move could not be finished ({}); it was undone",
                    stop.error.message
                );
                Ended::Undone
            }
            Err(e) => {
                tracing::error!(
                    journal = name,
                    "an interrupted move can be neither finished ({}) nor undone ({}); its journal stays for the next start",
                    stop.error.message,
                    e.message
                );
                return n;
            }
        },
    };
    journal.close(state, name, how);
    n
}
