//! A question asked several ways (`queries`, issue 55): the caller's other
//! phrasings are each searched on their own and the rankings fused by
//! reciprocal rank (docs/decisions.md "Several phrasings, fused by kura").

use std::collections::HashMap;
use std::hash::Hash;

use crate::text::tokenize::query_terms;

/// Reciprocal rank fusion's usual constant: an item ranked `r` (from 1) in
/// one phrasing's list adds `1 / (k + r)`. The larger `k`, the more an item
/// counts for being in many lists and the less for its place in each.
pub const K: f64 = 60.0;

/// A query's terms, sorted: word order, case, width and punctuation do not
/// make a different query.
pub fn sorted_terms(q: &str) -> Vec<String> {
    let mut terms = query_terms(q);
    terms.sort();
    terms
}

/// The phrasings whose terms differ from the query's and from each other's
/// (the same words asked twice would count twice in the fusion).
pub fn distinct(query: &str, phrasings: Vec<String>) -> Vec<String> {
    let mut seen = vec![sorted_terms(query)];
    let mut out = Vec::new();
    for p in phrasings {
        let t = sorted_terms(&p);
        if !t.is_empty() && !seen.contains(&t) {
            seen.push(t);
            out.push(p);
        }
    }
    out
}

/// Several rankings (each best first) fused: every item any of them holds,
/// once, with its fused score — the sum of `1 / (k + rank)` over the lists,
/// scaled so that an item first in every list scores 1 — best first (ties
/// in the order first met). An item keeps the instance of the list that
/// ranked it highest (the first list's on a tie).
pub fn fuse<T, Q: Eq + Hash>(lists: Vec<Vec<T>>, k: f64, key: impl Fn(&T) -> Q) -> Vec<(T, f64)> {
    let n = lists.len().max(1) as f64;
    // key → (score, best rank, position in `out`)
    let mut seen: HashMap<Q, (f64, usize, usize)> = HashMap::new();
    let mut out: Vec<(T, f64)> = Vec::new();
    for list in lists {
        for (rank, item) in list.into_iter().enumerate() {
            let add = (k + 1.0) / (k + rank as f64 + 1.0) / n;
            match seen.get_mut(&key(&item)) {
                Some((score, best, at)) => {
                    *score += add;
                    if rank < *best {
                        *best = rank;
                        out[*at].0 = item;
                    }
                }
                None => {
                    seen.insert(key(&item), (add, rank, out.len()));
                    out.push((item, 0.0));
                }
            }
        }
    }
    for (score, _, at) in seen.into_values() {
        out[at].1 = score;
    }
    // Stable: ties keep the order first met.
    out.sort_by(|a, b| b.1.total_cmp(&a.1));
    out
}

/// Several rankings of sections fused by the documents that hold them:
/// each document scored by reciprocal rank (constant [`K`]) of its place among each
/// ranking's documents (the place of its best section), its sections (each
/// once, as the ranking that placed it highest has it) following it in
/// their best order, each with its document's fused score.
pub fn fuse_by_document<T, Q: Eq + Hash + Clone, D: Eq + Hash + Clone>(
    lists: Vec<Vec<T>>,
    key: impl Fn(&T) -> Q,
    document: impl Fn(&T) -> D,
) -> Vec<(T, f64)> {
    let documents: Vec<Vec<D>> = lists
        .iter()
        .map(|l| {
            let mut seen = std::collections::HashSet::new();
            l.iter()
                .map(&document)
                .filter(|d| seen.insert(d.clone()))
                .collect()
        })
        .collect();
    let order: HashMap<D, (usize, f64)> = fuse(documents, K, D::clone)
        .into_iter()
        .enumerate()
        .map(|(i, (d, score))| (d, (i, score)))
        .collect();
    let mut sections = fuse(lists, K, key);
    // Stable: within a document, the sections keep their fused order.
    sections.sort_by_key(|(t, _)| order.get(&document(t)).map_or(usize::MAX, |o| o.0));
    sections
        .into_iter()
        .map(|(t, _)| {
            let score = order.get(&document(&t)).map_or(0.0, |o| o.1);
            (t, score)
        })
        .collect()
}

#[cfg(test)]
mod tests {
    use super::*;

    fn names(f: &[(&'static str, f64)]) -> Vec<&'static str> {
        f.iter().map(|(s, _)| *s).collect()
    }

    #[test]
    fn an_item_every_phrasing_ranks_well_comes_first() {
        let fused = fuse(
            vec![vec!["a", "b", "c"], vec!["b", "c"], vec!["d", "b"]],
            K,
            |s| *s,
        );
        // b: 2nd, 1st, 2nd; c: 3rd, 2nd; a and d: one 1st each.
        assert_eq!(names(&fused), ["b", "c", "a", "d"]);
    }

    #[test]
    fn a_small_k_lets_places_count_more_than_presence() {
        // a: 1st and 6th; b: 3rd and 3rd.
        let lists = || vec![vec!["a", "x", "b"], vec!["y", "z", "b", "p", "q", "a"]];
        assert_eq!(fuse(lists(), K, |s| *s)[0].0, "b");
        assert_eq!(fuse(lists(), 5.0, |s| *s)[0].0, "a");
    }

    #[test]
    fn one_list_keeps_its_order_and_its_first_scores_one() {
        let fused = fuse(vec![vec!["x", "y", "z"]], K, |s| *s);
        assert_eq!(names(&fused), ["x", "y", "z"]);
        assert_eq!(fused[0].1, 1.0);
    }

    #[test]
    fn an_item_keeps_the_instance_its_best_list_gave() {
        let fused = fuse(vec![vec![("k", 1), ("j", 1)], vec![("j", 2)]], K, |p| p.0);
        assert_eq!(fused[0].0, ("j", 2));
    }

    #[test]
    fn by_document_a_document_s_sections_follow_it() {
        // (document, section): a's sections rank 1st and 3rd, b's 2nd.
        let lists = vec![vec![("a", 1), ("b", 1), ("a", 2)], vec![("b", 1)]];
        let fused = fuse_by_document(lists, |s| *s, |s| s.0);
        let order: Vec<_> = fused.iter().map(|(s, _)| *s).collect();
        assert_eq!(order, [("b", 1), ("a", 1), ("a", 2)]);
        assert_eq!(fused[1].1, fused[2].1, "a section scores its document's");
    }

    #[test]
    fn a_phrasing_with_the_query_s_words_is_left_out() {
        let kept = distinct(
            "Computed caching",
            vec!["caching, computed!".into(), "watch".into(), "WATCH".into()],
        );
        assert_eq!(kept, ["watch"]);
    }
}
