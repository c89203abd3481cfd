//! A document's name as evidence: in many manual sets the file name is the
//! title (`第２章-６ 壊れたシステムからの復元.md`, `man5/crontab.5.md`) and the
//! body never repeats it. The signals treat the name as the document's
//! outermost heading, and two things a bag of words cannot see get their own
//! test: a chapter, section or page reference matched exactly (`第2章-6` is not
//! `第6章-2`; `crontab(5)` is not `crontab(1)`), and a name the query states
//! exactly rather than one that merely contains the query's words.

use crate::text::reference::{references, strip};
use crate::text::tokenize::{content_units, query_terms};

/// A file key's path below its manual, without the extension, and its last
/// segment (the file's own name).
fn parts(file: &str) -> (&str, &str) {
    let stem = crate::index::stem_below_scope(file);
    let last = stem.rsplit('/').next().unwrap_or(stem);
    (stem, last)
}

/// The title part of a file's own name: references and numbers left out.
fn title_of(last: &str) -> String {
    let stripped = strip(&crate::text::normalize(last));
    // A page's section number (`crontab.5`) is a reference, not a word.
    stripped
        .split_whitespace()
        .map(|w| {
            w.rsplit_once('.')
                .filter(|(_, n)| n.len() == 1 && n.chars().all(|c| c.is_ascii_digit()))
                .map_or(w, |(stem, _)| stem)
        })
        .collect::<Vec<_>>()
        .join(" ")
}

/// The title a file's own name gives it (for the heading signals).
pub fn title(file: &str) -> String {
    title_of(parts(file).1)
}

/// What a document's name says about a query.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub struct NameMatch {
    /// Every reference the query makes is one the name or heading makes.
    pub reference: bool,
    /// The name's title is what the query asks for: every word of it is in
    /// the query, and it covers at least half of the query's words.
    pub exact: bool,
}

/// Compare a query with a file (its index key: the manual, then the path)
/// and a section's heading path.
pub fn compare(query: &str, file: &str, heading: &str) -> NameMatch {
    let (path, last) = parts(file);
    let asked = references(query);
    let reference = !asked.is_empty() && {
        let mut have: Vec<String> = path.split('/').flat_map(references).collect();
        have.extend(references(heading));
        asked.iter().all(|r| have.contains(r))
    };
    let title = title_of(last);
    // The title's words as they are (a title may be made of facet cue words
    // such as 条件), without the bigrams that touch hiragana (particles).
    let is_kana = |c: char| ('\u{3040}'..='\u{309F}').contains(&c);
    let title_terms: Vec<String> = query_terms(&title)
        .into_iter()
        .filter(|t| {
            !(t.chars().any(is_kana) && t.chars().any(|c| !is_kana(c)) || t.chars().all(is_kana))
        })
        .collect();
    let query_all = query_terms(query);
    let query_units = content_units(query);
    let exact = !title_terms.is_empty() && !query_units.is_empty() && {
        let all_in = title_terms.iter().all(|t| query_all.contains(t));
        let covered = query_units
            .iter()
            .filter(|u| u.iter().all(|t| title_terms.contains(t)))
            .count();
        all_in && covered * 2 >= query_units.len()
    };
    NameMatch { reference, exact }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_reference_matches_only_itself() {
        let n = "m/第２章-６ 壊れたシステムからの復元.md";
        assert!(compare("第2章-6", n, "").reference);
        assert!(!compare("第6章-2", n, "").reference);
        assert!(!compare("第2章", n, "").reference);
        assert!(compare("crontab(5)", "man/man5/crontab.5.md", "名前").reference);
        assert!(!compare("crontab(1)", "man/man5/crontab.5.md", "名前").reference);
        assert!(!compare("壊れたシステム", n, "").reference);
    }

    #[test]
    fn an_exact_name_is_told_from_a_name_that_contains_the_query() {
        let exact = |q: &str, n: &str| compare(q, &format!("m/{n}.md"), "").exact;
        assert!(exact(
            "Debian パッケージ管理",
            "第２章 Debian パッケージ管理"
        ));
        assert!(!exact(
            "Debian パッケージ管理",
            "第２章-１ Debian パッケージ管理の前提条件"
        ));
        assert!(exact("システムメッセージ", "第３章-４ システムメッセージ"));
        assert!(!exact("システムメッセージ", "第３章-３ カーネルメッセージ"));
        assert!(exact("tar コマンド", "man1/tar.1"));
        assert!(!exact("tar コマンド", "man1/star.1"));
    }
}
