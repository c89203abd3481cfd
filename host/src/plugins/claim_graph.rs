//! The claim-graph slot: claims, evidence edges and facet coverage for the
//! evidence of a manual search, converted to the host's serialisable types
//! (the shapes of seed 004's `claim_graph`).

use schemars::JsonSchema;
use serde::Serialize;

use super::Plugins;
use super::bindings::types as wit;
use crate::error::Result;
use kura_text::facet::Facet;

/// A facet as it appears in output.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Serialize, JsonSchema)]
#[serde(rename_all = "snake_case")]
pub enum FacetName {
    Definition,
    Procedure,
    Eligibility,
    Exceptions,
    Compare,
    Unknown,
}

impl From<Facet> for FacetName {
    fn from(f: Facet) -> Self {
        match f {
            Facet::Definition => FacetName::Definition,
            Facet::Procedure => FacetName::Procedure,
            Facet::Eligibility => FacetName::Eligibility,
            Facet::Exceptions => FacetName::Exceptions,
            Facet::Compare => FacetName::Compare,
            Facet::Unknown => FacetName::Unknown,
        }
    }
}

impl From<wit::Facet> for FacetName {
    fn from(f: wit::Facet) -> Self {
        match f {
            wit::Facet::Definition => FacetName::Definition,
            wit::Facet::Procedure => FacetName::Procedure,
            wit::Facet::Eligibility => FacetName::Eligibility,
            wit::Facet::Exceptions => FacetName::Exceptions,
            wit::Facet::Compare => FacetName::Compare,
            wit::Facet::Unknown => FacetName::Unknown,
        }
    }
}

fn to_wit(f: Facet) -> wit::Facet {
    match f {
        Facet::Definition => wit::Facet::Definition,
        Facet::Procedure => wit::Facet::Procedure,
        Facet::Eligibility => wit::Facet::Eligibility,
        Facet::Exceptions => wit::Facet::Exceptions,
        Facet::Compare => wit::Facet::Compare,
        Facet::Unknown => wit::Facet::Unknown,
    }
}

#[derive(Clone, Copy, Debug, PartialEq, Eq, Serialize, JsonSchema)]
#[serde(rename_all = "snake_case")]
pub enum ClaimStatus {
    Supported,
    Conflicted,
    Unresolved,
}

#[derive(Clone, Copy, Debug, PartialEq, Eq, Serialize, JsonSchema)]
#[serde(rename_all = "snake_case")]
pub enum Relation {
    Supports,
    Contradicts,
    RequiresFollowup,
}

#[derive(Clone, Copy, Debug, PartialEq, Eq, Serialize, JsonSchema)]
#[serde(rename_all = "snake_case")]
pub enum CoverageStatus {
    Covered,
    Partial,
    Missing,
}

#[derive(Clone, Debug, Serialize, JsonSchema)]
pub struct Claim {
    pub claim_id: String,
    pub facet: FacetName,
    pub text: String,
    pub status: ClaimStatus,
    pub confidence: f64,
}

#[derive(Clone, Debug, Serialize, JsonSchema)]
pub struct Edge {
    pub from_claim_id: String,
    pub to_evidence_id: String,
    pub relation: Relation,
    pub confidence: f64,
}

#[derive(Clone, Debug, Serialize, JsonSchema)]
pub struct FacetSummary {
    pub facet: FacetName,
    pub claim_count: u32,
    pub supported_count: u32,
    pub conflicted_count: u32,
    pub unresolved_count: u32,
    pub coverage_status: CoverageStatus,
}

/// What the component returns (evidences are the host's own).
#[derive(Clone, Debug, Default)]
pub struct Graph {
    pub claims: Vec<Claim>,
    pub edges: Vec<Edge>,
    pub facets: Vec<FacetSummary>,
}

/// One piece of evidence offered to the component.
#[derive(Clone, Debug)]
pub struct GraphEvidence<'a> {
    pub evidence_id: String,
    pub manual_id: &'a str,
    pub path: &'a str,
    pub start_line: u64,
    pub heading: &'a str,
    pub text: &'a str,
    pub score: f64,
    pub signals: Vec<String>,
}

impl Plugins {
    /// Build the claim graph; `None` when no claim-graph component is loaded.
    pub fn claim_graph(
        &self,
        query: &str,
        facets: &[Facet],
        evidences: &[GraphEvidence<'_>],
    ) -> Option<Result<Graph>> {
        let slot = self.claim_graph.as_ref()?;
        let _busy = self.busy();
        let mut store = self.store(slot.name);
        let list: Vec<wit::Evidence> = evidences
            .iter()
            .map(|e| wit::Evidence {
                evidence_id: e.evidence_id.clone(),
                manual_id: e.manual_id.to_owned(),
                path: e.path.to_owned(),
                start_line: u32::try_from(e.start_line).unwrap_or(u32::MAX),
                heading_path: e.heading.to_owned(),
                text: e.text.to_owned(),
                score: e.score,
                signals: e.signals.clone(),
            })
            .collect();
        let facets: Vec<wit::Facet> = facets.iter().copied().map(to_wit).collect();
        let outcome = slot
            .pre
            .instantiate(&mut store)
            .and_then(|inst| inst.call_build(&mut store, query, &facets, &list));
        Some(match outcome {
            Ok(g) => Ok(Graph {
                claims: g
                    .claims
                    .into_iter()
                    .map(|c| Claim {
                        claim_id: c.claim_id,
                        facet: c.facet.into(),
                        text: c.text,
                        status: match c.status {
                            wit::ClaimStatus::Supported => ClaimStatus::Supported,
                            wit::ClaimStatus::Conflicted => ClaimStatus::Conflicted,
                            wit::ClaimStatus::Unresolved => ClaimStatus::Unresolved,
                        },
                        confidence: finite(c.confidence),
                    })
                    .collect(),
                edges: g
                    .edges
                    .into_iter()
                    .map(|e| Edge {
                        from_claim_id: e.from_claim_id,
                        to_evidence_id: e.to_evidence_id,
                        relation: match e.relation {
                            wit::Relation::Supports => Relation::Supports,
                            wit::Relation::Contradicts => Relation::Contradicts,
                            wit::Relation::RequiresFollowup => Relation::RequiresFollowup,
                        },
                        confidence: finite(e.confidence),
                    })
                    .collect(),
                facets: g
                    .facets
                    .into_iter()
                    .map(|f| FacetSummary {
                        facet: f.facet.into(),
                        claim_count: f.claim_count,
                        supported_count: f.supported_count,
                        conflicted_count: f.conflicted_count,
                        unresolved_count: f.unresolved_count,
                        coverage_status: match f.coverage_status {
                            wit::CoverageStatus::Covered => CoverageStatus::Covered,
                            wit::CoverageStatus::Partial => CoverageStatus::Partial,
                            wit::CoverageStatus::Missing => CoverageStatus::Missing,
                        },
                    })
                    .collect(),
            }),
            Err(e) => Err(self.call_error(slot, e)),
        })
    }
}

/// JSON has no NaN or infinity: a component's odd number becomes 0.
fn finite(x: f64) -> f64 {
    if x.is_finite() { x } else { 0.0 }
}
