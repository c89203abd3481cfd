//! manual_find's dense signal: a vector per indexed section from kura's
//! sentence encoder (when its model is installed in the state folder), and
//! the cosine of a question's vector with them. A section's vector is made
//! from its title path and the start of its text, so a question in another
//! language, or in other words, still lands near it.
//!
//! The sections are the index's own ([`SectionIndex::sections`]): after the
//! index changes, [`Dense::follow`] takes its sections again and embeds only
//! texts it has not seen (vectors are remembered by the digest of the text
//! embedded, and kept in the state folder across restarts). There is no
//! other notion of freshness than the index's.

use std::collections::{HashMap, HashSet};
use std::path::Path;
use std::sync::{Mutex, RwLock};
use std::time::Instant;

use kura_embed::wheel::USE_M3;
use kura_embed::{DIM, Model, Quantized, cosine, quantize, store};

use crate::error::Result;
use crate::fs::{RelPath, Root, StateDir};
use crate::index::{Hit, SectionIndex};
use crate::text::Lines;

/// What of a section is embedded: its title path and this many characters
/// of its text, at most this many tokens.
const TEXT_CHARS: usize = 400;
const MAX_TOKENS: usize = 128;
/// Threads that embed (the machine kura is measured on has two cores).
const THREADS: usize = 2;
/// The vectors kept across restarts: records of a 16-byte digest and
/// [`DIM`] bytes.
const CACHE: &str = "vectors/use-m3.bin";
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
    model: Model,
    state: Option<StateDir>,
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
fn section_text(hit: &Hit, file_text: &str) -> String {
    let title = crate::name::title(&hit.file);
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
fn section_texts(hits: &[Hit], root: &Root) -> Vec<String> {
    let mut files: HashMap<&str, Option<String>> = HashMap::new();
    hits.iter()
        .map(|hit| {
            let text = files.entry(&hit.file).or_insert_with(|| {
                RelPath::parse(&hit.file, false)
                    .ok()
                    .and_then(|p| root.read_indexed(&p))
            });
            section_text(hit, text.as_deref().unwrap_or(""))
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

impl Dense {
    /// The encoder from the state folder, if its model is installed; None
    /// (with one line in the log saying how to add it) when it is not.
    pub fn open(state_path: Option<&Path>) -> Option<Dense> {
        let state = state_path.and_then(|p| StateDir::open(p).ok());
        let loaded = match &state {
            Some(s) => store::load(&USE_M3, |name| s.read(name)),
            None => Ok(None),
        };
        let model = match loaded {
            Ok(Some(m)) => m,
            Ok(None) => {
                tracing::info!(
                    "no sentence encoder installed: search is lexical only (`kura models install` adds it)"
                );
                return None;
            }
            Err(e) => {
                tracing::warn!("the sentence encoder is not used: {e}");
                return None;
            }
        };
        let memo = state
            .as_ref()
            .and_then(|s| s.read(CACHE).ok().flatten())
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
        let texts = section_texts(&hits, root);
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
        let kept = CACHE
            .rsplit_once('/')
            .map_or(Ok(()), |(dir, _)| state.ensure_dir(dir).map(drop))
            .and_then(|()| {
                if whole {
                    state.write(CACHE, record)
                } else {
                    state.append(CACHE, record)
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
