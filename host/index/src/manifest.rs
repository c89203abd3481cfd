//! Which files an index holds (size, mtime, content hash, the domain's
//! metadata), saved beside the index so a restart re-reads only what changed.
//!
//! Saved as a snapshot (`manifest.json`) and a journal of the changes since
//! (`manifest-<generation>.log`, one JSON line per changed file), so a write
//! through the server appends a line instead of rewriting every file's entry:
//! its cost does not grow with the workspace. When the journal holds as many
//! lines as there are files, the next commit writes a new snapshot instead
//! (amortised O(1) per change).
//!
//! Each tantivy commit carries the manifest state it goes with (generation
//! and journal length) as its payload. An index whose last commit does not
//! match the saved manifest (a crash between the two, a torn journal line)
//! is rebuilt rather than trusted: a stale entry could leave a file's old
//! units in the index.

use std::collections::{BTreeMap, BTreeSet};

use serde::{Deserialize, Serialize};

use crate::fs::StateDir;

/// The fewest journal lines before a snapshot is written again.
const MIN_JOURNAL: usize = 1024;

#[derive(Clone, Debug, Default, Serialize, Deserialize)]
pub(super) struct FileState {
    pub size: u64,
    pub mtime_ns: i128,
    /// Creation time (0: unknown, or a manifest from before it was kept).
    #[serde(default, skip_serializing_if = "is_zero")]
    pub ctime_ns: i128,
    pub hash: String,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub meta: Option<Box<serde_json::value::RawValue>>,
}

impl PartialEq for FileState {
    fn eq(&self, other: &FileState) -> bool {
        (self.size, self.mtime_ns, self.ctime_ns, &self.hash)
            == (other.size, other.mtime_ns, other.ctime_ns, &other.hash)
            && self.meta.as_ref().map(|m| m.get()) == other.meta.as_ref().map(|m| m.get())
    }
}

fn is_zero(n: &i128) -> bool {
    *n == 0
}

#[derive(Debug, Default)]
pub(super) struct Manifest {
    pub files: BTreeMap<String, FileState>,
    /// The snapshot's generation and the journal lines written since.
    saved: Saved,
    /// Files whose entry changed since the last commit: saved with the next.
    pub unsaved: BTreeSet<String>,
}

#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
struct Saved {
    /// 0: no snapshot yet (a new index); the first is generation 1.
    generation: u64,
    journaled: usize,
}

impl Saved {
    fn payload(self) -> String {
        format!("kura-manifest {} {}", self.generation, self.journaled)
    }
}

#[derive(Serialize, Deserialize)]
struct Snapshot {
    format: u32,
    generation: u64,
    files: BTreeMap<String, FileState>,
}

/// One journal line: a file's new state, or `f` absent when it is gone.
#[derive(Serialize, Deserialize)]
struct Change<'a> {
    k: std::borrow::Cow<'a, str>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    f: Option<FileState>,
}

/// How the next commit saves the manifest: decided before the commit, whose
/// payload names the state it leads to.
#[derive(Clone, Copy, Debug)]
pub(super) struct Plan {
    next: Saved,
    snapshot: bool,
}

impl Plan {
    /// The commit payload that marks this manifest state.
    pub fn payload(&self) -> String {
        self.next.payload()
    }
}

impl Manifest {
    /// How to save `changed` more changes.
    pub fn plan(&self, changed: usize) -> Plan {
        let journaled = self.saved.journaled + changed;
        if self.saved.generation == 0 || journaled >= MIN_JOURNAL.max(self.files.len()) {
            Plan {
                next: Saved {
                    generation: self.saved.generation + 1,
                    journaled: 0,
                },
                snapshot: true,
            }
        } else {
            Plan {
                next: Saved {
                    generation: self.saved.generation,
                    journaled,
                },
                snapshot: false,
            }
        }
    }
}

/// The manifest's files in the state folder.
pub(super) struct Store {
    sd: StateDir,
    /// The index's folder inside the state folder.
    dir: String,
    format: u32,
}

impl Store {
    pub fn new(sd: StateDir, dir: String, format: u32) -> Store {
        Store { sd, dir, format }
    }

    /// Empty the index's folder (for a rebuild).
    pub fn clear(&self) -> std::io::Result<()> {
        self.sd.clear_dir(&self.dir)
    }

    fn snapshot_name(&self) -> String {
        format!("{}/manifest.json", self.dir)
    }

    fn journal_name(&self, generation: u64) -> String {
        format!("{}/manifest-{generation}.log", self.dir)
    }

    /// The saved manifest, if it is of this format and matches the index's
    /// last commit `payload`; None means: rebuild the index.
    pub fn load(&self, payload: Option<&str>) -> Option<Manifest> {
        let bytes = self.sd.read(&self.snapshot_name()).ok().flatten()?;
        let snapshot: Snapshot = serde_json::from_slice(&bytes).ok()?;
        if snapshot.format != self.format {
            return None;
        }
        let mut manifest = Manifest {
            files: snapshot.files,
            saved: Saved {
                generation: snapshot.generation,
                journaled: 0,
            },
            unsaved: BTreeSet::new(),
        };
        let journal = self
            .sd
            .read(&self.journal_name(snapshot.generation))
            .ok()
            .flatten()
            .unwrap_or_default();
        for line in journal.split(|&b| b == b'\n').filter(|l| !l.is_empty()) {
            // A torn last line is a change the index may hold: the payload
            // check below then refuses the manifest.
            let Ok(change) = serde_json::from_slice::<Change>(line) else {
                break;
            };
            match change.f {
                Some(state) => manifest.files.insert(change.k.into_owned(), state),
                None => manifest.files.remove(change.k.as_ref()),
            };
            manifest.saved.journaled += 1;
        }
        (payload == Some(manifest.saved.payload().as_str())).then(|| {
            self.remove_stale_journals(snapshot.generation);
            manifest
        })
    }

    /// Journals of other generations are leftovers of an interrupted
    /// snapshot.
    fn remove_stale_journals(&self, generation: u64) {
        let current = format!("manifest-{generation}.log");
        for (name, _, _) in self.sd.list(&self.dir).unwrap_or_default() {
            if name.starts_with("manifest-") && name.ends_with(".log") && name != current {
                let _ = self.sd.remove(&format!("{}/{name}", self.dir));
            }
        }
    }

    /// Save `manifest` after the commit `plan` was made for: append the
    /// entries of `changed`, or write a snapshot.
    pub fn save(&self, manifest: &mut Manifest, changed: &[String], plan: Plan) {
        let done = if plan.snapshot {
            self.write_snapshot(manifest, plan.next.generation)
        } else {
            self.append(manifest, changed, plan.next.generation)
        };
        match done {
            Ok(()) => manifest.saved = plan.next,
            // The index's payload no longer matches: the next start rebuilds.
            Err(e) => tracing::warn!("cannot save the index manifest: {e}"),
        }
    }

    fn write_snapshot(&self, manifest: &Manifest, generation: u64) -> std::io::Result<()> {
        let snapshot = Snapshot {
            format: self.format,
            generation,
            files: manifest.files.clone(),
        };
        self.sd
            .write(&self.snapshot_name(), &serde_json::to_vec(&snapshot)?)?;
        self.sd
            .remove(&self.journal_name(manifest.saved.generation))
    }

    fn append(
        &self,
        manifest: &Manifest,
        changed: &[String],
        generation: u64,
    ) -> std::io::Result<()> {
        let mut lines = Vec::new();
        for key in changed {
            let change = Change {
                k: key.into(),
                f: manifest.files.get(key).cloned(),
            };
            serde_json::to_writer(&mut lines, &change)?;
            lines.push(b'\n');
        }
        self.sd.append(&self.journal_name(generation), &lines)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn state(size: u64) -> FileState {
        FileState {
            size,
            mtime_ns: 1,
            ctime_ns: 0,
            hash: format!("h{size}"),
            meta: None,
        }
    }

    fn store(t: &tempfile::TempDir) -> Store {
        let sd = StateDir::open(t.path()).unwrap();
        sd.ensure_dir("index/x").unwrap();
        Store::new(sd, "index/x".into(), 9)
    }

    /// Apply `changes` as a commit would, returning its payload.
    fn commit(s: &Store, m: &mut Manifest, changes: &[(&str, Option<u64>)]) -> String {
        let keys: Vec<String> = changes.iter().map(|(k, _)| k.to_string()).collect();
        for (k, size) in changes {
            match size {
                Some(n) => m.files.insert(k.to_string(), state(*n)),
                None => m.files.remove(*k),
            };
        }
        let plan = m.plan(keys.len());
        s.save(m, &keys, plan);
        plan.payload()
    }

    #[test]
    fn a_write_appends_one_line_and_a_restart_replays_it() {
        let t = tempfile::tempdir().unwrap();
        let s = store(&t);
        let mut m = Manifest::default();
        let files: Vec<(String, Option<u64>)> =
            (0..2000).map(|i| (format!("f{i}"), Some(i))).collect();
        let refs: Vec<(&str, Option<u64>)> = files.iter().map(|(k, v)| (k.as_str(), *v)).collect();
        commit(&s, &mut m, &refs);
        let snapshot = s.sd.read(&s.snapshot_name()).unwrap().unwrap();
        commit(&s, &mut m, &[("f1", Some(7))]);
        let payload = commit(&s, &mut m, &[("f2", None), ("new", Some(3))]);
        // The snapshot was not rewritten; the journal holds three lines.
        assert_eq!(s.sd.read(&s.snapshot_name()).unwrap().unwrap(), snapshot);
        let journal = s.sd.read(&s.journal_name(1)).unwrap().unwrap();
        assert_eq!(journal.iter().filter(|&&b| b == b'\n').count(), 3);
        let loaded = s.load(Some(&payload)).expect("manifest matches the commit");
        assert_eq!(loaded.files, m.files);
        assert_eq!(loaded.files["f1"].size, 7);
        assert!(!loaded.files.contains_key("f2"));
    }

    #[test]
    fn a_long_journal_becomes_a_snapshot() {
        let t = tempfile::tempdir().unwrap();
        let s = store(&t);
        let mut m = Manifest::default();
        let mut payload = String::new();
        for i in 0..MIN_JOURNAL as u64 + 5 {
            payload = commit(&s, &mut m, &[("a", Some(i))]);
        }
        assert_eq!(m.saved.generation, 2, "the first snapshot and one more");
        assert!(m.saved.journaled < 10);
        assert!(s.sd.read(&s.journal_name(1)).unwrap().is_none());
        assert_eq!(s.load(Some(&payload)).unwrap().files, m.files);
    }

    #[test]
    fn a_manifest_that_does_not_match_the_last_commit_is_refused() {
        let t = tempfile::tempdir().unwrap();
        let s = store(&t);
        let mut m = Manifest::default();
        let payload = commit(&s, &mut m, &[("a", Some(1)), ("b", Some(2))]);
        // The index committed one more change that the journal never got.
        let plan = m.plan(1);
        assert!(s.load(Some(&plan.payload())).is_none());
        assert!(s.load(None).is_none());
        // A torn last line: the lines before it are not enough either.
        let next = commit(&s, &mut m, &[("c", Some(3))]);
        s.sd.append(&s.journal_name(m.saved.generation), b"{\"k\":\"d\",\"f\":{")
            .unwrap();
        assert!(s.load(Some(&next)).is_some(), "torn line after the match");
        assert!(s.load(Some(&payload)).is_none(), "older commit");
    }
}
