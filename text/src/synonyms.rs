//! Query expansion from a synonym dictionary: the words of a query that a
//! dictionary group holds bring the group's other words into the search,
//! weighed below the query's own (the index decides how much).
//!
//! The dictionary is plain text, one group a line, its words separated by
//! commas; a word written `>word` is only ever an expansion, never a
//! trigger (a word that is ambiguous on its own, `リスト` being both a list
//! and a wrist). `#` starts a comment line. kura writes the Sudachi synonym
//! dictionary in this form when it installs it, and a user writes their own
//! per manual in the same form.

use std::collections::HashMap;

use crate::normalize;
use crate::phrase::is_word_cjk;
use crate::tokenize::is_cjk;

/// A trigger is looked for in a CJK query as a substring of at most this
/// many characters.
const MAX_CJK_CHARS: usize = 12;
/// Expansions a query takes at most (a long question would otherwise pull
/// in dozens of loosely related words).
pub const MAX_EXPANSIONS: usize = 12;

/// Groups of words that mean the same, and which words start an expansion.
#[derive(Clone, Debug, Default)]
pub struct Synonyms {
    groups: Vec<Vec<String>>,
    /// A trigger (normalised) and the groups it belongs to.
    triggers: HashMap<String, Vec<u32>>,
}

/// One word of the query and what it brings in.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Expansion {
    /// The word as found in the (normalised) query.
    pub word: String,
    /// Its synonyms (normalised), without the word itself.
    pub synonyms: Vec<String>,
}

/// A CJK trigger must have a kanji or katakana letter and two characters:
/// a lone character or a run of hiragana matches inside too many words.
fn cjk_trigger_ok(word: &str) -> bool {
    word.chars().count() >= 2 && word.chars().any(is_word_cjk)
}

impl Synonyms {
    /// Read a dictionary in kura's form (see the module comment). Lines it
    /// cannot use (a lone word, an empty one) are skipped.
    pub fn parse(text: &str) -> Synonyms {
        let mut s = Synonyms::default();
        for line in text.lines() {
            let line = line.trim();
            if line.is_empty() || line.starts_with('#') {
                continue;
            }
            let mut words = Vec::new();
            let mut triggers = Vec::new();
            for w in line.split(',') {
                let (only_target, w) = match w.trim().strip_prefix('>') {
                    Some(rest) => (true, rest.trim()),
                    None => (false, w.trim()),
                };
                let w = normalize(w);
                if w.is_empty() || words.contains(&w) {
                    continue;
                }
                if !only_target {
                    triggers.push(w.clone());
                }
                words.push(w);
            }
            s.add(words, triggers);
        }
        s
    }

    fn add(&mut self, words: Vec<String>, triggers: Vec<String>) {
        if words.len() < 2 {
            return;
        }
        let id = self.groups.len() as u32;
        for t in triggers {
            let ok = if t.chars().any(is_cjk) {
                cjk_trigger_ok(&t)
            } else {
                t.chars().count() >= 2
            };
            if ok {
                self.triggers.entry(t).or_default().push(id);
            }
        }
        self.groups.push(words);
    }

    pub fn groups(&self) -> usize {
        self.groups.len()
    }

    /// The triggers in `norm`, in order.
    fn found(&self, norm: &str) -> Vec<String> {
        let mut found = Vec::new();
        let mut latin = String::new();
        let chars: Vec<char> = norm.chars().collect();
        let mut i = 0;
        while i <= chars.len() {
            let c = chars.get(i).copied();
            if c.is_some_and(|c| c.is_alphanumeric() && !is_cjk(c)) {
                latin.extend(c);
                i += 1;
                continue;
            }
            if !latin.is_empty() {
                if self.triggers.contains_key(&latin) {
                    found.push(std::mem::take(&mut latin));
                }
                latin.clear();
            }
            if c.is_some_and(is_cjk) {
                let longest = (2..=MAX_CJK_CHARS.min(chars.len() - i))
                    .rev()
                    .map(|n| chars[i..i + n].iter().collect::<String>())
                    .find(|w| self.triggers.contains_key(w));
                if let Some(w) = longest {
                    i += w.chars().count();
                    found.push(w);
                    continue;
                }
            }
            i += 1;
        }
        found
    }
}

/// The query's words that trigger an expansion in any of `dicts`, with
/// their synonyms: Latin words whole, CJK words as the longest triggers
/// found in each run of CJK text (left to right, not overlapping). At most
/// [`MAX_EXPANSIONS`] synonyms in all, the query's own words left out.
pub fn expand(dicts: &[&Synonyms], query: &str) -> Vec<Expansion> {
    if dicts.iter().all(|d| d.triggers.is_empty()) {
        return Vec::new();
    }
    let norm = normalize(query);
    let mut out: Vec<Expansion> = Vec::new();
    let mut budget = MAX_EXPANSIONS;
    for d in dicts {
        for word in d.found(&norm) {
            let at = match out.iter().position(|e| e.word == word) {
                Some(at) => at,
                None => {
                    out.push(Expansion {
                        word: word.clone(),
                        synonyms: Vec::new(),
                    });
                    out.len() - 1
                }
            };
            for &g in &d.triggers[&word] {
                for w in &d.groups[g as usize] {
                    let e = &mut out[at];
                    if budget > 0
                        && *w != word
                        && !norm.contains(w.as_str())
                        && !e.synonyms.contains(w)
                    {
                        e.synonyms.push(w.clone());
                        budget -= 1;
                    }
                }
            }
        }
    }
    out.retain(|e| !e.synonyms.is_empty());
    out
}

#[cfg(test)]
mod tests {
    use super::*;

    const DICT: &str = "# test\n一覧表, >一覧, >リスト, list\n削除, デリート, delete, >消す\n手首, >リスト, >wrist\n";

    fn words(s: &Synonyms, q: &str) -> Vec<(String, Vec<String>)> {
        words_of(&[s], q)
    }

    fn words_of(d: &[&Synonyms], q: &str) -> Vec<(String, Vec<String>)> {
        expand(d, q)
            .into_iter()
            .map(|e| (e.word, e.synonyms))
            .collect()
    }

    #[test]
    fn a_trigger_brings_its_group() {
        let s = Synonyms::parse(DICT);
        assert_eq!(
            words(&s, "ファイルを削除する"),
            vec![(
                "削除".into(),
                vec!["デリート".into(), "delete".into(), "消す".into()]
            )]
        );
    }

    #[test]
    fn a_word_marked_target_only_never_expands() {
        // `リスト` is in two groups, both times only as a target.
        let s = Synonyms::parse(DICT);
        assert!(expand(&[&s], "リストを見る").is_empty());
        assert!(expand(&[&s], "一覧").is_empty());
        // `一覧` is in the query already (inside `一覧表`).
        assert_eq!(words(&s, "一覧表")[0].1, vec!["リスト", "list"]);
    }

    #[test]
    fn latin_words_match_whole_and_folded() {
        let s = Synonyms::parse(DICT);
        assert_eq!(words(&s, "How to DELETE a file")[0].0, "delete");
        assert!(expand(&[&s], "undeleted").is_empty());
    }

    #[test]
    fn the_longest_trigger_wins() {
        let s = Synonyms::parse("障害, 故障\n障害復旧, リカバリ\n");
        assert_eq!(
            words(&s, "障害復旧の手順")[0],
            ("障害復旧".into(), vec!["リカバリ".into()])
        );
    }

    #[test]
    fn words_already_in_the_query_are_not_added() {
        let s = Synonyms::parse(DICT);
        let got = words(&s, "削除 delete");
        assert_eq!(got[0].1, vec!["デリート", "消す"]);
    }

    #[test]
    fn expansions_are_bounded() {
        let line: Vec<String> = (0..50).map(|i| format!("w{i:02}")).collect();
        let s = Synonyms::parse(&line.join(","));
        let n: usize = expand(&[&s], "w00 w01")
            .iter()
            .map(|e| e.synonyms.len())
            .sum();
        assert_eq!(n, MAX_EXPANSIONS);
    }

    #[test]
    fn a_users_dictionary_adds_to_the_installed_one() {
        let a = Synonyms::parse(DICT);
        let b = Synonyms::parse("再起動, リブート, reboot\n削除, 除去\n");
        assert_eq!(b.groups(), 2);
        let got = words_of(&[&a, &b], "削除して再起動");
        assert_eq!(got[0].1, vec!["デリート", "delete", "消す", "除去"]);
        assert_eq!(
            got[1],
            ("再起動".into(), vec!["リブート".into(), "reboot".into()])
        );
    }

    #[test]
    fn a_lone_kanji_or_hiragana_run_is_no_trigger() {
        let s = Synonyms::parse("表, テーブル\nとめる, 止める\n");
        assert!(expand(&[&s], "表を作る").is_empty());
        assert!(expand(&[&s], "とめる").is_empty());
    }
}
