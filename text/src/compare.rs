//! The sides of a comparison query (`A と B の違い`, `A vs B`, `difference
//! between A and B`, `diferencia entre A y B`, `A, B o C`), so that a search
//! can retrieve for each side and show every side near the top instead of
//! letting the one with more matching text crowd out the other.
//!
//! Only a query with a compare cue ([`crate::facet::Facet::Compare`]) has
//! sides. The query is split at its separators; each part is then cut to
//! the phrase next to the separator: the trailing phrase of the first part,
//! the leading phrase of the last (`要素の表示切り替えは v-if と v-show の
//! どっち` → `v-if`, `v-show`; `tar vs cpio for archiving` → `tar`, `cpio`).

use crate::facet::{Facet, detect};
use crate::tokenize::is_cjk;

/// At most this many sides are kept (`apt, apt-get or aptitude` has three).
const MAX_SIDES: usize = 4;

/// Separators that make a comparison by themselves, whatever the language.
const STRONG: [&str; 4] = [" vs. ", " vs ", " versus ", " frente a "];
/// Separators of a list of alternatives, used once a compare cue is present.
const LIST: [&str; 7] = [" and ", " or ", " y ", " o ", " e ", " u ", ", "];

/// Words that lead into a comparison rather than name a side (compared in
/// lower case).
const LEAD_WORDS: [&str; 34] = [
    "what",
    "whats",
    "is",
    "are",
    "the",
    "a",
    "an",
    "difference",
    "differences",
    "between",
    "compare",
    "comparing",
    "comparison",
    "of",
    "should",
    "i",
    "use",
    "which",
    "how",
    "do",
    "does",
    "diferencia",
    "diferencias",
    "entre",
    "comparar",
    "comparación",
    "comparacion",
    "el",
    "la",
    "los",
    "las",
    "usar",
    "better",
    "mejor",
];

/// Words after which the last side's phrase is over (`cpio for archiving`).
const TAIL_WORDS: [&str; 24] = [
    "for", "when", "in", "to", "which", "what", "on", "with", "is", "are", "para", "cuál", "cual",
    "cuándo", "cuando", "en", "con", "es", "son", "qué", "que", "como", "cómo", "?",
];

/// Japanese particles that end a side on its left or its right.
const PARTICLES: [char; 9] = ['の', 'は', 'が', 'を', 'で', 'に', 'も', 'や', 'へ'];

/// The sides of `query` when it compares things, else empty.
pub fn sides(query: &str) -> Vec<String> {
    if !detect(query).contains(&Facet::Compare) {
        return Vec::new();
    }
    let text: String = query
        .chars()
        .map(|c| match c {
            '？' | '?' | '！' | '!' | '。' | '：' | ':' | '「' | '」' | '"' => ' ',
            '、' | '，' => ',',
            '　' => ' ',
            c => c,
        })
        .collect();
    let text = format!(
        " {} ",
        text.split_whitespace().collect::<Vec<_>>().join(" ")
    );
    let parts = split_japanese(&text)
        .or_else(|| split_at(&text, &STRONG))
        .or_else(|| split_at(&text, &LIST));
    let Some(parts) = parts else {
        return Vec::new();
    };
    let last = parts.len() - 1;
    let mut out: Vec<String> = Vec::new();
    for (i, part) in parts.iter().enumerate() {
        let mut side = part.trim().to_owned();
        if i == 0 {
            side = leading_phrase_cut(&side);
        }
        if i == last {
            side = trailing_phrase_cut(&side);
        }
        let side = side
            .trim_matches(|c: char| c.is_whitespace() || c == ',')
            .to_owned();
        if !side.is_empty() && !out.contains(&side) {
            out.push(side);
        }
    }
    if out.len() < 2 {
        return Vec::new();
    }
    out.truncate(MAX_SIDES);
    out
}

/// Split at a `と` that joins two names: not inside a word of kana (`ところ`,
/// `ひとつ`), so a hiragana must not touch it on either side.
fn split_japanese(text: &str) -> Option<Vec<String>> {
    let chars: Vec<char> = text.chars().collect();
    let hiragana = |c: char| ('\u{3041}'..='\u{309f}').contains(&c);
    let at = (1..chars.len().saturating_sub(1))
        .find(|&i| chars[i] == 'と' && !hiragana(chars[i - 1]) && !hiragana(chars[i + 1]))?;
    let left: String = chars[..at].iter().collect();
    let right: String = chars[at + 1..].iter().collect();
    (!left.trim().is_empty() && !right.trim().is_empty()).then(|| vec![left, right])
}

/// Split at every separator of `separators` (all of them, in order of the
/// text); None when there is none. The separators are ASCII, so they are
/// looked for in the text with ASCII letters lower-cased, which keeps every
/// byte offset valid in the text itself.
fn split_at(text: &str, separators: &[&str]) -> Option<Vec<String>> {
    let lower = text.to_ascii_lowercase();
    let mut cuts: Vec<(usize, usize)> = Vec::new();
    for sep in separators {
        let mut from = 0;
        while let Some(i) = lower[from..].find(sep) {
            let at = from + i;
            cuts.push((at, at + sep.len()));
            from = at + sep.len();
        }
    }
    if cuts.is_empty() {
        return None;
    }
    cuts.sort_unstable();
    let mut parts = Vec::new();
    let mut start = 0;
    for (a, b) in cuts {
        if a < start {
            continue; // overlapping separators (", and")
        }
        parts.push(text[start..a].to_owned());
        start = b;
    }
    parts.push(text[start..].to_owned());
    Some(parts)
}

/// The phrase at the end of the first part: after the last Japanese
/// particle or CJK-to-Latin boundary, without leading cue words.
fn leading_phrase_cut(part: &str) -> String {
    let ends_latin = part.chars().last().is_some_and(|c| !is_cjk(c));
    let cut = if ends_latin {
        // The trailing run of non-CJK text.
        match part.char_indices().rfind(|(_, c)| is_cjk(*c)) {
            Some((i, c)) => &part[i + c.len_utf8()..],
            None => part,
        }
    } else {
        match part
            .char_indices()
            .rfind(|(_, c)| PARTICLES.contains(c) || c.is_whitespace())
        {
            Some((i, c)) => &part[i + c.len_utf8()..],
            None => part,
        }
    };
    let words: Vec<&str> = cut.split_whitespace().collect();
    let skip = words
        .iter()
        .take_while(|w| LEAD_WORDS.contains(&w.to_lowercase().as_str()))
        .count();
    words[skip..].join(" ")
}

/// The phrase at the start of the last part: up to a Japanese particle, a
/// Latin-to-CJK boundary or a word that starts a clause.
fn trailing_phrase_cut(part: &str) -> String {
    let part = part.trim();
    let starts_latin = part.chars().next().is_some_and(|c| !is_cjk(c));
    if !starts_latin {
        let end = part
            .char_indices()
            .find(|(_, c)| PARTICLES.contains(c) || c.is_whitespace() || !is_cjk(*c))
            .map_or(part.len(), |(i, _)| i);
        return part[..end].to_owned();
    }
    let end = part
        .char_indices()
        .find(|(_, c)| is_cjk(*c))
        .map_or(part.len(), |(i, _)| i);
    let words: Vec<&str> = part[..end].split_whitespace().collect();
    let skip = words
        .iter()
        .take_while(|w| LEAD_WORDS.contains(&w.to_lowercase().as_str()))
        .count();
    words[skip..]
        .iter()
        .take_while(|w| !TAIL_WORDS.contains(&w.to_lowercase().as_str()))
        .copied()
        .collect::<Vec<_>>()
        .join(" ")
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn japanese_comparisons_have_two_sides() {
        let cases = [
            ("v-if と v-show の違い", ["v-if", "v-show"]),
            (
                "要素の表示切り替えは v-if と v-show のどっちがいい？",
                ["v-if", "v-show"],
            ),
            (
                "カーネルメッセージとシステムメッセージの違い",
                ["カーネルメッセージ", "システムメッセージ"],
            ),
            (
                "Git とソースコードマージツールの比較",
                ["Git", "ソースコードマージツール"],
            ),
            (
                "Options API と Composition API のどちらを選ぶべきか",
                ["Options API", "Composition API"],
            ),
            (
                "provide/inject とグローバルプロパティの違い",
                ["provide/inject", "グローバルプロパティ"],
            ),
            (
                "computed と methods はどう違うの？",
                ["computed", "methods"],
            ),
            ("at.allow と at.deny の違い", ["at.allow", "at.deny"]),
        ];
        for (q, want) in cases {
            assert_eq!(sides(q), want, "{q}");
        }
    }

    #[test]
    fn english_comparisons_have_their_sides() {
        assert_eq!(
            sides("tar vs cpio for archiving a directory tree"),
            ["tar", "cpio"]
        );
        assert_eq!(
            sides("compare ssh and remote desktop"),
            ["ssh", "remote desktop"]
        );
        assert_eq!(
            sides("difference between the kernel message and the system message"),
            ["kernel message", "system message"]
        );
        assert_eq!(
            sides("which is better: apt, apt-get or aptitude?"),
            ["apt", "apt-get", "aptitude"]
        );
    }

    #[test]
    fn spanish_comparisons_have_their_sides() {
        assert_eq!(
            sides("diferencia entre apt-get y aptitude"),
            ["apt-get", "aptitude"]
        );
        assert_eq!(
            sides("GNOME, KDE o Xfce: cuál es mejor como escritorio"),
            ["GNOME", "KDE", "Xfce"]
        );
        assert_eq!(
            sides("diferencia entre los mensajes del núcleo y los del sistema"),
            ["mensajes del núcleo", "del sistema"]
        );
    }

    proptest::proptest! {
        #[test]
        fn any_text_splits_without_panicking(q in "\\PC{0,60}") {
            let _ = sides(&q);
            let _ = sides(&format!("{q} vs {q} と {q}の違い, {q} o {q}"));
        }
    }

    #[test]
    fn a_query_without_a_compare_cue_has_no_sides() {
        assert!(sides("install and configure ssh").is_empty());
        assert!(sides("ところで v-if とは").is_empty());
        assert!(sides("違い").is_empty(), "a cue alone names no side");
    }
}
