//! manual_ls and manual_toc (seed 004).

use schemars::JsonSchema;
use serde::Serialize;

use super::{FileType, Manuals};
use crate::args::Input;
use crate::error::{Error, Result};
use crate::fs::{EntryKind, RelPath};
use crate::text::markdown;

#[derive(Debug, Serialize, JsonSchema)]
pub struct LsItem {
    /// Pass this back as `id` to list a folder.
    pub id: String,
    pub name: String,
    /// `dir` or `file`.
    pub kind: String,
    /// Path inside the manual (absent for the manuals themselves).
    #[serde(skip_serializing_if = "Option::is_none")]
    pub path: Option<String>,
    /// `md` or `json`, for files.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub file_type: Option<String>,
    /// For a manual: the languages it is written in, most first, each
    /// with its share of the text (judged on a sample of its files).
    #[serde(skip_serializing_if = "Option::is_none")]
    pub languages: Option<Vec<crate::text::lang::Share>>,
    /// For a manual: its .md and .json files, and their bytes.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub files: Option<u64>,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub bytes: Option<u64>,
}

#[derive(Debug, Serialize, JsonSchema)]
pub struct LsOutput {
    pub id: String,
    pub items: Vec<LsItem>,
}

#[derive(Debug, Serialize, JsonSchema)]
pub struct TocHeading {
    pub title: String,
    pub line_start: u64,
}

#[derive(Debug, Serialize, JsonSchema)]
pub struct TocItem {
    pub path: String,
    pub headings: Vec<TocHeading>,
}

#[derive(Debug, Serialize, JsonSchema)]
pub struct TocOutput {
    pub items: Vec<TocItem>,
}

#[derive(Input)]
pub struct LsInput {
    /// `manuals` (default), a manual id, or a listed folder id
    pub id: Option<String>,
}

#[derive(Input)]
pub struct TocInput {
    /// Manual id (folder name)
    pub manual_id: String,
}

/// `a/b/c` without its first segment (the manual): the path inside the manual.
fn inside(p: &RelPath) -> String {
    p.segments()[1..].join("/")
}

impl Manuals {
    pub fn ls(&self, input: LsInput) -> Result<LsOutput> {
        let id = input.id.as_deref().unwrap_or("manuals");
        if id == "manuals" {
            let mut items = Vec::new();
            for e in self.root.list(&RelPath::root())? {
                if e.kind != EntryKind::Dir {
                    continue;
                }
                let w = self.written(&e.name)?;
                items.push(LsItem {
                    id: e.name.clone(),
                    name: e.name,
                    kind: "dir".into(),
                    path: None,
                    file_type: None,
                    languages: Some(w.profile.shares()),
                    files: Some(w.files),
                    bytes: Some(w.bytes),
                });
            }
            return Ok(LsOutput {
                id: id.into(),
                items,
            });
        }
        let dir = RelPath::parse(id, false)?;
        match self.root.stat(&dir)? {
            None => {
                return Err(Error::new(
                    crate::error::Code::NotFound,
                    format!("no manual folder `{id}`"),
                )
                .with("id", id));
            }
            Some(s) if !s.is_dir => {
                return Err(Error::invalid_parameter(
                    "id",
                    format!("`{id}` is a file; only `manuals` and folders can be listed"),
                )
                .with("id", id));
            }
            Some(_) => {}
        }
        let mut items = Vec::new();
        for e in self.root.list(&dir)? {
            let child = dir.join(&e.name);
            let file_type = match e.kind {
                EntryKind::Dir => None,
                EntryKind::File => match FileType::of(&child) {
                    Some(t) => Some(t.as_str().to_owned()),
                    None => continue, // only .md and .json are manual files
                },
            };
            items.push(LsItem {
                id: child.to_string(),
                name: e.name,
                kind: if file_type.is_some() { "file" } else { "dir" }.into(),
                path: Some(inside(&child)),
                file_type,
                languages: None,
                files: None,
                bytes: None,
            });
        }
        Ok(LsOutput {
            id: dir.to_string(),
            items,
        })
    }

    pub fn toc(&self, input: TocInput) -> Result<TocOutput> {
        let manual = self.manual(&input.manual_id, "manual_id")?;
        let mut items = Vec::new();
        for (file, _) in self.root.walk_files(&manual)? {
            if FileType::of(&file) != Some(FileType::Md) {
                continue;
            }
            let Ok(text) = self.root.read_text(&file) else {
                continue;
            };
            items.push(TocItem {
                path: inside(&file),
                headings: markdown::headings(&text)
                    .into_iter()
                    .map(|h| TocHeading {
                        title: h.title,
                        line_start: h.line as u64,
                    })
                    .collect(),
            });
        }
        Ok(TocOutput { items })
    }
}
