//! What the vault's notes are written in: vault_ls of the root says so, and
//! vault_find says so when its question is in another language or found
//! little (issue 55). Judged on a sample of the notes, kept until the index
//! changes.

use std::sync::Arc;

use crate::Vault;
use crate::error::Result;
use crate::fs::RelPath;
use crate::text::lang::{self, Written};

impl Vault {
    /// What the notes (`.md` files outside `.system/` and `.trash/`) are
    /// written in.
    pub fn written(&self) -> Result<Arc<Written>> {
        self.languages
            .of(self.index.generation(), &self.root, &RelPath::root(), |p| {
                let s = p.to_string();
                s.ends_with(".md") && !s.starts_with(".system/") && !s.starts_with(".trash/")
            })
    }

    /// vault_find's sentence for a caller who gave no `queries`.
    pub(crate) fn phrasing_hint(&self, query: &str, weak: bool) -> Option<String> {
        let w = self.written().ok()?;
        lang::hint(&w.profile, query, "the notes are", weak)
    }
}
