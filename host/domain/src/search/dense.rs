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

use std::collections::{HashMap, HashSet};
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
    file: String,
    start_line: u64,
    end_line: u64,
    heading: String,
    vector: Quantized,
}

/// The sections with a vector, and where each is by (file, first line).
#[derive(Default)]
struct Vectors {
    sections: Vec<Section>,
    at: HashMap<(String, u64), usize>,
    /// Per manual, the share of its letters that are CJK (what it is
    /// written in, roughly).
    cjk: HashMap<String, f64>,
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

/// Per manual, the share of CJK letters in the texts of its sections.
fn manual_scripts(hits: &[Hit], texts: &[String]) -> HashMap<String, f64> {
    let mut counts: HashMap<String, (usize, usize)> = HashMap::new();
    for (hit, text) in hits.iter().zip(texts) {
        let manual = hit.file.split('/').next().unwrap_or("").to_owned();
        let (c, l) = letters(text);
        let e = counts.entry(manual).or_default();
        *e = (e.0 + c, e.1 + l);
    }
    counts.into_iter().map(|(m, n)| (m, cjk_share(n))).collect()
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
            title,
            vectors: RwLock::new(Vectors::default()),
            memo: Mutex::new(memo),
            following: Mutex::new(()),
        })
    }

    /// Take the index's sections again, embedding the texts not seen yet.
    pub fn follow(&self, index: &SectionIndex, root: &Root) -> Result<()> {
        let _one = self.following.lock().unwrap_or_else(|e| e.into_inner());
        let t = Instant::now();
        let mut hits = index.sections()?;
        hits.sort_by(|a, b| (&a.file, a.start_line).cmp(&(&b.file, b.start_line)));
        let texts = section_texts(&hits, root, self.title);
        let digests: Vec<[u8; 16]> = texts.iter().map(|t| digest(t)).collect();
        let cjk = manual_scripts(&hits, &texts);
        let todo: Vec<usize> = {
            let memo = self.memo.lock().unwrap_or_else(|e| e.into_inner());
            (0..texts.len())
                .filter(|&i| !memo.contains_key(&digests[i]))
                .collect()
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
        let sections: Vec<Section> = hits
            .iter()
            .zip(&digests)
            .filter_map(|(h, d)| {
                memo.get(d).map(|v| Section {
                    file: h.file.clone(),
                    start_line: h.start_line,
                    end_line: h.end_line,
                    heading: h.heading.clone(),
                    vector: *v,
                })
            })
            .collect();
        let compact = forget_dead(&mut memo, &digests);
        if compact {
            record.clear();
            memo.iter()
                .for_each(|(d, v)| push_record(&mut record, d, v));
        }
        drop(memo);
        let at = sections
            .iter()
            .enumerate()
            .map(|(i, s)| ((s.file.clone(), s.start_line), i))
            .collect();
        *self.vectors.write().unwrap_or_else(|e| e.into_inner()) = Vectors { sections, at, cjk };
        if !record.is_empty() || compact {
            self.keep(&record, compact);
        }
        tracing::info!(
            "sentence vectors: {} sections, {} embedded now, in {:.1} s",
            hits.len(),
            todo.len(),
            t.elapsed().as_secs_f64()
        );
        Ok(())
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
        let sections = &vectors.sections;
        let mut best: Vec<(f32, usize)> = sections
            .iter()
            .enumerate()
            .filter(|(_, s)| keep(&s.file, s.start_line))
            .map(|(i, s)| (cosine(question, &s.vector), i))
            .collect();
        best.sort_by(|a, b| b.0.total_cmp(&a.0));
        best.truncate(k);
        best.into_iter()
            .map(|(c, i)| {
                let s = &sections[i];
                Hit {
                    file: s.file.clone(),
                    start_line: s.start_line,
                    end_line: s.end_line,
                    heading: s.heading.clone(),
                    body: String::new(),
                    score: c,
                    marks: Vec::new(),
                }
            })
            .collect()
    }

    /// The cosine of `question` with each of `sections` (file, first line);
    /// 0 for a section without a vector.
    pub fn similarity(&self, question: &[f32; DIM], sections: &[(&str, u64)]) -> Vec<f32> {
        let vectors = self.vectors.read().unwrap_or_else(|e| e.into_inner());
        sections
            .iter()
            .map(|&(file, line)| {
                vectors
                    .at
                    .get(&(file.to_owned(), line))
                    .map_or(0.0, |&i| cosine(question, &vectors.sections[i].vector))
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
            .sections
            .len()
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
