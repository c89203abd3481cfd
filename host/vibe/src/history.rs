//! vibe's `history` and `undo`: kura-domain's history over the workspace's
//! root, and the index told of what an undo changed.

use crate::domain::history::{self, HistoryInput, HistoryOutput, UndoInput, UndoOutput};
use crate::error::Result;
use crate::fs::RelPath;
use crate::{Vibe, as_vibe};

/// The characters of a change's diff.
const DIFF_MAX_CHARS: usize = 12_000;

impl Vibe {
    pub fn history(&self, input: HistoryInput) -> Result<HistoryOutput> {
        history::list(self.history.as_ref(), input, DIFF_MAX_CHARS, |p| {
            RelPath::parse(p, true).map_err(as_vibe)
        })
    }

    pub fn undo(&self, input: UndoInput) -> Result<UndoOutput> {
        history::undo(self.history.as_ref(), &self.root, input, "undo", |p| {
            self.written(p);
        })
    }
}
