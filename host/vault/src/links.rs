//! vault_links (a note's links out and in) and vault_notes (the notes a tag
//! and property filter keeps, or the vault's orphans and notes with links
//! that point nowhere): answered from the graph, never by reading notes.

use schemars::JsonSchema;
use serde::Serialize;
use serde_json::{Map, Value};

use super::Vault;
use crate::args::Input;
use crate::error::{Code, Error, Result};
use crate::fs::RelPath;
use crate::graph::facts::Form;
use crate::graph::filter::Filter;
use crate::graph::resolve::Names;
use crate::graph::{self, Graph, Target};

const LIMIT_MAX: i64 = 1000;

#[derive(Input)]
pub struct LinksInput {
    /// A note or attachment path, or a link target such as `Note A`
    #[arg(nonempty)]
    pub path: String,
    /// Most links and backlinks, each (default 100)
    #[arg(min = 1, max = LIMIT_MAX)]
    pub limit: Option<i64>,
}

#[derive(Debug, Serialize, JsonSchema)]
pub struct LinkOut {
    /// As written ("" for a place in the note itself).
    pub target: String,
    /// A heading, or `^id` for a block.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub fragment: Option<String>,
    pub form: Form,
    pub line: u32,
    /// The file it points to; null when none.
    pub resolved: Option<String>,
}

#[derive(Debug, Serialize, JsonSchema)]
pub struct Backlink {
    pub path: String,
    pub line: u32,
    pub form: Form,
    /// The line the link is on.
    pub context: String,
}

#[derive(Debug, Serialize, JsonSchema)]
pub struct LinksOutput {
    pub path: String,
    pub links: Vec<LinkOut>,
    pub backlinks: Vec<Backlink>,
    pub tags: Vec<String>,
    pub aliases: Vec<String>,
    pub properties: Map<String, Value>,
    /// More links or backlinks than `limit`.
    pub truncated: bool,
}

/// What vault_notes keeps.
pub const ONLY: [&str; 2] = ["orphans", "unresolved"];

#[derive(Input)]
pub struct NotesInput {
    /// `#tag`, `key = value` (!=, <, <=, >, >=), `key contains value`, `key exists`, joined by `and`
    pub filter: Option<String>,
    /// `orphans` (nothing links to them) or `unresolved` (with broken links)
    #[arg(one_of = ONLY)]
    pub only: Option<&'static str>,
    /// Most notes to return (default 50)
    #[arg(min = 1, max = LIMIT_MAX)]
    pub limit: Option<i64>,
}

#[derive(Debug, Serialize, JsonSchema)]
pub struct Unresolved {
    pub target: String,
    pub line: u32,
    pub form: Form,
}

#[derive(Debug, Serialize, JsonSchema)]
pub struct NoteOut {
    pub path: String,
    pub tags: Vec<String>,
    pub properties: Map<String, Value>,
    /// Links out of the note.
    pub links: u64,
    /// Links to it from other notes.
    pub backlinks: u64,
    #[serde(skip_serializing_if = "Vec::is_empty")]
    pub unresolved: Vec<Unresolved>,
}

#[derive(Debug, Serialize, JsonSchema)]
pub struct NotesOutput {
    pub notes: Vec<NoteOut>,
    /// Notes that passed, before `limit`.
    pub total: u64,
    pub truncated: bool,
}

/// What a vault_links `path` names.
enum Subject {
    Note(usize),
    /// A file that is not a note (an image, a PDF): only backlinks.
    File(String),
}

impl Vault {
    /// The graph as the index is now.
    pub(crate) fn current_graph(&self) -> Result<std::sync::Arc<Graph>> {
        self.graph.current(&self.index, &self.root)
    }

    /// The vault's attachments, as of the graph's last refresh.
    fn attachments(&self) -> Result<std::sync::Arc<Names>> {
        self.graph.attachments(&self.index, &self.root)
    }

    /// The notes `filter` keeps (None: no filter, every file).
    pub(crate) fn kept_by(
        &self,
        filter: Option<&str>,
    ) -> Result<Option<std::collections::HashSet<String>>> {
        let Some(filter) = filter.map(Filter::parse).transpose()? else {
            return Ok(None);
        };
        let g = self.current_graph()?;
        Ok(Some(
            g.kept(&filter)
                .into_iter()
                .map(|i| g.notes[i].path.clone())
                .collect(),
        ))
    }

    fn subject(&self, g: &Graph, path: &str) -> Result<Subject> {
        if let Some(i) = g.find(path) {
            return Ok(Subject::Note(i));
        }
        let rel = RelPath::parse(path, false)?;
        if self.root.stat(&rel)?.is_some_and(|s| !s.is_dir) {
            return Ok(Subject::File(rel.to_string()));
        }
        // A wikilink target, as a note would write it at the vault's top.
        match g.names().resolve("", path, Form::Wikilink) {
            Some(i) => Ok(Subject::Note(i)),
            None => Err(Error::new(
                Code::NotFound,
                format!("no note or file `{path}` in the vault"),
            )
            .with("path", path)),
        }
    }

    pub fn links(&self, input: LinksInput) -> Result<LinksOutput> {
        let g = self.current_graph()?;
        let limit = input.limit.unwrap_or(100) as usize;
        match self.subject(&g, &input.path)? {
            Subject::Note(i) => self.note_links(&g, i, limit),
            Subject::File(path) => {
                let files = self.attachments()?;
                let mut backlinks: Vec<Backlink> = g
                    .unresolved()
                    .filter(|&(i, k)| {
                        matches!(g.target(i, k, Some(&files)), Target::File(p) if p == path)
                    })
                    .map(|(i, k)| backlink(&g, i, k))
                    .collect();
                let truncated = backlinks.len() > limit;
                backlinks.truncate(limit);
                Ok(LinksOutput {
                    path,
                    links: Vec::new(),
                    backlinks,
                    tags: Vec::new(),
                    aliases: Vec::new(),
                    properties: Map::new(),
                    truncated,
                })
            }
        }
    }

    fn note_links(&self, g: &Graph, i: usize, limit: usize) -> Result<LinksOutput> {
        let note = &g.notes[i];
        let facts = &note.facts;
        // The files are walked only for a note with a link no note answers
        // that may be to an attachment.
        let maybe_file = g
            .targets(i)
            .iter()
            .zip(&facts.links)
            .any(|(t, l)| t.is_none() && graph::may_name_a_file(l));
        let files: Option<std::sync::Arc<Names>> = if maybe_file {
            Some(self.attachments()?)
        } else {
            None
        };
        let links: Vec<LinkOut> = facts
            .links
            .iter()
            .enumerate()
            .take(limit)
            .map(|(k, l)| LinkOut {
                target: l.target.clone(),
                fragment: l.fragment.clone(),
                form: l.form,
                line: l.line,
                resolved: match g.target(i, k, files.as_deref()) {
                    Target::Note(t) => Some(g.notes[t].path.clone()),
                    Target::File(p) => Some(p.to_owned()),
                    Target::Missing => None,
                },
            })
            .collect();
        let back = g.backlinks(i);
        let backlinks = back
            .iter()
            .take(limit)
            .map(|e| backlink(g, e.from as usize, e.link as usize))
            .collect();
        Ok(LinksOutput {
            path: note.path.clone(),
            links,
            backlinks,
            tags: facts.tags.clone(),
            aliases: facts.aliases.clone(),
            properties: facts.props.clone(),
            truncated: facts.links.len() > limit || back.len() > limit,
        })
    }

    pub fn notes(&self, input: NotesInput) -> Result<NotesOutput> {
        let filter = input.filter.as_deref().map(Filter::parse).transpose()?;
        let g = self.current_graph()?;
        let limit = input.limit.unwrap_or(50) as usize;
        let files = match input.only {
            Some("unresolved") => Some(self.attachments()?),
            _ => None,
        };
        let mut notes = Vec::new();
        let mut total = 0u64;
        let pool: Vec<usize> = match &filter {
            Some(f) => g.kept(f),
            None => (0..g.notes.len()).collect(),
        };
        for i in pool {
            let note = &g.notes[i];
            let unresolved: Vec<Unresolved> = match &files {
                Some(files) => (0..note.facts.links.len())
                    .filter(|&k| matches!(g.target(i, k, Some(files)), Target::Missing))
                    .map(|k| {
                        let l = &note.facts.links[k];
                        Unresolved {
                            target: l.target.clone(),
                            line: l.line,
                            form: l.form,
                        }
                    })
                    .collect(),
                None => Vec::new(),
            };
            let keep = match input.only {
                Some("orphans") => g.backlinks(i).is_empty(),
                Some(_) => !unresolved.is_empty(),
                None => true,
            };
            if !keep {
                continue;
            }
            total += 1;
            if notes.len() < limit {
                notes.push(NoteOut {
                    path: note.path.clone(),
                    tags: note.facts.tags.clone(),
                    properties: note.facts.props.clone(),
                    links: note.facts.links.len() as u64,
                    backlinks: g.backlinks(i).len() as u64,
                    unresolved,
                });
            }
        }
        Ok(NotesOutput {
            truncated: total > notes.len() as u64,
            notes,
            total,
        })
    }
}

fn backlink(g: &Graph, from: usize, k: usize) -> Backlink {
    let l = &g.notes[from].facts.links[k];
    Backlink {
        path: g.notes[from].path.clone(),
        line: l.line,
        form: l.form,
        context: l.context.clone(),
    }
}
