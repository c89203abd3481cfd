//! References a text makes to a numbered part of a document: chapters and
//! articles (`第2章-6`, `第12条の3`), dotted section numbers (`2.1.3`) and
//! manual pages (`crontab(5)`, a file `crontab.5`). A bag of words cannot
//! tell `第2章-6` from `第6章-2`; a reference, matched whole, can.

use std::sync::LazyLock;

use regex::Regex;

/// `第2章`, `第2章-6`, `第12条の3` (after NFKC, so full-width digits are plain).
static NUMBERED: LazyLock<Regex> = LazyLock::new(|| {
    Regex::new(r"第\s*(\d+)\s*([章条節編部項])(?:\s*[-ー－‐の]\s*(\d+))?").expect("valid regex")
});
/// `2.1.3`, `10.5`: dotted section numbers.
static DOTTED: LazyLock<Regex> =
    LazyLock::new(|| Regex::new(r"\d+(?:\.\d+)+").expect("valid regex"));
/// `crontab(5)` in a query, `crontab.5` in a page's name.
static PAGE: LazyLock<Regex> = LazyLock::new(|| {
    Regex::new(r"([a-z0-9_+-][a-z0-9_.+-]*)(?:\((\d)[a-z]*\)|\.(\d)$)").expect("valid regex")
});

/// The references a text makes, in one canonical spelling each.
pub fn references(text: &str) -> Vec<String> {
    // Every reference has a digit (full-width and circled ones included):
    // most headings have none and need neither NFKC nor the patterns.
    if !text.chars().any(char::is_numeric) {
        return Vec::new();
    }
    let text = crate::text::normalize(text);
    let mut out = Vec::new();
    for m in NUMBERED.captures_iter(&text) {
        let mut r = format!("第{}{}", trim_zeros(&m[1]), &m[2]);
        if let Some(sub) = m.get(3) {
            r.push('-');
            r.push_str(trim_zeros(sub.as_str()));
        }
        out.push(r);
    }
    let without_numbered = NUMBERED.replace_all(&text, " ");
    for m in DOTTED.find_iter(&without_numbered) {
        let r = m
            .as_str()
            .split('.')
            .map(trim_zeros)
            .collect::<Vec<_>>()
            .join(".");
        out.push(r);
    }
    for word in text.split_whitespace() {
        // A page name has a letter (`10.5` is a section, not a page).
        if let Some(m) = PAGE.captures(word)
            && m[1].chars().any(|c| c.is_ascii_alphabetic())
        {
            let section = m.get(2).or(m.get(3)).map_or("", |s| s.as_str());
            out.push(format!("{}({section})", &m[1]));
        }
    }
    out.sort();
    out.dedup();
    out
}

fn trim_zeros(n: &str) -> &str {
    let t = n.trim_start_matches('0');
    if t.is_empty() { "0" } else { t }
}

/// `text` without its chapter and dotted section references.
pub fn strip(text: &str) -> String {
    let stripped = NUMBERED.replace_all(text, " ");
    DOTTED.replace_all(&stripped, " ").into_owned()
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn references_are_read_in_every_width_and_spelling() {
        assert_eq!(references("第2章-6"), vec!["第2章-6"]);
        assert_eq!(references("第２章-６ 壊れたシステム"), vec!["第2章-6"]);
        assert_eq!(references("第５章 ネットワーク"), vec!["第5章"]);
        assert_eq!(references("section 5.6 netfilter"), vec!["5.6"]);
        assert_eq!(references("5.6-netfilter-infrastructure"), vec!["5.6"]);
        assert_eq!(references("crontab(5)"), vec!["crontab(5)"]);
        assert_eq!(references("crontab.5"), vec!["crontab(5)"]);
        assert!(references("ファイルの末尾を表示").is_empty());
        assert_eq!(references("capítulo 10.5 git"), vec!["10.5"]);
    }
}
