//! vault_links (a note's links out and in) and vault_notes (the notes a tag
//! and property filter keeps, or the vault's orphans and notes with links
//! that point nowhere): answered from the graph, never by reading notes.

use schemars::JsonSchema;
use serde::Serialize;
use serde_json::{Map, Value};

use super::Vault;
use crate::args::Input;
use crate::error::{Code, Error, Result};
use crate::expr::env::Env;
use crate::expr::eval::{Row, Vars};
use crate::expr::value::{FileRef, Val, sort_order_by};
use crate::filter::Filter;
use crate::fs::RelPath;
use crate::graph::facts::Form;
use crate::graph::resolve::Names;
use crate::graph::{self, Graph, Target};
use crate::query::Skipped;

const LIMIT_MAX: i64 = 1000;

#[derive(Input)]
pub struct LinksInput {
    /// Note or attachment path, or link target (`Note A`)
    #[arg(nonempty)]
    pub path: String,
    /// Max per list (default 100)
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
    /// A Bases expression, or clauses (`#tag and status = done`)
    pub filter: Option<String>,
    /// orphans (no backlinks) or unresolved (broken links)
    #[arg(one_of = ONLY)]
    pub only: Option<&'static str>,
    /// Sort keys, each `name` or `name desc`
    pub sort: Option<Vec<String>>,
    /// Properties to return (`file.*` too)
    pub properties: Option<Vec<String>>,
    /// Max notes (default 50)
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
    /// Notes left out because a property was not of its type or the
    /// filter failed on them: how many, and the first reasons.
    #[serde(skip_serializing_if = "Vec::is_empty")]
    pub warnings: Vec<String>,
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
    pub(crate) fn attachments(&self) -> Result<std::sync::Arc<Names>> {
        self.graph.attachments(&self.index, &self.root)
    }

    /// The notes `filter` keeps (None: no filter, every file).
    pub(crate) fn kept_by(
        &self,
        filter: Option<&str>,
        job: crate::job::Job,
    ) -> Result<Option<std::collections::HashSet<String>>> {
        let Some(text) = filter else {
            return Ok(None);
        };
        let filter = Filter::parse(text)?;
        let cx = self.context()?;
        let kept = self.keep(&cx, &filter, text, job)?;
        Ok(Some(
            kept.notes
                .into_iter()
                .map(|i| cx.graph.notes[i].path.clone())
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

    pub fn notes(&self, input: NotesInput, job: crate::job::Job) -> Result<NotesOutput> {
        let filter = input.filter.as_deref().map(Filter::parse).transpose()?;
        let sort = SortKey::parse_all(input.sort.as_deref())?;
        let chosen = input
            .properties
            .iter()
            .flatten()
            .map(|id| {
                crate::expr::property(id)
                    .map(|e| (id.clone(), e))
                    .map_err(|f| f.error("properties", id))
            })
            .collect::<Result<Vec<_>>>()?;
        let cx = self.context()?;
        let g = cx.graph.clone();
        let env = cx.env(self, None, &[], job);
        let limit = input.limit.unwrap_or(50) as usize;
        let files = match input.only {
            Some("unresolved") => Some(cx.others.clone()),
            _ => None,
        };
        let mut notes = Vec::new();
        let mut total = 0u64;
        let (mut pool, mut skipped) = match (&filter, input.filter.as_deref()) {
            (Some(f), Some(text)) => {
                let k = self.keep(&cx, f, text, job)?;
                (k.notes, k.skipped)
            }
            _ => ((0..g.notes.len()).collect(), Skipped::default()),
        };
        if !sort.is_empty() {
            pool = sorted(&env, pool, &sort, &mut skipped)?;
        }
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
                let properties = if chosen.is_empty() {
                    note.facts.props.clone()
                } else {
                    let row = Row::new(FileRef::Note(i as u32), 0);
                    let mut out = Map::new();
                    let mut failed = None;
                    for (id, e) in &chosen {
                        // A property that fails shows its error, as a
                        // base's cell does, and counts in `warnings`.
                        let v = match env.eval(e, &row, Vars::default()) {
                            Ok(v) => env.json_of(&v),
                            Err(f) => {
                                if let Some(e) = f.stopped("the properties", id) {
                                    return Err(e);
                                }
                                let why = format!("{} (at column {} of `{id}`)", f.message, f.at);
                                failed.get_or_insert((f, id.clone()));
                                serde_json::json!({ "error": why })
                            }
                        };
                        out.insert(id.clone(), v);
                    }
                    if let Some((f, id)) = failed {
                        skipped.add(&note.path, &f, &id);
                    }
                    out
                };
                notes.push(NoteOut {
                    path: note.path.clone(),
                    tags: note.facts.tags.clone(),
                    properties,
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
            warnings: skipped.warnings(),
        })
    }
}

/// One key of a sort: a property, and whether largest first.
pub struct SortKey {
    pub by: crate::expr::parse::Ex,
    pub id: String,
    pub desc: bool,
}

impl SortKey {
    /// `due`, `due desc`, `file.mtime asc`.
    pub fn parse(s: &str) -> Result<SortKey> {
        let t = s.trim();
        let (id, desc) = match t.rsplit_once(' ') {
            Some((id, d)) if d.eq_ignore_ascii_case("desc") => (id.trim(), true),
            Some((id, d)) if d.eq_ignore_ascii_case("asc") => (id.trim(), false),
            _ => (t, false),
        };
        let by = crate::expr::property(id).map_err(|f| f.error("sort", s))?;
        Ok(SortKey {
            by,
            id: id.to_owned(),
            desc,
        })
    }

    /// A tool's `sort`, each key read.
    pub fn parse_all(sort: Option<&[String]>) -> Result<Vec<SortKey>> {
        sort.unwrap_or_default()
            .iter()
            .map(|s| SortKey::parse(s))
            .collect()
    }
}

/// Notes in the order `keys` put them (ties keep path order); a note whose
/// key fails to evaluate sorts as empty (last) and is counted. `Err`: the
/// query's budget ran out, or its call was cancelled.
fn sorted(
    env: &Env<'_>,
    pool: Vec<usize>,
    keys: &[SortKey],
    skipped: &mut Skipped,
) -> Result<Vec<usize>> {
    let mut keyed: Vec<(usize, Vec<Val>)> = Vec::with_capacity(pool.len());
    for i in pool {
        let row = Row::new(FileRef::Note(i as u32), 0);
        let mut vals = Vec::with_capacity(keys.len());
        let mut counted = false;
        for k in keys {
            match env.eval(&k.by, &row, Vars::default()) {
                Ok(v) => vals.push(v),
                Err(f) => {
                    if let Some(e) = f.stopped("the sort", &k.id) {
                        return Err(e);
                    }
                    if !counted {
                        skipped.add(env.path(row.file), &f, &k.id);
                        counted = true;
                    }
                    vals.push(Val::Null);
                }
            }
        }
        keyed.push((i, vals));
    }
    keyed.sort_by(|a, b| {
        for (k, (x, y)) in keys.iter().zip(a.1.iter().zip(&b.1)) {
            let o = sort_order_by(x, y, k.desc);
            if o != std::cmp::Ordering::Equal {
                return o;
            }
        }
        std::cmp::Ordering::Equal
    });
    Ok(keyed.into_iter().map(|(i, _)| i).collect())
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
