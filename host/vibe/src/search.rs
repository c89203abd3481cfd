//! search (002): BM25 over the chunks (tantivy), times documented boosts,
//! best first; snippets with the matched words in `**bold**`. With the
//! sentence encoder, the chunks nearest the query in meaning join the
//! candidates and a meaning term joins BM25 (see `rank`).
//!
//! The score of a chunk is `bm25 × coverage² × type × status × heading ×
//! recency`:
//! - coverage: the share of the query's words (CJK: bigrams) the chunk
//!   holds, read from the postings; a chunk with every word outranks one
//!   with half of them unless its BM25 is four times lower;
//! - type, by folder: plans 1.25, tasks 1.2, reports 1.1, sessions 1.0,
//!   references 1.0, changelog 0.95, scratch 0.8, assets 0.7;
//! - task status: in-progress 1.25, blocked 1.15, pending 1.1, done 0.9
//!   (other documents 1.0);
//! - heading: ×1.3 for a chunk under a priority heading (Current Status,
//!   Next Steps, Blockers, Decisions, or their Spanish names);
//! - recency: `1 + 0.3·e^(−age/30)` with the document's age in days (its
//!   front matter `updated`, else its modification date): 1.3 today, 1.11
//!   after a month, ~1.0 after three.
//!
//! tantivy ranks by BM25; the other factors re-rank the best
//! `max(limit + 10, 30)` chunks, so a chunk whose BM25 is below that cut cannot
//! be lifted into the results by its boosts alone.

use std::collections::{HashMap, HashSet};

use rayon::prelude::*;
use schemars::JsonSchema;
use serde::{Deserialize, Serialize};

use super::{Vibe, doc_type};
use crate::args::{Input, Phrasings};
use crate::domain::search::dense::Dense;
use crate::domain::search::phrasings::{self, distinct};
use crate::error::Result;
use crate::fs::RelPath;
use crate::index::{Filter, Hit, Probe, Results, Search, SectionIndex};
use crate::text::Lines;

#[derive(Debug, Serialize, JsonSchema)]
pub struct SearchOutput {
    pub query: String,
    // The other phrasings searched and fused (those repeating the query's
    // words left out); undescribed in the schema: tools/list has a budget.
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub queries: Vec<String>,
    /// Chunks matching the query within the filters (before `limit`).
    pub total_matches: u64,
    pub results: Vec<SearchResult>,
    /// What made this search less than it could be: with the sentence
    /// encoder installed, that its vectors are not built yet (from the
    /// start until the first build ends) and the search matched words
    /// only. Absent when there is nothing to say.
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub warnings: Vec<String>,
}

#[derive(Debug, Serialize, JsonSchema)]
pub struct SearchResult {
    pub project: String,
    pub folder: String,
    pub filename: String,
    /// `{project}/{folder}/{filename}`.
    pub path: String,
    /// The chunk's heading as written (`## Objective`); empty before the
    /// first heading.
    pub heading: String,
    /// A fragment of the chunk with the matched words in `**bold**`.
    pub snippet: String,
    /// BM25 × boosts (with the sentence encoder, BM25 plus a meaning
    /// term, × boosts).
    pub score: f64,
    /// Lines of the chunk in the file (1-based, inclusive).
    pub start_line: u64,
    pub end_line: u64,
    pub metadata: SearchMeta,
}

#[derive(Debug, Serialize, JsonSchema)]
pub struct SearchMeta {
    #[serde(rename = "type")]
    pub kind: String,
    pub status: Option<String>,
    pub updated: String,
}

/// What ranking reads of a document's [`super::doc::DocMeta`] (borrowed
/// from the manifest, not cloned).
#[derive(Default, Deserialize)]
struct Ranked {
    #[serde(default)]
    status: Option<String>,
    #[serde(default)]
    updated: Option<String>,
}

/// The boost tables (for the README and the tests).
pub struct Boosts {
    pub folder: [(&'static str, f64); 8],
    pub status: [(&'static str, f64); 4],
    pub priority_headings: [&'static str; 10],
    pub heading: f64,
    pub recency_max: f64,
    pub recency_days: f64,
}

pub const BOOSTS: Boosts = Boosts {
    folder: [
        ("plans", 1.25),
        ("tasks", 1.2),
        ("reports", 1.1),
        ("sessions", 1.0),
        ("references", 1.0),
        ("changelog", 0.95),
        ("scratch", 0.8),
        ("assets", 0.7),
    ],
    status: [
        ("in-progress", 1.25),
        ("blocked", 1.15),
        ("pending", 1.1),
        ("done", 0.9),
    ],
    priority_headings: [
        "current status",
        "next steps",
        "blockers",
        "decisions",
        "estado actual",
        "próximos pasos",
        "proximos pasos",
        "siguientes pasos",
        "bloqueos",
        "decisiones",
    ],
    heading: 1.3,
    recency_max: 0.3,
    recency_days: 30.0,
};

const DEFAULT_LIMIT: i64 = 20;
const MAX_LIMIT: i64 = 100;

fn table(t: &[(&str, f64)], key: &str) -> f64 {
    t.iter().find(|(k, _)| *k == key).map_or(1.0, |(_, v)| *v)
}

/// Whether a chunk heading (`## Next Steps`) is one of the priority headings.
pub fn is_priority(heading: &str) -> bool {
    let title = heading.trim_start_matches('#').trim();
    if title.is_empty() || title.len() > 64 {
        return false;
    }
    let title = title.to_lowercase();
    BOOSTS.priority_headings.iter().any(|p| {
        title
            .strip_prefix(p)
            .is_some_and(|rest| rest.is_empty() || rest.starts_with([' ', ':']))
    })
}

/// The multiplier for a chunk: type × status × heading × recency.
pub fn boost(folder: &str, status: Option<&str>, heading: &str, age_days: Option<f64>) -> f64 {
    let mut b = table(&BOOSTS.folder, folder);
    if let Some(s) = status {
        b *= table(&BOOSTS.status, s);
    }
    if is_priority(heading) {
        b *= BOOSTS.heading;
    }
    if let Some(age) = age_days {
        b *= 1.0 + BOOSTS.recency_max * (-age.max(0.0) / BOOSTS.recency_days).exp();
    }
    b
}

fn age_days(date: &str, today: chrono::NaiveDate) -> Option<f64> {
    let d = chrono::NaiveDate::parse_from_str(date.get(..10)?, "%Y-%m-%d").ok()?;
    Some((today - d).num_days() as f64)
}

/// search's input; a wrong `query` or `limit` is INVALID_QUERY, a wrong
/// `folder` INVALID_FOLDER (seed 002, by `as_vibe`).
#[derive(Input)]
pub struct SearchInput {
    /// Search text
    #[arg(query)]
    pub query: String,
    /// Rephrasings in the files' language and terms
    pub queries: Option<Phrasings>,
    /// Only this project
    pub project: Option<String>,
    /// Only this folder
    #[arg(one_of = super::FOLDERS)]
    pub folder: Option<&'static str>,
    /// Max results (default 20)
    #[arg(min = 1, max = MAX_LIMIT)]
    pub limit: Option<i64>,
}

/// A chunk ranked: its score and what its result shows.
struct Scored {
    score: f64,
    hit: Hit,
    folder: String,
    status: Option<String>,
    updated: String,
}

impl Vibe {
    pub fn search(&self, input: SearchInput) -> Result<SearchOutput> {
        let query = input.query.as_str();
        let project = self.project_filter(input.project)?;
        let limit = input.limit.unwrap_or(DEFAULT_LIMIT) as usize;
        let t0 = std::time::Instant::now();
        let index = self.fresh()?;
        let dense = self
            .meaning
            .current(&self.index, &self.root, self.index.generation());
        let t1 = std::time::Instant::now();
        let phrasings = distinct(query, input.queries.unwrap_or_default().0);
        let texts: Vec<&str> = std::iter::once(query)
            .chain(phrasings.iter().map(String::as_str))
            .collect();
        // Each phrasing ranked on its own, on both cores; several are fused
        // by reciprocal rank.
        let ranked: Vec<Result<(Vec<Scored>, usize)>> = texts
            .par_iter()
            .map(|q| {
                let terms = kura_text::tokenize::query_terms(q);
                let mut found =
                    candidates(index, q, &terms, project.as_deref(), input.folder, limit)?;
                let meaning = match dense {
                    Some(d) => near(d, q, &mut found, project.as_deref(), input.folder),
                    None => vec![0.0; found.hits.len()],
                };
                Ok((rank(index, found.hits, &meaning, limit), found.matched))
            })
            .collect();
        let mut warnings = Vec::new();
        if dense.is_none() {
            warnings.extend(self.meaning.words_only());
        }
        let mut lists = Vec::with_capacity(ranked.len());
        let mut matched = 0;
        for r in ranked {
            let (list, m) = r?;
            matched = matched.max(m);
            lists.push(list);
        }
        let t2 = std::time::Instant::now();
        let scored: Vec<Scored> = if lists.len() == 1 {
            lists.pop().unwrap_or_default()
        } else {
            phrasings::fuse(lists, phrasings::K, |s: &Scored| {
                (s.hit.file.clone(), s.hit.start_line)
            })
            .into_iter()
            .take(limit)
            .map(|(mut s, score)| {
                s.score = score;
                s
            })
            .collect()
        };
        let terms: Vec<String> = texts
            .iter()
            .flat_map(|q| kura_text::tokenize::query_terms(q))
            .collect();
        let t3 = std::time::Instant::now();
        let results = self.results(scored, &terms.into_iter().collect());
        tracing::debug!(
            target: "kura::timing",
            "vibe search: refresh {:.2}ms, index {:.2}ms, rank {:.2}ms, snippets {:.2}ms",
            (t1 - t0).as_secs_f64() * 1e3,
            (t2 - t1).as_secs_f64() * 1e3,
            (t3 - t2).as_secs_f64() * 1e3,
            t3.elapsed().as_secs_f64() * 1e3
        );
        if phrasings.is_empty() {
            warnings.extend(self.phrasing_hint(query, project.as_deref(), results.is_empty()));
        }
        Ok(SearchOutput {
            query: query.to_owned(),
            queries: phrasings,
            total_matches: matched as u64,
            results,
            warnings,
        })
    }

    /// search's sentence for a caller who gave no `queries` (issue 55):
    /// about a question in another language than the files of `project`
    /// (or of every project), or one that found nothing.
    fn phrasing_hint(&self, query: &str, project: Option<&str>, weak: bool) -> Option<String> {
        let dir = RelPath::parse(project.unwrap_or(""), true).ok()?;
        let written = self
            .languages
            .of(self.index.generation(), &self.root, &dir, |p| {
                p.to_string().ends_with(".md")
            })
            .ok()?;
        crate::text::lang::hint(&written.profile, query, "the files are", weak)
    }

    /// The results of the best chunks: each with its snippet (its file
    /// read once) and its path split into project, folder and file name.
    fn results(&self, scored: Vec<Scored>, terms: &HashSet<String>) -> Vec<SearchResult> {
        let mut texts: HashMap<String, Option<String>> = HashMap::new();
        scored
            .into_iter()
            .map(
                |Scored {
                     score,
                     hit: h,
                     folder,
                     status,
                     updated,
                 }| {
                    let text = texts.entry(h.file.clone()).or_insert_with(|| {
                        RelPath::parse(&h.file, false)
                            .ok()
                            .and_then(|p| self.root.read_indexed(&p))
                    });
                    let snippet = text.as_deref().map_or(String::new(), |t| {
                        let lines = Lines::new(t);
                        let (s, e) = (h.start_line as usize, h.end_line as usize);
                        if s == 0 || s > lines.count() {
                            return String::new();
                        }
                        let e = e.clamp(s, lines.count());
                        snippet(&t[lines.start(s)..lines.end(e)], terms)
                    });
                    let mut parts = h.file.splitn(3, '/');
                    let project = parts.next().unwrap_or("").to_owned();
                    let _ = parts.next();
                    let filename = parts.next().unwrap_or("").to_owned();
                    SearchResult {
                        metadata: SearchMeta {
                            kind: doc_type(&folder).to_owned(),
                            status,
                            updated,
                        },
                        path: h.file.clone(),
                        project,
                        folder,
                        filename,
                        heading: h.heading,
                        snippet,
                        score: (score * 1000.0).round() / 1000.0,
                        start_line: h.start_line,
                        end_line: h.end_line,
                    }
                },
            )
            .collect()
    }
}

/// BM25 candidates within the project and folder, with which of the
/// query's terms each holds (a Latin word of 4+ letters also as a prefix),
/// and how many chunks matched in all.
fn candidates(
    index: &SectionIndex,
    query: &str,
    terms: &[String],
    project: Option<&str>,
    folder: Option<&str>,
    limit: usize,
) -> Result<Results> {
    let tag = folder.map(|f| format!("folder:{f}"));
    let tags: Vec<&str> = tag.iter().map(String::as_str).collect();
    let fetch = (limit + 10).max(30);
    let only = Filter {
        scope: project,
        tags: &tags,
        ..Filter::default()
    };
    let probes: Vec<Probe> = terms
        .iter()
        .map(|t| Probe {
            term: t.clone(),
            prefix: t.chars().count() >= 4 && !t.chars().any(kura_text::tokenize::is_cjk),
        })
        .collect();
    index
        .search(&Search {
            only,
            probes: &probes,
            count: true,
            ..Search::new(query, fetch)
        })
        .map_err(super::index_error)
}

/// How many chunks nearest the query in meaning join the candidates, from
/// which cosine, and the weight of the meaning term against the best
/// lexical relevance. On the vibe gold set's dev half (11 questions, hit@1
/// / hit@5; the encoder alone 0.545 / 1.000): with the boosts over the sum
/// and a floor of 0.3, weights 4 and 10 gave hit@5 0.727 (0.5 and 1 0.545,
/// 2 0.636); a floor of 0.1 lifted weight 4 to 0.364 / 0.818, but even
/// weight 64 stayed at 0.364 / 1.000, the boosts of a plan or a task in
/// progress putting a file the words never named above the one meant.
/// The boosts now weigh the words only: weight 4 gave 0.364 / 0.818, 16
/// 0.545 / 1.000 (a floor of 0.2 0.545 / 0.818).
const NEAR: usize = 10;
const NEAR_MIN: f32 = 0.1;
const MEANING_WEIGHT: f64 = 16.0;

/// The chunks nearest `query` in meaning within the project and folder join
/// `found` (counted among the matches); each candidate's meaning term: its
/// cosine above [`NEAR_MIN`], scaled to 0..1.
fn near(
    d: &Dense,
    query: &str,
    found: &mut Results,
    project: Option<&str>,
    folder: Option<&str>,
) -> Vec<f64> {
    let Some(question) = d.question(query) else {
        return vec![0.0; found.hits.len()];
    };
    let inside = |file: &str, _: u64| {
        let mut parts = file.split('/');
        let (p, f) = (parts.next(), parts.next());
        project.is_none_or(|want| p == Some(want)) && folder.is_none_or(|want| f == Some(want))
    };
    let within = match (project, folder) {
        (Some(p), Some(f)) => format!("{p}/{f}/"),
        (Some(p), None) => format!("{p}/"),
        (None, _) => String::new(),
    };
    for mut h in d.near(&question, &within, inside, NEAR, NEAR_MIN) {
        let known = found
            .hits
            .iter()
            .any(|k| k.file == h.file && k.start_line == h.start_line);
        if !known {
            h.score = 0.0; // no BM25: found by meaning alone
            found.hits.push(h);
            found.matched += 1;
        }
    }
    let keys: Vec<(&str, u64)> = found
        .hits
        .iter()
        .map(|h| (h.file.as_str(), h.start_line))
        .collect();
    d.similarity(&question, &keys)
        .into_iter()
        .map(|c| f64::from((c - NEAR_MIN).max(0.0) / (1.0 - NEAR_MIN)))
        .collect()
}

/// The best `limit` chunks by [`fused`]: BM25 × coverage² × the boosts of
/// their document (its folder, status and age, read from the manifest) and
/// heading, plus the meaning term × the best lexical relevance ×
/// [`MEANING_WEIGHT`]. Without the encoder the meaning term is 0: BM25 ×
/// coverage² × boosts.
fn rank(index: &SectionIndex, hits: Vec<Hit>, meaning: &[f64], limit: usize) -> Vec<Scored> {
    let today = chrono::Local::now().date_naive();
    let files = index.files();
    let lexical = |h: &Hit| {
        let found = h.marks.iter().filter(|m| **m).count();
        let coverage = found as f64 / h.marks.len().max(1) as f64;
        h.score as f64 * coverage * coverage
    };
    let best = hits.iter().map(lexical).fold(0.0, f64::max);
    let best = if best > 0.0 { best } else { 1.0 };
    let mut scored = Vec::with_capacity(hits.len());
    for (h, m) in hits.into_iter().zip(meaning) {
        let info = files.get(&h.file);
        let meta = info
            .and_then(|i| i.meta)
            .and_then(|m| serde_json::from_str::<Ranked>(m.get()).ok())
            .unwrap_or_default();
        let updated = meta
            .updated
            .clone()
            .unwrap_or_else(|| super::local_date(info.map_or(0, |i| i.mtime_ns)));
        let folder = h.file.split('/').nth(1).unwrap_or("").to_owned();
        let b = boost(
            &folder,
            meta.status.as_deref(),
            &h.heading,
            age_days(&updated, today),
        );
        scored.push(Scored {
            score: fused(lexical(&h), b, *m, best),
            hit: h,
            folder,
            status: meta.status,
            updated,
        });
    }
    drop(files);
    scored.sort_by(|x, y| {
        y.score
            .total_cmp(&x.score)
            .then_with(|| x.hit.file.cmp(&y.hit.file))
    });
    scored.truncate(limit);
    scored
}

/// A chunk's score: its words' relevance `lexical` times its `boost`, plus
/// its meaning term `meaning` (0..1) scaled to the best lexical relevance
/// `best`. The boosts (a plan, a task in progress, a recent file) weigh
/// what the words found; they do not lift a file the question only means
/// over the one it means more.
fn fused(lexical: f64, boost: f64, meaning: f64, best: f64) -> f64 {
    lexical * boost + meaning * best * MEANING_WEIGHT
}

/// Whether a word of the text answers one of the query's terms: the same
/// folded word, or (4+ letters) one that begins with it or that it begins
/// with, within three letters (`indexador` / `indexadores`).
fn word_matches(word: &str, terms: &HashSet<String>, buf: &mut String) -> bool {
    buf.clear();
    if word.is_ascii() {
        // The common case, without allocating: ASCII folds to lower case.
        buf.push_str(word);
        buf.make_ascii_lowercase();
    } else {
        buf.push_str(&kura_text::tokenize::fold(&kura_text::normalize(word)));
    }
    let w: &str = buf;
    if terms.contains(w) {
        return true;
    }
    let n = w.chars().count();
    n >= 4
        && terms.iter().any(|t| {
            let m = t.chars().count();
            m >= 4 && n.abs_diff(m) <= 3 && (w.starts_with(t.as_str()) || t.starts_with(w))
        })
}

/// Where the query's terms occur in `chars` (ranges of char indices):
/// words compared whole, CJK runs by their bigrams (a single character
/// alone).
fn marks(chars: &[char], terms: &HashSet<String>) -> Vec<(usize, usize)> {
    let cjk = kura_text::tokenize::is_cjk;
    let mut out: Vec<(usize, usize)> = Vec::new();
    let mut buf = String::new();
    let mut word = String::new();
    let mut i = 0;
    while i < chars.len() {
        let c = chars[i];
        if cjk(c) {
            let start = i;
            while i < chars.len() && cjk(chars[i]) {
                i += 1;
            }
            let run = &chars[start..i];
            if run.len() == 1 {
                if terms.contains(&kura_text::normalize(&run[0].to_string())) {
                    out.push((start, i));
                }
                continue;
            }
            for k in 0..run.len() - 1 {
                let pair: String = run[k..k + 2].iter().collect();
                if terms.contains(&kura_text::normalize(&pair)) {
                    match out.last_mut() {
                        Some(last) if last.1 > start + k => last.1 = start + k + 2,
                        _ => out.push((start + k, start + k + 2)),
                    }
                }
            }
        } else if c.is_alphanumeric() {
            let start = i;
            while i < chars.len() && chars[i].is_alphanumeric() && !cjk(chars[i]) {
                i += 1;
            }
            word.clear();
            word.extend(&chars[start..i]);
            if word_matches(&word, terms, &mut buf) {
                out.push((start, i));
            }
        } else {
            i += 1;
        }
    }
    out
}

/// About 200 characters of `chunk` around its densest run of matches, white
/// space collapsed, the heading line left out, `...` where it was cut, the
/// matches in `**bold**` (neighbours separated only by spaces in one pair).
pub fn snippet(chunk: &str, terms: &HashSet<String>) -> String {
    const WIDTH: usize = 200;
    const BEFORE: usize = 40;
    let body = match chunk.split_once('\n') {
        Some((first, rest)) if first.trim_start().starts_with('#') && !rest.trim().is_empty() => {
            rest
        }
        _ => chunk,
    };
    let mut flat = body.split_whitespace().collect::<Vec<_>>().join(" ");
    let mut chars: Vec<char> = flat.chars().collect();
    let mut found = marks(&chars, terms);
    if found.is_empty() && body.len() != chunk.len() {
        // The match is in the heading: show it, without its `#`s.
        let whole = chunk.trim_start().trim_start_matches('#');
        flat = whole.split_whitespace().collect::<Vec<_>>().join(" ");
        chars = flat.chars().collect();
        found = marks(&chars, terms);
    }
    // Join neighbours separated only by spaces: "**schema SQLite**".
    let mut merged: Vec<(usize, usize)> = Vec::new();
    for m in found.drain(..) {
        match merged.last_mut() {
            Some(last) if chars[last.1..m.0].iter().all(|c| *c == ' ') => last.1 = m.1,
            _ => merged.push(m),
        }
    }
    // The window starting shortly before the mark that has the most marks
    // within reach.
    let anchor = (0..merged.len())
        .max_by_key(|&k| {
            let reach = merged[k].0 + WIDTH - BEFORE;
            (
                merged[k..].iter().filter(|m| m.1 <= reach).count(),
                usize::MAX - k,
            )
        })
        .map(|k| merged[k].0);
    let mut start = anchor.map_or(0, |a| a.saturating_sub(BEFORE));
    while start > 0 && chars[start - 1] != ' ' && anchor.is_some_and(|a| a - start < BEFORE + 20) {
        start -= 1;
    }
    let mut end = (start + WIDTH).min(chars.len());
    while end < chars.len() && chars[end] != ' ' && end - start < WIDTH + 20 {
        end += 1;
    }
    let mut out = String::new();
    if start > 0 {
        out.push_str("...");
    }
    for (i, c) in chars.iter().enumerate().take(end).skip(start) {
        if merged
            .iter()
            .any(|m| m.0 == i || (i == start && m.0 < i && m.1 > i))
        {
            out.push_str("**");
        }
        out.push(*c);
        if merged
            .iter()
            .any(|m| m.1 == i + 1 || (i + 1 == end && m.0 <= i && m.1 > end))
        {
            out.push_str("**");
        }
    }
    if end < chars.len() {
        out.push_str("...");
    }
    out
}

#[cfg(test)]
mod tests {
    use super::*;

    fn terms(q: &str) -> HashSet<String> {
        kura_text::tokenize::query_terms(q).into_iter().collect()
    }

    #[test]
    fn snippet_marks_the_words_and_joins_neighbours() {
        let s = snippet(
            "## Objective\nDiseñar el schema SQLite para el indexador del MCP server.\n",
            &terms("indexador sqlite schema"),
        );
        assert_eq!(
            s,
            "Diseñar el **schema SQLite** para el **indexador** del MCP server."
        );
    }

    #[test]
    fn snippet_of_a_long_chunk_is_cut_around_the_matches() {
        let text = format!(
            "{} the token bucket limits requests. {}",
            "filler ".repeat(80),
            "tail ".repeat(80)
        );
        let s = snippet(&text, &terms("bucket"));
        assert!(s.starts_with("...") && s.ends_with("..."), "{s}");
        assert!(s.contains("**bucket**"), "{s}");
        assert!(s.chars().count() < 260, "{s}");
    }

    #[test]
    fn snippet_marks_japanese_bigrams() {
        let s = snippet("認証トークンの更新手順を書く", &terms("トークン"));
        assert!(s.contains("**トークン**"), "{s}");
    }

    /// With a model installed, a search before the vectors exist (here:
    /// before the start-up build has begun) says it matched words only;
    /// without one it says nothing.
    #[test]
    fn a_search_without_vectors_yet_says_it_matched_words_only() {
        let vibe = tempfile::tempdir().unwrap();
        let state = tempfile::tempdir().unwrap();
        let doc = (
            "p/tasks/001-a.md".to_owned(),
            "# Task: rate limiting\n".to_owned(),
        );
        crate::fs::write_new_tree(vibe.path(), &[doc]).unwrap();
        let search = |vibe: &Vibe| {
            vibe.search(SearchInput {
                query: "rate limiting".into(),
                queries: None,
                project: None,
                folder: None,
                limit: None,
            })
            .unwrap()
        };
        let source = || crate::domain::search::encoder::Source {
            state_dir: Some(state.path().to_owned()),
            plugins: None,
            enabled: true,
        };
        let open = || {
            Vibe::new(
                crate::fs::Root::open(vibe.path()).unwrap(),
                Some(state.path()),
                source(),
            )
        };
        let found = search(&open());
        assert_eq!(found.results.len(), 1);
        assert!(found.warnings.is_empty(), "{:?}", found.warnings);
        crate::fs::StateDir::open(state.path())
            .unwrap()
            .write(kura_embed::store::MANIFEST, b"some-package 1.0 0123\n")
            .unwrap();
        let found = search(&open());
        assert_eq!(found.results.len(), 1);
        assert_eq!(found.warnings, [crate::domain::search::dense::WORDS_ONLY]);
    }

    /// Two files no word of the question names: a plan in progress, boosted
    /// most, and a done task the question means more. The meaning decides;
    /// between equal meanings and words, the boost does.
    #[test]
    fn boosts_weigh_the_words_not_the_meaning() {
        let plan = boost("plans", Some("in-progress"), "## Next steps", Some(0.0));
        let task = boost("tasks", Some("done"), "", Some(90.0));
        assert!(plan > 2.0 * task);
        assert!(fused(0.0, task, 0.5, 3.0) > fused(0.0, plan, 0.4, 3.0));
        assert!(fused(1.0, plan, 0.5, 3.0) > fused(1.0, task, 0.5, 3.0));
    }

    #[test]
    fn boosts_order_status_type_heading_and_recency() {
        let done = boost("tasks", Some("done"), "## Objective", None);
        let active = boost("tasks", Some("in-progress"), "## Objective", None);
        assert!(active > done);
        assert!(boost("plans", None, "## Notes", None) > boost("scratch", None, "## Notes", None));
        assert!(
            is_priority("## Next Steps")
                && is_priority("## Decisiones")
                && !is_priority("## Steps")
        );
        let fresh = boost("sessions", None, "", Some(0.0));
        let old = boost("sessions", None, "", Some(365.0));
        assert!((fresh - 1.3).abs() < 1e-9 && old < 1.001);
    }
}
