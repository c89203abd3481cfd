//! A kura claim-graph component in Rust: one supported claim per evidence
//! (its first sentence), for the query's first facet.

wit_bindgen::generate!({ world: "claim-graph", path: "wit" });

use kura::plugins::types::{Claim, ClaimStatus, CoverageStatus, Edge, FacetSummary, Relation};

struct Component;

fn first_sentence(text: &str) -> String {
    let end = ["。", ". ", "\n"].iter().filter_map(|s| text.find(s)).min().unwrap_or(text.len());
    text[..end].trim().chars().take(200).collect()
}

impl Guest for Component {
    fn build(_query: String, query_facets: Vec<Facet>, evidences: Vec<Evidence>) -> Graph {
        let facet = query_facets.first().copied().unwrap_or(Facet::Unknown);
        let mut claims = Vec::new();
        let mut edges = Vec::new();
        for (i, e) in evidences.iter().enumerate() {
            let claim_id = format!("c{}", i + 1);
            claims.push(Claim {
                claim_id: claim_id.clone(),
                facet,
                text: first_sentence(&e.text),
                status: ClaimStatus::Supported,
                confidence: 0.5,
            });
            edges.push(Edge {
                from_claim_id: claim_id,
                to_evidence_id: e.evidence_id.clone(),
                relation: Relation::Supports,
                confidence: 0.5,
            });
        }
        let n = claims.len() as u32;
        let wanted = if query_facets.is_empty() { vec![facet] } else { query_facets };
        let facets = wanted
            .into_iter()
            .map(|f| FacetSummary {
                facet: f,
                claim_count: n,
                supported_count: n,
                conflicted_count: 0,
                unresolved_count: 0,
                coverage_status: if n > 0 { CoverageStatus::Covered } else { CoverageStatus::Missing },
            })
            .collect();
        Graph { claims, edges, facets }
    }
}

export!(Component);
