//! The default `claim-graph` component: claims, evidence edges and facet
//! coverage for the evidence of a manual search, by the rules documented in
//! [`graph`] (plain Rust, unit-tested natively). The wit-bindgen glue below
//! converts records and is compiled for wasm only.

pub mod graph;

#[cfg(target_arch = "wasm32")]
mod glue {
    use super::graph;
    use kura_text::facet::Facet as F;

    wit_bindgen::generate!({
        world: "claim-graph",
        path: "../../wit",
    });

    use kura::plugins::types::{Claim, ClaimStatus, CoverageStatus, Edge, FacetSummary, Relation};

    fn facet_in(f: Facet) -> F {
        match f {
            Facet::Definition => F::Definition,
            Facet::Procedure => F::Procedure,
            Facet::Eligibility => F::Eligibility,
            Facet::Exceptions => F::Exceptions,
            Facet::Compare => F::Compare,
            Facet::Unknown => F::Unknown,
        }
    }

    fn facet_out(f: F) -> Facet {
        match f {
            F::Definition => Facet::Definition,
            F::Procedure => Facet::Procedure,
            F::Eligibility => Facet::Eligibility,
            F::Exceptions => Facet::Exceptions,
            F::Compare => Facet::Compare,
            F::Unknown => Facet::Unknown,
        }
    }

    struct Component;

    impl Guest for Component {
        fn build(query: String, query_facets: Vec<Facet>, evidences: Vec<Evidence>) -> Graph {
            let facets: Vec<F> = query_facets.into_iter().map(facet_in).collect();
            let evidences: Vec<graph::Evidence> = evidences
                .into_iter()
                .map(|e| graph::Evidence {
                    id: e.evidence_id,
                    heading: e.heading_path,
                    text: e.text,
                    score: e.score,
                })
                .collect();
            let g = graph::build(&query, &facets, &evidences);
            Graph {
                claims: g
                    .claims
                    .into_iter()
                    .map(|c| Claim {
                        claim_id: c.id,
                        facet: facet_out(c.facet),
                        text: c.text,
                        status: match c.status {
                            graph::Status::Supported => ClaimStatus::Supported,
                            graph::Status::Conflicted => ClaimStatus::Conflicted,
                            graph::Status::Unresolved => ClaimStatus::Unresolved,
                        },
                        confidence: c.confidence,
                    })
                    .collect(),
                edges: g
                    .edges
                    .into_iter()
                    .map(|e| Edge {
                        from_claim_id: e.from_claim,
                        to_evidence_id: e.to_evidence,
                        relation: match e.relation {
                            graph::Relation::Supports => Relation::Supports,
                            graph::Relation::Contradicts => Relation::Contradicts,
                            graph::Relation::RequiresFollowup => Relation::RequiresFollowup,
                        },
                        confidence: e.confidence,
                    })
                    .collect(),
                facets: g
                    .facets
                    .into_iter()
                    .map(|f| FacetSummary {
                        facet: facet_out(f.facet),
                        claim_count: f.claims,
                        supported_count: f.supported,
                        conflicted_count: f.conflicted,
                        unresolved_count: f.unresolved,
                        coverage_status: match f.coverage {
                            graph::Coverage::Covered => CoverageStatus::Covered,
                            graph::Coverage::Partial => CoverageStatus::Partial,
                            graph::Coverage::Missing => CoverageStatus::Missing,
                        },
                    })
                    .collect(),
            }
        }
    }

    export!(Component);
}
