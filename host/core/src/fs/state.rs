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

impl StateDir {
    /// Create (if needed) and open the state folder.
    pub fn open(path: &Path) -> io::Result<StateDir> {
        std::fs::create_dir_all(path)?;
        let dir = Dir::open_ambient_dir(path, ambient_authority())?;
        Ok(StateDir {
            dir,
            path: path.to_path_buf(),
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
    /// empty when `sub` does not exist.
    pub fn list(&self, sub: &str) -> io::Result<Vec<(String, u64, std::time::SystemTime)>> {
        let dir = match self.dir.open_dir(sub) {
            Ok(d) => d,
            Err(e) if e.kind() == io::ErrorKind::NotFound => return Ok(Vec::new()),
            Err(e) => return Err(e),
        };
        let mut out = Vec::new();
        for entry in dir.entries()? {
            let entry = entry?;
            let meta = entry.metadata()?;
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
        let f = self.lock_file(name)?;
        f.lock()?;
        Ok(f)
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
        let f = self.lock_file(name)?;
        match f.try_lock() {
            Ok(()) => Ok(Some(f)),
            Err(std::fs::TryLockError::WouldBlock) => Ok(None),
            Err(std::fs::TryLockError::Error(e)) => Err(e),
        }
    }

    /// Remove kura's temporary files from `sub`: debris of a process
    /// killed while writing there. Only for a folder whose writers all
    /// hold a lock the caller holds now.
    pub fn sweep_temp(&self, sub: &str) -> usize {
        let Ok(dir) = self.dir.open_dir(sub) else {
            return 0;
        };
        let Ok(entries) = dir.entries() else {
            return 0;
        };
        let mut removed = 0;
        for e in entries.flatten() {
            if let Ok(name) = e.file_name().into_string()
                && super::is_temp_name(&name)
                && e.file_type().is_ok_and(|t| t.is_file())
                && dir.remove_file(&name).is_ok()
            {
                removed += 1;
            }
        }
        removed
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

    /// Write `sub/name` atomically, creating `sub` as needed.
    pub fn write(&self, name: &str, bytes: &[u8]) -> io::Result<()> {
        let (sub, file) = split(name);
        let dir = self.sub_dir(sub)?;
        super::write::replace_atomically(&dir, file, bytes, super::write::Expect::Any)
    }

    /// Write `sub/name`, which must not exist yet (never replacing one).
    pub fn write_new(&self, name: &str, bytes: &[u8]) -> io::Result<()> {
        let (sub, file) = split(name);
        let dir = self.sub_dir(sub)?;
        super::write::replace_atomically(&dir, file, bytes, super::write::Expect::Absent)
    }
}

/// `sub/name` as its folder and its name.
fn split(name: &str) -> (Option<&str>, &str) {
    match name.rsplit_once('/') {
        Some((sub, file)) => (Some(sub), file),
        None => (None, name),
    }
}
