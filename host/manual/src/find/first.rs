//! Stages 1 and 2: BM25 candidates from the index (the files the query names
//! always among them), scored with the signals; a search limited to one
//! manual that finds nothing good is repeated over every manual.

use std::collections::{HashMap, HashSet};
use std::time::Instant;

use super::output::{Cand, Found, Key};
use super::{Request, SIGNAL_POOL, signals};
use crate::Manuals;
use crate::domain::search::dense::Dense;
use crate::error::Result;
use crate::index::{Filter, Hit, Search, SectionIndex};

/// Files whose names best match the query that are always analysed.
const NAMED_FILES: usize = 3;
/// Sections nearest the question in meaning that are always analysed.
const DENSE_CANDIDATES: usize = 10;
/// A section this close in meaning (cosine) answers well enough that a
/// search limited to one manual is not widened (chosen on the dev half).
pub(super) const DENSE_SUFFICIENT: f32 = 0.25;
/// Below this share of the query in the best section, a search limited to
/// one manual is repeated over every manual.
pub(super) const WEAK_COVERAGE: f64 = 0.5;

/// The first unit of each of the [`NAMED_FILES`] files whose names (and
/// references) best match `query`: a document named by the query is always
/// looked at, however its body scores.
fn named_files(index: &SectionIndex, query: &str, scope: Option<&str>) -> Result<Vec<Hit>> {
    let only = Filter {
        scope,
        names_only: true,
        ..Filter::default()
    };
    // Every unit of a file shares its name: fetch enough to see the files.
    let fetch = NAMED_FILES * 40;
    let found = index.search(&Search {
        only,
        ..Search::new(query, fetch)
    })?;
    let mut firsts: Vec<Hit> = Vec::new();
    for hit in found.hits {
        if let Some(h) = firsts.iter_mut().find(|h| h.file == hit.file) {
            if hit.start_line < h.start_line && hit.score >= h.score {
                *h = hit;
            }
        } else if firsts.len() < NAMED_FILES {
            firsts.push(hit);
        }
    }
    Ok(firsts)
}

/// Sections a search must not return (`only_unscanned_from_trace_id`).
pub(super) type Exclude = HashSet<Key>;

fn excluded(exclude: &Exclude, file: &str, line: u64) -> bool {
    !exclude.is_empty() && {
        let (m, p) = file.split_once('/').unwrap_or(("", file));
        exclude.contains(&(m.to_owned(), p.to_owned(), line))
    }
}

/// The path prefix of the sections a search in `scope` walks: the
/// manual's folder, or every manual.
fn within(scope: Option<&str>) -> String {
    scope.map_or(String::new(), |s| format!("{s}/"))
}

/// The [`DENSE_CANDIDATES`] sections of `scope` nearest to `question`,
/// those `exclude` names left out.
fn nearest_in(
    d: &Dense,
    question: &[f32; kura_embed::DIM],
    scope: Option<&str>,
    exclude: &Exclude,
) -> Vec<Hit> {
    let keep = |file: &str, line: u64| !excluded(exclude, file, line);
    d.nearest(question, &within(scope), keep, DENSE_CANDIDATES)
}

/// The sections nearest in meaning join the first `analysed` hits, after
/// them and at their last score (the signals place them); the analysed part
/// grows by as many. Returns its new length.
fn join_nearest(hits: &mut Vec<Hit>, mut analysed: usize, nearest: Vec<Hit>) -> usize {
    let floor = hits
        .get(analysed.saturating_sub(1))
        .map_or(0.0, |h| h.score);
    for mut hit in nearest {
        let same = |h: &Hit| h.file == hit.file && h.start_line == hit.start_line;
        if hits[..analysed].iter().any(same) {
            continue;
        }
        hits.retain(|h| !same(h));
        hit.score = floor;
        hits.insert(analysed, hit);
        analysed += 1;
    }
    analysed
}

/// What the first stage found: the sections (with text for the analysed
/// ones), their candidates, and how the search went.
pub(super) struct Pool {
    pub found: Vec<Found>,
    pub cands: Vec<Cand>,
    /// More sections matched than the budget's `max_candidates`.
    pub more: bool,
    /// The search went beyond `manual_id` (stage 2).
    pub scope_expanded: bool,
    /// Sections scored with every signal, for the summary.
    pub scanned: HashSet<Key>,
    /// The question's vector (None without the dense signal).
    pub question: Option<Box<[f32; kura_embed::DIM]>>,
}

/// Found sections by key, for the stages that read their text.
pub(super) fn texts(found: &[Found]) -> HashMap<Key, &Hit> {
    found.iter().map(|f| (f.key(), &f.hit)).collect()
}

impl Pool {
    /// Add sections found by another search (the corrective stage, a
    /// comparison's side): they join the pool and count as scanned; the
    /// caller merges their candidates.
    pub fn absorb(&mut self, found: Vec<Found>) {
        let have: HashSet<Key> = self.found.iter().map(Found::key).collect();
        for f in found {
            let key = f.key();
            self.scanned.insert(key.clone());
            // A section already held keeps its entry (and its text).
            if !have.contains(&key) {
                self.found.push(f);
            }
        }
    }
}

impl Manuals {
    /// Stages 1 and 2 for `req`.
    pub(super) fn first_stage(&self, req: &Request, exclude: &Exclude) -> Result<Pool> {
        let limit = req.max_candidates as usize;
        let scope = req.manual_id.as_deref();
        let dense = self.meaning.built().filter(|_| req.dense);
        // The question's vector is made, and its nearest sections found,
        // while the words are looked up: on both cores.
        let (lexical, meaning) = rayon::join(
            || self.lexical(&req.query, scope, limit, exclude),
            || {
                let d = dense?;
                let q = d.question(&req.query)?;
                let near = nearest_in(d, &q, scope, exclude);
                Some((Box::new(q), near))
            },
        );
        let (question, nearest) = meaning.unzip();
        let (mut found, mut more) = self.assemble(
            lexical?,
            nearest,
            dense.zip(question.as_deref()),
            &HashSet::new(),
        );
        // The sections are analysed for the translated words too: they are
        // the only ones a section in the other script can hold.
        let translations = self.translations_of(&req.query, scope);
        let analysed = match translations.is_empty() {
            true => req.query.clone(),
            false => format!("{} {}", req.query, translations.join(" ")),
        };
        let present = self.present(&req.query, scope, question.is_some())?;
        let mut cands = signals::score(&analysed, &found, &self.find.signals, None, present);
        let mut scope_expanded = false;
        // Weak: few of the question's words found, and (with the dense
        // signal) no section close in meaning either.
        let near = found.iter().map(|f| f.dense).fold(0.0f32, f32::max);
        let weak = cands.iter().map(|c| c.coverage).fold(0.0, f64::max) < WEAK_COVERAGE
            && near < DENSE_SUFFICIENT;
        if scope.is_some() && req.expand_scope && weak {
            let (all, all_more) = self.gather(
                &req.query,
                question.as_deref(),
                None,
                limit,
                exclude,
                &HashSet::new(),
            )?;
            if all.len() > found.len() || all.iter().any(|f| Some(f.manual_id.as_str()) != scope) {
                found = all;
                more = all_more;
                let present = self.present(&req.query, None, question.is_some())?;
                cands = signals::score(&req.query, &found, &self.find.signals, None, present);
                scope_expanded = true;
            }
        }
        let scanned = cands.iter().take(SIGNAL_POOL).map(Cand::key).collect();
        Ok(Pool {
            found,
            cands,
            more,
            scope_expanded,
            scanned,
            question,
        })
    }

    /// The share of the query's words (units) that `scope` uses at all (at
    /// least half of a unit's terms somewhere in it), 0 when the query and the
    /// manual are in different scripts; 1 when the dense signal is off, since
    /// only it reads the figure.
    fn present(&self, query: &str, scope: Option<&str>, dense: bool) -> Result<f64> {
        let units = crate::text::tokenize::content_units(query);
        if !dense || units.is_empty() {
            return Ok(1.0);
        }
        let terms: Vec<String> = units.iter().flatten().cloned().collect();
        let here = self.index.index()?.present(&terms, scope)?;
        let mut at = 0;
        let found = units
            .iter()
            .filter(|u| {
                let n = here[at..at + u.len()].iter().filter(|&&p| p).count();
                at += u.len();
                n * 2 >= u.len()
            })
            .count();
        let share = found as f64 / units.len() as f64;
        // Words in another script than the manual's match only by accident.
        let other = match (scope, self.meaning.built()) {
            (Some(manual), Some(d)) => d.other_script(query, manual),
            _ => false,
        };
        Ok(if other { 0.0 } else { share })
    }

    /// BM25 candidates of `query` in `scope` (one manual, or all), the
    /// first [`SIGNAL_POOL`] with their text (except the `known` ones, which
    /// an earlier stage has analysed), joined by the sections nearest the
    /// `question` in meaning; and whether more matched.
    pub(super) fn gather(
        &self,
        query: &str,
        question: Option<&[f32; kura_embed::DIM]>,
        scope: Option<&str>,
        limit: usize,
        exclude: &Exclude,
        known: &HashSet<Key>,
    ) -> Result<(Vec<Found>, bool)> {
        let dense = self.meaning.built().zip(question);
        // The words and the meaning are looked up at once, on both cores.
        let (lexical, nearest) = rayon::join(
            || self.lexical(query, scope, limit, exclude),
            || dense.map(|(d, q)| nearest_in(d, q, scope, exclude)),
        );
        Ok(self.assemble(lexical?, nearest, dense, known))
    }

    /// The lexical `hits` (and whether more matched) joined by the
    /// `nearest` sections, the first [`SIGNAL_POOL`] and those with their
    /// text and (with `dense`) their cosine with the question.
    fn assemble(
        &self,
        (mut hits, more): (Vec<Hit>, bool),
        nearest: Option<Vec<Hit>>,
        dense: Option<(&Dense, &[f32; kura_embed::DIM])>,
        known: &HashSet<Key>,
    ) -> (Vec<Found>, bool) {
        let mut analysed = hits.len().min(SIGNAL_POOL);
        if let Some(nearest) = nearest {
            analysed = join_nearest(&mut hits, analysed, nearest);
        }
        let mut found: Vec<Found> = hits.into_iter().map(Found::of).collect();
        let analysed = &mut found[..analysed];
        analysed.iter_mut().for_each(|f| f.analyse = true);
        if let Some((d, q)) = dense {
            let keys: Vec<(&str, u64)> = analysed
                .iter()
                .map(|f| (f.hit.file.as_str(), f.hit.start_line))
                .collect();
            let sims = d.similarity(q, &keys);
            for (f, s) in analysed.iter_mut().zip(sims) {
                f.dense = s;
            }
        }
        let n = analysed.len();
        let t = Instant::now();
        self.fill_bodies(analysed.iter_mut().filter(|f| !known.contains(&f.key())));
        tracing::debug!(target: "kura::timing", "fill {n} bodies {:.2}ms", t.elapsed().as_secs_f64() * 1e3);
        (found, more)
    }

    /// The index's best `limit` sections for `query` in `scope`, with the
    /// files the query names among the first [`SIGNAL_POOL`]; and whether
    /// more matched.
    fn lexical(
        &self,
        query: &str,
        scope: Option<&str>,
        limit: usize,
        exclude: &Exclude,
    ) -> Result<(Vec<Hit>, bool)> {
        let index = self.index.index()?;
        let keep = |file: &str, line: u64| !excluded(exclude, file, line);
        let only = Filter {
            scope,
            ..Filter::default()
        };
        let synonyms = self.synonyms_of(query, scope);
        let translations = self.translations_of(query, scope);
        let hits = index
            .search(&Search {
                fetch: limit + 1 + exclude.len(),
                only,
                keep: Some(&keep),
                synonyms: &synonyms,
                translations: &translations,
                ..Search::new(query, limit + 1)
            })?
            .hits;
        let more = hits.len() > limit;
        let mut hits: Vec<Hit> = hits.into_iter().take(limit).collect();
        // A document the query names joins the analysed pool even when its
        // body scores low (its name is all that says what it is); it enters
        // at the pool's last score, and the signals place it.
        let named = named_files(index, query, scope)?;
        let pool = hits.len().min(SIGNAL_POOL);
        let floor = hits.get(pool.saturating_sub(1)).map_or(0.0, |h| h.score);
        for mut hit in named {
            if hits[..pool].iter().any(|h| h.file == hit.file)
                || excluded(exclude, &hit.file, hit.start_line)
            {
                continue;
            }
            hits.retain(|h| !(h.file == hit.file && h.start_line == hit.start_line));
            hit.score = floor;
            let at = hits.len().min(SIGNAL_POOL.saturating_sub(NAMED_FILES));
            hits.insert(at, hit);
        }
        Ok((hits, more))
    }
    /// Read the text of sections from their files (the index does not store
    /// it): the lines of a markdown section, the flattened text of a `.json`.
    fn fill_bodies<'a>(&self, found: impl Iterator<Item = &'a mut Found>) {
        let mut files: HashMap<String, Option<String>> = HashMap::new();
        for f in found {
            if !f.hit.body.is_empty() {
                continue;
            }
            let text = files.entry(f.hit.file.clone()).or_insert_with(|| {
                crate::fs::RelPath::parse(&f.hit.file, false)
                    .ok()
                    .and_then(|p| self.root.read_indexed(&p))
            });
            let Some(text) = text else { continue };
            f.hit.body = if f.path.to_ascii_lowercase().ends_with(".json") {
                crate::fs::RelPath::parse(&f.hit.file, false)
                    .ok()
                    .and_then(|p| crate::units::extract(&p, text).into_iter().next())
                    .map(|u| u.body)
                    .unwrap_or_default()
            } else {
                let lines = crate::text::Lines::new(text);
                let (a, b) = (f.hit.start_line as usize, f.hit.end_line as usize);
                if a >= 1 && a <= b && b <= lines.count() {
                    text[lines.start(a)..lines.end(b)].to_owned()
                } else {
                    String::new()
                }
            };
        }
    }

    /// Make sure the best `n` candidates (the ones the components will read)
    /// have their text, also when the signals ranked them up from outside
    /// the analysed part of the pool.
    pub(super) fn fill_top(&self, pool: &mut Pool, n: usize) {
        let need: HashSet<Key> = pool.cands.iter().take(n).map(Cand::key).collect();
        self.fill_bodies(
            pool.found
                .iter_mut()
                .filter(|f| f.hit.body.is_empty() && need.contains(&f.key())),
        );
    }
}
