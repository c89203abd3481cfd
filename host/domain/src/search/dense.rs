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
use std::path::{Path, PathBuf};
use std::sync::atomic::{AtomicBool, AtomicU64, Ordering};
use std::sync::{Arc, Mutex, OnceLock, RwLock, Weak};
use std::time::Instant;

pub use kura_embed::DIM;
use kura_embed::wheel::USE_M3;
use kura_embed::{Model, Quantized, cosine, quantize, store};

use crate::error::Result;
use crate::fs::{RelPath, Root, StateDir};
use crate::index::{Hit, LiveIndex, SectionIndex};
use crate::text::Lines;

/// What of a section is embedded: its title path and this many characters
/// of its text, at most this many tokens.
const TEXT_CHARS: usize = 400;
const MAX_TOKENS: usize = 128;
/// Threads that embed (the machine kura is measured on has two cores).
const THREADS: usize = 2;
/// The vectors kept across restarts, per domain
/// (`vectors/{domain}.use-m3.bin`): records of a 16-byte digest and [`DIM`]
/// bytes. The encoder's name is part of the file's, so another encoder
/// starts afresh.
const CACHE_DIR: &str = "vectors";
const ENCODER: &str = "use-m3";
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
    heading: String,
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
        self.files
            .iter()
            .flat_map(|(f, v)| v.sections.iter().map(move |s| (f.as_str(), s)))
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

fn cjk_share((c, l): (usize, usize)) -> f64 {
    if c + l == 0 {
        0.0
    } else {
        c as f64 / (c + l) as f64
    }
}

pub struct Dense {
    model: Arc<Model>,
    state: Option<StateDir>,
    /// The domain whose sections these are (for the log).
    domain: String,
    /// Where in the state folder the vectors are kept.
    cache: String,
    /// A section's document title, from its file's path.
    title: fn(&str) -> String,
    vectors: RwLock<Vectors>,
    /// Every text embedded (this run or an earlier one), by digest.
    memo: Mutex<HashMap<[u8; 16], Quantized>>,
    /// One rebuild at a time.
    following: Mutex<()>,
}

fn digest(text: &str) -> [u8; 16] {
    let mut d = [0u8; 16];
    d.copy_from_slice(&blake3::hash(text.as_bytes()).as_bytes()[..16]);
    d
}

/// The text a section is embedded from.
fn section_text(hit: &Hit, file_text: &str, title: fn(&str) -> String) -> String {
    let title = title(&hit.file);
    let lines = Lines::new(file_text);
    let (a, b) = (hit.start_line as usize, hit.end_line as usize);
    let body = if a >= 1 && a <= b && b <= lines.count() {
        &file_text[lines.start(a)..lines.end(b)]
    } else {
        ""
    };
    let mut text = format!("{title} > {}\n", hit.heading);
    text.extend(body.chars().take(TEXT_CHARS));
    text
}

/// The text each of `hits` is embedded from (each file read once).
fn section_texts(hits: &[Hit], root: &Root, title: fn(&str) -> String) -> Vec<String> {
    let mut files: HashMap<&str, Option<String>> = HashMap::new();
    hits.iter()
        .map(|hit| {
            let text = files.entry(&hit.file).or_insert_with(|| {
                RelPath::parse(&hit.file, false)
                    .ok()
                    .and_then(|p| root.read_indexed(&p))
            });
            section_text(hit, text.as_deref().unwrap_or(""), title)
        })
        .collect()
}

fn push_record(record: &mut Vec<u8>, digest: &[u8; 16], vector: &Quantized) {
    record.extend_from_slice(digest);
    record.extend(vector.iter().map(|&x| x as u8));
}

/// Texts no section has any more are forgotten once they outnumber the
/// live ones, so that memory and the cache file follow the manuals' size,
/// not their history. Whether it forgot any.
fn forget_dead(memo: &mut HashMap<[u8; 16], Quantized>, live: &[[u8; 16]]) -> bool {
    let live: HashSet<&[u8; 16]> = live.iter().collect();
    let compact = memo.len() > 2 * live.len().max(1);
    if compact {
        memo.retain(|d, _| live.contains(d));
    }
    compact
}

/// The encoder installed in the state folder at `state_path`, loaded once
/// per process however many domains use it; None (with one line in the log
/// saying how to add it) when it is not installed.
fn shared_model(state_path: &Path) -> Option<Arc<Model>> {
    static LOADED: Mutex<Vec<(PathBuf, Weak<Model>)>> = Mutex::new(Vec::new());
    let mut loaded = LOADED.lock().unwrap_or_else(|e| e.into_inner());
    loaded.retain(|(_, m)| m.strong_count() > 0);
    if let Some(m) = loaded
        .iter()
        .find(|(p, _)| p == state_path)
        .and_then(|(_, m)| m.upgrade())
    {
        return Some(m);
    }
    let state = StateDir::open(state_path).ok()?;
    match store::load(&USE_M3, |name| state.read(name)) {
        Ok(Some(m)) => {
            let m = Arc::new(m);
            loaded.push((state_path.to_owned(), Arc::downgrade(&m)));
            Some(m)
        }
        Ok(None) => {
            tracing::info!(
                "no sentence encoder installed: search is lexical only (`kura models install` adds it)"
            );
            None
        }
        Err(e) => {
            tracing::warn!("the sentence encoder is not used: {e}");
            None
        }
    }
}

impl Dense {
    /// The encoder from the state folder, if its model is installed, for
    /// the sections of the domain `domain`, whose documents' titles `title`
    /// gives.
    pub fn open(
        state_path: Option<&Path>,
        domain: &str,
        title: fn(&str) -> String,
    ) -> Option<Dense> {
        let model = shared_model(state_path?)?;
        let state = state_path.and_then(|p| StateDir::open(p).ok());
        let cache = format!("{CACHE_DIR}/{domain}.{ENCODER}.bin");
        let memo = state
            .as_ref()
            .and_then(|s| s.read(&cache).ok().flatten())
            .map(|bytes| {
                bytes
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
                    .collect()
            })
            .unwrap_or_default();
        Some(Dense {
            model,
            state,
            cache,
            domain: domain.to_owned(),
            title,
            vectors: RwLock::new(Vectors::default()),
            memo: Mutex::new(memo),
            following: Mutex::new(()),
        })
    }

    /// Bring the vectors up to the index: the files whose size, time or
    /// digest in the index's manifest differ from those their vectors were
    /// made for are taken again (their sections from the index, their texts
    /// from the files, only texts not seen before embedded), and the files
    /// the index no longer holds are dropped. Nothing else is read.
    pub fn follow(&self, index: &SectionIndex, root: &Root) -> Result<()> {
        let _one = self.following.lock().unwrap_or_else(|e| e.into_inner());
        let t = Instant::now();
        let (changed, gone) = self.changes(index);
        if changed.is_empty() && gone.is_empty() {
            return Ok(());
        }
        let taken = changed.len();
        let mut hits = {
            let keys: Vec<&str> = changed.iter().map(|(f, _)| f.as_str()).collect();
            index.sections_of(&keys)?
        };
        hits.sort_by(|a, b| (&a.file, a.start_line).cmp(&(&b.file, b.start_line)));
        let texts = section_texts(&hits, root, self.title);
        let digests: Vec<[u8; 16]> = texts.iter().map(|t| digest(t)).collect();
        let (embedded, mut record) = self.embed_new(&texts, &digests);
        let fresh = self.file_vectors(changed, &hits, &texts, &digests);
        let live: Vec<[u8; 16]> = {
            let mut v = self.vectors.write().unwrap_or_else(|e| e.into_inner());
            for f in &gone {
                v.files.remove(f);
            }
            v.files.extend(fresh);
            v.cjk = v.scripts();
            v.sections().map(|(_, s)| s.digest).collect()
        };
        let mut memo = self.memo.lock().unwrap_or_else(|e| e.into_inner());
        let compact = forget_dead(&mut memo, &live);
        if compact {
            record.clear();
            memo.iter()
                .for_each(|(d, v)| push_record(&mut record, d, v));
        }
        drop(memo);
        if !record.is_empty() || compact {
            self.keep(&record, compact);
        }
        tracing::info!(
            "{} sentence vectors: {} sections, {} files taken again, {} dropped, {} texts embedded now, in {:.3} s",
            self.domain,
            live.len(),
            taken,
            gone.len(),
            embedded,
            t.elapsed().as_secs_f64()
        );
        Ok(())
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

    /// Embed the texts not seen before (by their `digests`): how many, and
    /// the records to keep for them.
    fn embed_new(&self, texts: &[String], digests: &[[u8; 16]]) -> (usize, Vec<u8>) {
        let todo: Vec<usize> = {
            let memo = self.memo.lock().unwrap_or_else(|e| e.into_inner());
            let mut todo: Vec<usize> = (0..texts.len())
                .filter(|&i| !memo.contains_key(&digests[i]))
                .collect();
            // A text twice in the batch is embedded once.
            let mut once = HashSet::new();
            todo.retain(|&i| once.insert(digests[i]));
            todo
        };
        let fresh: Vec<String> = todo.iter().map(|&i| texts[i].clone()).collect();
        let vectors = self.model.embed_all(&fresh, MAX_TOKENS, THREADS);
        let mut memo = self.memo.lock().unwrap_or_else(|e| e.into_inner());
        let mut record = Vec::with_capacity(todo.len() * RECORD);
        for (&i, v) in todo.iter().zip(&vectors) {
            let q = quantize(v);
            push_record(&mut record, &digests[i], &q);
            memo.insert(digests[i], q);
        }
        (todo.len(), record)
    }

    /// The vectors of the `changed` files, from their sections `hits` (in
    /// file order), their texts and digests; a file with no section is
    /// remembered too, so that it is not taken again.
    fn file_vectors(
        &self,
        changed: Vec<(String, Fingerprint)>,
        hits: &[Hit],
        texts: &[String],
        digests: &[[u8; 16]],
    ) -> Vec<(String, FileVectors)> {
        let memo = self.memo.lock().unwrap_or_else(|e| e.into_inner());
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
            let (Some(v), Some(vector)) = (by_file.get_mut(&h.file), memo.get(d)) else {
                continue;
            };
            let (c, l) = letters(text);
            v.letters = (v.letters.0 + c, v.letters.1 + l);
            v.sections.push(Section {
                start_line: h.start_line,
                end_line: h.end_line,
                heading: h.heading.clone(),
                digest: *d,
                vector: *vector,
            });
        }
        by_file.into_iter().collect()
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

    /// The question's vector.
    pub fn question(&self, text: &str) -> [f32; DIM] {
        self.model.embed(text, MAX_TOKENS)
    }

    /// The `k` sections nearest to `question` among those `keep` keeps,
    /// best first, as index hits (no body; the cosine as their score).
    pub fn nearest(
        &self,
        question: &[f32; DIM],
        keep: impl Fn(&str, u64) -> bool,
        k: usize,
    ) -> Vec<Hit> {
        let vectors = self.vectors.read().unwrap_or_else(|e| e.into_inner());
        let mut best: Vec<(f32, &str, &Section)> = vectors
            .sections()
            .filter(|(f, s)| keep(f, s.start_line))
            .map(|(f, s)| (cosine(question, &s.vector), f, s))
            .collect();
        // Best first, ties in path and line order; the best k found first
        // (in no order), then only those sorted.
        let order = |a: &(f32, &str, &Section), b: &(f32, &str, &Section)| {
            b.0.total_cmp(&a.0)
                .then_with(|| (a.1, a.2.start_line).cmp(&(b.1, b.2.start_line)))
        };
        if best.len() > k && k > 0 {
            best.select_nth_unstable_by(k - 1, order);
        }
        best.truncate(k);
        best.sort_by(order);
        best.into_iter()
            .map(|(c, file, s)| Hit {
                file: file.to_owned(),
                start_line: s.start_line,
                end_line: s.end_line,
                heading: s.heading.clone(),
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
        keep: impl Fn(&str, u64) -> bool,
        k: usize,
        floor: f32,
    ) -> Vec<Hit> {
        let mut hits = self.nearest(question, keep, k);
        hits.retain(|h| h.score >= floor);
        hits
    }

    /// The cosine of `question` with each of `sections` (file, first line);
    /// 0 for a section without a vector.
    pub fn similarity(&self, question: &[f32; DIM], sections: &[(&str, u64)]) -> Vec<f32> {
        let vectors = self.vectors.read().unwrap_or_else(|e| e.into_inner());
        sections
            .iter()
            .map(|&(file, line)| {
                vectors
                    .files
                    .get(file)
                    .and_then(|v| v.sections.iter().find(|s| s.start_line == line))
                    .map_or(0.0, |s| cosine(question, &s.vector))
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

/// A domain's dense signal: built once, in the background after the lexical
/// index (searches match words only meanwhile, and say so), then brought up
/// to the index's generation whenever a search asks for it.
pub struct Meaning {
    domain: &'static str,
    title: fn(&str) -> String,
    state_dir: Option<PathBuf>,
    enabled: bool,
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
    /// `title` gives), with the encoder installed in `state_dir`; never
    /// any when `enabled` is false.
    pub fn new(
        domain: &'static str,
        title: fn(&str) -> String,
        state_dir: Option<&Path>,
        enabled: bool,
    ) -> Meaning {
        Meaning {
            domain,
            title,
            state_dir: state_dir.map(Path::to_owned),
            enabled,
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
                if !self.enabled {
                    return None;
                }
                let d = Dense::open(self.state_dir.as_deref(), self.domain, self.title)?;
                self.building.store(true, Ordering::Relaxed);
                let _built = Clear(&self.building);
                self.follow(&d, index, root, index.generation());
                Some(d)
            })
            .as_ref()
    }

    /// The vectors as they are, if built (not brought up to date).
    pub fn built(&self) -> Option<&Dense> {
        self.dense.get()?.as_ref()
    }

    /// Whether the vectors are being built for the first time.
    pub fn building(&self) -> bool {
        self.building.load(Ordering::Relaxed)
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
