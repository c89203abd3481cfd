//! Undoing changes: every file each change touched must still hold what
//! the change left (else nothing is done and each file in the way is
//! named), then each goes back to what it held before, all or nothing.

use std::collections::BTreeMap;

use gix::ObjectId;
use schemars::JsonSchema;
use serde::Serialize;

use crate::error::{Code, Error, Result};
use crate::fs::{RelPath, Root};
use crate::log::{Entry, id_of};
use crate::{Inner, call};

/// What an undo does to one file.
#[derive(Clone, Debug, Serialize, JsonSchema)]
pub struct Restore {
    pub path: String,
    /// `restored` (its earlier text back), `recreated` (a deleted file back)
    /// or `removed` (a file the change created taken away)
    pub action: String,
    /// What it holds now (blob id; null: no file)
    pub from: Option<String>,
    /// What it will hold
    pub to: Option<String>,
}

/// A file that changed since the change being undone.
#[derive(Clone, Debug, Serialize, JsonSchema)]
pub struct Conflict {
    pub path: String,
    /// What the change left there (blob id; null: no file)
    pub expected: Option<String>,
    /// What is there now
    pub found: Option<String>,
    /// The change that expected it
    pub change: String,
}

/// An undo worked out, not yet done.
#[derive(Clone, Debug, Serialize)]
pub struct Plan {
    /// The changes undone, newest first.
    pub changes: Vec<String>,
    pub files: Vec<Restore>,
    /// Folders to make again (shallowest first) and to remove (deepest
    /// first, each only if empty).
    pub make: Vec<String>,
    pub remove: Vec<String>,
    pub conflicts: Vec<Conflict>,
}

/// What `path` holds in `root` now, as a blob id, and its bytes.
fn current(root: &Root, path: &str) -> Result<Option<(String, Vec<u8>)>> {
    let p = RelPath::parse(path, false)?;
    match root.read(&p) {
        Ok(bytes) => Ok(Some((id_of(&bytes), bytes))),
        Err(e) if e.code == Code::NotFound => Ok(None),
        Err(e) => Err(e),
    }
}

pub(crate) fn plan(root: &Root, targets: Vec<Entry>) -> Result<Plan> {
    // The files as they would be after each undo in turn, newest first.
    let mut now: BTreeMap<String, Option<String>> = BTreeMap::new();
    let mut start: BTreeMap<String, Option<String>> = BTreeMap::new();
    let mut conflicts = Vec::new();
    let (mut make, mut remove) = (Vec::new(), Vec::new());
    for e in &targets {
        for f in &e.files {
            if !now.contains_key(&f.path) {
                let there = current(root, &f.path)?.map(|(id, _)| id);
                start.insert(f.path.clone(), there.clone());
                now.insert(f.path.clone(), there);
            }
            let there = now.get(&f.path).cloned().flatten();
            if there != f.after {
                conflicts.push(Conflict {
                    path: f.path.clone(),
                    expected: f.after.clone(),
                    found: there,
                    change: e.id.clone(),
                });
            }
            now.insert(f.path.clone(), f.before.clone());
        }
        remove.extend(e.made.iter().cloned());
        make.extend(e.removed.iter().cloned());
    }
    let files = now
        .into_iter()
        .filter(|(p, to)| start.get(p) != Some(to))
        .map(|(path, to)| {
            let from = start.get(&path).cloned().flatten();
            let action = match (&from, &to) {
                (_, None) => "removed",
                (None, _) => "recreated",
                _ => "restored",
            };
            Restore {
                path,
                action: action.into(),
                from,
                to,
            }
        })
        .collect();
    make.sort();
    make.dedup();
    remove.sort_by(|a, b| b.cmp(a));
    remove.dedup();
    Ok(Plan {
        changes: targets.iter().map(|e| e.id.clone()).collect(),
        files,
        make,
        remove,
        conflicts,
    })
}

/// The refusal of an undo with files in the way.
pub(crate) fn conflict(history: &Inner, plan: &Plan) -> Error {
    let names: Vec<&str> = plan.conflicts.iter().map(|c| c.path.as_str()).collect();
    Error::new(
        Code::Conflict,
        format!(
            "nothing was undone: {} changed since ({}); read it and undo by hand, or undo the newer change first",
            if names.len() == 1 { "a file" } else { "files" },
            names.join(", ")
        ),
    )
    .with("files", serde_json::to_value(&plan.conflicts).unwrap_or_default())
    .with("history", history.name)
}

/// One file set to `to` when it still holds `from`.
fn set(
    history: &Inner,
    root: &Root,
    path: &str,
    from: &Option<String>,
    to: &Option<String>,
) -> Result<()> {
    let p = RelPath::parse(path, false)?;
    let changed = || {
        Error::new(
            Code::Conflict,
            format!("`{path}` changed during the undo; nothing was undone"),
        )
        .with("path", path.to_owned())
    };
    match to {
        Some(id) => {
            let oid = ObjectId::from_hex(id.as_bytes())
                .map_err(|e| history.fault("holds a bad id", e))?;
            let bytes = history
                .store
                .blob(oid)
                .map_err(|e| history.fault("cannot be read", e))?;
            root.update(&p, |cur| {
                if cur.map(id_of) != *from {
                    return Err(changed());
                }
                Ok(Some((bytes.clone(), ())))
            })?;
            Ok(())
        }
        None => match current(root, path)? {
            Some((id, bytes)) if Some(&id) == from.as_ref() => root.remove_file_if(&p, &bytes),
            None if from.is_none() => Ok(()),
            _ => Err(changed()),
        },
    }
}

pub(crate) fn apply(history: &Inner, root: &Root, plan: &Plan) -> Result<()> {
    if !plan.conflicts.is_empty() {
        return Err(conflict(history, plan));
    }
    call::set_undoes(plan.changes.clone());
    for folder in &plan.make {
        root.make_dir(&RelPath::parse(folder, false)?)?;
    }
    let mut done: Vec<&Restore> = Vec::new();
    for r in &plan.files {
        if let Err(e) = set(history, root, &r.path, &r.from, &r.to) {
            // Put back what was done: all or nothing.
            for d in done.iter().rev() {
                if let Err(back) = set(history, root, &d.path, &d.to, &d.from) {
                    tracing::warn!("undo: could not put `{}` back: {}", d.path, back.message);
                }
            }
            return Err(e);
        }
        done.push(r);
    }
    for folder in &plan.remove {
        root.remove_dir_if_empty(&RelPath::parse(folder, false)?)?;
    }
    Ok(())
}
