//! Stage 3a, the late rerank: the reranker component scores the best
//! [`RERANK_TOP`] candidates (heading path led by the file's title, the first
//! characters of the text); its score in [0, 1] is added to the first-stage
//! score (signal `late_rerank`).

use std::collections::HashMap;
use std::time::Instant;

use super::output::{Cand, Key, StageUse};
use super::{PLUGIN_TEXT_CHARS, clip, sort};
use crate::domain::search::blend;
use crate::index::Hit;
use crate::plugins::{RerankCandidate, Reranked};
use crate::{Manuals, name};

/// Candidates the reranker sees.
pub(super) const RERANK_TOP: usize = 16;
/// Weight of the reranker's score (in [0, 1]) added to the first-stage score.
const RERANK_WEIGHT: f64 = 1.0;

/// How the late rerank went, and why not when it could not run.
pub(super) struct Rerank {
    pub used: StageUse,
    pub warning: Option<String>,
}

impl Manuals {
    /// Rerank the best candidates of `cands` (sorted again after).
    pub(super) fn rerank(
        &self,
        query: &str,
        cands: &mut [Cand],
        texts: &HashMap<Key, &Hit>,
    ) -> Rerank {
        let done = |used, warning| Rerank { used, warning };
        if !self.find.late_rerank {
            return done(StageUse::Disabled, None);
        }
        sort(cands);
        let top = cands.len().min(RERANK_TOP);
        if top == 0 {
            return done(StageUse::NotNeeded, None);
        }
        // The file's title leads the heading path, as in the signals.
        let headings: Vec<String> = cands[..top]
            .iter()
            .map(|c| {
                let heading = texts.get(&c.key()).map_or("", |h| h.heading.as_str());
                let title = name::title(&format!("{}/{}", c.manual_id, c.path));
                format!("{title} > {heading}")
            })
            .collect();
        let list: Vec<RerankCandidate<'_>> = cands[..top]
            .iter()
            .zip(&headings)
            .map(|(c, heading)| {
                let hit = texts.get(&c.key());
                RerankCandidate {
                    id: format!("{}/{}#{}", c.manual_id, c.path, c.start_line),
                    heading,
                    text: hit.map_or("", |h| clip(&h.body, PLUGIN_TEXT_CHARS)),
                    score: c.score,
                }
            })
            .collect();
        let t = Instant::now();
        let scored = self.plugins.rerank(query, &list);
        tracing::debug!(target: "kura::timing", "reranker call {:.2}ms for {}", t.elapsed().as_secs_f64() * 1e3, list.len());
        let kept = "late rerank skipped, first-stage order kept";
        match scored {
            None => done(StageUse::Disabled, None),
            Some(Reranked::Failed(e)) => {
                done(StageUse::Failed, Some(format!("{kept}: {}", e.message)))
            }
            Some(Reranked::Pending) => done(
                StageUse::Pending,
                Some(format!("{kept}: the reranker component is still compiling")),
            ),
            Some(Reranked::Scores(scores)) => {
                blend(cands, &scores[..scores.len().min(top)], RERANK_WEIGHT);
                sort(cands);
                done(StageUse::Applied, None)
            }
        }
    }
}
