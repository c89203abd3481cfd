//! The state folder (outside every root): compiled component cache now,
//! search indexes later. Where no folder is writable, kura runs without one.

use std::io;
use std::path::{Path, PathBuf};

use cap_std::ambient_authority;
use cap_std::fs::Dir;

pub struct StateDir {
    dir: Dir,
    path: PathBuf,
}

/// A state folder another user could write (its owner is not kura's
/// user, or its group or others may write it).
#[derive(Debug, thiserror::Error)]
#[error(
    "the state folder {path} is {why}: kura loads compiled code and replays journals from it, \
     so it must be owned by kura's user and writable by no one else (fix: {fix})"
)]
pub struct Exposed {
    path: String,
    why: String,
    fix: String,
}

impl Exposed {
    /// Whether `e` is this refusal (and not, say, a read-only disk).
    pub fn is(e: &io::Error) -> bool {
        e.get_ref().is_some_and(|inner| inner.is::<Exposed>())
    }
}

/// Refuse a folder another user could write.
fn guard(meta: &cap_std::fs::Metadata, path: &Path) -> io::Result<()> {
    use cap_fs_ext::OsMetadataExt as _;
    let shown = path.display().to_string();
    let me = rustix::process::geteuid().as_raw();
    let mode = meta.mode() & 0o7777;
    let exposed = |why: String, fix: String| {
        Err(io::Error::new(
            io::ErrorKind::PermissionDenied,
            Exposed {
                path: shown.clone(),
                why,
                fix,
            },
        ))
    };
    if meta.uid() != me {
        return exposed(
            format!("owned by user {}, not {me}", meta.uid()),
            format!("use a folder of your own, or chown {me} {shown}"),
        );
    }
    if mode & 0o022 != 0 {
        return exposed(
            format!("writable by its group or others (mode {mode:o})"),
            format!("chmod go-w {shown}"),
        );
    }
    Ok(())
}

impl StateDir {
    /// Create (if needed, readable by its owner only) and open the state
    /// folder. One another user could write is refused ([`Exposed`]): kura
    /// loads compiled native code and replays move journals from it, so
    /// whoever can write it can run code as kura and write into the vault.
    pub fn open(path: &Path) -> io::Result<StateDir> {
        use std::os::unix::fs::DirBuilderExt as _;
        std::fs::DirBuilder::new()
            .recursive(true)
            .mode(0o700)
            .create(path)?;
        let dir = Dir::open_ambient_dir(path, ambient_authority())?;
        guard(&dir.dir_metadata()?, path)?;
        Ok(StateDir {
            dir,
            path: path.to_path_buf(),
        })
    }

    /// The folder `sub` (made as needed) as a state folder of its own:
    /// its files are then reached without walking `sub` again.
    pub fn sub(&self, sub: &str) -> io::Result<StateDir> {
        Ok(StateDir {
            dir: self.sub_dir(Some(sub))?,
            path: self.path.join(sub),
        })
    }

    /// Another handle on the same folder (for a background thread).
    pub fn try_clone(&self) -> io::Result<StateDir> {
        Ok(StateDir {
            dir: self.dir.try_clone()?,
            path: self.path.clone(),
        })
    }

    /// The files of `sub` (not folders): name, size and modification time;
    /// empty when `sub` does not exist. A file removed while the folder is
    /// read is left out.
    pub fn list(&self, sub: &str) -> io::Result<Vec<(String, u64, std::time::SystemTime)>> {
        let dir = match self.dir.open_dir(sub) {
            Ok(d) => d,
            Err(e) if e.kind() == io::ErrorKind::NotFound => return Ok(Vec::new()),
            Err(e) => return Err(e),
        };
        let mut out = Vec::new();
        for entry in dir.entries()? {
            let entry = entry?;
            // Removed by another process since the folder was read: it is
            // not there, and the others still are.
            let meta = match entry.metadata() {
                Err(e) if e.kind() == io::ErrorKind::NotFound => continue,
                m => m?,
            };
            if meta.is_file() {
                let modified = meta
                    .modified()
                    .map(|t| t.into_std())
                    .unwrap_or(std::time::SystemTime::UNIX_EPOCH);
                out.push((
                    entry.file_name().to_string_lossy().into_owned(),
                    meta.len(),
                    modified,
                ));
            }
        }
        Ok(out)
    }

    /// Remove the file `sub/name` (gone already is fine), durably: its
    /// folder is fsynced, so a power cut cannot bring it back (a finished
    /// move's journal, replayed again, would redo the move).
    pub fn remove(&self, name: &str) -> io::Result<()> {
        crate::fault::step()?;
        match self.dir.remove_file(name) {
            Err(e) if e.kind() != io::ErrorKind::NotFound => Err(e),
            Err(_) => Ok(()),
            Ok(()) => {
                let parent = match name.rsplit_once('/') {
                    Some((sub, _)) => self.dir.open_dir(sub)?,
                    None => self.dir.try_clone()?,
                };
                super::write::sync_dir(&parent)
            }
        }
    }

    /// Remove the file `sub/name` (gone already is fine) without syncing
    /// its folder: for files whose return after a power cut is harmless
    /// (a loose object that a pack holds too).
    pub fn remove_unsynced(&self, name: &str) -> io::Result<()> {
        crate::fault::step()?;
        match self.dir.remove_file(name) {
            Err(e) if e.kind() != io::ErrorKind::NotFound => Err(e),
            _ => Ok(()),
        }
    }

    /// `sub` (made as needed, each new folder fsynced into its parent so
    /// that what is written in it survives a power cut).
    fn sub_dir(&self, sub: Option<&str>) -> io::Result<Dir> {
        let mut dir = self.dir.try_clone()?;
        for seg in sub.into_iter().flat_map(|s| s.split('/')) {
            match dir.create_dir(seg) {
                Ok(()) => super::write::sync_dir(&dir)?,
                Err(e) if e.kind() == io::ErrorKind::AlreadyExists => {}
                Err(e) => return Err(e),
            }
            dir = dir.open_dir(seg)?;
        }
        Ok(dir)
    }

    /// An exclusive advisory lock on the file `sub/name` (made if missing),
    /// held until the returned file is dropped; waits while another
    /// process or handle holds it.
    pub fn lock(&self, name: &str) -> io::Result<std::fs::File> {
        loop {
            let f = self.lock_file(name)?;
            f.lock()?;
            if self.still_named(name, &f)? {
                return Ok(f);
            }
        }
    }

    /// Whether `f` (locked) is still the file `name` names: a holder may
    /// have removed the file between this handle's opening and its lock
    /// (a pending call's file recorded and removed by another kura), and a
    /// lock on a removed file guards nothing and what is written to it is
    /// lost.
    fn still_named(&self, name: &str, f: &std::fs::File) -> io::Result<bool> {
        use std::os::unix::fs::MetadataExt as _;
        let held = f.metadata()?;
        match self.dir.symlink_metadata(name) {
            Ok(there) => {
                use cap_fs_ext::OsMetadataExt as _;
                Ok(there.dev() == held.dev() && there.ino() == held.ino())
            }
            Err(e) if e.kind() == io::ErrorKind::NotFound => Ok(false),
            Err(e) => Err(e),
        }
    }

    /// The file `sub/name` a lock is taken on (made if missing).
    fn lock_file(&self, name: &str) -> io::Result<std::fs::File> {
        let (sub, file) = split(name);
        let dir = self.sub_dir(sub)?;
        let mut o = cap_std::fs::OpenOptions::new();
        o.read(true).write(true).create(true);
        Ok(dir.open_with(file, &o)?.into_std())
    }

    /// [`StateDir::lock`] without waiting: None while another process or
    /// handle holds it.
    pub fn try_lock(&self, name: &str) -> io::Result<Option<std::fs::File>> {
        loop {
            let f = self.lock_file(name)?;
            match f.try_lock() {
                Ok(()) if self.still_named(name, &f)? => return Ok(Some(f)),
                Ok(()) => {}
                Err(std::fs::TryLockError::WouldBlock) => return Ok(None),
                Err(std::fs::TryLockError::Error(e)) => return Err(e),
            }
        }
    }

    /// Remove the temporary files a killed kura left anywhere in the state
    /// folder (a cache entry, the lock, a journal or vectors half written),
    /// from each folder no write holds (see [`StateDir::write`]). Returns
    /// how many were removed.
    pub fn sweep_temp(&self) -> usize {
        self.dir
            .try_clone()
            .map_or(0, super::write::sweep_temp_tree)
    }

    pub fn path(&self) -> &Path {
        &self.path
    }

    /// Read `sub/name`, or None when it does not exist.
    pub fn read(&self, name: &str) -> io::Result<Option<Vec<u8>>> {
        match self.dir.read(name) {
            Ok(b) => Ok(Some(b)),
            Err(e) if e.kind() == io::ErrorKind::NotFound => Ok(None),
            Err(e) => Err(e),
        }
    }

    /// The length of `sub/name`, its inode (a file written anew under the
    /// name has another) and its bytes from `offset` on (none when it is
    /// not longer than that), or None when it does not exist: an
    /// append-only file read where the last look left it.
    pub fn read_from(&self, name: &str, offset: u64) -> io::Result<Option<(u64, u64, Vec<u8>)>> {
        use std::io::{Read as _, Seek as _};
        use std::os::unix::fs::MetadataExt as _;
        let mut f = match self.dir.open(name) {
            Ok(f) => f.into_std(),
            Err(e) if e.kind() == io::ErrorKind::NotFound => return Ok(None),
            Err(e) => return Err(e),
        };
        let meta = f.metadata()?;
        let len = meta.len();
        let mut rest = Vec::new();
        if len > offset {
            f.seek(io::SeekFrom::Start(offset))?;
            f.read_to_end(&mut rest)?;
        }
        Ok(Some((len, meta.ino(), rest)))
    }

    /// Map `sub/name` into memory read-only, or None when it does not
    /// exist. The pages are the file's, shared with every process that
    /// maps it and read from disk as they are touched.
    pub fn map(&self, name: &str) -> io::Result<Option<memmap2::Mmap>> {
        let file = match self.dir.open(name) {
            Ok(f) => f.into_std(),
            Err(e) if e.kind() == io::ErrorKind::NotFound => return Ok(None),
            Err(e) => return Err(e),
        };
        // SAFETY: a mapped file must not change under the mapping. kura
        // never writes a state file in place: `write` puts a new file
        // under the name, so a mapping keeps the pages of the file it
        // mapped. The folder is refused when another user could write it
        // (`guard`).
        unsafe { memmap2::Mmap::map(&file) }.map(Some)
    }

    /// Create `sub` (and parents) and return its full path, for libraries
    /// that manage their own files inside it (tantivy's index folder).
    pub fn ensure_dir(&self, sub: &str) -> io::Result<PathBuf> {
        self.sub_dir(Some(sub))?;
        Ok(self.path.join(sub))
    }

    /// Empty `sub` (remove and recreate it).
    pub fn clear_dir(&self, sub: &str) -> io::Result<()> {
        match self.dir.remove_dir_all(sub) {
            Ok(()) => {}
            Err(e) if e.kind() == io::ErrorKind::NotFound => {}
            Err(e) => return Err(e),
        }
        self.dir.create_dir_all(sub)
    }

    /// Append `bytes` to `sub/name` (created if missing) in one write call,
    /// without fsync: for journals whose loss costs only a re-check.
    pub fn append(&self, name: &str, bytes: &[u8]) -> io::Result<()> {
        use std::io::Write;
        let mut options = cap_std::fs::OpenOptions::new();
        options.append(true).create(true);
        self.dir.open_with(name, &options)?.write_all(bytes)
    }

    /// Write `sub/name` atomically, creating `sub` as needed. The folder's
    /// advisory lock is held from before the temporary file exists until
    /// after the rename, so that a sweep never takes a live one for debris.
    pub fn write(&self, name: &str, bytes: &[u8]) -> io::Result<()> {
        self.place(name, bytes, super::write::Expect::Any)
    }

    /// Write `files` (names in one folder `sub`), each atomically, in
    /// order, and the folder synced once after the last.
    pub fn write_all(&self, sub: &str, files: &[(&str, &[u8])]) -> io::Result<()> {
        let dir = self.sub_dir(Some(sub))?;
        let held = super::write::open_dir_fd(&dir)?;
        held.lock()?;
        for (name, bytes) in files {
            super::write::place_unsynced(&dir, name, bytes, super::write::Expect::Any)?;
        }
        super::write::sync_dir(&dir)
    }

    /// Write `sub/name`, which must not exist yet (never replacing one).
    pub fn write_new(&self, name: &str, bytes: &[u8]) -> io::Result<()> {
        self.place(name, bytes, super::write::Expect::Absent)
    }

    fn place(&self, name: &str, bytes: &[u8], expect: super::write::Expect) -> io::Result<()> {
        let (sub, file) = split(name);
        let dir = self.sub_dir(sub)?;
        let held = super::write::open_dir_fd(&dir)?;
        held.lock()?;
        super::write::replace_atomically(&dir, file, bytes, expect)
    }
}

/// `sub/name` as its folder and its name.
fn split(name: &str) -> (Option<&str>, &str) {
    match name.rsplit_once('/') {
        Some((sub, file)) => (Some(sub), file),
        None => (None, name),
    }
}

#[cfg(test)]
#[allow(clippy::disallowed_methods)] // the test sets modes as a user would
mod tests {
    use std::os::unix::fs::{MetadataExt as _, PermissionsExt as _};

    use super::*;

    #[test]
    fn a_state_folder_others_can_write_is_refused() {
        let t = tempfile::tempdir().unwrap();
        let path = t.path().join("state");
        StateDir::open(&path).unwrap();
        let mode = || std::fs::metadata(&path).unwrap().mode() & 0o7777;
        assert_eq!(mode(), 0o700, "made for its owner only");
        for exposed in [0o777, 0o770, 0o1777, 0o722] {
            std::fs::set_permissions(&path, std::fs::Permissions::from_mode(exposed)).unwrap();
            let e = StateDir::open(&path).err().expect("refused");
            assert!(Exposed::is(&e), "{e}");
            assert!(e.to_string().contains("chmod go-w"), "{e}");
        }
        std::fs::set_permissions(&path, std::fs::Permissions::from_mode(0o755)).unwrap();
        StateDir::open(&path).unwrap();
        // Not every failure is this one.
        let file = t.path().join("file");
        std::fs::write(&file, "x").unwrap();
        let e = StateDir::open(&file).err().unwrap();
        assert!(!Exposed::is(&e), "{e}");
    }

    /// Issue 67: a call's pending file is made, then locked; another kura
    /// recording what a dead one left takes each unlocked pending file,
    /// and removes an empty one. A lock taken must be on the file its name
    /// names, or what the call writes there goes to a removed file.
    #[test]
    fn a_lock_is_never_taken_on_a_file_another_holder_removed() {
        let t = tempfile::tempdir().unwrap();
        let state = std::sync::Arc::new(StateDir::open(t.path()).unwrap());
        let stop = std::sync::Arc::new(std::sync::atomic::AtomicBool::new(false));
        let recorder = {
            let (state, stop) = (state.clone(), stop.clone());
            std::thread::spawn(move || {
                while !stop.load(std::sync::atomic::Ordering::Relaxed) {
                    if let Ok(Some(held)) = state.try_lock("pending/1-0.jsonl") {
                        if held.metadata().unwrap().len() == 0 {
                            state.remove("pending/1-0.jsonl").unwrap();
                        }
                        drop(held);
                    }
                }
            })
        };
        let path = t.path().join("pending/1-0.jsonl");
        for _ in 0..3_000 {
            let held = state.lock("pending/1-0.jsonl").unwrap();
            let named = std::fs::metadata(&path).map(|m| m.ino());
            assert_eq!(
                named.ok(),
                Some(held.metadata().unwrap().ino()),
                "locked a removed file"
            );
        }
        stop.store(true, std::sync::atomic::Ordering::Relaxed);
        recorder.join().unwrap();
    }

    /// Two kuras share a state folder: one removing its move journal while
    /// the other lists `moves/` at start-up must not hide the other's
    /// journals (replay would then skip an interrupted move).
    #[test]
    fn a_file_removed_while_listing_hides_no_other() {
        let t = tempfile::tempdir().unwrap();
        let state = StateDir::open(t.path()).unwrap();
        state.write("moves/stays.json", b"{}").unwrap();
        let stop = std::sync::Arc::new(std::sync::atomic::AtomicBool::new(false));
        let churn = {
            let (dir, stop) = (t.path().join("moves"), stop.clone());
            std::thread::spawn(move || {
                let mut n = 0u64;
                while !stop.load(std::sync::atomic::Ordering::Relaxed) {
                    let f = dir.join(format!("churn-{}", n % 64));
                    let _ = std::fs::write(&f, "x");
                    let _ = std::fs::remove_file(&f);
                    n += 1;
                }
            })
        };
        for _ in 0..3_000 {
            let listed = state.list("moves").expect("listed whatever vanished");
            assert!(listed.iter().any(|(n, ..)| n == "stays.json"), "{listed:?}");
        }
        stop.store(true, std::sync::atomic::Ordering::Relaxed);
        churn.join().unwrap();
    }

    #[test]
    fn a_killed_writer_s_temporary_files_are_swept_anywhere_in_the_state_folder() {
        let t = tempfile::tempdir().unwrap();
        let state = StateDir::open(t.path()).unwrap();
        state.write("components/lock.toml", b"x").unwrap();
        state.write("moves/vault-1.json", b"{}").unwrap();
        let debris = [
            format!("{}1-0", super::super::TEMP_PREFIX),
            format!("components/{}2-1", super::super::TEMP_PREFIX),
            format!("moves/{}3-2", super::super::TEMP_PREFIX),
        ];
        for d in &debris {
            std::fs::write(t.path().join(d), "half").unwrap();
        }
        // A write in progress in `vectors` holds its folder's lock.
        std::fs::create_dir_all(t.path().join("vectors")).unwrap();
        let live = t
            .path()
            .join(format!("vectors/{}4-3", super::super::TEMP_PREFIX));
        std::fs::write(&live, "being written").unwrap();
        let held = std::fs::File::open(t.path().join("vectors")).unwrap();
        held.lock().unwrap();
        assert_eq!(state.sweep_temp(), 3);
        for d in &debris {
            assert!(!t.path().join(d).exists(), "{d}");
        }
        assert!(live.exists(), "a live write's file stays");
        assert_eq!(
            std::fs::read(t.path().join("components/lock.toml")).unwrap(),
            b"x"
        );
        drop(held);
        assert_eq!(state.sweep_temp(), 1);
    }
}
