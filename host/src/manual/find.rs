//! manual_find (seed 004, SPEC.md "Manual search"): the staged pipeline.
//!
//! 1. Candidates: BM25 over sections (tantivy), then for the best
//!    [`SIGNAL_POOL`] of them the signals `heading`, `heading_focus`,
//!    `normalized`, `loose`, `exceptions` and the query-coverage bonus
//!    (`SPARSE_QUERY_COVERAGE_WEIGHT` × the share of the query's content
//!    terms the section holds).
//! 2. `expand_scope`: a search limited to one manual that finds nothing
//!    good (no candidate, or the best covers under half the query) is
//!    repeated over every manual.
//! 3. Late rerank of the best [`RERANK_TOP`] by the reranker component
//!    (signal `late_rerank`), then the claim graph of the best
//!    [`EVIDENCE_MAX`] by the claim-graph component; `summary` is counted
//!    from the graph.
//! 4. Corrective: when stage 3 is weak (a gap, a conflict, low coverage, a
//!    small top-score margin or few candidates) the query is relaxed (facet
//!    cues and particles dropped, every manual searched), the candidates
//!    merged (new ones marked `loose`), reranked and the graph rebuilt.
//!
//! Every search leaves a trace for manual_hits; the query cache answers a
//! repeated query from its trace while the index has not changed.

use std::collections::{HashMap, HashSet};
use std::time::{Duration, Instant};

use schemars::JsonSchema;
use serde::Serialize;
use serde_json::{Map, Value, json};

use super::Manuals;
use super::trace::CacheKey;
use crate::args::Args;
use crate::error::{Code, Error, Result};
use crate::index::Hit;
use crate::plugins::claim_graph::{
    Claim, ClaimStatus, CoverageStatus, Edge, FacetSummary, Graph, GraphEvidence,
};
use crate::plugins::{RerankCandidate, Reranked};
use crate::text::Folded;
use crate::text::facet::{self, Facet};
use crate::text::tokenize::{content_terms, content_units, is_cjk, query_terms};

/// Candidates that get the full signal analysis; the rest keep their BM25 rank.
const SIGNAL_POOL: usize = 30;
/// Files whose names best match the query that are always analysed.
const NAMED_FILES: usize = 3;
/// Candidates the reranker sees.
const RERANK_TOP: usize = 16;
/// Weight of the reranker's score (in [0, 1]) added to the first-stage score.
const RERANK_WEIGHT: f64 = 1.0;
/// Candidates that become evidence for the claim graph.
const EVIDENCE_MAX: usize = 8;
/// Characters of a section passed to a component.
const PLUGIN_TEXT_CHARS: usize = 1200;
/// Characters of a section the signals look at (a huge table is not read to its end).
const ANALYSE_CHARS: usize = 20_000;
/// Characters of a section shown in `integrated_top`.
const SNIPPET_CHARS: usize = 200;
/// Candidates the corrective search adds at most (it looks for what the
/// first search missed, not for a second full list).
const CORRECTIVE_FETCH: usize = 50;
/// Below this share of the query in the best section, a search is weak.
const WEAK_COVERAGE: f64 = 0.5;
/// With a gap, below this relative margin between the two best scores a
/// search is weak.
const WEAK_MARGIN: f64 = 0.05;
/// With a gap, below this share of the query in the best section a search is weak.
const GAP_COVERAGE: f64 = 0.75;
/// Fewer candidates than this make a search weak.
const WEAK_CANDIDATES: usize = 3;

const W_HEADING: f64 = 0.15;
const W_FOCUS: f64 = 0.25;
const W_EXCEPTIONS: f64 = 0.2;
/// The query's chapter, section or page reference is the document's.
const W_REFERENCE: f64 = 1.0;
/// The query states the document's name (not just words the name contains).
const W_EXACT_NAME: f64 = 0.3;

/// What manual_find settles from the configuration.
#[derive(Clone, Debug)]
pub struct FindSettings {
    pub default_manual_id: Option<String>,
    pub late_rerank: bool,
    pub claim_graph: bool,
    pub corrective: bool,
    pub cache_default: bool,
    pub cache_max_gap: i64,
    pub cache_max_conflict: i64,
    pub coverage_weight: f64,
}

#[derive(Clone, Copy, Debug, PartialEq, Eq, PartialOrd, Ord, Serialize, JsonSchema)]
#[serde(rename_all = "snake_case")]
pub enum Signal {
    Heading,
    HeadingFocus,
    Normalized,
    Loose,
    Exceptions,
    LateRerank,
}

#[derive(Clone, Debug, Serialize, JsonSchema)]
pub struct ManualRef {
    /// Always `manual`.
    pub target: String,
    pub manual_id: String,
    pub path: String,
    pub start_line: u64,
}

#[derive(Clone, Debug, Serialize, JsonSchema)]
pub struct EvidenceOut {
    pub evidence_id: String,
    #[serde(rename = "ref")]
    pub reference: ManualRef,
    pub signals: Vec<Signal>,
    pub score: f64,
    /// First 16 hex digits of the BLAKE3 hash of the section's text: equal
    /// digests, equal text (an agent can tell what it has already read).
    pub snippet_digest: String,
}

#[derive(Clone, Debug, Serialize, JsonSchema)]
pub struct ClaimGraphOut {
    pub claims: Vec<Claim>,
    pub evidences: Vec<EvidenceOut>,
    pub edges: Vec<Edge>,
    pub facets: Vec<FacetSummary>,
}

#[derive(Clone, Copy, Debug, PartialEq, Eq, Serialize, JsonSchema)]
#[serde(rename_all = "snake_case")]
pub enum IntegrationStatus {
    Ready,
    NeedsFollowup,
    Blocked,
}

#[derive(Clone, Debug, Serialize, JsonSchema)]
pub struct Summary {
    /// Distinct files among the analysed candidates.
    pub scanned_files: u64,
    /// Sections analysed (scored with every signal).
    pub scanned_nodes: u64,
    /// Candidates found (manual_hits kind=candidates total).
    pub candidates: u64,
    /// Share of the evidence that comes from its most frequent file (0 without evidence).
    pub file_bias_ratio: f64,
    /// Claims in conflict (= manual_hits kind=conflicts total).
    pub conflict_count: u64,
    /// Asked-for facets not covered (= manual_hits kind=gaps total).
    pub gap_count: u64,
    pub integration_status: IntegrationStatus,
}

#[derive(Clone, Copy, Debug, PartialEq, Eq, Serialize, JsonSchema)]
#[serde(rename_all = "snake_case")]
pub enum ActionType {
    ManualHits,
    ManualRead,
    ManualFind,
}

#[derive(Clone, Debug, Serialize, JsonSchema)]
pub struct NextAction {
    #[serde(rename = "type")]
    pub kind: ActionType,
    pub confidence: Option<f64>,
    /// The smallest arguments for that call.
    pub params: Option<Map<String, Value>>,
}

#[derive(Clone, Copy, Debug, PartialEq, Eq, Serialize, JsonSchema)]
#[serde(rename_all = "snake_case")]
pub enum CacheUse {
    /// Answered from an earlier trace.
    Hit,
    /// Searched (no entry, or an entry over the gap/conflict thresholds).
    Miss,
    /// `use_cache` false.
    Off,
}

#[derive(Clone, Copy, Debug, PartialEq, Eq, Serialize, JsonSchema)]
#[serde(rename_all = "snake_case")]
pub enum StageUse {
    Applied,
    NotNeeded,
    Disabled,
    /// The component failed; see `warnings`.
    Failed,
    /// The component is still compiling (a first start after a change);
    /// see `warnings`.
    Pending,
    /// The time budget ran out first.
    Skipped,
}

#[derive(Clone, Debug, Serialize, JsonSchema)]
pub struct BudgetApplied {
    pub max_candidates: u64,
    pub time_ms: u64,
}

/// What was actually applied (settings, defaults and the stages that ran).
#[derive(Clone, Debug, Serialize, JsonSchema)]
pub struct FindApplied {
    pub manual_id: Option<String>,
    pub expand_scope: bool,
    /// The search went beyond `manual_id` (stage 2).
    pub scope_expanded: bool,
    pub use_cache: bool,
    pub cache: CacheUse,
    pub late_rerank: StageUse,
    pub corrective: StageUse,
    /// Facets recognised in the query.
    pub query_facets: Vec<crate::plugins::claim_graph::FacetName>,
    pub budget: BudgetApplied,
}

#[derive(Clone, Copy, Debug, PartialEq, Eq, Serialize, JsonSchema)]
#[serde(rename_all = "snake_case")]
pub enum CutoffReason {
    /// More sections matched than `budget.max_candidates`.
    MaxCandidates,
    /// `budget.time_ms` ran out; later stages were skipped.
    TimeMs,
}

#[derive(Clone, Debug, Serialize, JsonSchema)]
pub struct FindOutput {
    pub trace_id: String,
    /// Only with `include_claim_graph: true`.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub claim_graph: Option<ClaimGraphOut>,
    pub summary: Summary,
    pub next_actions: Vec<NextAction>,
    pub applied: FindApplied,
    /// Present only when the budget cut the search short.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub cutoff_reason: Option<CutoffReason>,
    /// Stages that could not run as configured, in words.
    #[serde(skip_serializing_if = "Vec::is_empty")]
    pub warnings: Vec<String>,
}

/// One ranked candidate, as kept in a trace.
#[derive(Clone, Debug)]
pub struct Cand {
    pub manual_id: String,
    pub path: String,
    pub start_line: u64,
    pub heading: String,
    pub score: f64,
    /// The first-stage score (BM25 and signals), before the late rerank.
    pub base: f64,
    pub signals: Vec<Signal>,
    /// Share of the query's content terms in the section (0 outside the pool).
    pub coverage: f64,
    /// Evidence only: the first characters of the text, and its digest.
    pub snippet: Option<(String, String)>,
}

impl Cand {
    fn key(&self) -> (String, String, u64) {
        (self.manual_id.clone(), self.path.clone(), self.start_line)
    }

    pub fn reference(&self) -> ManualRef {
        ManualRef {
            target: "manual".into(),
            manual_id: self.manual_id.clone(),
            path: self.path.clone(),
            start_line: self.start_line,
        }
    }
}

/// Everything a search leaves behind for manual_hits and later searches.
#[derive(Debug)]
pub struct Trace {
    pub candidates: Vec<Cand>,
    /// The first `evidence` candidates are the claim graph's evidence e1..eN.
    pub evidence: usize,
    pub graph: Option<Graph>,
    pub output: FindOutput,
}

impl Trace {
    pub fn evidences(&self) -> Vec<EvidenceOut> {
        self.candidates[..self.evidence]
            .iter()
            .enumerate()
            .map(|(i, c)| EvidenceOut {
                evidence_id: format!("e{}", i + 1),
                reference: c.reference(),
                signals: c.signals.clone(),
                score: c.score,
                snippet_digest: c.snippet.as_ref().map(|s| s.1.clone()).unwrap_or_default(),
            })
            .collect()
    }

    pub fn conflicts(&self) -> Vec<&Claim> {
        self.graph
            .iter()
            .flat_map(|g| g.claims.iter())
            .filter(|c| c.status == ClaimStatus::Conflicted)
            .collect()
    }

    pub fn gaps(&self) -> Vec<&FacetSummary> {
        self.graph
            .iter()
            .flat_map(|g| g.facets.iter())
            .filter(|f| f.coverage_status != CoverageStatus::Covered)
            .collect()
    }
}

/// A section found by the index, with the parts the signals need.
struct Found {
    hit: Hit,
    manual_id: String,
    path: String,
}

fn round(x: f64) -> f64 {
    (x * 10_000.0).round() / 10_000.0
}

fn clip(s: &str, n: usize) -> &str {
    match s.char_indices().nth(n) {
        Some((b, _)) => &s[..b],
        None => s,
    }
}

/// Signals and first-stage score of one section (see the module comment).
struct Analysis {
    signals: Vec<Signal>,
    coverage: f64,
    bonus: f64,
}

fn analyse(
    query: &str,
    units: &[Vec<String>],
    asks_exceptions: bool,
    coverage_weight: f64,
    hit: &Hit,
) -> Analysis {
    let terms: Vec<String> = units.iter().flatten().cloned().collect();
    let body_text = clip(&hit.body, ANALYSE_CHARS);
    // The file's name is the document's outermost heading (many manual
    // sets name a document by its file and never repeat the title).
    let title = super::name::title(&hit.file);
    let head = Folded::new(&format!("{title} > {}", hit.heading));
    let named = Folded::new(&title);
    let named_by = super::name::compare(query, &hit.file, &hit.heading);
    let own = Folded::new(hit.heading.rsplit(" > ").next().unwrap_or(""));
    let body = Folded::new(body_text);
    let mut signals = Vec::new();
    let matched: Vec<&String> = terms
        .iter()
        .filter(|t| head.has_term(t) || body.has_term(t))
        .collect();
    // Each query word weighs the same, however many bigrams it has.
    let share = |has: &dyn Fn(&String) -> bool| {
        units
            .iter()
            .map(|u| u.iter().filter(|t| has(t)).count() as f64 / u.len() as f64)
            .sum::<f64>()
            / units.len().max(1) as f64
    };
    let coverage = share(&|t| matched.contains(&t));
    let in_heading = terms.iter().any(|t| head.has_term(t));
    let focus = share(&|t| own.has_term(t)) >= 0.5
        || share(&|t| named.has_term(t)) >= 0.5
        || named_by.exact;
    let in_heading = in_heading || named_by.reference;
    if in_heading {
        signals.push(Signal::Heading);
    }
    if focus {
        signals.push(Signal::HeadingFocus);
    }
    // Found only through normalisation: the term is not in the raw text as
    // such (case, width, diacritics or compatibility forms differ).
    if matched
        .iter()
        .any(|t| !body_text.contains(t.as_str()) && !hit.heading.contains(t.as_str()))
    {
        signals.push(Signal::Normalized);
    }
    // A query word missing as such but present as a variant sharing its stem
    // (`watchers` for `watcher`, `computadas` for `computada`).
    let loose = terms.iter().any(|t| {
        let chars = t.chars().count();
        if chars < 5 || matched.contains(&t) || t.chars().any(is_cjk) {
            return false;
        }
        let stem: String = t.chars().take((chars - 2).max(4)).collect();
        head.has_word_prefix(&stem) || body.has_word_prefix(&stem)
    });
    if loose {
        signals.push(Signal::Loose);
    }
    let exceptions = asks_exceptions
        && (facet::has_exception_marker(&hit.heading) || facet::has_exception_marker(body_text));
    if exceptions {
        signals.push(Signal::Exceptions);
    }
    let bonus = W_HEADING * f64::from(u8::from(in_heading))
        + W_FOCUS * f64::from(u8::from(focus))
        + W_EXCEPTIONS * f64::from(u8::from(exceptions))
        + W_REFERENCE * f64::from(u8::from(named_by.reference))
        + W_EXACT_NAME * f64::from(u8::from(named_by.exact))
        + coverage_weight * coverage;
    Analysis {
        signals,
        coverage,
        bonus,
    }
}

/// Inputs of one search, parsed and defaulted.
struct Request {
    query: String,
    manual_id: Option<String>,
    expand_scope: bool,
    only_unscanned: Option<String>,
    include_graph: bool,
    use_cache: bool,
    max_candidates: u64,
    time_ms: u64,
}

impl Manuals {
    fn parse_find(&self, args: &Args) -> Result<Request> {
        let query = args.query("query")?;
        let manual_id = match args.str("manual_id")? {
            Some(_) => Some(self.manual(args, "manual_id")?.to_string()),
            None => match &self.find.default_manual_id {
                Some(id) => {
                    let p = crate::fs::RelPath::parse(id, false)?;
                    match self.root.stat(&p)? {
                        Some(s) if s.is_dir => Some(id.clone()),
                        _ => {
                            return Err(Error::new(
                                Code::NotFound,
                                format!("DEFAULT_MANUAL_ID names no manual: `{id}`"),
                            )
                            .with("manual_id", id.as_str()));
                        }
                    }
                }
                None => None,
            },
        };
        let budget = args.obj("budget")?;
        let budget_int = |key: &str, default: i64| -> Result<u64> {
            Ok(match &budget {
                Some(b) => b.int_lenient(key, 1)?.unwrap_or(default),
                None => default,
            } as u64)
        };
        Ok(Request {
            query: query.to_owned(),
            manual_id,
            expand_scope: args.bool("expand_scope")?.unwrap_or(true),
            only_unscanned: args.str("only_unscanned_from_trace_id")?.map(str::to_owned),
            include_graph: args.bool("include_claim_graph")?.unwrap_or(false),
            use_cache: args.bool("use_cache")?.unwrap_or(self.find.cache_default),
            max_candidates: budget_int("max_candidates", 200)?,
            time_ms: budget_int("time_ms", 60_000)?,
        })
    }

    pub fn find(&self, args: Args) -> Result<FindOutput> {
        let started = Instant::now();
        let req = self.parse_find(&args)?;
        let exclude: HashSet<(String, String, u64)> = match &req.only_unscanned {
            Some(id) => {
                let t = self.traces().get(id).ok_or_else(|| {
                    Error::new(
                        Code::NotFound,
                        format!("no trace `{id}` (traces expire after TRACE_TTL_SEC or when more than TRACE_MAX_KEEP are kept)"),
                    )
                    .with("trace_id", id.as_str())
                })?;
                t.candidates[..t.evidence].iter().map(Cand::key).collect()
            }
            None => HashSet::new(),
        };
        let generation = self.refresh()?;
        let mut terms = query_terms(&req.query);
        terms.sort();
        let key = CacheKey {
            terms,
            manual_id: req.manual_id.clone(),
            expand_scope: req.expand_scope,
            max_candidates: req.max_candidates,
            only_unscanned_from: req.only_unscanned.clone(),
        };
        if req.use_cache {
            let hit = self.traces().cached(&key, generation);
            if let Some((id, trace)) = hit {
                let s = &trace.output.summary;
                let over = |count: u64, max: i64| max >= 0 && count > max as u64;
                if !over(s.gap_count, self.find.cache_max_gap)
                    && !over(s.conflict_count, self.find.cache_max_conflict)
                {
                    let mut out = trace.output.clone();
                    out.trace_id = id;
                    out.applied.cache = CacheUse::Hit;
                    out.applied.use_cache = true;
                    out.claim_graph = if req.include_graph {
                        claim_graph_out(&trace)
                    } else {
                        None
                    };
                    return Ok(out);
                }
            }
        }
        let deadline = started + Duration::from_millis(req.time_ms);
        let (trace_id, trace) = self.search(&req, &exclude, deadline)?;
        let trace = self.traces().put(trace_id.clone(), trace);
        self.traces().remember(key, generation, trace_id.clone());
        let mut out = trace.output.clone();
        out.claim_graph = if req.include_graph {
            claim_graph_out(&trace)
        } else {
            None
        };
        Ok(out)
    }

    /// BM25 candidates of `query` in `scope` (one manual, or all).
    fn gather(
        &self,
        query: &str,
        scope: Option<&str>,
        limit: usize,
        exclude: &HashSet<(String, String, u64)>,
    ) -> Result<(Vec<Found>, bool)> {
        let hits = self.index.search(
            query,
            limit + 1,
            limit + 1 + exclude.len(),
            scope,
            |file, line| {
                exclude.is_empty() || {
                    let (m, p) = file.split_once('/').unwrap_or(("", file));
                    !exclude.contains(&(m.to_owned(), p.to_owned(), line))
                }
            },
        )?;
        let more = hits.len() > limit;
        let mut hits: Vec<Hit> = hits.into_iter().take(limit).collect();
        // A document the query names joins the analysed pool even when its
        // body scores low (its name is all that says what it is); it enters
        // at the pool's last score, and the signals place it.
        let named = self.index.search_names(query, NAMED_FILES, scope)?;
        let pool = hits.len().min(SIGNAL_POOL);
        let floor = hits.get(pool.saturating_sub(1)).map_or(0.0, |h| h.score);
        for mut hit in named {
            if hits[..pool].iter().any(|h| h.file == hit.file) {
                continue;
            }
            let excluded = !exclude.is_empty() && {
                let (m, p) = hit.file.split_once('/').unwrap_or(("", &hit.file));
                exclude.contains(&(m.to_owned(), p.to_owned(), hit.start_line))
            };
            if excluded {
                continue;
            }
            hits.retain(|h| !(h.file == hit.file && h.start_line == hit.start_line));
            hit.score = floor;
            let at = hits.len().min(SIGNAL_POOL.saturating_sub(NAMED_FILES));
            hits.insert(at, hit);
        }
        let mut found: Vec<Found> = hits
            .into_iter()
            .map(|hit| {
                let (m, p) = hit.file.split_once('/').unwrap_or(("", &hit.file));
                Found {
                    manual_id: m.to_owned(),
                    path: p.to_owned(),
                    hit,
                }
            })
            .collect();
        let n = found.len().min(SIGNAL_POOL);
        let t = Instant::now();
        self.fill_bodies(found[..n].iter_mut());
        tracing::debug!(target: "kura::timing", "fill {n} bodies {:.2}ms", t.elapsed().as_secs_f64() * 1e3);
        Ok((found, more))
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
                    .and_then(|p| super::units::extract(&p, text).into_iter().next())
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

    /// Make sure the best candidates (the ones the components will read) have
    /// their text, also when the signals ranked them up from outside the pool.
    fn fill_top(&self, pool: &mut [Found], cands: &[Cand]) {
        let need: HashSet<(&str, &str, u64)> = cands
            .iter()
            .take(RERANK_TOP.max(EVIDENCE_MAX))
            .map(|c| (c.manual_id.as_str(), c.path.as_str(), c.start_line))
            .collect();
        self.fill_bodies(pool.iter_mut().filter(|f| {
            f.hit.body.is_empty()
                && need.contains(&(f.manual_id.as_str(), f.path.as_str(), f.hit.start_line))
        }));
    }

    /// Score found sections: BM25 normalised by the best, plus the signal
    /// bonuses for the analysed pool.
    fn score(&self, query: &str, found: &[Found]) -> Vec<Cand> {
        let units = content_units(query);
        let asks_exceptions = facet::detect(query).contains(&Facet::Exceptions);
        let best = found.iter().map(|f| f.hit.score).fold(0.0f32, f32::max);
        found
            .iter()
            .enumerate()
            .map(|(i, f)| {
                let base = if best > 0.0 {
                    f64::from(f.hit.score / best)
                } else {
                    0.0
                };
                let a = if i < SIGNAL_POOL {
                    analyse(
                        query,
                        &units,
                        asks_exceptions,
                        self.find.coverage_weight,
                        &f.hit,
                    )
                } else {
                    Analysis {
                        signals: vec![],
                        coverage: 0.0,
                        bonus: 0.0,
                    }
                };
                Cand {
                    manual_id: f.manual_id.clone(),
                    path: f.path.clone(),
                    start_line: f.hit.start_line,
                    heading: f.hit.heading.clone(),
                    score: base + a.bonus,
                    base: base + a.bonus,
                    signals: a.signals,
                    coverage: a.coverage,
                    snippet: None,
                }
            })
            .collect()
    }

    /// Rerank the best candidates; returns how it went and a warning.
    fn rerank(
        &self,
        query: &str,
        cands: &mut [Cand],
        texts: &HashMap<(String, String, u64), &Hit>,
    ) -> (StageUse, Option<String>) {
        if !self.find.late_rerank {
            return (StageUse::Disabled, None);
        }
        sort(cands);
        let top = cands.len().min(RERANK_TOP);
        if top == 0 {
            return (StageUse::NotNeeded, None);
        }
        // The file's title leads the heading path, as in the signals.
        let headings: Vec<String> = cands[..top]
            .iter()
            .map(|c| {
                let heading = texts.get(&c.key()).map_or("", |h| h.heading.as_str());
                let title = super::name::title(&format!("{}/{}", c.manual_id, c.path));
                format!("{title} > {heading}")
            })
            .collect();
        let list: Vec<RerankCandidate<'_>> = cands[..top]
            .iter()
            .zip(&headings)
            .map(|(c, heading)| {
                let hit = texts.get(&c.key());
                RerankCandidate {
                    id: format!("{}/{}#{}", c.manual_id, c.path, c.start_line),
                    heading,
                    text: hit.map_or("", |h| clip(&h.body, PLUGIN_TEXT_CHARS)),
                    score: c.score,
                }
            })
            .collect();
        let t = Instant::now();
        let scored = self.plugins.rerank(query, &list);
        tracing::debug!(target: "kura::timing", "reranker call {:.2}ms for {}", t.elapsed().as_secs_f64() * 1e3, list.len());
        match scored {
            None => (StageUse::Disabled, None),
            Some(Reranked::Failed(e)) => (
                StageUse::Failed,
                Some(format!(
                    "late rerank skipped, first-stage order kept: {}",
                    e.message
                )),
            ),
            Some(Reranked::Pending) => (
                StageUse::Pending,
                Some(
                    "late rerank skipped, first-stage order kept: the reranker component is still compiling"
                        .to_owned(),
                ),
            ),
            Some(Reranked::Scores(scores)) => {
                for c in cands.iter_mut() {
                    c.score = c.base;
                    c.signals.retain(|s| *s != Signal::LateRerank);
                }
                for (c, s) in cands[..top].iter_mut().zip(scores) {
                    c.score = c.base + RERANK_WEIGHT * s.clamp(0.0, 1.0);
                    if !c.signals.contains(&Signal::LateRerank) {
                        c.signals.push(Signal::LateRerank);
                    }
                }
                sort(cands);
                (StageUse::Applied, None)
            }
        }
    }

    /// Evidence and claim graph for the ranked candidates: how many are
    /// evidence, the graph (none when disabled or failed), and a warning
    /// when the component failed.
    fn integrate(
        &self,
        query: &str,
        facets: &[Facet],
        cands: &mut [Cand],
        texts: &HashMap<(String, String, u64), &Hit>,
    ) -> (usize, Option<Graph>, Option<String>) {
        let n = cands.len().min(EVIDENCE_MAX);
        for c in cands[..n].iter_mut() {
            let body = texts.get(&c.key()).map_or("", |h| h.body.as_str());
            c.snippet = Some((
                clip(body, SNIPPET_CHARS).to_owned(),
                blake3::hash(body.as_bytes()).to_hex()[..16].to_owned(),
            ));
        }
        let evidences: Vec<GraphEvidence<'_>> = cands[..n]
            .iter()
            .enumerate()
            .map(|(i, c)| {
                let hit = texts.get(&c.key());
                GraphEvidence {
                    evidence_id: format!("e{}", i + 1),
                    manual_id: &c.manual_id,
                    path: &c.path,
                    start_line: c.start_line,
                    heading: hit.map_or("", |h| h.heading.as_str()),
                    text: hit.map_or("", |h| clip(&h.body, PLUGIN_TEXT_CHARS)),
                    score: c.score,
                    signals: c
                        .signals
                        .iter()
                        .map(|s| {
                            serde_json::to_value(s)
                                .ok()
                                .and_then(|v| v.as_str().map(str::to_owned))
                                .unwrap_or_default()
                        })
                        .collect(),
                }
            })
            .collect();
        if !self.find.claim_graph {
            return (n, None, None);
        }
        match self.plugins.claim_graph(query, facets, &evidences) {
            None => (n, None, None),
            Some(Ok(g)) => (n, Some(g), None),
            Some(Err(e)) => (
                n,
                None,
                Some(format!("claim graph not built: {}", e.message)),
            ),
        }
    }

    fn search(
        &self,
        req: &Request,
        exclude: &HashSet<(String, String, u64)>,
        deadline: Instant,
    ) -> Result<(String, Trace)> {
        let limit = req.max_candidates as usize;
        let mut warnings = Vec::new();
        let mut cutoff = None;
        let facets = facet::detect(&req.query);
        // Stage 1 (and 2).
        let mut clock = Clock::default();
        let (mut found, mut more) =
            self.gather(&req.query, req.manual_id.as_deref(), limit, exclude)?;
        clock.lap("gather");
        let mut scored = self.score(&req.query, &found);
        clock.lap("score");
        let mut scope_expanded = false;
        let weak_scope =
            |s: &[Cand]| s.iter().map(|c| c.coverage).fold(0.0, f64::max) < WEAK_COVERAGE;
        if req.manual_id.is_some() && req.expand_scope && weak_scope(&scored) {
            let (all, all_more) = self.gather(&req.query, None, limit, exclude)?;
            if all.len() > found.len()
                || all
                    .iter()
                    .any(|f| Some(&f.manual_id) != req.manual_id.as_ref())
            {
                found = all;
                more = all_more;
                scored = self.score(&req.query, &found);
                scope_expanded = true;
            }
        }
        clock.lap("expand");
        if more {
            cutoff = Some(CutoffReason::MaxCandidates);
        }
        let mut pool: Vec<Found> = found;
        let mut cands: Vec<Cand> = scored;
        let mut scanned_nodes: HashSet<(String, String, u64)> =
            cands.iter().take(SIGNAL_POOL).map(Cand::key).collect();
        // Stage 3.
        let over = |cutoff: &mut Option<CutoffReason>| {
            let late = Instant::now() >= deadline;
            if late {
                *cutoff = Some(CutoffReason::TimeMs);
            }
            late
        };
        let mut rerank_use = StageUse::Skipped;
        let mut evidence = 0;
        let mut graph: Option<Graph> = None;
        let mut graph_failed = false;
        let mut corrective = if self.find.corrective {
            StageUse::NotNeeded
        } else {
            StageUse::Disabled
        };
        sort(&mut cands);
        self.fill_top(&mut pool, &cands);
        {
            let texts = texts_of(&pool);
            if !over(&mut cutoff) {
                let (u, w) = self.rerank(&req.query, &mut cands, &texts);
                clock.lap("rerank");
                rerank_use = u;
                warnings.extend(w);
            }
            sort(&mut cands);
            if !over(&mut cutoff) {
                let (n, g, w) = self.integrate(&req.query, &facets, &mut cands, &texts);
                clock.lap("graph");
                (evidence, graph, graph_failed) = (n, g, w.is_some());
                warnings.extend(w);
            }
        }
        // Stage 4.
        if self.find.corrective && !graph_failed {
            let weak = is_weak(&cands, graph.as_ref());
            if weak && over(&mut cutoff) {
                corrective = StageUse::Skipped;
            } else if weak {
                let relaxed = content_terms(&req.query).join(" ");
                // Widen to every manual unless the caller pinned the scope.
                let widen = req.manual_id.is_some() && req.expand_scope && !scope_expanded;
                let scope = if req.expand_scope {
                    None
                } else {
                    req.manual_id.as_deref()
                };
                let changed = widen || query_terms(&relaxed) != query_terms(&req.query);
                if changed {
                    let (extra, _) =
                        self.gather(&relaxed, scope, limit.min(CORRECTIVE_FETCH), exclude)?;
                    let extra_scored = self.score(&req.query, &extra);
                    let known: HashSet<_> = cands.iter().map(Cand::key).collect();
                    // The reranked region ends at the RERANK_TOP-th first-stage
                    // score; a new candidate below it cannot change the top.
                    let mut bases: Vec<f64> = cands.iter().map(|c| c.base).collect();
                    bases.sort_by(|a, b| b.total_cmp(a));
                    let floor = bases.get(RERANK_TOP - 1).copied().unwrap_or(f64::MIN);
                    let mut reorder = false;
                    for mut c in extra_scored {
                        if known.contains(&c.key()) {
                            continue;
                        }
                        c.signals.push(Signal::Loose);
                        reorder |= c.base > floor;
                        cands.push(c);
                    }
                    for f in &extra {
                        scanned_nodes.insert((
                            f.manual_id.clone(),
                            f.path.clone(),
                            f.hit.start_line,
                        ));
                    }
                    pool.extend(extra);
                    sort(&mut cands);
                    if reorder {
                        // New candidates reach the top: rerank and integrate
                        // the merged list afresh.
                        for c in cands.iter_mut() {
                            c.snippet = None;
                        }
                        self.fill_top(&mut pool, &cands);
                        let texts = texts_of(&pool);
                        let (u, w) = self.rerank(&req.query, &mut cands, &texts);
                        if rerank_use == StageUse::Applied {
                            rerank_use = u;
                        }
                        warnings.extend(w);
                        sort(&mut cands);
                        let (n, g, w) = self.integrate(&req.query, &facets, &mut cands, &texts);
                        (evidence, graph) = (n, g);
                        warnings.extend(w);
                    }
                    corrective = StageUse::Applied;
                }
            }
        }
        if cands.len() > limit {
            cands.truncate(limit);
            cutoff = Some(CutoffReason::MaxCandidates);
        }
        let evidence = evidence.min(cands.len());
        clock.lap("corrective");
        tracing::debug!(target: "kura::timing", query = %req.query, "manual_find {}", clock.report());
        let trace_id = self.traces().new_id();
        let mut trace = Trace {
            candidates: cands,
            evidence,
            graph,
            output: FindOutput {
                trace_id: trace_id.clone(),
                claim_graph: None,
                summary: Summary {
                    scanned_files: 0,
                    scanned_nodes: 0,
                    candidates: 0,
                    file_bias_ratio: 0.0,
                    conflict_count: 0,
                    gap_count: 0,
                    integration_status: IntegrationStatus::Blocked,
                },
                next_actions: vec![],
                applied: FindApplied {
                    manual_id: req.manual_id.clone(),
                    expand_scope: req.expand_scope,
                    scope_expanded,
                    use_cache: req.use_cache,
                    cache: if req.use_cache {
                        CacheUse::Miss
                    } else {
                        CacheUse::Off
                    },
                    late_rerank: rerank_use,
                    corrective,
                    query_facets: facets.iter().map(|f| (*f).into()).collect(),
                    budget: BudgetApplied {
                        max_candidates: req.max_candidates,
                        time_ms: req.time_ms,
                    },
                },
                cutoff_reason: cutoff,
                warnings,
            },
        };
        let files: HashSet<(&str, &str)> = scanned_nodes
            .iter()
            .map(|(m, p, _)| (m.as_str(), p.as_str()))
            .collect();
        let conflicts = trace.conflicts().len() as u64;
        let gaps = trace.gaps().len() as u64;
        let mut per_file: HashMap<(&str, &str), usize> = HashMap::new();
        for c in &trace.candidates[..evidence] {
            *per_file.entry((&c.manual_id, &c.path)).or_default() += 1;
        }
        let bias = if evidence == 0 {
            0.0
        } else {
            *per_file.values().max().unwrap_or(&0) as f64 / evidence as f64
        };
        let summary = Summary {
            scanned_files: files.len() as u64,
            scanned_nodes: scanned_nodes.len() as u64,
            candidates: trace.candidates.len() as u64,
            file_bias_ratio: round(bias),
            conflict_count: conflicts,
            gap_count: gaps,
            integration_status: if trace.graph.is_none() {
                IntegrationStatus::Blocked
            } else if conflicts > 0 || gaps > 0 {
                IntegrationStatus::NeedsFollowup
            } else {
                IntegrationStatus::Ready
            },
        };
        let actions = next_actions(&trace_id, req, &trace, &summary);
        trace.output.summary = summary;
        trace.output.next_actions = actions;
        Ok((trace_id, trace))
    }
}

/// Stage timings for the debug log.
struct Clock {
    last: Instant,
    laps: Vec<(&'static str, Duration)>,
}

impl Default for Clock {
    fn default() -> Self {
        Clock {
            last: Instant::now(),
            laps: Vec::new(),
        }
    }
}

impl Clock {
    fn lap(&mut self, name: &'static str) {
        let now = Instant::now();
        self.laps.push((name, now - self.last));
        self.last = now;
    }

    fn report(&self) -> String {
        self.laps
            .iter()
            .map(|(n, d)| format!("{n}={:.2}ms", d.as_secs_f64() * 1e3))
            .collect::<Vec<_>>()
            .join(" ")
    }
}

fn texts_of(pool: &[Found]) -> HashMap<(String, String, u64), &Hit> {
    pool.iter()
        .map(|f| {
            (
                (f.manual_id.clone(), f.path.clone(), f.hit.start_line),
                &f.hit,
            )
        })
        .collect()
}

/// Best first; ties in a stable, readable order.
fn sort(cands: &mut [Cand]) {
    cands.sort_by(|a, b| {
        b.score
            .total_cmp(&a.score)
            .then_with(|| a.manual_id.cmp(&b.manual_id))
            .then_with(|| a.path.cmp(&b.path))
            .then_with(|| a.start_line.cmp(&b.start_line))
    });
    for c in cands.iter_mut() {
        c.score = round(c.score);
        c.signals.sort();
        c.signals.dedup();
    }
}

/// Stage 3 is weak (SPEC.md: gaps, conflicts, coverage, top-score margin,
/// candidates): too few candidates, the best covering under half of the
/// query, a conflict, or a gap that the ranking does not make up for (the
/// best section covers under three quarters of the query, or barely leads).
fn is_weak(cands: &[Cand], graph: Option<&Graph>) -> bool {
    let conflicts =
        graph.is_some_and(|g| g.claims.iter().any(|c| c.status == ClaimStatus::Conflicted));
    let gaps = graph.is_some_and(|g| {
        g.facets
            .iter()
            .any(|f| f.coverage_status != CoverageStatus::Covered)
    });
    let coverage = cands.first().map_or(0.0, |c| c.coverage);
    let margin = match cands {
        [a, b, ..] if a.score > 0.0 => (a.score - b.score) / a.score,
        _ => 1.0,
    };
    cands.len() < WEAK_CANDIDATES
        || coverage < WEAK_COVERAGE
        || conflicts
        || (gaps && (coverage < GAP_COVERAGE || margin < WEAK_MARGIN))
}

fn claim_graph_out(trace: &Trace) -> Option<ClaimGraphOut> {
    let g = trace.graph.as_ref()?;
    Some(ClaimGraphOut {
        claims: g.claims.clone(),
        evidences: trace.evidences(),
        edges: g.edges.clone(),
        facets: g.facets.clone(),
    })
}

fn params(v: Value) -> Option<Map<String, Value>> {
    match v {
        Value::Object(m) => Some(m),
        _ => None,
    }
}

/// What to do next, most useful first: read the best evidence, look at the
/// conflicts and gaps, search again for what was not yet integrated.
fn next_actions(
    trace_id: &str,
    req: &Request,
    trace: &Trace,
    summary: &Summary,
) -> Vec<NextAction> {
    let mut out = Vec::new();
    let top = trace.candidates.first().map_or(0.0, |c| c.score);
    for c in trace.candidates.iter().take(trace.evidence.min(3)) {
        let mut p = json!({
            "ref": { "manual_id": c.manual_id, "path": c.path, "start_line": c.start_line },
        });
        if c.path.to_ascii_lowercase().ends_with(".md") {
            p["scope"] = json!("section");
        }
        out.push(NextAction {
            kind: ActionType::ManualRead,
            confidence: Some(if top > 0.0 { round(c.score / top) } else { 0.0 }),
            params: params(p),
        });
    }
    if summary.conflict_count > 0 {
        out.push(NextAction {
            kind: ActionType::ManualHits,
            confidence: None,
            params: params(json!({ "trace_id": trace_id, "kind": "conflicts" })),
        });
    }
    if summary.gap_count > 0 {
        out.push(NextAction {
            kind: ActionType::ManualHits,
            confidence: None,
            params: params(json!({ "trace_id": trace_id, "kind": "gaps" })),
        });
    }
    if summary.integration_status != IntegrationStatus::Ready
        && trace.candidates.len() > trace.evidence
    {
        out.push(NextAction {
            kind: ActionType::ManualFind,
            confidence: None,
            params: params(json!({ "query": req.query, "only_unscanned_from_trace_id": trace_id })),
        });
    }
    if trace.candidates.is_empty() && req.manual_id.is_some() && !req.expand_scope {
        out.push(NextAction {
            kind: ActionType::ManualFind,
            confidence: None,
            params: params(json!({ "query": req.query, "expand_scope": true })),
        });
    }
    out
}
