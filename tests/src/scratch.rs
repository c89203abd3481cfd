//! Where the tests' scratch folders go: a RAM file system when the machine
//! has one with room (Linux's `/dev/shm`), else the system's temporary
//! folder; a `TMPDIR` someone set wins.
//!
//! Why: the suite creates and removes files by the thousand (each
//! fixture's copies, indexes and history; each step of the write-fault
//! sweeps). On an ext4 without a journal, as on this project's machines,
//! the inode allocator skips every inode removed in the last half minute,
//! reading each one's table block to learn so: `perf` put 15 % of a whole
//! run's CPU in `find_inode_bit`/`recently_deleted`, and the end-to-end
//! binary took 288 s on the disk and 240 s here (docs/benchmarks.md). What
//! the tests prove does not depend on it: a kill ends a process, not the
//! machine, so the page cache holds the same bytes on either; the FUSE tests
//! mount their own file system.

use std::path::{Path, PathBuf};
use std::sync::OnceLock;

/// Room a RAM file system must have left to be used (a whole run's folders
/// peak at about 223 MB).
const ROOM: u64 = 4 << 30;

/// A new scratch folder for the calling test, removed when dropped. Its
/// name carries the test's (libtest names each test's thread after it), so
/// a folder left behind says which test left it.
pub fn folder() -> tempfile::TempDir {
    let test: String = std::thread::current()
        .name()
        .unwrap_or("")
        .chars()
        .map(|c| if c.is_ascii_alphanumeric() { c } else { '_' })
        .take(80)
        .collect();
    named(&format!("kura-e2e-{test}-"))
}

/// A new scratch folder whose name starts with `prefix` (one that no test
/// owns), removed when dropped.
pub fn named(prefix: &str) -> tempfile::TempDir {
    tempfile::Builder::new()
        .prefix(prefix)
        .tempdir_in(base())
        .unwrap()
}

/// The folder scratch folders are made in.
pub fn base() -> &'static Path {
    static BASE: OnceLock<PathBuf> = OnceLock::new();
    BASE.get_or_init(|| {
        let ram = Path::new("/dev/shm");
        if std::env::var_os("TMPDIR").is_none() && roomy_ram(ram) {
            ram.to_path_buf()
        } else {
            std::env::temp_dir()
        }
    })
}

/// Whether `dir` is a tmpfs that can be written and executed from and has
/// [`ROOM`] free.
#[cfg(target_os = "linux")]
#[allow(clippy::unnecessary_cast)] // the fields' types differ between targets
fn roomy_ram(dir: &Path) -> bool {
    use std::os::unix::ffi::OsStrExt;
    const TMPFS_MAGIC: i64 = 0x0102_1994;
    let Ok(c) = std::ffi::CString::new(dir.as_os_str().as_bytes()) else {
        return false;
    };
    let mut fs = std::mem::MaybeUninit::<libc::statfs>::uninit();
    let mut vfs = std::mem::MaybeUninit::<libc::statvfs>::uninit();
    // SAFETY: `c` is a NUL-terminated path, each buffer of its call's type.
    if unsafe { libc::statfs(c.as_ptr(), fs.as_mut_ptr()) } != 0
        || unsafe { libc::statvfs(c.as_ptr(), vfs.as_mut_ptr()) } != 0
    {
        return false;
    }
    // SAFETY: both calls succeeded, so they filled their buffers.
    let (fs, vfs) = unsafe { (fs.assume_init(), vfs.assume_init()) };
    let refused = libc::ST_RDONLY | libc::ST_NOEXEC;
    fs.f_type as i64 == TMPFS_MAGIC
        && vfs.f_flag & refused == 0
        && (vfs.f_bavail as u64).saturating_mul(vfs.f_frsize as u64) >= ROOM
        && tempfile::Builder::new().tempdir_in(dir).is_ok()
}

#[cfg(not(target_os = "linux"))]
fn roomy_ram(_: &Path) -> bool {
    false
}

#[cfg(test)]
mod tests {
    #[test]
    fn a_scratch_folder_is_made_and_removed_under_the_base() {
        let f = super::folder();
        assert!(f.path().starts_with(super::base()));
        let p = f.path().to_path_buf();
        drop(f);
        assert!(!p.exists());
    }
}
