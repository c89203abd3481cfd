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
use crate::expr::eval::{Env, Row, Vars};
use crate::expr::value::{FileRef, Val, sort_order};
use crate::fs::RelPath;
use crate::query::Skipped;
use spec::{Base, Cond};

const LIMIT_MAX: i64 = 1000;

#[derive(Input)]
pub struct BaseInput {
    /// A `.base` file, or a note with a ```base block
    #[arg(nonempty)]
    pub path: String,
    /// View name (default: the first)
    pub view: Option<String>,
    /// Which ```base block of the note (default 1)
    #[arg(min = 1, max = 1000)]
    pub block: Option<i64>,
    /// Most rows (default 50)
    #[arg(min = 1, max = LIMIT_MAX)]
    pub limit: Option<i64>,
    /// The previous call's next_cursor
    #[arg(min = 0)]
    pub cursor: Option<i64>,
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

/// Whether Obsidian shows this file: no segment hidden (`.obsidian/`,
/// `.trash/`, `.system/`).
fn shown(path: &str) -> bool {
    !path.split('/').any(|s| s.starts_with('.'))
}

/// One row while the view is worked out.
struct Work {
    row: Row,
    keys: Vec<Val>,
    group: Option<Val>,
    /// Each column's value.
    values: Vec<Val>,
}

impl Vault {
    /// The text of the base `path` names, and the file `this` is.
    fn base_text(&self, path: &str, block: Option<i64>) -> Result<(String, bool)> {
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

    pub fn base(&self, input: BaseInput) -> Result<BaseOutput> {
        let (text, embedded) = self.base_text(&input.path, input.block)?;
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
        let this = if embedded {
            g.find(&input.path).map(|i| FileRef::Note(i as u32))
        } else {
            cx.others
                .paths()
                .binary_search_by(|p| p.as_str().cmp(&input.path))
                .ok()
                .map(|j| FileRef::Other(j as u32))
        };
        let env = cx.env(self, this, &base.formulas);
        let mut skipped = Skipped::default();
        let mut files: Vec<(&str, FileRef)> = g
            .notes
            .iter()
            .enumerate()
            .map(|(i, n)| (n.path.as_str(), FileRef::Note(i as u32)))
            .chain(
                cx.others
                    .paths()
                    .iter()
                    .enumerate()
                    .map(|(j, p)| (p.as_str(), FileRef::Other(j as u32))),
            )
            .filter(|(p, _)| shown(p))
            .collect();
        files.sort_unstable_by(|a, b| a.0.cmp(b.0));
        let mut work = Vec::new();
        for (path, f) in files {
            let row = Row::new(f, base.formulas.len());
            match self.view_row(&env, &base, v, row) {
                Ok(Some(w)) => work.push(w),
                Ok(None) => {}
                Err((f, text)) => skipped.add(path, &f, &text),
            }
        }
        let group_desc = view.group.as_ref().is_some_and(|g| g.desc);
        work.sort_by(|a, b| {
            let by_group = match (&a.group, &b.group) {
                (Some(x), Some(y)) => directed(sort_order(x, y), group_desc, x, y),
                _ => std::cmp::Ordering::Equal,
            };
            by_group.then_with(|| {
                for ((x, y), k) in a.keys.iter().zip(&b.keys).zip(&view.sort) {
                    let o = directed(sort_order(x, y), k.desc, x, y);
                    if o != std::cmp::Ordering::Equal {
                        return o;
                    }
                }
                std::cmp::Ordering::Equal
            })
        });
        if let Some(limit) = view.limit {
            work.truncate(limit);
        }
        let groups = groups(&env, &work);
        let summaries = self.summaries(&env, &base, v, &work)?;
        let total = work.len() as u64;
        let start = (input.cursor.unwrap_or(0) as usize).min(work.len());
        let end = start
            .saturating_add(input.limit.unwrap_or(50) as usize)
            .min(work.len());
        let columns: Vec<Column> = view
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
                path: env.path(w.row.file).to_owned(),
                values: view
                    .order
                    .iter()
                    .zip(&w.values)
                    .map(|((id, _), v)| (id.clone(), env.json_of(v)))
                    .collect(),
                group: w.group.as_ref().map(|g| env.json_of(g)),
            })
            .collect();
        Ok(BaseOutput {
            path: input.path,
            view: view.name.clone(),
            kind: view.kind.clone(),
            views: base.views.iter().map(|v| v.name.clone()).collect(),
            columns,
            rows,
            groups,
            summaries,
            total,
            truncated: end < work.len(),
            next_cursor: (end < work.len()).then_some(end as u64),
            warnings: skipped.warnings(),
        })
    }

    /// A file's row of view `v`, or None when the filters leave it out;
    /// Err: the expression that failed on it, and its text.
    fn view_row(
        &self,
        env: &Env<'_>,
        base: &Base,
        v: usize,
        row: Row,
    ) -> std::result::Result<Option<Work>, (crate::expr::Fault, String)> {
        let view = &base.views[v];
        for cond in [&base.filters, &view.filters].into_iter().flatten() {
            if !holds(env, cond, &row)? {
                return Ok(None);
            }
        }
        let eval = |id: &str, e| {
            env.eval(e, &row, Vars::default())
                .map_err(|f| (f, id.to_owned()))
        };
        let keys = view
            .sort
            .iter()
            .map(|k| eval(&k.id, &k.by))
            .collect::<std::result::Result<Vec<_>, _>>()?;
        let group = view
            .group
            .as_ref()
            .map(|g| eval(&g.id, &g.by))
            .transpose()?;
        // A row is left out whole when a column fails on it, as when its
        // filter does: never shown with a hole.
        let values = view
            .order
            .iter()
            .map(|(id, e)| eval(id, e))
            .collect::<std::result::Result<Vec<_>, _>>()?;
        Ok(Some(Work {
            row,
            keys,
            group,
            values,
        }))
    }
}

/// Descending reverses an order, except that empty values stay last.
fn directed(o: std::cmp::Ordering, desc: bool, x: &Val, y: &Val) -> std::cmp::Ordering {
    if desc && !(x.is_empty() || y.is_empty()) {
        o.reverse()
    } else {
        o
    }
}

fn holds(
    env: &Env<'_>,
    c: &Cond,
    row: &Row,
) -> std::result::Result<bool, (crate::expr::Fault, String)> {
    Ok(match c {
        Cond::Expr(e, text) => env.test(e, row).map_err(|f| (f, text.clone()))?,
        Cond::And(all) => {
            for c in all {
                if !holds(env, c, row)? {
                    return Ok(false);
                }
            }
            true
        }
        Cond::Or(any) => {
            for c in any {
                if holds(env, c, row)? {
                    return Ok(true);
                }
            }
            false
        }
        Cond::Not(none) => {
            for c in none {
                if holds(env, c, row)? {
                    return Ok(false);
                }
            }
            true
        }
    })
}

/// The runs of equal group values, in order.
fn groups(env: &Env<'_>, work: &[Work]) -> Vec<GroupOut> {
    let mut out: Vec<GroupOut> = Vec::new();
    for w in work {
        let Some(g) = &w.group else { continue };
        let value = env.json_of(g);
        match out.last_mut() {
            Some(last) if last.value == value => last.count += 1,
            _ => out.push(GroupOut { value, count: 1 }),
        }
    }
    out
}

impl Vault {
    fn summaries(
        &self,
        env: &Env<'_>,
        base: &Base,
        v: usize,
        work: &[Work],
    ) -> Result<Map<String, Value>> {
        let view = &base.views[v];
        let mut out = Map::new();
        for (id, how) in &view.summaries {
            // A summary may be of a column the view does not show.
            let vals = match view.order.iter().position(|(c, _)| c == id) {
                Some(k) => work.iter().map(|w| w.values[k].clone()).collect(),
                None => {
                    let e = crate::expr::property(id).map_err(|f| f.error("path", id))?;
                    column(env, &e, work)
                }
            };
            out.insert(id.clone(), base.summary(env, how, vals)?);
        }
        Ok(out)
    }
}

/// A column's values over the rows (a failing one as null).
fn column(env: &Env<'_>, e: &crate::expr::parse::Ex, work: &[Work]) -> Vec<Val> {
    work.iter()
        .map(|w| env.eval(e, &w.row, Vars::default()).unwrap_or(Val::Null))
        .collect()
}
