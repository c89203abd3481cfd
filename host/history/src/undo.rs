//! Undoing changes: every file each change touched must still hold what
//! the change left (else nothing is done and each file in the way is
//! named), then each goes back to what it held before, all or nothing.

use std::collections::BTreeMap;

use gix::ObjectId;
use schemars::JsonSchema;
use serde::{Deserialize, Serialize};

use crate::error::{Code, Error, Result};
use crate::fs::{RelPath, Root};
use crate::log::{Entry, id_of};
use crate::{Inner, call};

/// What an undo does to one file.
#[derive(Clone, Debug, Serialize, Deserialize, JsonSchema)]
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
#[derive(Clone, Debug, Serialize, Deserialize, JsonSchema)]
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
#[derive(Clone, Debug, Serialize, Deserialize)]
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

/// What `path` holds in `root` now, as a blob id, hashed as it streams
/// by (any size).
fn id_now(root: &Root, path: &str) -> Result<Option<String>> {
    root.file_id(&RelPath::parse(path, false)?)
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
                let there = id_now(root, &f.path)?;
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

/// One thing an undo does: a file set to bytes the store holds, or a file
/// renamed back (its bytes went with its name, and the store may never
/// have had them).
enum Act<'a> {
    Set(&'a Restore),
    Rename { from: &'a Restore, to: &'a Restore },
}

impl Act<'_> {
    fn run(&self, history: &Inner, root: &Root, back: bool) -> Result<()> {
        match (self, back) {
            (Act::Set(r), false) => set(history, root, &r.path, &r.from, &r.to),
            (Act::Set(r), true) => set(history, root, &r.path, &r.to, &r.from),
            (Act::Rename { from, to }, false) => rename(root, &from.path, &to.path, &from.from),
            (Act::Rename { from, to }, true) => rename(root, &to.path, &from.path, &from.from),
        }
    }
}

/// File `from` renamed `to` when it still holds `id` and `to` is free.
fn rename(root: &Root, from: &str, to: &str, id: &Option<String>) -> Result<()> {
    let (a, b) = (RelPath::parse(from, false)?, RelPath::parse(to, false)?);
    if root.file_id(&a)? != *id {
        return Err(Error::new(
            Code::Conflict,
            format!("`{from}` changed during the undo; nothing was undone"),
        )
        .with("path", from.to_owned()));
    }
    root.rename_file(&a, &b)
}

/// The plan's files as acts: each file to get bytes the store lacks is
/// paired with the file of the plan that holds them and goes (a rename
/// back). One with no such pair would be lost or cannot be had: the undo
/// is refused.
fn acts<'a>(history: &Inner, plan: &'a Plan) -> Result<Vec<Act<'a>>> {
    let id = |s: &Option<String>| {
        s.as_deref()
            .and_then(|h| ObjectId::from_hex(h.as_bytes()).ok())
    };
    let kept = history
        .store
        .held(
            plan.files
                .iter()
                .flat_map(|r| [id(&r.to), id(&r.from)])
                .flatten(),
        )
        .map_err(|e| history.fault("cannot be read", e))?;
    let held = |s: &Option<String>| id(s).is_none_or(|id| kept.contains(&id));
    let mut paired = vec![false; plan.files.len()];
    let mut out = Vec::new();
    for (i, r) in plan.files.iter().enumerate() {
        if held(&r.to) {
            continue;
        }
        let source = plan.files.iter().enumerate().position(|(j, s)| {
            !paired[j] && j != i && s.from == r.to && s.to.is_none() && r.from.is_none()
        });
        let Some(j) = source else {
            return Err(not_kept(history, &r.path));
        };
        paired[i] = true;
        paired[j] = true;
        out.push(Act::Rename {
            from: &plan.files[j],
            to: r,
        });
    }
    for (i, r) in plan.files.iter().enumerate() {
        if paired[i] {
            continue;
        }
        if !held(&r.from) {
            // Removing or rewriting a file whose bytes nothing keeps.
            return Err(not_kept(history, &r.path));
        }
        out.push(Act::Set(r));
    }
    Ok(out)
}

fn not_kept(history: &Inner, path: &str) -> Error {
    Error::new(
        Code::Conflict,
        format!(
            "nothing was undone: the {} history does not keep the bytes of `{path}` (they went with a rename), and no file of this undo holds them; move it by hand",
            history.name
        ),
    )
    .with("path", path.to_owned())
}

pub(crate) fn apply(history: &Inner, root: &Root, plan: &Plan) -> Result<()> {
    if !plan.conflicts.is_empty() {
        return Err(conflict(history, plan));
    }
    let acts = acts(history, plan)?;
    call::set_undoes(plan.changes.clone());
    // The plan goes to its file first (synced, locked while the undo
    // runs): a kura killed halfway finishes it at its next start.
    let written = PlanFile::begin(history, plan)?;
    let mut made = Vec::new();
    let mut done: Vec<&Act> = Vec::new();
    let result = (|| {
        for folder in &plan.make {
            let p = RelPath::parse(folder, false)?;
            root.make_dir(&p)?;
            made.push(p);
        }
        for act in &acts {
            act.run(history, root, false)?;
            done.push(act);
        }
        Ok(())
    })();
    if let Err(e) = result {
        // Put back what was done: all or nothing.
        for d in done.iter().rev() {
            if let Err(back) = d.run(history, root, true) {
                tracing::warn!("undo: could not put a file back: {}", back.message);
            }
        }
        for p in made.iter().rev() {
            let _ = root.remove_dir_if_empty(p);
        }
        written.end(history);
        return Err(e);
    }
    remove_folders(root, plan);
    written.end(history);
    Ok(())
}

/// The folders an undo removes, each if empty; one that stays (it cannot
/// be removed) costs nothing and is logged.
fn remove_folders(root: &Root, plan: &Plan) {
    for folder in &plan.remove {
        let removed = RelPath::parse(folder, false).and_then(|p| root.remove_dir_if_empty(&p));
        if let Err(e) = removed {
            tracing::warn!("undo: the emptied folder `{folder}` stays: {}", e.message);
        }
    }
}

/// An undo in progress, kept in `undo/` of the history's `kura/` folder.
struct PlanFile {
    file: std::fs::File,
    name: String,
}

impl PlanFile {
    fn begin(history: &Inner, plan: &Plan) -> Result<PlanFile> {
        use std::io::Write as _;
        static N: std::sync::atomic::AtomicU64 = std::sync::atomic::AtomicU64::new(0);
        let n = N.fetch_add(1, std::sync::atomic::Ordering::Relaxed);
        let name = format!("undo/{}-{n}.json", crate::fs::process_tag());
        let failed = |e: std::io::Error| history.fault("cannot record the undo", e);
        let mut file = history.kura.lock(&name).map_err(failed)?;
        let text = serde_json::to_vec(plan).unwrap_or_default();
        kura_core::fault::step()
            .and_then(|()| file.set_len(0))
            .and_then(|()| file.write_all(&text))
            .and_then(|()| file.sync_data())
            .map_err(failed)?;
        Ok(PlanFile { file, name })
    }

    /// Done (or put back whole): the plan file is emptied, then goes. One
    /// that stays empty is removed at the next start; emptied first, so
    /// that an undo put back whole is never carried out then.
    fn end(self, history: &Inner) {
        if let Err(e) = self.file.set_len(0).and_then(|()| self.file.sync_data()) {
            tracing::warn!("undo: its plan file could not be emptied ({e})");
        }
        if let Err(e) = history.kura.remove(&self.name) {
            tracing::warn!("undo: its plan file stays ({e}); the next start finds it done");
        }
        drop(self.file);
    }
}

/// One act of an interrupted undo, if its files are as the undo found
/// them; done already, it is left; changed since, it is left and logged.
fn finish_act(history: &Inner, root: &Root, act: &Act<'_>) {
    let (path, state, done, todo) = match act {
        Act::Set(r) => (
            r.path.as_str(),
            id_now(root, &r.path),
            r.to.clone(),
            r.from.clone(),
        ),
        // A rename back: its state is where the bytes are.
        Act::Rename { from, to } => {
            let at = |p: &str| id_now(root, p).map(|id| id.is_some());
            let state = at(&from.path).and_then(|f| Ok((f, at(&to.path)?)));
            let state = state.map(|s| match s {
                (false, true) => Some("done".to_owned()),
                (true, false) => Some("to do".to_owned()),
                _ => None,
            });
            (
                to.path.as_str(),
                state,
                Some("done".to_owned()),
                Some("to do".to_owned()),
            )
        }
    };
    match state {
        Ok(now) if now == done => {}
        Ok(now) if now == todo => {
            if let Err(e) = act.run(history, root, false) {
                tracing::error!(
                    "an interrupted undo could not restore `{path}`: {}",
                    e.message
                );
            }
        }
        _ => tracing::error!("an interrupted undo leaves `{path}` as it is: it changed since"),
    }
}

/// Finish the undos a killed kura left (plan files no live undo holds),
/// through `root`: each file that still holds what the undo found gets
/// what it was to get; one that holds neither (changed since) stays as it
/// is and is logged. Run at start-up, before any call.
pub(crate) fn finish(history: &Inner, root: &Root) {
    let Ok(left) = history.kura.list("undo") else {
        return;
    };
    for (file, _, _) in left {
        let name = format!("undo/{file}");
        let Ok(Some(_held)) = history.kura.try_lock(&name) else {
            continue;
        };
        let plan: Option<Plan> = history
            .kura
            .read(&name)
            .ok()
            .flatten()
            .and_then(|b| serde_json::from_slice(&b).ok());
        if let Some(plan) = plan {
            // One change of kura's: the undo's, finished.
            let mut args = serde_json::Map::new();
            args.insert("finished".into(), name.clone().into());
            let _call = call::Call::begin(
                "kura",
                Some(&args),
                &call::Who {
                    client: "kura".into(),
                    session: call::process_session("start"),
                },
            );
            call::set_undoes(plan.changes.clone());
            for folder in &plan.make {
                if let Ok(p) = RelPath::parse(folder, false) {
                    let _ = root.make_dir(&p);
                }
            }
            match acts(history, &plan) {
                Ok(acts) => acts.iter().for_each(|a| finish_act(history, root, a)),
                Err(e) => tracing::error!("an interrupted undo is left as it is: {}", e.message),
            }
            remove_folders(root, &plan);
            tracing::info!("{} history: an interrupted undo was finished", history.name);
        }
        if let Err(e) = history.kura.remove(&name) {
            tracing::warn!("an interrupted undo's plan file stays: {e}");
        }
    }
}
