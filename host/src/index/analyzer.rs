//! kura's analyzer ([`crate::text::tokenize`]) as a tantivy tokenizer, and the
//! stemmed variants for English and Spanish.

use tantivy::tokenizer::{Language, Stemmer, TextAnalyzer, Token, TokenStream, Tokenizer};

use crate::text::tokenize;

/// Registered names.
pub const PLAIN: &str = "kura";
pub const STEM_EN: &str = "kura_en";
pub const STEM_ES: &str = "kura_es";

#[derive(Clone, Default)]
pub struct KuraTokenizer {
    buf: Vec<tokenize::Token>,
    /// Keep only words (no CJK bigrams): for the stemmed fields, where CJK
    /// would only repeat the plain field's postings.
    words_only: bool,
}

pub struct KuraStream<'a> {
    tokens: &'a [tokenize::Token],
    at: usize,
    token: Token,
}

impl Tokenizer for KuraTokenizer {
    type TokenStream<'a> = KuraStream<'a>;

    fn token_stream<'a>(&'a mut self, text: &'a str) -> KuraStream<'a> {
        self.buf.clear();
        let norm = crate::text::normalize(text);
        tokenize::tokens_normalized(&norm, &mut self.buf);
        if self.words_only {
            self.buf
                .retain(|t| !t.text.chars().next().is_some_and(tokenize::is_cjk));
        }
        KuraStream {
            tokens: &self.buf,
            at: 0,
            token: Token::default(),
        }
    }
}

impl TokenStream for KuraStream<'_> {
    fn advance(&mut self) -> bool {
        let Some(t) = self.tokens.get(self.at) else {
            return false;
        };
        self.token.text.clear();
        self.token.text.push_str(&t.text);
        // Offsets refer to the normalised text; kura never highlights from them.
        self.token.offset_from = t.from;
        self.token.offset_to = t.to;
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

pub fn stemmed(language: Language) -> TextAnalyzer {
    TextAnalyzer::builder(KuraTokenizer {
        words_only: true,
        ..KuraTokenizer::default()
    })
    .filter(Stemmer::new(language))
    .build()
}

/// The terms an analyzer makes of `text`, deduplicated in order.
pub fn terms(analyzer: &mut TextAnalyzer, text: &str) -> Vec<String> {
    let mut out: Vec<String> = Vec::new();
    let mut stream = analyzer.token_stream(text);
    while let Some(t) = stream.next() {
        if !out.contains(&t.text) {
            out.push(t.text.clone());
        }
    }
    out
}
