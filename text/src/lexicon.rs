//! A bilingual lexicon: the words of a question in one language turned
//! into words of another, so that a lexical search finds a page that
//! shares no word with the question (a Japanese question over an English
//! manual). `kura models install` keeps JMdict's Japanese-to-English part
//! in this form: a line per word, the word, a tab and its translations
//! separated by spaces, the lines sorted by their bytes. The bytes can be
//! a file mapped into memory: only where each line starts is held.

use crate::normalize;
use crate::phrase::is_word_cjk;
use crate::tokenize::is_cjk;

/// A word is looked for in a question as a run of at most this many CJK
/// characters.
const MAX_CHARS: usize = 12;
/// Translations a question takes at most.
pub const MAX_TRANSLATIONS: usize = 24;

pub struct Lexicon<B> {
    bytes: B,
    /// Where each line starts, and the end of the last.
    starts: Vec<u32>,
}

#[derive(Debug, thiserror::Error, PartialEq, Eq)]
pub enum LexiconError {
    #[error("the lexicon is larger than 4 GiB")]
    TooLarge,
    #[error("line {0} of the lexicon is not `word<TAB>translations` in UTF-8")]
    Line(usize),
    #[error("the lexicon is not sorted at line {0}")]
    Unsorted(usize),
}

impl<B: AsRef<[u8]>> Lexicon<B> {
    /// The lexicon in `bytes`, checked whole: every line a word and its
    /// translations, in order (a search by halves needs it).
    pub fn new(bytes: B) -> Result<Lexicon<B>, LexiconError> {
        let b = bytes.as_ref();
        if u32::try_from(b.len()).is_err() {
            return Err(LexiconError::TooLarge);
        }
        let mut starts = vec![0u32];
        let mut prev: &[u8] = &[];
        for (n, line) in b.split_inclusive(|&c| c == b'\n').enumerate() {
            let end = starts.last().copied().unwrap_or(0) as usize + line.len();
            let text = std::str::from_utf8(line).map_err(|_| LexiconError::Line(n + 1))?;
            let word = match text.trim_end_matches('\n').split_once('\t') {
                Some((w, _)) if !w.is_empty() => w.as_bytes(),
                _ => return Err(LexiconError::Line(n + 1)),
            };
            if word <= prev {
                return Err(LexiconError::Unsorted(n + 1));
            }
            prev = word;
            starts.push(end as u32);
        }
        Ok(Lexicon { bytes, starts })
    }

    pub fn len(&self) -> usize {
        self.starts.len() - 1
    }

    pub fn is_empty(&self) -> bool {
        self.len() == 0
    }

    /// Line `k`'s word and translations.
    fn line(&self, k: usize) -> (&str, &str) {
        let b = &self.bytes.as_ref()[self.starts[k] as usize..self.starts[k + 1] as usize];
        // Checked by `new`: UTF-8, with a tab.
        let text = std::str::from_utf8(b).unwrap_or_default();
        text.trim_end_matches('\n')
            .split_once('\t')
            .unwrap_or_default()
    }

    /// `word`'s translations.
    pub fn get(&self, word: &str) -> Option<&str> {
        let (mut lo, mut hi) = (0, self.len());
        while lo < hi {
            let mid = lo + (hi - lo) / 2;
            let (w, translations) = self.line(mid);
            match w.as_bytes().cmp(word.as_bytes()) {
                std::cmp::Ordering::Less => lo = mid + 1,
                std::cmp::Ordering::Greater => hi = mid,
                std::cmp::Ordering::Equal => return Some(translations),
            }
        }
        None
    }

    /// The translations of `question`'s words: in each run of CJK text, the
    /// longest word of the lexicon at each place (left to right, not
    /// overlapping; two characters at least, one of them a kanji or
    /// katakana). Words of the question itself are left out, each
    /// translation comes once, at most [`MAX_TRANSLATIONS`].
    pub fn translate(&self, question: &str) -> Vec<String> {
        let norm = normalize(question);
        let own: Vec<&str> = norm.split(|c: char| !c.is_alphanumeric()).collect();
        let chars: Vec<char> = norm.chars().collect();
        let mut out: Vec<String> = Vec::new();
        let mut i = 0;
        while i < chars.len() && out.len() < MAX_TRANSLATIONS {
            if !is_cjk(chars[i]) {
                i += 1;
                continue;
            }
            let run = chars[i..].iter().take_while(|&&c| is_cjk(c)).count();
            let found = (2..=MAX_CHARS.min(run)).rev().find_map(|n| {
                let word: String = chars[i..i + n].iter().collect();
                if !word.chars().any(is_word_cjk) {
                    return None;
                }
                self.get(&word).map(|t| (n, t))
            });
            let Some((n, translations)) = found else {
                i += 1;
                continue;
            };
            for t in translations.split(' ') {
                let t = normalize(t);
                if !t.is_empty() && !own.contains(&t.as_str()) && !out.contains(&t) {
                    out.push(t);
                }
            }
            i += n;
        }
        out.truncate(MAX_TRANSLATIONS);
        out
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    const TEXT: &str = "共有\tshared joint\n共有メモリ\tshared memory\n削除\tdeletion erasure\n\
                        子プロセス\tchild process\n";

    fn sorted(text: &str) -> String {
        let mut lines: Vec<&str> = text.lines().collect();
        lines.sort();
        lines.iter().map(|l| format!("{l}\n")).collect()
    }

    #[test]
    fn the_longest_word_at_each_place_brings_its_translations() {
        let text = sorted(TEXT);
        let lex = Lexicon::new(text.as_bytes()).unwrap();
        assert_eq!(lex.len(), 4);
        assert_eq!(lex.get("削除"), Some("deletion erasure"));
        assert_eq!(lex.get("削"), None);
        assert_eq!(
            lex.translate("子プロセスの共有メモリを削除する memory"),
            ["child", "process", "shared", "deletion", "erasure"],
            "共有メモリ whole, not 共有; `memory` is the question's own"
        );
        assert!(lex.translate("no japanese here").is_empty());
        assert!(lex.translate("").is_empty());
    }

    #[test]
    fn a_lexicon_out_of_order_or_without_tabs_is_refused() {
        assert_eq!(
            Lexicon::new("b\tx\na\ty\n".as_bytes()).err(),
            Some(LexiconError::Unsorted(2))
        );
        assert_eq!(
            Lexicon::new("a\tx\nno tab\n".as_bytes()).err(),
            Some(LexiconError::Line(2))
        );
        assert_eq!(
            Lexicon::new(&b"a\tx\n\xff\ty\n"[..]).err(),
            Some(LexiconError::Line(2))
        );
        assert!(Lexicon::new(&b""[..]).unwrap().is_empty());
    }

    #[test]
    fn translations_stop_at_their_cap() {
        let word = |i: u32| format!("語{}", char::from_u32(0x30A2 + i).unwrap());
        let text: String = (0..40)
            .map(|i| format!("{}\tw{i}a w{i}b\n", word(i)))
            .collect();
        let text = sorted(&text);
        let lex = Lexicon::new(text.as_bytes()).unwrap();
        assert_eq!(lex.len(), 40);
        let question: Vec<String> = (0..40).map(word).collect();
        assert_eq!(lex.translate(&question.join("、")).len(), MAX_TRANSLATIONS);
    }
}
