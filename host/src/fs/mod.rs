//! The only code in kura that touches files (clippy's `disallowed-methods`
//! bans `std::fs` and `tokio::fs` everywhere else).
//!
//! Each configured root is one cap-std [`Dir`] opened at start-up; every path
//! a tool names is parsed by [`RelPath::parse`] and resolved beneath that
//! handle, so no path spelling and no symbolic link can reach outside the
//! root. Symbolic links are never listed, never followed out of the root, and
//! never written through. Writes are atomic (temporary file in the same
//! folder, fsync, rename, fsync of the folder), serialised per file inside the
//! process and guarded across processes by an advisory lock on the folder.

#![allow(clippy::disallowed_methods)] // this module is the sanctioned chokepoint

mod path;
mod state;
mod watch;

pub use path::RelPath;
pub use state::StateDir;
pub use watch::{Changes, Watch, watch_files};

use std::collections::HashMap;
use std::io::{self, Read, Write};
use std::path::{Path, PathBuf};
use std::sync::atomic::{AtomicU64, Ordering};
use std::sync::{Arc, Mutex};

use cap_fs_ext::{FollowSymlinks, OpenOptionsFollowExt, OpenOptionsMaybeDirExt};
use cap_std::ambient_authority;
use cap_std::fs::{Dir, OpenOptions};

use crate::error::{Code, Error, Result};

/// What a listing shows: folders and regular files, never links.
#[derive(Clone, Copy, Debug, PartialEq, Eq, PartialOrd, Ord)]
pub enum EntryKind {
    Dir,
    File,
}

#[derive(Clone, Debug)]
pub struct Entry {
    pub name: String,
    pub kind: EntryKind,
    pub size: u64,
    /// Modification time in nanoseconds since the epoch (0 for folders).
    pub mtime_ns: i128,
}

/// A file's identity for change detection.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct FileStat {
    pub is_dir: bool,
    pub size: u64,
    pub mtime_ns: i128,
}

/// One configured root folder.
pub struct Root {
    dir: Dir,
    path: PathBuf,
    locks: Mutex<HashMap<RelPath, Arc<Mutex<()>>>>,
}

fn mtime_of(m: &cap_std::fs::Metadata) -> i128 {
    m.modified()
        .ok()
        .map(|t| t.into_std())
        .and_then(|t| t.duration_since(std::time::UNIX_EPOCH).ok())
        .map(|d| d.as_nanos() as i128)
        .unwrap_or(0)
}

static TMP_COUNTER: AtomicU64 = AtomicU64::new(0);

fn io_error(e: io::Error, what: &RelPath) -> Error {
    match e.kind() {
        // `a/file.md/b`: nothing by that name exists either.
        io::ErrorKind::NotFound | io::ErrorKind::NotADirectory => {
            Error::new(Code::NotFound, format!("`{what}` does not exist"))
                .with("path", what.to_string())
        }
        io::ErrorKind::PermissionDenied if e.to_string().contains("outside") => Error::new(
            Code::OutOfScope,
            format!("`{what}` leads outside the root through a symbolic link"),
        )
        .with("path", what.to_string()),
        _ => Error::internal(format!("file system error on `{what}`: {e}"))
            .with("path", what.to_string()),
    }
}

impl Root {
    /// Open a root folder. This is the one use of ambient authority for roots.
    pub fn open(path: &Path) -> io::Result<Root> {
        let path = std::fs::canonicalize(path)?;
        if !std::fs::metadata(&path)?.is_dir() {
            return Err(io::Error::new(io::ErrorKind::NotADirectory, "not a folder"));
        }
        let dir = Dir::open_ambient_dir(&path, ambient_authority())?;
        Ok(Root {
            dir,
            path,
            locks: Mutex::new(HashMap::new()),
        })
    }

    /// The canonical path, for messages and configuration checks only.
    pub fn path(&self) -> &Path {
        &self.path
    }

    /// Walk the existing prefixes of `p`; refuse links that leave the root
    /// (`out_of_scope`) and, where `follow_inside` is false, any link at all.
    fn check_links(&self, p: &RelPath, follow_inside: bool) -> Result<()> {
        let segs = p.segments();
        for i in 0..segs.len() {
            let prefix = segs[..=i].join("/");
            let meta = match self.dir.symlink_metadata(&prefix) {
                Ok(m) => m,
                Err(e) if e.kind() == io::ErrorKind::NotFound => return Ok(()),
                Err(e) if e.kind() == io::ErrorKind::NotADirectory => return Ok(()),
                Err(e) => return Err(io_error(e, p)),
            };
            if !meta.file_type().is_symlink() {
                continue;
            }
            let target = self
                .dir
                .read_link_contents(&prefix)
                .map_err(|e| io_error(e, p))?;
            let escapes = if target.is_absolute() {
                true
            } else {
                let mut depth = i as isize; // the link's own folder depth
                let mut escaped = false;
                for c in target.components() {
                    match c {
                        std::path::Component::ParentDir => depth -= 1,
                        std::path::Component::Normal(_) => depth += 1,
                        _ => {}
                    }
                    if depth < 0 {
                        escaped = true;
                        break;
                    }
                }
                escaped
            };
            if escapes {
                return Err(Error::new(
                    Code::OutOfScope,
                    format!("`{p}` goes through a symbolic link that points outside the root"),
                )
                .with("path", p.to_string()));
            }
            if !follow_inside {
                return Err(Error::new(
                    Code::Forbidden,
                    format!("`{p}` goes through a symbolic link; kura never writes through links"),
                )
                .with("path", p.to_string()));
            }
        }
        Ok(())
    }

    /// Metadata of a path (following links inside the root), or None if missing.
    pub fn stat(&self, p: &RelPath) -> Result<Option<FileStat>> {
        self.check_links(p, true)?;
        match self.dir.metadata(p.as_fs_path()) {
            Ok(m) => Ok(Some(FileStat {
                is_dir: m.is_dir(),
                size: m.len(),
                mtime_ns: mtime_of(&m),
            })),
            Err(e) if e.kind() == io::ErrorKind::NotFound => Ok(None),
            Err(e) => Err(io_error(e, p)),
        }
    }

    /// Read a whole file (links inside the root are followed).
    pub fn read(&self, p: &RelPath) -> Result<Vec<u8>> {
        self.check_links(p, true)?;
        if p.is_root() {
            return Err(Error::invalid_parameter(
                "path",
                "the root is a folder, not a file",
            ));
        }
        let mut f = self.dir.open(p.as_fs_path()).map_err(|e| io_error(e, p))?;
        let meta = f.metadata().map_err(|e| io_error(e, p))?;
        if meta.is_dir() {
            return Err(
                Error::invalid_parameter("path", format!("`{p}` is a folder, not a file"))
                    .with("path", p.to_string()),
            );
        }
        let mut buf = Vec::with_capacity(meta.len() as usize);
        f.read_to_end(&mut buf).map_err(|e| io_error(e, p))?;
        Ok(buf)
    }

    /// Read a file the index listed, for its section text: cap-std's own
    /// sandbox only (no link pre-check, which costs a lookup per path
    /// segment). Nothing outside the root can be reached either way; this
    /// path just does not tell `out_of_scope` from other failures, which
    /// matters for a tool's argument, not for re-reading an indexed file.
    pub fn read_indexed(&self, p: &RelPath) -> Option<String> {
        let mut f = self.dir.open(p.as_fs_path()).ok()?;
        let mut buf = String::new();
        f.read_to_string(&mut buf).ok()?;
        Some(buf)
    }

    /// Read a whole file as UTF-8 text.
    pub fn read_text(&self, p: &RelPath) -> Result<String> {
        String::from_utf8(self.read(p)?).map_err(|_| {
            Error::invalid_parameter("path", format!("`{p}` is not a UTF-8 text file"))
                .with("path", p.to_string())
        })
    }

    /// One level of a folder: sub-folders and regular files, never links.
    pub fn list(&self, p: &RelPath) -> Result<Vec<Entry>> {
        self.check_links(p, true)?;
        let dir = if p.is_root() {
            self.dir.try_clone().map_err(|e| io_error(e, p))?
        } else {
            match self.dir.open_dir(p.as_fs_path()) {
                Ok(d) => d,
                Err(e) if e.kind() == io::ErrorKind::NotADirectory => {
                    return Err(Error::invalid_parameter(
                        "path",
                        format!("`{p}` is a file, not a folder"),
                    )
                    .with("path", p.to_string()));
                }
                Err(e) => return Err(io_error(e, p)),
            }
        };
        let mut out = Vec::new();
        for entry in dir.entries().map_err(|e| io_error(e, p))? {
            let entry = entry.map_err(|e| io_error(e, p))?;
            let ft = entry.file_type().map_err(|e| io_error(e, p))?;
            let kind = if ft.is_dir() {
                EntryKind::Dir
            } else if ft.is_file() {
                EntryKind::File
            } else {
                continue; // symbolic links, sockets, devices: never listed
            };
            let Ok(name) = entry.file_name().into_string() else {
                continue; // not UTF-8: cannot be named by a tool anyway
            };
            let (size, mtime_ns) = if kind == EntryKind::File {
                entry
                    .metadata()
                    .map(|m| (m.len(), mtime_of(&m)))
                    .unwrap_or((0, 0))
            } else {
                (0, 0)
            };
            out.push(Entry {
                name,
                kind,
                size,
                mtime_ns,
            });
        }
        out.sort_by(|a, b| a.kind.cmp(&b.kind).then_with(|| a.name.cmp(&b.name)));
        Ok(out)
    }

    /// Every regular file below `p` (recursively, links skipped), sorted,
    /// with its size and modification time.
    pub fn walk_files(&self, p: &RelPath) -> Result<Vec<(RelPath, FileStat)>> {
        let mut out = Vec::new();
        let mut stack = vec![p.clone()];
        while let Some(dir) = stack.pop() {
            for e in self.list(&dir)? {
                let child = dir.join(&e.name);
                match e.kind {
                    EntryKind::Dir => stack.push(child),
                    EntryKind::File => out.push((
                        child,
                        FileStat {
                            is_dir: false,
                            size: e.size,
                            mtime_ns: e.mtime_ns,
                        },
                    )),
                }
            }
        }
        out.sort_by(|a, b| a.0.cmp(&b.0));
        Ok(out)
    }

    fn file_lock(&self, p: &RelPath) -> Arc<Mutex<()>> {
        let mut map = self.locks.lock().unwrap_or_else(|e| e.into_inner());
        map.entry(p.clone()).or_default().clone()
    }

    /// Read-modify-write of one file, atomically. `change` gets the current
    /// bytes (None when the file does not exist) and returns the new content,
    /// or None to leave the file untouched. It may be called more than once
    /// (when the parent folder has to be created first) and runs while the
    /// file's locks are held, so its view of the file is the one replaced.
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
        let name = p.file_name().unwrap_or_default().to_owned();
        loop {
            let pdir = if parent.is_root() {
                self.dir.try_clone().map_err(|e| io_error(e, p))?
            } else {
                match self.dir.open_dir(parent.as_fs_path()) {
                    Ok(d) => d,
                    Err(e) if e.kind() == io::ErrorKind::NotFound => {
                        // Ask first, create folders only for a write that will happen.
                        if change(None)?.is_none() {
                            return Ok(None);
                        }
                        self.dir
                            .create_dir_all(parent.as_fs_path())
                            .map_err(|e| io_error(e, p))?;
                        self.check_links(p, false)?;
                        continue;
                    }
                    Err(e) if e.kind() == io::ErrorKind::NotADirectory => {
                        return Err(Error::new(
                            Code::Conflict,
                            format!("`{parent}` is a file, not a folder"),
                        )
                        .with("path", p.to_string()));
                    }
                    Err(e) => return Err(io_error(e, p)),
                }
            };
            // Advisory lock across processes, on the folder: the file itself is
            // replaced by rename, so its inode cannot carry the lock.
            let lockfile = open_dir_fd(&pdir).map_err(|e| io_error(e, p))?;
            lockfile.lock().map_err(|e| io_error(e, p))?;
            let current = match read_nofollow(&pdir, &name) {
                Ok(bytes) => Some(bytes),
                Err(e) if e.kind() == io::ErrorKind::NotFound => None,
                Err(e) if is_loop(&e) => {
                    return Err(Error::new(
                        Code::Forbidden,
                        format!("`{p}` is a symbolic link; kura never writes through links"),
                    )
                    .with("path", p.to_string()));
                }
                Err(e) if e.kind() == io::ErrorKind::IsADirectory => {
                    return Err(Error::new(
                        Code::Conflict,
                        format!("`{p}` is a folder, not a file"),
                    )
                    .with("path", p.to_string()));
                }
                Err(e) => return Err(io_error(e, p)),
            };
            let Some((bytes, out)) = change(current.as_deref())? else {
                return Ok(None);
            };
            replace_atomically(&pdir, &name, &bytes).map_err(|e| io_error(e, p))?;
            return Ok(Some(out));
        }
    }
}

impl Root {
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
        self.check_links(folder, false)?;
        let lock = self.file_lock(folder);
        let _guard = lock.lock().unwrap_or_else(|e| e.into_inner());
        let dir = if folder.is_root() {
            self.dir.try_clone().map_err(|e| io_error(e, folder))?
        } else {
            match self.dir.open_dir(folder.as_fs_path()) {
                Ok(d) => d,
                Err(e) if e.kind() == io::ErrorKind::NotFound => {
                    self.dir
                        .create_dir_all(folder.as_fs_path())
                        .map_err(|e| io_error(e, folder))?;
                    self.check_links(folder, false)?;
                    self.dir
                        .open_dir(folder.as_fs_path())
                        .map_err(|e| io_error(e, folder))?
                }
                Err(e) => return Err(io_error(e, folder)),
            }
        };
        let lockfile = open_dir_fd(&dir).map_err(|e| io_error(e, folder))?;
        lockfile.lock().map_err(|e| io_error(e, folder))?;
        let mut names = Vec::new();
        for entry in dir.entries().map_err(|e| io_error(e, folder))? {
            let entry = entry.map_err(|e| io_error(e, folder))?;
            if let Ok(name) = entry.file_name().into_string() {
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
        replace_atomically(&dir, &name, &bytes).map_err(|e| io_error(e, &path))?;
        Ok((path, out))
    }
}

/// A readable descriptor of the folder itself (cap-std's own handle may be
/// `O_PATH`, which can be neither locked nor synced).
fn open_dir_fd(dir: &Dir) -> io::Result<std::fs::File> {
    let mut opts = OpenOptions::new();
    opts.read(true).maybe_dir(true);
    Ok(dir.open_with(".", &opts)?.into_std())
}

/// `open(O_NOFOLLOW)` on a link fails with ELOOP.
fn is_loop(e: &io::Error) -> bool {
    #[cfg(target_os = "linux")]
    const ELOOP: i32 = 40;
    #[cfg(not(target_os = "linux"))]
    const ELOOP: i32 = 62;
    e.raw_os_error() == Some(ELOOP)
}

fn read_nofollow(dir: &Dir, name: &str) -> io::Result<Vec<u8>> {
    let mut opts = OpenOptions::new();
    opts.read(true).follow(FollowSymlinks::No);
    let mut f = dir.open_with(name, &opts)?;
    if f.metadata()?.is_dir() {
        return Err(io::Error::new(io::ErrorKind::IsADirectory, "is a folder"));
    }
    let mut buf = Vec::new();
    f.read_to_end(&mut buf)?;
    Ok(buf)
}

/// Temporary file in the same folder, fsync, rename over the target, fsync
/// the folder: a reader or a crash sees the old file or the new, never a mix.
fn replace_atomically(dir: &Dir, name: &str, bytes: &[u8]) -> io::Result<()> {
    let n = TMP_COUNTER.fetch_add(1, Ordering::Relaxed);
    let tmp = format!(".{name}.kura-tmp-{}-{n}", std::process::id());
    let mut opts = OpenOptions::new();
    opts.write(true).create_new(true).follow(FollowSymlinks::No);
    let result = (|| {
        let mut f = dir.open_with(&tmp, &opts)?;
        f.write_all(bytes)?;
        f.sync_all()?;
        drop(f);
        dir.rename(&tmp, dir, name)?;
        open_dir_fd(dir)?.sync_all()
    })();
    if result.is_err() {
        let _ = dir.remove_file(&tmp);
    }
    result
}

/// Read a file the operator named on the command line or in the config
/// (the config file itself, a plugin component). These live outside every
/// root by design, so this is plain ambient access, used only at start-up.
pub fn read_operator_file(path: &Path) -> io::Result<Vec<u8>> {
    std::fs::read(path)
}

/// Create `dir` (or take it when it exists and is empty) and write `files`
/// (relative paths) into it; refuses to touch a folder that holds anything.
pub fn write_new_tree(dir: &Path, files: &[(String, String)]) -> io::Result<Vec<PathBuf>> {
    std::fs::create_dir_all(dir)?;
    if std::fs::read_dir(dir)?.next().is_some() {
        return Err(io::Error::new(
            io::ErrorKind::AlreadyExists,
            "the folder is not empty; choose a new one",
        ));
    }
    let mut written = Vec::new();
    for (rel, text) in files {
        let path = dir.join(rel);
        if let Some(parent) = path.parent() {
            std::fs::create_dir_all(parent)?;
        }
        std::fs::write(&path, text)?;
        written.push(path);
    }
    Ok(written)
}

/// Write embedded files (relative paths) below `dest`, creating folders.
pub fn materialize(dest: &Path, files: &[(&str, &[u8])]) -> io::Result<()> {
    for (rel, bytes) in files {
        let path = dest.join(rel);
        if let Some(parent) = path.parent() {
            std::fs::create_dir_all(parent)?;
        }
        std::fs::write(path, bytes)?;
    }
    Ok(())
}

#[cfg(test)]
mod tests {
    use super::*;

    fn root() -> (tempfile::TempDir, Root) {
        let t = tempfile::tempdir().unwrap();
        let r = Root::open(t.path()).unwrap();
        (t, r)
    }

    fn rel(s: &str) -> RelPath {
        RelPath::parse(s, false).unwrap()
    }

    #[test]
    fn update_creates_parents_only_when_writing() {
        let (t, r) = root();
        let got = r
            .update(&rel("a/b/c.md"), |_| Ok::<_, Error>(None::<(Vec<u8>, ())>))
            .unwrap();
        assert!(got.is_none());
        assert!(!t.path().join("a").exists());
        r.update(&rel("a/b/c.md"), |cur| {
            assert!(cur.is_none());
            Ok(Some((b"hi".to_vec(), ())))
        })
        .unwrap();
        assert_eq!(std::fs::read(t.path().join("a/b/c.md")).unwrap(), b"hi");
        let leftovers: Vec<_> = std::fs::read_dir(t.path().join("a/b")).unwrap().collect();
        assert_eq!(leftovers.len(), 1, "no temporary file left behind");
    }

    #[test]
    fn list_orders_dirs_first_and_hides_links() {
        let (t, r) = root();
        std::fs::create_dir(t.path().join("zdir")).unwrap();
        std::fs::write(t.path().join("a.md"), "x").unwrap();
        std::os::unix::fs::symlink(t.path().join("a.md"), t.path().join("link.md")).unwrap();
        let names: Vec<_> = r
            .list(&RelPath::root())
            .unwrap()
            .into_iter()
            .map(|e| e.name)
            .collect();
        assert_eq!(names, ["zdir", "a.md"]);
    }

    #[test]
    fn concurrent_appends_lose_nothing() {
        let (t, r) = root();
        let r = Arc::new(r);
        std::fs::write(t.path().join("log.md"), "").unwrap();
        let threads: Vec<_> = (0..8)
            .map(|i| {
                let r = r.clone();
                std::thread::spawn(move || {
                    for j in 0..25 {
                        r.update(&rel("log.md"), |cur| {
                            let mut v = cur.unwrap().to_vec();
                            v.extend_from_slice(format!("{i}-{j}\n").as_bytes());
                            Ok(Some((v, ())))
                        })
                        .unwrap();
                    }
                })
            })
            .collect();
        for t in threads {
            t.join().unwrap();
        }
        let text = std::fs::read_to_string(t.path().join("log.md")).unwrap();
        assert_eq!(text.lines().count(), 200);
    }
}
