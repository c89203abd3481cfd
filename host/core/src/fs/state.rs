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

    /// Remove the file `sub/name` (gone already is fine).
    pub fn remove(&self, name: &str) -> io::Result<()> {
        match self.dir.remove_file(name) {
            Err(e) if e.kind() != io::ErrorKind::NotFound => Err(e),
            _ => Ok(()),
        }
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
        self.dir.create_dir_all(sub)?;
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
        let (sub, file) = match name.rsplit_once('/') {
            Some((sub, file)) => (Some(sub), file),
            None => (None, name),
        };
        let dir = match sub {
            Some(sub) => {
                self.dir.create_dir_all(sub)?;
                self.dir.open_dir(sub)?
            }
            None => self.dir.try_clone()?,
        };
        super::write::replace_atomically(&dir, file, bytes, None)
    }
}
