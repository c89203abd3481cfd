//! vault_move and vault_delete: a note, an attachment or a folder moves,
//! and every link to what moved (and every link in what moved that its new
//! place would change) is rewritten to keep pointing at the same file
//! ([`crate::graph::rewrite`]). All or nothing: the whole change is planned
//! first (each rewritten note's new text, each rename), saved as a journal
//! in the state folder, then carried out; a process killed half-way finds
//! the journal at its next start and finishes it ([`replay`]), so the vault
//! is either as it was (killed before the journal was saved) or as the move
//! makes it, never with half its links rewritten.
//!
//! The write policy judges each path: the one a file leaves (`MoveFrom`),
//! the one it takes (`MoveTo`) and each note whose links change (`Relink`,
//! allowed in daily notes: the one change they take besides appending).

use std::collections::BTreeMap;

use schemars::JsonSchema;
use serde::{Deserialize, Serialize};

use super::Vault;
use crate::args::Input;
use crate::error::{Code, Error, Result};
use crate::fs::{RelPath, Root, StateDir};
use crate::graph::resolve::Names;
use crate::graph::rewrite::Move;
use crate::graph::{self, Graph};
use crate::plugins::WriteKind;

#[derive(Input)]
pub struct MoveInput {
    /// Note, attachment or folder
    #[arg(nonempty)]
    pub from: String,
    /// New path (must not exist)
    #[arg(nonempty)]
    pub to: String,
    /// Report only; change nothing
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

/// One step of a move, as the journal keeps it.
#[derive(Clone, Debug, Serialize, Deserialize, PartialEq)]
#[serde(rename_all = "snake_case")]
enum Op {
    /// Give `path` this text if it still has the content hashed `was`.
    Write {
        path: String,
        was: String,
        text: String,
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
struct Journal {
    kura_move: u32,
    ops: Vec<Op>,
}

/// The journal's format.
const JOURNAL_FORMAT: u32 = 1;

fn digest(bytes: &[u8]) -> String {
    blake3::hash(bytes).to_hex().to_string()
}

/// A planned move.
struct Plan {
    files: Vec<(RelPath, RelPath)>,
    /// Notes whose links change: their path before the move, new text, count.
    rewrites: Vec<(RelPath, String, String, u64)>,
    /// Folders the move may empty, pruned (deepest first) once it is done:
    /// the folder that moved, or the trash folders a restored file leaves.
    prune: Vec<RelPath>,
}

/// The journal's name in the state folder, one per vault.
pub fn journal_name(root: &Root) -> String {
    format!(
        "moves/vault-{}.json",
        &blake3::hash(root.path().to_string_lossy().as_bytes()).to_hex()[..16]
    )
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
                .map(|(p, _, _, n)| Rewritten {
                    path: rebase(&p.to_string(), &from.to_string(), &to.to_string()),
                    links: *n,
                })
                .collect(),
            links_rewritten: plan.rewrites.iter().map(|r| r.3).sum(),
            dry_run: input.dry_run.unwrap_or(false),
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
        let files: Vec<(RelPath, RelPath)> = if stat.is_dir {
            let inside = self.root.walk_files(from)?;
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
        let rewrites = if relink {
            self.relinks(&files, &f, &t)?
        } else {
            Vec::new()
        };
        for (p, ..) in &rewrites {
            if !files.iter().any(|(a, _)| a == p) {
                self.policy(tool, WriteKind::Relink, p, true)?;
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
            prune,
        })
    }

    /// The notes whose links the move changes, with their new text.
    fn relinks(
        &self,
        files: &[(RelPath, RelPath)],
        f: &str,
        t: &str,
    ) -> Result<Vec<(RelPath, String, String, u64)>> {
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
                Ok(Some((new, n))) => out.push((path, digest(&bytes), new, n)),
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

    /// Save the journal, carry the move out, drop the journal, and tell
    /// the index about every path that changed.
    fn carry_out(&self, plan: &Plan) -> Result<()> {
        let Some(state) = &self.state else {
            return Err(Error::new(
                Code::FilesystemError,
                "a move needs kura's state folder for its journal, and there is none (set state_dir)",
            )
            .with("reason", "no_state_folder"));
        };
        let mut ops = Vec::new();
        let moved: BTreeMap<String, String> = plan
            .files
            .iter()
            .map(|(a, b)| (a.to_string(), b.to_string()))
            .collect();
        // Notes that stay are rewritten first; a moved note is rewritten
        // where it is, then renamed (so a replay finds it at one or the other).
        for (p, was, text, _) in &plan.rewrites {
            ops.push(Op::Write {
                path: p.to_string(),
                was: was.clone(),
                text: text.clone(),
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
            kura_move: JOURNAL_FORMAT,
            ops,
        };
        let name = journal_name(&self.root);
        let bytes = serde_json::to_vec(&journal).map_err(|e| Error::internal(e.to_string()))?;
        state.write(&name, &bytes).map_err(|e| {
            Error::new(
                Code::FilesystemError,
                format!("the move's journal could not be saved: {e}; nothing was moved"),
            )
        })?;
        fault(0);
        let result = run(&self.root, &journal.ops);
        if result.is_ok() {
            let _ = state.remove(&name);
        }
        let mut touched: Vec<RelPath> = Vec::new();
        for (a, b) in &plan.files {
            touched.push(a.clone());
            touched.push(b.clone());
        }
        touched.extend(plan.rewrites.iter().map(|r| r.0.clone()));
        for p in &touched {
            self.index.written(&self.root, p);
        }
        result
    }
}

#[cfg(feature = "fault-injection")]
fn fault(done: usize) {
    kura_core::fault::move_step(done);
}

#[cfg(not(feature = "fault-injection"))]
fn fault(_: usize) {}

/// Carry out a journal's steps in order; each can be done again safely.
fn run(root: &Root, ops: &[Op]) -> Result<()> {
    for (n, op) in ops.iter().enumerate() {
        match op {
            Op::Write { path, was, text } => {
                let p = RelPath::parse(path, false)?;
                let new = digest(text.as_bytes());
                root.update(&p, |current| match current {
                    Some(c) if digest(c) == *was => Ok(Some((text.as_bytes().to_vec(), ()))),
                    Some(c) if digest(c) == new => Ok(None),
                    Some(_) => {
                        tracing::warn!(path = %p, "changed during the move: its links were not rewritten");
                        Ok(None)
                    }
                    // Renamed already (a replay): its text was written first.
                    None => Ok(None),
                })?;
            }
            Op::Rename { from, to } => {
                let (a, b) = (RelPath::parse(from, false)?, RelPath::parse(to, false)?);
                let there = root.stat(&b)?.is_some();
                if root.stat(&a)?.is_some() && !there {
                    root.rename_file(&a, &b)?;
                }
            }
            Op::Prune { dir } => root.remove_empty_dirs(&RelPath::parse(dir, false)?)?,
        }
        fault(n + 1);
    }
    Ok(())
}

/// Finish a move a killed process left in the journal, before anything
/// else reads or writes the vault. Returns how many steps it had.
pub fn replay(root: &Root, state: &StateDir) -> usize {
    let name = journal_name(root);
    let journal: Journal = match state.read(&name) {
        Ok(Some(bytes)) => match serde_json::from_slice(&bytes) {
            Ok(j) => j,
            Err(e) => {
                tracing::warn!("a move's journal cannot be read ({e}); it is set aside");
                let _ = state.write(&format!("{name}.unreadable"), &bytes);
                let _ = state.remove(&name);
                return 0;
            }
        },
        Ok(None) => return 0,
        Err(e) => {
            tracing::warn!("a move's journal cannot be read: {e}");
            return 0;
        }
    };
    match run(root, &journal.ops) {
        Ok(()) => {
            tracing::info!(
                steps = journal.ops.len(),
                "an interrupted move was finished"
            );
            let _ = state.remove(&name);
        }
        Err(e) => tracing::warn!(
            "an interrupted move could not be finished ({}); its journal is kept for the next start",
            e.message
        ),
    }
    journal.ops.len()
}

/// Every file links may point to (the notes with their aliases, and the
/// attachments) before the move and after it.
fn universes(g: &Graph, attachments: &Names, to: &dyn Fn(&str) -> String) -> (Names, Names) {
    let none: Vec<String> = Vec::new();
    let mut files: Vec<(String, &[String])> = g
        .notes
        .iter()
        .map(|n| (n.path.clone(), n.facts.aliases.as_slice()))
        .collect();
    files.extend(
        attachments
            .paths()
            .iter()
            .map(|p| (p.clone(), none.as_slice())),
    );
    let build = |mut v: Vec<(String, &[String])>| {
        v.sort_by(|a, b| a.0.cmp(&b.0));
        let (paths, aliases): (Vec<String>, Vec<&[String]>) = v.into_iter().unzip();
        Names::new(paths, |i| aliases[i])
    };
    let after: Vec<(String, &[String])> = files.iter().map(|(p, a)| (to(p), *a)).collect();
    (build(files), build(after))
}
