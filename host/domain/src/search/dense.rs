//! The dense signal the search tools share: a vector per indexed section
//! from kura's sentence encoder (when its model is installed in the state
//! folder), and the cosine of a question's vector with them. A section's
//! vector is made from its document's title, its heading and the start of
//! its text, so a question in another language, or in other words, still
//! lands near it.
//!
//! The sections are the index's own ([`SectionIndex::sections`]): after the
//! index changes, [`Dense::follow`] takes its sections again and embeds only
//! texts it has not seen (vectors are remembered by the digest of the text
//! embedded, and kept in the state folder across restarts, one file per
//! domain). There is no other notion of freshness than the index's.
//! [`Meaning`] is what a domain holds: the vectors built once in the
//! background and brought up to the index's generation when searched.

use std::collections::{BTreeMap, HashMap, HashSet};
use std::sync::atomic::{AtomicBool, AtomicU64, Ordering};
use std::sync::{Mutex, OnceLock, RwLock};
use std::time::Instant;

pub use kura_embed::DIM;
use kura_embed::{Probe, Quantized, quantize};

use super::encoder::{Encoder, Source};
use crate::error::{Code, Error, Result};
use crate::fs::{RelPath, Root, StateDir};
use crate::index::{Hit, LiveIndex, SectionIndex};
use crate::text::Lines;

/// What of a section is embedded: its title path and this many characters
/// of its text.
const TEXT_CHARS: usize = 400;
/// Files taken again at a time by a follow.
const FILES_PER_STEP: usize = 256;
/// The vectors kept across restarts, per domain and encoder
/// (`vectors/{domain}.{encoder}.bin`, e.g. `manuals.use-m3.bin`): records
/// of a 16-byte digest and [`DIM`] bytes. The encoder's identity is part of
/// the file's name, so another encoder starts afresh.
const CACHE_DIR: &str = "vectors";
const RECORD: usize = 16 + DIM;
/// A question is CJK when more than this share of its letters are; a
/// manual when more than this share of its sections' letters are (the
/// Japanese manuals here are 32 to 68 %, the rest of their letters being
/// code, options and names).
const QUESTION_CJK: f64 = 0.5;
const MANUAL_CJK: f64 = 0.2;

/// One indexed section and its vector.
struct Section {
    start_line: u64,
    end_line: u64,
    /// Boxed: no spare capacity, 8 bytes less than a `String`.
    heading: Box<str>,
    /// The digest of the text embedded.
    digest: [u8; 16],
    vector: Quantized,
}

/// What the index said of a file when its sections were embedded: its
/// size, modification time and content digest.
type Fingerprint = (u64, i128, String);

/// One indexed file's sections with a vector, by first line.
struct FileVectors {
    seen: Fingerprint,
    sections: Vec<Section>,
    /// (CJK characters, other letters) of its sections' texts.
    letters: (usize, usize),
}

/// The sections with a vector, file by file (in path order).
#[derive(Default)]
struct Vectors {
    files: BTreeMap<String, FileVectors>,
    /// Per manual (a key's first segment), the share of its letters that
    /// are CJK (what it is written in, roughly).
    cjk: HashMap<String, f64>,
}

impl Vectors {
    /// Every section with its file, in path and line order.
    fn sections(&self) -> impl Iterator<Item = (&str, &Section)> {
        self.sections_within("")
    }

    /// The sections of the files whose paths start with `within`: the
    /// files are in path order, so only their range is walked.
    fn sections_within<'a>(
        &'a self,
        within: &'a str,
    ) -> impl Iterator<Item = (&'a str, &'a Section)> {
        use std::ops::Bound;
        self.files
            .range::<str, _>((Bound::Included(within), Bound::Unbounded))
            .take_while(move |(f, _)| f.starts_with(within))
            .flat_map(|(f, v)| v.sections.iter().map(move |s| (f.as_str(), s)))
    }

    /// The `k` sections under `within` that `keep` keeps nearest to
    /// `probe`, best first (ties in path and line order), with their
    /// cosines. The best k are kept in at most 2k entries: when full, the
    /// best k of them are found (in no order) and the rest dropped; only
    /// the last k are sorted.
    fn nearest<'a>(
        &'a self,
        probe: &Probe,
        within: &'a str,
        keep: impl Fn(&str, u64) -> bool,
        k: usize,
    ) -> Vec<(f32, &'a str, &'a Section)> {
        type Near<'s> = (f32, &'s str, &'s Section);
        let order = |a: &Near, b: &Near| {
            b.0.total_cmp(&a.0)
                .then_with(|| (a.1, a.2.start_line).cmp(&(b.1, b.2.start_line)))
        };
        let mut best: Vec<Near> = Vec::new();
        if k == 0 {
            return best;
        }
        for (f, s) in self.sections_within(within) {
            if keep(f, s.start_line) {
                if best.len() == k.saturating_mul(2) {
                    best.select_nth_unstable_by(k - 1, order);
                    best.truncate(k);
                }
                best.push((probe.cosine(&s.vector), f, s));
            }
        }
        if best.len() > k {
            best.select_nth_unstable_by(k - 1, order);
        }
        best.truncate(k);
        best.sort_by(order);
        best
    }

    /// The heap they hold, in bytes: each file's key and sections (vector,
    /// lines, digest, heading), and the tree's nodes (roughly a key, a
    /// value and a pointer per file).
    fn heap_bytes(&self) -> usize {
        let node = std::mem::size_of::<(String, FileVectors)>() + 8;
        self.files
            .iter()
            .map(|(f, v)| {
                let sections: usize = v.sections.iter().map(|s| s.heading.len()).sum();
                node + f.capacity()
                    + v.seen.2.capacity()
                    + v.sections.capacity() * std::mem::size_of::<Section>()
                    + sections
            })
            .sum()
    }

    fn scripts(&self) -> HashMap<String, f64> {
        let mut counts: HashMap<&str, (usize, usize)> = HashMap::new();
        for (file, v) in &self.files {
            let manual = file.split('/').next().unwrap_or("");
            let e = counts.entry(manual).or_default();
            *e = (e.0 + v.letters.0, e.1 + v.letters.1);
        }
        counts
            .into_iter()
            .map(|(m, n)| (m.to_owned(), cjk_share(n)))
            .collect()
    }
}

/// (CJK characters, other letters) of `text`.
fn letters(text: &str) -> (usize, usize) {
    text.chars().fold((0, 0), |(c, l), ch| {
        if crate::text::tokenize::is_cjk(ch) {
            (c + 1, l)
        } else if ch.is_alphabetic() {
            (c, l + 1)
        } else {
            (c, l)
        }
    })
}

/// Whether more than half of `text`'s letters are CJK.
pub fn mostly_cjk(text: &str) -> bool {
    cjk_share(letters(text)) > QUESTION_CJK
}

fn cjk_share((c, l): (usize, usize)) -> f64 {
    if c + l == 0 {
        0.0
    } else {
        c as f64 / (c + l) as f64
    }
}

pub struct Dense {
    encoder: Encoder,
    state: Option<StateDir>,
    /// The domain whose sections these are (for the log).
    domain: String,
    /// Where in the state folder the vectors are kept.
    cache: String,
    /// A section's document title, from its file's path.
    title: fn(&str) -> String,
    vectors: RwLock<Vectors>,
    /// The vectors kept in the state folder by an earlier run, by text
    /// digest, until the first follow claims those still in use (then
    /// empty: a vector is held once, by its section).
    kept: Mutex<HashMap<[u8; 16], Quantized>>,
    /// One follow at a time; how many records the cache file holds.
    following: Mutex<usize>,
}

fn digest(text: &str) -> [u8; 16] {
    let mut d = [0u8; 16];
    d.copy_from_slice(&blake3::hash(text.as_bytes()).as_bytes()[..16]);
    d
}

/// The text a section is embedded from, in a file of `lines`.
fn section_text(hit: &Hit, lines: &Lines, title: fn(&str) -> String) -> String {
    let title = title(&hit.file);
    let (a, b) = (hit.start_line as usize, hit.end_line as usize);
    let body = if a >= 1 && a <= b && b <= lines.count() {
        &lines.text()[lines.start(a)..lines.end(b)]
    } else {
        ""
    };
    let mut text = format!("{title} > {}\n", hit.heading);
    text.extend(body.chars().take(TEXT_CHARS));
    text
}

/// The text each of `hits` (file by file) is embedded from: each file read
/// and split in lines once.
fn section_texts(hits: &[Hit], root: &Root, title: fn(&str) -> String) -> Vec<String> {
    hits.chunk_by(|a, b| a.file == b.file)
        .flat_map(|same| {
            let text = RelPath::parse(&same[0].file, false)
                .ok()
                .and_then(|p| root.read_indexed(&p))
                .unwrap_or_default();
            let lines = Lines::new(&text);
            same.iter()
                .map(|hit| section_text(hit, &lines, title))
                .collect::<Vec<_>>()
        })
        .collect()
}

fn push_record(record: &mut Vec<u8>, digest: &[u8; 16], vector: &Quantized) {
    record.extend_from_slice(digest);
    record.extend(vector.iter().map(|&x| x as u8));
}

/// The vectors of the `changed` files, from their sections `hits` (in
/// file order), their texts and digests, and the `known` vectors; a file
/// with no section is remembered too, so that it is not taken again.
fn file_vectors(
    changed: Vec<(String, Fingerprint)>,
    hits: &[Hit],
    texts: &[String],
    digests: &[[u8; 16]],
    known: &HashMap<[u8; 16], Quantized>,
) -> Vec<(String, FileVectors)> {
    let mut by_file: HashMap<String, FileVectors> = changed
        .into_iter()
        .map(|(f, seen)| {
            let v = FileVectors {
                seen,
                sections: Vec::new(),
                letters: (0, 0),
            };
            (f, v)
        })
        .collect();
    for ((h, text), d) in hits.iter().zip(texts).zip(digests) {
        let (Some(v), Some(vector)) = (by_file.get_mut(&h.file), known.get(d)) else {
            continue;
        };
        let (c, l) = letters(text);
        v.letters = (v.letters.0 + c, v.letters.1 + l);
        v.sections.push(Section {
            start_line: h.start_line,
            end_line: h.end_line,
            heading: h.heading.as_str().into(),
            digest: *d,
            vector: *vector,
        });
    }
    // Pushed one by one, a list may hold twice the room it needs.
    by_file
        .values_mut()
        .for_each(|v| v.sections.shrink_to_fit());
    by_file.into_iter().collect()
}

impl Dense {
    /// The encoder `source` gives, if any, for the sections of the domain
    /// `domain`, whose documents' titles `title` gives.
    pub fn open(source: &Source, domain: &str, title: fn(&str) -> String) -> Option<Dense> {
        let encoder = source.open()?;
        let state = source
            .state_dir
            .as_deref()
            .and_then(|p| StateDir::open(p).ok());
        let cache = format!("{CACHE_DIR}/{domain}.{}.bin", encoder.identity());
        let bytes = state
            .as_ref()
            .and_then(|s| s.read(&cache).ok().flatten())
            .unwrap_or_default();
        let kept: HashMap<[u8; 16], Quantized> = bytes
            .chunks_exact(RECORD)
            .map(|r| {
                let mut d = [0u8; 16];
                d.copy_from_slice(&r[..16]);
                let mut v = [0i8; DIM];
                for (v, b) in v.iter_mut().zip(&r[16..]) {
                    *v = *b as i8;
                }
                (d, v)
            })
            .collect();
        Some(Dense {
            encoder,
            state,
            cache,
            domain: domain.to_owned(),
            title,
            vectors: RwLock::new(Vectors::default()),
            following: Mutex::new(bytes.len() / RECORD),
            kept: Mutex::new(kept),
        })
    }

    /// Bring the vectors up to the index: the files whose size, time or
    /// digest in the index's manifest differ from those their vectors were
    /// made for are taken again (their sections from the index, their texts
    /// from the files, only texts not seen before embedded), and the files
    /// the index no longer holds are dropped. Nothing else is read.
    pub fn follow(&self, index: &SectionIndex, root: &Root) -> Result<()> {
        let mut records = self.following.lock().unwrap_or_else(|e| e.into_inner());
        let t = Instant::now();
        let (changed, gone) = self.changes(index);
        if changed.is_empty() && gone.is_empty() {
            return Ok(());
        }
        // Vectors to reuse: those an earlier run kept (claimed as sections
        // take them; what is left after a whole follow is dead) and those
        // of the removed files (a file renamed is not embedded again).
        let mut known = std::mem::take(&mut *self.kept.lock().unwrap_or_else(|e| e.into_inner()));
        {
            let mut v = self.vectors.write().unwrap_or_else(|e| e.into_inner());
            for f in &gone {
                if let Some(old) = v.files.remove(f) {
                    known.extend(old.sections.iter().map(|s| (s.digest, s.vector)));
                }
            }
        }
        let mut embedded = 0;
        // A few hundred files at a time, so that the texts held while they
        // are embedded stay few whatever the domain's size.
        for step in changed.chunks(FILES_PER_STEP) {
            match self.take_again(step, index, root, &mut known) {
                Ok((n, record)) => {
                    embedded += n;
                    *records += n;
                    if !record.is_empty() {
                        self.keep(&record, false);
                    }
                }
                Err(e) => {
                    // Unclaimed vectors wait for the next follow.
                    *self.kept.lock().unwrap_or_else(|e| e.into_inner()) = known;
                    return Err(e);
                }
            }
        }
        drop(known);
        let live = self.settle(&mut records);
        if changed.len() > FILES_PER_STEP {
            // The texts and buffers of a build of this size are freed now;
            // without this the process would keep their pages for good.
            crate::heap::give_back();
        }
        tracing::info!(
            "{} sentence vectors: {} sections ({:.1} MiB), {} files taken again, {} dropped, {} texts embedded now, in {:.3} s",
            self.domain,
            live.0,
            live.1 as f64 / 1_048_576.0,
            changed.len(),
            gone.len(),
            embedded,
            t.elapsed().as_secs_f64()
        );
        Ok(())
    }

    /// Take the files of `step` again: their sections from the index,
    /// their texts from the files, a vector for each (from `known`, else
    /// embedded now). How many texts were embedded, and their records.
    fn take_again(
        &self,
        step: &[(String, Fingerprint)],
        index: &SectionIndex,
        root: &Root,
        known: &mut HashMap<[u8; 16], Quantized>,
    ) -> Result<(usize, Vec<u8>)> {
        let keys: Vec<&str> = step.iter().map(|(f, _)| f.as_str()).collect();
        let mut hits = index.sections_of(&keys)?;
        hits.sort_by(|a, b| (&a.file, a.start_line).cmp(&(&b.file, b.start_line)));
        let texts = section_texts(&hits, root, self.title);
        let digests: Vec<[u8; 16]> = texts.iter().map(|t| digest(t)).collect();
        {
            // The files' own vectors as they were: an unchanged section of
            // an edited file keeps its vector.
            let v = self.vectors.read().unwrap_or_else(|e| e.into_inner());
            for old in keys.iter().filter_map(|f| v.files.get(*f)) {
                known.extend(old.sections.iter().map(|s| (s.digest, s.vector)));
            }
        }
        let (n, record) = self.embed_new(&texts, &digests, known)?;
        let fresh = file_vectors(step.to_vec(), &hits, &texts, &digests, known);
        // Claimed: from now on these vectors live in their sections only.
        for d in &digests {
            known.remove(d);
        }
        let mut v = self.vectors.write().unwrap_or_else(|e| e.into_inner());
        v.files.extend(fresh);
        Ok((n, record))
    }

    /// After a follow: each manual's script, and the cache file rewritten
    /// from the live sections once it holds more than twice as many records
    /// as there are live texts (so that it follows the domain's size, not
    /// its history). How many sections have a vector, and their heap.
    fn settle(&self, records: &mut usize) -> (usize, usize) {
        let mut v = self.vectors.write().unwrap_or_else(|e| e.into_inner());
        v.cjk = v.scripts();
        let unique: HashMap<[u8; 16], &Quantized> =
            v.sections().map(|(_, s)| (s.digest, &s.vector)).collect();
        if *records > 2 * unique.len().max(1) {
            let mut record = Vec::with_capacity(unique.len() * RECORD);
            unique
                .iter()
                .for_each(|(d, q)| push_record(&mut record, d, q));
            self.keep(&record, true);
            *records = unique.len();
        }
        (v.sections().count(), v.heap_bytes())
    }

    /// The files of the index whose vectors are missing or were made for
    /// other content (with what the index says of them now), and the files
    /// with vectors the index no longer holds.
    fn changes(&self, index: &SectionIndex) -> (Vec<(String, Fingerprint)>, Vec<String>) {
        let manifest: Vec<(String, Fingerprint)> = index
            .files()
            .iter()
            .map(|(k, i)| (k.to_owned(), (i.size, i.mtime_ns, i.hash.to_owned())))
            .collect();
        let vectors = self.vectors.read().unwrap_or_else(|e| e.into_inner());
        let held: HashSet<&str> = manifest.iter().map(|(k, _)| k.as_str()).collect();
        let gone = vectors
            .files
            .keys()
            .filter(|k| !held.contains(k.as_str()))
            .cloned()
            .collect();
        let changed = manifest
            .iter()
            .filter(|(k, seen)| vectors.files.get(k).is_none_or(|v| &v.seen != seen))
            .cloned()
            .collect();
        (changed, gone)
    }

    /// Embed the texts whose `digests` are not `known` (and add them): how
    /// many, and the records to keep for them.
    fn embed_new(
        &self,
        texts: &[String],
        digests: &[[u8; 16]],
        known: &mut HashMap<[u8; 16], Quantized>,
    ) -> Result<(usize, Vec<u8>)> {
        // A text twice in the batch is embedded once.
        let mut once = HashSet::new();
        let todo: Vec<usize> = (0..texts.len())
            .filter(|&i| !known.contains_key(&digests[i]) && once.insert(digests[i]))
            .collect();
        let fresh: Vec<String> = todo.iter().map(|&i| texts[i].clone()).collect();
        let vectors = self.encoder.embed(&fresh).map_err(|why| {
            Error::new(
                Code::PluginFailed,
                format!("{} texts not embedded: {why}", fresh.len()),
            )
        })?;
        let mut record = Vec::with_capacity(todo.len() * RECORD);
        for (&i, v) in todo.iter().zip(&vectors) {
            let q = quantize(v);
            push_record(&mut record, &digests[i], &q);
            known.insert(digests[i], q);
        }
        Ok((todo.len(), record))
    }

    /// Add `record` to the vectors kept in the state folder, or replace
    /// them with it when `whole`.
    fn keep(&self, record: &[u8], whole: bool) {
        let Some(state) = &self.state else { return };
        let kept = state.ensure_dir(CACHE_DIR).and_then(|_| {
            if whole {
                state.write(&self.cache, record)
            } else {
                state.append(&self.cache, record)
            }
        });
        if let Err(e) = kept {
            tracing::warn!("cannot keep the section vectors: {e}");
        }
    }

    /// The question's vector; None when the encoder fails (the search
    /// then matches words only).
    pub fn question(&self, text: &str) -> Option<[f32; DIM]> {
        self.encoder.question(text)
    }

    /// The `k` sections nearest to `question` among those of the files
    /// under `within` (a path prefix: `manual/`, `project/folder/`; empty
    /// for all) that `keep` keeps, best first, as index hits (no body; the
    /// cosine as their score).
    pub fn nearest(
        &self,
        question: &[f32; DIM],
        within: &str,
        keep: impl Fn(&str, u64) -> bool,
        k: usize,
    ) -> Vec<Hit> {
        let probe = Probe::new(question);
        let vectors = self.vectors.read().unwrap_or_else(|e| e.into_inner());
        let best = vectors.nearest(&probe, within, keep, k);
        best.into_iter()
            .map(|(c, file, s)| Hit {
                file: file.to_owned(),
                start_line: s.start_line,
                end_line: s.end_line,
                heading: s.heading.to_string(),
                body: String::new(),
                score: c,
                marks: Vec::new(),
            })
            .collect()
    }

    /// [`Dense::nearest`], only those at cosine `floor` or more.
    pub fn near(
        &self,
        question: &[f32; DIM],
        within: &str,
        keep: impl Fn(&str, u64) -> bool,
        k: usize,
        floor: f32,
    ) -> Vec<Hit> {
        let mut hits = self.nearest(question, within, keep, k);
        hits.retain(|h| h.score >= floor);
        hits
    }

    /// The cosine of `question` with each of `sections` (file, first line);
    /// 0 for a section without a vector.
    pub fn similarity(&self, question: &[f32; DIM], sections: &[(&str, u64)]) -> Vec<f32> {
        let probe = Probe::new(question);
        let vectors = self.vectors.read().unwrap_or_else(|e| e.into_inner());
        sections
            .iter()
            .map(|&(file, line)| {
                vectors
                    .files
                    .get(file)
                    .and_then(|v| v.sections.iter().find(|s| s.start_line == line))
                    .map_or(0.0, |s| probe.cosine(&s.vector))
            })
            .collect()
    }

    /// Whether `question` and `manual` are written in different scripts: a
    /// mostly Latin question over a manual with a fair share of CJK text, or
    /// a mostly CJK question over a Latin one. Words cannot match across
    /// that gap, whatever option names and code the manual shares.
    pub fn other_script(&self, question: &str, manual: &str) -> bool {
        let vectors = self.vectors.read().unwrap_or_else(|e| e.into_inner());
        let Some(&m) = vectors.cjk.get(manual) else {
            return false;
        };
        let q = cjk_share(letters(question));
        (q > QUESTION_CJK) != (m > MANUAL_CJK)
    }

    /// Whether `manual` is mostly in Latin letters (known once its
    /// sections have vectors): a Japanese question's words cannot match it.
    pub fn latin(&self, manual: &str) -> bool {
        let vectors = self.vectors.read().unwrap_or_else(|e| e.into_inner());
        vectors.cjk.get(manual).is_some_and(|&m| m <= MANUAL_CJK)
    }

    /// How many sections have a vector.
    pub fn len(&self) -> usize {
        self.vectors
            .read()
            .unwrap_or_else(|e| e.into_inner())
            .files
            .values()
            .map(|v| v.sections.len())
            .sum()
    }

    pub fn is_empty(&self) -> bool {
        self.len() == 0
    }
}

/// What a search says when it matched words only because the sentence
/// vectors are not built yet.
pub const WORDS_ONLY: &str =
    "the sentence vectors are not built yet: this search matched words only";

/// A domain's dense signal: built once, in the background after the lexical
/// index (searches match words only meanwhile, and say so), then brought up
/// to the index's generation whenever a search asks for it.
pub struct Meaning {
    domain: &'static str,
    title: fn(&str) -> String,
    source: Source,
    /// The vectors, once built (None inside: no model, or turned off).
    dense: OnceLock<Option<Dense>>,
    /// The index generation the vectors follow.
    generation: AtomicU64,
    /// The vectors are being built for the first time.
    building: AtomicBool,
}

/// Clears a flag when dropped (also when the build panics).
struct Clear<'a>(&'a AtomicBool);

impl Drop for Clear<'_> {
    fn drop(&mut self) {
        self.0.store(false, Ordering::Relaxed);
    }
}

impl Meaning {
    /// The dense signal of `domain`'s sections (whose documents' titles
    /// `title` gives), with the encoder `source` gives.
    pub fn new(domain: &'static str, title: fn(&str) -> String, source: Source) -> Meaning {
        Meaning {
            domain,
            title,
            source,
            dense: OnceLock::new(),
            generation: AtomicU64::new(u64::MAX),
            building: AtomicBool::new(false),
        }
    }

    /// The vectors, building them first if no one has (a concurrent caller
    /// waits for the same build); None without a model.
    pub fn build(&self, index: &LiveIndex, root: &Root) -> Option<&Dense> {
        self.dense
            .get_or_init(|| {
                // Building from the moment an encoder that may exist is
                // looked for: a search meanwhile says it matched words
                // only (and says nothing when there is no encoder).
                if self.source.expected() {
                    self.building.store(true, Ordering::Relaxed);
                }
                let _built = Clear(&self.building);
                let d = Dense::open(&self.source, self.domain, self.title)?;
                self.follow(&d, index, root, index.generation());
                Some(d)
            })
            .as_ref()
    }

    /// The vectors as they are, if built (not brought up to date).
    pub fn built(&self) -> Option<&Dense> {
        self.dense.get()?.as_ref()
    }

    /// Whether vectors are coming but not there yet: from the start (the
    /// background build begins only after the lexical index) until the
    /// first build ends. Searches match words only meanwhile, and say so.
    pub fn building(&self) -> bool {
        self.building.load(Ordering::Relaxed)
            || (self.dense.get().is_none() && self.source.expected())
    }

    /// The warning of a search made without vectors while they are
    /// [`building`](Self::building); None when none are coming.
    pub fn words_only(&self) -> Option<String> {
        self.building().then(|| WORDS_ONLY.to_owned())
    }

    /// The vectors if they are built, brought up to the index's
    /// `generation` (the texts that changed are embedded now).
    pub fn current(&self, index: &LiveIndex, root: &Root, generation: u64) -> Option<&Dense> {
        let d = self.dense.get()?.as_ref()?;
        if self.generation.load(Ordering::Relaxed) != generation {
            self.follow(d, index, root, generation);
        }
        Some(d)
    }

    /// Bring `d` up to the index as of `generation`, and remember it.
    fn follow(&self, d: &Dense, index: &LiveIndex, root: &Root, generation: u64) {
        match index.index().and_then(|i| d.follow(i, root)) {
            Ok(()) => self.generation.store(generation, Ordering::Relaxed),
            Err(e) => tracing::warn!("{} sentence vectors: {}", self.domain, e.message),
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn file(lines: &[u64]) -> FileVectors {
        FileVectors {
            seen: (0, 0, String::new()),
            sections: lines
                .iter()
                .map(|&l| Section {
                    start_line: l,
                    end_line: l,
                    heading: "".into(),
                    digest: [0; 16],
                    vector: [0; DIM],
                })
                .collect(),
            letters: (0, 0),
        }
    }

    /// From a start until the vectors are built a search matches words
    /// only and must say so: also before the background build has begun
    /// (while the lexical index is built first).
    #[test]
    fn a_search_before_the_first_build_begins_knows_it_matches_words_only() {
        let dir = tempfile::tempdir().unwrap();
        let source = |enabled| Source {
            state_dir: Some(dir.path().to_owned()),
            plugins: None,
            enabled,
        };
        let title = |f: &str| f.to_owned();
        // No model: nothing is coming, nothing to say.
        assert!(!Meaning::new("vault", title, source(true)).building());
        StateDir::open(dir.path())
            .unwrap()
            .write(kura_embed::store::MANIFEST, b"some-package 1.0 0123\n")
            .unwrap();
        // A model is installed: the vectors are pending from the start.
        let pending = Meaning::new("vault", title, source(true));
        assert!(pending.building());
        assert!(pending.built().is_none());
        // Turned off: no vectors will come.
        assert!(!Meaning::new("vault", title, source(false)).building());
    }

    #[test]
    fn the_nearest_k_are_those_of_a_full_sort_whatever_their_number() {
        let mut v = Vectors::default();
        // 60 sections in 6 files; many share a cosine (ties go by path and
        // line), some are left out by `keep`.
        for f in 0..6 {
            let mut fv = file(&(1..=10).collect::<Vec<_>>());
            for (i, s) in fv.sections.iter_mut().enumerate() {
                s.vector[0] = ((f * 7 + i * 3) % 11) as i8 * 10;
            }
            v.files.insert(format!("m/{f}.md"), fv);
        }
        let mut question = [0.0f32; DIM];
        question[0] = 1.0;
        let probe = Probe::new(&question);
        let keep = |f: &str, line: u64| !(f == "m/2.md" && line.is_multiple_of(2));
        let mut all: Vec<(f32, String, u64)> = v
            .sections()
            .filter(|(f, s)| keep(f, s.start_line))
            .map(|(f, s)| (probe.cosine(&s.vector), f.to_owned(), s.start_line))
            .collect();
        all.sort_by(|a, b| {
            b.0.total_cmp(&a.0)
                .then_with(|| (&a.1, a.2).cmp(&(&b.1, b.2)))
        });
        for k in [0, 1, 3, 7, 20, 55, 100] {
            let got: Vec<(f32, String, u64)> = v
                .nearest(&probe, "", keep, k)
                .into_iter()
                .map(|(c, f, s)| (c, f.to_owned(), s.start_line))
                .collect();
            assert_eq!(got, all[..k.min(all.len())], "k = {k}");
        }
    }

    #[test]
    fn a_scoped_scan_walks_only_its_folder() {
        let mut v = Vectors::default();
        for (f, lines) in [
            ("a-b/x.md", &[1][..]),
            ("a/x.md", &[1, 9][..]),
            ("a/y/z.md", &[4][..]),
            ("ab/y.md", &[2][..]),
            ("b/z.md", &[3][..]),
        ] {
            v.files.insert(f.into(), file(lines));
        }
        let within = |p| -> Vec<(String, u64)> {
            v.sections_within(p)
                .map(|(f, s)| (f.to_owned(), s.start_line))
                .collect()
        };
        assert_eq!(
            within("a/"),
            [
                ("a/x.md".into(), 1),
                ("a/x.md".into(), 9),
                ("a/y/z.md".into(), 4)
            ]
        );
        assert_eq!(within("ab/"), [("ab/y.md".into(), 2)]);
        assert!(within("c/").is_empty());
        assert_eq!(within("").len(), 6, "empty: every section");
    }
}
