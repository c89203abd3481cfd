//! Git's delta format: an object as copies from a base object and inserted
//! bytes. A note's next version, or a folder's tree after one entry
//! changed, is a few dozen bytes this way instead of the whole object.

use std::collections::HashMap;

/// Bytes a match must share to be copied rather than inserted; the base
/// is indexed at every multiple of it.
const BLOCK: usize = 16;
/// The most one insert instruction carries.
const INSERT_MAX: usize = 127;
/// The most one copy instruction carries (three size bytes).
const COPY_MAX: usize = 0xff_ffff;

/// `target` as a delta of `base`, or None when `base` is too large to be
/// addressed (4 GiB).
pub(crate) fn encode(base: &[u8], target: &[u8]) -> Option<Vec<u8>> {
    if u32::try_from(base.len()).is_err() {
        return None;
    }
    let mut index: HashMap<u128, u32> = HashMap::with_capacity(base.len() / BLOCK + 1);
    for (n, block) in base.chunks_exact(BLOCK).enumerate() {
        index.entry(key(block)).or_insert((n * BLOCK) as u32);
    }
    let mut out = Vec::new();
    varint(&mut out, base.len());
    varint(&mut out, target.len());
    let (mut i, mut pending) = (0, 0);
    while i + BLOCK <= target.len() {
        let Some(&at) = index.get(&key(&target[i..i + BLOCK])) else {
            i += 1;
            continue;
        };
        let (mut from, mut to) = (at as usize, i);
        // Grow the match backwards over bytes not yet emitted, then forwards.
        while to > pending && from > 0 && base[from - 1] == target[to - 1] {
            from -= 1;
            to -= 1;
        }
        let mut len = i - to + BLOCK;
        while to + len < target.len()
            && from + len < base.len()
            && base[from + len] == target[to + len]
        {
            len += 1;
        }
        insert(&mut out, &target[pending..to]);
        copy(&mut out, from, len);
        i = to + len;
        pending = i;
    }
    insert(&mut out, &target[pending..]);
    Some(out)
}

fn key(block: &[u8]) -> u128 {
    u128::from_le_bytes(block.try_into().expect("a whole block"))
}

fn varint(out: &mut Vec<u8>, mut n: usize) {
    loop {
        let byte = (n & 0x7f) as u8;
        n >>= 7;
        if n == 0 {
            out.push(byte);
            return;
        }
        out.push(byte | 0x80);
    }
}

fn insert(out: &mut Vec<u8>, bytes: &[u8]) {
    for chunk in bytes.chunks(INSERT_MAX) {
        out.push(chunk.len() as u8);
        out.extend_from_slice(chunk);
    }
}

fn copy(out: &mut Vec<u8>, mut from: usize, mut len: usize) {
    while len > 0 {
        let n = len.min(COPY_MAX);
        let at = out.len();
        out.push(0x80);
        for (bit, byte) in (from as u32).to_le_bytes().into_iter().enumerate() {
            if byte != 0 {
                out[at] |= 1 << bit;
                out.push(byte);
            }
        }
        for (bit, byte) in (n as u32).to_le_bytes()[..3].iter().enumerate() {
            if *byte != 0 {
                out[at] |= 1 << (4 + bit);
                out.push(*byte);
            }
        }
        from += n;
        len -= n;
    }
}

/// `delta` applied to `base` (what git does when it reads the object);
/// None if the delta does not fit the base. A merge checks each delta it
/// makes with it before the pack is written.
pub(crate) fn apply(base: &[u8], delta: &[u8]) -> Option<Vec<u8>> {
    let mut at = 0;
    let mut read_varint = || {
        let (mut n, mut shift) = (0usize, 0);
        loop {
            let b = *delta.get(at)?;
            at += 1;
            n |= usize::from(b & 0x7f) << shift;
            shift += 7;
            if b & 0x80 == 0 {
                return Some(n);
            }
        }
    };
    let (base_len, target_len) = (read_varint()?, read_varint()?);
    if base_len != base.len() {
        return None;
    }
    let mut out = Vec::with_capacity(target_len);
    while at < delta.len() {
        let op = delta[at];
        at += 1;
        if op & 0x80 == 0 {
            let n = usize::from(op);
            out.extend_from_slice(delta.get(at..at + n)?);
            at += n;
            continue;
        }
        let mut field = |bits: std::ops::Range<u8>| -> Option<usize> {
            let mut v = 0usize;
            for (i, bit) in bits.enumerate() {
                if op & (1 << bit) != 0 {
                    v |= usize::from(*delta.get(at)?) << (8 * i);
                    at += 1;
                }
            }
            Some(v)
        };
        let from = field(0..4)?;
        let len = match field(4..7)? {
            0 => 0x10000,
            n => n,
        };
        out.extend_from_slice(base.get(from..from + len)?);
    }
    (out.len() == target_len).then_some(out)
}

#[cfg(test)]
mod tests {
    use proptest::prelude::*;

    use super::*;

    #[test]
    fn a_tree_with_one_entry_changed_is_a_few_dozen_bytes() {
        let base: Vec<u8> = (0..1_000u32)
            .flat_map(|n| format!("100644 note-{n:04}.md\0{:020}", n * 7).into_bytes())
            .collect();
        let mut target = base.clone();
        let at = target.len() / 2;
        target[at..at + 20].copy_from_slice(b"abcdefghijklmnopqrst");
        let delta = encode(&base, &target).unwrap();
        assert!(delta.len() < 80, "{} bytes", delta.len());
        assert_eq!(apply(&base, &delta).unwrap(), target);
    }

    proptest! {
        #[test]
        fn a_delta_gives_back_its_target(
            base in proptest::collection::vec(any::<u8>(), 0..3_000),
            edits in proptest::collection::vec((any::<u16>(), any::<u16>(), proptest::collection::vec(any::<u8>(), 0..40)), 0..6),
        ) {
            let mut target = base.clone();
            for (at, cut, with) in edits {
                let at = usize::from(at) % (target.len() + 1);
                let end = (at + usize::from(cut) % 64).min(target.len());
                target.splice(at..end, with);
            }
            let delta = encode(&base, &target).unwrap();
            prop_assert_eq!(apply(&base, &delta).unwrap(), target);
        }

        #[test]
        fn any_bytes_from_any_base_come_back(
            base in proptest::collection::vec(0u8..4, 0..2_000),
            target in proptest::collection::vec(0u8..4, 0..2_000),
        ) {
            let delta = encode(&base, &target).unwrap();
            prop_assert_eq!(apply(&base, &delta).unwrap(), target);
        }
    }
}
