//! The git repository: blobs in, commits of kura's view of the files out.

use std::collections::BTreeMap;
use std::path::Path;

use gix::ObjectId;
use gix::refs::transaction::{Change, LogChange, PreviousValue, RefEdit, RefLog};

type Failure = Box<dyn std::error::Error + Send + Sync>;

/// Pack indexes the object store can hold at once (the history merges its
/// packs long before: see `pack.rs`).
pub(crate) const PACK_SLOTS: u16 = 1024;

pub(crate) struct Store {
    repo: gix::ThreadSafeRepository,
}

/// A file's state in a change: its blob, or no file.
pub(crate) type State = Option<ObjectId>;

/// Who a commit is by.
pub(crate) struct Author<'a> {
    pub name: &'a str,
    pub email: &'a str,
}

impl Store {
    /// Open the bare repository at `dir` (`exists`), or create it there.
    /// Neither the user's nor the system's git configuration is read (the
    /// history must not depend on them, and the sandbox hides them).
    pub fn open(dir: &Path, exists: bool) -> Result<Store, Failure> {
        // The object store keeps one slot per pack index; the default
        // (as many as the disk holds at open, at least 32) would refuse
        // the packs a long-running server adds.
        let options = gix::open::Options::isolated()
            .open_path_as_is(true)
            .object_store_slots(gix::odb::store::init::Slots::Given(PACK_SLOTS));
        let repo = if exists {
            gix::ThreadSafeRepository::open_opts(dir, options)?
        } else {
            gix::ThreadSafeRepository::init_opts(
                dir,
                gix::create::Kind::Bare,
                gix::create::Options::default(),
                options,
            )?
        };
        Ok(Store { repo })
    }

    /// Pack the loose objects when there are at least `at` (the
    /// repository at `dir` in `state`); how many were packed.
    pub fn pack_loose(
        &self,
        state: &crate::fs::StateDir,
        dir: &str,
        at: usize,
    ) -> Result<usize, Failure> {
        crate::pack::pack_loose(&self.repo.to_thread_local(), state, dir, at)
    }

    /// A handle whose misses do not re-scan the object folder: writing an
    /// object first asks whether it exists, and a new one always misses, so
    /// the default handle would list `objects/pack` on every write. An
    /// object written again that a pack holds costs a loose copy, no more.
    fn writer(&self) -> gix::Repository {
        let mut repo = self.repo.to_thread_local();
        repo.objects.refresh_never();
        repo
    }

    pub fn write_blob(&self, bytes: &[u8]) -> Result<ObjectId, Failure> {
        Ok(self.writer().write_blob(bytes)?.detach())
    }

    pub fn blob(&self, id: ObjectId) -> Result<Vec<u8>, Failure> {
        let repo = self.repo.to_thread_local();
        Ok(repo.find_blob(id)?.take_data())
    }

    /// The id a file's bytes have as a blob (nothing written).
    pub fn id_of(bytes: &[u8]) -> ObjectId {
        gix::objs::compute_hash(gix::hash::Kind::Sha1, gix::objs::Kind::Blob, bytes)
            .expect("SHA-1 hashing of bytes in memory")
    }

    /// What the last commit's tree holds at `path` (hex id; None: nothing).
    pub fn tracked(&self, path: &str) -> Result<Option<String>, Failure> {
        let repo = self.repo.to_thread_local();
        let Some(head) = repo.head()?.id() else {
            return Ok(None);
        };
        let tree = repo.find_commit(head)?.tree()?;
        Ok(tree
            .lookup_entry_by_path(path)?
            .filter(|e| e.mode().is_blob())
            .map(|e| e.object_id().to_string()))
    }

    /// The last commit, if any.
    pub fn head(&self) -> Result<Option<ObjectId>, Failure> {
        let repo = self.repo.to_thread_local();
        Ok(repo.head()?.id().map(|id| id.detach()))
    }

    /// Commit `change` (path → state after) on top of the last commit,
    /// first committing `found` (path → state kura found) when it differs
    /// from the last commit's tree; the head moves to the change's commit,
    /// which is returned. Run under the history's lock.
    pub fn commit(
        &self,
        found_message: &str,
        change: &BTreeMap<String, (State, State)>,
        message: &str,
        author: Author<'_>,
    ) -> Result<ObjectId, Failure> {
        // With the writer first; a miss it cannot see through (another
        // kura packed the objects it reads) is tried again with a handle
        // that re-scans.
        self.commit_with(&self.writer(), found_message, change, message, &author)
            .or_else(|_| {
                let repo = self.repo.to_thread_local();
                self.commit_with(&repo, found_message, change, message, &author)
            })
    }

    fn commit_with(
        &self,
        repo: &gix::Repository,
        found_message: &str,
        change: &BTreeMap<String, (State, State)>,
        message: &str,
        author: &Author<'_>,
    ) -> Result<ObjectId, Failure> {
        let head = repo.head()?.id().map(|id| id.detach());
        let tree = match head {
            Some(id) => repo.find_commit(id)?.tree_id()?.detach(),
            None => ObjectId::empty_tree(repo.object_hash()),
        };
        let kept = repo.find_tree(tree)?;
        let mut found = Vec::new();
        for (path, (before, _)) in change {
            let shadow = kept
                .lookup_entry_by_path(path.as_str())?
                .filter(|e| e.mode().is_blob())
                .map(|e| e.object_id());
            if shadow != *before {
                found.push((path.as_str(), *before));
            }
        }
        let mut parent = head;
        let mut tree = tree;
        if !found.is_empty() {
            tree = edit(repo, tree, found)?;
            parent = Some(write_commit(repo, tree, parent, found_message, author)?);
        }
        let tree = edit(
            repo,
            tree,
            change.iter().map(|(p, (_, a))| (p.as_str(), *a)),
        )?;
        let commit = write_commit(repo, tree, parent, message, author)?;
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
            name: "HEAD".try_into()?,
            deref: true,
        })?;
        Ok(commit)
    }

    /// The messages of the commits from the head back to `until`
    /// (excluded), oldest first, along first parents.
    pub fn messages_since(
        &self,
        until: Option<ObjectId>,
    ) -> Result<Vec<(ObjectId, String)>, Failure> {
        let repo = self.repo.to_thread_local();
        let mut out = Vec::new();
        let mut at = repo.head()?.id().map(|id| id.detach());
        while let Some(id) = at {
            if Some(id) == until {
                break;
            }
            let commit = repo.find_commit(id)?;
            out.push((id, commit.message_raw()?.to_string()));
            at = commit.parent_ids().next().map(|p| p.detach());
        }
        out.reverse();
        Ok(out)
    }
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
