//! Stages 1 and 3a for a question asked several ways (`queries`): each
//! phrasing runs the first stage and the late rerank with its own words, as
//! if it were asked alone, and the rankings are fused by reciprocal rank
//! (docs/decisions.md "Several phrasings, fused by kura"). The claim graph,
//! the comparison sides and the summary then work on the fused ranking with
//! the main query, once.

use rayon::prelude::*;

use super::first::{Exclude, Pool};
use super::output::{Cand, StageUse};
use super::rerank::{RERANK_TOP, Rerank};
use super::{Request, sort};
use crate::Manuals;
use crate::domain::search::phrasings;
use crate::error::Result;

impl Manuals {
    /// The first stage and the late rerank of the main query and of each
    /// phrasing, on both cores, fused. The rerank's outcome is the main
    /// query's.
    pub(super) fn fused_stage(&self, req: &Request, exclude: &Exclude) -> Result<(Pool, Rerank)> {
        let queries: Vec<&str> = std::iter::once(req.query.as_str())
            .chain(req.phrasings.iter().map(String::as_str))
            .collect();
        let ranked: Vec<Result<(Pool, Rerank)>> = queries
            .par_iter()
            .map(|q| {
                let one = Request {
                    query: (*q).to_owned(),
                    ..req.alone()
                };
                let mut pool = self.first_stage(&one, exclude)?;
                sort(&mut pool.cands);
                self.fill_top(&mut pool, RERANK_TOP);
                let texts = super::first::texts(&pool.found);
                let r = self.rerank(q, &mut pool.cands, &texts);
                sort(&mut pool.cands);
                Ok((pool, r))
            })
            .collect();
        let mut pools = Vec::with_capacity(ranked.len());
        let mut main = None;
        for r in ranked {
            let (pool, rerank) = r?;
            main.get_or_insert(rerank);
            pools.push(pool);
        }
        let rerank = main.unwrap_or(Rerank {
            used: StageUse::Skipped,
            warning: None,
        });
        Ok((fuse(pools), rerank))
    }
}

/// Reciprocal rank fusion's constant for sections. A pool holds every
/// candidate (up to `max_candidates`), so with the usual 60 a place barely
/// counts and a section merely present in the phrasings' pools outvotes the
/// one the question itself put first; 5 was the best of 1, 3, 5, 10, 20 and
/// 60 on the dev halves (docs/decisions.md "Several phrasings, fused by kura").
const SECTIONS_K: f64 = 5.0;

/// One pool from several, each sorted best first: every section any of
/// them found, scored by reciprocal rank fusion (a section first in every
/// list scores 1), keeping the candidate (signals, coverage) of the list
/// that ranked it highest. The first pool (the main query's) gives the
/// question's vector.
pub(super) fn fuse(pools: Vec<Pool>) -> Pool {
    let mut pools = pools.into_iter();
    let mut out = pools.next().expect("the main query's pool");
    let mut lists = vec![std::mem::take(&mut out.cands)];
    for p in pools {
        out.more |= p.more;
        out.scope_expanded |= p.scope_expanded;
        out.absorb(p.found);
        out.scanned.extend(p.scanned);
        lists.push(p.cands);
    }
    out.cands = phrasings::fuse(lists, SECTIONS_K, Cand::key)
        .into_iter()
        .map(|(mut c, score)| {
            (c.score, c.base) = (score, score);
            c
        })
        .collect();
    sort(&mut out.cands);
    out
}

#[cfg(test)]
mod tests {
    use super::*;
    use std::collections::HashSet;

    fn cand(path: &str) -> Cand {
        Cand {
            manual_id: "m".into(),
            path: path.into(),
            start_line: 1,
            heading: String::new(),
            score: 1.0,
            base: 1.0,
            signals: Vec::new(),
            coverage: 0.0,
            snippet: None,
        }
    }

    fn pool(paths: &[&str]) -> Pool {
        Pool {
            found: Vec::new(),
            cands: paths.iter().map(|p| cand(p)).collect(),
            more: false,
            scope_expanded: false,
            scanned: HashSet::new(),
            question: None,
        }
    }

    fn order(p: &Pool) -> Vec<&str> {
        p.cands.iter().map(|c| c.path.as_str()).collect()
    }

    #[test]
    fn a_section_only_a_phrasing_found_joins_the_ranking() {
        let fused = fuse(vec![pool(&["a.md"]), pool(&["q.md"])]);
        assert_eq!(order(&fused), ["a.md", "q.md"]);
        // The fused score is also the base a later blend starts from.
        assert!(
            fused
                .cands
                .iter()
                .all(|c| c.base == c.score && c.score == 0.5)
        );
    }
}
