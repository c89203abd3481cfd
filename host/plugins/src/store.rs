//! Pulled components in the state folder: their bytes by digest
//! (`components/sha256/<hex>`, signatures too) and the lock file
//! (`components/lock.toml`) that says which digest each reference stood
//! for when it was pulled. A slot that names an `oci://` reference is
//! served from here only: serving never reaches a registry.
//!
//! The lock's digests are not taken on its word: the manifest is kept in
//! the store too, and at every start the component's digest is derived
//! from the manifest again (its one `application/wasm` layer), the
//! manifest checked against the digest the reference or the lock names.

use serde::{Deserialize, Serialize};

use crate::config::{Digest, OciRef};
use crate::fs::StateDir;

/// The lock file, inside the state folder.
pub const LOCK: &str = "components/lock.toml";
const BLOBS: &str = "components/sha256";

/// One pulled reference.
#[derive(Clone, Debug, Deserialize, Serialize, PartialEq, Eq)]
#[serde(deny_unknown_fields)]
pub struct Locked {
    /// As the configuration names it: `oci://host/repo:tag` or `...@sha256:`.
    pub reference: String,
    /// The manifest the reference led to.
    pub manifest: String,
    /// The component's own bytes (the manifest's one `application/wasm` layer).
    pub digest: String,
    pub size: u64,
    /// The detached minisign signature found beside it, if any (its own digest).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub signature: Option<String>,
    /// When it was pulled (RFC 3339, UTC).
    pub pulled: String,
}

#[derive(Clone, Debug, Default, Deserialize, Serialize, PartialEq, Eq)]
#[serde(deny_unknown_fields)]
pub struct Lock {
    #[serde(default, rename = "component")]
    pub components: Vec<Locked>,
}

impl Lock {
    /// The lock file, or an empty lock when there is none.
    pub fn read(state: &StateDir) -> Result<Lock, String> {
        let Some(bytes) = state
            .read(LOCK)
            .map_err(|e| format!("cannot read the lock file {LOCK}: {e}"))?
        else {
            return Ok(Lock::default());
        };
        let text = String::from_utf8(bytes).map_err(|_| format!("{LOCK} is not UTF-8"))?;
        toml::from_str(&text).map_err(|e| format!("{LOCK} cannot be read: {}", e.message()))
    }

    pub fn find(&self, reference: &OciRef) -> Option<&Locked> {
        let name = reference.to_string();
        self.components.iter().find(|c| c.reference == name)
    }

    /// Record a pull; returns the entry it replaces (a tag that moved, or
    /// the same digest pulled again).
    pub fn put(&mut self, entry: Locked) -> Option<Locked> {
        let old = self
            .components
            .iter()
            .position(|c| c.reference == entry.reference)
            .map(|i| self.components.remove(i));
        self.components.push(entry);
        self.components
            .sort_by(|a, b| a.reference.cmp(&b.reference));
        old
    }

    /// Write the lock file atomically.
    pub fn write(&self, state: &StateDir) -> Result<(), String> {
        let text = toml::to_string(self).map_err(|e| e.to_string())?;
        let text = format!(
            "# Written by `kura plugins pull`: the digest each reference stood for when it was\n\
             # pulled. `kura serve` reads this and the store beside it, never a registry.\n\n{text}"
        );
        state
            .write(LOCK, text.as_bytes())
            .map_err(|e| format!("cannot write the lock file {LOCK}: {e}"))
    }
}

/// Keep `bytes` in the store under their digest.
pub fn put_blob(state: &StateDir, bytes: &[u8]) -> Result<Digest, String> {
    let digest = Digest::of(bytes);
    state
        .write(&format!("{BLOBS}/{}", digest.hex()), bytes)
        .map_err(|e| format!("cannot keep {digest} in the state folder: {e}"))?;
    Ok(digest)
}

/// The stored bytes of `digest`, checked against it: a damaged or altered
/// file in the store is refused, never served.
pub fn blob(state: &StateDir, digest: &Digest) -> Result<Vec<u8>, String> {
    let bytes = state
        .read(&format!("{BLOBS}/{}", digest.hex()))
        .map_err(|e| format!("cannot read {digest} from the state folder: {e}"))?
        .ok_or_else(|| format!("{digest} is not in the state folder's store; pull it again"))?;
    let found = Digest::of(&bytes);
    if &found != digest {
        return Err(format!(
            "the stored copy of {digest} hashes to {found}: the store was altered; pull it again"
        ));
    }
    Ok(bytes)
}

/// The digest of a manifest's one `application/wasm` layer.
fn wasm_layer(manifest: &[u8]) -> Option<Digest> {
    let parsed: serde_json::Value = serde_json::from_slice(manifest).ok()?;
    match parsed["layers"].as_array()?.as_slice() {
        [one] if one["mediaType"] == "application/wasm" => {
            Digest::parse(one["digest"].as_str()?).ok()
        }
        _ => None,
    }
}

/// A component and its signature, as a slot naming `reference` gets them.
pub struct Stored {
    pub entry: Locked,
    pub bytes: Vec<u8>,
    pub signature: Option<Vec<u8>>,
}

/// What the lock and the store hold for `reference`; refused with a line
/// that says what to run when it was never pulled.
pub fn resolve(state: Option<&StateDir>, reference: &OciRef) -> Result<Stored, String> {
    let state = state.ok_or_else(|| {
        format!("{reference} needs the state folder, where pulled components are kept")
    })?;
    let lock = Lock::read(state)?;
    let entry = lock
        .find(reference)
        .ok_or_else(|| {
            format!("{reference} has not been pulled: run `kura plugins pull {reference}`")
        })?
        .clone();
    let parse = |d: &str| Digest::parse(d).map_err(|e| format!("{LOCK}: {e}"));
    if let Some(want) = &reference.digest
        && parse(&entry.manifest)? != *want
    {
        return Err(format!(
            "{LOCK} says {reference} is the manifest {}; pull it again",
            entry.manifest
        ));
    }
    let manifest = blob(state, &parse(&entry.manifest)?)
        .map_err(|e| format!("{reference}: its manifest: {e}"))?;
    let layer = wasm_layer(&manifest).ok_or_else(|| {
        format!(
            "{reference}: the kept manifest {} names no one application/wasm layer; pull it again",
            entry.manifest
        )
    })?;
    if layer != parse(&entry.digest)? {
        return Err(format!(
            "{LOCK} says {reference} is the component {}, but its manifest {} names {layer}: \
             the lock was altered; pull it again",
            entry.digest, entry.manifest
        ));
    }
    let bytes = blob(state, &layer)?;
    let signature = match &entry.signature {
        Some(d) => Some(blob(state, &parse(d)?)?),
        None => None,
    };
    Ok(Stored {
        entry,
        bytes,
        signature,
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    fn state() -> (tempfile::TempDir, StateDir) {
        let dir = tempfile::tempdir().unwrap();
        let state = StateDir::open(dir.path()).unwrap();
        (dir, state)
    }

    /// A manifest naming `bytes` as its one wasm layer.
    fn manifest(bytes: &[u8]) -> Vec<u8> {
        serde_json::json!({
            "schemaVersion": 2,
            "layers": [{"mediaType": "application/wasm", "digest": Digest::of(bytes).to_string(), "size": bytes.len()}],
        })
        .to_string()
        .into_bytes()
    }

    /// A pull of `bytes` as `reference`: blobs kept, the entry to lock.
    fn pulled(state: &StateDir, reference: &str, bytes: &[u8]) -> Locked {
        put_blob(state, bytes).unwrap();
        let manifest = put_blob(state, &manifest(bytes)).unwrap();
        Locked {
            reference: reference.into(),
            manifest: manifest.to_string(),
            digest: Digest::of(bytes).to_string(),
            size: bytes.len() as u64,
            signature: None,
            pulled: "2026-11-26T00:00:00Z".into(),
        }
    }

    #[test]
    fn a_pulled_reference_is_served_from_the_store() {
        let (_d, state) = state();
        let r = OciRef::parse("oci://127.0.0.1:5000/kura/r:1").unwrap();
        let e = resolve(Some(&state), &r).err().unwrap();
        assert!(
            e.contains("kura plugins pull oci://127.0.0.1:5000/kura/r:1"),
            "{e}"
        );
        let mut lock = Lock::read(&state).unwrap();
        assert!(
            lock.put(pulled(&state, &r.to_string(), b"component"))
                .is_none()
        );
        lock.write(&state).unwrap();
        let got = resolve(Some(&state), &r).unwrap();
        assert_eq!(got.bytes, b"component");
        assert!(got.signature.is_none());
        // A tag that moves replaces its entry.
        let mut lock = Lock::read(&state).unwrap();
        let old = lock.put(pulled(&state, &r.to_string(), b"other")).unwrap();
        assert_eq!(old.digest, Digest::of(b"component").to_string());
        assert_eq!(lock.components.len(), 1);
    }

    #[test]
    fn a_lock_edited_to_name_other_bytes_is_refused() {
        let (_d, state) = state();
        let r = OciRef::parse("oci://127.0.0.1:5000/kura/r:1").unwrap();
        // Other bytes in the store (a pull of something else, or planted),
        // and the lock's digest pointed at them: the manifest says no.
        put_blob(&state, b"planted").unwrap();
        let mut entry = pulled(&state, &r.to_string(), b"component");
        entry.digest = Digest::of(b"planted").to_string();
        let mut lock = Lock::default();
        lock.put(entry.clone());
        lock.write(&state).unwrap();
        let e = resolve(Some(&state), &r).err().unwrap();
        assert!(e.contains("the lock was altered"), "{e}");
        // A lock whose manifest was never kept (or is gone) is refused.
        entry.digest = Digest::of(b"component").to_string();
        entry.manifest = Digest::of(b"a manifest never kept").to_string();
        let mut lock = Lock::default();
        lock.put(entry);
        lock.write(&state).unwrap();
        let e = resolve(Some(&state), &r).err().unwrap();
        assert!(
            e.contains("its manifest") && e.contains("pull it again"),
            "{e}"
        );
    }

    #[test]
    fn an_altered_store_is_refused() {
        let (dir, state) = state();
        let d = put_blob(&state, b"component").unwrap();
        #[allow(clippy::disallowed_methods)] // the test alters the store behind kura's back
        std::fs::write(dir.path().join(BLOBS).join(d.hex()), b"c0mponent").unwrap();
        let e = blob(&state, &d).unwrap_err();
        assert!(e.contains("the store was altered"), "{e}");
    }
}
