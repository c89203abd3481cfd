//! The bilingual lexicon manual_find translates a question's words with:
//! JMdict's Japanese-to-English part, which `kura models install` keeps in
//! the state folder (in `kura_text::lexicon`'s form). It is mapped, not
//! read: its pages are shared by every kura on the folder. The translations
//! reach the index query as words of the question's own weight, only when
//! the question and the manual are in different scripts.

use std::path::Path;

use kura_text::lexicon::Lexicon;

use crate::fs::StateDir;

/// The pip package `kura models install` takes JMdict from, pinned (its
/// digest is checked by the installer).
pub const PACKAGE: &str = "jamdict-data";
pub const VERSION: &str = "1.5";
/// Where `kura models install` keeps the lexicon (its manifest last).
pub const INSTALLED: &str = "lexicons/jmdict/ja-en.txt";
pub const INSTALLED_LICENSE: &str = "lexicons/jmdict/LICENSE";
pub const INSTALLED_MANIFEST: &str = "lexicons/jmdict/LEXICON";

pub type Installed = Lexicon<memmap2::Mmap>;

/// The installed lexicon, if the install finished; None (with one line in
/// the log saying why) when it did not.
pub fn installed(state_path: Option<&Path>) -> Option<Installed> {
    let state = state_path.and_then(|p| StateDir::open(p).ok())?;
    let finished = matches!(state.read(INSTALLED_MANIFEST), Ok(Some(_)));
    let mapped = match state.map(INSTALLED) {
        Ok(Some(m)) if finished => m,
        _ => {
            tracing::info!(
                "no bilingual lexicon installed: questions are not translated (`kura models install` adds it)"
            );
            return None;
        }
    };
    match Lexicon::new(mapped) {
        Ok(l) => {
            tracing::info!("bilingual lexicon: {} Japanese words", l.len());
            Some(l)
        }
        Err(e) => {
            tracing::warn!(
                "the bilingual lexicon is not used: {e} (`kura models install` makes it again)"
            );
            None
        }
    }
}
