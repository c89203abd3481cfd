//! vault_history and vault_undo: the vault's history (kura-domain's
//! `history`, over the vault's root), and the index told of what an undo
//! changed.

use crate::Vault;
use crate::domain::history::{self, HistoryInput, HistoryOutput, UndoInput, UndoOutput};
use crate::error::Result;
use crate::fs::RelPath;

impl Vault {
    pub fn history(&self, input: HistoryInput) -> Result<HistoryOutput> {
        history::list(self.history.as_ref(), input, self.max_chars, |p| {
            RelPath::parse(p, true)
        })
    }

    pub fn undo(&self, input: UndoInput) -> Result<UndoOutput> {
        // A move and an undo each change many files: one at a time.
        let _one = self.moving.lock().unwrap_or_else(|e| e.into_inner());
        history::undo(
            self.history.as_ref(),
            &self.root,
            input,
            "vault_undo",
            |p| {
                self.index.written(&self.root, p);
            },
        )
    }
}
