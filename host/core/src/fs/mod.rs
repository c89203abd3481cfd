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
mod recorder;
pub mod sandbox;
mod state;
mod watch;
mod write;

pub use path::RelPath;
pub use recorder::{Moved, Recorder};
pub use state::{Exposed, StateDir};
pub use watch::{Changes, Listener, Listeners, Watch, watch_files};
pub use write::{NoReplace, TEMP_PREFIX, is_temp_name};

use std::collections::HashMap;
use std::io::{self, BufRead, Read};
use std::path::{Path, PathBuf};
use std::sync::{Arc, Mutex};

use cap_std::ambient_authority;
use cap_std::fs::Dir;

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
    /// Creation time, where the filesystem keeps one (else 0).
    pub ctime_ns: i128,
}

/// A file's identity for change detection.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct FileStat {
    pub is_dir: bool,
    pub size: u64,
    pub mtime_ns: i128,
    /// Creation time, where the filesystem keeps one (else 0); a file
    /// replaced by a rename (kura's writes, most editors') is created anew.
    pub ctime_ns: i128,
}

/// What [`Root::walk`] finds below a folder.
#[derive(Debug, Default)]
pub struct Walk {
    pub files: Vec<(RelPath, FileStat)>,
    pub dirs: Vec<RelPath>,
}

/// One configured root folder.
pub struct Root {
    dir: Dir,
    path: PathBuf,
    locks: Mutex<HashMap<RelPath, Arc<Mutex<()>>>>,
    /// Files over this are streamed, indexed by their first bytes, and
    /// never read whole or rewritten (`max_file_bytes`).
    max_file_bytes: u64,
    /// Names that differ only in case are the same file here (macOS,
    /// Windows, casefolded ext4): path rules must compare folded.
    folds_case: bool,
    /// Told of every change before it is made (the root's history).
    recorder: Option<Arc<dyn Recorder>>,
}

fn mtime_of(m: &cap_std::fs::Metadata) -> i128 {
    nanos(m.modified())
}

fn ctime_of(m: &cap_std::fs::Metadata) -> i128 {
    nanos(m.created())
}

fn nanos(t: io::Result<cap_std::time::SystemTime>) -> i128 {
    t.ok()
        .map(|t| t.into_std())
        .and_then(|t| t.duration_since(std::time::UNIX_EPOCH).ok())
        .map(|d| d.as_nanos() as i128)
        .unwrap_or(0)
}

/// An I/O failure on `what` as the tool error it is.
/// The git blob id (hex) of the `len` bytes `r` gives, read in pieces:
/// memory stays a buffer's whatever the size. Also the first
/// [`Moved::HEAD`] bytes. A source that gives more or fewer bytes than
/// `len` (a file written meanwhile) is an error.
pub(crate) fn blob_id(r: &mut impl io::Read, len: u64) -> io::Result<(String, Vec<u8>)> {
    use sha1::Digest as _;
    let mut h = sha1::Sha1::new();
    h.update(format!("blob {len}\0").as_bytes());
    let mut head = Vec::new();
    let mut buf = vec![0u8; 64 << 10];
    let mut seen = 0u64;
    loop {
        let n = r.read(&mut buf)?;
        if n == 0 {
            break;
        }
        if head.len() < Moved::HEAD {
            let take = n.min(Moved::HEAD - head.len());
            head.extend_from_slice(&buf[..take]);
        }
        h.update(&buf[..n]);
        seen += n as u64;
    }
    if seen != len {
        return Err(io::Error::other(format!(
            "the file changed while it was read ({seen} bytes, not {len})"
        )));
    }
    let id: String = h.finalize().iter().map(|b| format!("{b:02x}")).collect();
    Ok((id, head))
}

/// A name for this process that no other process on any machine sharing
/// the folders takes: its id is not enough (two kuras in two containers on
/// one state folder are both process 1), so a random part goes with it.
/// Pending calls, undo plans and temporary files are named with it.
pub fn process_tag() -> &'static str {
    static TAG: std::sync::OnceLock<String> = std::sync::OnceLock::new();
    TAG.get_or_init(|| {
        use std::hash::{BuildHasher as _, Hasher as _};
        // The standard library's hasher keys are drawn from the system's
        // random source once per process.
        let mut h = std::collections::hash_map::RandomState::new().build_hasher();
        h.write_u128(
            std::time::SystemTime::now()
                .duration_since(std::time::UNIX_EPOCH)
                .map_or(0, |d| d.as_nanos()),
        );
        format!("{}-{:08x}", std::process::id(), h.finish() as u32)
    })
}

pub fn io_error(e: io::Error, what: &RelPath) -> Error {
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
        io::ErrorKind::InvalidData => {
            Error::invalid_parameter("path", format!("`{what}` is not a UTF-8 text file"))
                .with("path", what.to_string())
        }
        _ => fault(e, what),
    }
}

/// The file system refused: `filesystem_error` with the OS's reason, named
/// (`reason`) so a client can tell a full disk from a permission problem.
fn fault(e: io::Error, what: &RelPath) -> Error {
    let (reason, sentence) = match e.raw_os_error() {
        Some(libc::ENOSPC | libc::EDQUOT) => ("no_space", "the disk is full"),
        Some(libc::EACCES | libc::EPERM) => ("permission_denied", "permission denied"),
        Some(libc::ENAMETOOLONG) => ("name_too_long", "a name is too long for the file system"),
        Some(libc::ELOOP) => ("link_loop", "symbolic links loop"),
        Some(libc::EROFS) => ("read_only_file_system", "the file system is read-only"),
        Some(libc::EMFILE | libc::ENFILE) => ("too_many_open_files", "too many open files"),
        _ => ("io_error", "the file system failed"),
    };
    Error::new(Code::FilesystemError, format!("`{what}`: {sentence} ({e})"))
        .with("path", what.to_string())
        .with("reason", reason)
        .with("os_error", e.to_string())
}

/// `open(O_NOFOLLOW)` on a link fails with ELOOP.
fn is_loop(e: &io::Error) -> bool {
    e.raw_os_error() == Some(libc::ELOOP)
}

/// A file opened for streaming: reads of any size go through this, so
/// memory follows what a tool returns, not the file's size.
pub struct Reader {
    inner: io::BufReader<std::fs::File>,
    size: u64,
    /// The SHA-256 of every byte read so far, when asked for.
    hash: Option<sha2::Sha256>,
    /// A read found the end: the bytes read are the whole file as this
    /// open saw it, whatever is appended later.
    at_end: bool,
}

impl Reader {
    pub fn size(&self) -> u64 {
        self.size
    }

    /// Hash every byte read from here on (call before the first read).
    pub fn hashing(mut self) -> Reader {
        self.hash = Some(<sha2::Sha256 as sha2::Digest>::new());
        self
    }

    /// The SHA-256 (hex) of the whole file as this one open sees it: the
    /// bytes already read and the rest, read now through the same handle,
    /// so a file another program rewrites meanwhile cannot lend another
    /// version's hash. None without [`Reader::hashing`], or when the file is
    /// over `max` bytes (it is then not read on).
    pub fn finish_hash(mut self, max: u64) -> io::Result<Option<String>> {
        if self.hash.is_none() || self.size > max {
            return Ok(None);
        }
        let mut sink = [0u8; 64 << 10];
        let mut total = 0u64;
        // Once a read has found the end, reading on would hash bytes a
        // writer added since, which the caller never saw.
        while !self.at_end {
            let n = self.read(&mut sink)?;
            total += n as u64;
            // A file that grows while read is bounded all the same.
            if total > max {
                return Ok(None);
            }
        }
        let h = self.hash.take().map(sha2::Digest::finalize);
        Ok(h.map(|d| d.iter().map(|b| format!("{b:02x}")).collect()))
    }
}

impl Read for Reader {
    fn read(&mut self, buf: &mut [u8]) -> io::Result<usize> {
        let n = self.inner.read(buf)?;
        self.at_end |= n == 0 && !buf.is_empty();
        if let Some(h) = &mut self.hash {
            sha2::Digest::update(h, &buf[..n]);
        }
        Ok(n)
    }
}

impl BufRead for Reader {
    fn fill_buf(&mut self) -> io::Result<&[u8]> {
        let buf = self.inner.fill_buf()?;
        self.at_end |= buf.is_empty();
        Ok(buf)
    }

    fn consume(&mut self, amt: usize) {
        if let Some(h) = &mut self.hash {
            sha2::Digest::update(h, &self.inner.buffer()[..amt]);
        }
        self.inner.consume(amt)
    }
}

/// Does the file system at `root` fold case? Look up an entry under its
/// name with the case of its letters swapped: the same inode means yes.
/// With no entry to try, the platform's usual answer.
fn probe_folds_case(root: &Path) -> bool {
    use std::os::unix::fs::MetadataExt;
    let Ok(entries) = std::fs::read_dir(root) else {
        return cfg!(any(target_os = "macos", target_os = "windows"));
    };
    for entry in entries.flatten().take(64) {
        let Ok(name) = entry.file_name().into_string() else {
            continue;
        };
        let swapped: String = name
            .chars()
            .map(|c| {
                if c.is_ascii_lowercase() {
                    c.to_ascii_uppercase()
                } else {
                    c.to_ascii_lowercase()
                }
            })
            .collect();
        if swapped == name {
            continue;
        }
        let (Ok(a), b) = (
            std::fs::symlink_metadata(root.join(&name)),
            std::fs::symlink_metadata(root.join(&swapped)),
        ) else {
            continue;
        };
        return b.is_ok_and(|b| b.ino() == a.ino() && b.dev() == a.dev());
    }
    cfg!(any(target_os = "macos", target_os = "windows"))
}

/// Drop an incomplete UTF-8 sequence that a byte cap cut at the end.
fn trim_cut_char(bytes: &mut Vec<u8>) {
    let len = bytes.len();
    for back in 1..=len.min(4) {
        let b = bytes[len - back];
        if b & 0xC0 == 0x80 {
            continue; // a continuation byte: the start is further back
        }
        let need = match b {
            0x00..=0x7F => 1,
            0xC0..=0xDF => 2,
            0xE0..=0xEF => 3,
            _ => 4,
        };
        if need > back {
            bytes.truncate(len - back);
        }
        return;
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
        let folds_case = probe_folds_case(&path);
        Ok(Root {
            dir,
            path,
            locks: Mutex::new(HashMap::new()),
            max_file_bytes: crate::config::MAX_FILE_BYTES,
            folds_case,
            recorder: None,
        })
    }

    /// Another handle on the same root, without a recorder: for reading.
    pub fn try_clone(&self) -> io::Result<Root> {
        Ok(Root {
            dir: self.dir.try_clone()?,
            path: self.path.clone(),
            locks: Mutex::new(HashMap::new()),
            max_file_bytes: self.max_file_bytes,
            folds_case: self.folds_case,
            recorder: None,
        })
    }

    /// Tell `recorder` of every change before it is made.
    pub fn with_recorder(mut self, recorder: Arc<dyn Recorder>) -> Root {
        self.recorder = Some(recorder);
        self
    }

    /// File `p` goes from `before` to `after`: the recorder first.
    fn note_file(&self, p: &RelPath, before: Option<&[u8]>, after: Option<&[u8]>) -> Result<()> {
        match &self.recorder {
            Some(j) => j.file(p, before, after),
            None => Ok(()),
        }
    }

    /// `made`, the outcome of the change to `paths` the recorder heard of,
    /// told to it: a change refused is not recorded as made, and one made
    /// is recorded as made whatever happens to the file after.
    fn noted<T>(&self, paths: &[&RelPath], made: Result<T>) -> Result<T> {
        if let Some(j) = &self.recorder {
            for p in paths {
                match &made {
                    Ok(_) => j.made(p),
                    Err(_) => j.unmade(p),
                }
            }
        }
        made
    }

    /// Folder `p` is about to be made or removed: its recorder may refuse.
    fn check_folder(&self, p: &RelPath) -> Result<()> {
        match &self.recorder {
            Some(r) => r.changing_folder(p),
            None => Ok(()),
        }
    }

    /// Folder `p` was made or removed.
    fn note_folder(&self, p: &RelPath, made: bool) {
        if let Some(j) = &self.recorder {
            j.folder(p, made);
        }
    }

    /// Whether names differing only in case name one file in this root.
    pub fn folds_case(&self) -> bool {
        self.folds_case
    }

    /// Treat this root as case-insensitive whatever the probe found (tests
    /// of the folding rules on a case-sensitive machine).
    #[doc(hidden)]
    pub fn assume_folds_case(mut self) -> Root {
        self.folds_case = true;
        self
    }

    /// Set `max_file_bytes` (at least 1).
    pub fn with_max_file_bytes(mut self, max: u64) -> Root {
        self.max_file_bytes = max.max(1);
        self
    }

    pub fn max_file_bytes(&self) -> u64 {
        self.max_file_bytes
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
            let target = match self.dir.read_link_contents(&prefix) {
                Ok(t) => t,
                // No longer a link (swapped since the look): the opens that
                // follow never go through links, so they decide.
                Err(e) if e.raw_os_error() == Some(libc::EINVAL) => continue,
                Err(e) => return Err(io_error(e, p)),
            };
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
                ctime_ns: ctime_of(&m),
            })),
            Err(e) if e.kind() == io::ErrorKind::NotFound => Ok(None),
            Err(e) => Err(io_error(e, p)),
        }
    }

    /// Open a file for streaming (links inside the root are followed).
    pub fn open_file(&self, p: &RelPath) -> Result<Reader> {
        self.check_links(p, true)?;
        if p.is_root() {
            return Err(Error::invalid_parameter(
                "path",
                "the root is a folder, not a file",
            ));
        }
        let f = self
            .dir
            .open(p.as_fs_path())
            .map_err(|e| io_error(e, p))?
            .into_std();
        let meta = f.metadata().map_err(|e| io_error(e, p))?;
        if meta.is_dir() {
            return Err(
                Error::invalid_parameter("path", format!("`{p}` is a folder, not a file"))
                    .with("path", p.to_string()),
            );
        }
        Ok(Reader {
            inner: io::BufReader::with_capacity(64 << 10, f),
            size: meta.len(),
            hash: None,
            at_end: false,
        })
    }

    /// The id file `p` has in a history (a git blob id, hex), hashed as it
    /// streams by, at any size (None: no file there).
    pub fn file_id(&self, p: &RelPath) -> Result<Option<String>> {
        match self.open_file(p) {
            Ok(mut f) => {
                let size = f.size;
                blob_id(&mut f.inner, size)
                    .map(|(id, _)| Some(id))
                    .map_err(|e| io_error(e, p))
            }
            Err(e) if e.code == Code::NotFound => Ok(None),
            Err(e) => Err(e),
        }
    }

    /// The refusal of a whole-file operation on a file over `max_file_bytes`.
    fn too_large(&self, p: &RelPath, what: &str) -> Error {
        Error::invalid_parameter(
            "path",
            format!(
                "`{p}` is over the {} bytes kura {what} whole (MAX_FILE_BYTES); read it piece by piece with a scan",
                self.max_file_bytes
            ),
        )
        .with("path", p.to_string())
        .with("limit", self.max_file_bytes)
    }

    /// Read a whole file of at most `max_file_bytes` (links inside the
    /// root are followed); a larger one is `invalid_parameter`.
    pub fn read(&self, p: &RelPath) -> Result<Vec<u8>> {
        let f = self.open_file(p)?;
        if f.size > self.max_file_bytes {
            return Err(self.too_large(p, "reads"));
        }
        let mut buf = Vec::with_capacity(f.size as usize);
        // `take`: a file that grew since the size was read stays bounded.
        let mut f = f;
        (&mut f.inner)
            .take(self.max_file_bytes + 1)
            .read_to_end(&mut buf)
            .map_err(|e| io_error(e, p))?;
        if buf.len() as u64 > self.max_file_bytes {
            return Err(self.too_large(p, "reads"));
        }
        Ok(buf)
    }

    /// The first `max_file_bytes` of a file, cut at a character boundary,
    /// and whether that is not all of it: what indexing and searches see of
    /// a file too large to read whole.
    pub fn read_prefix(&self, p: &RelPath) -> Result<(Vec<u8>, bool)> {
        let mut f = self.open_file(p)?;
        let mut buf = Vec::with_capacity(f.size.min(self.max_file_bytes) as usize);
        (&mut f.inner)
            .take(self.max_file_bytes)
            .read_to_end(&mut buf)
            .map_err(|e| io_error(e, p))?;
        let cut = f.fill_buf().map(|rest| !rest.is_empty()).unwrap_or(false);
        if cut {
            trim_cut_char(&mut buf);
        }
        Ok((buf, cut))
    }

    /// Read a file the index listed, for its section text: cap-std's own
    /// sandbox only (no link pre-check, which costs a lookup per path
    /// segment). Nothing outside the root can be reached either way; this
    /// path just does not tell `out_of_scope` from other failures, which
    /// matters for a tool's argument, not for re-reading an indexed file.
    /// Like indexing, it sees at most the first `max_file_bytes`.
    pub fn read_indexed(&self, p: &RelPath) -> Option<String> {
        let f = self.dir.open(p.as_fs_path()).ok()?;
        let mut buf = Vec::new();
        let mut r = io::BufReader::new(f.into_std());
        (&mut r)
            .take(self.max_file_bytes)
            .read_to_end(&mut buf)
            .ok()?;
        if r.fill_buf().is_ok_and(|rest| !rest.is_empty()) {
            trim_cut_char(&mut buf);
        }
        String::from_utf8(buf).ok()
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
            if kind == EntryKind::File && is_temp_name(&name) {
                continue; // a write in progress, or debris the start-up sweep removes
            }
            let (size, mtime_ns, ctime_ns) = if kind == EntryKind::File {
                entry
                    .metadata()
                    .map(|m| (m.len(), mtime_of(&m), ctime_of(&m)))
                    .unwrap_or((0, 0, 0))
            } else {
                (0, 0, 0)
            };
            out.push(Entry {
                name,
                kind,
                size,
                mtime_ns,
                ctime_ns,
            });
        }
        out.sort_by(|a, b| a.kind.cmp(&b.kind).then_with(|| a.name.cmp(&b.name)));
        Ok(out)
    }

    /// Every regular file below `p` (recursively, links and temporary
    /// files skipped), sorted, with its size and modification time.
    pub fn walk_files(&self, p: &RelPath) -> Result<Vec<(RelPath, FileStat)>> {
        Ok(self.walk(p)?.files)
    }

    /// Every regular file and every folder below `p` (recursively, links
    /// and temporary files skipped), each sorted: a folder comes before
    /// the folders inside it.
    pub fn walk(&self, p: &RelPath) -> Result<Walk> {
        let mut out = Walk::default();
        let mut stack = vec![p.clone()];
        while let Some(dir) = stack.pop() {
            for e in self.list(&dir)? {
                let child = dir.join(&e.name);
                match e.kind {
                    EntryKind::Dir => {
                        out.dirs.push(child.clone());
                        stack.push(child);
                    }
                    EntryKind::File => out.files.push((
                        child,
                        FileStat {
                            is_dir: false,
                            size: e.size,
                            mtime_ns: e.mtime_ns,
                            ctime_ns: e.ctime_ns,
                        },
                    )),
                }
            }
        }
        out.files.sort_by(|a, b| a.0.cmp(&b.0));
        out.dirs.sort();
        Ok(out)
    }
}

/// `path` with links resolved, for comparing configured folders: the
/// longest existing ancestor canonicalised, the rest appended as given.
pub fn resolve_path(path: &Path) -> PathBuf {
    let mut rest = Vec::new();
    let mut at = path.to_path_buf();
    loop {
        if let Ok(c) = std::fs::canonicalize(&at) {
            return rest.iter().rev().fold(c, |p, name| p.join(name));
        }
        match (at.file_name(), at.parent()) {
            (Some(name), Some(parent)) => {
                rest.push(name.to_owned());
                at = parent.to_path_buf();
            }
            _ => return path.to_path_buf(),
        }
    }
}

/// Read a file the operator named on the command line or in the config
/// (the config file itself, a plugin component). These live outside every
/// root by design, so this is plain ambient access, used only at start-up.
pub fn read_operator_file(path: &Path) -> io::Result<Vec<u8>> {
    std::fs::read(path)
}

/// Whether this user may write beneath `path` (`kura doctor`).
pub fn writable(path: &Path) -> bool {
    rustix::fs::access(path, rustix::fs::Access::WRITE_OK).is_ok()
}

/// The bytes free for this user on the file system holding `path`.
pub fn free_bytes(path: &Path) -> io::Result<u64> {
    let s = rustix::fs::statvfs(path)?;
    Ok(s.f_bavail.saturating_mul(s.f_frsize))
}

/// Create the folder an MCP client keeps its configuration in (`kura
/// setup`), outside every root; the file itself is written through
/// [`Root::update`] on that folder.
pub fn create_operator_dir(path: &Path) -> io::Result<()> {
    std::fs::create_dir_all(path)
}

/// Write a file into a temporary folder an install made for itself (the
/// input of a conversion it runs), outside every root.
pub fn write_operator_file(path: &Path, bytes: &[u8]) -> io::Result<()> {
    std::fs::write(path, bytes)
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

/// Write a new bundle folder (`kura bundle`): `files` into `dest`, which
/// must not exist yet or be empty, and the ones named in `executable` with
/// mode 0755.
pub fn write_bundle(dest: &Path, files: &[(&str, &[u8])], executable: &[&str]) -> io::Result<()> {
    use std::os::unix::fs::PermissionsExt as _;
    std::fs::create_dir_all(dest)?;
    if std::fs::read_dir(dest)?.next().is_some() {
        return Err(io::Error::new(
            io::ErrorKind::AlreadyExists,
            "the folder is not empty; choose a new one",
        ));
    }
    materialize(dest, files)?;
    for rel in executable {
        std::fs::set_permissions(dest.join(rel), std::fs::Permissions::from_mode(0o755))?;
    }
    Ok(())
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
    #[allow(clippy::disallowed_methods)] // another program appends with std::fs
    fn a_read_hash_ends_where_the_read_found_the_end() {
        use std::io::Write as _;
        let (t, r) = root();
        std::fs::write(t.path().join("n.md"), "abc").unwrap();
        let mut reader = r.open_file(&rel("n.md")).unwrap().hashing();
        let mut text = String::new();
        reader.read_to_string(&mut text).unwrap();
        assert_eq!(text, "abc");
        // A writer adds to the file after the read found its end: the hash
        // is of what was read, not of what is there now.
        let mut other = std::fs::OpenOptions::new()
            .append(true)
            .open(t.path().join("n.md"))
            .unwrap();
        other.write_all(b"def").unwrap();
        let hash = reader.finish_hash(1 << 20).unwrap().unwrap();
        assert_eq!(hash, crate::text::sha256(b"abc"));
        // Stopped before the end, the rest is read through the same open.
        let mut reader = r.open_file(&rel("n.md")).unwrap().hashing();
        let mut first = [0u8; 2];
        reader.read_exact(&mut first).unwrap();
        let hash = reader.finish_hash(1 << 20).unwrap().unwrap();
        assert_eq!(hash, crate::text::sha256(b"abcdef"));
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
    fn file_system_failures_name_their_reason() {
        for (errno, reason) in [
            (libc::ENOSPC, "no_space"),
            (libc::EDQUOT, "no_space"),
            (libc::EACCES, "permission_denied"),
            (libc::ENAMETOOLONG, "name_too_long"),
            (libc::ELOOP, "link_loop"),
            (libc::EROFS, "read_only_file_system"),
            (libc::EIO, "io_error"),
        ] {
            let e = io_error(io::Error::from_raw_os_error(errno), &rel("a.md"));
            assert_eq!(e.code, Code::FilesystemError, "{errno}");
            assert_eq!(e.details["reason"], reason);
            assert!(e.details["os_error"].as_str().unwrap().contains("os error"));
        }
    }

    #[test]
    fn a_prefix_never_ends_inside_a_character() {
        let mut b = "ab日".as_bytes()[..4].to_vec(); // "ab" + 2 of 日's 3 bytes
        trim_cut_char(&mut b);
        assert_eq!(b, b"ab");
        let mut b = "ab日".as_bytes().to_vec();
        trim_cut_char(&mut b);
        assert_eq!(b, "ab日".as_bytes());
    }

    #[test]
    fn list_orders_dirs_first_and_hides_links() {
        let (t, r) = root();
        std::fs::create_dir(t.path().join("zdir")).unwrap();
        std::fs::write(t.path().join("a.md"), "x").unwrap();
        std::os::unix::fs::symlink(t.path().join("a.md"), t.path().join("link.md")).unwrap();
        std::fs::write(t.path().join(".kura-tmp-1-0"), "a write in progress").unwrap();
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
