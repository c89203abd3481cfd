//! Retention: changes older than the person keeps, or past the size they
//! allow, leave the history, oldest first; every change still listed stays
//! undoable.
//!
//! The newest change pruned becomes the history's boundary: git's own
//! `shallow` file names it, so `git log` stops there, and its tree — the
//! files as they were before the oldest change kept — stays. The objects
//! reachable from the head down to the boundary are written as one new
//! pack (deltas as in a merge), the list of changes is written anew
//! without the pruned ones, then the old packs go.

use std::collections::HashSet;
use std::sync::Arc;

use gix::ObjectId;

use crate::Inner;
use crate::error::{Code, Error, Result};
use crate::fs::{Root, StateDir};
use crate::log::Entry;
use crate::pack;
use crate::store::Store;

/// How much history to keep: changes newer than `days` (0: any age), and
/// at most `max_bytes` of packs (0: any size), but never less than `floor`.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub struct Retention {
    pub days: u64,
    pub max_bytes: u64,
    pub floor: Floor,
}

/// What retention keeps whatever the size: the newest `changes` changes
/// (whatever their age too), and every change of the last `days` days. A
/// history whose files alone are over its size (one move of a big
/// attachments folder) would otherwise be pruned at every look, each time
/// in proportion, down to nothing.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Floor {
    pub changes: usize,
    pub days: u64,
}

impl Default for Floor {
    fn default() -> Floor {
        Floor {
            changes: 100,
            days: 7,
        }
    }
}

/// Changes past the age limit that make a prune worth rewriting the
/// history for: a tenth of those listed, or this many.
const WORTH: usize = 1_000;

impl Retention {
    /// How many of `times` (the changes' RFC 3339 times, oldest first) to
    /// prune when the packs take `bytes`, of which no prune frees `fixed`
    /// (the files as the oldest change kept finds them stay): the changes
    /// past the age limit once they are worth a rewrite, and enough of the
    /// oldest for the rest to fit the size (in proportion to what a prune
    /// frees, with a fifth to spare); never into the floor.
    pub(crate) fn cut(
        &self,
        times: &[String],
        (bytes, fixed): (u64, u64),
        now: chrono::DateTime<chrono::Utc>,
    ) -> usize {
        let older = |days: u64| {
            let limit = now - chrono::Duration::days(days as i64);
            times
                .iter()
                .take_while(|t| chrono::DateTime::parse_from_rfc3339(t).is_ok_and(|t| t < limit))
                .count()
        };
        let n = times.len();
        let floor = n.saturating_sub(self.floor.changes);
        let mut cut = 0;
        if self.days > 0 {
            let old = older(self.days);
            if old >= WORTH.min(n / 10).max(1) {
                cut = old.min(floor);
            }
        }
        if self.max_bytes > 0 && bytes > self.max_bytes {
            let frees = bytes.saturating_sub(fixed).max(1);
            let room = self.max_bytes.saturating_sub(fixed);
            let keep = (n as f64 * 0.8 * room as f64 / frees as f64) as usize;
            let recent = match self.floor.days {
                0 => n,
                days => older(days),
            };
            cut = cut.max(n.saturating_sub(keep).min(floor).min(recent));
        }
        cut
    }

    /// Whether the floor holds the history over its size: a prune as far
    /// as the size asks would cut into the changes the floor keeps.
    pub(crate) fn held_by_floor(
        &self,
        times: &[String],
        sizes: (u64, u64),
        now: chrono::DateTime<chrono::Utc>,
    ) -> bool {
        let unfloored = Retention {
            floor: Floor {
                changes: 0,
                days: 0,
            },
            days: 0,
            ..*self
        };
        unfloored.cut(times, sizes, now) > self.cut(times, sizes, now)
    }
}

/// The size of the blobs `head`'s tree names: what any prune keeps (an
/// upper bound: packs hold them compressed).
fn fixed_bytes(
    repo: &gix::Repository,
    head: Option<ObjectId>,
) -> std::result::Result<u64, Box<dyn std::error::Error + Send + Sync>> {
    let Some(head) = head else { return Ok(0) };
    let mut ids = HashSet::new();
    tree(repo, repo.find_commit(head)?.tree_id()?.detach(), &mut ids)?;
    let mut total = 0;
    for id in ids {
        let h = repo.find_header(id)?;
        if h.kind() == gix::object::Kind::Blob {
            total += h.size();
        }
    }
    Ok(total)
}

/// What retention sees of a history (`kura doctor` shows it).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Measure {
    /// Changes listed.
    pub changes: usize,
    /// Bytes of packs.
    pub bytes: u64,
    /// Over its size, and kept there by the floor.
    pub held_by_floor: bool,
}

/// The history `name` of `root` in the state folder as `retention` would
/// see it at its next prune, read without opening it to write (nothing
/// recorded, nothing pruned, no lock waited for: `kura doctor`'s look);
/// None when it has none yet.
pub fn measure(
    state: &StateDir,
    name: &str,
    root: &Root,
    retention: Retention,
) -> Result<Option<Measure>> {
    let folder = crate::folder_of(name, root);
    let failed = |e: Box<dyn std::error::Error + Send + Sync>| {
        Error::new(
            Code::FilesystemError,
            format!("the {name} history cannot be read: {e}"),
        )
    };
    let read = |sub: &str| {
        state
            .read(&format!("{folder}/{sub}"))
            .map_err(|e| failed(e.into()))
    };
    if read("HEAD")?.is_none() {
        return Ok(None);
    }
    let store = Store::open(&state.path().join(&folder), true).map_err(failed)?;
    let list = read("kura/changes.jsonl")?.unwrap_or_default();
    let times: Vec<String> = String::from_utf8_lossy(&list)
        .lines()
        .filter_map(|l| serde_json::from_str::<Entry>(l).ok())
        .map(|e| e.time)
        .collect();
    let bytes = pack::packed_bytes(state, &folder).map_err(failed)?;
    let head = store.head().map_err(failed)?;
    let fixed = match retention.max_bytes {
        0 => 0,
        _ => fixed_bytes(&store.repo(), head).map_err(failed)?,
    };
    Ok(Some(Measure {
        changes: times.len(),
        bytes,
        held_by_floor: retention.held_by_floor(&times, (bytes, fixed), chrono::Utc::now()),
    }))
}

/// A history as a prune finds it.
struct Found {
    /// Each change listed (id, time), oldest first.
    listed: Vec<(String, String)>,
    times: Vec<String>,
    bytes: u64,
    /// What no prune frees.
    fixed: u64,
    head: Option<ObjectId>,
}

impl Inner {
    fn found(&self, retention: Retention) -> Result<Found> {
        let failed =
            |e: Box<dyn std::error::Error + Send + Sync>| self.fault("cannot be measured", e);
        let listed: Vec<(String, String)> = self
            .committed(&[])?
            .into_iter()
            .map(|e| (e.id, e.time))
            .collect();
        let times: Vec<String> = listed.iter().map(|(_, t)| t.clone()).collect();
        let bytes = pack::packed_bytes(&self.state, &self.dir).map_err(failed)?;
        let head = self.store.head().map_err(failed)?;
        let fixed = match retention.max_bytes {
            0 => 0,
            _ => fixed_bytes(&self.store.repo(), head).map_err(failed)?,
        };
        Ok(Found {
            listed,
            times,
            bytes,
            fixed,
            head,
        })
    }

    /// Prune what `retention` no longer keeps; how many changes went.
    pub(crate) fn prune(self: &Arc<Self>, retention: Retention) -> Result<usize> {
        let failed =
            |e: Box<dyn std::error::Error + Send + Sync>| self.fault("cannot be pruned", e);
        let _merging = self
            .kura
            .lock("merge.lock")
            .map_err(|e| self.fault("cannot be locked", e))?;
        // What is reachable is read from a store that knows every pack:
        // another kura's merge may have removed some this one loaded.
        self.reopen();
        let Found {
            listed,
            times,
            bytes,
            fixed,
            head,
        } = self.found(retention)?;
        let repo = self.store.repo();
        let now = chrono::Utc::now();
        if retention.held_by_floor(&times, (bytes, fixed), now) {
            tracing::warn!(
                "{} history: {bytes} bytes, over its size, and kept at its floor (the last {} changes, {} days)",
                self.name,
                retention.floor.changes,
                retention.floor.days
            );
        }
        let cut = retention.cut(&times, (bytes, fixed), now);
        if cut == 0 {
            return Ok(0);
        }
        let boundary = ObjectId::from_hex(listed[cut - 1].0.as_bytes())
            .map_err(|e| self.fault("holds a bad id", e))?;
        let mut keep = HashSet::new();
        reach(&repo, head, boundary, &mut keep).map_err(failed)?;
        let stems = pack::all_packs(&self.state, &self.dir).map_err(failed)?;
        // The blobs of calls not committed yet: a call holding many large
        // files writes them before its commit, and a kura killed before it
        // left them for the next start. Each names them in its pending file
        // before it writes them, so what the packs listed above hold of
        // theirs is named there by now.
        keep.extend(self.pending_blobs()?);
        let name =
            pack::rewrite(&repo, &self.state, &self.dir, &stems, Some(&keep)).map_err(failed)?;
        let _held = self.lock()?;
        // Changes committed meanwhile: their objects are in the new pack
        // or in their own; one that only an old pack holds (a file back to
        // a pruned text) stops the prune, which the next look retries.
        let now = self.store.head().map_err(failed)?;
        if now != head {
            let mut late = HashSet::new();
            reach(&repo, now, head.unwrap_or(boundary), &mut late).map_err(failed)?;
            let newer: Vec<String> = pack::all_packs(&self.state, &self.dir)
                .map_err(failed)?
                .into_iter()
                .filter(|p| !stems.contains(p))
                .collect();
            let held = pack::holding(&self.state, &self.dir, &newer).map_err(failed)?;
            if late
                .iter()
                .any(|id| !keep.contains(id) && !held.contains(id))
            {
                pack::remove(&self.state, &self.dir, &[name], "").map_err(failed)?;
                return Ok(0);
            }
        }
        self.state
            .write(
                &format!("{}/shallow", self.dir),
                format!("{boundary}\n").as_bytes(),
            )
            .map_err(|e| self.fault("cannot be pruned", e))?;
        self.drop_listed(&listed[cut - 1].0)?;
        pack::remove(&self.state, &self.dir, &stems, &name).map_err(failed)?;
        self.reopen();
        tracing::info!(
            "{} history: {cut} changes past its retention pruned",
            self.name
        );
        Ok(cut)
    }
}

/// Every object the commits from `head` back to `boundary` (included,
/// along first parents) reach: themselves, their trees and blobs.
fn reach(
    repo: &gix::Repository,
    head: Option<ObjectId>,
    boundary: ObjectId,
    out: &mut HashSet<ObjectId>,
) -> std::result::Result<(), Box<dyn std::error::Error + Send + Sync>> {
    let mut at = head;
    while let Some(id) = at {
        let commit = repo.find_commit(id)?;
        out.insert(id);
        tree(repo, commit.tree_id()?.detach(), out)?;
        if id == boundary {
            return Ok(());
        }
        at = commit.parent_ids().next().map(|p| p.detach());
    }
    Err(format!("the change {boundary} is not in the history's line").into())
}

fn tree(
    repo: &gix::Repository,
    id: ObjectId,
    out: &mut HashSet<ObjectId>,
) -> std::result::Result<(), Box<dyn std::error::Error + Send + Sync>> {
    if !out.insert(id) {
        return Ok(());
    }
    let t = repo.find_tree(id)?;
    for e in t.decode()?.entries.iter() {
        if e.mode.is_tree() {
            tree(repo, e.oid.to_owned(), out)?;
        } else {
            out.insert(e.oid.to_owned());
        }
    }
    Ok(())
}

#[cfg(test)]
mod tests {
    use super::*;

    fn times(days_ago: &[i64], now: chrono::DateTime<chrono::Utc>) -> Vec<String> {
        days_ago
            .iter()
            .map(|d| (now - chrono::Duration::days(*d)).to_rfc3339())
            .collect()
    }

    #[test]
    fn changes_past_the_age_go_once_they_are_worth_a_rewrite() {
        let now = chrono::Utc::now();
        let keep = Retention {
            days: 30,
            max_bytes: 0,
            floor: Floor {
                changes: 0,
                days: 0,
            },
        };
        let mut ages: Vec<i64> = (0..40).rev().collect();
        // 9 of 40 changes are past 30 days: more than a tenth, pruned.
        assert_eq!(keep.cut(&times(&ages, now), (0, 0), now), 9);
        ages = vec![31, 5, 4, 3, 2, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1];
        // One old change of 20: a tenth is 2, so it waits.
        assert_eq!(keep.cut(&times(&ages, now), (0, 0), now), 0);
        let forever = Retention::default();
        assert_eq!(forever.cut(&times(&[400, 300], now), (1 << 40, 0), now), 0);
    }

    #[test]
    fn a_history_over_its_size_loses_its_oldest_changes_in_proportion() {
        let now = chrono::Utc::now();
        let keep = Retention {
            days: 0,
            max_bytes: 100,
            ..Retention::default()
        };
        let ages: Vec<i64> = vec![10; 500];
        assert_eq!(keep.cut(&times(&ages, now), (100, 0), now), 0);
        // Twice the size: keep 0.8 × half of them.
        assert_eq!(keep.cut(&times(&ages, now), (200, 0), now), 300);
        // A quarter of it no prune frees: keep 0.8 × 50 / 150 of them.
        assert_eq!(keep.cut(&times(&ages, now), (200, 50), now), 367);
    }

    /// Issue 67: files alone over the size (a big attachments folder moved)
    /// pruned at every look, each time in proportion, emptied the history.
    #[test]
    fn retention_never_cuts_into_its_floor() {
        let now = chrono::Utc::now();
        let keep = Retention {
            days: 30,
            max_bytes: 100,
            ..Retention::default()
        };
        let floor = Floor::default();
        // 150 changes, a month old, files of 300 over a size of 100.
        let mut ages: Vec<i64> = vec![40; 150];
        let mut n = ages.len();
        for _ in 0..10 {
            let cut = keep.cut(&times(&ages, now), (400, 300), now);
            n -= cut;
            ages.truncate(n);
        }
        assert_eq!(n, floor.changes, "the newest changes stay");
        assert!(keep.held_by_floor(&times(&ages, now), (400, 300), now));
        // The last days' changes stay whatever their number.
        let ages: Vec<i64> = vec![1; 500];
        assert_eq!(keep.cut(&times(&ages, now), (400, 300), now), 0);
        assert!(keep.held_by_floor(&times(&ages, now), (400, 300), now));
        // A history within its size is not held.
        assert!(!keep.held_by_floor(&times(&ages, now), (90, 0), now));
    }
}
