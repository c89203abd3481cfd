//! The write path: race-free folder walks, atomic replacement that keeps the
//! file's mode and owner, short recognisable temporary names, and the sweep
//! that removes the temporary files a killed process left behind.

use std::io::{self, Read, Write};
use std::os::unix::fs::{MetadataExt, PermissionsExt};
use std::sync::atomic::{AtomicU64, Ordering};
use std::sync::{Arc, Mutex};

use cap_fs_ext::{DirExt, FollowSymlinks, OpenOptionsFollowExt, OpenOptionsMaybeDirExt};
use cap_std::fs::{Dir, OpenOptions};

use super::{RelPath, Root, io_error, is_loop};
use crate::error::{Code, Error, Result};

/// Every temporary file kura writes starts with this: short (so any name
/// the file system accepts can be written), hidden, and recognisable.
pub const TEMP_PREFIX: &str = ".kura-tmp-";

static TMP_COUNTER: AtomicU64 = AtomicU64::new(0);

/// Kura's own temporary names: the current `.kura-tmp-PID-N` (hex), and
/// the `.<name>.kura-tmp-PID-N` of earlier versions.
pub fn is_temp_name(name: &str) -> bool {
    name.starts_with(TEMP_PREFIX) || (name.starts_with('.') && name.contains(".kura-tmp-"))
}

/// The owner and mode a replaced file had, given to its replacement.
#[derive(Clone, Copy, Debug)]
pub struct Keep {
    mode: u32,
    uid: u32,
    gid: u32,
}

impl Keep {
    fn of(meta: &std::fs::Metadata) -> Keep {
        Keep {
            mode: meta.mode() & 0o7777,
            uid: meta.uid(),
            gid: meta.gid(),
        }
    }
}

/// Per-file write locks kept before the unused ones are dropped.
const FILE_LOCKS_KEPT: usize = 1024;

/// What a write finds where it is going to write.
struct Current {
    bytes: Vec<u8>,
    keep: Keep,
    seen: Seen,
}

/// A file's identity as a write read it: if any of this differs just
/// before the rename, another program changed the file meanwhile.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(super) struct Seen {
    dev: u64,
    ino: u64,
    size: u64,
    mtime: (i64, i64),
    ctime: (i64, i64),
}

impl Seen {
    fn of(meta: &std::fs::Metadata) -> Seen {
        Seen {
            dev: meta.dev(),
            ino: meta.ino(),
            size: meta.size(),
            mtime: (meta.mtime(), meta.mtime_nsec()),
            ctime: (meta.ctime(), meta.ctime_nsec()),
        }
    }

    /// The file now called `name` in `dir` (never through a link).
    fn now(dir: &Dir, name: &str) -> io::Result<Seen> {
        let st = rustix::fs::statat(dir, name, rustix::fs::AtFlags::SYMLINK_NOFOLLOW)?;
        Ok(Seen {
            dev: st.st_dev,
            ino: st.st_ino,
            size: st.st_size as u64,
            mtime: (st.st_mtime, st.st_mtime_nsec as i64),
            ctime: (st.st_ctime, st.st_ctime_nsec as i64),
        })
    }
}

/// What the name a write takes must hold at the moment it takes it.
#[derive(Clone, Copy, Debug)]
pub(super) enum Expect {
    /// Nothing: a file that appeared meanwhile is never replaced.
    Absent,
    /// The very file the write read (and the replacement keeps its mode).
    Same(Seen, Keep),
    /// Nothing, as for `Absent`; the new file gets this mode and owner,
    /// and where it cannot get the owner, no access for others at all.
    Like(Keep),
    /// Whatever is there (kura's own files in the state folder).
    Any,
}

/// The refusal of a write whose target changed under it.
#[derive(Debug)]
pub(super) struct Changed;

impl std::fmt::Display for Changed {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str("changed by another program while kura wrote it")
    }
}

impl std::error::Error for Changed {}

fn is_changed(e: &io::Error) -> bool {
    e.get_ref().is_some_and(|i| i.is::<Changed>())
}

/// An I/O failure of a write at `p`, where "the name is taken" and "the
/// file changed meanwhile" are the other program's doing: a `conflict`,
/// with nothing written.
fn write_error(e: io::Error, p: &RelPath) -> Error {
    if e.kind() == io::ErrorKind::AlreadyExists {
        Error::new(
            Code::Conflict,
            format!("`{p}` was created by another program meanwhile; kura left it as it is and wrote nothing"),
        )
        .with("path", p.to_string())
    } else if is_changed(&e) {
        Error::new(
            Code::Conflict,
            format!("`{p}` was changed by another program while kura wrote it; kura left that change and wrote nothing (read it again)"),
        )
        .with("path", p.to_string())
    } else {
        io_error(e, p)
    }
}

impl Root {
    fn file_lock(&self, p: &RelPath) -> Arc<Mutex<()>> {
        let mut map = self.locks.lock().unwrap_or_else(|e| e.into_inner());
        // One entry per path written would grow for as long as the server
        // runs; an entry only the map holds guards no write in progress
        // (clones are taken under this same mutex), so it can go.
        if map.len() >= FILE_LOCKS_KEPT {
            map.retain(|_, lock| Arc::strong_count(lock) > 1);
        }
        map.entry(p.clone()).or_default().clone()
    }

    /// Open folder `p` from the root one segment at a time, never following
    /// a link (`openat` with `O_NOFOLLOW` per segment): a folder swapped for
    /// a link between any check and the write fails the write instead of
    /// redirecting it, so the path the policy judged is the path written.
    /// With `create`, missing folders are made; without, a missing one is None.
    pub(super) fn open_dir_nofollow(&self, p: &RelPath, create: bool) -> Result<Option<Dir>> {
        self.open_dir(p, create.then_some(&mut Vec::new()))
    }

    /// [`Root::open_dir_nofollow`], creating missing folders when `made`
    /// is given and adding each one made to it (top first), so that a
    /// write that then fails can take them away again.
    fn open_dir(&self, p: &RelPath, mut made: Option<&mut Vec<RelPath>>) -> Result<Option<Dir>> {
        let mut dir = self.dir.try_clone().map_err(|e| io_error(e, p))?;
        for (i, seg) in p.segments().iter().enumerate() {
            let next = match dir.open_dir_nofollow(seg) {
                Ok(d) => d,
                Err(e) if e.kind() == io::ErrorKind::NotFound && made.is_some() => {
                    let here = RelPath::parse(&p.segments()[..=i].join("/"), false)?;
                    self.check_folder(&here)?;
                    crate::fault::step().map_err(|e| io_error(e, p))?;
                    match dir.create_dir(seg) {
                        // The new folder's name is durable before anything
                        // is written into it: a power cut cannot keep a
                        // file whose folder vanished.
                        Ok(()) => {
                            if let Some(made) = made.as_deref_mut() {
                                made.push(here.clone());
                            }
                            sync_dir(&dir).map_err(|e| io_error(e, p))?;
                            self.note_folder(&here, true);
                        }
                        Err(e) if e.kind() == io::ErrorKind::AlreadyExists => {}
                        Err(e) => return Err(io_error(e, p)),
                    }
                    dir.open_dir_nofollow(seg)
                        .map_err(|e| not_a_plain_folder(&dir, seg, e, p, i))?
                }
                Err(e) if e.kind() == io::ErrorKind::NotFound => return Ok(None),
                Err(e) => return Err(not_a_plain_folder(&dir, seg, e, p, i)),
            };
            dir = next;
        }
        Ok(Some(dir))
    }

    /// Take away the folders a failed write made (deepest first), each
    /// only while it is empty: a write that fails leaves no folder behind,
    /// and one another write has put a file into meanwhile stays.
    fn unmake(&self, made: &[RelPath]) {
        for p in made.iter().rev() {
            if let Err(e) = self.remove_dir_if_empty(p) {
                tracing::warn!(folder = %p, "a folder a failed write made stays: {}", e.message);
            }
        }
    }

    /// Make the folders up to `folder` that are missing, run `write` in
    /// it, and take those folders away again unless `write` wrote a file
    /// (`wrote` says from its result).
    fn in_made_folder<T>(
        &self,
        folder: &RelPath,
        write: impl FnOnce(Dir) -> Result<T>,
        wrote: impl FnOnce(&T) -> bool,
    ) -> Result<T> {
        let mut made = Vec::new();
        let result = self
            .open_dir(folder, Some(&mut made))
            .map(|d| d.expect("created folders exist"))
            .and_then(write);
        if !result.as_ref().is_ok_and(wrote) {
            self.unmake(&made);
        }
        result
    }

    /// Read-modify-write of one file, atomically. `change` gets the current
    /// bytes (None when the file does not exist) and returns the new content,
    /// or None to leave the file untouched. It may be called more than once
    /// (when the parent folder has to be created first) and runs while the
    /// file's locks are held, so its view of the file is the one replaced.
    /// The replacement keeps the old file's mode (and owner, where the
    /// process may set it); a file without its owner's write permission is
    /// refused, never made writable.
    pub fn update<T>(
        &self,
        p: &RelPath,
        mut change: impl FnMut(Option<&[u8]>) -> Result<Option<(Vec<u8>, T)>>,
    ) -> Result<Option<T>> {
        if p.is_root() {
            return Err(Error::new(
                Code::InvalidPath,
                "the root is a folder, not a file",
            ));
        }
        self.check_links(p, false)?;
        let lock = self.file_lock(p);
        let _guard = lock.lock().unwrap_or_else(|e| e.into_inner());
        let parent = p.parent();
        match self.open_dir_nofollow(&parent, false)? {
            Some(pdir) => self.update_in(&pdir, p, change),
            None => {
                // Ask first, create folders only for a write that will happen.
                if change(None)?.is_none() {
                    return Ok(None);
                }
                self.in_made_folder(
                    &parent,
                    |pdir| self.update_in(&pdir, p, change),
                    Option::is_some,
                )
            }
        }
    }

    /// [`Root::update`] of `p` in its open folder `pdir`, under `p`'s lock.
    fn update_in<T>(
        &self,
        pdir: &Dir,
        p: &RelPath,
        mut change: impl FnMut(Option<&[u8]>) -> Result<Option<(Vec<u8>, T)>>,
    ) -> Result<Option<T>> {
        let name = p.file_name().unwrap_or_default().to_owned();
        // Advisory lock across processes, on the folder: the file itself is
        // replaced by rename, so its inode cannot carry the lock.
        let lockfile = open_dir_fd(pdir).map_err(|e| io_error(e, p))?;
        lockfile.lock().map_err(|e| io_error(e, p))?;
        let current = match read_nofollow(pdir, &name, self.max_file_bytes) {
            Ok(c) => Some(c),
            Err(e) if e.kind() == io::ErrorKind::NotFound => None,
            Err(e) if is_loop(&e) => {
                return Err(Error::new(
                    Code::Forbidden,
                    format!("`{p}` is a symbolic link; kura never writes through links"),
                )
                .with("path", p.to_string()));
            }
            Err(e) if e.kind() == io::ErrorKind::IsADirectory => {
                return Err(
                    Error::new(Code::Conflict, format!("`{p}` is a folder, not a file"))
                        .with("path", p.to_string()),
                );
            }
            Err(e) if e.kind() == io::ErrorKind::FileTooLarge => {
                return Err(self.too_large(p, "rewrites"));
            }
            Err(e) => return Err(io_error(e, p)),
        };
        if let Some(c) = &current
            && c.keep.mode & 0o200 == 0
        {
            return Err(read_only(p, c.keep.mode));
        }
        let Some((bytes, out)) = change(current.as_ref().map(|c| c.bytes.as_slice()))? else {
            return Ok(None);
        };
        self.check_size(p, bytes.len())?;
        let expect = match &current {
            Some(c) => Expect::Same(c.seen, c.keep),
            None => Expect::Absent,
        };
        self.note_file(
            p,
            current.as_ref().map(|c| c.bytes.as_slice()),
            Some(&bytes),
        )?;
        let written =
            replace_atomically(pdir, &name, &bytes, expect).map_err(|e| write_error(e, p));
        self.noted(&[p], written)?;
        Ok(Some(out))
    }

    /// Refuse now what [`Root::update`] of existing file `p` would refuse
    /// for the file's sake (a link, a folder, no write permission), so
    /// that an operation of many writes can check every one before the
    /// first.
    pub fn check_writable(&self, p: &RelPath) -> Result<()> {
        self.check_links(p, false)?;
        let dir = self
            .open_dir_nofollow(&p.parent(), false)?
            .ok_or_else(|| io_error(io::ErrorKind::NotFound.into(), p))?;
        let name = p.file_name().unwrap_or_default();
        let meta = match rustix::fs::statat(&dir, name, rustix::fs::AtFlags::SYMLINK_NOFOLLOW) {
            Ok(m) => m,
            Err(e) => return Err(io_error(e.into(), p)),
        };
        if rustix::fs::FileType::from_raw_mode(meta.st_mode) != rustix::fs::FileType::RegularFile {
            return Err(
                Error::new(Code::Conflict, format!("`{p}` is not a plain file"))
                    .with("path", p.to_string()),
            );
        }
        let mode = meta.st_mode & 0o7777;
        if mode & 0o200 == 0 {
            return Err(read_only(p, mode));
        }
        Ok(())
    }

    /// Create a new file in `folder` (created if missing) under the
    /// folder's locks (in-process and advisory): `pick` sees the names the
    /// folder holds and returns the new file's name, content and a value; a
    /// name already taken is a `conflict`. Concurrent callers never see the
    /// same listing, so a name derived from it (a next number) is unique.
    pub fn create_in<T>(
        &self,
        folder: &RelPath,
        pick: impl FnOnce(&[String]) -> Result<(String, Vec<u8>, T)>,
    ) -> Result<(RelPath, T)> {
        self.create(folder, Expect::Absent, pick)
    }

    /// [`Root::create_in`] for a copy of the file `like` (a backup): the
    /// new file gets its mode and owner, so it is never readable by more
    /// people than the original.
    pub fn create_like<T>(
        &self,
        folder: &RelPath,
        like: &RelPath,
        pick: impl FnOnce(&[String]) -> Result<(String, Vec<u8>, T)>,
    ) -> Result<(RelPath, T)> {
        self.check_links(like, false)?;
        let dir = self
            .open_dir_nofollow(&like.parent(), false)?
            .ok_or_else(|| Error::new(Code::NotFound, format!("`{like}` does not exist")))?;
        let name = like.file_name().unwrap_or_default();
        let keep = keep_nofollow(&dir, name).map_err(|e| io_error(e, like))?;
        self.create(folder, Expect::Like(keep), pick)
    }

    fn create<T>(
        &self,
        folder: &RelPath,
        expect: Expect,
        pick: impl FnOnce(&[String]) -> Result<(String, Vec<u8>, T)>,
    ) -> Result<(RelPath, T)> {
        self.check_links(folder, false)?;
        let lock = self.file_lock(folder);
        let _guard = lock.lock().unwrap_or_else(|e| e.into_inner());
        self.in_made_folder(
            folder,
            |dir| self.create_in_open(&dir, folder, expect, pick),
            |_| true,
        )
    }

    /// [`Root::create`] in the open folder `dir`, under its lock.
    fn create_in_open<T>(
        &self,
        dir: &Dir,
        folder: &RelPath,
        expect: Expect,
        pick: impl FnOnce(&[String]) -> Result<(String, Vec<u8>, T)>,
    ) -> Result<(RelPath, T)> {
        let lockfile = open_dir_fd(dir).map_err(|e| io_error(e, folder))?;
        lockfile.lock().map_err(|e| io_error(e, folder))?;
        let mut names = Vec::new();
        for entry in dir.entries().map_err(|e| io_error(e, folder))? {
            let entry = entry.map_err(|e| io_error(e, folder))?;
            if let Ok(name) = entry.file_name().into_string()
                && !is_temp_name(&name)
            {
                names.push(name);
            }
        }
        names.sort();
        let (name, bytes, out) = pick(&names)?;
        let path = folder.join(&name);
        if names.contains(&name) {
            return Err(
                Error::new(Code::Conflict, format!("`{path}` already exists"))
                    .with("path", path.to_string()),
            );
        }
        self.check_size(&path, bytes.len())?;
        self.note_file(&path, None, Some(&bytes))?;
        let written =
            replace_atomically(dir, &name, &bytes, expect).map_err(|e| write_error(e, &path));
        self.noted(&[&path], written)?;
        Ok((path, out))
    }

    /// Give file `from` the new name `to` (folders made as needed), never
    /// through a link: a link or a folder at `from` is refused, a file or
    /// folder already at `to` is a `conflict` (only a change of case of the
    /// same file passes, where the file system folds case). Both folders
    /// are fsynced, so the move survives a power cut. Held under both
    /// paths' locks, taken in path order.
    pub fn rename_file(&self, from: &RelPath, to: &RelPath) -> Result<()> {
        self.check_links(from, false)?;
        self.check_links(to, false)?;
        let (first, second) = if from <= to { (from, to) } else { (to, from) };
        let (l1, l2) = (self.file_lock(first), self.file_lock(second));
        let _g1 = l1.lock().unwrap_or_else(|e| e.into_inner());
        let _g2 = (first != second).then(|| l2.lock().unwrap_or_else(|e| e.into_inner()));
        let missing = || {
            Error::new(Code::NotFound, format!("`{from}` does not exist"))
                .with("path", from.to_string())
        };
        let src = self
            .open_dir_nofollow(&from.parent(), false)?
            .ok_or_else(missing)?;
        let name = from.file_name().unwrap_or_default();
        match src.symlink_metadata(name) {
            Ok(m) if m.is_file() => {}
            Ok(m) if m.file_type().is_symlink() => {
                return Err(Error::new(
                    Code::Forbidden,
                    format!("`{from}` is a symbolic link; kura never moves links"),
                )
                .with("path", from.to_string()));
            }
            Ok(_) => {
                return Err(
                    Error::new(Code::Conflict, format!("`{from}` is not a plain file"))
                        .with("path", from.to_string()),
                );
            }
            Err(e) if e.kind() == io::ErrorKind::NotFound => return Err(missing()),
            Err(e) => return Err(io_error(e, from)),
        }
        self.in_made_folder(
            &to.parent(),
            |dst| self.rename_into(&src, &dst, from, to),
            |_| true,
        )
    }

    /// [`Root::rename_file`] from the open folder `src` into `dst`.
    fn rename_into(&self, src: &Dir, dst: &Dir, from: &RelPath, to: &RelPath) -> Result<()> {
        let name = from.file_name().unwrap_or_default();
        // Across processes, both folders' advisory locks (in path order;
        // one when it is the same folder), as a rewrite holds its folder's:
        // another kura's rewrite of this file, checked unchanged, is renamed
        // into place before the file moves, never after at its old name.
        let (from_dir, to_dir) = (from.parent(), to.parent());
        let ordered = if from_dir <= to_dir {
            [(src, from), (dst, to)]
        } else {
            [(dst, to), (src, from)]
        };
        let mut held = Vec::new();
        for (dir, p) in ordered
            .into_iter()
            .take(if from_dir == to_dir { 1 } else { 2 })
        {
            let lock = open_dir_fd(dir).map_err(|e| io_error(e, p))?;
            lock.lock().map_err(|e| io_error(e, p))?;
            held.push(lock);
        }
        let same_file =
            self.folds_case && from.to_string().to_lowercase() == to.to_string().to_lowercase();
        if let Some(recorder) = &self.recorder {
            // The bytes go with the name: the recorder hears of the file by
            // its id, hashed as it streams by, and never holds it whole.
            let (id, head) = stream_nofollow(src, name).map_err(|e| io_error(e, from))?;
            recorder.moved(from, to, &super::Moved { id, head: &head })?;
        }
        let renamed = Self::rename_synced(src, dst, from, to, same_file);
        self.noted(&[from, to], renamed)
    }

    /// The rename itself of [`Root::rename_into`], both folders synced.
    fn rename_synced(
        src: &Dir,
        dst: &Dir,
        from: &RelPath,
        to: &RelPath,
        same_file: bool,
    ) -> Result<()> {
        let name = from.file_name().unwrap_or_default();
        let new_name = to.file_name().unwrap_or_default();
        if same_file {
            // A change of case of one file: the name "taken" is its own.
            crate::fault::step().map_err(|e| io_error(e, from))?;
            src.rename(name, dst, new_name)
                .map_err(|e| io_error(e, from))?;
        } else {
            rename_noreplace(src, name, dst, new_name).map_err(|e| match e.kind() {
                io::ErrorKind::AlreadyExists => {
                    Error::new(Code::Conflict, format!("`{to}` already exists"))
                        .with("path", to.to_string())
                }
                _ => io_error(e, from),
            })?;
        }
        sync_dir(dst).map_err(|e| io_error(e, to))?;
        sync_dir(src).map_err(|e| io_error(e, from))
    }

    /// Remove the folders below `p` that hold nothing (deepest first), and
    /// `p` itself if it is then empty; files and their folders stay, and
    /// links are never followed. Each folder is offered to the recorder
    /// before any is removed, so a refusal removes none. The folders'
    /// removal is fsynced.
    pub fn remove_empty_dirs(&self, p: &RelPath) -> Result<()> {
        if p.is_root() {
            return Ok(());
        }
        let mut empty = Vec::new();
        self.empty_folders(p, &mut empty)?;
        for folder in &empty {
            self.check_folder(folder)?;
        }
        for folder in &empty {
            let Some(parent) = self.open_dir_nofollow(&folder.parent(), false)? else {
                continue;
            };
            crate::fault::step().map_err(|e| io_error(e, folder))?;
            // One that is no longer empty (something was just put there)
            // stays.
            if parent
                .remove_dir(folder.file_name().unwrap_or_default())
                .is_ok()
            {
                self.note_folder(folder, false);
                sync_dir(&parent).map_err(|e| io_error(e, folder))?;
            }
        }
        Ok(())
    }

    /// Add to `out` the folders at and below `p` that hold nothing but
    /// such folders, deepest first; whether `p` is one of them.
    fn empty_folders(&self, p: &RelPath, out: &mut Vec<RelPath>) -> Result<bool> {
        let Some(parent) = self.open_dir_nofollow(&p.parent(), false)? else {
            return Ok(false);
        };
        let name = p.file_name().unwrap_or_default();
        let Ok(dir) = parent.open_dir_nofollow(name) else {
            return Ok(false); // gone, a link, or a file
        };
        let mut empty = true;
        for entry in dir.entries().map_err(|e| io_error(e, p))? {
            let entry = entry.map_err(|e| io_error(e, p))?;
            empty &= match entry.file_name().into_string() {
                Ok(n) if entry.file_type().is_ok_and(|t| t.is_dir()) => {
                    self.empty_folders(&p.join(&n), out)?
                }
                _ => false,
            };
        }
        if empty {
            out.push(p.clone());
        }
        Ok(empty)
    }

    /// Remove folder `p` if it holds nothing (a folder an undone change
    /// had made); one that holds anything, or is not a plain folder, stays.
    pub fn remove_dir_if_empty(&self, p: &RelPath) -> Result<()> {
        if p.is_root() {
            return Ok(());
        }
        let Some(parent) = self.open_dir_nofollow(&p.parent(), false)? else {
            return Ok(());
        };
        let name = p.file_name().unwrap_or_default();
        self.check_folder(p)?;
        crate::fault::step().map_err(|e| io_error(e, p))?;
        if parent.remove_dir(name).is_ok() {
            self.note_folder(p, false);
            sync_dir(&parent).map_err(|e| io_error(e, p))?;
        }
        Ok(())
    }

    /// Make folder `p` and any missing folder above it (a folder an undone
    /// change had removed), never through a link.
    pub fn make_dir(&self, p: &RelPath) -> Result<()> {
        self.check_links(p, false)?;
        self.open_dir_nofollow(p, true).map(|_| ())
    }

    /// Remove file `p` if it holds exactly `expected`: an undo taking back
    /// the file a change created. Anything else there is a `conflict` and
    /// stays. Under the file's locks, as a rewrite.
    pub fn remove_file_if(&self, p: &RelPath, expected: &[u8]) -> Result<()> {
        self.check_links(p, false)?;
        let lock = self.file_lock(p);
        let _guard = lock.lock().unwrap_or_else(|e| e.into_inner());
        let Some(pdir) = self.open_dir_nofollow(&p.parent(), false)? else {
            return Err(io_error(io::ErrorKind::NotFound.into(), p));
        };
        let held = open_dir_fd(&pdir).map_err(|e| io_error(e, p))?;
        held.lock().map_err(|e| io_error(e, p))?;
        let name = p.file_name().unwrap_or_default();
        let current =
            read_nofollow(&pdir, name, self.max_file_bytes).map_err(|e| io_error(e, p))?;
        if current.bytes != expected {
            return Err(Error::new(
                Code::Conflict,
                format!("`{p}` was changed since; kura left it as it is"),
            )
            .with("path", p.to_string()));
        }
        self.note_file(p, Some(&current.bytes), None)?;
        let removed = (|| {
            crate::fault::step().map_err(|e| io_error(e, p))?;
            if Seen::now(&pdir, name).map_err(|e| io_error(e, p))? != current.seen {
                return Err(write_error(io::Error::other(Changed), p));
            }
            pdir.remove_file(name).map_err(|e| io_error(e, p))?;
            sync_dir(&pdir).map_err(|e| io_error(e, p))
        })();
        self.noted(&[p], removed)
    }

    /// A write never makes a file kura could not read back whole.
    fn check_size(&self, p: &RelPath, len: usize) -> Result<()> {
        if len as u64 > self.max_file_bytes {
            return Err(Error::invalid_parameter(
                "content",
                format!(
                    "the new `{p}` would be {len} bytes, over the {} bytes kura writes (MAX_FILE_BYTES)",
                    self.max_file_bytes
                ),
            )
            .with("path", p.to_string())
            .with("limit", self.max_file_bytes));
        }
        Ok(())
    }

    /// Remove the temporary files that a killed kura left in this root:
    /// only kura's own names, only regular files, never through a link.
    /// Whether a temporary file is still being written is decided by what
    /// its writer holds, not by its process id (ids are reused within
    /// seconds): every write holds its folder's advisory lock from before
    /// its temporary file exists until after the rename, in this process
    /// or another. A folder whose lock is free has no write in progress,
    /// so every temporary file in it is debris; a folder whose lock is
    /// held is left for the next sweep. Returns how many were removed.
    pub fn sweep_temp_files(&self) -> usize {
        self.dir.try_clone().map_or(0, sweep_temp_tree)
    }
}

/// Remove kura's temporary files beneath `top` (regular files, never
/// through a link) from every folder whose advisory lock is free: its
/// writers hold it from before a temporary file exists until after the
/// rename, so a free folder's temporary files are debris.
pub(super) fn sweep_temp_tree(top: Dir) -> usize {
    let mut removed = 0;
    let mut stack = vec![(RelPath::root(), top)];
    while let Some((at, dir)) = stack.pop() {
        let Ok(entries) = dir.entries() else {
            continue;
        };
        let mut debris = Vec::new();
        for entry in entries.flatten() {
            let Ok(name) = entry.file_name().into_string() else {
                continue;
            };
            let Ok(ft) = entry.file_type() else {
                continue;
            };
            if ft.is_dir() {
                if let Ok(sub) = dir.open_dir_nofollow(&name) {
                    stack.push((at.join(&name), sub));
                }
            } else if ft.is_file() && is_temp_name(&name) {
                debris.push(name);
            }
        }
        if debris.is_empty() {
            continue;
        }
        let Ok(lock) = open_dir_fd(&dir) else {
            continue;
        };
        if lock.try_lock().is_err() {
            tracing::debug!(folder = %at, "a write is in progress: its temporary files stay");
            continue;
        }
        for name in debris {
            match dir.remove_file(&name) {
                Ok(()) => {
                    removed += 1;
                    tracing::info!(path = %at.join(&name), "removed a stale temporary file");
                }
                Err(e) => {
                    tracing::warn!(path = %at.join(&name), "cannot remove a stale temporary file: {e}")
                }
            }
        }
    }
    removed
}

/// The refusal of a write to a file without its owner's write permission.
fn read_only(p: &RelPath, mode: u32) -> Error {
    Error::new(
        Code::Forbidden,
        format!(
            "`{p}` is read-only (mode {mode:04o}); kura keeps it so. Give it write permission to change it"
        ),
    )
    .with("path", p.to_string())
    .with("mode", format!("{mode:04o}"))
}

/// Why `seg` (the `i`-th segment of `p`) could not be opened as a folder
/// without following links.
fn not_a_plain_folder(dir: &Dir, seg: &str, e: io::Error, p: &RelPath, i: usize) -> Error {
    let at: Vec<&str> = p.segments()[..=i].iter().map(String::as_str).collect();
    match dir.symlink_metadata(seg) {
        Ok(m) if m.file_type().is_symlink() => Error::new(
            Code::Forbidden,
            format!(
                "`{p}` goes through a symbolic link (`{}`); kura never writes through links",
                at.join("/")
            ),
        )
        .with("path", p.to_string()),
        Ok(m) if !m.is_dir() => Error::new(
            Code::Conflict,
            format!("`{}` is a file, not a folder", at.join("/")),
        )
        .with("path", p.to_string()),
        _ => io_error(e, p),
    }
}

/// A readable descriptor of the folder itself (cap-std's own handle may be
/// `O_PATH`, which can be neither locked nor synced).
pub(super) fn open_dir_fd(dir: &Dir) -> io::Result<std::fs::File> {
    let mut opts = OpenOptions::new();
    opts.read(true).maybe_dir(true);
    Ok(dir.open_with(".", &opts)?.into_std())
}

/// fsync a folder: the entries made in it (a file's new name, a new
/// folder) survive a power cut, whatever the file system.
pub(super) fn sync_dir(dir: &Dir) -> io::Result<()> {
    let f = open_dir_fd(dir)?;
    #[cfg(test)]
    tests::SYNCED.with(|s| {
        let m = f.metadata().expect("a folder's metadata");
        s.borrow_mut().push(m.ino());
    });
    f.sync_all()
}

/// The mode and owner of the file `name` in `dir`, never through a link.
fn keep_nofollow(dir: &Dir, name: &str) -> io::Result<Keep> {
    let mut opts = OpenOptions::new();
    opts.read(true).follow(FollowSymlinks::No);
    let meta = dir.open_with(name, &opts)?.into_std().metadata()?;
    if !meta.is_file() {
        return Err(io::Error::new(io::ErrorKind::InvalidInput, "not a file"));
    }
    Ok(Keep::of(&meta))
}

/// The file `name` in `dir`, never through a link, with its mode and owner;
/// `FileTooLarge` over `max` bytes (checked before reading).
/// [`super::blob_id`] of file `name` in `dir`, never through a link.
fn stream_nofollow(dir: &Dir, name: &str) -> io::Result<(String, Vec<u8>)> {
    let mut opts = OpenOptions::new();
    opts.read(true).follow(FollowSymlinks::No);
    let f = dir.open_with(name, &opts)?.into_std();
    let len = f.metadata()?.len();
    super::blob_id(&mut io::BufReader::new(f), len)
}

fn read_nofollow(dir: &Dir, name: &str, max: u64) -> io::Result<Current> {
    let mut opts = OpenOptions::new();
    opts.read(true).follow(FollowSymlinks::No);
    let mut f = dir.open_with(name, &opts)?.into_std();
    let meta = f.metadata()?;
    if meta.is_dir() {
        return Err(io::Error::new(io::ErrorKind::IsADirectory, "is a folder"));
    }
    if meta.len() > max {
        return Err(io::Error::new(
            io::ErrorKind::FileTooLarge,
            "over the limit",
        ));
    }
    let mut bytes = Vec::with_capacity(meta.len() as usize);
    f.read_to_end(&mut bytes)?;
    Ok(Current {
        bytes,
        keep: Keep::of(&meta),
        seen: Seen::of(&meta),
    })
}

/// Temporary file in the same folder, fsync, rename to the target, fsync
/// the folder: a reader or a crash sees the old file or the new, never a
/// mix. `expect` says what the target must be when the name is taken: a
/// new file never replaces one that appeared meanwhile (the file system's
/// own no-replace rename decides, not a check before it), and a rewrite
/// is refused when the file it read was changed or replaced since. The
/// temporary gets the old file's mode and owner before it takes the name.
pub(super) fn replace_atomically(
    dir: &Dir,
    name: &str,
    bytes: &[u8],
    expect: Expect,
) -> io::Result<()> {
    place_unsynced(dir, name, bytes, expect)?;
    sync_dir(dir)
}

/// A temporary name no other write of any process takes.
fn temp_name() -> String {
    let n = TMP_COUNTER.fetch_add(1, Ordering::Relaxed);
    format!("{TEMP_PREFIX}{}-{n:x}", super::process_tag())
}

/// [`replace_atomically`] but for the folder's sync, which the caller
/// makes once for several files.
pub(super) fn place_unsynced(
    dir: &Dir,
    name: &str,
    bytes: &[u8],
    expect: Expect,
) -> io::Result<()> {
    crate::fault::step()?;
    let tmp = temp_name();
    let mut opts = OpenOptions::new();
    opts.write(true).create_new(true).follow(FollowSymlinks::No);
    let result = (|| {
        let mut f = dir.open_with(&tmp, &opts)?.into_std();
        if let Expect::Same(_, k) | Expect::Like(k) = expect {
            // Owner first: a chown may clear set-id bits that the mode restores.
            let _ = std::os::unix::fs::fchown(&f, Some(k.uid), Some(k.gid));
            let mut mode = k.mode;
            // A copy whose owner or group could not be the original's: its
            // group and others' bits would open it to other people.
            if matches!(expect, Expect::Like(_)) {
                let now = Keep::of(&f.metadata()?);
                if (now.uid, now.gid) != (k.uid, k.gid) {
                    mode &= 0o7700;
                }
            }
            f.set_permissions(std::fs::Permissions::from_mode(mode))?;
        }
        f.write_all(bytes)?;
        f.sync_all()?;
        drop(f);
        match expect {
            Expect::Absent | Expect::Like(_) => {
                rename_noreplace(dir, &tmp, dir, name)?;
            }
            Expect::Same(seen, _) => {
                // No file system offers "rename if unchanged"; this check
                // leaves a window of one system call, where a check before
                // writing the temporary file left the whole write.
                if Seen::now(dir, name).ok() != Some(seen) {
                    return Err(io::Error::other(Changed));
                }
                dir.rename(&tmp, dir, name)?
            }
            Expect::Any => dir.rename(&tmp, dir, name)?,
        }
        Ok(())
    })();
    if result.is_err() {
        let _ = dir.remove_file(&tmp);
    }
    result
}

/// How a file system lets kura give a file a name only while the name is
/// free, strongest first (`kura doctor` says which a root has).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum NoReplace {
    /// `renameat2(RENAME_NOREPLACE)`: the file system decides in the same
    /// step; a file another program creates at any moment is never replaced.
    Rename,
    /// A hard link (which fails on a taken name just the same), then the
    /// old name's removal; a crash between the two leaves both names.
    Link,
    /// Neither (FUSE mounts such as `rclone mount`): the name is looked at
    /// under kura's locks just before a plain rename, so kura never
    /// replaces a file it can see; one another program creates in the
    /// instant between the look and the rename can be replaced.
    Checked,
}

impl NoReplace {
    pub fn describe(self) -> &'static str {
        match self {
            NoReplace::Rename => {
                "renameat2 with RENAME_NOREPLACE (the file system refuses a taken name)"
            }
            NoReplace::Link => {
                "a hard link, then the old name's removal (no RENAME_NOREPLACE here)"
            }
            NoReplace::Checked => {
                "a checked rename: no RENAME_NOREPLACE and no hard links here, so the name is looked at just before the rename; a file another program creates in that instant can be replaced"
            }
        }
    }
}

/// Whether a failure of `renameat2(RENAME_NOREPLACE)` says the file
/// system lacks the flag (FUSE answers EINVAL when its server does).
fn lacks_noreplace(e: rustix::io::Errno) -> bool {
    use rustix::io::Errno;
    e == Errno::INVAL || e == Errno::NOSYS || e == Errno::OPNOTSUPP
}

/// Give `from` (a file in `src`) the name `to` in `dst` unless that name
/// is taken, as strongly as the file system allows ([`NoReplace`]):
/// `renameat2(RENAME_NOREPLACE)`; where it lacks that flag a hard link and
/// the old name's removal; where it has no hard links either (it answers
/// anything but "taken" to `link`), a plain rename once the name is seen
/// free. Returns which it took.
pub(super) fn rename_noreplace(
    src: &Dir,
    from: &str,
    dst: &Dir,
    to: &str,
) -> io::Result<NoReplace> {
    use rustix::fs::{AtFlags, RenameFlags, linkat, renameat, renameat_with, statat, unlinkat};
    use rustix::io::Errno;
    crate::fault::step()?;
    match renameat_with(src, from, dst, to, RenameFlags::NOREPLACE) {
        Ok(()) => return Ok(NoReplace::Rename),
        Err(e) if lacks_noreplace(e) => {}
        Err(e) => return Err(e.into()),
    }
    match linkat(src, from, dst, to, AtFlags::empty()) {
        Ok(()) => {
            unlinkat(src, from, AtFlags::empty())?;
            return Ok(NoReplace::Link);
        }
        Err(Errno::EXIST) => return Err(Errno::EXIST.into()),
        Err(_) => {}
    }
    match statat(dst, to, AtFlags::SYMLINK_NOFOLLOW) {
        Ok(_) => Err(Errno::EXIST.into()),
        Err(Errno::NOENT) => {
            renameat(src, from, dst, to)?;
            Ok(NoReplace::Checked)
        }
        Err(e) => Err(e.into()),
    }
}

impl Root {
    /// Which way this root's file system lets kura take a name only while
    /// it is free, found by trying each with two temporary files at the
    /// root (removed again; a crash leaves temporary names the next start
    /// sweeps).
    pub fn probe_no_replace(&self) -> io::Result<NoReplace> {
        let (a, b) = (temp_name(), temp_name());
        self.dir.write(&a, b"kura doctor")?;
        let taken = self.dir.write(&b, b"kura doctor");
        // Try on a taken name: each way must refuse it.
        let refused = taken.and_then(|()| match rename_noreplace(&self.dir, &a, &self.dir, &b) {
            Err(e) if e.kind() == io::ErrorKind::AlreadyExists => Ok(()),
            Err(e) => Err(e),
            Ok(_) => Err(io::Error::other("a taken name was replaced")),
        });
        let way = refused.and_then(|()| {
            let _ = self.dir.remove_file(&b);
            rename_noreplace(&self.dir, &a, &self.dir, &b)
        });
        let _ = self.dir.remove_file(&a);
        let _ = self.dir.remove_file(&b);
        way
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    thread_local! {
        /// The inodes of the folders this thread fsynced, in order.
        pub(super) static SYNCED: std::cell::RefCell<Vec<u64>> = const { std::cell::RefCell::new(Vec::new()) };
    }

    #[test]
    fn each_folder_created_for_a_write_is_synced_into_its_parent() {
        #![allow(clippy::disallowed_methods)] // the test looks at the folders
        let t = tempfile::tempdir().unwrap();
        std::fs::create_dir(t.path().join("a")).unwrap();
        let root = Root::open(t.path()).unwrap();
        SYNCED.with(|s| s.borrow_mut().clear());
        let p = RelPath::parse("a/b/c/note.md", false).unwrap();
        root.update(&p, |_| Ok(Some((b"x".to_vec(), ())))).unwrap();
        let ino = |rel: &str| std::fs::metadata(t.path().join(rel)).unwrap().ino();
        let synced = SYNCED.with(|s| s.borrow().clone());
        // `b` made in `a`, `c` in `b`, the file in `c`; `a` already existed
        // and its parent (the root) gained nothing.
        assert_eq!(synced, [ino("a"), ino("a/b"), ino("a/b/c")]);
    }

    #[test]
    fn the_per_file_locks_of_finished_writes_do_not_accumulate() {
        let t = tempfile::tempdir().unwrap();
        let root = Root::open(t.path()).unwrap();
        let held = root.file_lock(&RelPath::parse("held.md", false).unwrap());
        for i in 0..3 * FILE_LOCKS_KEPT {
            let p = RelPath::parse(&format!("n/{i}.md"), false).unwrap();
            drop(root.file_lock(&p));
        }
        let map = root.locks.lock().unwrap();
        assert!(map.len() <= FILE_LOCKS_KEPT, "{} kept", map.len());
        // A lock someone holds is never dropped: a second writer of that
        // file must wait on the same one.
        let again = map.get(&RelPath::parse("held.md", false).unwrap()).unwrap();
        assert!(Arc::ptr_eq(again, &held));
    }

    #[test]
    #[allow(clippy::disallowed_methods)] // "another program" writes with std::fs
    fn a_file_another_program_creates_meanwhile_is_never_replaced() {
        let t = tempfile::tempdir().unwrap();
        let root = Root::open(t.path()).unwrap();
        let p = RelPath::parse("new.md", false).unwrap();
        // The other program creates the file after kura saw none, before
        // kura's rename: kura's write is the one refused.
        let err = root
            .update(&p, |current| {
                assert!(current.is_none());
                std::fs::write(t.path().join("new.md"), "theirs").unwrap();
                Ok(Some((b"ours".to_vec(), ())))
            })
            .unwrap_err();
        assert_eq!(err.code, Code::Conflict, "{}", err.message);
        assert_eq!(
            std::fs::read_to_string(t.path().join("new.md")).unwrap(),
            "theirs"
        );
        assert_eq!(
            std::fs::read_dir(t.path()).unwrap().count(),
            1,
            "no temporary file left"
        );
    }

    #[test]
    #[allow(clippy::disallowed_methods)] // "another program" writes with std::fs
    fn a_change_another_program_makes_meanwhile_is_never_overwritten() {
        let t = tempfile::tempdir().unwrap();
        std::fs::write(t.path().join("n.md"), "v1").unwrap();
        let root = Root::open(t.path()).unwrap();
        let p = RelPath::parse("n.md", false).unwrap();
        for how in ["in place", "atomic save"] {
            let err = root
                .update(&p, |current| {
                    let path = t.path().join("n.md");
                    match how {
                        "in place" => std::fs::write(&path, format!("{how}, longer")).unwrap(),
                        _ => {
                            std::fs::write(t.path().join("tmp"), how).unwrap();
                            std::fs::rename(t.path().join("tmp"), &path).unwrap();
                        }
                    }
                    Ok(Some(([current.unwrap(), b"+ours"].concat(), ())))
                })
                .unwrap_err();
            assert_eq!(err.code, Code::Conflict, "{how}: {}", err.message);
            let now = std::fs::read_to_string(t.path().join("n.md")).unwrap();
            assert!(now.starts_with(how), "{how}: {now}");
        }
    }

    #[test]
    #[allow(clippy::disallowed_methods)] // "another program" writes with std::fs
    fn rename_never_replaces_a_file_created_while_it_runs() {
        let t = tempfile::tempdir().unwrap();
        let root = Arc::new(Root::open(t.path()).unwrap());
        let (a, b) = (
            RelPath::parse("a.md", false).unwrap(),
            RelPath::parse("sub/b.md", false).unwrap(),
        );
        std::fs::create_dir(t.path().join("sub")).unwrap();
        let (mut ours, mut theirs) = (0, 0);
        for i in 0..200 {
            std::fs::write(t.path().join("a.md"), format!("ours {i}")).unwrap();
            let _ = std::fs::remove_file(t.path().join("sub/b.md"));
            let path = t.path().join("sub/b.md");
            let other = std::thread::spawn(move || {
                for _ in 0..(i % 7) * 50 {
                    std::hint::spin_loop();
                }
                let mut o = std::fs::OpenOptions::new();
                o.write(true).create_new(true);
                o.open(&path)
                    .map(|mut f| f.write_all(b"theirs").unwrap())
                    .is_ok()
            });
            let moved = root.rename_file(&a, &b);
            let created = other.join().unwrap();
            let b_text = std::fs::read_to_string(t.path().join("sub/b.md")).unwrap();
            match moved {
                Ok(()) => {
                    assert!(!created, "round {i}: both took the name");
                    assert_eq!(b_text, format!("ours {i}"));
                    ours += 1;
                }
                Err(e) => {
                    assert_eq!(e.code, Code::Conflict, "round {i}: {}", e.message);
                    assert!(created);
                    assert_eq!(b_text, "theirs", "round {i}: their file was replaced");
                    assert_eq!(
                        std::fs::read_to_string(t.path().join("a.md")).unwrap(),
                        format!("ours {i}")
                    );
                    theirs += 1;
                }
            }
        }
        assert_eq!(ours + theirs, 200);
    }

    #[test]
    fn temp_names_are_recognised() {
        assert!(is_temp_name(".kura-tmp-1f-a"));
        assert!(is_temp_name(".note.md.kura-tmp-1234-7"));
        assert!(!is_temp_name("kura-tmp-notes.md"));
    }

    #[test]
    fn debris_is_swept_by_its_folders_lock_not_by_a_process_id() {
        #![allow(clippy::disallowed_methods)] // the test plants the files
        let t = tempfile::tempdir().unwrap();
        for d in ["idle", "busy"] {
            std::fs::create_dir(t.path().join(d)).unwrap();
        }
        // Named after a process that runs (this one: a reused id looks the
        // same), in a folder no write holds: debris all the same.
        let me = std::process::id();
        let reused = t.path().join(format!("idle/{TEMP_PREFIX}{me:x}-0"));
        let old_style = t.path().join(format!("idle/.n.md.kura-tmp-{me}-1"));
        // A write in progress in `busy` (another process's, say): it holds
        // the folder's lock, so its temporary file is its own.
        let busy = t.path().join(format!("busy/{TEMP_PREFIX}1-0"));
        for p in [&reused, &old_style, &busy] {
            std::fs::write(p, "half a write").unwrap();
        }
        let held = std::fs::File::open(t.path().join("busy")).unwrap();
        held.lock().unwrap();
        let root = Root::open(t.path()).unwrap();
        assert_eq!(root.sweep_temp_files(), 2);
        assert!(!reused.exists() && !old_style.exists());
        assert!(busy.exists(), "a write in progress lost its file");
        // Once the write is over (or its process died), the next sweep takes it.
        drop(held);
        assert_eq!(root.sweep_temp_files(), 1);
        assert!(!busy.exists());
    }
}
