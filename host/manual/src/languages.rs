//! What each manual is written in and how large it is: manual_ls lists it,
//! and a search whose question is in another language says so (issue 55).
//! Judged on a sample of each manual's files, kept until the index changes.

use std::collections::HashMap;
use std::sync::{Arc, Mutex};

use crate::Manuals;
use crate::error::Result;
use crate::fs::RelPath;
use crate::text::lang::Profile;

/// Files of a manual read to judge its languages, spread over the whole
/// manual, and the bytes read of each.
const SAMPLE_FILES: usize = 40;
const SAMPLE_BYTES: usize = 16 << 10;

/// One manual's languages and size.
pub struct Written {
    pub profile: Profile,
    pub files: u64,
    pub bytes: u64,
}

/// Each manual's [`Written`], with the index generation it was judged at.
#[derive(Default)]
pub(crate) struct Languages(Mutex<HashMap<String, (u64, Arc<Written>)>>);

impl Manuals {
    /// What `manual` (a manual's folder name) is written in, judged again
    /// when the index has changed since.
    pub fn written(&self, manual: &str) -> Result<Arc<Written>> {
        let generation = self.index.generation();
        let cached = {
            let held = self.languages.0.lock().unwrap_or_else(|e| e.into_inner());
            held.get(manual)
                .filter(|(g, _)| *g == generation)
                .map(|(_, w)| w.clone())
        };
        if let Some(w) = cached {
            return Ok(w);
        }
        let dir = RelPath::parse(manual, false)?;
        let files: Vec<_> = self
            .root
            .walk_files(&dir)?
            .into_iter()
            .filter(|(p, _)| crate::FileType::of(p).is_some())
            .collect();
        let mut profile = Profile::default();
        let step = files.len().div_ceil(SAMPLE_FILES).max(1);
        for (path, _) in files.iter().step_by(step) {
            if let Ok(bytes) = self.root.read(path) {
                let head = &bytes[..bytes.len().min(SAMPLE_BYTES)];
                profile.add(&String::from_utf8_lossy(head));
            }
        }
        let written = Arc::new(Written {
            profile,
            files: files.len() as u64,
            bytes: files.iter().map(|(_, s)| s.size).sum(),
        });
        self.languages
            .0
            .lock()
            .unwrap_or_else(|e| e.into_inner())
            .insert(manual.to_owned(), (generation, written.clone()));
        Ok(written)
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
        let main = profile.shares().into_iter().next()?;
        let what = if manuals.len() == 1 {
            "the manual is"
        } else {
            "the manuals are"
        };
        let written = format!(
            "{what} written in {} ({:.0}%)",
            main.name,
            main.share * 100.0
        );
        let pass = format!(
            "pass `queries` with the question in {} and terms its pages would use",
            main.name
        );
        match profile.other_language(query) {
            Some(asked) => Some(format!(
                "the question reads as {asked} and {written}: {pass}"
            )),
            None if weak => Some(format!(
                "few of the question's words were found, and {written}: {pass}"
            )),
            None => None,
        }
    }
}
