//! Text analysis shared by the host (its tantivy index, its signals) and the
//! default components (reranker, claim graph), so that all of them see a
//! text as the same tokens: [`normalize`] (NFKC + lower case),
//! [`tokenize`] (CJK bigrams, folded words) and [`facet`] (the six facets of
//! a query or a section, recognised in Japanese, Spanish and English).
//! Plain Rust without I/O; it compiles for the host and for wasm32-wasip2.

pub mod facet;
pub mod tokenize;

use unicode_normalization::UnicodeNormalization;
use unicode_normalization::char::is_combining_mark;

/// NFKC, then lower case: folds full-width forms, compatibility characters
/// and case.
pub fn normalize(s: &str) -> String {
    s.nfkc().flat_map(char::to_lowercase).collect()
}

/// [`normalize`], then diacritics folded and every run of characters that are
/// neither letters nor digits turned into one space, with a space at each
/// end: the form in which cue phrases are looked up word by word.
pub fn plain(s: &str) -> String {
    let mut out = String::with_capacity(s.len() + 2);
    out.push(' ');
    for c in normalize(s).chars() {
        if tokenize::is_cjk(c) {
            // Per character, so that kana keep their voicing marks.
            out.push(c);
        } else if c.is_alphanumeric() {
            out.extend(c.to_string().nfd().filter(|m| !is_combining_mark(*m)));
        } else if !out.ends_with(' ') {
            out.push(' ');
        }
    }
    if !out.ends_with(' ') {
        out.push(' ');
    }
    out
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn normalize_folds_width_and_case() {
        assert_eq!(normalize("ＡＢＣ ｶﾅ Vue"), "abc カナ vue");
    }

    #[test]
    fn plain_keeps_words_and_drops_punctuation() {
        assert_eq!(plain("¿Qué es  Vue.js?"), " que es vue js ");
        assert_eq!(plain("算出プロパティとは"), " 算出プロパティとは ");
        assert_eq!(plain("ガード"), " ガード ");
    }
}
