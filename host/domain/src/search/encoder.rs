//! What turns texts into sentence vectors: an embedder component when one
//! is configured (`[plugins] embedder`), else kura's own encoder when its
//! model is installed in the state folder, else nothing (search matches
//! words only, and the log says how to add the model).
//!
//! The encoder's identity names the file its vectors are kept in, so
//! vectors made by one encoder are never compared with another's question.

use std::path::{Path, PathBuf};
use std::sync::{Arc, Mutex, Weak};

use kura_embed::wheel::USE_M3;
use kura_embed::{DIM, Model, store};

use crate::fs::StateDir;
use crate::plugins::{Embedder, Plugins, VECTOR_MAX};

/// What of a text kura's own encoder reads: at most this many tokens.
const MAX_TOKENS: usize = 128;
/// Threads that embed (the machine kura is measured on has two cores).
const THREADS: usize = 2;
const _: () = assert!(VECTOR_MAX == DIM, "a component's vectors fit kura's");

/// Where a domain's encoder comes from.
#[derive(Clone)]
pub struct Source {
    pub state_dir: Option<PathBuf>,
    pub plugins: Option<Arc<Plugins>>,
    /// `dense_search_enabled`: false means no encoder at all.
    pub enabled: bool,
}

impl Source {
    /// Whether [`Source::open`] may find an encoder (a component is
    /// configured, or a model's manifest is in the state folder): cheap,
    /// and loads nothing.
    pub fn expected(&self) -> bool {
        self.enabled
            && (self.plugins.as_ref().is_some_and(|p| p.has_embedder())
                || self.state_dir.as_deref().is_some_and(|dir| {
                    StateDir::open(dir)
                        .ok()
                        .and_then(|state| store::installed(|name| state.read(name)).ok())
                        .flatten()
                        .is_some()
                }))
    }

    /// The encoder, if any (a component still compiling is waited for:
    /// this runs in the background, after the lexical index).
    pub fn open(&self) -> Option<Encoder> {
        if !self.enabled {
            return None;
        }
        match self.plugins.as_ref().and_then(|p| p.embedder()) {
            Some(Ok(e)) => {
                tracing::info!(
                    "sentence vectors from the embedder component {} ({})",
                    e.source(),
                    e.identity()
                );
                return Some(Encoder::Component(e));
            }
            Some(Err(e)) => {
                tracing::warn!("search matches words only: {}", e.message);
                return None;
            }
            None => {}
        }
        shared_model(self.state_dir.as_deref()?).map(Encoder::Native)
    }
}

/// A loaded encoder.
pub enum Encoder {
    /// kura's own, from the model in the state folder.
    Native(Arc<Model>),
    Component(Embedder),
}

impl Encoder {
    /// Names the vectors it makes (part of their file's name).
    pub fn identity(&self) -> String {
        match self {
            Encoder::Native(_) => "use-m3".into(),
            Encoder::Component(e) => e.identity(),
        }
    }

    /// One unit vector per text, or why there are none.
    pub fn embed(&self, texts: &[String]) -> Result<Vec<[f32; DIM]>, String> {
        match self {
            Encoder::Native(m) => Ok(m.embed_all(texts, MAX_TOKENS, THREADS)),
            Encoder::Component(e) => e.embed(texts).map_err(|e| e.message),
        }
    }

    /// A question's vector; None (and a line in the log) when the
    /// component fails.
    pub fn question(&self, text: &str) -> Option<[f32; DIM]> {
        match self {
            Encoder::Native(m) => Some(m.embed(text, MAX_TOKENS)),
            Encoder::Component(e) => match e.embed(&[text.to_owned()]) {
                Ok(v) => v.into_iter().next(),
                Err(e) => {
                    tracing::warn!("this search matches words only: {}", e.message);
                    None
                }
            },
        }
    }
}

/// The model installed in `state`, if any: the prepared weights mapped
/// from the folder (made from the package's arrays and kept there the
/// first time).
pub fn load(state: &StateDir) -> Result<Option<Model>, store::LoadError> {
    let files = store::Files {
        read: |name: &str| state.read(name),
        map: |name: &str| {
            let mapped = state.map(name)?;
            Ok(mapped.map(|m| Arc::new(m) as kura_embed::encoder::Bytes))
        },
        write: |name: &str, bytes: &[u8]| state.write(name, bytes),
    };
    store::load(&USE_M3, files)
}

/// The encoder installed in the state folder at `state_path`, loaded once
/// per process however many domains use it; None (with one line in the log
/// saying how to add it) when it is not installed.
fn shared_model(state_path: &Path) -> Option<Arc<Model>> {
    static LOADED: Mutex<Vec<(PathBuf, Weak<Model>)>> = Mutex::new(Vec::new());
    let mut loaded = LOADED.lock().unwrap_or_else(|e| e.into_inner());
    loaded.retain(|(_, m)| m.strong_count() > 0);
    if let Some(m) = loaded
        .iter()
        .find(|(p, _)| p == state_path)
        .and_then(|(_, m)| m.upgrade())
    {
        return Some(m);
    }
    let state = StateDir::open(state_path).ok()?;
    match load(&state) {
        Ok(Some(m)) => {
            let m = Arc::new(m);
            loaded.push((state_path.to_owned(), Arc::downgrade(&m)));
            Some(m)
        }
        Ok(None) => {
            tracing::info!(
                "no sentence encoder installed: search is lexical only (`kura models install` adds it)"
            );
            None
        }
        Err(e) => {
            tracing::warn!("the sentence encoder is not used: {e}");
            None
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// A search beside a first build says "matched words only" only when
    /// an encoder may exist: without a model or component it says nothing.
    #[test]
    fn no_encoder_is_expected_without_a_model_or_a_component() {
        let dir = tempfile::tempdir().unwrap();
        let source = |enabled| Source {
            state_dir: Some(dir.path().to_owned()),
            plugins: None,
            enabled,
        };
        assert!(!source(true).expected());
        let state = StateDir::open(dir.path()).unwrap();
        state
            .write(store::MANIFEST, b"some-package 1.0 0123\n")
            .unwrap();
        assert!(source(true).expected());
        assert!(!source(false).expected());
    }
}
