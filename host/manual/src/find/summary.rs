//! The end of a search: its trace (candidates, evidence, graph), the
//! `summary` counted from them, and the `next_actions` an agent can take.

use std::collections::{HashMap, HashSet};

use serde_json::json;

use super::first::Pool;
use super::output::{
    ActionType, BudgetApplied, CacheUse, CutoffReason, FindApplied, FindOutput, IntegrationStatus,
    Key, NextAction, StageUse, Summary, Trace,
};
use super::{Late, Request, round};
use crate::text::facet::Facet;

/// Everything the stages decided, for the trace.
pub(super) struct Outcome {
    pub pool: Pool,
    pub late: Late,
    pub corrective: StageUse,
    /// Why the search was cut short, if it was.
    pub cutoff: Option<CutoffReason>,
    pub facets: Vec<Facet>,
    pub compare_sides: Vec<String>,
}

/// The trace of a finished search, with its output.
pub(super) fn trace(trace_id: String, req: &Request, o: Outcome) -> Trace {
    let Outcome {
        pool,
        late,
        corrective,
        mut cutoff,
        facets,
        compare_sides,
    } = o;
    let mut cands = pool.cands;
    let limit = req.max_candidates as usize;
    if cands.len() > limit {
        cands.truncate(limit);
        cutoff = Some(CutoffReason::MaxCandidates);
    }
    let evidence = late.evidence.min(cands.len());
    let mut trace = Trace {
        candidates: cands,
        evidence,
        graph: late.graph,
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
                scope_expanded: pool.scope_expanded,
                use_cache: req.use_cache,
                cache: if req.use_cache {
                    CacheUse::Miss
                } else {
                    CacheUse::Off
                },
                late_rerank: late.rerank,
                corrective,
                query_facets: facets.iter().map(|f| (*f).into()).collect(),
                compare_sides,
                queries: req.phrasings.clone(),
                budget: BudgetApplied {
                    max_candidates: req.max_candidates,
                    time_ms: req.time_ms,
                },
            },
            cutoff_reason: cutoff,
            warnings: late.warnings,
        },
    };
    let summary = summary(&trace, &pool.scanned);
    let actions = next_actions(&trace_id, req, &trace, &summary);
    trace.output.summary = summary;
    trace.output.next_actions = actions;
    trace
}

/// The summary counted from the trace: files and sections scanned, how much
/// the evidence leans on one file, conflicts and gaps.
fn summary(trace: &Trace, scanned: &HashSet<Key>) -> Summary {
    let evidence = trace.evidence;
    let files: HashSet<(&str, &str)> = scanned
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
    Summary {
        scanned_files: files.len() as u64,
        scanned_nodes: scanned.len() as u64,
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
        out.push(NextAction::with(
            ActionType::ManualRead,
            Some(if top > 0.0 { round(c.score / top) } else { 0.0 }),
            p,
        ));
    }
    if summary.conflict_count > 0 {
        out.push(NextAction::with(
            ActionType::ManualHits,
            None,
            json!({ "trace_id": trace_id, "kind": "conflicts" }),
        ));
    }
    if summary.gap_count > 0 {
        out.push(NextAction::with(
            ActionType::ManualHits,
            None,
            json!({ "trace_id": trace_id, "kind": "gaps" }),
        ));
    }
    if summary.integration_status != IntegrationStatus::Ready
        && trace.candidates.len() > trace.evidence
    {
        out.push(NextAction::with(
            ActionType::ManualFind,
            None,
            json!({ "query": req.query, "only_unscanned_from_trace_id": trace_id }),
        ));
    }
    if trace.candidates.is_empty() && req.manual_id.is_some() && !req.expand_scope {
        out.push(NextAction::with(
            ActionType::ManualFind,
            None,
            json!({ "query": req.query, "expand_scope": true }),
        ));
    }
    out
}
