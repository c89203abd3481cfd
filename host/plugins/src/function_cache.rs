//! Cranelift's compiled functions kept between compiles (wasmtime's
//! incremental compilation), so that a component compiles only the
//! functions no component compiled before it had. componentize-py puts
//! the same CPython into every component it builds and componentize-js the
//! same StarlingMonkey (measured: every function body of its 12,000 the
//! same, byte for byte, across the examples and templates), and a rebuilt
//! component changes a few functions of its own: a compile after the first
//! is then mostly lookups.
//!
//! One file in the state folder, [`FILE`]: a magic line, the records (key
//! and value, each after its length as a little-endian u32) and the BLAKE3
//! hash of all before it, checked on load, so a torn or damaged file is
//! ignored (and replaced at the next write). A value is machine code
//! trusted as the `.cwasm` entries beside it are: the state folder is
//! refused when someone else can write it (`fs::Exposed`).
//!
//! The functions are in memory only while a compile runs: loaded when the
//! first compile starts, written back when the last one ends (if any
//! compiled functions the file lacked, merged with what another process
//! wrote meanwhile), then dropped. The file is bounded at [`MAX_BYTES`]:
//! the functions the compiles used first, then the others in file order.

use std::borrow::Cow;
use std::collections::HashMap;
use std::sync::{Arc, Mutex, MutexGuard, PoisonError};

use crate::fs::StateDir;

pub const FILE: &str = "components/functions.bin";
const MAGIC: &[u8] = b"kura-functions-1\n";
/// About five of the largest toolchains' runtimes (CPython, StarlingMonkey).
pub const MAX_BYTES: usize = 512 << 20;

/// The incremental cache of one runtime's engine, over its state folder.
pub struct FunctionCache {
    state: StateDir,
    inner: Mutex<Inner>,
}

#[derive(Default)]
struct Inner {
    /// Compiles running now; the functions are dropped when none is.
    running: usize,
    functions: HashMap<Box<[u8]>, Function>,
    /// Functions compiled since they were loaded.
    added: usize,
    reused: u64,
    compiled: u64,
}

struct Function {
    code: Box<[u8]>,
    /// Looked up or compiled by this process's compiles (kept first).
    used: bool,
}

/// How many functions a compile took from the cache and how many it
/// compiled.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub struct Reuse {
    pub reused: u64,
    pub compiled: u64,
}

impl std::fmt::Display for Reuse {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        write!(
            f,
            "{} of {} functions from the compile cache",
            self.reused,
            self.reused + self.compiled
        )
    }
}

/// One compile's use of the cache: the functions stay loaded until the
/// last running compile's ends.
pub struct Compile {
    cache: Arc<FunctionCache>,
    start: Reuse,
}

impl FunctionCache {
    pub fn new(state: StateDir) -> Arc<FunctionCache> {
        Arc::new(FunctionCache {
            state,
            inner: Mutex::default(),
        })
    }

    fn lock(&self) -> MutexGuard<'_, Inner> {
        // A panic while holding it leaves a map still whole (each change
        // is one insert), so the cache goes on.
        self.inner.lock().unwrap_or_else(PoisonError::into_inner)
    }

    /// Start a compile: load the functions if none is running.
    pub fn compile(self: &Arc<Self>) -> Compile {
        let mut inner = self.lock();
        if inner.running == 0 {
            inner.functions.clear();
            self.merge_file(&mut inner.functions);
            inner.added = 0;
        }
        inner.running += 1;
        let start = Reuse {
            reused: inner.reused,
            compiled: inner.compiled,
        };
        drop(inner);
        Compile {
            cache: self.clone(),
            start,
        }
    }

    /// Add the file's functions to `functions` (those it has already
    /// stay as they are): none if the file is missing or damaged.
    fn merge_file(&self, functions: &mut HashMap<Box<[u8]>, Function>) {
        let bytes = match self.state.read(FILE) {
            Ok(Some(bytes)) => bytes,
            Ok(None) => return,
            Err(e) => return tracing::warn!("cannot read the compile cache {FILE}: {e}"),
        };
        let Some(records) = decode(&bytes) else {
            return tracing::warn!("the compile cache {FILE} is damaged; compiling anew");
        };
        for (key, code) in records {
            functions.entry(key.into()).or_insert_with(|| Function {
                code: code.into(),
                used: false,
            });
        }
    }

    /// Write the functions, with those another process wrote since they
    /// were loaded, used ones first, up to the bound.
    fn store(&self, inner: &mut Inner) {
        self.merge_file(&mut inner.functions);
        let mut order: Vec<(&[u8], &Function)> =
            inner.functions.iter().map(|(k, f)| (&k[..], f)).collect();
        // Used first; within each, a fixed order (the file's bytes do not
        // depend on the map's).
        order.sort_unstable_by(|a, b| b.1.used.cmp(&a.1.used).then(a.0.cmp(b.0)));
        let mut body = MAGIC.to_vec();
        for (key, f) in order {
            if body.len() + 8 + key.len() + f.code.len() > MAX_BYTES {
                break;
            }
            for part in [key, &f.code[..]] {
                body.extend_from_slice(&(part.len() as u32).to_le_bytes());
                body.extend_from_slice(part);
            }
        }
        let hash = blake3::hash(&body);
        body.extend_from_slice(hash.as_bytes());
        if let Err(e) = self.state.write(FILE, &body) {
            tracing::warn!("cannot write the compile cache {FILE}: {e}");
        }
    }
}

impl Compile {
    /// End the compile: what it reused (counting any compile that ran at
    /// the same time).
    pub fn end(self) -> Reuse {
        let inner = self.cache.lock();
        let reuse = Reuse {
            reused: inner.reused - self.start.reused,
            compiled: inner.compiled - self.start.compiled,
        };
        drop(inner);
        reuse
    }
}

/// The last running compile to end writes the file and drops the functions.
impl Drop for Compile {
    fn drop(&mut self) {
        let mut inner = self.cache.lock();
        inner.running -= 1;
        if inner.running == 0 {
            if inner.added > 0 {
                self.cache.store(&mut inner);
            }
            inner.functions = HashMap::new();
        }
    }
}

/// The records of a file, if its magic and hash are right.
fn decode(bytes: &[u8]) -> Option<Vec<(&[u8], &[u8])>> {
    let (body, hash) = bytes.split_at_checked(bytes.len().checked_sub(32)?)?;
    if blake3::hash(body).as_bytes() != hash {
        return None;
    }
    let mut rest = body.strip_prefix(MAGIC)?;
    let mut out = Vec::new();
    while !rest.is_empty() {
        let key = part(&mut rest)?;
        let code = part(&mut rest)?;
        out.push((key, code));
    }
    Some(out)
}

/// The next length-prefixed part of `rest`.
fn part<'a>(rest: &mut &'a [u8]) -> Option<&'a [u8]> {
    let (len, tail) = rest.split_at_checked(4)?;
    let len = u32::from_le_bytes(len.try_into().ok()?) as usize;
    let (part, tail) = tail.split_at_checked(len)?;
    *rest = tail;
    Some(part)
}

impl wasmtime::CacheStore for FunctionCache {
    fn get(&self, key: &[u8]) -> Option<Cow<'_, [u8]>> {
        let mut inner = self.lock();
        // Outside a compile (none through `compile`), nothing is loaded.
        if inner.running == 0 {
            return None;
        }
        match inner.functions.get_mut(key) {
            Some(f) => {
                f.used = true;
                let code = f.code.to_vec();
                inner.reused += 1;
                Some(Cow::Owned(code))
            }
            None => {
                inner.compiled += 1;
                None
            }
        }
    }

    fn insert(&self, key: &[u8], value: Vec<u8>) -> bool {
        let mut inner = self.lock();
        if inner.running == 0 {
            return false;
        }
        inner.functions.insert(
            key.into(),
            Function {
                code: value.into(),
                used: true,
            },
        );
        inner.added += 1;
        true
    }
}

impl std::fmt::Debug for FunctionCache {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("FunctionCache")
            .field("state", &self.state.path())
            .finish_non_exhaustive()
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use wasmtime::CacheStore as _;

    fn cache() -> (tempfile::TempDir, Arc<FunctionCache>) {
        let dir = tempfile::tempdir().unwrap();
        let state = StateDir::open(&dir.path().join("state")).unwrap();
        (dir, FunctionCache::new(state))
    }

    #[test]
    fn a_function_compiled_once_is_reused_by_the_next_compile() {
        let (_dir, cache) = cache();
        let c = cache.compile();
        assert_eq!(cache.get(b"k1"), None);
        assert!(cache.insert(b"k1", b"code one".to_vec()));
        assert_eq!(
            c.end(),
            Reuse {
                reused: 0,
                compiled: 1
            }
        );
        // Dropped from memory, read again from the file.
        assert!(cache.lock().functions.is_empty());
        let c = cache.compile();
        assert_eq!(cache.get(b"k1").as_deref(), Some(&b"code one"[..]));
        assert_eq!(cache.get(b"k2"), None);
        assert_eq!(
            c.end(),
            Reuse {
                reused: 1,
                compiled: 1
            }
        );
    }

    #[test]
    fn a_damaged_file_is_ignored_then_replaced() {
        let (_dir, cache) = cache();
        let c = cache.compile();
        cache.insert(b"k1", b"code one".to_vec());
        c.end();
        let mut bytes = cache.state.read(FILE).unwrap().unwrap();
        let at = bytes.len() - 40;
        bytes[at] ^= 1;
        cache.state.write(FILE, &bytes).unwrap();
        let c = cache.compile();
        assert_eq!(cache.get(b"k1"), None, "a flipped bit is never loaded");
        cache.insert(b"k2", b"code two".to_vec());
        c.end();
        let bytes = cache.state.read(FILE).unwrap().unwrap();
        let records = decode(&bytes).expect("whole again");
        assert_eq!(records, vec![(&b"k2"[..], &b"code two"[..])]);
    }

    #[test]
    fn another_process_s_functions_are_kept_when_writing() {
        let (dir, cache) = cache();
        let other = FunctionCache::new(StateDir::open(&dir.path().join("state")).unwrap());
        let (a, b) = (cache.compile(), other.compile());
        cache.insert(b"mine", b"1".to_vec());
        other.insert(b"theirs", b"2".to_vec());
        b.end();
        a.end();
        let c = cache.compile();
        assert!(cache.get(b"mine").is_some() && cache.get(b"theirs").is_some());
        c.end();
    }

    #[test]
    fn nothing_is_stored_outside_a_compile() {
        let (_dir, cache) = cache();
        assert!(!cache.insert(b"k", b"v".to_vec()));
        assert_eq!(cache.get(b"k"), None);
        assert_eq!(cache.state.read(FILE).unwrap(), None);
    }

    #[test]
    fn a_truncated_record_is_not_decoded() {
        let mut body = MAGIC.to_vec();
        body.extend_from_slice(&9u32.to_le_bytes());
        body.extend_from_slice(b"short");
        let hash = blake3::hash(&body);
        body.extend_from_slice(hash.as_bytes());
        assert_eq!(decode(&body), None);
        assert_eq!(decode(b"tiny"), None);
    }
}
