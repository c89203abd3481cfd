//! The bilingual lexicon manual_find translates a question's words with: JMdict's Japanese-to-English part, which `kura models install`
//! keeps in the state folder (in `kura_text::lexicon`'s form). It is
//! mapped, not read: its pages are shared by every kura on the folder. The
//! translations reach the index query as words of the question's own
//! weight, only for a question mostly in Japanese over a manual that is
//! not. (vault_find measured no gain from them: see docs/decisions.md.)

use std::path::{Path, PathBuf};
use std::sync::OnceLock;

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

/// A domain's translator: the installed lexicon, mapped on first use.
pub struct Translator {
    state_dir: Option<PathBuf>,
    enabled: bool,
    lexicon: OnceLock<Option<Installed>>,
}

impl Translator {
    /// `enabled` is `translations_enabled`.
    pub fn new(state_dir: Option<PathBuf>, enabled: bool) -> Translator {
        Translator {
            state_dir,
            enabled,
            lexicon: OnceLock::new(),
        }
    }

    /// `question`'s words in English, when it is mostly Japanese (none when
    /// translation is off or no lexicon is installed).
    pub fn translate(&self, question: &str) -> Vec<String> {
        if !self.enabled || !super::dense::mostly_cjk(question) {
            return Vec::new();
        }
        let lexicon = self
            .lexicon
            .get_or_init(|| installed(self.state_dir.as_deref()));
        lexicon
            .as_ref()
            .map(|l| l.translate(question))
            .unwrap_or_default()
    }
}
