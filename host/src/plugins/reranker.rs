//! The reranker slot: late-interaction scores for the top candidates of a
//! manual search. A failure is reported to the caller, which then keeps the
//! first-stage order and says so.

use super::Plugins;
use super::bindings::types::Candidate as WitCandidate;
use crate::error::{Code, Error, Result};

/// One candidate section as the reranker sees it.
#[derive(Clone, Debug)]
pub struct RerankCandidate<'a> {
    pub id: String,
    pub heading: &'a str,
    pub text: &'a str,
    pub score: f64,
}

impl Plugins {
    /// One score per candidate, in the order given; `None` when no reranker
    /// is loaded.
    pub fn rerank(
        &self,
        query: &str,
        candidates: &[RerankCandidate<'_>],
    ) -> Option<Result<Vec<f64>>> {
        let slot = self.reranker.as_ref()?;
        let _busy = self.busy();
        let mut store = self.store(slot.name);
        let list: Vec<WitCandidate> = candidates
            .iter()
            .map(|c| WitCandidate {
                id: c.id.clone(),
                heading_path: c.heading.to_owned(),
                text: c.text.to_owned(),
                score: c.score,
            })
            .collect();
        let outcome = slot
            .pre
            .instantiate(&mut store)
            .and_then(|inst| inst.call_rerank(&mut store, query, &list));
        Some(match outcome {
            Ok(scores) if scores.len() == candidates.len() => Ok(scores
                .into_iter()
                .map(|s| if s.is_finite() { s } else { 0.0 })
                .collect()),
            Ok(scores) => Err(Error::new(
                Code::PluginFailed,
                format!(
                    "the reranker returned {} scores for {} candidates",
                    scores.len(),
                    candidates.len()
                ),
            )
            .with("plugin", slot.name)),
            Err(e) => Err(self.call_error(slot, e)),
        })
    }
}
