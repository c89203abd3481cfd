//! The vault's search index (a [`LiveIndex`], one per vault root): its notes
//! (`.md`, `.markdown`, `.txt`; `.system/` left out) split at their headings.

use crate::fs::{RelPath, Root};
use crate::graph::facts::Facts;
use crate::index::{Extracted, LiveIndex, markdown_units};

/// Under `.system/`, the server's own state, never searched or indexed;
/// in any spelling that folds to it ([`crate::policy::names_folder`]).
pub fn is_reserved(p: &RelPath) -> bool {
    p.segments()
        .first()
        .is_some_and(|s| crate::policy::names_folder(s, crate::policy::RESERVED))
}

/// Under `.trash/`, where vault_delete puts notes (Obsidian's convention):
/// kept, restorable, but no longer part of the vault's notes.
pub fn is_trash(p: &RelPath) -> bool {
    p.segments()
        .first()
        .is_some_and(|s| crate::policy::names_folder(s, TRASH))
}

/// The trash folder at the vault's top.
pub const TRASH: &str = ".trash";

/// Whether the index holds this file.
pub fn indexable(p: &RelPath) -> bool {
    let reserved = is_reserved(p) || is_trash(p);
    let ext = p.extension().map(|e| e.to_ascii_lowercase());
    !reserved && matches!(ext.as_deref(), Some("md" | "markdown" | "txt"))
}

/// A note's sections, and (for markdown) its links, tags and properties
/// kept with it in the manifest.
fn extract(path: &RelPath, text: &str) -> Extracted {
    let markdown = path
        .extension()
        .is_some_and(|e| e.eq_ignore_ascii_case("md") || e.eq_ignore_ascii_case("markdown"));
    let meta = markdown
        .then(|| Facts::of(text))
        .filter(|f| *f != Facts::default())
        .and_then(|f| serde_json::value::to_raw_value(&f).ok());
    Extracted {
        units: markdown_units(text),
        meta,
        ..Extracted::default()
    }
}

/// The vault's index, opened on first use.
pub fn open(root: &Root, state_dir: Option<&std::path::Path>) -> LiveIndex {
    LiveIndex::new("vault", root, state_dir, indexable, extract)
}
