//! The embedder slot: sentence vectors from a component instead of the
//! installed model. The contract (wit/worlds.wit): one vector per text, in
//! the order given, all of one length from 1 to [`VECTOR_MAX`], every
//! number finite. The host scales each vector to unit length and pads it
//! with zeros to [`VECTOR_MAX`] (a cosine is unchanged by zeros), so the
//! search code compares every encoder's vectors the same way.
//!
//! An [`Embedder`] is pinned to the component it was taken from: the
//! vectors a domain keeps are made by one encoder, so a reloaded component
//! file serves the next start, not the vectors already made.

use std::sync::Arc;

use super::bindings::embedder::EmbedderPre;
use super::slot::{Cell, Loaded};
use super::{LOAD_WAIT, Plugins, Runtime, State, ready};
use crate::error::{Code, Error};

/// The most numbers a vector may have (kura's own encoder's length).
pub const VECTOR_MAX: usize = 512;
/// The most texts one call embeds.
pub const EMBED_BATCH: usize = 32;

type Pre = EmbedderPre<State>;

/// A loaded embedder component, pinned.
pub struct Embedder {
    runtime: Arc<Runtime>,
    cell: Arc<Cell<Pre>>,
    loaded: Arc<Loaded<Pre>>,
}

impl Plugins {
    /// Whether an embedder is configured (loaded or not).
    pub fn has_embedder(&self) -> bool {
        self.embedder.is_some()
    }

    /// The configured embedder, waiting for it to load (this runs in the
    /// background, after the lexical index); `None` when none is
    /// configured, an error when it cannot be loaded.
    pub fn embedder(&self) -> Option<Result<Embedder, Error>> {
        let cell = self.embedder.as_ref()?;
        Some(ready(cell, LOAD_WAIT).map(|loaded| Embedder {
            runtime: self.runtime.clone(),
            cell: cell.clone(),
            loaded,
        }))
    }
}

impl Embedder {
    /// Names the vectors it makes: the component's digest (16 hex digits).
    pub fn identity(&self) -> String {
        format!("wasm-{}", &self.loaded.hash[..16])
    }

    /// Where the component came from, for the log.
    pub fn source(&self) -> String {
        self.loaded.source.to_string()
    }

    /// One unit vector of [`VECTOR_MAX`] numbers per text, [`EMBED_BATCH`]
    /// texts per call (each in a fresh instance).
    pub fn embed(&self, texts: &[String]) -> Result<Vec<[f32; VECTOR_MAX]>, Error> {
        let mut out = Vec::with_capacity(texts.len());
        let mut length = None;
        for batch in texts.chunks(EMBED_BATCH) {
            let vectors = self.runtime.call(&self.cell, &self.loaded, |store, pre| {
                pre.instantiate(&mut *store)?.call_embed(&mut *store, batch)
            })?;
            let fit = fit(batch.len(), &vectors, &mut length).map_err(|why| {
                Error::new(
                    Code::PluginFailed,
                    format!("the embedder plugin failed: {why}"),
                )
                .with("plugin", self.cell.slot.name())
                .with("source", self.loaded.source.to_string())
            })?;
            out.extend(fit);
        }
        Ok(out)
    }
}

/// A batch's vectors as kura keeps them, or how they break the contract;
/// `length` is the length of the vectors so far (every call's must agree).
fn fit(
    texts: usize,
    vectors: &[Vec<f32>],
    length: &mut Option<usize>,
) -> Result<Vec<[f32; VECTOR_MAX]>, String> {
    if vectors.len() != texts {
        return Err(format!(
            "it returned {} vectors for {texts} texts",
            vectors.len()
        ));
    }
    let mut out = Vec::with_capacity(texts);
    for (i, v) in vectors.iter().enumerate() {
        if v.is_empty() || v.len() > VECTOR_MAX {
            return Err(format!(
                "vector {i} has {} numbers (1 to {VECTOR_MAX})",
                v.len()
            ));
        }
        if *length.get_or_insert(v.len()) != v.len() {
            return Err(format!(
                "vector {i} has {} numbers where the others have {}",
                v.len(),
                length.unwrap_or(0)
            ));
        }
        if let Some(x) = v.iter().find(|x| !x.is_finite()) {
            return Err(format!("vector {i} holds {x}"));
        }
        let norm = v.iter().map(|x| x * x).sum::<f32>().sqrt();
        let mut unit = [0.0f32; VECTOR_MAX];
        if norm > 0.0 && norm.is_finite() {
            for (u, x) in unit.iter_mut().zip(v) {
                *u = x / norm;
            }
        }
        out.push(unit);
    }
    Ok(out)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn vectors_are_scaled_to_unit_length_and_padded() {
        let mut length = None;
        let v = fit(2, &[vec![3.0, 4.0], vec![0.0, 0.0]], &mut length).unwrap();
        assert_eq!(&v[0][..3], &[0.6, 0.8, 0.0]);
        assert!(v[0][2..].iter().all(|x| *x == 0.0));
        assert!(
            v[1].iter().all(|x| *x == 0.0),
            "a zero vector is near nothing"
        );
        assert_eq!(length, Some(2));
    }

    #[test]
    fn a_broken_contract_fails_the_call() {
        let mut length = None;
        assert!(
            fit(2, &[vec![1.0]], &mut length)
                .unwrap_err()
                .contains("1 vectors for 2 texts")
        );
        assert!(fit(1, &[vec![]], &mut length).is_err());
        assert!(fit(1, &[vec![1.0; VECTOR_MAX + 1]], &mut length).is_err());
        assert!(
            fit(1, &[vec![f32::NAN]], &mut length)
                .unwrap_err()
                .contains("NaN")
        );
        assert!(fit(1, &[vec![f32::INFINITY, 1.0]], &mut length).is_err());
        let mut length = Some(3);
        assert!(
            fit(1, &[vec![1.0, 2.0]], &mut length)
                .unwrap_err()
                .contains("where the others have 3"),
            "every batch's vectors have one length"
        );
    }
}
