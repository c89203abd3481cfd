//! manual_hits (seed 004): pages through what a manual_find trace holds.

use schemars::JsonSchema;
use serde::Serialize;
use serde_json::{Value, json};

use super::Manuals;
use super::find::Trace;
use crate::args::Input;
use crate::error::{Code, Error, Result};
use crate::plugins::claim_graph::Relation;

const KINDS: &[&str] = &[
    "candidates",
    "unscanned",
    "conflicts",
    "gaps",
    "integrated_top",
    "claims",
    "evidences",
    "edges",
];

#[derive(Debug, Serialize, JsonSchema)]
pub struct HitsOutput {
    pub trace_id: String,
    pub kind: String,
    pub offset: u64,
    pub limit: u64,
    pub total: u64,
    /// kind=candidates only: the manual every item belongs to, when they all
    /// share one (then `items[].ref.manual_id` is left out).
    #[serde(skip_serializing_if = "Option::is_none")]
    pub manual_id: Option<String>,
    /// One object per item; its fields depend on `kind`.
    #[schemars(with = "Vec<serde_json::Map<String, Value>>")]
    pub items: Vec<Value>,
}

fn all_items(trace: &Trace, kind: &str) -> (Vec<Value>, Option<String>) {
    match kind {
        "candidates" => candidates(trace),
        "unscanned" => (
            trace.candidates[trace.evidence..]
                .iter()
                .map(|c| {
                    json!({ "ref": c.reference(), "heading": c.heading, "score": c.score, "signals": c.signals })
                })
                .collect(),
            None,
        ),
        "conflicts" => (conflicts(trace), None),
        "gaps" => (trace.gaps().into_iter().map(to).collect(), None),
        "integrated_top" => (integrated_top(trace), None),
        "claims" => (
            trace
                .graph
                .iter()
                .flat_map(|g| g.claims.iter())
                .map(to)
                .collect(),
            None,
        ),
        "evidences" => (trace.evidences().iter().map(to).collect(), None),
        "edges" => (
            trace
                .graph
                .iter()
                .flat_map(|g| g.edges.iter())
                .map(to)
                .collect(),
            None,
        ),
        _ => (vec![], None),
    }
}

/// The candidates, with the manual they share named once.
fn candidates(trace: &Trace) -> (Vec<Value>, Option<String>) {
    let first = trace.candidates.first().map(|c| c.manual_id.clone());
    let shared = first.filter(|m| trace.candidates.iter().all(|c| &c.manual_id == m));
    let items = trace
        .candidates
        .iter()
        .map(|c| {
            let mut r = json!({ "path": c.path, "start_line": c.start_line });
            if shared.is_none() {
                r["manual_id"] = json!(c.manual_id);
            }
            json!({ "ref": r, "heading": c.heading, "score": c.score, "signals": c.signals })
        })
        .collect();
    (items, shared)
}

/// Each conflicting claim with the evidence on either side of it.
fn conflicts(trace: &Trace) -> Vec<Value> {
    let edges = trace.graph.as_ref().map_or(&[][..], |g| &g.edges[..]);
    trace
        .conflicts()
        .into_iter()
        .map(|c| {
            let ids = |rel: Relation| -> Vec<&str> {
                edges
                    .iter()
                    .filter(|e| e.from_claim_id == c.claim_id && e.relation == rel)
                    .map(|e| e.to_evidence_id.as_str())
                    .collect()
            };
            json!({
                "claim_id": c.claim_id,
                "facet": c.facet,
                "text": c.text,
                "confidence": c.confidence,
                "supporting_evidence_ids": ids(Relation::Supports),
                "contradicting_evidence_ids": ids(Relation::Contradicts),
            })
        })
        .collect()
}

/// The evidence the answer stands on, with its candidate's heading and snippet.
fn integrated_top(trace: &Trace) -> Vec<Value> {
    trace
        .evidences()
        .into_iter()
        .zip(&trace.candidates)
        .map(|(e, c)| {
            json!({
                "evidence_id": e.evidence_id,
                "ref": e.reference,
                "heading": c.heading,
                "score": e.score,
                "signals": e.signals,
                "snippet": c.snippet.as_ref().map_or("", |s| s.0.as_str()),
                "snippet_digest": e.snippet_digest,
            })
        })
        .collect()
}

#[derive(Input)]
pub struct HitsInput {
    /// manual_find's trace_id
    pub trace_id: String,
    /// Which list (default candidates)
    #[arg(one_of = KINDS)]
    pub kind: Option<&'static str>,
    /// Items to skip (default 0)
    #[arg(min = 0)]
    pub offset: Option<i64>,
    /// Page size (default 50)
    #[arg(min = 1)]
    pub limit: Option<i64>,
}

/// An output record as JSON (plain structs of strings and numbers: cannot fail).
fn to<T: Serialize>(v: &T) -> Value {
    serde_json::to_value(v).unwrap_or(Value::Null)
}

impl Manuals {
    pub fn hits(&self, input: HitsInput) -> Result<HitsOutput> {
        let trace_id = input.trace_id.as_str();
        let kind = input.kind.unwrap_or("candidates");
        let offset = input.offset.unwrap_or(0) as u64;
        let limit = input.limit.unwrap_or(50) as u64;
        let trace = self.traces().get(trace_id).ok_or_else(|| {
            Error::new(
                Code::NotFound,
                format!("no trace `{trace_id}` (traces expire after TRACE_TTL_SEC or when more than TRACE_MAX_KEEP are kept)"),
            )
            .with("trace_id", trace_id)
        })?;
        let (items, manual_id) = all_items(&trace, kind);
        let total = items.len() as u64;
        let items = items
            .into_iter()
            .skip(usize::try_from(offset).unwrap_or(usize::MAX))
            .take(usize::try_from(limit).unwrap_or(usize::MAX))
            .collect();
        Ok(HitsOutput {
            trace_id: trace_id.to_owned(),
            kind: kind.to_owned(),
            offset,
            limit,
            total,
            manual_id,
            items,
        })
    }
}
