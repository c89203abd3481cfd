//! The query paths of a [`SectionIndex`]: a [`Search`] (text, limit,
//! filter, probes) built from analyzer terms, never parsed as syntax, and
//! the [`Results`] it brings back.

use std::collections::BTreeMap;

use tantivy::collector::TopDocs;
use tantivy::query::{BooleanQuery, BoostQuery, Occur, Query, TermQuery};
use tantivy::schema::{Field, IndexRecordOption, Value};
use tantivy::tokenizer::Language;
use tantivy::{DocSet, TantivyDocument, Term};

use crate::error::Result;
use crate::schema::Fields;
use crate::text::reference::references;
use crate::{SectionIndex, analyzer, internal};

/// Which units a search looks at.
#[derive(Clone, Copy, Debug, Default)]
pub struct Filter<'a> {
    /// Only files under this first folder.
    pub scope: Option<&'a str>,
    /// Only units carrying every one of these tags.
    pub tags: &'a [&'a str],
    /// Match the query against file names (and references) only.
    pub names_only: bool,
}

/// A term to look for in the body of each hit ([`Search::probes`]).
#[derive(Clone, Debug)]
pub struct Probe {
    /// A term as the analyzer makes them.
    pub term: String,
    /// Also any body word that starts with `term`.
    pub prefix: bool,
}

/// Whether to keep a hit, by its file path and first line.
pub type Keep<'a> = dyn Fn(&str, u64) -> bool + 'a;

/// One search of a [`SectionIndex`]: the query and what to bring back.
/// `Search { fetch: 50, ..Search::new(text, 10) }` sets what differs.
#[derive(Clone, Copy)]
pub struct Search<'a> {
    /// The user's text, analysed into terms (never parsed as syntax).
    pub text: &'a str,
    /// Hits returned at most.
    pub limit: usize,
    /// Hits looked at, so that `limit` remain after `keep`.
    pub fetch: usize,
    /// Which units are searched.
    pub only: Filter<'a>,
    /// Keeps a hit by its file path and first line; None keeps every hit.
    pub keep: Option<&'a Keep<'a>>,
    /// Terms to look for in each hit's body, from the postings (no text is
    /// read): [`Hit::marks`].
    pub probes: &'a [Probe],
    /// Count every unit that matches (before `keep`): [`Results::matched`].
    pub count: bool,
    /// Words meaning what words of the text mean (a synonym dictionary's):
    /// each counts, whole, below the text's own words ([`SYNONYM_BOOST`]).
    pub synonyms: &'a [String],
    /// The text's words in another language (a bilingual lexicon's): each
    /// counts as the text's own words do, at [`TRANSLATION_BOOST`].
    pub translations: &'a [String],
}

impl<'a> Search<'a> {
    pub fn new(text: &'a str, limit: usize) -> Search<'a> {
        Search {
            text,
            limit,
            fetch: limit,
            only: Filter::default(),
            keep: None,
            probes: &[],
            count: false,
            synonyms: &[],
            translations: &[],
        }
    }
}

/// What a [`Search`] found.
#[derive(Debug, Default)]
pub struct Results {
    /// Best first.
    pub hits: Vec<Hit>,
    /// Units matching the query within [`Search::only`] (0 unless counted).
    pub matched: usize,
}

/// One search hit.
#[derive(Clone, Debug)]
pub struct Hit {
    pub file: String,
    pub start_line: u64,
    pub end_line: u64,
    pub heading: String,
    /// Empty from the index (bodies are not stored); the domain fills it
    /// from the file when it needs it.
    pub body: String,
    pub score: f32,
    /// Which of [`Search::probes`] the body holds, in their order.
    pub marks: Vec<bool>,
}

impl SectionIndex {
    /// Words of the body field that share `word`'s English or Spanish stem
    /// (`watcher` → `watchers`; `computada` → `computadas`), from the term
    /// dictionary: stemming happens at query time, for the query's few words,
    /// instead of for every word of every document at indexing time.
    fn variants(&self, searcher: &tantivy::Searcher, word: &str) -> Vec<String> {
        const MAX_VARIANTS: usize = 32;
        let mut out: Vec<String> = Vec::new();
        for lang in [Language::English, Language::Spanish] {
            let stem = analyzer::stem(lang, word);
            if stem.chars().count() < 3 {
                continue;
            }
            let mut upper = stem.clone().into_bytes();
            if let Some(last) = upper.last_mut() {
                *last = last.saturating_add(1);
            }
            for seg in searcher.segment_readers() {
                let Ok(inv) = seg.inverted_index(self.fields.body) else {
                    continue;
                };
                let Ok(mut stream) = inv
                    .terms()
                    .range()
                    .ge(stem.as_bytes())
                    .lt(&upper)
                    .into_stream()
                else {
                    continue;
                };
                let mut seen = 0;
                while stream.advance() && seen < 4 * MAX_VARIANTS {
                    seen += 1;
                    let Ok(t) = std::str::from_utf8(stream.key()) else {
                        continue;
                    };
                    if t != word && !out.iter().any(|o| o == t) && analyzer::stem(lang, t) == stem {
                        out.push(t.to_owned());
                        if out.len() >= MAX_VARIANTS {
                            return out;
                        }
                    }
                }
            }
        }
        out
    }

    /// BM25 over heading (×`HEADING_BOOST`), body and file name
    /// (×`NAME_BOOST`) for the analyzer terms of the query, whole
    /// chapter/section/page references (×`REFERENCE_BOOST`), and body words
    /// sharing a query word's English or Spanish stem (×`STEM_BOOST`,
    /// [`SectionIndex::variants`]); restricted by [`Search::only`], kept by
    /// [`Search::keep`], each hit marked with the [`Search::probes`] its body
    /// holds.
    pub fn search(&self, q: &Search) -> Result<Results> {
        self.core.flush_for_search();
        let searcher = self.core.reader.searcher();
        let (found, matched) = self.search_in(&searcher, q)?;
        let marks = self.marks(&searcher, &found, q.probes)?;
        let hits = found
            .into_iter()
            .zip(marks)
            .map(|((mut h, _), m)| {
                h.marks = m;
                h
            })
            .collect();
        Ok(Results { hits, matched })
    }

    /// For each hit, which probes occur in its body, from the postings: a
    /// probe is a term, or with `prefix` any word of the body starting with it.
    fn marks(
        &self,
        searcher: &tantivy::Searcher,
        found: &[(Hit, tantivy::DocAddress)],
        probes: &[Probe],
    ) -> Result<Vec<Vec<bool>>> {
        const MAX_EXPANSIONS: usize = 64;
        if probes.is_empty() {
            return Ok(vec![Vec::new(); found.len()]);
        }
        let mut marks = vec![vec![false; probes.len()]; found.len()];
        // Candidates by segment, in doc order (postings are read forward).
        let mut by_segment: BTreeMap<u32, Vec<(u32, usize)>> = BTreeMap::new();
        for (i, (_, addr)) in found.iter().enumerate() {
            by_segment
                .entry(addr.segment_ord)
                .or_default()
                .push((addr.doc_id, i));
        }
        for (seg, docs) in &mut by_segment {
            docs.sort_unstable();
            let reader = searcher.segment_reader(*seg);
            let inv = reader.inverted_index(self.fields.body).map_err(internal)?;
            for (p, probe) in probes.iter().enumerate() {
                let mut terms = vec![probe.term.clone()];
                if probe.prefix {
                    let mut upper = probe.term.clone().into_bytes();
                    if let Some(last) = upper.last_mut() {
                        *last = last.saturating_add(1);
                    }
                    let mut stream = inv
                        .terms()
                        .range()
                        .ge(probe.term.as_bytes())
                        .lt(&upper)
                        .into_stream()
                        .map_err(internal)?;
                    while stream.advance() && terms.len() < MAX_EXPANSIONS {
                        if let Ok(t) = std::str::from_utf8(stream.key())
                            && t != probe.term
                        {
                            terms.push(t.to_owned());
                        }
                    }
                }
                for t in terms {
                    let term = Term::from_field_text(self.fields.body, &t);
                    let Some(mut postings) = inv
                        .read_postings(&term, IndexRecordOption::Basic)
                        .map_err(internal)?
                    else {
                        continue;
                    };
                    for &(doc, i) in docs.iter() {
                        // `seek` only moves forward: a posting already past
                        // `doc` answers without it.
                        let at = if postings.doc() >= doc {
                            postings.doc()
                        } else {
                            postings.seek(doc)
                        };
                        if at == doc {
                            marks[i][p] = true;
                        }
                    }
                }
            }
        }
        Ok(marks)
    }

    fn search_in(
        &self,
        searcher: &tantivy::Searcher,
        req: &Search,
    ) -> Result<(Vec<(Hit, tantivy::DocAddress)>, usize)> {
        let tv = std::time::Instant::now();
        let Some(q) = self.query(searcher, req) else {
            return Ok((vec![], 0));
        };
        let t0 = std::time::Instant::now();
        let top_docs = TopDocs::with_limit(req.fetch.max(req.limit).max(1)).order_by_score();
        let (top, matched) = if req.count {
            searcher
                .search(&q, &(top_docs, tantivy::collector::Count))
                .map_err(internal)?
        } else {
            (searcher.search(&q, &top_docs).map_err(internal)?, 0)
        };
        let t1 = std::time::Instant::now();
        let out = self.load(searcher, top, req)?;
        tracing::debug!(
            target: "kura::timing",
            "index search {:.2}ms, load {} docs {:.2}ms, variants {:.2}ms",
            (t1 - t0).as_secs_f64() * 1e3,
            out.len(),
            t1.elapsed().as_secs_f64() * 1e3,
            (t0 - tv).as_secs_f64() * 1e3
        );
        Ok((out, matched))
    }

    /// The query of `req`: its terms (weighted; a facet cue word standing
    /// alone ×[`CUE_WEIGHT`]) in body, heading (×2) and name (×2), each long
    /// CJK word's bigrams all together in the body (×[`RUN_BOOST`]), its
    /// references (×3), variants sharing a stem (×0.5); the scope and tags
    /// as filters that add nothing to the score. None when the text has no
    /// term.
    fn query(&self, searcher: &tantivy::Searcher, req: &Search) -> Option<Box<dyn Query>> {
        let (query, only) = (req.text, req.only);
        const HEADING_BOOST: f32 = 2.0;
        const NAME_BOOST: f32 = 2.0;
        const REFERENCE_BOOST: f32 = 3.0;
        const STEM_BOOST: f32 = 0.5;
        let f = &self.fields;
        let mut clauses: Vec<(Occur, Box<dyn Query>)> = Vec::new();
        let mut terms = crate::text::tokenize::weighted_query_terms(query);
        // Facet cue words standing alone steer the facet, not the topic.
        let cues = crate::text::phrase::cue_terms(query);
        for (t, w) in terms.iter_mut() {
            if cues.contains(t) {
                *w *= CUE_WEIGHT;
            }
        }
        if !req.translations.is_empty() {
            let translated =
                crate::text::tokenize::weighted_query_terms(&req.translations.join(" "));
            for (t, w) in translated {
                if !terms.iter().any(|(own, _)| *own == t) {
                    terms.push((t, w * TRANSLATION_BOOST));
                }
            }
        }
        for (t, w) in &terms {
            if !only.names_only {
                clauses.push(term_q(f.body, t, *w));
                clauses.push(term_q(f.heading, t, HEADING_BOOST * w));
            }
            clauses.push(term_q(f.name, t, NAME_BOOST * w));
        }
        if !only.names_only {
            clauses.extend(whole_words(f.body, query));
            clauses.extend(synonym_clauses(f, req.synonyms));
        }
        for r in references(query) {
            let q = TermQuery::new(Term::from_field_text(f.refs, &r), IndexRecordOption::Basic);
            clauses.push((
                Occur::Should,
                Box::new(BoostQuery::new(Box::new(q), REFERENCE_BOOST)),
            ));
        }
        for (t, _) in &terms {
            if !only.names_only
                && t.chars().count() >= 4
                && !t.chars().any(crate::text::tokenize::is_cjk)
            {
                for v in self.variants(searcher, t) {
                    clauses.push(term_q(f.body, &v, STEM_BOOST));
                    clauses.push(term_q(f.heading, &v, HEADING_BOOST * STEM_BOOST));
                }
            }
        }
        if clauses.is_empty() {
            return None;
        }
        Some(filtered(Box::new(BooleanQuery::new(clauses)), f, &only))
    }

    /// The first `req.limit` hits of `top` that `req.keep` keeps, their
    /// fields read from the stored documents.
    fn load(
        &self,
        searcher: &tantivy::Searcher,
        top: Vec<(f32, tantivy::DocAddress)>,
        req: &Search,
    ) -> Result<Vec<(Hit, tantivy::DocAddress)>> {
        let mut out = Vec::new();
        for (score, addr) in top {
            let hit = self.hit_at(searcher, addr, score)?;
            if req
                .keep
                .is_some_and(|keep| !keep(&hit.file, hit.start_line))
            {
                continue;
            }
            out.push((hit, addr));
            if out.len() >= req.limit {
                break;
            }
        }
        Ok(out)
    }

    /// The stored fields of the unit at `addr` (no body).
    fn hit_at(
        &self,
        searcher: &tantivy::Searcher,
        addr: tantivy::DocAddress,
        score: f32,
    ) -> Result<Hit> {
        let f = &self.fields;
        let doc: TantivyDocument = searcher.doc(addr).map_err(internal)?;
        let text = |field: Field| {
            doc.get_first(field)
                .and_then(|v| v.as_str())
                .unwrap_or("")
                .to_owned()
        };
        let line = |field: Field| doc.get_first(field).and_then(|v| v.as_u64()).unwrap_or(1);
        Ok(Hit {
            file: text(f.file),
            start_line: line(f.start_line),
            end_line: line(f.end_line),
            heading: text(f.heading),
            body: String::new(),
            score,
            marks: Vec::new(),
        })
    }

    /// For each term, whether any unit of `scope` (all of them when None)
    /// holds it in its body or heading: a word of the question that the
    /// whole manual never uses is one lexical search cannot match.
    pub fn present(&self, terms: &[String], scope: Option<&str>) -> Result<Vec<bool>> {
        self.core.flush_for_search();
        let searcher = self.core.reader.searcher();
        let f = &self.fields;
        terms
            .iter()
            .map(|t| {
                let any: Vec<(Occur, Box<dyn Query>)> = [f.body, f.heading]
                    .into_iter()
                    .map(|field| {
                        let q: Box<dyn Query> = Box::new(TermQuery::new(
                            Term::from_field_text(field, t),
                            IndexRecordOption::Basic,
                        ));
                        (Occur::Should, q)
                    })
                    .collect();
                let mut must: Vec<(Occur, Box<dyn Query>)> =
                    vec![(Occur::Must, Box::new(BooleanQuery::new(any)))];
                if let Some(s) = scope {
                    must.push((
                        Occur::Must,
                        Box::new(TermQuery::new(
                            Term::from_field_text(f.scope, s),
                            IndexRecordOption::Basic,
                        )),
                    ));
                }
                let n = searcher
                    .search(&BooleanQuery::new(must), &tantivy::collector::Count)
                    .map_err(internal)?;
                Ok(n > 0)
            })
            .collect()
    }

    /// Every unit in the index (file, lines and heading; no body, score 0),
    /// in no particular order: what a second signal computed per unit
    /// follows, so that it knows no other freshness than the index's.
    pub fn sections(&self) -> Result<Vec<Hit>> {
        self.core.flush_for_search();
        let searcher = self.core.reader.searcher();
        let mut out = Vec::new();
        for (ord, segment) in searcher.segment_readers().iter().enumerate() {
            for doc in segment.doc_ids_alive() {
                let addr = tantivy::DocAddress::new(ord as u32, doc);
                out.push(self.hit_at(&searcher, addr, 0.0)?);
            }
        }
        Ok(out)
    }

    /// The units of `files` (file, lines and heading; no body, score 0), in
    /// no particular order: what a signal computed per unit takes again for
    /// the files the index changed.
    pub fn sections_of(&self, files: &[&str]) -> Result<Vec<Hit>> {
        if files.is_empty() {
            return Ok(Vec::new());
        }
        self.core.flush_for_search();
        let searcher = self.core.reader.searcher();
        let terms = files
            .iter()
            .map(|f| Term::from_field_text(self.fields.file, f));
        let query = tantivy::query::TermSetQuery::new(terms);
        let docs = searcher
            .search(&query, &tantivy::collector::DocSetCollector)
            .map_err(internal)?;
        docs.into_iter()
            .map(|addr| self.hit_at(&searcher, addr, 0.0))
            .collect()
    }
}

/// What a facet cue word standing alone (`条件` in `条件 最大送信回数 対象`)
/// weighs against a topic word: it steers the facet, not the topic (tuned
/// on the gold set's dev half).
const CUE_WEIGHT: f32 = 0.5;
/// What a section holding every bigram of a long CJK word gains, as a share
/// of the word's own weight: the word counted again, so that the word whole
/// beats its bigrams scattered over a long section (tuned on the dev half).
const RUN_BOOST: f32 = 1.0;
/// What a word translated from the query weighs against the query's own.
pub const TRANSLATION_BOOST: f32 = 1.0;
/// What a synonym of a query word weighs against the word itself.
pub const SYNONYM_BOOST: f32 = 0.5;

/// A term of `field` weighing `boost`, one clause among those that may match.
fn term_q(field: Field, t: &str, boost: f32) -> (Occur, Box<dyn Query>) {
    let q = TermQuery::new(
        Term::from_field_text(field, t),
        IndexRecordOption::WithFreqs,
    );
    (Occur::Should, Box::new(BoostQuery::new(Box::new(q), boost)))
}

/// A long CJK word of `query`: a section holding all its bigrams in `body`
/// (most often the word itself) gains as if the word were counted again.
fn whole_words(body: Field, query: &str) -> Vec<(Occur, Box<dyn Query>)> {
    crate::text::phrase::runs(query)
        .into_iter()
        .map(|run| {
            let n = run.terms.len() as f32;
            let all: Vec<(Occur, Box<dyn Query>)> = run
                .terms
                .iter()
                .map(|t| (Occur::Must, term_q(body, t, 1.0).1))
                .collect();
            let q = BoostQuery::new(Box::new(BooleanQuery::new(all)), RUN_BOOST / n);
            (Occur::Should, Box::new(q) as Box<dyn Query>)
        })
        .collect()
}

/// Each synonym as one thing: a section holding all its terms in the body
/// or the heading gains [`SYNONYM_BOOST`] of what the word would (a long
/// word's terms share the weight, as in the query's own words).
fn synonym_clauses(f: &Fields, synonyms: &[String]) -> Vec<(Occur, Box<dyn Query>)> {
    let mut out = Vec::new();
    for s in synonyms {
        let terms = crate::text::tokenize::query_terms(s);
        if terms.is_empty() {
            continue;
        }
        let n = terms.len() as f32;
        for (field, boost) in [(f.body, 1.0), (f.heading, 2.0)] {
            let all: Vec<(Occur, Box<dyn Query>)> = terms
                .iter()
                .map(|t| (Occur::Must, term_q(field, t, 1.0).1))
                .collect();
            let q = BoostQuery::new(Box::new(BooleanQuery::new(all)), SYNONYM_BOOST * boost / n);
            out.push((Occur::Should, Box::new(q) as Box<dyn Query>));
        }
    }
    out
}

/// `q` within the scope and tags of `only`, which filter and add nothing to
/// the score.
fn filtered(q: Box<dyn Query>, f: &Fields, only: &Filter) -> Box<dyn Query> {
    let exact = |field: Field, value: &str| -> (Occur, Box<dyn Query>) {
        let t = TermQuery::new(
            Term::from_field_text(field, value),
            IndexRecordOption::Basic,
        );
        (Occur::Must, Box::new(BoostQuery::new(Box::new(t), 0.0)))
    };
    let mut must = vec![(Occur::Must, q)];
    must.extend(only.scope.map(|s| exact(f.scope, s)));
    must.extend(only.tags.iter().map(|t| exact(f.tag, t)));
    if must.len() == 1 {
        must.pop().expect("one clause").1
    } else {
        Box::new(BooleanQuery::new(must))
    }
}
