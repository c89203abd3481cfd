//! Packing the history's loose objects: git writes each object as a file
//! of its own, which on a disk of 4 KiB blocks costs 4 KiB for a 200-byte
//! tree. Once enough are loose, they go into one pack (each object
//! zlib-compressed, no deltas) with its index, written by `gix-pack` from
//! the pack stream built here, and the loose files are removed. Git and
//! gix read packs and loose objects alike, so nothing else changes.

use std::io::Write as _;

use gix::ObjectId;

use crate::fs::StateDir;

type Failure = Box<dyn std::error::Error + Send + Sync>;

/// Loose objects at which they are packed.
pub(crate) const PACK_AT: usize = 2_000;

/// The loose objects of the repository at `dir` in the state folder.
pub(crate) fn loose(state: &StateDir, dir: &str) -> Result<Vec<ObjectId>, Failure> {
    let mut ids = Vec::new();
    for first in 0..=255u8 {
        let sub = format!("{dir}/objects/{first:02x}");
        for (name, _, _) in state.list(&sub)? {
            if let Ok(id) = ObjectId::from_hex(format!("{first:02x}{name}").as_bytes()) {
                ids.push(id);
            }
        }
    }
    Ok(ids)
}

/// git's number for an object's kind in a pack.
fn kind_code(kind: gix::objs::Kind) -> u8 {
    match kind {
        gix::objs::Kind::Commit => 1,
        gix::objs::Kind::Tree => 2,
        gix::objs::Kind::Blob => 3,
        gix::objs::Kind::Tag => 4,
    }
}

/// A pack stream (version 2) of `objects`: each its kind and size, then
/// its bytes zlib-compressed; the SHA-1 of it all at the end.
fn stream(objects: &[(gix::objs::Kind, Vec<u8>)]) -> Result<Vec<u8>, Failure> {
    let mut out = Vec::new();
    out.extend_from_slice(b"PACK");
    out.extend_from_slice(&2u32.to_be_bytes());
    out.extend_from_slice(&(objects.len() as u32).to_be_bytes());
    for (kind, data) in objects {
        let mut size = data.len();
        let mut byte = (kind_code(*kind) << 4) | (size & 0x0f) as u8;
        size >>= 4;
        while size > 0 {
            out.push(byte | 0x80);
            byte = (size & 0x7f) as u8;
            size >>= 7;
        }
        out.push(byte);
        let mut z = flate2::write::ZlibEncoder::new(Vec::new(), flate2::Compression::default());
        z.write_all(data)?;
        out.extend_from_slice(&z.finish()?);
    }
    let mut h = gix::hash::hasher(gix::hash::Kind::Sha1);
    h.update(&out);
    out.extend_from_slice(h.try_finalize()?.as_bytes());
    Ok(out)
}

/// Pack the loose objects of `repo` (at `dir` in the state folder) when
/// there are at least `at`; returns how many were packed. Run under the
/// history's lock: no commit adds a loose object meanwhile.
pub(crate) fn pack_loose(
    repo: &gix::Repository,
    state: &StateDir,
    dir: &str,
    at: usize,
) -> Result<usize, Failure> {
    let ids = loose(state, dir)?;
    if ids.len() < at {
        return Ok(0);
    }
    // The object store holds a fixed number of pack indexes: short of
    // them, objects stay loose (slower and larger, never lost) until packs
    // are merged.
    let packs = state.list(&format!("{dir}/objects/pack"))?;
    let indexes = packs.iter().filter(|(n, _, _)| n.ends_with(".idx")).count();
    if indexes + 16 >= usize::from(crate::store::PACK_SLOTS) {
        return Err(format!("{indexes} packs already; the loose objects stay loose").into());
    }
    let mut objects = Vec::with_capacity(ids.len());
    for id in &ids {
        let o = repo.find_object(*id)?;
        objects.push((o.kind, o.data.clone()));
    }
    let bytes = stream(&objects)?;
    let packs = state.ensure_dir(&format!("{dir}/objects/pack"))?;
    let options = gix_pack::bundle::write::Options {
        object_hash: gix::hash::Kind::Sha1,
        thread_limit: Some(1),
        ..Default::default()
    };
    gix_pack::Bundle::write_to_directory(
        &mut bytes.as_slice(),
        Some(&packs),
        &mut gix::features::progress::Discard,
        &std::sync::atomic::AtomicBool::new(false),
        None::<gix::objs::find::Never>,
        options,
    )?;
    // The pack and its index are in place (written whole, then renamed):
    // the loose copies can go.
    for id in &ids {
        let hex = id.to_string();
        state.remove_unsynced(&format!("{dir}/objects/{}/{}", &hex[..2], &hex[2..]))?;
    }
    Ok(ids.len())
}
