//! What in a query is one thing, beyond its separate terms: its long CJK
//! words (`最大送信回数`, indexed as five bigrams that BM25 scores one by one,
//! wherever they are) and the facet cue words that stand alone (`条件`,
//! `対象`), which say what kind of answer is wanted rather than what it is
//! about. Search uses the first to prefer a section holding the word as is
//! over one holding its bigrams scattered, and the second to keep cue words
//! from outweighing the topic.

use std::collections::HashSet;

use crate::facet::Facet;
use crate::normalize;
use crate::tokenize::{self, is_cjk};

/// A CJK word this long (in characters) or longer is a [`Run`]: three bigrams
/// or more, which scattered can match many unrelated sections.
pub const RUN_CHARS: usize = 4;

/// A word of the query that a section should hold contiguously.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Run {
    /// The word as the [`crate::Folded`] form of a text holds it.
    pub text: String,
    /// Its index terms (bigrams), in order.
    pub terms: Vec<String>,
}

fn is_kana(c: char) -> bool {
    ('\u{3040}'..='\u{309F}').contains(&c)
}

/// Kanji and katakana (a word's letters), not hiragana (particles and
/// inflections end a word).
pub(crate) fn is_word_cjk(c: char) -> bool {
    is_cjk(c) && !is_kana(c)
}

/// The query's kanji/katakana words, in order (normalised), each once.
fn cjk_words(query: &str) -> Vec<String> {
    let norm = normalize(query);
    let mut words: Vec<String> = Vec::new();
    let mut cur = String::new();
    for c in norm.chars().chain(std::iter::once(' ')) {
        if is_word_cjk(c) {
            cur.push(c);
        } else if !cur.is_empty() {
            if !words.contains(&cur) {
                words.push(cur.clone());
            }
            cur.clear();
        }
    }
    words
}

/// The query's long CJK words ([`RUN_CHARS`] characters or more), except a
/// word that is a facet cue.
pub fn runs(query: &str) -> Vec<Run> {
    cjk_words(query)
        .into_iter()
        .filter(|w| w.chars().count() >= RUN_CHARS && !is_cue(w))
        .map(|w| Run {
            terms: tokenize::query_terms(&w),
            text: w,
        })
        .collect()
}

fn is_cue(word: &str) -> bool {
    Facet::ALL.iter().any(|f| f.cues().contains(&word))
}

/// The query's terms that come only from cue words standing alone: a
/// kanji/katakana word that is a cue as a whole (`条件` in `条件 最大送信回数`,
/// not `手順` in `障害復旧手順`), or a Latin word that occurs only inside a cue
/// phrase (`how to`). Empty when nothing else is left: then the cues are
/// the topic.
pub fn cue_terms(query: &str) -> HashSet<String> {
    let mut cue = HashSet::new();
    for w in cjk_words(query) {
        if is_cue(&w) {
            cue.extend(tokenize::query_terms(&w));
        }
    }
    let plain = crate::plain(query);
    let topic = crate::plain(&crate::facet::strip_cues(query));
    for f in Facet::ALL {
        for c in f.cues().iter().filter(|c| c.is_ascii()) {
            if plain.contains(&format!(" {c} ")) {
                for word in c.split(' ') {
                    if !topic.contains(&format!(" {word} ")) {
                        cue.insert(word.to_owned());
                    }
                }
            }
        }
    }
    // A term also made by the rest of the query is the topic's too.
    let rest: HashSet<String> = tokenize::query_terms(query)
        .into_iter()
        .filter(|t| !cue.contains(t))
        .collect();
    if rest.is_empty() {
        return HashSet::new();
    }
    cue
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_long_compound_is_one_run_and_its_cue_words_are_not() {
        let r = runs("条件 最大送信回数 対象");
        assert_eq!(r.len(), 1);
        assert_eq!(r[0].text, "最大送信回数");
        assert_eq!(r[0].terms, ["最大", "大送", "送信", "信回", "回数"]);
        let cues = cue_terms("条件 最大送信回数 対象");
        assert!(cues.contains("条件") && cues.contains("対象"));
        assert!(!cues.contains("最大"));
    }

    #[test]
    fn a_cue_inside_a_compound_is_the_topic() {
        // `手順` is a procedure cue, but here it is part of the word.
        assert_eq!(runs("障害復旧手順の条件")[0].text, "障害復旧手順");
        let cues = cue_terms("障害復旧手順の条件");
        assert!(cues.contains("条件"));
        assert!(!cues.contains("手順"));
    }

    #[test]
    fn hiragana_ends_a_run_and_short_words_are_not_runs() {
        assert!(runs("設定の方法").is_empty());
        let r = runs("認証モジュールを使うには");
        assert_eq!(r[0].text, "認証モジュール");
        assert!(runs("how to install").is_empty());
    }

    #[test]
    fn latin_cue_words_only_inside_a_cue() {
        let cues = cue_terms("how to reset the router");
        assert!(cues.contains("how"), "{cues:?}");
        assert!(!cues.contains("reset") && !cues.contains("router"));
    }

    #[test]
    fn a_query_of_cues_alone_keeps_them() {
        assert!(cue_terms("条件").is_empty());
        assert!(cue_terms("手順 対象").is_empty());
    }
}
