//! Comparison queries (`A と B の違い`, `A vs B`, `diferencia entre A y B`):
//! one side often has more matching text than the other and crowds it out
//! of the top. Each side ([`kura_text::compare::sides`]) is searched on its
//! own; its best sections join the pool, and after the late rerank the best
//! of each side is moved up so that every side is in the top
//! `sides + 1` (the query's own best stays first).

use std::collections::HashSet;

use super::first::{Exclude, Pool};
use super::output::{Cand, Key};
use super::{Request, signals, sort};
use crate::Manuals;
use crate::error::Result;

/// Sections looked at per side.
const SIDE_FETCH: usize = 20;

/// Each side's best section, in the order of the query.
pub(super) struct Sides {
    pub names: Vec<String>,
    best: Vec<Key>,
}

impl Manuals {
    /// Search each side of a comparison query; its best section joins the
    /// pool (at the pool's last analysed score: the rerank and
    /// [`Sides::interleave`] place it).
    pub(super) fn compare_sides(
        &self,
        req: &Request,
        exclude: &Exclude,
        pool: &mut Pool,
    ) -> Result<Sides> {
        let names = crate::text::compare::sides(&req.query);
        let mut best = Vec::new();
        if names.is_empty() {
            return Ok(Sides { names, best });
        }
        let scope = if pool.scope_expanded {
            None
        } else {
            req.manual_id.as_deref()
        };
        let known: HashSet<Key> = pool.cands.iter().map(Cand::key).collect();
        // New sections enter at the pool's last analysed score.
        let floor = pool
            .cands
            .iter()
            .take(super::SIGNAL_POOL)
            .map(|c| c.base)
            .reduce(f64::min)
            .unwrap_or(0.0);
        for side in &names {
            let (found, _) =
                self.gather(side, None, scope, SIDE_FETCH, exclude, &HashSet::new())?;
            let mut ranked = signals::score(side, &found, &self.find.signals, None, 1.0);
            sort(&mut ranked);
            let Some(top) = ranked.into_iter().next() else {
                continue;
            };
            let key = top.key();
            if !known.contains(&key) && !best.contains(&key) {
                // Its signals against the whole query, its score the floor.
                let scored = found.iter().find(|f| f.key() == key).and_then(|f| {
                    signals::score(
                        &req.query,
                        std::slice::from_ref(f),
                        &self.find.signals,
                        None,
                        1.0,
                    )
                    .pop()
                });
                if let Some(mut cand) = scored {
                    cand.base = floor;
                    cand.score = floor;
                    pool.cands.push(cand);
                }
            }
            best.push(key);
            pool.absorb(found);
        }
        sort(&mut pool.cands);
        Ok(Sides { names, best })
    }
}

impl Sides {
    /// Move each side's best section up to the top `i + 2` (side `i`), so
    /// every side is in the top `sides + 1`; a moved section's score lies
    /// between its new neighbours'. Sorting again can undo it (ties): call
    /// it after every sort of the final list.
    pub fn interleave(&self, cands: &mut Vec<Cand>) {
        for (i, key) in self.best.iter().enumerate() {
            let target = i + 1;
            let Some(pos) = cands.iter().position(|c| &c.key() == key) else {
                continue;
            };
            if pos <= target || target >= cands.len() {
                continue;
            }
            let mut c = cands.remove(pos);
            let above = cands[target - 1].score;
            let below = cands[target].score;
            c.score = super::round(below + (above - below) / 2.0);
            cands.insert(target, c);
        }
    }
}
