//! vault_move and vault_delete: a note, an attachment or a folder moves,
//! and every link to what moved (and every link in what moved that its new
//! place would change) is rewritten to keep pointing at the same file
//! ([`crate::graph::rewrite`]). All or nothing: the whole change is planned
//! and checked first (each rewritten note's new text, each rename; every
//! target free, every note writable), saved as a journal in the state
//! folder, then carried out ([`journal`]). A step that fails undoes the
//! steps before it; a process killed half-way leaves the journal, which
//! the next start finishes or undoes ([`replay`]). The vault is either as
//! it was or as the move makes it, never with half its links rewritten.
//!
//! The write policy judges each path: the one a file leaves (`MoveFrom`),
//! the one it takes (`MoveTo`) and each note whose links change (`Relink`,
//! allowed in daily notes: the one change they take besides appending).

mod journal;

use std::collections::BTreeMap;

use schemars::JsonSchema;
use serde::Serialize;

use super::Vault;
use crate::args::Input;
use crate::error::{Code, Error, Result};
use crate::fs::RelPath;
use crate::graph::resolve::Names;
use crate::graph::rewrite::Move;
use crate::graph::{self, Graph};
use crate::plugins::WriteKind;
pub use journal::replay;
use journal::{Ended, Journal, Op, digest};

pub fn journal_prefix(root: &crate::fs::Root) -> String {
    journal::Names::of(root).prefix
}

#[derive(Input)]
pub struct MoveInput {
    /// Note, attachment or folder
    #[arg(nonempty)]
    pub from: String,
    /// New path (must not exist)
    #[arg(nonempty)]
    pub to: String,
    /// Report only
    pub dry_run: Option<bool>,
}

#[derive(Input)]
pub struct DeleteInput {
    /// Note, attachment or folder
    #[arg(nonempty)]
    pub path: String,
}

#[derive(Debug, Serialize, JsonSchema)]
pub struct Moved {
    pub from: String,
    pub to: String,
}

#[derive(Debug, Serialize, JsonSchema)]
pub struct Rewritten {
    /// The note, at its path after the move.
    pub path: String,
    pub links: u64,
}

#[derive(Debug, Serialize, JsonSchema)]
pub struct MoveOutput {
    pub moved: Vec<Moved>,
    pub rewritten: Vec<Rewritten>,
    pub links_rewritten: u64,
    pub dry_run: bool,
}

#[derive(Debug, Serialize, JsonSchema)]
pub struct DeleteOutput {
    pub path: String,
    /// Where it is now: vault_move it back from there to restore it.
    pub trash_path: String,
    pub files: u64,
    /// Links from other notes that now point nowhere.
    pub broken_links: u64,
}

/// A note whose links a move changes.
struct Relink {
    /// Where it is before the move.
    path: RelPath,
    old: String,
    text: String,
    links: u64,
}

/// A planned move.
struct Plan {
    files: Vec<(RelPath, RelPath)>,
    rewrites: Vec<Relink>,
    /// Folders the move makes, top first: those missing above its
    /// destination and, for a folder, its copy of every folder inside
    /// (empty ones too).
    made: Vec<RelPath>,
    /// Folders the move may empty, pruned (deepest first) once it is done:
    /// the folder that moved, or the trash folders a restored file leaves.
    prune: Vec<RelPath>,
}

fn path_arg(name: &str, value: &str) -> Result<RelPath> {
    let p = RelPath::parse(value, false)?;
    if p.is_root() {
        return Err(Error::invalid_parameter(
            name,
            "the vault's root cannot be moved",
        ));
    }
    Ok(p)
}

/// `p` with its leading `from` replaced by `to`.
fn rebase(p: &str, from: &str, to: &str) -> String {
    if p == from {
        return to.to_owned();
    }
    match p.strip_prefix(from).and_then(|r| r.strip_prefix('/')) {
        Some(rest) => format!("{to}/{rest}"),
        None => p.to_owned(),
    }
}

impl Vault {
    pub fn move_note(&self, input: MoveInput) -> Result<MoveOutput> {
        let from = path_arg("from", &input.from)?;
        let to = path_arg("to", &input.to)?;
        let _one = self.moving.lock().unwrap_or_else(|e| e.into_inner());
        let dry_run = input.dry_run.unwrap_or(false);
        let _all = self.move_lock(!dry_run)?;
        let plan = self.plan(&from, &to, true)?;
        let out = MoveOutput {
            moved: plan
                .files
                .iter()
                .map(|(f, t)| Moved {
                    from: f.to_string(),
                    to: t.to_string(),
                })
                .collect(),
            rewritten: plan
                .rewrites
                .iter()
                .map(|r| Rewritten {
                    path: rebase(&r.path.to_string(), &from.to_string(), &to.to_string()),
                    links: r.links,
                })
                .collect(),
            links_rewritten: plan.rewrites.iter().map(|r| r.links).sum(),
            dry_run,
        };
        if !out.dry_run {
            self.carry_out(&plan)?;
            tracing::info!(tool = "vault_move", from = %from, to = %to,
                files = out.moved.len(), links = out.links_rewritten, "write");
        }
        Ok(out)
    }

    pub fn delete(&self, input: DeleteInput) -> Result<DeleteOutput> {
        let path = path_arg("path", &input.path)?;
        if crate::notes::is_trash(&path) {
            return Err(
                Error::new(Code::Forbidden, format!("`{path}` is already in `.trash/`"))
                    .with("path", path.to_string()),
            );
        }
        let _one = self.moving.lock().unwrap_or_else(|e| e.into_inner());
        let _all = self.move_lock(true)?;
        let trash = self.trash_slot(&path)?;
        let g = self.current_graph()?;
        let plan = self.plan(&path, &trash, false)?;
        let moved: std::collections::HashSet<String> =
            plan.files.iter().map(|(f, _)| f.to_string()).collect();
        let broken = moved
            .iter()
            .filter_map(|p| g.find(p))
            .flat_map(|i| g.backlinks(i))
            .filter(|e| !moved.contains(&g.notes[e.from as usize].path))
            .count();
        self.carry_out(&plan)?;
        tracing::info!(tool = "vault_delete", path = %path, trash = %trash, "write");
        Ok(DeleteOutput {
            path: path.to_string(),
            trash_path: trash.to_string(),
            files: plan.files.len() as u64,
            broken_links: broken as u64,
        })
    }

    /// `.trash/<path>`, or with ` 2`, ` 3`, ... before its extension when
    /// an earlier deletion took that name.
    fn trash_slot(&self, path: &RelPath) -> Result<RelPath> {
        let base = format!("{}/{path}", crate::notes::TRASH);
        let (stem, ext) = match base.rsplit_once('.') {
            Some((s, e)) if !s.ends_with('/') && !e.contains('/') => {
                (s.to_owned(), format!(".{e}"))
            }
            _ => (base.clone(), String::new()),
        };
        for n in 1..1000 {
            let name = if n == 1 {
                base.clone()
            } else {
                format!("{stem} {n}{ext}")
            };
            let p = RelPath::parse(&name, false)?;
            if self.root.stat(&p)?.is_none() {
                return Ok(p);
            }
        }
        Err(Error::new(
            Code::Conflict,
            format!("`.trash/` already holds 999 copies of `{path}`"),
        ))
    }

    /// Everything the move of `from` to `to` changes, checked against the
    /// write policy; nothing is written.
    fn plan(&self, from: &RelPath, to: &RelPath, relink: bool) -> Result<Plan> {
        let tool = if relink { "vault_move" } else { "vault_delete" };
        let (f, t) = (from.to_string(), to.to_string());
        if f == t {
            return Err(Error::invalid_parameter("to", "`to` is `from`"));
        }
        if t.starts_with(&format!("{f}/")) {
            return Err(Error::invalid_parameter(
                "to",
                format!("`{to}` lies inside `{from}`, which cannot move into itself"),
            ));
        }
        let Some(stat) = self.root.stat(from)? else {
            return Err(
                Error::new(Code::NotFound, format!("`{from}` does not exist"))
                    .with("path", f.clone()),
            );
        };
        let case_only = self.root.folds_case() && f.to_lowercase() == t.to_lowercase();
        if !case_only && self.root.stat(to)?.is_some() {
            return Err(Error::new(Code::Conflict, format!("`{to}` already exists"))
                .with("path", t.clone()));
        }
        let mut made = self.missing_above(to)?;
        let files: Vec<(RelPath, RelPath)> = if stat.is_dir {
            let crate::fs::Walk {
                files: inside,
                dirs,
            } = self.root.walk(from)?;
            if !case_only {
                made.push(to.clone());
                for d in dirs {
                    made.push(RelPath::parse(&rebase(&d.to_string(), &f, &t), false)?);
                }
            }
            if inside.is_empty() {
                return Err(Error::invalid_parameter(
                    "from",
                    format!("`{from}` holds no files to move"),
                ));
            }
            inside
                .into_iter()
                .map(|(p, _)| {
                    let n = RelPath::parse(&rebase(&p.to_string(), &f, &t), false)?;
                    Ok((p, n))
                })
                .collect::<Result<_>>()?
        } else {
            vec![(from.clone(), to.clone())]
        };
        for (a, b) in &files {
            self.policy(tool, WriteKind::MoveFrom, a, true)?;
            self.policy(tool, WriteKind::MoveTo, b, false)?;
        }
        for d in &made {
            let judged = crate::write::judged_path(d, self.root.folds_case());
            crate::policy::check_folder(&judged)
                .map_err(|x| Error::new(x.code, x.message).with("path", d.to_string()))?;
        }
        let rewrites = if relink {
            self.relinks(&files, &f, &t)?
        } else {
            Vec::new()
        };
        for r in &rewrites {
            if !files.iter().any(|(a, _)| *a == r.path) {
                self.policy(tool, WriteKind::Relink, &r.path, true)?;
            }
        }
        let mut prune = Vec::new();
        if stat.is_dir {
            prune.push(from.clone());
        }
        // What leaves `.trash/` leaves no empty folders there.
        let mut up = from.parent();
        while crate::notes::is_trash(&up) && up.segments().len() > 1 {
            prune.push(up.clone());
            up = up.parent();
        }
        Ok(Plan {
            files,
            rewrites,
            made,
            prune,
        })
    }

    /// The folders above `p` that do not exist, top first.
    fn missing_above(&self, p: &RelPath) -> Result<Vec<RelPath>> {
        let mut missing = Vec::new();
        let mut up = p.parent();
        while !up.is_root() && self.root.stat(&up)?.is_none() {
            missing.push(up.clone());
            up = up.parent();
        }
        missing.reverse();
        Ok(missing)
    }

    /// The notes whose links the move changes, with their new text.
    fn relinks(&self, files: &[(RelPath, RelPath)], f: &str, t: &str) -> Result<Vec<Relink>> {
        let g = self.current_graph()?;
        let attachments = graph::attachments(&self.root)?;
        let to = |p: &str| rebase(p, f, t);
        let (before, after) = universes(&g, &attachments, &to);
        let m = Move {
            before: &before,
            after: &after,
            to: &to,
        };
        let moved_notes: std::collections::HashSet<String> =
            files.iter().map(|(a, _)| a.to_string()).collect();
        let mut out = Vec::new();
        for note in &g.notes {
            let affected = note.facts.links.iter().any(|l| {
                let Some(b) = before.resolve(&note.path, &l.target, l.form) else {
                    return false;
                };
                let want = after.find(&to(before.path(b)));
                want.is_none() || after.resolve(&to(&note.path), &l.target, l.form) != want
            });
            if !affected && !moved_notes.contains(&note.path) {
                continue;
            }
            let path = RelPath::parse(&note.path, false)?;
            let bytes = self.root.read(&path)?;
            let Ok(text) = std::str::from_utf8(&bytes) else {
                continue;
            };
            match m.rewrite(&note.path, text) {
                Ok(Some((new, n))) => out.push(Relink {
                    path,
                    old: text.to_owned(),
                    text: new,
                    links: n,
                }),
                Ok(None) => {}
                Err(target) => {
                    return Err(Error::new(
                        Code::Conflict,
                        format!(
                            "the link `{target}` in `{}` could not be rewritten to keep pointing at its file; nothing was moved",
                            note.path
                        ),
                    )
                    .with("path", note.path.clone()));
                }
            }
        }
        Ok(out)
    }

    /// The state folder a move keeps its journal in.
    fn journal_folder(&self) -> Result<&crate::fs::StateDir> {
        self.state.as_ref().ok_or_else(|| {
            Error::new(
                Code::FilesystemError,
                "a move needs kura's state folder for its journal, and there is none (set state_dir)",
            )
            .with("reason", "no_state_folder")
        })
    }

    /// The lock every process holds while it moves in this vault, from
    /// its plan until its journal is gone. A journal found once it is held
    /// belongs to a kura that died (perhaps while this one ran): it is
    /// finished or undone first, when the call is to `settle` (a dry run
    /// changes nothing).
    fn move_lock(&self, settle: bool) -> Result<std::fs::File> {
        let state = self.journal_folder()?;
        let lock = state
            .lock(&journal::Names::of(&self.root).lock())
            .map_err(|e| {
                Error::new(
                    Code::FilesystemError,
                    format!("the moves' lock in the state folder cannot be taken: {e}; nothing was moved"),
                )
            })?;
        if settle {
            journal::replay_held(&self.root, state);
        }
        Ok(lock)
    }

    /// Refuse now, before the first write, what would stop a step later:
    /// a name taken, a note that cannot be rewritten.
    fn check_steps(&self, plan: &Plan) -> Result<()> {
        for (a, b) in &plan.files {
            let case_only = self.root.folds_case()
                && a.to_string().to_lowercase() == b.to_string().to_lowercase();
            if !case_only && self.root.stat(b)?.is_some() {
                return Err(Error::new(
                    Code::Conflict,
                    format!("`{b}` already exists; nothing was moved"),
                )
                .with("path", b.to_string()));
            }
        }
        for r in &plan.rewrites {
            self.root.check_writable(&r.path).map_err(|e| {
                let msg = format!("{}; nothing was moved", e.message);
                Error { message: msg, ..e }
            })?;
        }
        Ok(())
    }

    /// Check every step, save the journal, carry the move out (or undo
    /// what was done when a step fails), drop the journal, and tell the
    /// index about every path that changed.
    fn carry_out(&self, plan: &Plan) -> Result<()> {
        let state = self.journal_folder()?;
        self.check_steps(plan)?;
        let mut ops = Vec::new();
        let moved: BTreeMap<String, String> = plan
            .files
            .iter()
            .map(|(a, b)| (a.to_string(), b.to_string()))
            .collect();
        // Notes that stay are rewritten first; a moved note is rewritten
        // where it is, then renamed (so a replay finds it at one or the other).
        for r in &plan.rewrites {
            ops.push(Op::Write {
                path: r.path.to_string(),
                was: digest(r.old.as_bytes()),
                old: Some(r.old.clone()),
                text: r.text.clone(),
            });
        }
        for dir in &plan.made {
            ops.push(Op::Mkdir {
                dir: dir.to_string(),
            });
        }
        for (a, b) in &moved {
            ops.push(Op::Rename {
                from: a.clone(),
                to: b.clone(),
            });
        }
        for dir in &plan.prune {
            ops.push(Op::Prune {
                dir: dir.to_string(),
            });
        }
        let journal = Journal {
            kura_move: journal::FORMAT,
            ops,
            ended: None,
        };
        let name = journal::Names::of(&self.root).new_journal();
        let bytes = serde_json::to_vec(&journal).map_err(|e| Error::internal(e.to_string()))?;
        state.write_new(&name, &bytes).map_err(|e| {
            Error::new(
                Code::FilesystemError,
                format!("the move's journal could not be saved: {e}; nothing was moved"),
            )
        })?;
        let (result, how) = match journal::run(&self.root, &journal.ops) {
            Ok(()) => (Ok(()), Ended::Done),
            Err(stop) => match journal::undo(&self.root, &journal.ops, stop.done) {
                Ok(()) => (
                    Err(Error {
                        message: format!(
                            "{}; the move was undone, nothing was moved",
                            stop.error.message
                        ),
                        ..stop.error
                    }),
                    Ended::Undone,
                ),
                Err(undo) => {
                    tracing::error!(journal = %name, "a move failed ({}) and could not be undone ({}); the next start finishes or undoes it",
                        stop.error.message, undo.message);
                    let e = Error {
                        message: format!(
                            "{}; undoing the steps done failed too ({}): the journal is kept, and the next start finishes or undoes the move",
                            stop.error.message, undo.message
                        ),
                        ..stop.error
                    };
                    self.tell_index(plan);
                    return Err(e);
                }
            },
        };
        journal.close(state, &name, how);
        self.tell_index(plan);
        result
    }

    fn tell_index(&self, plan: &Plan) {
        let mut touched: Vec<&RelPath> = Vec::new();
        for (a, b) in &plan.files {
            touched.push(a);
            touched.push(b);
        }
        touched.extend(plan.rewrites.iter().map(|r| &r.path));
        for p in touched {
            self.index.written(&self.root, p);
        }
    }
}

/// Every file links may point to (the notes and the attachments) before
/// the move and after it.
fn universes(g: &Graph, attachments: &Names, to: &dyn Fn(&str) -> String) -> (Names, Names) {
    let mut files: Vec<String> = g.notes.iter().map(|n| n.path.clone()).collect();
    files.extend(attachments.paths().iter().cloned());
    let build = |mut v: Vec<String>| {
        v.sort();
        Names::new(v)
    };
    let after: Vec<String> = files.iter().map(|p| to(p)).collect();
    (build(files), build(after))
}

/// A note moved with at least this many other notes linking to it asks
/// its user first: that many notes' links are rewritten.
pub const BACKLINKS_TO_CONFIRM: usize = 5;

impl Vault {
    /// What a vault_delete or vault_move would do that its user may
    /// regret, in one line (see `Domain::confirmation`).
    pub(crate) fn regrets(
        &self,
        tool: &str,
        args: &serde_json::Map<String, serde_json::Value>,
    ) -> Option<String> {
        let path = |key: &str| {
            args.get(key)
                .and_then(serde_json::Value::as_str)
                .and_then(|p| RelPath::parse(p, false).ok())
                .filter(|p| !p.is_root())
        };
        let files_in = |p: &RelPath| -> Option<usize> {
            match self.root.stat(p).ok()?? {
                s if s.is_dir => Some(self.root.walk_files(p).map_or(0, |f| f.len())),
                _ => None,
            }
        };
        match tool {
            "vault_delete" => {
                let p = path("path")?;
                let n = files_in(&p)?;
                Some(format!(
                    "Delete the folder `{p}` and the {n} file(s) in it?"
                ))
            }
            "vault_move" if args.get("dry_run") != Some(&serde_json::Value::Bool(true)) => {
                let (from, to) = (path("from")?, path("to")?);
                if let Some(n) = files_in(&from) {
                    return Some(format!(
                        "Move the folder `{from}` and its {n} file(s) to `{to}`?"
                    ));
                }
                let graph = self.current_graph().ok()?;
                let linking: std::collections::HashSet<usize> = graph
                    .backlinks(graph.find(&from.to_string())?)
                    .iter()
                    .map(|e| e.from as usize)
                    .collect();
                (linking.len() >= BACKLINKS_TO_CONFIRM).then(|| {
                    format!(
                        "Move `{from}` to `{to}`? {} other notes link to it; their links will be rewritten.",
                        linking.len()
                    )
                })
            }
            _ => None,
        }
    }
}
