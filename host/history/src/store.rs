//! The git repository: blobs in, commits of kura's view of the files out.

use std::collections::{BTreeMap, HashSet};
use std::path::Path;

use gix::ObjectId;
use gix::refs::transaction::{Change, LogChange, PreviousValue, RefEdit, RefLog};

type Failure = Box<dyn std::error::Error + Send + Sync>;

pub(crate) struct Store {
    /// Opened anew after packs are merged, whenever a quarter of its slots
    /// is left, and before an object is called missing (see `Self::read`):
    /// gix's object store gives each pack index it loads one of a fixed
    /// number of slots (packs written faster than merged ran out at ~2,700
    /// changes with 1,024 slots).
    repo: std::sync::RwLock<gix::ThreadSafeRepository>,
    /// Handles taken, counted for [`LOOK_EVERY`].
    handles: std::sync::atomic::AtomicUsize,
    dir: std::path::PathBuf,
    /// The branch HEAD names, which each commit moves.
    branch: gix::refs::FullName,
}

/// A file's state in a change: its blob, or no file.
pub(crate) type State = Option<ObjectId>;

/// The bytes of the blobs a call's change refers to, by id.
pub(crate) type Blobs = std::collections::HashMap<ObjectId, Vec<u8>>;

/// Who a commit is by.
pub(crate) struct Author<'a> {
    pub name: &'a str,
    pub email: &'a str,
}

/// Handles taken between two looks at the object store's free slots: a
/// look reads each slot (about 1,024 atomic loads), a handle's reads can
/// load every new pack on disk, and a quarter of the slots is far more
/// than a few handles' reads take.
const LOOK_EVERY: usize = 16;

/// Neither the user's nor the system's git configuration is read (the
/// history must not depend on them, and the sandbox hides them).
fn options() -> gix::open::Options {
    // The object store keeps one slot per pack index; the default (as
    // many as the disk holds at open, at least 32) would refuse the packs
    // a long-running server adds.
    gix::open::Options::isolated()
        .open_path_as_is(true)
        .object_store_slots(gix::odb::store::init::Slots::Given(crate::pack::PACK_SLOTS))
}

impl Store {
    /// Open the bare repository at `dir` (`exists`), or create it there.
    pub fn open(dir: &Path, exists: bool) -> Result<Store, Failure> {
        let repo = if exists {
            gix::ThreadSafeRepository::open_opts(dir, options())?
        } else {
            gix::ThreadSafeRepository::init_opts(
                dir,
                gix::create::Kind::Bare,
                gix::create::Options::default(),
                options(),
            )?
        };
        let branch = repo
            .to_thread_local()
            .head_name()?
            .unwrap_or_else(|| "refs/heads/main".try_into().expect("a valid name"));
        Ok(Store {
            repo: std::sync::RwLock::new(repo),
            handles: std::sync::atomic::AtomicUsize::new(0),
            dir: dir.to_path_buf(),
            branch,
        })
    }

    /// Open the repository anew (a fresh object store with every slot
    /// free); handles taken before keep the old one while they live.
    pub fn reopen(&self) -> Result<(), Failure> {
        let fresh = gix::ThreadSafeRepository::open_opts(&self.dir, options())?;
        *self.repo.write().unwrap_or_else(|e| e.into_inner()) = fresh;
        Ok(())
    }

    /// A handle on the repository, which is opened anew first when the
    /// object store is short of slots: the packs this kura's commits and
    /// merges write, and another kura's, each take one for good.
    fn handle(&self) -> gix::Repository {
        let n = self
            .handles
            .fetch_add(1, std::sync::atomic::Ordering::Relaxed);
        if n.is_multiple_of(LOOK_EVERY)
            && self.short_of_slots()
            && let Err(e) = self.reopen()
        {
            tracing::warn!("the history's repository not opened anew ({e})");
        }
        self.repo
            .read()
            .unwrap_or_else(|e| e.into_inner())
            .to_thread_local()
    }

    /// Whether a quarter of the object store's slots or less is unused.
    fn short_of_slots(&self) -> bool {
        let repo = self.repo.read().unwrap_or_else(|e| e.into_inner());
        repo.objects.metrics().unused_slots <= usize::from(crate::pack::PACK_SLOTS) / 4
    }

    /// Pack the loose objects when there are at least `at` (the
    /// repository at `dir` in `state`); how many were packed.
    pub fn pack_loose(
        &self,
        state: &crate::fs::StateDir,
        dir: &str,
        at: usize,
    ) -> Result<usize, Failure> {
        crate::pack::pack_loose(&self.handle(), state, dir, at)
    }

    /// Merge the smaller packs when there are many (see `pack::merge`);
    /// how many were merged.
    pub fn merge_packs(&self, state: &crate::fs::StateDir, dir: &str) -> Result<usize, Failure> {
        crate::pack::merge(&self.handle(), state, dir)
    }

    /// A handle on the repository for this thread.
    pub fn repo(&self) -> gix::Repository {
        self.handle()
    }

    /// Whether the store holds `id`: a miss looks for packs written since
    /// the last look (by this kura or another), then asks the store opened
    /// anew (see [`Self::again`]).
    pub fn has(&self, id: ObjectId) -> bool {
        self.held([id]).is_ok_and(|held| held.contains(&id))
    }

    /// Which of `ids` the store holds, as [`Self::has`] tells, opening the
    /// store anew at most once for all the misses; `Err` when it cannot be
    /// opened anew (a miss then proves nothing).
    pub fn held(
        &self,
        ids: impl IntoIterator<Item = ObjectId>,
    ) -> Result<HashSet<ObjectId>, Failure> {
        let repo = self.handle();
        let (mut held, missed): (HashSet<ObjectId>, HashSet<ObjectId>) =
            ids.into_iter().partition(|id| repo.has_object(id));
        if !missed.is_empty() {
            held.extend(self.again(|repo| {
                Ok(missed
                    .iter()
                    .filter(|id| repo.has_object(*id))
                    .copied()
                    .collect::<Vec<_>>())
            })?);
        }
        Ok(held)
    }

    /// `read` on a handle, and once more on the store opened anew if it
    /// failed. gix's object store can stay blind to a pack for good: one
    /// whose index took the slot of a pack a merge removed is never loaded
    /// (a second kura that only read missed every change's blobs from its
    /// 200th on). Git's own reader likewise reads its packs again before
    /// it says an object is missing.
    fn read<T>(&self, read: impl Fn(&gix::Repository) -> Result<T, Failure>) -> Result<T, Failure> {
        read(&self.handle()).or_else(|_| self.again(read))
    }

    fn again<T>(
        &self,
        read: impl Fn(&gix::Repository) -> Result<T, Failure>,
    ) -> Result<T, Failure> {
        self.reopen()?;
        read(&self.handle())
    }

    /// Whether the store holds `id` among the packs it knows of (a miss
    /// does not look for new ones).
    pub fn knows(&self, id: ObjectId) -> bool {
        let mut repo = self.handle();
        repo.objects.refresh_never();
        repo.has_object(id)
    }

    /// Write `blobs` (those the store lacks) as one pack now: a call that
    /// holds more than it should in memory.
    pub fn write_blobs(
        &self,
        state: &crate::fs::StateDir,
        dir: &str,
        blobs: &Blobs,
    ) -> Result<(), Failure> {
        let objects: Vec<_> = blobs
            .iter()
            .filter(|(id, _)| !self.knows(**id))
            .map(|(_, b)| (gix::objs::Kind::Blob, b.clone()))
            .collect();
        crate::pack::write(state, dir, &objects)
    }

    pub fn blob(&self, id: ObjectId) -> Result<Vec<u8>, Failure> {
        self.read(|repo| Ok(repo.find_blob(id)?.take_data()))
    }

    /// The id a file's bytes have as a blob (nothing written).
    pub fn id_of(bytes: &[u8]) -> ObjectId {
        gix::objs::compute_hash(gix::hash::Kind::Sha1, gix::objs::Kind::Blob, bytes)
            .expect("SHA-1 hashing of bytes in memory")
    }

    /// The last commit, if any.
    pub fn head(&self) -> Result<Option<ObjectId>, Failure> {
        let repo = self.handle();
        Ok(repo.head()?.id().map(|id| id.detach()))
    }

    /// Commit `change` (path → state after) on top of the last commit,
    /// first committing `found` (path → state kura found) when it differs
    /// from the last commit's tree; the head moves to the change's commit,
    /// which is returned. The new objects (`blobs` the store lacks, the
    /// trees, the commits) are written as one pack in `dir` of `state`
    /// before the head moves. Run under the history's lock.
    pub fn commit(
        &self,
        target: (&crate::fs::StateDir, &str),
        found_message: &str,
        change: &BTreeMap<String, (State, State)>,
        blobs: &Blobs,
        message: &str,
        author: Author<'_>,
    ) -> Result<ObjectId, Failure> {
        // First without looking for packs on a miss (a new object always
        // misses, and each look lists the pack folder); an object it cannot
        // find (another kura's new pack) makes it look, once.
        let commit = self
            .commit_with(
                false,
                target,
                found_message,
                change,
                blobs,
                message,
                &author,
            )
            .or_else(|_| {
                self.commit_with(true, target, found_message, change, blobs, message, &author)
            })
            .or_else(|_| {
                self.reopen()?;
                self.clear_stale_lock(target)?;
                self.commit_with(true, target, found_message, change, blobs, message, &author)
            })?;
        // The store learns of the pack just written (a miss that looks),
        // so the next commit finds what this one left without looking.
        self.has(commit);
        Ok(commit)
    }

    /// Remove the branch's lock file a kura killed while it moved the
    /// branch left: commits are made under the history's own lock, so one
    /// found then is no live writer's, and left there it would refuse
    /// every commit after (and with them every change to the root).
    fn clear_stale_lock(&self, (state, dir): (&crate::fs::StateDir, &str)) -> Result<(), Failure> {
        let lock = format!("{dir}/{}.lock", self.branch.as_bstr());
        if state.read(&lock)?.is_some() {
            tracing::info!("a stale lock of the history's branch removed ({lock})");
            state.remove(&lock)?;
        }
        Ok(())
    }

    #[allow(clippy::too_many_arguments)]
    fn commit_with(
        &self,
        refresh: bool,
        target: (&crate::fs::StateDir, &str),
        found_message: &str,
        change: &BTreeMap<String, (State, State)>,
        blobs: &Blobs,
        message: &str,
        author: &Author<'_>,
    ) -> Result<ObjectId, Failure> {
        // Objects written go to memory (asking the store first whether it
        // has them), then to disk as one pack: one file instead of one per
        // object.
        let mut repo = self.handle().with_object_memory();
        if !refresh {
            repo.objects.refresh_never();
        }
        for bytes in blobs.values() {
            repo.write_blob(bytes)?;
        }
        let head = repo.head()?.id().map(|id| id.detach());
        let tree = match head {
            Some(id) => repo.find_commit(id)?.tree_id()?.detach(),
            None => ObjectId::empty_tree(repo.object_hash()),
        };
        // A file renamed with bytes the store never had (they went with
        // the name) is not in the tree: the tree names only blobs it holds.
        // Which those are is known only once the store has looked for new
        // packs (a call over HELD_MAX wrote its blobs in one ahead of its
        // commit): a miss without looking is tried again, looking.
        let named = change.values().flat_map(|(b, a)| [b, a]).flatten();
        if !refresh && named.clone().any(|id| !repo.has_object(id)) {
            return Err("a blob of the change is in no pack known yet".into());
        }
        // Asked of the store opened anew too (see `Self::read`): a blob
        // left out of the tree would read as never kept.
        let missed: HashSet<ObjectId> = named.filter(|id| !repo.has_object(id)).copied().collect();
        let missed: HashSet<ObjectId> = match missed.is_empty() {
            true => missed,
            false => {
                let held = self.held(missed.iter().copied())?;
                missed.into_iter().filter(|id| !held.contains(id)).collect()
            }
        };
        let held = |s: &State| s.filter(|id| !missed.contains(id));
        let mut found = Vec::new();
        {
            let kept = repo.find_tree(tree)?;
            for (path, (before, _)) in change {
                let shadow = kept
                    .lookup_entry_by_path(path.as_str())?
                    .filter(|e| e.mode().is_blob())
                    .map(|e| e.object_id());
                if shadow != held(before) {
                    found.push((path.as_str(), held(before)));
                }
            }
        }
        let mut parent = head;
        let mut tree = tree;
        if !found.is_empty() {
            tree = edit(&repo, tree, found)?;
            parent = Some(write_commit(&repo, tree, parent, found_message, author)?);
        }
        let tree = edit(
            &repo,
            tree,
            change.iter().map(|(p, (_, a))| (p.as_str(), held(a))),
        )?;
        let commit = write_commit(&repo, tree, parent, message, author)?;
        let objects: Vec<_> = repo
            .objects
            .take_object_memory()
            .map(|mut m| m.drain().map(|(_, o)| o).collect())
            .unwrap_or_default();
        crate::pack::write(target.0, target.1, &objects)?;
        repo.edit_reference(RefEdit {
            change: Change::Update {
                log: LogChange {
                    mode: RefLog::AndReference,
                    force_create_reflog: false,
                    message: "kura".into(),
                },
                expected: match head {
                    Some(id) => PreviousValue::MustExistAndMatch(gix::refs::Target::Object(id)),
                    None => PreviousValue::Any,
                },
                new: gix::refs::Target::Object(commit),
            },
            // The branch itself, not through HEAD: one lock file, not two.
            name: self.branch.clone(),
            deref: false,
        })?;
        Ok(commit)
    }

    /// Whether a commit from the head back to the first one made before
    /// `since` (seconds since the epoch), along first parents, has the
    /// line `line` in its message: None when the walk met the pruned
    /// boundary first (a commit older than it cannot be told).
    pub fn carries(&self, line: &str, since: i64) -> Result<Option<bool>, Failure> {
        self.read(|repo| carries(repo, line, since))
    }

    /// The messages of the commits from the head back to `until`
    /// (excluded), oldest first, along first parents.
    pub fn messages_since(
        &self,
        until: Option<ObjectId>,
    ) -> Result<Vec<(ObjectId, String)>, Failure> {
        self.read(|repo| messages_since(repo, until))
    }
}

/// See [`Store::carries`].
fn carries(repo: &gix::Repository, line: &str, since: i64) -> Result<Option<bool>, Failure> {
    let boundary = boundary(repo)?;
    let mut at = repo.head()?.id().map(|id| id.detach());
    while let Some(id) = at {
        let commit = repo.find_commit(id)?;
        let message: &[u8] = commit.message_raw()?.as_ref();
        if message.split(|b| *b == b'\n').any(|l| l == line.as_bytes()) {
            return Ok(Some(true));
        }
        if boundary.contains(&id) {
            return Ok(None);
        }
        if commit.time()?.seconds < since {
            break;
        }
        at = commit.parent_ids().next().map(|p| p.detach());
    }
    Ok(Some(false))
}

/// See [`Store::messages_since`].
fn messages_since(
    repo: &gix::Repository,
    until: Option<ObjectId>,
) -> Result<Vec<(ObjectId, String)>, Failure> {
    // Pruned changes end at the boundary git's `shallow` file names.
    let boundary = boundary(repo)?;
    let mut out = Vec::new();
    let mut at = repo.head()?.id().map(|id| id.detach());
    while let Some(id) = at {
        if Some(id) == until || boundary.contains(&id) {
            break;
        }
        let commit = repo.find_commit(id)?;
        out.push((id, commit.message_raw()?.to_string()));
        at = commit.parent_ids().next().map(|p| p.detach());
    }
    out.reverse();
    Ok(out)
}

/// The commits git's `shallow` file names: the newest pruned change.
fn boundary(repo: &gix::Repository) -> Result<Vec<ObjectId>, Failure> {
    Ok(repo
        .shallow_commits()?
        .map(|s| s.iter().copied().collect())
        .unwrap_or_default())
}

/// `tree` with each path set to its state (a blob, or removed).
fn edit<'a>(
    repo: &gix::Repository,
    tree: ObjectId,
    states: impl IntoIterator<Item = (&'a str, State)>,
) -> Result<ObjectId, Failure> {
    let mut editor = repo.edit_tree(tree)?;
    for (path, state) in states {
        match state {
            Some(id) => {
                editor.upsert(path, gix::object::tree::EntryKind::Blob, id)?;
            }
            None => {
                editor.remove(path)?;
            }
        }
    }
    Ok(editor.write()?.detach())
}

fn write_commit(
    repo: &gix::Repository,
    tree: ObjectId,
    parent: Option<ObjectId>,
    message: &str,
    author: &Author<'_>,
) -> Result<ObjectId, Failure> {
    let time = gix::date::Time::now_utc();
    let sign = |name: &str, email: &str| gix::actor::Signature {
        name: name.into(),
        email: email.into(),
        time,
    };
    let commit = gix::objs::Commit {
        tree,
        parents: parent.into_iter().collect(),
        author: sign(author.name, author.email),
        committer: sign("kura", "kura@localhost"),
        encoding: None,
        message: message.into(),
        extra_headers: Vec::new(),
    };
    Ok(repo.write_object(&commit)?.detach())
}
