//! The analyzer shared by indexing and querying: NFKC + lower case, then
//! CJK runs (Han, Hiragana, Katakana, Hangul) as overlapping character
//! bigrams (a one-character run as itself) and other scripts as words with
//! diacritics folded (`función` → `funcion`). No dictionary is needed, so
//! Japanese, Spanish and English all index with one code path.

use unicode_normalization::UnicodeNormalization;
use unicode_normalization::char::is_combining_mark;

use crate::normalize;

#[derive(Clone, Copy, Debug, PartialEq, Eq)]
enum Class {
    Cjk,
    Word,
    Other,
}

pub fn is_cjk(c: char) -> bool {
    matches!(c as u32,
        0x3040..=0x30FF      // Hiragana, Katakana
        | 0x31F0..=0x31FF    // Katakana phonetic extensions
        | 0x3400..=0x4DBF    // CJK extension A
        | 0x4E00..=0x9FFF    // CJK unified ideographs
        | 0xF900..=0xFAFF    // compatibility ideographs
        | 0x1100..=0x11FF    // Hangul Jamo
        | 0x3130..=0x318F    // Hangul compatibility Jamo
        | 0xAC00..=0xD7AF    // Hangul syllables
        | 0x20000..=0x2FA1F  // CJK extensions B..
        | 0x3005 | 0x3006    // 々 〆
    )
}

fn class(c: char) -> Class {
    if c.is_ascii() {
        return if c.is_ascii_alphanumeric() {
            Class::Word
        } else {
            Class::Other
        };
    }
    if is_cjk(c) {
        Class::Cjk
    } else if c.is_alphanumeric() {
        Class::Word
    } else {
        Class::Other
    }
}

/// Fold diacritics of a (lower-cased) word: `canción` → `cancion`.
pub fn fold(word: &str) -> String {
    if word.is_ascii() {
        return word.to_owned();
    }
    word.nfd().filter(|c| !is_combining_mark(*c)).collect()
}

/// One token: its text and its byte range in the *normalised* text.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Token {
    pub text: String,
    pub from: usize,
    pub to: usize,
}

/// Tokens of already-normalised text.
pub fn tokens_normalized(norm: &str, out: &mut Vec<Token>) {
    for_each_token(norm, |text, from, to| {
        out.push(Token {
            text: text.to_owned(),
            from,
            to,
        })
    });
}

/// Call `f(text, from, to)` for each token of already-normalised text, in
/// order, without allocating per token (only a non-ASCII word is copied, to
/// fold it). The indexer's hot path.
pub fn for_each_token(norm: &str, mut f: impl FnMut(&str, usize, usize)) {
    let mut it = norm.char_indices().peekable();
    let mut folded = String::new();
    while let Some(&(start, c)) = it.peek() {
        match class(c) {
            Class::Other => {
                it.next();
            }
            Class::Word => {
                let (mut end, mut ascii) = (start, true);
                while let Some(&(b, c)) = it.peek() {
                    if class(c) != Class::Word {
                        break;
                    }
                    ascii &= c.is_ascii();
                    end = b + c.len_utf8();
                    it.next();
                }
                let w = &norm[start..end];
                if ascii {
                    f(w, start, end);
                } else {
                    folded.clear();
                    folded.extend(w.nfd().filter(|m| !is_combining_mark(*m)));
                    f(&folded, start, end);
                }
            }
            Class::Cjk => {
                // Overlapping bigrams; a one-character run is itself.
                let (mut prev, mut end, mut n) = (start, start, 0usize);
                while let Some(&(b, c)) = it.peek() {
                    if class(c) != Class::Cjk {
                        break;
                    }
                    let e = b + c.len_utf8();
                    if n > 0 {
                        f(&norm[prev..e], prev, e);
                    }
                    prev = b;
                    end = e;
                    n += 1;
                    it.next();
                }
                if n == 1 {
                    f(&norm[start..end], start, end);
                }
            }
        }
    }
}

/// Normalise and tokenise.
pub fn tokens(text: &str) -> Vec<Token> {
    let norm = normalize(text);
    let mut out = Vec::new();
    tokens_normalized(&norm, &mut out);
    out
}

/// Just the token strings, deduplicated in first-seen order (for queries).
pub fn query_terms(text: &str) -> Vec<String> {
    let mut seen = std::collections::HashSet::new();
    tokens(text)
        .into_iter()
        .map(|t| t.text)
        .filter(|t| seen.insert(t.clone()))
        .collect()
}

/// [`query_terms`] with a weight each: a bigram of a katakana or kanji word
/// of `n` bigrams weighs `1/n`, so that a long word (`ディレクトリ`: five
/// bigrams that always occur together) counts as much as a short one
/// (`一覧`), not five times as much. Other terms weigh 1.
pub fn weighted_query_terms(text: &str) -> Vec<(String, f32)> {
    let norm = normalize(text);
    #[derive(PartialEq, Clone, Copy)]
    enum Script {
        Katakana,
        Han,
        Other,
    }
    let script = |c: char| match c {
        '\u{30A0}'..='\u{30FF}' | '\u{31F0}'..='\u{31FF}' => Script::Katakana,
        c if is_cjk(c) && !('\u{3040}'..='\u{309F}').contains(&c) => Script::Han,
        _ => Script::Other,
    };
    // For each byte offset of a character: the length in characters of the
    // same-script word it is in.
    let chars: Vec<(usize, char)> = norm.char_indices().collect();
    let mut run_len = std::collections::HashMap::new();
    let mut i = 0;
    while i < chars.len() {
        let s = script(chars[i].1);
        let mut j = i + 1;
        while j < chars.len() && s != Script::Other && script(chars[j].1) == s {
            j += 1;
        }
        for (b, _) in &chars[i..j] {
            run_len.insert(*b, if s == Script::Other { 0 } else { j - i });
        }
        i = j;
    }
    let mut out: Vec<(String, f32)> = Vec::new();
    for t in tokens(text) {
        let first = norm[t.from..].chars().next().map_or(Script::Other, script);
        let same = t.text.chars().count() == 2 && t.text.chars().all(|c| script(c) == first);
        let n = run_len.get(&t.from).copied().unwrap_or(0);
        let w = if same && first != Script::Other && n > 2 {
            1.0 / ((n - 1) as f32)
        } else {
            1.0
        };
        match out.iter_mut().find(|(x, _)| *x == t.text) {
            Some(e) => e.1 = e.1.max(w),
            None => out.push((t.text, w)),
        }
    }
    out
}

/// The query terms that carry meaning: facet cue phrases ("とは", "how to")
/// and bigrams made only of hiragana (particles and inflections) are left
/// out, unless nothing else is left. Used for query coverage and by the
/// reranker and the claim graph, so that all three weigh the same words.
pub fn content_terms(query: &str) -> Vec<String> {
    content_units(query).into_iter().flatten().collect()
}

/// [`content_terms`] grouped by the word they come from: a Latin-script word
/// is a unit of one term, a CJK run is a unit of its bigrams. Weighing units
/// rather than terms keeps one long katakana word from outweighing the rest
/// of the query.
pub fn content_units(query: &str) -> Vec<Vec<String>> {
    let topic = crate::facet::strip_cues(query);
    let mut units = units_of(&topic);
    if units.is_empty() {
        units = units_of(query);
    }
    let is_kana = |c: char| ('\u{3040}'..='\u{309F}').contains(&c);
    // In a CJK run, bigrams touching hiragana are particles and inflections
    // ("のキ", "期の") when the run has bigrams without any; otherwise only
    // all-hiragana bigrams go ("何です" keeps "何で").
    let content: Vec<Vec<String>> = units
        .iter()
        .filter(|u| !(u.len() == 1 && STOPWORDS.contains(&u[0].as_str())))
        .map(|u| {
            let clean: Vec<String> = u
                .iter()
                .filter(|t| !t.chars().any(is_kana))
                .cloned()
                .collect();
            if clean.is_empty() {
                u.iter()
                    .filter(|t| !t.chars().all(is_kana))
                    .cloned()
                    .collect()
            } else {
                clean
            }
        })
        .filter(|u: &Vec<String>| !u.is_empty())
        .collect();
    if content.is_empty() { units } else { content }
}

/// English and Spanish function words (diacritics folded): they say nothing
/// about what a section is about.
const STOPWORDS: &[&str] = &[
    "a", "an", "the", "of", "to", "in", "on", "at", "by", "for", "with", "from", "and", "or", "is",
    "are", "be", "it", "its", "this", "that", "my", "i", "me", "we", "you", "do", "does", "can",
    "should", "when", "which", "what", "how", "there", "el", "la", "los", "las", "lo", "un", "una",
    "unos", "unas", "de", "del", "al", "y", "o", "u", "en", "con", "por", "para", "que", "se",
    "su", "sus", "mi", "mis", "me", "es", "son", "hay", "como", "cual", "sin", "sobre", "tras",
];

fn units_of(text: &str) -> Vec<Vec<String>> {
    let mut seen = std::collections::HashSet::new();
    let mut units: Vec<Vec<String>> = Vec::new();
    let mut last_to = usize::MAX;
    for t in tokens(text) {
        let cjk = t.text.chars().any(is_cjk);
        // Overlapping bigrams belong to the same run.
        let joins = cjk && t.from < last_to && last_to != usize::MAX;
        last_to = if cjk { t.to } else { usize::MAX };
        if !seen.insert(t.text.clone()) {
            continue;
        }
        match units.last_mut() {
            Some(u) if joins => u.push(t.text),
            _ => units.push(vec![t.text]),
        }
    }
    units
}

#[cfg(test)]
mod tests {
    use super::*;

    fn texts(s: &str) -> Vec<String> {
        tokens(s).into_iter().map(|t| t.text).collect()
    }

    #[test]
    fn a_long_katakana_word_weighs_as_much_as_a_short_kanji_word() {
        let w = weighted_query_terms("ディレクトリの内容を一覧表示");
        let weight = |t: &str| w.iter().find(|(x, _)| x == t).map(|(_, w)| *w);
        assert_eq!(weight("ディ"), Some(0.2));
        assert_eq!(weight("トリ"), Some(0.2));
        assert_eq!(weight("内容"), Some(1.0));
        assert_eq!(weight("一覧"), Some(1.0 / 3.0));
        // Across a script change, and Latin words: weight 1.
        assert_eq!(weight("リの"), Some(1.0));
        let latin = weighted_query_terms("sticky bit");
        assert!(latin.iter().all(|(_, w)| *w == 1.0));
        assert_eq!(
            w.iter().map(|(t, _)| t.clone()).collect::<Vec<_>>(),
            query_terms("ディレクトリの内容を一覧表示")
        );
    }

    #[test]
    fn cjk_runs_become_bigrams() {
        assert_eq!(
            texts("算出プロパティ"),
            ["算出", "出プ", "プロ", "ロパ", "パテ", "ティ"]
        );
        assert_eq!(texts("値"), ["値"]);
    }

    #[test]
    fn mixed_scripts_split_at_the_boundary() {
        assert_eq!(texts("Vueの算出"), ["vue", "の算", "算出"]);
        assert_eq!(texts("v-model を使う"), ["v", "model", "を使", "使う"]);
    }

    #[test]
    fn width_case_and_diacritics_fold() {
        assert_eq!(
            texts("ＡＰＩ Función ｶﾀｶﾅ"),
            ["api", "funcion", "カタ", "タカ", "カナ"]
        );
    }

    #[test]
    fn punctuation_is_never_syntax() {
        assert_eq!(
            texts("C++ \"rate-limiting\" auth.py (what is JWT?) a:b -x"),
            [
                "c", "rate", "limiting", "auth", "py", "what", "is", "jwt", "a", "b", "x"
            ]
        );
    }

    #[test]
    fn content_terms_drop_facet_cues_and_particles() {
        assert_eq!(
            content_terms("算出プロパティとは何ですか"),
            ["算出", "出プ", "プロ", "ロパ", "パテ", "ティ", "何で"]
        );
        assert_eq!(
            content_terms("What is a computed property?"),
            ["computed", "property"]
        );
        assert_eq!(content_terms("とは"), ["とは"]);
        assert_eq!(
            content_terms("the"),
            ["the"],
            "nothing but a stopword: kept"
        );
        assert_eq!(
            content_terms("cómo cifrar una partición"),
            ["cifrar", "particion"]
        );
        assert_eq!(
            content_units("computed と methods のキャッシュ"),
            vec![
                vec!["computed".to_owned()],
                vec!["methods".to_owned()],
                vec![
                    "キャ".to_owned(),
                    "ャッ".to_owned(),
                    "ッシ".to_owned(),
                    "シュ".to_owned()
                ],
            ]
        );
    }

    #[test]
    fn query_terms_are_unique() {
        assert_eq!(query_terms("vue vue VUE"), ["vue"]);
    }
}
