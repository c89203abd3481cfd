//! Late-interaction scoring over `kura-text` tokens.

use std::collections::HashSet;

use kura_text::Folded;
use kura_text::tokenize::{content_units, is_cjk};

/// Credit for a Latin-script word that is not the query token but shares
/// character trigrams with it (`watcher`/`watchers`), times the Dice overlap.
const PARTIAL: f64 = 0.8;
/// Below this Dice overlap a word is not a variant of the query token.
const MIN_DICE: f64 = 0.5;
/// Shorter words get no partial credit: their trigrams are too few to tell.
const MIN_PARTIAL_CHARS: usize = 4;

/// One candidate section.
#[derive(Clone, Copy, Debug)]
pub struct Section<'a> {
    pub heading: &'a str,
    pub text: &'a str,
}

fn trigrams(word: &str) -> Vec<[char; 3]> {
    let chars: Vec<char> = word.chars().collect();
    let mut out: Vec<[char; 3]> = chars.windows(3).map(|w| [w[0], w[1], w[2]]).collect();
    out.sort_unstable();
    out.dedup();
    out
}

/// Dice coefficient of two sorted, deduplicated trigram lists.
fn dice(a: &[[char; 3]], b: &[[char; 3]]) -> f64 {
    if a.is_empty() || b.is_empty() {
        return 0.0;
    }
    let (mut i, mut j, mut common) = (0, 0, 0usize);
    while i < a.len() && j < b.len() {
        match a[i].cmp(&b[j]) {
            std::cmp::Ordering::Less => i += 1,
            std::cmp::Ordering::Greater => j += 1,
            std::cmp::Ordering::Equal => {
                common += 1;
                i += 1;
                j += 1;
            }
        }
    }
    2.0 * common as f64 / (a.len() + b.len()) as f64
}

fn is_word(t: &str) -> bool {
    t.chars().count() >= MIN_PARTIAL_CHARS && !t.chars().any(is_cjk)
}

/// For each query token, its best match in the section, in [0, 1].
pub fn matches(query: &[String], section: Section<'_>) -> Vec<f64> {
    let head = Folded::new(section.heading);
    let body = Folded::new(section.text);
    // Trigrams of the section's longer words, computed once and only when a
    // query token has no exact match.
    // The section's distinct longer words, listed once and only when a query
    // token has no exact match; trigrams are computed only for the words
    // that could be a variant (same first letter, comparable length).
    let mut words: Option<Vec<(char, usize, &str)>> = None;
    let mut out = Vec::with_capacity(query.len());
    for q in query {
        if head.has_term(q) || body.has_term(q) {
            out.push(1.0);
            continue;
        }
        if !is_word(q) {
            out.push(0.0);
            continue;
        }
        let words = words.get_or_insert_with(|| {
            let mut seen = HashSet::new();
            head.as_str()
                .split(|c: char| !c.is_alphanumeric() || is_cjk(c))
                .chain(
                    body.as_str()
                        .split(|c: char| !c.is_alphanumeric() || is_cjk(c)),
                )
                .filter(|w| is_word(w) && seen.insert(*w))
                .filter_map(|w| Some((w.chars().next()?, w.chars().count(), w)))
                .collect()
        });
        let qn = q.chars().count();
        let first = q.chars().next();
        let qt = trigrams(q);
        let best = words
            .iter()
            // Dice cannot reach MIN_DICE when one word is far longer; word
            // variants (watcher/watchers, computada/computadas) share their start.
            .filter(|(c, n, _)| Some(*c) == first && n * 3 >= qn && qn * 3 >= *n)
            .map(|(_, _, w)| dice(&qt, &trigrams(w)))
            .fold(0.0, f64::max);
        out.push(if best >= MIN_DICE {
            PARTIAL * best
        } else {
            0.0
        });
    }
    out
}

/// One score per section, in the order given: the weighted mean over the
/// query tokens of their best match. A token's weight is its inverse
/// document frequency among these candidates (a word every candidate has
/// tells them apart least), shared among the bigrams of one CJK word so that
/// a long katakana word counts as one word.
pub fn rerank(query: &str, sections: &[Section<'_>]) -> Vec<f64> {
    let units = content_units(query);
    let mut tokens = Vec::new();
    let mut share = Vec::new();
    for u in &units {
        for t in u {
            tokens.push(t.clone());
            share.push(1.0 / u.len() as f64);
        }
    }
    if tokens.is_empty() {
        return vec![0.0; sections.len()];
    }
    let m: Vec<Vec<f64>> = sections.iter().map(|s| matches(&tokens, *s)).collect();
    let n = sections.len() as f64;
    let weights: Vec<f64> = (0..tokens.len())
        .map(|i| {
            let df = m.iter().filter(|row| row[i] >= 1.0).count() as f64;
            share[i] * (1.0 + (n + 1.0) / (df + 1.0)).ln()
        })
        .collect();
    let total: f64 = weights.iter().sum();
    m.iter()
        .map(|row| row.iter().zip(&weights).map(|(x, w)| x * w).sum::<f64>() / total)
        .collect()
}

#[cfg(test)]
mod tests {
    use super::*;

    fn sec<'a>(heading: &'a str, text: &'a str) -> Section<'a> {
        Section { heading, text }
    }

    #[test]
    fn every_query_token_found_scores_one() {
        let s = rerank(
            "computed caching",
            &[sec("Computed", "Computed values use caching.")],
        );
        assert_eq!(s, [1.0]);
    }

    #[test]
    fn score_is_a_weighted_mean_over_query_tokens() {
        let s = rerank("computed zebra", &[sec("Computed", "cached")]);
        assert!(s[0] > 0.3 && s[0] < 0.5, "{s:?}");
    }

    #[test]
    fn a_token_every_candidate_has_weighs_less() {
        let s = rerank(
            "vue teleport",
            &[
                sec("", "vue teleport"),
                sec("", "vue only"),
                sec("", "vue again"),
            ],
        );
        assert_eq!(s[0], 1.0);
        assert!(s[1] < 0.45, "a plain mean would give 0.5: {s:?}");
    }

    #[test]
    fn word_variants_get_partial_credit() {
        let s = rerank("watchers", &[sec("", "a watcher runs")])[0];
        assert!(s > 0.6 && s < 1.0, "{s}");
        let none = rerank("watchers", &[sec("", "a router runs")])[0];
        assert_eq!(none, 0.0);
    }

    #[test]
    fn japanese_sections_rank_by_matching_bigrams() {
        let s = rerank(
            "算出プロパティのキャッシュ",
            &[
                sec("算出プロパティ", "算出プロパティの結果はキャッシュされます"),
                sec("ウォッチャー", "状態の変化に反応します"),
            ],
        );
        assert!(s[0] > 0.9 && s[1] < 0.1, "{s:?}");
    }

    #[test]
    fn empty_inputs_score_zero() {
        assert_eq!(rerank("", &[sec("a", "b")]), [0.0]);
        assert!(rerank("x", &[]).is_empty());
    }
}
