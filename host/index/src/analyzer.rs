//! kura's analyzer ([`crate::text::tokenize`]) as a tantivy tokenizer, and the
//! English and Spanish stemmers used to expand query words.

use tantivy::tokenizer::{Language, Stemmer, TextAnalyzer, Token, TokenStream, Tokenizer};

use crate::text::tokenize;

/// Registered names.
pub const PLAIN: &str = "kura";

#[derive(Clone, Default)]
pub struct KuraTokenizer {
    /// Every token's text, one after the other (no allocation per token).
    texts: String,
    /// Per token: its range in `texts`, and its byte range in the normalised text.
    spans: Vec<(usize, usize, usize, usize)>,
}

pub struct KuraStream<'a> {
    texts: &'a str,
    spans: &'a [(usize, usize, usize, usize)],
    at: usize,
    token: Token,
}

impl Tokenizer for KuraTokenizer {
    type TokenStream<'a> = KuraStream<'a>;

    fn token_stream<'a>(&'a mut self, text: &'a str) -> KuraStream<'a> {
        self.texts.clear();
        self.spans.clear();
        let norm = crate::text::normalize(text);
        let (texts, spans) = (&mut self.texts, &mut self.spans);
        tokenize::for_each_token(&norm, |t, from, to| {
            let at = texts.len();
            texts.push_str(t);
            spans.push((at, texts.len(), from, to));
        });
        KuraStream {
            texts: &self.texts,
            spans: &self.spans,
            at: 0,
            token: Token::default(),
        }
    }
}

impl TokenStream for KuraStream<'_> {
    fn advance(&mut self) -> bool {
        let Some(&(a, b, from, to)) = self.spans.get(self.at) else {
            return false;
        };
        self.token.text.clear();
        self.token.text.push_str(&self.texts[a..b]);
        // Offsets refer to the normalised text; kura never highlights from them.
        self.token.offset_from = from;
        self.token.offset_to = to;
        self.token.position = self.at;
        self.token.position_length = 1;
        self.at += 1;
        true
    }

    fn token(&self) -> &Token {
        &self.token
    }

    fn token_mut(&mut self) -> &mut Token {
        &mut self.token
    }
}

pub fn plain() -> TextAnalyzer {
    TextAnalyzer::from(KuraTokenizer::default())
}

/// The stem of one (already normalised) word.
pub fn stem(language: Language, word: &str) -> String {
    let mut a = TextAnalyzer::builder(tantivy::tokenizer::RawTokenizer::default())
        .filter(Stemmer::new(language))
        .build();
    let mut stream = a.token_stream(word);
    stream
        .next()
        .map_or_else(|| word.to_owned(), |t| t.text.clone())
}
