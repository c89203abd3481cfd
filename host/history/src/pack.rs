//! Packing the history's loose objects: git writes each object as a file
//! of its own, which on a disk of 4 KiB blocks costs 4 KiB for a 200-byte
//! tree. Once enough are loose, they go into one pack (each object
//! zlib-compressed, no deltas) with its index, written by `gix-pack` from
//! the pack stream built here, and the loose files are removed. Git and
//! gix read packs and loose objects alike, so nothing else changes.

use std::collections::{HashMap, HashSet};
use std::io::Write as _;

use gix::ObjectId;

use crate::fs::StateDir;

type Failure = Box<dyn std::error::Error + Send + Sync>;

/// Pack indexes the object store can hold between two openings: merges
/// keep a handful on disk, and the store is opened anew once a quarter of
/// its slots is left (`store::Store::handle`). Each slot costs at every
/// opening and dropping of the store (16,384 took 3.6 ms, 1,024 0.37 ms).
#[cfg(not(test))]
pub(crate) const PACK_SLOTS: u16 = 1_024;
#[cfg(test)]
pub(crate) const PACK_SLOTS: u16 = 64;

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
/// its bytes zlib-compressed; the SHA-1 of it all at the end. With it,
/// each object's id, offset and the CRC-32 of its entry, for the index.
fn stream(objects: &[(gix::objs::Kind, Vec<u8>)]) -> Result<(Vec<u8>, Vec<Placed>), Failure> {
    let mut out = Vec::new();
    out.extend_from_slice(b"PACK");
    out.extend_from_slice(&2u32.to_be_bytes());
    out.extend_from_slice(&(objects.len() as u32).to_be_bytes());
    let mut placed = Vec::with_capacity(objects.len());
    for (kind, data) in objects {
        let offset = out.len();
        entry_header(&mut out, kind_code(*kind), data.len());
        let mut z = flate2::write::ZlibEncoder::new(Vec::new(), flate2::Compression::default());
        z.write_all(data)?;
        out.extend_from_slice(&z.finish()?);
        let mut crc = flate2::Crc::new();
        crc.update(&out[offset..]);
        placed.push(Placed {
            id: gix::objs::compute_hash(gix::hash::Kind::Sha1, *kind, data)?,
            offset: offset as u64,
            crc: crc.sum(),
        });
    }
    let mut h = gix::hash::hasher(gix::hash::Kind::Sha1);
    h.update(&out);
    out.extend_from_slice(h.try_finalize()?.as_bytes());
    Ok((out, placed))
}

/// An object's place in a pack.
struct Placed {
    id: ObjectId,
    offset: u64,
    crc: u32,
}

/// The index (version 2) of a pack whose trailer is `pack_hash`: the
/// objects' ids sorted (with a fan-out table by first byte), their
/// entries' CRC-32s and their offsets; the pack's hash, then its own.
fn index(mut placed: Vec<Placed>, pack_hash: &[u8]) -> Result<Vec<u8>, Failure> {
    placed.sort_by_key(|p| p.id);
    placed.dedup_by(|a, b| a.id == b.id);
    let mut out = Vec::new();
    out.extend_from_slice(b"\xfftOc");
    out.extend_from_slice(&2u32.to_be_bytes());
    let mut fan = [0u32; 256];
    for p in &placed {
        fan[usize::from(p.id.as_bytes()[0])] += 1;
    }
    let mut sum = 0;
    for n in fan {
        sum += n;
        out.extend_from_slice(&sum.to_be_bytes());
    }
    for p in &placed {
        out.extend_from_slice(p.id.as_bytes());
    }
    for p in &placed {
        out.extend_from_slice(&p.crc.to_be_bytes());
    }
    let mut large = Vec::new();
    for p in &placed {
        let small = match u32::try_from(p.offset) {
            Ok(o) if o < 0x8000_0000 => o,
            _ => {
                large.push(p.offset);
                0x8000_0000 | u32::try_from(large.len() - 1)?
            }
        };
        out.extend_from_slice(&small.to_be_bytes());
    }
    for o in large {
        out.extend_from_slice(&o.to_be_bytes());
    }
    out.extend_from_slice(pack_hash);
    let mut h = gix::hash::hasher(gix::hash::Kind::Sha1);
    h.update(&out);
    out.extend_from_slice(h.try_finalize()?.as_bytes());
    Ok(out)
}

/// Write `objects` as one pack (and its index) in the repository at
/// `dir` in the state folder: the pack first, then its index (git and
/// gix read a pack only once its index is there), each written whole
/// under a temporary name, then renamed.
pub(crate) fn write(
    state: &StateDir,
    dir: &str,
    objects: &[(gix::objs::Kind, Vec<u8>)],
) -> Result<(), Failure> {
    if objects.is_empty() {
        return Ok(());
    }
    let (bytes, placed) = stream(objects)?;
    place(state, dir, &bytes, placed)?;
    Ok(())
}

/// Put the pack stream `bytes` and its index (of `placed`) in the object
/// folder, named by the pack's hash: the pack first, then its index (git
/// and gix read a pack only once its index is there), the folder synced
/// once. Returns the pack's name.
fn place(
    state: &StateDir,
    dir: &str,
    bytes: &[u8],
    placed: Vec<Placed>,
) -> Result<String, Failure> {
    let hash = &bytes[bytes.len() - 20..];
    let name = format!("pack-{}", ObjectId::from_bytes_or_panic(hash));
    let idx = index(placed, hash)?;
    state.write_all(
        &format!("{dir}/objects/pack"),
        &[
            (&format!("{name}.pack"), bytes),
            (&format!("{name}.idx"), &idx),
        ],
    )?;
    Ok(name)
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
    if indexes + 16 >= usize::from(PACK_SLOTS) {
        return Err(format!("{indexes} packs already; the loose objects stay loose").into());
    }
    let mut objects = Vec::with_capacity(ids.len());
    for id in &ids {
        let o = repo.find_object(*id)?;
        objects.push((o.kind, o.data.clone()));
    }
    write(state, dir, &objects)?;
    // The pack and its index are in place (written whole, then renamed):
    // the loose copies can go.
    for id in &ids {
        let hex = id.to_string();
        state.remove_unsynced(&format!("{dir}/objects/{}/{}", &hex[..2], &hex[2..]))?;
    }
    Ok(ids.len())
}

/// Packs at which the smaller ones are merged into one.
pub(crate) const MERGE_AT: usize = 10;
/// Objects a pack holds past which merges leave it as it is (about
/// 20,000 changes, 30 MB, on kura-bench's notes): a merge's memory is
/// bounded by what it reads.
const MERGED_MAX: u64 = 1 << 17;
/// The longest chain of deltas a merged pack makes (git's default): an
/// object is read by applying at most this many.
const DEPTH_MAX: usize = 50;

/// An object as a merged pack holds it: whole, or a delta of `base`.
struct Held {
    kind: gix::objs::Kind,
    /// Its bytes, or the delta's.
    data: Vec<u8>,
    base: Option<ObjectId>,
}

/// The packs in the object folder: each its name (without `.pack`) and
/// how many objects it holds (its index's size tells), fewest first.
fn packs(state: &StateDir, dir: &str) -> Result<Vec<(String, u64)>, Failure> {
    let listed = state.list(&format!("{dir}/objects/pack"))?;
    let has_pack = |stem: &str| listed.iter().any(|(n, ..)| *n == format!("{stem}.pack"));
    // An index v2: 1,032 bytes of header and fan-out, 28 per object (id,
    // CRC, offset), 40 of trailer (and 8 per object past 2 GiB).
    let mut out: Vec<(String, u64)> = listed
        .iter()
        .filter_map(|(n, size, _)| Some((n.strip_suffix(".idx")?.to_owned(), *size)))
        .filter(|(stem, _)| has_pack(stem))
        .map(|(stem, size)| (stem, size.saturating_sub(1_072) / 28))
        .collect();
    out.sort_by_key(|(name, n)| (*n, name.clone()));
    Ok(out)
}

/// Which of `packs` (fewest objects first) to merge: the smaller ones, up
/// to the first that holds at least twice as many objects as all those
/// below it together (git's geometric repacking), so that each object is
/// rewritten a logarithmic number of times.
fn to_merge(packs: &[(String, u64)]) -> usize {
    let mut below: Vec<u64> = Vec::with_capacity(packs.len());
    let mut sum = 0;
    for (_, size) in packs {
        below.push(sum);
        sum += size;
    }
    let mut m = packs.len();
    while m > 0 && packs[m - 1].1 >= 2 * below[m - 1] {
        m -= 1;
    }
    // `m` packs fail the progression; merge them (and the one above them
    // when only one does).
    if m == 1 { 0 } else { m }
}

/// When there are [`MERGE_AT`] packs or more, merge the smaller ones into
/// one pack whose objects are stored as deltas of their earlier versions
/// (a note's previous text, its folder's previous tree); returns how many
/// packs were merged. The merged pack is checked to hold every object
/// before the packs it replaces are removed. Run under the history's lock.
pub(crate) fn merge(repo: &gix::Repository, state: &StateDir, dir: &str) -> Result<usize, Failure> {
    let mut all = packs(state, dir)?;
    // A merge holds its packs' objects in memory: those past the bound
    // stay as they are (a handful over a year of history).
    all.retain(|(_, objects)| *objects <= MERGED_MAX);
    if all.len() < MERGE_AT {
        return Ok(0);
    }
    let chosen = &all[..to_merge(&all)];
    if chosen.len() < 2 {
        return Ok(0);
    }
    let stems: Vec<String> = chosen.iter().map(|(stem, _)| stem.clone()).collect();
    let name = rewrite(repo, state, dir, &stems, None)?;
    remove(state, dir, &stems, &name)?;
    Ok(chosen.len())
}

/// Write the objects of packs `stems` as one pack, each file's and
/// folder's versions as deltas of their earlier ones; with `keep`, only
/// those objects (and any of them no pack holds, read from the store).
/// Returns the new pack's name; the packs read are left in place.
pub(crate) fn rewrite(
    repo: &gix::Repository,
    state: &StateDir,
    dir: &str,
    stems: &[String],
    keep: Option<&HashSet<ObjectId>>,
) -> Result<String, Failure> {
    let folder = state.path().join(dir).join("objects/pack");
    let mut held: HashMap<ObjectId, Held> = HashMap::new();
    let mut order = Vec::new();
    for stem in stems {
        read_pack(&folder, stem, &mut held, &mut order)?;
    }
    if let Some(keep) = keep {
        held.retain(|id, _| keep.contains(id));
        order.retain(|id| held.contains_key(id));
        // A delta whose base goes is stored whole.
        let orphans: Vec<ObjectId> = held
            .iter()
            .filter(|(_, h)| h.base.is_some_and(|b| !held.contains_key(&b)))
            .map(|(id, _)| *id)
            .collect();
        for id in orphans.into_iter().chain(
            keep.iter()
                .filter(|id| !held.contains_key(*id))
                .copied()
                .collect::<Vec<_>>(),
        ) {
            let o = repo.find_object(id)?;
            if !held.contains_key(&id) {
                order.push(id);
            }
            held.insert(
                id,
                Held {
                    kind: o.kind,
                    data: o.data.clone(),
                    base: None,
                },
            );
        }
    }
    let mut children: HashMap<ObjectId, Vec<ObjectId>> = HashMap::new();
    for (k, v) in held.iter() {
        if let Some(b) = v.base {
            children.entry(b).or_default().push(*k);
        }
    }
    for (id, base) in candidates(repo, &held, &order)? {
        deltify(repo, &mut held, &mut children, id, base)?;
    }
    let (bytes, placed) = emit(repo, &mut held, &order)?;
    if placed.len() != held.len() {
        return Err("the new pack lacks objects; nothing was rewritten".into());
    }
    place(state, dir, &bytes, placed)
}

/// Remove packs `stems` (but `kept`, the one that replaced them).
pub(crate) fn remove(
    state: &StateDir,
    dir: &str,
    stems: &[String],
    kept: &str,
) -> Result<(), Failure> {
    for stem in stems.iter().filter(|stem| *stem != kept) {
        // The index first: a pack without one is not read.
        for ext in ["idx", "pack"] {
            state.remove_unsynced(&format!("{dir}/objects/pack/{stem}.{ext}"))?;
        }
    }
    Ok(())
}

/// The names of every pack (without `.pack`).
pub(crate) fn all_packs(state: &StateDir, dir: &str) -> Result<Vec<String>, Failure> {
    Ok(packs(state, dir)?
        .into_iter()
        .map(|(stem, _)| stem)
        .collect())
}

/// The ids the packs `stems` hold.
pub(crate) fn holding(
    state: &StateDir,
    dir: &str,
    stems: &[String],
) -> Result<HashSet<ObjectId>, Failure> {
    let folder = state.path().join(dir).join("objects/pack");
    let mut out = HashSet::new();
    for stem in stems {
        let index =
            gix_pack::index::File::at(folder.join(format!("{stem}.idx")), gix::hash::Kind::Sha1)?;
        out.extend(index.iter().map(|e| e.oid));
    }
    Ok(out)
}

/// The bytes the repository's packs take.
pub(crate) fn packed_bytes(state: &StateDir, dir: &str) -> Result<u64, Failure> {
    Ok(state
        .list(&format!("{dir}/objects/pack"))?
        .iter()
        .map(|(_, size, _)| size)
        .sum())
}

/// Every object of pack `stem` as the pack holds it (a delta stays one).
fn read_pack(
    folder: &std::path::Path,
    stem: &str,
    held: &mut HashMap<ObjectId, Held>,
    order: &mut Vec<ObjectId>,
) -> Result<(), Failure> {
    use gix_pack::data::entry::Header;
    let index =
        gix_pack::index::File::at(folder.join(format!("{stem}.idx")), gix::hash::Kind::Sha1)?;
    let data =
        gix_pack::data::File::at(folder.join(format!("{stem}.pack")), gix::hash::Kind::Sha1)?;
    let at_offset: HashMap<u64, ObjectId> = index.iter().map(|e| (e.pack_offset, e.oid)).collect();
    let mut inflate = gix::features::zlib::Inflate::default();
    let mut entries: Vec<_> = index.iter().collect();
    entries.sort_by_key(|e| e.pack_offset);
    for e in entries {
        let entry = data.entry(e.pack_offset)?;
        let mut bytes = vec![0; usize::try_from(entry.decompressed_size)?];
        data.decompress_entry(&entry, &mut inflate, &mut bytes)?;
        let (kind, base) = match entry.header {
            Header::Commit => (gix::objs::Kind::Commit, None),
            Header::Tree => (gix::objs::Kind::Tree, None),
            Header::Blob => (gix::objs::Kind::Blob, None),
            Header::Tag => (gix::objs::Kind::Tag, None),
            Header::OfsDelta { base_distance } => {
                let base = at_offset
                    .get(&entry.base_pack_offset(base_distance))
                    .ok_or("a delta's base is not in its pack")?;
                (gix::objs::Kind::Blob, Some(*base))
            }
            Header::RefDelta { base_id } => (gix::objs::Kind::Blob, Some(base_id)),
        };
        // The same object in two packs: a whole copy is preferred.
        match held.get(&e.oid) {
            Some(h) if h.base.is_none() || base.is_some() => continue,
            Some(_) => {}
            None => order.push(e.oid),
        }
        held.insert(
            e.oid,
            Held {
                kind,
                data: bytes,
                base,
            },
        );
    }
    Ok(())
}

/// For objects held whole, the earlier version each could be a delta of:
/// along each commit held, every changed file and folder paired with what
/// the same path held in the commit's parent. Oldest commit first.
fn candidates(
    repo: &gix::Repository,
    held: &HashMap<ObjectId, Held>,
    order: &[ObjectId],
) -> Result<Vec<(ObjectId, ObjectId)>, Failure> {
    let mut commits = Vec::new();
    for id in order {
        if let Some(h) = held.get(id)
            && h.base.is_none()
            && h.kind == gix::objs::Kind::Commit
        {
            let c = gix::objs::CommitRef::from_bytes(&h.data)?;
            // A tree stored as a delta was paired by an earlier merge, and
            // so was what it holds: only the newer commits are walked.
            if held.get(&c.tree()).is_some_and(|t| t.base.is_some()) {
                continue;
            }
            commits.push((*id, c.tree(), c.parents().next()));
        }
    }
    // Oldest first: a commit after its parent.
    let index: HashMap<ObjectId, usize> =
        commits.iter().enumerate().map(|(i, c)| (c.0, i)).collect();
    let mut depth = vec![None::<usize>; commits.len()];
    fn depth_of(
        i: usize,
        commits: &[(ObjectId, ObjectId, Option<ObjectId>)],
        index: &HashMap<ObjectId, usize>,
        depth: &mut [Option<usize>],
    ) -> usize {
        let mut chain = vec![i];
        let mut at = i;
        let mut base = 0;
        while let Some(p) = commits[at].2.and_then(|p| index.get(&p).copied()) {
            if let Some(d) = depth[p] {
                base = d + 1;
                break;
            }
            if chain.len() > commits.len() {
                break;
            }
            chain.push(p);
            at = p;
        }
        for (n, c) in chain.iter().rev().enumerate() {
            depth[*c] = Some(base + n);
        }
        depth[i].unwrap_or(0)
    }
    for i in 0..commits.len() {
        depth_of(i, &commits, &index, &mut depth);
    }
    let mut sorted: Vec<usize> = (0..commits.len()).collect();
    sorted.sort_by_key(|i| depth[*i]);
    let mut out = Vec::new();
    let mut seen = std::collections::HashSet::new();
    for i in sorted {
        let (_, tree, parent) = commits[i];
        let Some(parent) = parent else { continue };
        let Ok(parent) = repo.find_commit(parent) else {
            continue;
        };
        let old = parent.tree_id()?.detach();
        pair(repo, tree, old, &mut out, &mut seen)?;
    }
    Ok(out)
}

/// Pair `new` with `old` (the same folder in two commits), then each
/// changed entry in them with its earlier self.
fn pair(
    repo: &gix::Repository,
    new: ObjectId,
    old: ObjectId,
    out: &mut Vec<(ObjectId, ObjectId)>,
    seen: &mut std::collections::HashSet<ObjectId>,
) -> Result<(), Failure> {
    if new == old || !seen.insert(new) {
        return Ok(());
    }
    out.push((new, old));
    let (new_tree, old_tree) = (repo.find_tree(new)?, repo.find_tree(old)?);
    let earlier: HashMap<Vec<u8>, (bool, ObjectId)> = old_tree
        .decode()?
        .entries
        .iter()
        .map(|e| (e.filename.to_vec(), (e.mode.is_tree(), e.oid.to_owned())))
        .collect();
    for e in new_tree.decode()?.entries.iter() {
        let Some((was_tree, was)) = earlier.get(&e.filename.to_vec()) else {
            continue;
        };
        if *was == e.oid {
            continue;
        }
        match (e.mode.is_tree(), *was_tree) {
            (true, true) => pair(repo, e.oid.to_owned(), *was, out, seen)?,
            (false, false) if e.mode.is_blob() && seen.insert(e.oid.to_owned()) => {
                out.push((e.oid.to_owned(), *was));
            }
            _ => {}
        }
    }
    Ok(())
}

/// The delta chain below `id` (how many deltas reading it applies), or
/// None when `stop` is on it (a delta of it would make a cycle).
fn depth(held: &HashMap<ObjectId, Held>, mut id: ObjectId, stop: ObjectId) -> Option<usize> {
    let mut n = 0;
    while let Some(base) = held.get(&id).and_then(|h| h.base) {
        if id == stop || n > DEPTH_MAX {
            return None;
        }
        id = base;
        n += 1;
    }
    (id != stop).then_some(n)
}

/// How long the chains of deltas built on `id` are.
fn height(children: &HashMap<ObjectId, Vec<ObjectId>>, id: ObjectId, budget: usize) -> usize {
    if budget == 0 {
        return usize::MAX / 2;
    }
    children.get(&id).map_or(0, |kids| {
        kids.iter()
            .map(|k| 1 + height(children, *k, budget - 1))
            .max()
            .unwrap_or(0)
    })
}

/// Store `id` (held whole) as a delta of `base` when both are held, the
/// chains stay within [`DEPTH_MAX`] and the delta is under half the object.
fn deltify(
    repo: &gix::Repository,
    held: &mut HashMap<ObjectId, Held>,
    children: &mut HashMap<ObjectId, Vec<ObjectId>>,
    id: ObjectId,
    base: ObjectId,
) -> Result<(), Failure> {
    let (Some(h), true) = (held.get(&id), held.contains_key(&base)) else {
        return Ok(());
    };
    if h.base.is_some() {
        return Ok(());
    }
    let Some(below) = depth(held, base, id) else {
        return Ok(());
    };
    if below + 1 + height(children, id, DEPTH_MAX + 1) > DEPTH_MAX {
        return Ok(());
    }
    let base_bytes = match held.get(&base) {
        Some(b) if b.base.is_none() => b.data.clone(),
        _ => repo.find_object(base)?.data.clone(),
    };
    let Some(delta) = crate::delta::encode(&base_bytes, &h.data) else {
        return Ok(());
    };
    // Checked before it replaces the object: a delta that does not give
    // the object back would lose it.
    if delta.len() * 2 < h.data.len()
        && crate::delta::apply(&base_bytes, &delta).as_deref() == Some(h.data.as_slice())
    {
        let h = held.get_mut(&id).expect("held");
        h.data = delta;
        h.base = Some(base);
        children.entry(base).or_default().push(id);
    }
    Ok(())
}

/// The pack stream of everything held, each base before its deltas
/// (which name it by its distance back in the pack).
fn emit(
    repo: &gix::Repository,
    held: &mut HashMap<ObjectId, Held>,
    order: &[ObjectId],
) -> Result<(Vec<u8>, Vec<Placed>), Failure> {
    let mut placed = Vec::with_capacity(held.len());
    let mut out = Vec::new();
    out.extend_from_slice(b"PACK");
    out.extend_from_slice(&2u32.to_be_bytes());
    out.extend_from_slice(&(held.len() as u32).to_be_bytes());
    let mut at: HashMap<ObjectId, u64> = HashMap::new();
    let mut visiting = std::collections::HashSet::new();
    for id in order {
        let mut stack = vec![*id];
        while let Some(&top) = stack.last() {
            if at.contains_key(&top) {
                stack.pop();
                continue;
            }
            let base = held.get(&top).and_then(|h| h.base);
            match base {
                Some(b) if !at.contains_key(&b) => {
                    if visiting.contains(&b) {
                        // A cycle between packs' deltas: this one whole.
                        let o = repo.find_object(top)?;
                        let h = held.get_mut(&top).expect("held");
                        (h.kind, h.data, h.base) = (o.kind, o.data.clone(), None);
                    } else {
                        visiting.insert(top);
                        stack.push(b);
                    }
                    continue;
                }
                _ => {}
            }
            let h = &held[&top];
            let offset = out.len() as u64;
            match h.base {
                Some(b) => {
                    entry_header(&mut out, 6, h.data.len());
                    ofs(&mut out, offset - at[&b]);
                }
                None => entry_header(&mut out, kind_code(h.kind), h.data.len()),
            }
            let mut z = flate2::write::ZlibEncoder::new(Vec::new(), flate2::Compression::default());
            z.write_all(&h.data)?;
            out.extend_from_slice(&z.finish()?);
            let mut crc = flate2::Crc::new();
            crc.update(&out[offset as usize..]);
            placed.push(Placed {
                id: top,
                offset,
                crc: crc.sum(),
            });
            at.insert(top, offset);
            visiting.remove(&top);
            stack.pop();
        }
    }
    let mut h = gix::hash::hasher(gix::hash::Kind::Sha1);
    h.update(&out);
    out.extend_from_slice(h.try_finalize()?.as_bytes());
    Ok((out, placed))
}

/// An entry's type and size, as a pack writes them.
fn entry_header(out: &mut Vec<u8>, code: u8, mut size: usize) {
    let mut byte = (code << 4) | (size & 0x0f) as u8;
    size >>= 4;
    while size > 0 {
        out.push(byte | 0x80);
        byte = (size & 0x7f) as u8;
        size >>= 7;
    }
    out.push(byte);
}

/// An OFS_DELTA's distance back to its base, in git's encoding (each
/// continued byte counts one more).
fn ofs(out: &mut Vec<u8>, mut distance: u64) {
    let mut bytes = vec![(distance & 0x7f) as u8];
    distance >>= 7;
    while distance > 0 {
        distance -= 1;
        bytes.push(0x80 | (distance & 0x7f) as u8);
        distance >>= 7;
    }
    bytes.reverse();
    out.extend_from_slice(&bytes);
}
