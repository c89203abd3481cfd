//! The reranker slot: late-interaction scores for the top candidates of a
//! manual search. The contract (wit/worlds.wit): one score per candidate,
//! in the order given, in [0, 1]. The host contains what breaks it: a
//! NaN, an infinity or a negative score counts as 0, a score above 1 as 1,
//! and a list of the wrong length fails the call (the search then keeps
//! its first-stage order and says so).

use super::bindings::types::Candidate as WitCandidate;
use super::slot::NotReady;
use super::{Plugins, RERANK_WAIT, ready};
use crate::error::{Code, Error};

/// One candidate section as the reranker sees it.
#[derive(Clone, Debug)]
pub struct RerankCandidate<'a> {
    pub id: String,
    pub heading: &'a str,
    pub text: &'a str,
    pub score: f64,
}

impl From<&RerankCandidate<'_>> for WitCandidate {
    fn from(c: &RerankCandidate<'_>) -> WitCandidate {
        WitCandidate {
            id: c.id.clone(),
            heading_path: c.heading.to_owned(),
            text: c.text.to_owned(),
            score: c.score,
        }
    }
}

/// What a rerank came to.
#[derive(Debug)]
pub enum Reranked {
    /// One score in [0, 1] per candidate.
    Scores(Vec<f64>),
    /// The component is still compiling (a first start after a change).
    Pending,
    Failed(Error),
}

/// A component's score as the host uses it.
pub fn contain(score: f64) -> f64 {
    if score.is_nan() {
        0.0
    } else {
        score.clamp(0.0, 1.0)
    }
}

impl Plugins {
    /// Rerank `candidates`; `None` when no reranker is loaded.
    pub fn rerank(&self, query: &str, candidates: &[RerankCandidate<'_>]) -> Option<Reranked> {
        let cell = self.reranker.as_ref()?;
        let loaded = match cell.get(RERANK_WAIT) {
            Ok(l) => l,
            Err(NotReady::Loading) => return Some(Reranked::Pending),
            Err(NotReady::Failed(_)) => {
                return Some(Reranked::Failed(
                    ready(cell, std::time::Duration::ZERO).err()?,
                ));
            }
        };
        let list: Vec<WitCandidate> = candidates.iter().map(WitCandidate::from).collect();
        let outcome = self.runtime.call(cell, &loaded, |store, pre| {
            pre.instantiate(&mut *store)?
                .call_rerank(&mut *store, query, &list)
        });
        Some(match outcome {
            Ok(scores) if scores.len() == candidates.len() => {
                Reranked::Scores(scores.into_iter().map(contain).collect())
            }
            Ok(scores) => Reranked::Failed(
                Error::new(
                    Code::PluginFailed,
                    format!(
                        "the reranker plugin failed: it returned {} scores for {} candidates",
                        scores.len(),
                        candidates.len()
                    ),
                )
                .with("plugin", cell.slot.name()),
            ),
            Err(e) => Reranked::Failed(e),
        })
    }
}

#[cfg(test)]
mod tests {
    #[test]
    fn scores_outside_the_contract_are_contained() {
        use super::contain;
        assert_eq!(contain(f64::NAN), 0.0);
        assert_eq!(contain(-3.0), 0.0);
        assert_eq!(contain(f64::NEG_INFINITY), 0.0);
        assert_eq!(contain(f64::INFINITY), 1.0);
        assert_eq!(contain(7.5), 1.0);
        assert_eq!(contain(0.25), 0.25);
    }
}
