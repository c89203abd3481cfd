//! A SentencePiece unigram tokenizer read from a `.model` file: the
//! pieces and their scores, the normalizer's precompiled character map (a
//! darts-clone double-array trie of byte sequences and a table of their
//! replacements), whitespace handling as SentencePiece's defaults have it
//! (a dummy prefix, spaces as U+2581, runs of spaces collapsed) and the
//! Viterbi segmentation over the pieces. Only what a unigram model with
//! those defaults needs; ids match the reference implementation's.

use thiserror::Error;

pub const UNK: u32 = 0;
pub const BOS: u32 = 1;
pub const EOS: u32 = 2;

/// The piece types the lattice leaves out (SentencePiece's `UNKNOWN` and
/// `CONTROL`: `<unk>`, `<s>`, `</s>` are never matched in text).
const UNKNOWN_TYPE: u64 = 2;
const CONTROL_TYPE: u64 = 3;
/// What an unknown character costs below the lowest piece score.
const UNK_PENALTY: f32 = 10.0;
const SPACE: &str = "\u{2581}";

#[derive(Debug, Error)]
pub enum ModelError {
    #[error("the tokenizer model is not a valid SentencePiece model: {0}")]
    Malformed(&'static str),
}

/// A minimal protobuf reader: the fields of one message, as (number, value).
enum Field<'a> {
    Varint(u64),
    Bytes(&'a [u8]),
    Fixed32([u8; 4]),
    Fixed64,
}

fn varint(data: &[u8], pos: &mut usize) -> Result<u64, ModelError> {
    let mut out = 0u64;
    for shift in (0..64).step_by(7) {
        let b = *data
            .get(*pos)
            .ok_or(ModelError::Malformed("truncated varint"))?;
        *pos += 1;
        out |= u64::from(b & 0x7f) << shift;
        if b & 0x80 == 0 {
            return Ok(out);
        }
    }
    Err(ModelError::Malformed("varint too long"))
}

fn fields(data: &[u8]) -> Result<Vec<(u64, Field<'_>)>, ModelError> {
    let mut out = Vec::new();
    let mut pos = 0;
    while pos < data.len() {
        let tag = varint(data, &mut pos)?;
        let field = match tag & 7 {
            0 => Field::Varint(varint(data, &mut pos)?),
            1 => {
                pos += 8;
                Field::Fixed64
            }
            2 => {
                let len = varint(data, &mut pos)? as usize;
                let end = pos
                    .checked_add(len)
                    .filter(|&e| e <= data.len())
                    .ok_or(ModelError::Malformed("field past the end"))?;
                let bytes = &data[pos..end];
                pos = end;
                Field::Bytes(bytes)
            }
            5 => {
                let b = data
                    .get(pos..pos + 4)
                    .ok_or(ModelError::Malformed("truncated float"))?;
                pos += 4;
                Field::Fixed32([b[0], b[1], b[2], b[3]])
            }
            _ => return Err(ModelError::Malformed("unknown wire type")),
        };
        out.push((tag >> 3, field));
    }
    if pos > data.len() {
        return Err(ModelError::Malformed("field past the end"));
    }
    Ok(out)
}

/// The normalizer's character map: the longest byte sequence in the trie
/// at a position is replaced by its entry in `normalized`.
struct CharsMap {
    units: Vec<u32>,
    normalized: Vec<u8>,
}

fn offset(unit: u32) -> usize {
    ((unit >> 10) << ((unit & 0x200) >> 6)) as usize
}

impl CharsMap {
    fn parse(blob: &[u8]) -> Result<CharsMap, ModelError> {
        let bad = ModelError::Malformed("bad character map");
        let size = blob.get(..4).ok_or(bad)?;
        let size = u32::from_le_bytes([size[0], size[1], size[2], size[3]]) as usize;
        let trie = blob
            .get(4..4 + size)
            .ok_or(ModelError::Malformed("character map trie past the end"))?;
        Ok(CharsMap {
            units: trie
                .chunks_exact(4)
                .map(|c| u32::from_le_bytes([c[0], c[1], c[2], c[3]]))
                .collect(),
            normalized: blob[4 + size..].to_vec(),
        })
    }

    /// The replacement of the longest key starting at `data[0]`, and the
    /// bytes it consumes; None when no key matches.
    fn longest(&self, data: &[u8]) -> Option<(&[u8], usize)> {
        let mut node = offset(*self.units.first()?);
        let (mut best_len, mut best_value) = (0, 0usize);
        for (i, &c) in data.iter().enumerate() {
            node ^= usize::from(c);
            let unit = *self.units.get(node)?;
            if unit & 0x8000_00ff != u32::from(c) {
                break;
            }
            node ^= offset(unit);
            if unit & 0x100 != 0 {
                best_len = i + 1;
                best_value = (*self.units.get(node)? & 0x7fff_ffff) as usize;
            }
        }
        if best_len == 0 || best_value >= self.normalized.len() {
            return None;
        }
        let rest = &self.normalized[best_value..];
        let end = rest.iter().position(|&b| b == 0).unwrap_or(rest.len());
        Some((&rest[..end], best_len))
    }
}

/// The length of the UTF-8 character at `data[0]` (1 for an invalid byte).
fn char_len(data: &[u8]) -> usize {
    let first = data[0];
    let len = match first {
        0x00..=0x7f => 1,
        _ if first >> 5 == 0x6 => 2,
        _ if first >> 4 == 0xe => 3,
        _ if first >> 3 == 0x1e => 4,
        _ => 1,
    };
    if len > data.len() || data[1..len].iter().any(|&b| b & 0xc0 != 0x80) {
        1
    } else {
        len
    }
}

pub struct SentencePiece {
    scores: Vec<f32>,
    pieces: Pieces,
    /// The longest piece, in characters.
    max_chars: usize,
    unk_score: f32,
    map: Option<CharsMap>,
}

/// Every piece that can match (not the unknown and control ones), sorted,
/// in one string: a binary search says whether a text is a piece and
/// whether a longer piece starts with it, in a tenth of the memory a table
/// of every piece's every prefix takes.
struct Pieces {
    text: String,
    /// Where each piece of `text` ends.
    ends: Vec<u32>,
    ids: Vec<u32>,
}

impl Pieces {
    fn new(mut pieces: Vec<(&str, u32)>) -> Pieces {
        // Of two pieces with the same text, the later one's id counts.
        pieces.sort_by(|a, b| a.0.cmp(b.0).then(b.1.cmp(&a.1)));
        pieces.dedup_by(|later, first| later.0 == first.0);
        let mut p = Pieces {
            text: String::with_capacity(pieces.iter().map(|(t, _)| t.len()).sum()),
            ends: Vec::with_capacity(pieces.len()),
            ids: Vec::with_capacity(pieces.len()),
        };
        for (text, id) in pieces {
            p.text.push_str(text);
            p.ends.push(p.text.len() as u32);
            p.ids.push(id);
        }
        p
    }

    fn piece(&self, k: usize) -> &str {
        let start = k.checked_sub(1).map_or(0, |k| self.ends[k] as usize);
        &self.text[start..self.ends[k] as usize]
    }

    /// None when no piece starts with `key`; else `key`'s id if it is a
    /// piece itself.
    fn find(&self, key: &str) -> Option<Option<u32>> {
        let at = partition(self.ends.len(), |k| self.piece(k) < key);
        let first = (at < self.ends.len()).then(|| self.piece(at))?;
        if !first.starts_with(key) {
            return None;
        }
        Some((first == key).then(|| self.ids[at]))
    }
}

/// The first of `0..len` for which `before` is false (`before` is true for
/// a leading run only).
fn partition(len: usize, before: impl Fn(usize) -> bool) -> usize {
    let (mut lo, mut hi) = (0, len);
    while lo < hi {
        let mid = lo + (hi - lo) / 2;
        if before(mid) {
            lo = mid + 1;
        } else {
            hi = mid;
        }
    }
    lo
}

impl SentencePiece {
    pub fn parse(model: &[u8]) -> Result<SentencePiece, ModelError> {
        let mut scores = Vec::new();
        let mut pieces = Vec::new();
        let mut max_chars = 1;
        let mut map = None;
        for (number, field) in fields(model)? {
            match (number, field) {
                (1, Field::Bytes(piece)) => {
                    let (mut text, mut score, mut kind) = (None, 0.0, 1);
                    for (n, f) in fields(piece)? {
                        match (n, f) {
                            (1, Field::Bytes(b)) => text = Some(b),
                            (2, Field::Fixed32(b)) => score = f32::from_le_bytes(b),
                            (3, Field::Varint(t)) => kind = t,
                            _ => {}
                        }
                    }
                    let text = std::str::from_utf8(
                        text.ok_or(ModelError::Malformed("a piece without text"))?,
                    )
                    .map_err(|_| ModelError::Malformed("a piece is not UTF-8"))?;
                    let id = scores.len() as u32;
                    scores.push(score);
                    if kind == UNKNOWN_TYPE || kind == CONTROL_TYPE {
                        continue;
                    }
                    max_chars = max_chars.max(text.chars().count());
                    pieces.push((text, id));
                }
                (3, Field::Bytes(spec)) => {
                    for (n, f) in fields(spec)? {
                        if let (2, Field::Bytes(blob)) = (n, f) {
                            map = Some(CharsMap::parse(blob)?);
                        }
                    }
                }
                _ => {}
            }
        }
        if scores.is_empty() {
            return Err(ModelError::Malformed("no pieces"));
        }
        let unk_score = scores.iter().copied().fold(f32::INFINITY, f32::min) - UNK_PENALTY;
        let pieces = Pieces::new(pieces);
        Ok(SentencePiece {
            scores,
            pieces,
            max_chars,
            unk_score,
            map,
        })
    }

    pub fn vocab_size(&self) -> usize {
        self.scores.len()
    }

    /// The longest piece, in characters.
    pub fn max_piece_chars(&self) -> usize {
        self.max_chars
    }

    /// `text`'s piece ids between `<s>` and `</s>`.
    pub fn encode(&self, text: &str) -> Vec<u32> {
        let norm = self.normalize(text);
        let mut ids = vec![BOS];
        if norm.is_empty() {
            ids.push(UNK);
        } else {
            ids.extend(self.viterbi(&norm));
        }
        ids.push(EOS);
        ids
    }

    /// The character map, then SentencePiece's whitespace rules.
    pub fn normalize(&self, text: &str) -> String {
        let raw = text.as_bytes();
        let prefix = |pos: usize| -> (&[u8], usize) {
            if let Some(hit) = self.map.as_ref().and_then(|m| m.longest(&raw[pos..])) {
                return hit;
            }
            let len = char_len(&raw[pos..]);
            (&raw[pos..pos + len], len)
        };
        let mut pos = 0;
        // Leading spaces go.
        while pos < raw.len() {
            let (p, adv) = prefix(pos);
            if p != b" " {
                break;
            }
            pos += adv;
        }
        if pos >= raw.len() {
            return String::new();
        }
        let mut out: Vec<u8> = SPACE.as_bytes().to_vec();
        let mut prev_space = true;
        while pos < raw.len() {
            let (mut p, adv) = prefix(pos);
            pos += adv;
            if prev_space {
                while let Some(rest) = p.strip_prefix(b" ") {
                    p = rest;
                }
            }
            if p.is_empty() {
                continue;
            }
            for &b in p {
                if b == b' ' {
                    out.extend_from_slice(SPACE.as_bytes());
                } else {
                    out.push(b);
                }
            }
            prev_space = p.last() == Some(&b' ');
        }
        while out.ends_with(SPACE.as_bytes()) {
            out.truncate(out.len() - SPACE.len());
        }
        // The replacements are UTF-8 and split only at character boundaries.
        String::from_utf8_lossy(&out).into_owned()
    }

    /// The best segmentation of `norm`: for each position, the best-scoring
    /// piece ending there (the earliest start on a tie), as the reference's
    /// lattice decides it.
    fn viterbi(&self, norm: &str) -> Vec<u32> {
        let bounds: Vec<usize> = norm
            .char_indices()
            .map(|(b, _)| b)
            .chain(std::iter::once(norm.len()))
            .collect();
        let n = bounds.len() - 1;
        let mut best = vec![-1e38f32; n + 1];
        best[0] = 0.0;
        let mut start = vec![0usize; n + 1];
        let mut piece = vec![UNK; n + 1];
        for i in 0..n {
            let base = best[i];
            let mut single = false;
            for j in i + 1..=(i + self.max_chars).min(n) {
                let Some(found) = self.pieces.find(&norm[bounds[i]..bounds[j]]) else {
                    break;
                };
                let Some(v) = found else {
                    continue;
                };
                let score = base + self.scores[v as usize];
                if score > best[j] {
                    best[j] = score;
                    start[j] = i;
                    piece[j] = v;
                }
                single |= j == i + 1;
            }
            if !single {
                let score = base + self.unk_score;
                if score > best[i + 1] {
                    best[i + 1] = score;
                    start[i + 1] = i;
                    piece[i + 1] = UNK;
                }
            }
        }
        let mut ids = Vec::new();
        let mut p = n;
        while p > 0 {
            ids.push(piece[p]);
            p = start[p];
        }
        ids.reverse();
        ids
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn varint(mut n: u64, out: &mut Vec<u8>) {
        loop {
            let b = (n & 0x7f) as u8;
            n >>= 7;
            if n == 0 {
                out.push(b);
                return;
            }
            out.push(b | 0x80);
        }
    }

    fn bytes_field(number: u64, bytes: &[u8], out: &mut Vec<u8>) {
        varint(number << 3 | 2, out);
        varint(bytes.len() as u64, out);
        out.extend_from_slice(bytes);
    }

    /// A model of `(piece, score, type)` with no character map.
    fn model(pieces: &[(&str, f32, u64)]) -> Vec<u8> {
        let mut out = Vec::new();
        for (text, score, kind) in pieces {
            let mut p = Vec::new();
            bytes_field(1, text.as_bytes(), &mut p);
            varint(2 << 3 | 5, &mut p);
            p.extend_from_slice(&score.to_le_bytes());
            varint(3 << 3, &mut p);
            varint(*kind, &mut p);
            bytes_field(1, &p, &mut out);
        }
        out
    }

    fn tiny() -> SentencePiece {
        SentencePiece::parse(&model(&[
            ("<unk>", 0.0, 2),
            ("<s>", 0.0, 3),
            ("</s>", 0.0, 3),
            ("▁", -2.0, 1),
            ("▁ab", -1.0, 1),
            ("a", -3.0, 1),
            ("b", -3.0, 1),
            ("c", -3.0, 1),
            ("bc", -2.5, 1),
        ]))
        .expect("a valid model")
    }

    #[test]
    fn the_best_segmentation_wins_and_text_is_framed() {
        let sp = tiny();
        // ▁ab + c (-4) beats ▁ + a + bc (-7.5) and ▁ + a + b + c (-11).
        assert_eq!(sp.encode("abc"), [BOS, 4, 7, EOS]);
    }

    #[test]
    fn spaces_are_collapsed_and_marked() {
        let sp = tiny();
        assert_eq!(sp.normalize("  ab   c "), "▁ab▁c");
        assert_eq!(sp.normalize("   "), "");
        assert_eq!(sp.encode("   "), [BOS, UNK, EOS]);
    }

    #[test]
    fn an_unknown_character_is_unk_and_control_pieces_never_match() {
        let sp = tiny();
        assert_eq!(sp.encode("az"), [BOS, 3, 5, UNK, EOS]);
        // `<s>` in the text is text, not the control piece.
        assert!(!sp.encode("<s>")[1..].contains(&BOS));
    }

    #[test]
    fn any_bytes_as_a_model_and_any_text_never_panic() {
        // A valid model with mutated bytes, and text from the same stream.
        let good = model(&[
            ("▁a", -1.0, 1),
            ("b", -2.0, 1),
            ("ab", -1.5, 1),
            ("<s>", 0.0, 3),
        ]);
        let mut state = 0x2545_f491_4f6c_dd1du64;
        let mut next = || {
            state ^= state << 13;
            state ^= state >> 7;
            state ^= state << 17;
            state
        };
        for _ in 0..5000 {
            let mut m = good.clone();
            for _ in 0..(next() % 4) {
                let at = (next() as usize) % m.len();
                m[at] = next() as u8;
            }
            let cut = (next() as usize) % (m.len() + 1);
            let text: Vec<u8> = (0..(next() % 24)).map(|_| next() as u8).collect();
            if let Ok(sp) = SentencePiece::parse(&m[..cut]) {
                let ids = sp.encode(&String::from_utf8_lossy(&text));
                assert_eq!((ids[0], *ids.last().unwrap()), (BOS, EOS));
                assert!(ids.iter().all(|&i| (i as usize) < sp.vocab_size().max(3)));
            }
        }
    }

    #[test]
    fn a_broken_model_is_an_error_not_a_panic() {
        assert!(SentencePiece::parse(&[0x0a, 0xff]).is_err());
        assert!(SentencePiece::parse(&[]).is_err());
        let mut m = model(&[("a", 0.0, 1)]);
        m.truncate(m.len() - 2);
        assert!(SentencePiece::parse(&m).is_err());
    }
}
