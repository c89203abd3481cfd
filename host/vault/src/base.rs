//! vault_base: a `.base` file, or a ```` ```base ```` block of a note,
//! evaluated as Obsidian's Bases evaluates it: every file of the vault
//! (hidden folders, `.system/` and `.trash/` left out) kept by the global
//! and the view's `filters` (`and`/`or`/`not`, nested), the base's
//! `formulas`, the view's `order` as columns (named by `properties`'
//! `displayName`), `sort`, `groupBy`, `limit` and `summaries`. Answered
//! from the graph the index keeps; only the base itself is read.

mod spec;

use schemars::JsonSchema;
use serde::Serialize;
use serde_json::{Map, Value};

use super::Vault;
use crate::args::Input;
use crate::error::{Code, Error, Result};
use rayon::prelude::*;

use crate::expr::Fault;
use crate::expr::env::Env;
use crate::expr::eval::{Row, Vars};
use crate::expr::parse::Ex;
use crate::expr::value::{FileRef, Val, sort_order, sort_order_by};
use crate::fs::RelPath;
use crate::query::Skipped;
use spec::{Base, Cond};

const LIMIT_MAX: i64 = 1000;

#[derive(Input)]
pub struct BaseInput {
    /// `.base` file, or note with a ```base block
    #[arg(nonempty)]
    pub path: String,
    /// View name (default: the first)
    pub view: Option<String>,
    /// Which ```base block (default 1)
    #[arg(min = 1, max = 1000)]
    pub block: Option<i64>,
    /// Most rows (default 50)
    #[arg(min = 1, max = LIMIT_MAX)]
    pub limit: Option<i64>,
    /// Previous next_cursor
    #[arg(min = 0)]
    pub cursor: Option<i64>,
    /// Note embedding it (`![[X.base]]`): `this`
    pub embedded_in: Option<String>,
}

#[derive(Debug, Serialize, JsonSchema)]
pub struct Column {
    /// The property as the view names it: `file.name`, `status`, `formula.ppu`.
    pub id: String,
    /// Its `displayName`, or the id.
    pub name: String,
}

#[derive(Debug, Serialize, JsonSchema)]
pub struct RowOut {
    pub path: String,
    /// Each column's value, by column id (dates in ISO 8601, links as the
    /// path they resolve to).
    pub values: Map<String, Value>,
    /// The row's group value, when the view groups.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub group: Option<Value>,
}

#[derive(Debug, Serialize, JsonSchema)]
pub struct GroupOut {
    pub value: Value,
    pub count: u64,
}

#[derive(Debug, Serialize, JsonSchema)]
pub struct BaseOutput {
    pub path: String,
    /// The view evaluated.
    pub view: String,
    /// Its layout (`table`, `cards`, `list`, `map`, ...): the rows are the same.
    #[serde(rename = "type")]
    pub kind: String,
    /// Every view of the base, by name.
    pub views: Vec<String>,
    pub columns: Vec<Column>,
    pub rows: Vec<RowOut>,
    /// Each group in order with its row count, when the view groups.
    #[serde(skip_serializing_if = "Vec::is_empty")]
    pub groups: Vec<GroupOut>,
    /// The view's summaries, by column id.
    #[serde(skip_serializing_if = "Map::is_empty")]
    pub summaries: Map<String, Value>,
    /// Rows the view has (after its own `limit`).
    pub total: u64,
    pub truncated: bool,
    /// Pass as `cursor` for the next rows; null when none are left.
    pub next_cursor: Option<u64>,
    /// Files left out because a property was not of its type or an
    /// expression failed on them: how many, and the first reasons.
    #[serde(skip_serializing_if = "Vec::is_empty")]
    pub warnings: Vec<String>,
}

/// The formats Obsidian recognises (its help, "Accepted file formats":
/// notes, images, audio, video, PDF), and its own canvases and bases: the
/// files a base lists. A `data.csv` or a `script.py` is in the vault but
/// in no view.
const FORMATS: &[&str] = &[
    "md", "avif", "bmp", "gif", "jpeg", "jpg", "png", "svg", "webp", "flac", "m4a", "mp3", "ogg",
    "wav", "webm", "3gp", "mkv", "mov", "mp4", "ogv", "pdf", "canvas", "base",
];

/// Whether Obsidian shows this file: of a format it recognises, and no
/// segment hidden (`.obsidian/`, `.trash/`, `.system/`).
fn shown(path: &str) -> bool {
    let name = path.rsplit('/').next().unwrap_or(path);
    let known = name.rsplit_once('.').is_some_and(|(stem, ext)| {
        !stem.is_empty() && FORMATS.iter().any(|f| ext.eq_ignore_ascii_case(f))
    });
    known && !path.split('/').any(|s| s.starts_with('.'))
}

/// A row of a view and the first expression that failed in it (counted
/// in `warnings`), or none when the filters leave the file out.
type Made = Option<(Work, Option<(Fault, String)>)>;

/// One row while the view is worked out.
struct Work {
    file: FileRef,
    keys: Vec<Val>,
    group: Option<Val>,
    /// Each column's value, or why it failed on this file (shown in its
    /// cell, as Obsidian shows an error in a cell and keeps the row).
    values: Vec<std::result::Result<Val, String>>,
}

impl Vault {
    /// The text of the file holding a query (a base, a note with a block):
    /// `.system/` refused, UTF-8 required.
    pub(crate) fn query_text(&self, path: &str) -> Result<(RelPath, String)> {
        let rel = RelPath::parse(path, false)?;
        if crate::notes::is_reserved(&rel) {
            return Err(Error::new(
                Code::Forbidden,
                format!("`{path}` is under `.system/`, which is reserved for the server"),
            )
            .with("path", path));
        }
        let bytes = self.root.read(&rel)?;
        let text = String::from_utf8(bytes)
            .map_err(|_| Error::invalid_parameter("path", format!("`{path}` is not UTF-8 text")))?;
        Ok((rel, text))
    }

    /// The text of the base `path` names, and the file `this` is.
    fn base_text(&self, path: &str, block: Option<i64>) -> Result<(String, bool)> {
        let (rel, text) = self.query_text(path)?;
        if rel
            .extension()
            .is_some_and(|e| e.eq_ignore_ascii_case("base"))
        {
            return Ok((text, false));
        }
        let blocks = spec::blocks(&text);
        let k = block.unwrap_or(1) as usize;
        match blocks.into_iter().nth(k - 1) {
            Some(b) => Ok((b, true)),
            None => Err(Error::invalid_parameter(
                "path",
                format!("`{path}` is not a .base file and has no ```base block number {k}"),
            )),
        }
    }

    pub fn base(&self, input: BaseInput, job: crate::job::Job) -> Result<BaseOutput> {
        // As the graph spells it (`./Projects.base` is `Projects.base`).
        let path = RelPath::parse(&input.path, false)?.to_string();
        let (text, embedded) = self.base_text(&path, input.block)?;
        let base = Base::parse(&text)?;
        let v = match &input.view {
            Some(name) => base
                .views
                .iter()
                .position(|v| &v.name == name)
                .ok_or_else(|| {
                    let names: Vec<&str> = base.views.iter().map(|v| v.name.as_str()).collect();
                    Error::invalid_parameter(
                        "view",
                        format!("no view `{name}`: the base has {}", names.join(", ")),
                    )
                })?,
            None => 0,
        };
        let view = &base.views[v];
        let cx = self.context()?;
        let g = &cx.graph;
        // `this`: the note showing the base (its own ```base block, or the
        // note named as embedding it), else the base file itself.
        let this = if let Some(note) = &input.embedded_in {
            let note = RelPath::parse(note, false)?.to_string();
            let i = g.find(&note).ok_or_else(|| {
                Error::new(
                    Code::NotFound,
                    format!("no note `{note}` to embed the base"),
                )
                .with("embedded_in", note.clone())
            })?;
            Some(FileRef::Note(i as u32))
        } else if embedded {
            g.find(&path).map(|i| FileRef::Note(i as u32))
        } else {
            cx.others
                .paths()
                .binary_search_by(|p| p.as_str().cmp(&path))
                .ok()
                .map(|j| FileRef::Other(j as u32))
        };
        let env = cx.env(self, this, &base.formulas, job);
        // The columns, then the properties only a summary reads.
        let mut columns: Vec<(String, Ex)> = view.order.clone();
        for (id, _) in &view.summaries {
            if !columns.iter().any(|(c, _)| c == id) {
                let e = crate::expr::property(id).map_err(|f| f.error("path", id))?;
                columns.push((id.clone(), e));
            }
        }
        let (work, skipped) = rows(&env, &base, v, &columns, &shown_files(g, &cx.others))
            .map_err(|(fault, text)| fault.stopped("the base", &text).expect("a stop"))?;
        let mut work = ordered(view, work);
        if let Some(limit) = view.limit {
            work.truncate(limit);
        }
        let groups = groups(&env, work.iter().map(|w| w.group.as_ref()));
        let summaries = summaries(&env, &base, v, &columns, &work)?;
        let total = work.len() as u64;
        let start = (input.cursor.unwrap_or(0) as usize).min(work.len());
        let end = start
            .saturating_add(input.limit.unwrap_or(50) as usize)
            .min(work.len());
        let shown_columns: Vec<Column> = view
            .order
            .iter()
            .map(|(id, _)| Column {
                id: id.clone(),
                name: base.display_name(id),
            })
            .collect();
        let rows = work[start..end]
            .iter()
            .map(|w| RowOut {
                path: env.path(w.file).to_owned(),
                values: view
                    .order
                    .iter()
                    .zip(&w.values)
                    .map(|((id, _), v)| {
                        let shown = match v {
                            Ok(v) => env.json_of(v),
                            Err(why) => serde_json::json!({ "error": why }),
                        };
                        (id.clone(), shown)
                    })
                    .collect(),
                group: w.group.as_ref().map(|g| env.json_of(g)),
            })
            .collect();
        Ok(BaseOutput {
            path,
            view: view.name.clone(),
            kind: view.kind.clone(),
            views: base.views.iter().map(|v| v.name.clone()).collect(),
            columns: shown_columns,
            rows,
            groups,
            summaries,
            total,
            truncated: end < work.len(),
            next_cursor: (end < work.len()).then_some(end as u64),
            warnings: skipped.warnings(),
        })
    }
}

/// The rows of view `v` of the `files`, in path order, and the files left
/// out because an expression failed on them. Each file's row on both
/// cores: a base reads every file.
fn rows(
    env: &Env<'_>,
    base: &Base,
    v: usize,
    columns: &[(String, Ex)],
    files: &[FileRef],
) -> std::result::Result<(Vec<Work>, Skipped), (Fault, String)> {
    let made: Vec<std::result::Result<Made, (FileRef, Fault, String)>> = files
        .par_chunks(512)
        .flat_map_iter(|chunk| {
            let mut row = Row::new(chunk[0], base.formulas.len());
            chunk
                .iter()
                .map(|&f| {
                    row.reset(f);
                    view_row(env, base, v, columns, &row).map_err(|(fault, text)| (f, fault, text))
                })
                .collect::<Vec<_>>()
        })
        .collect();
    let mut skipped = Skipped::default();
    let mut work = Vec::with_capacity(made.len());
    for r in made {
        match r {
            Ok(Some((w, None))) => work.push(w),
            Ok(Some((w, Some((fault, text))))) => {
                skipped.add(env.path(w.file), &fault, &text);
                work.push(w);
            }
            Ok(None) => {}
            Err((_, fault, text)) if fault.stop.is_some() => return Err((fault, text)),
            Err((f, fault, text)) => skipped.add(env.path(f), &fault, &text),
        }
    }
    Ok((work, skipped))
}

/// A file's row of view `v` (its `columns` computed) with the first
/// expression that failed in it (a cell in error, a sort or group key
/// read as empty), or None when the filters leave it out; Err: a filter
/// failed on it (the file is left out), or the query stopped.
fn view_row(
    env: &Env<'_>,
    base: &Base,
    v: usize,
    columns: &[(String, Ex)],
    row: &Row,
) -> std::result::Result<Made, (Fault, String)> {
    let view = &base.views[v];
    for cond in [&base.filters, &view.filters].into_iter().flatten() {
        if !holds(env, cond, row)? {
            return Ok(None);
        }
    }
    // What fails after the filters keeps the row: the first failure is
    // counted in `warnings`; a stop of the query ends it.
    let first = std::cell::RefCell::new(None);
    let eval = |id: &str, e| match env.eval(e, row, Vars::default()) {
        Ok(v) => Ok(Ok(v)),
        Err(f) if f.stop.is_some() => Err((f, id.to_owned())),
        Err(f) => {
            let why = format!("{} (at column {} of `{id}`)", f.message, f.at);
            first.borrow_mut().get_or_insert((f, id.to_owned()));
            Ok(Err(why))
        }
    };
    // A key that fails sorts and groups as empty.
    let keys = view
        .sort
        .iter()
        .map(|k| eval(&k.id, &k.by).map(|v| v.unwrap_or(Val::Null)))
        .collect::<std::result::Result<Vec<_>, _>>()?;
    // Links grouped by the file they resolve to, not by their spelling.
    let group = view
        .group
        .as_ref()
        .map(|g| eval(&g.id, &g.by).map(|v| env.canonical(v.unwrap_or(Val::Null))))
        .transpose()?;
    let values = columns
        .iter()
        .map(|(id, e)| eval(id, e))
        .collect::<std::result::Result<Vec<_>, _>>()?;
    let work = Work {
        file: row.file,
        keys,
        group,
        values,
    };
    Ok(Some((work, first.into_inner())))
}

/// The files Obsidian shows, in path order: the notes and the other files
/// are each in path order already, merged.
fn shown_files(g: &crate::graph::Graph, others: &crate::graph::resolve::Names) -> Vec<FileRef> {
    let notes = g
        .notes
        .iter()
        .enumerate()
        .map(|(i, n)| (n.path.as_str(), FileRef::Note(i as u32)));
    let rest = others
        .paths()
        .iter()
        .enumerate()
        .map(|(j, p)| (p.as_str(), FileRef::Other(j as u32)));
    let (mut a, mut b) = (notes.peekable(), rest.peekable());
    let mut out = Vec::with_capacity(g.notes.len() + others.paths().len());
    loop {
        let next = match (a.peek(), b.peek()) {
            (Some(x), Some(y)) if x.0 <= y.0 => a.next(),
            (Some(_), Some(_)) => b.next(),
            (Some(_), None) => a.next(),
            (None, Some(_)) => b.next(),
            (None, None) => break,
        };
        if let Some((p, f)) = next
            && shown(p)
        {
            out.push(f);
        }
    }
    out
}

/// The most groups kept apart before sorting; past it, one sort.
const MAX_BUCKETS: usize = 256;

/// The rows in the view's order: by group, then by its sorts (ties keep
/// path order). Rows are put in their group first, so that the group
/// values (texts, most often) are compared once a row rather than at every
/// step of the sort.
fn ordered(view: &spec::View, work: Vec<Work>) -> Vec<Work> {
    let by_keys = |a: &Work, b: &Work| {
        for ((x, y), k) in a.keys.iter().zip(&b.keys).zip(&view.sort) {
            let o = sort_order_by(x, y, k.desc);
            if o != std::cmp::Ordering::Equal {
                return o;
            }
        }
        std::cmp::Ordering::Equal
    };
    let Some(group) = &view.group else {
        let mut work = work;
        work.sort_by(by_keys);
        return work;
    };
    let by_group = |a: &Work, b: &Work| match (&a.group, &b.group) {
        (Some(x), Some(y)) => sort_order_by(x, y, group.desc),
        _ => std::cmp::Ordering::Equal,
    };
    let mut groups: Vec<(Val, Vec<Work>)> = Vec::new();
    let mut rest = work.into_iter();
    for w in rest.by_ref() {
        let g = w.group.clone().unwrap_or(Val::Null);
        // The last group first: rows in path order often share it.
        match groups
            .iter_mut()
            .rev()
            .find(|(v, _)| sort_order(v, &g) == std::cmp::Ordering::Equal)
        {
            Some((_, rows)) => rows.push(w),
            None => groups.push((g, vec![w])),
        }
        if groups.len() > MAX_BUCKETS {
            // Nearly a group a row (`file.name`): one sort of them all.
            let mut all: Vec<Work> = groups
                .into_iter()
                .flat_map(|(_, rows)| rows)
                .chain(rest)
                .collect();
            all.sort_by(|a, b| by_group(a, b).then_with(|| by_keys(a, b)));
            return all;
        }
    }
    groups.sort_by(|(x, _), (y, _)| sort_order_by(x, y, group.desc));
    groups
        .into_iter()
        .flat_map(|(_, mut rows)| {
            rows.sort_by(by_keys);
            rows
        })
        .collect()
}

/// Whether any of `items` holds `wanted` (`or`: one holds; `and`: one
/// does not); a fault only when none does and one failed.
fn decided(
    env: &Env<'_>,
    items: &[Cond],
    row: &Row,
    wanted: bool,
) -> std::result::Result<bool, (crate::expr::Fault, String)> {
    let mut first = None;
    for c in items {
        match holds(env, c, row) {
            Ok(h) if h == wanted => return Ok(true),
            Ok(_) => {}
            Err(f) if f.0.stop.is_some() => return Err(f),
            Err(f) => {
                first.get_or_insert(f);
            }
        }
    }
    first.map_or(Ok(false), Err)
}

fn holds(
    env: &Env<'_>,
    c: &Cond,
    row: &Row,
) -> std::result::Result<bool, (crate::expr::Fault, String)> {
    Ok(match c {
        Cond::Expr(e, text) => env.test(e, row).map_err(|f| (f, text.clone()))?,
        // An item that fails decides nothing while another decides the
        // whole: `or` holds when any item holds, `and` fails when any item
        // fails to hold, whatever an item before it did (a stop of the
        // query ends it at once). Only when none decides is the first
        // fault the file's.
        Cond::And(all) => !decided(env, all, row, false)?,
        Cond::Or(any) => decided(env, any, row, true)?,
        Cond::Not(none) => !decided(env, none, row, true)?,
    })
}

/// The runs of equal group values, in order (rows without one skipped):
/// each value with how many rows it has.
pub(crate) fn groups<'v>(
    env: &Env<'_>,
    values: impl Iterator<Item = Option<&'v Val>>,
) -> Vec<GroupOut> {
    let mut out: Vec<GroupOut> = Vec::new();
    let mut last: Option<&Val> = None;
    for g in values.flatten() {
        match (last, out.last_mut()) {
            (Some(l), Some(group)) if sort_order(l, g) == std::cmp::Ordering::Equal => {
                group.count += 1
            }
            _ => out.push(GroupOut {
                value: env.json_of(g),
                count: 1,
            }),
        }
        last = Some(g);
    }
    out
}

/// The view's summaries, each over its column's values.
fn summaries(
    env: &Env<'_>,
    base: &Base,
    v: usize,
    columns: &[(String, Ex)],
    work: &[Work],
) -> Result<Map<String, Value>> {
    let mut out = Map::new();
    for (id, how) in &base.views[v].summaries {
        let k = columns
            .iter()
            .position(|(c, _)| c == id)
            .expect("every summary has its column");
        // A cell in error counts in no summary.
        let vals = work
            .iter()
            .filter_map(|w| w.values[k].as_ref().ok().cloned())
            .collect();
        out.insert(id.clone(), base.summary(env, how, vals)?);
    }
    Ok(out)
}
