//! Text analysis shared by the host (its tantivy index, its signals) and the
//! default components (reranker, claim graph), so that all of them see a
//! text as the same tokens: [`normalize`] (NFKC + lower case),
//! [`tokenize`] (CJK bigrams, folded words) and [`facet`] (the six facets of
//! a query or a section, recognised in Japanese, Spanish and English).
//! Plain Rust without I/O; it compiles for the host and for wasm32-wasip2.

pub mod compare;
pub mod facet;
pub mod lexicon;
pub mod phrase;
pub mod synonyms;
pub mod tokenize;

use unicode_normalization::char::is_combining_mark;
use unicode_normalization::{IsNormalized, UnicodeNormalization};

/// NFKC, then lower case: folds full-width forms, compatibility characters
/// and case.
pub fn normalize(s: &str) -> String {
    if s.is_ascii() {
        return s.to_ascii_lowercase();
    }
    // Most lines are already in NFKC (the quick check answers without
    // decomposing anything); only the others pay for the full algorithm.
    // NFKC never changes a line ending, so lines can be done one by one.
    let mut out = String::with_capacity(s.len());
    for line in s.split_inclusive('\n') {
        if line.is_ascii() {
            let at = out.len();
            out.push_str(line);
            out[at..].make_ascii_lowercase();
        } else if unicode_normalization::is_nfkc_quick(line.chars()) == IsNormalized::Yes {
            lower_into(&mut out, line.chars());
        } else {
            lower_into(&mut out, line.nfkc());
        }
    }
    out
}

/// Lower-case `chars` onto `out`; ASCII and CJK (which has no case) without
/// the Unicode case tables.
fn lower_into(out: &mut String, chars: impl Iterator<Item = char>) {
    for c in chars {
        if c.is_ascii() {
            out.push(c.to_ascii_lowercase());
        } else if tokenize::is_cjk(c) {
            out.push(c);
        } else {
            out.extend(c.to_lowercase());
        }
    }
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
            out.extend(std::iter::once(c).nfd().filter(|m| !is_combining_mark(*m)));
        } else if !out.ends_with(' ') {
            out.push(' ');
        }
    }
    if !out.ends_with(' ') {
        out.push(' ');
    }
    out
}

/// A text in the form query terms are compared with: [`normalize`]d, with
/// diacritics folded outside CJK. [`Folded::has_term`] answers "would the
/// tokenizer have produced this term here" without building the token list,
/// which is what makes per-candidate signals cheap.
pub struct Folded {
    text: String,
}

fn is_word_char(c: char) -> bool {
    c.is_alphanumeric() && !tokenize::is_cjk(c)
}

impl Folded {
    pub fn new(s: &str) -> Folded {
        let norm = normalize(s);
        if norm.is_ascii() {
            return Folded { text: norm };
        }
        let mut text = String::with_capacity(norm.len());
        for c in norm.chars() {
            if c.is_ascii() || tokenize::is_cjk(c) || !c.is_alphanumeric() {
                text.push(c);
            } else {
                text.extend(std::iter::once(c).nfd().filter(|m| !is_combining_mark(*m)));
            }
        }
        Folded { text }
    }

    pub fn as_str(&self) -> &str {
        &self.text
    }

    /// Whether `term` (a token as the tokenizer makes them) occurs: a CJK
    /// term anywhere, a word only as a whole word.
    pub fn has_term(&self, term: &str) -> bool {
        if term.is_empty() {
            return false;
        }
        if term.chars().any(tokenize::is_cjk) {
            return self.text.contains(term);
        }
        self.find_word(term, true)
    }

    /// Whether a word starts with `prefix`.
    pub fn has_word_prefix(&self, prefix: &str) -> bool {
        !prefix.is_empty() && self.find_word(prefix, false)
    }

    fn find_word(&self, w: &str, whole: bool) -> bool {
        let t = self.text.as_str();
        let mut from = 0;
        while let Some(i) = t[from..].find(w) {
            let at = from + i;
            let end = at + w.len();
            let before_ok = t[..at].chars().next_back().is_none_or(|c| !is_word_char(c));
            let after_ok = !whole || t[end..].chars().next().is_none_or(|c| !is_word_char(c));
            if before_ok && after_ok {
                return true;
            }
            from = at + t[at..].chars().next().map_or(1, char::len_utf8);
        }
        false
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn normalize_folds_width_and_case() {
        assert_eq!(normalize("ＡＢＣ ｶﾅ Vue"), "abc カナ vue");
        assert_eq!(normalize("Straße ÉTÉ 算出"), "straße été 算出");
        assert_eq!(normalize("ﬁ ①"), "fi 1");
    }

    #[test]
    fn folded_terms_match_like_the_tokenizer() {
        let f = Folded::new("El Método de entrada: ＡＰＩ v-model 算出プロパティ");
        for t in tokenize::query_terms("método API model 算出 プロパ") {
            assert!(f.has_term(&t), "{t}");
        }
        assert!(!f.has_term("metod"), "whole words only");
        assert!(f.has_word_prefix("metod"));
        assert!(!f.has_term("ode"));
        assert!(!f.has_term(""));
    }

    #[test]
    fn plain_keeps_words_and_drops_punctuation() {
        assert_eq!(plain("¿Qué es  Vue.js?"), " que es vue js ");
        assert_eq!(plain("算出プロパティとは"), " 算出プロパティとは ");
        assert_eq!(plain("ガード"), " ガード ");
    }
}
