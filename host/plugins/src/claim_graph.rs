//! The claim-graph slot: claims, evidence edges and facet coverage for the
//! evidence of a manual search, converted to the host's serialisable types
//! (the shapes of seed 004's `claim_graph`). The host contains a graph
//! that breaks the contract (wit/worlds.wit): an edge from a claim that is
//! not in the graph or to an evidence id that was not offered is dropped,
//! a claim id seen twice keeps its first claim, confidences are clamped to
//! [0, 1] (NaN is 0), texts are cut to [`TEXT_MAX_CHARS`] and at most
//! [`CLAIMS_MAX`] claims and [`EDGES_MAX`] edges are kept.

use schemars::JsonSchema;
use serde::Serialize;

use std::collections::HashSet;

use super::bindings::types as wit;
use super::{LOAD_WAIT, Plugins, ready};
use crate::error::Result;

pub const CLAIMS_MAX: usize = 200;
pub const EDGES_MAX: usize = 1000;
pub const TEXT_MAX_CHARS: usize = 1000;
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
        let cell = self.claim_graph.as_ref()?;
        let loaded = match ready(cell, LOAD_WAIT) {
            Ok(l) => l,
            Err(e) => return Some(Err(e)),
        };
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
        let outcome = self.runtime.call(cell, &loaded, |store, pre| {
            pre.instantiate(&mut *store)?
                .call_build(&mut *store, query, &facets, &list)
        });
        let offered: HashSet<&str> = evidences.iter().map(|e| e.evidence_id.as_str()).collect();
        Some(outcome.map(|g| contain(g, &offered)))
    }
}

/// The graph as the host serves it: the contract enforced.
fn contain(g: wit::Graph, offered: &HashSet<&str>) -> Graph {
    let mut ids = HashSet::new();
    let claims: Vec<Claim> = g
        .claims
        .into_iter()
        .filter(|c| ids.insert(c.claim_id.clone()))
        .take(CLAIMS_MAX)
        .map(|c| Claim {
            claim_id: c.claim_id,
            facet: c.facet.into(),
            text: c.text.chars().take(TEXT_MAX_CHARS).collect(),
            status: match c.status {
                wit::ClaimStatus::Supported => ClaimStatus::Supported,
                wit::ClaimStatus::Conflicted => ClaimStatus::Conflicted,
                wit::ClaimStatus::Unresolved => ClaimStatus::Unresolved,
            },
            confidence: unit(c.confidence),
        })
        .collect();
    let kept: HashSet<&str> = claims.iter().map(|c| c.claim_id.as_str()).collect();
    let edges = g
        .edges
        .into_iter()
        .filter(|e| {
            kept.contains(e.from_claim_id.as_str()) && offered.contains(e.to_evidence_id.as_str())
        })
        .take(EDGES_MAX)
        .map(|e| Edge {
            from_claim_id: e.from_claim_id,
            to_evidence_id: e.to_evidence_id,
            relation: match e.relation {
                wit::Relation::Supports => Relation::Supports,
                wit::Relation::Contradicts => Relation::Contradicts,
                wit::Relation::RequiresFollowup => Relation::RequiresFollowup,
            },
            confidence: unit(e.confidence),
        })
        .collect();
    let facets = g
        .facets
        .into_iter()
        .take(16)
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
        .collect();
    Graph {
        claims,
        edges,
        facets,
    }
}

/// A confidence in [0, 1]; JSON has no NaN, so NaN is 0.
fn unit(x: f64) -> f64 {
    if x.is_nan() { 0.0 } else { x.clamp(0.0, 1.0) }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn claim(id: &str, confidence: f64) -> wit::Claim {
        wit::Claim {
            claim_id: id.into(),
            facet: wit::Facet::Definition,
            text: "t".into(),
            status: wit::ClaimStatus::Supported,
            confidence,
        }
    }

    fn edge(from: &str, to: &str) -> wit::Edge {
        wit::Edge {
            from_claim_id: from.into(),
            to_evidence_id: to.into(),
            relation: wit::Relation::Supports,
            confidence: f64::NAN,
        }
    }

    #[test]
    fn edges_to_ids_that_do_not_exist_are_dropped() {
        let g = wit::Graph {
            claims: vec![claim("c1", 7.0), claim("c1", 0.5), claim("c2", f64::NAN)],
            edges: vec![
                edge("c1", "e1"),
                edge("c1", "e9"),
                edge("c9", "e1"),
                edge("c2", "e2"),
            ],
            facets: vec![],
        };
        let offered: HashSet<&str> = ["e1", "e2"].into_iter().collect();
        let out = contain(g, &offered);
        assert_eq!(out.claims.len(), 2);
        assert_eq!(out.claims[0].confidence, 1.0);
        assert_eq!(out.claims[1].confidence, 0.0);
        let pairs: Vec<(&str, &str)> = out
            .edges
            .iter()
            .map(|e| (e.from_claim_id.as_str(), e.to_evidence_id.as_str()))
            .collect();
        assert_eq!(pairs, [("c1", "e1"), ("c2", "e2")]);
        assert!(out.edges.iter().all(|e| e.confidence == 0.0));
    }
}
