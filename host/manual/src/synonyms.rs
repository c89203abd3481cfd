//! The synonym dictionaries manual_find expands a query with: the one
//! `kura models install` keeps in the state folder (Sudachi's, Japanese
//! with English equivalents), and a manual's own `synonyms.txt` at the top
//! of its folder, in the same form (`kura_text::synonyms`), read at each
//! search of that manual so that an edit counts at once. The synonyms reach
//! the index query below the query's own words; nothing else of the search
//! changes.

use std::path::Path;

use kura_text::synonyms::{Synonyms, expand};

use crate::fs::{RelPath, Root, StateDir};

/// The npm package `kura models install` takes the dictionary from, pinned
/// (its digest is checked by the installer).
pub const PACKAGE: &str = "sudachi-synonyms-dictionary";
pub const VERSION: &str = "18.0.0";
/// Where `kura models install` keeps the dictionary (its manifest last).
pub const INSTALLED: &str = "synonyms/sudachi/groups.txt";
pub const INSTALLED_LICENSE: &str = "synonyms/sudachi/LICENSE";
pub const INSTALLED_MANIFEST: &str = "synonyms/sudachi/SYNONYMS";
/// A manual's own dictionary, at the top of its folder.
pub const MANUAL_FILE: &str = "synonyms.txt";

/// The installed dictionary, if the install finished; None (with one line
/// in the log saying how to add it) when it did not.
pub fn installed(state_path: Option<&Path>) -> Option<Synonyms> {
    let state = state_path.and_then(|p| StateDir::open(p).ok())?;
    let finished = matches!(state.read(INSTALLED_MANIFEST), Ok(Some(_)));
    let text = match state.read(INSTALLED) {
        Ok(Some(bytes)) if finished => String::from_utf8(bytes).ok(),
        _ => None,
    };
    let Some(text) = text else {
        tracing::info!(
            "no synonym dictionary installed: queries are not expanded (`kura models install` adds it)"
        );
        return None;
    };
    let synonyms = Synonyms::parse(&text);
    tracing::info!("synonym dictionary: {} groups", synonyms.groups());
    Some(synonyms)
}

/// `manual`'s own dictionary, if it has one.
fn of_manual(root: &Root, manual: &str) -> Option<Synonyms> {
    let path = RelPath::parse(&format!("{manual}/{MANUAL_FILE}"), false).ok()?;
    let text = root.read_text(&path).ok()?;
    Some(Synonyms::parse(&text))
}

/// The synonyms of `query`'s words, searching `scope` (a manual's own
/// dictionary counts only when the search is limited to it).
pub fn of_query(
    installed: Option<&Synonyms>,
    root: &Root,
    scope: Option<&str>,
    query: &str,
) -> Vec<String> {
    let own = scope.and_then(|m| of_manual(root, m));
    let dicts: Vec<&Synonyms> = own.iter().chain(installed).collect();
    expand(&dicts, query)
        .into_iter()
        .flat_map(|e| e.synonyms)
        .collect()
}
