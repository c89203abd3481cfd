//! manual_find (seed 004, docs/decisions.md "Manual search"): a pipeline of stages,
//! one module each, in the order they run:
//!
//! 1. [`first`]: BM25 candidates over sections (tantivy), the files the query
//!    names among them, scored with the [`signals`] (`heading`,
//!    `heading_focus`, `normalized`, `loose`, `exceptions`, coverage,
//!    references, exact names) for the best [`SIGNAL_POOL`]; stage 2
//!    (`expand_scope`) repeats a weak one-manual search over every manual.
//! 2. [`compare`]: each side of a comparison query searched on its own.
//! 3. [`rerank`] of the best candidates by the reranker component, each
//!    comparison side kept near the top, then the [`graph`] of the best by
//!    the claim-graph component.
//! 4. [`corrective`]: a weak result is searched again with the query relaxed.
//! 5. [`summary`]: the trace, the summary counted from it, next actions.
//!
//! The [`output`] types are what the tool returns. Every search leaves a
//! trace for manual_hits; the query cache answers a repeated query from its
//! trace while the index has not changed.

mod compare;
mod corrective;
mod first;
mod fuse;
mod graph;
pub mod output;
mod rerank;
pub mod signals;
mod summary;

use std::collections::HashSet;
use std::time::{Duration, Instant};

use crate::domain::search::Run;
use crate::domain::search::phrasings::{distinct, sorted_terms};

use super::Manuals;
use super::trace::CacheKey;
use crate::args::{Input, Phrasings};
use crate::error::{Code, Error, Result};
use crate::job::Job;
use crate::plugins::claim_graph::Graph;
use crate::text::facet::{self, Facet};

pub use crate::domain::search::BudgetInput;
use compare::Sides;
use first::{Exclude, Pool};
use output::{CacheUse, Cand, CutoffReason, StageUse};
pub use output::{FindOutput, Trace};

/// Candidates that get the full signal analysis; the rest keep their BM25 rank.
const SIGNAL_POOL: usize = 30;
/// Characters of a section passed to a component.
const PLUGIN_TEXT_CHARS: usize = 1200;

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
    /// The first stage's weights, the coverage weight from the setting.
    pub signals: signals::Table,
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

/// A search's run through the stages, its cutoff reason manual_find's own.
pub(super) type Budget<'j> = Run<'j, CutoffReason>;

/// What stage 3 (and a corrective rerun of it) decided.
pub(super) struct Late {
    rerank: StageUse,
    /// The first `evidence` candidates are the claim graph's evidence.
    evidence: usize,
    graph: Option<Graph>,
    graph_failed: bool,
    warnings: Vec<String>,
}

/// Inputs of one search, parsed and defaulted.
#[derive(Clone)]
pub(super) struct Request {
    pub query: String,
    /// The caller's other phrasings of `query` (`queries`), each searched
    /// on its own and fused ([`fuse`]); none repeats another's terms.
    pub phrasings: Vec<String>,
    pub manual_id: Option<String>,
    pub expand_scope: bool,
    pub only_unscanned: Option<String>,
    pub include_graph: bool,
    pub use_cache: bool,
    pub max_candidates: u64,
    pub time_ms: u64,
    /// The dense signal is ready (the question's vector is made by the
    /// first stage, while the words are looked up).
    pub dense: bool,
}

#[derive(Input)]
pub struct FindInput {
    /// What to find, in plain words
    #[arg(query)]
    pub query: String,
    /// Rephrasings in the manual's language and terms
    pub queries: Option<Phrasings>,
    /// Search this manual first (default DEFAULT_MANUAL_ID, else all)
    pub manual_id: Option<String>,
    /// Widen to all manuals if needed (default true)
    pub expand_scope: Option<bool>,
    /// Skip what this trace integrated
    pub only_unscanned_from_trace_id: Option<String>,
    /// Include claim graph (default false)
    pub include_claim_graph: Option<bool>,
    /// Reuse a cached trace (default SEM_CACHE_ENABLED)
    pub use_cache: Option<bool>,
    /// Search effort
    pub budget: Option<BudgetInput>,
}

impl Manuals {
    fn parse_find(&self, input: FindInput) -> Result<Request> {
        let manual_id = match &input.manual_id {
            Some(id) => Some(self.manual(id, "manual_id")?.to_string()),
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
        let budget = input.budget.unwrap_or_default();
        let phrasings = distinct(&input.query, input.queries.unwrap_or_default().0);
        Ok(Request {
            phrasings,
            query: input.query,
            manual_id,
            expand_scope: input.expand_scope.unwrap_or(true),
            only_unscanned: input.only_unscanned_from_trace_id,
            include_graph: input.include_claim_graph.unwrap_or(false),
            use_cache: input.use_cache.unwrap_or(self.find.cache_default),
            max_candidates: budget.max_candidates.unwrap_or(200) as u64,
            time_ms: budget.time_ms.unwrap_or(60_000) as u64,
            dense: false,
        })
    }

    pub fn find(&self, input: FindInput, job: Job) -> Result<FindOutput> {
        let started = Instant::now();
        let mut req = self.parse_find(input)?;
        let exclude: Exclude = match &req.only_unscanned {
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
        req.dense = self.dense(generation).is_some();
        let terms = sorted_terms(&req.query);
        let key = CacheKey {
            terms,
            phrasings: req.phrasings.iter().map(|q| sorted_terms(q)).collect(),
            manual_id: req.manual_id.clone(),
            expand_scope: req.expand_scope,
            max_candidates: req.max_candidates,
            only_unscanned_from: req.only_unscanned.clone(),
            dense: req.dense,
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
                        output::claim_graph_out(&trace)
                    } else {
                        None
                    };
                    return Ok(out);
                }
            }
        }
        let deadline = started + Duration::from_millis(req.time_ms);
        let (trace_id, trace) = self.search(&req, &exclude, deadline, job)?;
        let trace = self.traces().put(trace_id.clone(), trace);
        self.traces().remember(key, generation, trace_id.clone());
        let mut out = trace.output.clone();
        out.claim_graph = if req.include_graph {
            output::claim_graph_out(&trace)
        } else {
            None
        };
        Ok(out)
    }

    /// Stages 1 to 5 for `req` (the cache missed).
    fn search(
        &self,
        req: &Request,
        exclude: &Exclude,
        deadline: Instant,
        job: Job,
    ) -> Result<(String, Trace)> {
        // A cancelled search stops between stages (nothing is cached).
        let mut run = Run::new("manual_find", deadline, job);
        let facets = facet::detect(&req.query);
        let mut reranked = None;
        let mut pool = run.stage("first", |run| {
            let pool = if req.phrasings.is_empty() {
                self.first_stage(req, exclude)?
            } else {
                let (pool, rerank) = self.fused_stage(req, exclude)?;
                reranked = Some(rerank);
                pool
            };
            kura_core::fault::slow_search();
            if pool.more {
                run.cut(CutoffReason::MaxCandidates);
            }
            Ok(pool)
        })?;
        let sides = run.stage("compare", |_| self.compare_sides(req, exclude, &mut pool))?;
        let mut late = run.stage("late", |run| {
            Ok(self.late(req, &facets, &mut pool, &sides, reranked, run))
        })?;
        let corrective = run.stage("corrective", |run| {
            self.corrective(req, &facets, exclude, &mut pool, &mut late, &sides, run)
        })?;
        if req.phrasings.is_empty() {
            let near = pool.found.iter().map(|f| f.dense).fold(0.0f32, f32::max);
            let coverage = pool.cands.first().map_or(0.0, |c| c.coverage);
            let weak = coverage < first::WEAK_COVERAGE && near < first::DENSE_SUFFICIENT;
            // The manual asked for, even when the search went beyond it.
            let scope = req.manual_id.as_deref();
            late.warnings
                .extend(self.phrasing_hint(&req.query, scope, weak));
        }
        run.log(&req.query);
        let trace_id = self.traces().new_id();
        let outcome = summary::Outcome {
            pool,
            late,
            corrective,
            cutoff: run.cutoff(),
            facets,
            compare_sides: sides.names,
        };
        Ok((trace_id.clone(), summary::trace(trace_id, req, outcome)))
    }

    /// Stage 3: rerank the best candidates (unless [`fuse`] reranked each
    /// phrasing's), keep every comparison side near the top, build the
    /// claim graph; each step only while time remains.
    fn late(
        &self,
        req: &Request,
        facets: &[Facet],
        pool: &mut Pool,
        sides: &Sides,
        reranked: Option<rerank::Rerank>,
        budget: &mut Budget<'_>,
    ) -> Late {
        let mut late = Late {
            rerank: StageUse::Skipped,
            evidence: 0,
            graph: None,
            graph_failed: false,
            warnings: Vec::new(),
        };
        if pool.question.is_none() {
            late.warnings.extend(self.meaning.words_only());
        }
        sort(&mut pool.cands);
        self.fill_top(pool, rerank::RERANK_TOP.max(graph::EVIDENCE_MAX));
        let texts = first::texts(&pool.found);
        if let Some(r) = reranked {
            late.rerank = r.used;
            late.warnings.extend(r.warning);
        } else if !budget.spent(CutoffReason::TimeMs) {
            let r = self.rerank(&req.query, &mut pool.cands, &texts);
            late.rerank = r.used;
            late.warnings.extend(r.warning);
        }
        sort(&mut pool.cands);
        sides.interleave(&mut pool.cands);
        if !budget.spent(CutoffReason::TimeMs) {
            let i = self.integrate(&req.query, facets, &mut pool.cands, &texts);
            (late.evidence, late.graph, late.graph_failed) =
                (i.evidence, i.graph, i.warning.is_some());
            late.warnings.extend(i.warning);
        }
        late
    }
}

impl Request {
    /// This request for one query alone (a phrasing's own first stage).
    fn alone(&self) -> Request {
        Request {
            phrasings: Vec::new(),
            ..self.clone()
        }
    }
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
