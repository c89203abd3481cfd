//! Stage 3b, the claim graph: the best [`EVIDENCE_MAX`] candidates become
//! evidence e1..eN (with a snippet and a digest of their text) and the
//! claim-graph component builds claims, edges and facet coverage from them.

use std::collections::HashMap;

use super::output::{Cand, Key};
use super::{PLUGIN_TEXT_CHARS, clip};
use crate::Manuals;
use crate::index::Hit;
use crate::plugins::claim_graph::{Graph, GraphEvidence};
use crate::text::facet::Facet;

/// Candidates that become evidence for the claim graph.
pub(super) const EVIDENCE_MAX: usize = 8;
/// Characters of a section shown in `integrated_top`.
const SNIPPET_CHARS: usize = 200;

/// The evidence and the graph built from it.
pub(super) struct Integration {
    /// The first `evidence` candidates are the evidence.
    pub evidence: usize,
    /// None when disabled or failed.
    pub graph: Option<Graph>,
    /// Why the component failed.
    pub warning: Option<String>,
}

impl Manuals {
    /// Evidence and claim graph for the ranked `cands`.
    pub(super) fn integrate(
        &self,
        query: &str,
        facets: &[Facet],
        cands: &mut [Cand],
        texts: &HashMap<Key, &Hit>,
    ) -> Integration {
        let n = cands.len().min(EVIDENCE_MAX);
        for c in cands[..n].iter_mut() {
            let body = texts.get(&c.key()).map_or("", |h| h.body.as_str());
            c.snippet = Some((
                clip(body, SNIPPET_CHARS).to_owned(),
                blake3::hash(body.as_bytes()).to_hex()[..16].to_owned(),
            ));
        }
        let done = |graph, warning| Integration {
            evidence: n,
            graph,
            warning,
        };
        if !self.find.claim_graph {
            return done(None, None);
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
        match self.plugins.claim_graph(query, facets, &evidences) {
            None => done(None, None),
            Some(Ok(g)) => done(Some(g), None),
            Some(Err(e)) => done(None, Some(format!("claim graph not built: {}", e.message))),
        }
    }
}
