//! What manual_find returns (its `outputSchema` derives from these types)
//! and what a search leaves behind in its trace for manual_hits.

use schemars::JsonSchema;

pub use crate::domain::search::IntegrationStatus;
use serde::Serialize;

use crate::domain::search::Blend;
use crate::index::Hit;
use crate::plugins::claim_graph::{Claim, ClaimStatus, CoverageStatus, Edge, FacetSummary, Graph};

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

/// One of manual_find's `next_actions`.
pub type NextAction = crate::domain::search::NextAction<ActionType>;

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
    /// The sides of a comparison query, each retrieved on its own and kept
    /// near the top (absent: not a comparison).
    #[serde(skip_serializing_if = "Vec::is_empty")]
    pub compare_sides: Vec<String>,
    // The other phrasings searched and fused (those repeating the query's
    // words left out); undescribed in the schema: tools/list has a budget.
    #[serde(skip_serializing_if = "Vec::is_empty")]
    pub queries: Vec<String>,
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

/// A section's identity: manual, path, first line.
pub(super) type Key = (String, String, u64);

/// A section found by the index, with its text once read.
pub(super) struct Found {
    pub hit: Hit,
    pub manual_id: String,
    pub path: String,
    /// The cosine of the question's vector with the section's (0 without
    /// the dense signal).
    pub dense: f32,
    /// Among the sections the signals analyse (the first [`SIGNAL_POOL`]
    /// lexical ones, and those the dense signal adds).
    ///
    /// [`SIGNAL_POOL`]: super::SIGNAL_POOL
    pub analyse: bool,
}

impl Found {
    /// A hit of the index, not analysed yet.
    pub(super) fn of(hit: Hit) -> Found {
        let (m, p) = hit.file.split_once('/').unwrap_or(("", &hit.file));
        Found {
            manual_id: m.to_owned(),
            path: p.to_owned(),
            hit,
            dense: 0.0,
            analyse: false,
        }
    }

    pub(super) fn key(&self) -> Key {
        (
            self.manual_id.clone(),
            self.path.clone(),
            self.hit.start_line,
        )
    }
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

impl Blend for Cand {
    fn base(&self) -> f64 {
        self.base
    }

    /// A reranked candidate carries the `late_rerank` signal, and only it.
    fn rescore(&mut self, score: f64, scored: bool) {
        self.score = score;
        self.signals.retain(|s| *s != Signal::LateRerank);
        if scored {
            self.signals.push(Signal::LateRerank);
        }
    }
}

impl Cand {
    pub(super) fn key(&self) -> Key {
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

pub(super) fn claim_graph_out(trace: &Trace) -> Option<ClaimGraphOut> {
    let g = trace.graph.as_ref()?;
    Some(ClaimGraphOut {
        claims: g.claims.clone(),
        evidences: trace.evidences(),
        edges: g.edges.clone(),
        facets: g.facets.clone(),
    })
}
