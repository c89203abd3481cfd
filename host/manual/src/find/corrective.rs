//! Stage 4, corrective: when stage 3 is weak (a gap, a conflict, low
//! coverage, a small top-score margin or few candidates) the query is relaxed
//! (facet cues and particles dropped, every manual searched unless the caller
//! pinned the scope), the new candidates merged (marked `loose`), and — when
//! one reaches the reranked region — reranked and integrated afresh.

use std::collections::HashSet;

use super::compare::Sides;
use super::first::{Exclude, Pool, WEAK_COVERAGE};
use super::graph::EVIDENCE_MAX;
use super::output::{Cand, CutoffReason, Signal, StageUse};
use super::rerank::RERANK_TOP;
use super::{Budget, Late, Request, signals, sort};
use crate::Manuals;
use crate::error::Result;
use crate::plugins::claim_graph::{ClaimStatus, CoverageStatus, Graph};
use crate::text::facet::Facet;
use crate::text::tokenize::{content_terms, query_terms};

/// Candidates the corrective search adds at most (it looks for what the
/// first search missed, not for a second full list).
const CORRECTIVE_FETCH: usize = 50;
/// With a gap, below this relative margin between the two best scores a
/// search is weak.
const WEAK_MARGIN: f64 = 0.05;
/// With a gap, below this share of the query in the best section a search is weak.
const GAP_COVERAGE: f64 = 0.75;
/// Fewer candidates than this make a search weak.
const WEAK_CANDIDATES: usize = 3;

impl Manuals {
    /// Run stage 4 if stage 3 was weak; how it went.
    #[allow(clippy::too_many_arguments)]
    pub(super) fn corrective(
        &self,
        req: &Request,
        facets: &[Facet],
        exclude: &Exclude,
        pool: &mut Pool,
        late: &mut Late,
        sides: &Sides,
        budget: &mut Budget<'_>,
    ) -> Result<StageUse> {
        if !self.find.corrective {
            return Ok(StageUse::Disabled);
        }
        // The caller's phrasings already asked the question other ways:
        // relaxing the main query's words would add a ranking of its own
        // in another scale than the fused one.
        if !req.phrasings.is_empty()
            || late.graph_failed
            || !is_weak(&pool.cands, late.graph.as_ref())
        {
            return Ok(StageUse::NotNeeded);
        }
        if budget.spent(CutoffReason::TimeMs) {
            return Ok(StageUse::Skipped);
        }
        let relaxed = content_terms(&req.query).join(" ");
        // Widen to every manual unless the caller pinned the scope.
        let widen = req.manual_id.is_some() && req.expand_scope && !pool.scope_expanded;
        let scope = if req.expand_scope {
            None
        } else {
            req.manual_id.as_deref()
        };
        if !widen && query_terms(&relaxed) == query_terms(&req.query) {
            return Ok(StageUse::NotNeeded);
        }
        let limit = (req.max_candidates as usize).min(CORRECTIVE_FETCH);
        // Sections already ranked are neither read nor analysed again.
        let known: HashSet<_> = pool.cands.iter().map(Cand::key).collect();
        let (extra, _) = self.gather(&relaxed, None, scope, limit, exclude, &known)?;
        let extra_scored =
            signals::score(&req.query, &extra, &self.find.signals, Some(&known), 1.0);
        // The reranked region ends at the RERANK_TOP-th first-stage score; a
        // new candidate below it cannot change the top.
        let mut bases: Vec<f64> = pool.cands.iter().map(|c| c.base).collect();
        bases.sort_by(|a, b| b.total_cmp(a));
        let floor = bases.get(RERANK_TOP - 1).copied().unwrap_or(f64::MIN);
        let mut reorder = false;
        for mut c in extra_scored {
            if known.contains(&c.key()) {
                continue;
            }
            c.signals.push(Signal::Loose);
            reorder |= c.base > floor;
            pool.cands.push(c);
        }
        pool.absorb(extra);
        sort(&mut pool.cands);
        sides.interleave(&mut pool.cands);
        if reorder {
            // New candidates reach the top: rerank and integrate the merged
            // list afresh.
            for c in pool.cands.iter_mut() {
                c.snippet = None;
            }
            self.fill_top(pool, RERANK_TOP.max(EVIDENCE_MAX));
            let texts = super::first::texts(&pool.found);
            let r = self.rerank(&req.query, &mut pool.cands, &texts);
            if late.rerank == StageUse::Applied {
                late.rerank = r.used;
            }
            late.warnings.extend(r.warning);
            sort(&mut pool.cands);
            sides.interleave(&mut pool.cands);
            let i = self.integrate(&req.query, facets, &mut pool.cands, &texts);
            (late.evidence, late.graph) = (i.evidence, i.graph);
            late.warnings.extend(i.warning);
        }
        Ok(StageUse::Applied)
    }
}

/// Stage 3 is weak (gaps, conflicts, coverage, top-score margin,
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
