//! vault_tasks: every task of the vault's notes (read by
//! [`crate::graph::tasks`], kept in the index by the watcher) filtered by
//! an expression in the vault's language, evaluated for each task
//! ([`crate::expr::task`] says what its names mean), sorted, grouped and
//! paged. Answered from the graph; no note is read.

mod query;
mod recur;
mod status;

pub use status::{TaskStatusInput, TaskStatusOutput};

use rayon::prelude::*;
use schemars::JsonSchema;
use serde::Serialize;
use serde_json::{Map, Value};

use super::Vault;
use crate::args::Input;
use crate::base::GroupOut;
use crate::error::{Error, Result};
use crate::expr::Fault;
use crate::expr::eval::{Row, Vars};
use crate::expr::task::priority_name;
use crate::expr::value::{FileRef, Val, sort_order, sort_order_by};
use crate::filter::Filter;
use crate::graph::Graph;
use crate::graph::tasks::{Priority, Statuses, Task};
use crate::links::SortKey;
use crate::query::Skipped;

const LIMIT_MAX: i64 = 1000;

#[derive(Input)]
pub struct TasksInput {
    /// An expression each task must hold
    pub filter: Option<String>,
    /// Task properties to order by, each `name` or `name desc`
    pub sort: Option<Vec<String>>,
    /// A task property to group by
    pub group_by: Option<String>,
    /// A note whose ```tasks or ```dataview block to evaluate (instead of filter/sort/group_by)
    pub path: Option<String>,
    /// Which ```tasks or ```dataview block of it (default 1)
    #[arg(min = 1, max = 1000)]
    pub block: Option<i64>,
    /// Most tasks (default 50)
    #[arg(min = 1, max = LIMIT_MAX)]
    pub limit: Option<i64>,
    /// The previous call's next_cursor
    #[arg(min = 0)]
    pub cursor: Option<i64>,
}

#[derive(Debug, Serialize, JsonSchema)]
pub struct TaskOut {
    pub path: String,
    pub line: u32,
    /// The character between the brackets: ` `, `x`, `/`, `-`, …
    pub status: String,
    /// `TODO`, `IN_PROGRESS`, `DONE` or `CANCELLED`.
    pub status_type: &'static str,
    /// Its text, without the emoji fields at its end.
    pub text: String,
    /// Its line's hash: names it exactly to vault_task_status.
    pub hash: String,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub heading: Option<String>,
    /// The line of the task it is indented under.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub parent: Option<u32>,
    #[serde(skip_serializing_if = "Vec::is_empty")]
    pub tags: Vec<String>,
    /// Its dates (`due`, `scheduled`, `start`, `created`, `done`, `cancelled`),
    /// priority unless normal, `recurrence`, `id`, `dependsOn`,
    /// `onCompletion` and inline fields, those it has.
    #[serde(skip_serializing_if = "Map::is_empty")]
    pub fields: Map<String, Value>,
    /// Its group's value, when grouped.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub group: Option<Value>,
    /// Lines of the sub-tasks a dataview TASK query shows under it.
    #[serde(skip_serializing_if = "Vec::is_empty")]
    pub children: Vec<u32>,
}

#[derive(Debug, Serialize, JsonSchema)]
pub struct TasksOutput {
    pub tasks: Vec<TaskOut>,
    /// A dataview LIST or TABLE's column names.
    #[serde(skip_serializing_if = "Vec::is_empty")]
    pub columns: Vec<String>,
    /// Its rows, each its values by column.
    #[serde(skip_serializing_if = "Vec::is_empty")]
    pub rows: Vec<Vec<Value>>,
    /// Each group in order with its task count, when grouped.
    #[serde(skip_serializing_if = "Vec::is_empty")]
    pub groups: Vec<GroupOut>,
    /// Tasks that passed the filter.
    pub total: u64,
    pub truncated: bool,
    /// Pass as `cursor` for the next tasks; null when none are left.
    pub next_cursor: Option<u64>,
    /// Tasks left out because an expression failed on them: how many, and
    /// the first reasons.
    #[serde(skip_serializing_if = "Vec::is_empty")]
    pub warnings: Vec<String>,
}

/// One task kept, with its sort keys and group.
struct Kept {
    note: u32,
    task: u32,
    keys: Vec<Val>,
    group: Option<Val>,
}

/// Why a task was left out or a key read as empty: the note, the fault
/// and the text that failed.
type Failed = (u32, Fault, String);

impl Vault {
    pub fn tasks(&self, input: TasksInput, job: crate::job::Job) -> Result<TasksOutput> {
        if let Some(path) = &input.path {
            if input.filter.is_some() || input.sort.is_some() || input.group_by.is_some() {
                return Err(Error::invalid_parameter(
                    "path",
                    "a block is a whole query: give `path` (and `block`), or `filter`, `sort` and `group_by`, not both",
                ));
            }
            return self.tasks_block(path, &input, job);
        }
        let filter = input.filter.as_deref().map(Filter::parse).transpose()?;
        let sort = SortKey::parse_all(input.sort.as_deref())?;
        let group = input
            .group_by
            .as_deref()
            .map(|id| {
                crate::expr::property(id)
                    .map(|e| (id.to_owned(), e))
                    .map_err(|f| f.error("group_by", id))
            })
            .transpose()?;
        let cx = self.context()?;
        let g = &cx.graph;
        let env = cx.env(self, None, &[], job);
        let text = input.filter.as_deref().unwrap_or("");
        let tag = filter.as_ref().and_then(Filter::first_tag);
        let pool: Vec<usize> = g
            .pool(tag.as_deref())
            .into_iter()
            .filter(|&i| !g.notes[i].facts.tasks.is_empty())
            .collect();
        let made: Vec<(Vec<Kept>, Vec<Failed>)> = pool
            .par_chunks(64)
            .map(|chunk| {
                let mut kept = Vec::new();
                let mut failed = Vec::new();
                let mut row = Row::new(FileRef::Note(0), 0);
                for &i in chunk {
                    row.reset(FileRef::Note(i as u32));
                    for k in 0..g.notes[i].facts.tasks.len() {
                        row.next_task(k as u32);
                        let f = filter.as_ref().map(|f| env.test(f.expr(), &row));
                        match f {
                            Some(Ok(false)) => continue,
                            Some(Err(fault)) => {
                                let stop = fault.stop.is_some();
                                failed.push((i as u32, fault, text.to_owned()));
                                if stop {
                                    return (kept, failed);
                                }
                                continue;
                            }
                            _ => {}
                        }
                        let mut eval = |id: &str, e| match env.eval(e, &row, Vars::default()) {
                            Ok(v) => v,
                            Err(fault) => {
                                failed.push((i as u32, fault, id.to_owned()));
                                Val::Null
                            }
                        };
                        let keys = sort.iter().map(|s| eval(&s.id, &s.by)).collect();
                        let group = group.as_ref().map(|(id, e)| env.canonical(eval(id, e)));
                        kept.push(Kept {
                            note: i as u32,
                            task: k as u32,
                            keys,
                            group,
                        });
                    }
                }
                (kept, failed)
            })
            .collect();
        let mut skipped = Skipped::default();
        let mut kept = Vec::new();
        for (k, failed) in made {
            kept.extend(k);
            for (i, fault, text) in failed {
                if let Some(e) = fault.stopped("the query", &text) {
                    return Err(e);
                }
                skipped.add(&g.notes[i as usize].path, &fault, &text);
            }
        }
        kept.sort_by(|a, b| {
            let grouped = match (&a.group, &b.group) {
                (Some(x), Some(y)) => sort_order(x, y),
                _ => std::cmp::Ordering::Equal,
            };
            grouped.then_with(|| {
                for (k, (x, y)) in sort.iter().zip(a.keys.iter().zip(&b.keys)) {
                    let o = sort_order_by(x, y, k.desc);
                    if o != std::cmp::Ordering::Equal {
                        return o;
                    }
                }
                std::cmp::Ordering::Equal
            })
        });
        let groups = crate::base::groups(&env, kept.iter().map(|k| k.group.as_ref()));
        let shown = kept
            .iter()
            .map(|k| (k.note, k.task, k.group.as_ref().map(|v| env.json_of(v))));
        Ok(page(
            g,
            &cx.statuses,
            shown,
            kept.len(),
            groups,
            &input,
            skipped.warnings(),
        ))
    }

    /// The `block`-th ```tasks block of note `path`, evaluated as the Tasks
    /// plugin evaluates it (a ```dataview block is refused until kura
    /// reads DQL; ```dataviewjs is JavaScript).
    fn tasks_block(
        &self,
        path: &str,
        input: &TasksInput,
        job: crate::job::Job,
    ) -> Result<TasksOutput> {
        let (_, text) = self.query_text(path)?;
        let k = input.block.unwrap_or(1) as usize;
        let blocks = crate::text::markdown::fenced(&text, &["tasks", "dataview", "dataviewjs"]);
        let Some(b) = blocks.get(k - 1) else {
            return Err(Error::invalid_parameter(
                "block",
                format!("`{path}` has no ```tasks or ```dataview block number {k}"),
            ));
        };
        let at = format!("block {k} of `{path}` (line {})", b.line);
        let refused = |why: String| {
            Error::invalid_parameter("block", format!("{at}: {why}"))
                .with("path", path)
                .with("line", b.line as u64)
        };
        match b.language.as_str() {
            "dataviewjs" => {
                return Err(refused(
                    "a dataviewjs block is JavaScript, which kura does not evaluate".into(),
                ));
            }
            "dataview" => return self.dataview(path, &b.text, input, job, refused),
            _ => {}
        }
        let settings = status::Settings::load(&self.root);
        if !settings.global_filter.is_empty() || !settings.global_query.is_empty() {
            return Err(refused(
                "the Tasks plugin's global filter or global query is set, which kura does not apply yet"
                    .into(),
            ));
        }
        let today = chrono::Local::now().date_naive();
        let q = query::Query::parse(&b.text, today).map_err(refused)?;
        let cx = self.context()?;
        let g = &cx.graph;
        // The query's budget and the client's cancel, looked at every 256
        // notes.
        let budget = cx.env(self, None, &[], job).budget;
        let item = |path, task, deps| query::Item {
            path,
            task,
            deps,
            dataview: settings.dataview,
            statuses: &settings.statuses,
        };
        let every = || {
            g.notes
                .iter()
                .flat_map(|n| n.facts.tasks.iter().map(move |t| (n.path.as_str(), t)))
        };
        let deps = match q.needs_deps {
            true => query::Deps::of(every().map(|(p, t)| item(p, t, query::Deps::none()))),
            false => query::Deps::default(),
        };
        let mut kept: Vec<(query::Item, u32, u32)> = Vec::new();
        for (i, note) in g.notes.iter().enumerate() {
            if i % 256 == 255
                && let Err(f) = budget.check(0)
            {
                return Err(f.stopped("the block", &b.text).expect("a stop"));
            }
            for (k, task) in note.facts.tasks.iter().enumerate() {
                let item = item(&note.path, task, &deps);
                if q.keeps(&item) {
                    kept.push((item, i as u32, k as u32));
                }
            }
        }
        kept.sort_by(|a, b| q.order(&a.0, &b.0, today));
        if let Some(n) = q.limit {
            kept.truncate(n);
        }
        let mut grouped: Vec<(Vec<(String, String)>, usize)> = kept
            .iter()
            .enumerate()
            .map(|(n, (item, _, _))| (q.group(item), n))
            .collect();
        // Groups in the order of their keys (each level reversed as asked),
        // the tasks' order kept within each.
        grouped.sort_by(|(a, x), (b, y)| {
            for (level, (ka, kb)) in a.iter().zip(b).enumerate() {
                let o = ka.0.cmp(&kb.0);
                let o = if q.group_reversed(level) {
                    o.reverse()
                } else {
                    o
                };
                if o != std::cmp::Ordering::Equal {
                    return o;
                }
            }
            x.cmp(y)
        });
        let mut groups: Vec<GroupOut> = Vec::new();
        let mut rows: Vec<(u32, u32, Option<Value>)> = Vec::new();
        let mut last: Option<&Vec<(String, String)>> = None;
        for (key, n) in &grouped {
            let value = match key.len() {
                0 => None,
                1 => Some(Value::from(key[0].1.clone())),
                _ => Some(Value::from(
                    key.iter().map(|(_, name)| name.clone()).collect::<Vec<_>>(),
                )),
            };
            if let Some(v) = &value {
                if last != Some(key) {
                    groups.push(GroupOut {
                        value: v.clone(),
                        count: 0,
                    });
                }
                let group = groups.last_mut().expect("pushed");
                if q.group_limit.is_some_and(|l| group.count as usize >= l) {
                    last = Some(key);
                    continue;
                }
                group.count += 1;
            }
            last = Some(key);
            let (_, i, k) = &kept[*n];
            rows.push((*i, *k, value));
        }
        let total = rows.len();
        Ok(page(
            g,
            &settings.statuses,
            rows.into_iter(),
            total,
            groups,
            input,
            Vec::new(),
        ))
    }
}

impl Vault {
    /// A ```dataview block's query (`text`, of note `path`) evaluated.
    fn dataview(
        &self,
        path: &str,
        text: &str,
        input: &TasksInput,
        job: crate::job::Job,
        refused: impl Fn(String) -> Error,
    ) -> Result<TasksOutput> {
        let place = |at: usize| {
            let before = text.get(..at).unwrap_or(text);
            let line = before.matches('\n').count() + 1;
            let column = before.rsplit('\n').next().map_or(0, |l| l.chars().count()) + 1;
            format!("line {line}, column {column} of the query")
        };
        let q = crate::dql::parse::parse(text)
            .map_err(|(why, at)| refused(format!("{why} ({})", place(at))))?;
        let cx = self.context()?;
        let g = &cx.graph;
        let this = g.find(path).map(|i| FileRef::Note(i as u32));
        let env = cx.env(self, this, &[], job);
        let mut faults = Vec::new();
        let answer = crate::dql::run(&env, &q, this, &mut faults).map_err(|f| match f {
            crate::dql::Failed::At(why, at) => refused(format!("{why} ({})", place(at))),
            crate::dql::Failed::Stopped(f) => {
                let code = match f.stop {
                    Some(crate::expr::Stop::Cancelled) => crate::error::Code::Cancelled,
                    _ => crate::error::Code::Timeout,
                };
                Error::new(
                    code,
                    format!("the block stopped: {} ({})", f.message, place(f.at)),
                )
            }
        })?;
        let warnings = faults;
        match answer {
            crate::dql::Answer::Tasks { tasks, groups } => {
                let total = tasks.len();
                let groups = groups
                    .into_iter()
                    .map(|(value, count)| GroupOut { value, count })
                    .collect();
                let mut out = page(
                    g,
                    &cx.statuses,
                    tasks.into_iter(),
                    total,
                    groups,
                    input,
                    warnings,
                );
                for t in &mut out.tasks {
                    if let Some(i) = g.find(&t.path) {
                        let tasks = &g.notes[i].facts.tasks;
                        if let Some(k) = tasks.iter().position(|x| x.line == t.line) {
                            t.children = crate::graph::tasks::under(tasks, k)
                                .map(|j| tasks[j].line)
                                .collect();
                        }
                    }
                }
                Ok(out)
            }
            crate::dql::Answer::Rows { columns, rows } => {
                let total = rows.len();
                let start = (input.cursor.unwrap_or(0) as usize).min(total);
                let end = start
                    .saturating_add(input.limit.unwrap_or(50) as usize)
                    .min(total);
                Ok(TasksOutput {
                    tasks: Vec::new(),
                    columns,
                    rows: rows.into_iter().skip(start).take(end - start).collect(),
                    groups: Vec::new(),
                    total: total as u64,
                    truncated: end < total,
                    next_cursor: (end < total).then_some(end as u64),
                    warnings,
                })
            }
        }
    }
}

/// The page of tasks `input` asks for, of `total` in order.
fn page(
    g: &Graph,
    statuses: &Statuses,
    tasks: impl Iterator<Item = (u32, u32, Option<Value>)>,
    total: usize,
    groups: Vec<GroupOut>,
    input: &TasksInput,
    warnings: Vec<String>,
) -> TasksOutput {
    let start = (input.cursor.unwrap_or(0) as usize).min(total);
    let end = start
        .saturating_add(input.limit.unwrap_or(50) as usize)
        .min(total);
    let tasks = tasks
        .skip(start)
        .take(end - start)
        .map(|(note, task, group)| task_out(g, statuses, note, task, group))
        .collect();
    TasksOutput {
        tasks,
        columns: Vec::new(),
        rows: Vec::new(),
        groups,
        total: total as u64,
        truncated: end < total,
        next_cursor: (end < total).then_some(end as u64),
        warnings,
    }
}

/// A task's fields as the answer lists them: those it has.
fn fields(t: &Task) -> Map<String, Value> {
    let mut out = Map::new();
    let dates = [
        ("created", &t.created),
        ("scheduled", &t.scheduled),
        ("start", &t.start),
        ("due", &t.due),
        ("done", &t.done),
        ("cancelled", &t.cancelled),
    ];
    for (name, d) in dates {
        if let Some(d) = d {
            out.insert(name.to_owned(), Value::from(d.to_string()));
        }
    }
    if t.priority != Priority::None {
        out.insert("priority".into(), priority_name(t.priority).into());
    }
    let words = [
        ("recurrence", &t.recurrence),
        ("id", &t.id),
        ("onCompletion", &t.on_completion),
    ];
    for (name, w) in words {
        if let Some(w) = w {
            out.insert(name.to_owned(), Value::from(w.as_str()));
        }
    }
    if !t.depends_on.is_empty() {
        out.insert("dependsOn".into(), t.depends_on.clone().into());
    }
    // Inline fields, but those listed above under the plugin's names.
    const NAMED: [&str; 11] = [
        "created",
        "scheduled",
        "start",
        "due",
        "completion",
        "cancelled",
        "repeat",
        "priority",
        "id",
        "dependsOn",
        "onCompletion",
    ];
    for (key, value) in &t.fields {
        if !NAMED.contains(&key.as_str()) {
            out.entry(key.clone())
                .or_insert_with(|| Value::from(value.as_str()));
        }
    }
    out
}

fn task_out(g: &Graph, statuses: &Statuses, note: u32, task: u32, group: Option<Value>) -> TaskOut {
    let note = &g.notes[note as usize];
    let t = &note.facts.tasks[task as usize];
    TaskOut {
        path: note.path.clone(),
        line: t.line,
        status: t.symbol.to_string(),
        status_type: statuses.of(t.symbol).kind.type_name(),
        text: t.text.clone(),
        hash: status::hex(t.hash),
        heading: t.heading.clone(),
        parent: t
            .parent
            .and_then(|p| note.facts.tasks.get(p))
            .map(|p| p.line),
        tags: t.tags.iter().map(|g| format!("#{g}")).collect(),
        fields: fields(t),
        group,
        children: Vec::new(),
    }
}
