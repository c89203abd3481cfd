//! Late-interaction scoring over `kura-text` tokens.

use std::collections::HashSet;

use kura_text::tokenize::{content_terms, is_cjk, tokens};

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

/// The score of one section for the given query tokens, in [0, 1].
pub fn score(query: &[String], section: Section<'_>) -> f64 {
    if query.is_empty() {
        return 0.0;
    }
    let mut own: HashSet<String> = HashSet::new();
    for t in tokens(section.heading)
        .into_iter()
        .chain(tokens(section.text))
    {
        own.insert(t.text);
    }
    // Trigrams of the section's longer words, computed once and only when a
    // query token has no exact match.
    let mut words: Option<Vec<(usize, Vec<[char; 3]>)>> = None;
    let mut total = 0.0;
    for q in query {
        if own.contains(q) {
            total += 1.0;
            continue;
        }
        if !is_word(q) {
            continue;
        }
        let words = words.get_or_insert_with(|| {
            own.iter()
                .filter(|w| is_word(w))
                .map(|w| (w.chars().count(), trigrams(w)))
                .collect()
        });
        let qn = q.chars().count();
        let qt = trigrams(q);
        let best = words
            .iter()
            // Dice cannot reach MIN_DICE when one word is far longer.
            .filter(|(n, _)| n * 3 >= qn && qn * 3 >= *n)
            .map(|(_, t)| dice(&qt, t))
            .fold(0.0, f64::max);
        if best >= MIN_DICE {
            total += PARTIAL * best;
        }
    }
    total / query.len() as f64
}

/// One score per section, in the order given.
pub fn rerank(query: &str, sections: &[Section<'_>]) -> Vec<f64> {
    let q = content_terms(query);
    sections.iter().map(|s| score(&q, *s)).collect()
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
    fn score_is_the_mean_over_query_tokens() {
        let s = rerank("computed zebra", &[sec("Computed", "cached")]);
        assert_eq!(s, [0.5]);
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
