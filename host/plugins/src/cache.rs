//! The compiled-component cache in the state folder, so that a start after
//! the first does not run Cranelift (an 18 MB component takes seconds).
//!
//! An entry is named by the wasm's hash and the engine's compatibility hash
//! (a wasmtime upgrade or another engine setting misses, never loads a
//! stale artifact). Its content is a header — a magic line and the BLAKE3
//! hash of the artifact — then the artifact; the hash is checked before
//! the `unsafe` deserialize, so a torn write, a truncated copy or bit rot
//! is recompiled instead of loaded. It does not defend against someone who
//! can write the state folder (they could write a matching hash too):
//! that is why a state folder not owned by kura's user, or writable by its
//! group or others, is refused before anything is read from it
//! (`fs::Exposed`). The cache is bounded: after each
//! write the oldest entries go until at most [`MAX_ENTRIES`] and
//! [`MAX_BYTES`] remain.

use std::hash::{Hash, Hasher};

use wasmtime::Engine;
use wasmtime::component::Component;

use crate::fs::StateDir;

const DIR: &str = "components";
const MAGIC: &[u8] = b"kura-cwasm-1\n";
pub const MAX_ENTRIES: usize = 24;
pub const MAX_BYTES: u64 = 1 << 30;

/// How a component came to be ready.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Origin {
    /// Loaded from the cache.
    Cached,
    /// Compiled now (and cached when a state folder is writable).
    Compiled,
}

impl std::fmt::Display for Origin {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str(match self {
            Origin::Cached => "cached",
            Origin::Compiled => "compiled",
        })
    }
}

/// The cache entry's file name for a wasm hash on this engine.
pub fn entry_name(engine: &Engine, wasm_hash: &blake3::Hash) -> String {
    let mut h = std::collections::hash_map::DefaultHasher::new();
    engine.precompile_compatibility_hash().hash(&mut h);
    format!("{}-{:016x}.cwasm", wasm_hash.to_hex(), h.finish())
}

/// Whether the cache holds an entry for this wasm (for `kura plugins list`).
pub fn has(state: &StateDir, engine: &Engine, wasm_hash: &blake3::Hash) -> bool {
    let name = entry_name(engine, wasm_hash);
    state
        .list(DIR)
        .map(|files| files.iter().any(|(n, _, _)| *n == name))
        .unwrap_or(false)
}

/// The artifact inside an entry, if its hash matches.
fn verified(entry: &[u8]) -> Option<&[u8]> {
    let rest = entry.strip_prefix(MAGIC)?;
    let (hash, artifact) = rest.split_at_checked(32)?;
    (blake3::hash(artifact).as_bytes() == hash).then_some(artifact)
}

fn entry(artifact: &[u8]) -> Vec<u8> {
    let mut out = Vec::with_capacity(MAGIC.len() + 32 + artifact.len());
    out.extend_from_slice(MAGIC);
    out.extend_from_slice(blake3::hash(artifact).as_bytes());
    out.extend_from_slice(artifact);
    out
}

/// Compile `wasm` to an artifact with Cranelift, on the compile pool.
///
/// wasmtime shares a compile out over rayon's pool of whatever thread
/// calls it: the global one by default, which the searches share their
/// work out over too. Rayon's workers finish their own queues before
/// they take in outside work, so a search would wait for a whole compile
/// (seconds for a large component) to end. On a pool of its own the compile
/// still uses every core, and the searches' threads take turns with it.
pub fn precompile(engine: &Engine, wasm: &[u8]) -> wasmtime::Result<Vec<u8>> {
    match compile_pool() {
        Some(pool) => pool.install(|| engine.precompile_component(wasm)),
        None => engine.precompile_component(wasm),
    }
}

/// The compile pool (none if its threads cannot be started: the compile
/// then runs on the global pool, correct but in the searches' way).
fn compile_pool() -> Option<&'static rayon::ThreadPool> {
    static POOL: std::sync::OnceLock<Option<rayon::ThreadPool>> = std::sync::OnceLock::new();
    POOL.get_or_init(|| {
        rayon::ThreadPoolBuilder::new()
            .thread_name(|i| format!("kura-compile-{i}"))
            .build()
            .inspect_err(|e| tracing::warn!("no compile pool: {e}"))
            .ok()
    })
    .as_ref()
}

/// Load the compiled component from the cache, else compile it (and cache
/// it). `wasm_hash` is the hash of `wasm`.
pub fn compile(
    runtime: &crate::Runtime,
    wasm: &[u8],
    wasm_hash: &blake3::Hash,
) -> wasmtime::Result<(Component, Origin)> {
    let (engine, state) = (&runtime.engine, runtime.state());
    let name = entry_name(engine, wasm_hash);
    let key = format!("{DIR}/{name}");
    if let Some(state) = state
        && let Ok(Some(bytes)) = state.read(&key)
    {
        match verified(&bytes) {
            // SAFETY: the artifact's hash matches the one written with it,
            // and the entry's name carries the engine's compatibility hash:
            // these bytes are what `precompile_component` of an engine like
            // this one produced. An artifact that still does not fit fails
            // to deserialize and is recompiled.
            Some(artifact) => match unsafe { Component::deserialize(engine, artifact) } {
                Ok(c) => return Ok((c, Origin::Cached)),
                Err(e) => tracing::warn!("recompiling cached component {name}: {e}"),
            },
            None => tracing::warn!("cached component {name} is damaged; recompiling"),
        }
    }
    let (artifact, _) = runtime.precompile(wasm)?;
    // SAFETY: these bytes were produced just now by this engine.
    let component = unsafe { Component::deserialize(engine, &artifact)? };
    if let Some(state) = state {
        match state.write(&key, &entry(&artifact)) {
            Ok(()) => prune(state, &name),
            Err(e) => tracing::warn!(
                "cannot cache the compiled component in {}: {e}",
                state.path().display()
            ),
        }
    }
    Ok((component, Origin::Compiled))
}

/// Remove the oldest entries past the bounds, never `keep`.
fn prune(state: &StateDir, keep: &str) {
    let Ok(mut files) = state.list(DIR) else {
        return;
    };
    // Entries only: another process's write in progress is left alone.
    files.retain(|(name, _, _)| name.ends_with(".cwasm") && !name.starts_with('.'));
    // The entry in use first, then the newest.
    files.sort_by(|a, b| {
        (b.0 == keep)
            .cmp(&(a.0 == keep))
            .then(b.2.cmp(&a.2))
            .then_with(|| a.0.cmp(&b.0))
    });
    let mut total = 0u64;
    let mut kept = 0usize;
    for (name, size, _) in files {
        total += size;
        kept += 1;
        if name != keep && (kept > MAX_ENTRIES || total > MAX_BYTES) {
            match state.remove(&format!("{DIR}/{name}")) {
                Ok(()) => {
                    total -= size;
                    kept -= 1;
                    tracing::debug!("pruned cached component {name}");
                }
                Err(e) => tracing::warn!("cannot prune cached component {name}: {e}"),
            }
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_damaged_entry_is_not_verified() {
        let e = entry(b"artifact bytes");
        assert_eq!(verified(&e), Some(&b"artifact bytes"[..]));
        let mut flipped = e.clone();
        *flipped.last_mut().unwrap() ^= 1;
        assert_eq!(verified(&flipped), None);
        assert_eq!(verified(&e[..e.len() - 1]), None);
        assert_eq!(verified(b"damaged"), None);
    }

    #[test]
    fn the_cache_keeps_at_most_its_bound_and_the_newest() {
        let dir = tempfile::tempdir().unwrap();
        let state = StateDir::open(dir.path()).unwrap();
        for i in 0..MAX_ENTRIES + 5 {
            state.write(&format!("{DIR}/{i:03}.cwasm"), b"x").unwrap();
        }
        prune(&state, "000.cwasm");
        let names: Vec<String> = state.list(DIR).unwrap().into_iter().map(|f| f.0).collect();
        assert_eq!(names.len(), MAX_ENTRIES);
        assert!(
            names.contains(&"000.cwasm".to_owned()),
            "the entry in use stays"
        );
    }
}
