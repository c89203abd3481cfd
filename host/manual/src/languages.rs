//! What each manual is written in and how large it is: manual_ls lists it,
//! and a search whose question is in another language says so (issue 55).
//! Judged on a sample of each manual's files, kept until the index changes.

use std::sync::Arc;

use crate::Manuals;
use crate::error::Result;
use crate::fs::RelPath;
use crate::text::lang::{self, Profile, Written};

impl Manuals {
    /// What `manual` (a manual's folder name) is written in, judged again
    /// when the index has changed since.
    pub fn written(&self, manual: &str) -> Result<Arc<Written>> {
        let dir = RelPath::parse(manual, false)?;
        self.languages
            .of(self.index.generation(), &self.root, &dir, |p| {
                crate::FileType::of(p).is_some()
            })
    }

    /// The one sentence a search says when the caller gave no phrasings
    /// and its question is in another language than the manuals searched
    /// (`scope`: one, or all), or it matched `weak`ly: what to pass as
    /// `queries`, naming the manuals' language.
    pub(crate) fn phrasing_hint(
        &self,
        query: &str,
        scope: Option<&str>,
        weak: bool,
    ) -> Option<String> {
        let manuals: Vec<String> = match scope {
            Some(m) => vec![m.to_owned()],
            None => self
                .root
                .list(&RelPath::root())
                .ok()?
                .into_iter()
                .filter(|e| e.kind == crate::fs::EntryKind::Dir)
                .map(|e| e.name)
                .collect(),
        };
        let mut profile = Profile::default();
        for m in &manuals {
            profile.merge(&self.written(m).ok()?.profile);
        }
        let what = if manuals.len() == 1 {
            "the manual is"
        } else {
            "the manuals are"
        };
        lang::hint(&profile, query, what, weak)
    }
}
