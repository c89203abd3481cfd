//! A ```` ```dataview ```` block evaluated as Dataview evaluates it: the
//! pages of its `FROM` (every page without one), or for `TASK` every task
//! of those pages with its page's fields; then each command in the order
//! written, as Dataview's engine runs them (a row an expression fails on is
//! left out, and the query fails when every row does); then the columns.
//! `GROUP BY` turns rows into groups (`key`, `rows` and the group's name);
//! `FLATTEN` makes a row per item. A `TASK` result shows each task once:
//! under its parent when the parent is shown too, with its sub-tasks.
//! Read by [`parse`]; expressions evaluated by [`crate::expr::dql`].

pub mod parse;
#[cfg(test)]
mod tests;

use std::cmp::Ordering;

use rayon::prelude::*;
use serde_json::Value;

use crate::expr::Fault;
use crate::expr::dql::size;
use crate::expr::dql::{DNode, Dx, Scope};
use crate::expr::env::Env;
use crate::expr::eval::Row;
use crate::expr::value::{FileRef, LinkVal, Val};
use parse::{Command, Kind, Query, Source};

/// The most rows `FLATTEN` may make (a vault's tasks are fewer): each
/// row is a copy, and memory is bounded whatever the query.
const MAX_ROWS: usize = 250_000;

/// The most the values a query keeps across its rows may hold (sort
/// keys, groups' keys and `rows`, `FLATTEN`'s copies, the columns; see
/// [`crate::expr::dql::size`]): each row's are bounded, their number is
/// the vault's. Past it the query is refused, not answered in part.
const MAX_HELD: usize = 256 << 20;

/// What a query's kept values weigh so far, shared by its threads.
struct Spent(std::sync::atomic::AtomicUsize);

impl Spent {
    fn charge(&self, w: usize, at: usize) -> Result<(), Fault> {
        let before = self.0.fetch_add(w, std::sync::atomic::Ordering::Relaxed);
        if before.saturating_add(w) > MAX_HELD {
            return Err(Fault {
                refuses: true,
                ..Fault::new(
                    format!("the query keeps values over {} MiB", MAX_HELD >> 20),
                    at,
                )
            });
        }
        Ok(())
    }
}

/// What a copy of a row weighs, about.
fn cost(r: &DRow) -> usize {
    let names = |n: &[(String, Val)]| n.iter().map(|(k, v)| k.len() + size(v)).sum::<usize>();
    match r {
        DRow::Item { names: n, .. } => 64 + names(n),
        DRow::Group {
            members, names: n, ..
        } => 64 + names(n) + members.iter().map(cost).sum::<usize>(),
    }
}

/// A value as a LIST or TABLE cell: as tools return values, a duration
/// written as Dataview writes it (`3 days`).
fn cell(env: &Env, v: &Val) -> Value {
    match v {
        Val::Dur(_) => Value::String(env.dv_text(v)),
        Val::List(items) => Value::Array(items.iter().map(|i| cell(env, i)).collect()),
        Val::Obj(o) => Value::Object(o.iter().map(|(k, v)| (k.clone(), cell(env, v))).collect()),
        v => env.json_of(v),
    }
}

/// One row as the commands see it: a page or a task with the names
/// `FLATTEN` bound, or a group of rows.
#[derive(Clone)]
enum DRow {
    Item {
        note: u32,
        task: Option<u32>,
        names: Vec<(String, Val)>,
    },
    Group {
        key: Val,
        members: Vec<DRow>,
        names: Vec<(String, Val)>,
    },
}

/// What a query answers.
pub enum Answer {
    /// `TASK`: each task shown (note, task, its group's value), in order,
    /// with the groups and their counts.
    Tasks {
        tasks: Vec<(u32, u32, Option<Value>)>,
        groups: Vec<(Value, u64)>,
    },
    /// `LIST` and `TABLE`: the column names and each row's values.
    Rows {
        columns: Vec<String>,
        rows: Vec<Vec<Value>>,
    },
}

/// Why a query ended: a fault of its own (with where), or its budget.
pub enum Failed {
    At(String, usize),
    Stopped(Fault),
}

impl From<Fault> for Failed {
    fn from(f: Fault) -> Failed {
        if f.stop.is_some() {
            Failed::Stopped(f)
        } else {
            Failed::At(f.message, f.at)
        }
    }
}

/// Whether `e` names `rows` anywhere: a group's rows are made as values
/// only then.
fn names_rows(e: &Dx) -> bool {
    match &e.node {
        DNode::Name(n) => n == "rows",
        DNode::Lit(_) | DNode::When(_) => false,
        DNode::List(items) | DNode::Call(_, items) => items.iter().any(names_rows),
        DNode::Object(entries) => entries.iter().any(|(_, e)| names_rows(e)),
        DNode::Index(a, b) | DNode::Bin(_, a, b) => names_rows(a) || names_rows(b),
        DNode::Lambda(_, x) | DNode::Not(x) => names_rows(x),
    }
}

fn uses_rows(q: &Query) -> bool {
    let in_commands = q.commands.iter().any(|c| match c {
        Command::Where(e) | Command::Limit(e) | Command::Group(e, _) | Command::Flatten(e, _) => {
            names_rows(e)
        }
        Command::Sort(keys) => keys.iter().any(|(e, _)| names_rows(e)),
    });
    in_commands
        || match &q.kind {
            Kind::Task => false,
            Kind::List { value, .. } => value.as_ref().is_some_and(|(_, e)| names_rows(e)),
            Kind::Table { columns, .. } => columns.iter().any(|(_, e)| names_rows(e)),
        }
}

/// The notes a source names, as a mark per note.
fn source(env: &Env, s: &Source, this: Option<FileRef>) -> Result<Vec<bool>, String> {
    let g = env.graph;
    let n = g.notes.len();
    let by = |f: &dyn Fn(usize) -> bool| (0..n).map(f).collect::<Vec<bool>>();
    Ok(match s {
        Source::Tag(t) => {
            let want = t.to_lowercase();
            by(&|i| {
                g.notes[i]
                    .facts
                    .tags
                    .iter()
                    .any(|h| crate::graph::tag_is(h, &want))
            })
        }
        Source::Folder(f) => {
            let f = f.trim_matches('/');
            let exact = g.find(f).or_else(|| g.find(&format!("{f}.md")));
            by(&|i| {
                let p = &g.notes[i].path;
                f.is_empty()
                    || exact == Some(i)
                    || (p.len() > f.len() && p.starts_with(f) && p.as_bytes()[f.len()] == b'/')
            })
        }
        Source::Incoming(target) | Source::Outgoing(target) => {
            // `[[]]` and `[[#]]` are the query's own note.
            let named = match target.trim_end_matches('#') {
                "" => this,
                _ => env.file_of(&Val::Link(Box::new(LinkVal {
                    target: target.clone(),
                    display: None,
                    from: this,
                }))),
            };
            let Some(FileRef::Note(t)) = named else {
                if matches!(s, Source::Outgoing(_)) {
                    return Err(format!("`[[{target}]]` names no note of the vault"));
                }
                // The pages with a link to it that resolves nowhere.
                let want = target.to_lowercase();
                return Ok(by(&|i| {
                    g.notes[i]
                        .facts
                        .links
                        .iter()
                        .zip(g.targets(i))
                        .any(|(l, t)| t.is_none() && l.target.to_lowercase() == want)
                }));
            };
            let mut marks = vec![false; n];
            if matches!(s, Source::Incoming(_)) {
                for e in g.backlinks(t as usize) {
                    marks[e.from as usize] = true;
                }
            } else {
                for to in g.targets(t as usize).iter().flatten() {
                    marks[*to as usize] = true;
                }
            }
            marks
        }
        Source::Not(x) => source(env, x, this)?.into_iter().map(|m| !m).collect(),
        Source::And(a, b) | Source::Or(a, b) => {
            let (x, y) = (source(env, a, this)?, source(env, b, this)?);
            let and = matches!(s, Source::And(..));
            x.into_iter()
                .zip(y)
                .map(|(p, q)| if and { p && q } else { p || q })
                .collect()
        }
    })
}

/// `e` for each row, on the threads, each with its own evaluation state.
fn each<T: Send>(
    rows: &[DRow],
    f: impl Fn(&Row, &Scope) -> Result<T, Fault> + Sync,
) -> Vec<Result<T, Fault>> {
    rows.par_iter()
        .map_init(
            || Row::new(FileRef::Note(0), 0),
            |row, r| match r {
                DRow::Item { note, task, names } => {
                    // A note's first row looks at the budget; its tasks go
                    // on counting steps, as vault_tasks's do.
                    if row.file != FileRef::Note(*note) || task.is_none() {
                        row.reset(FileRef::Note(*note));
                    }
                    if let Some(k) = task {
                        row.next_task(*k);
                    }
                    let scope = Scope {
                        names,
                        outer: None,
                        group: false,
                    };
                    f(row, &scope)
                }
                DRow::Group { names, .. } => {
                    row.reset(FileRef::Note(0));
                    let scope = Scope {
                        names,
                        outer: None,
                        group: true,
                    };
                    f(row, &scope)
                }
            },
        )
        .collect()
}

/// The rows that evaluated, with their values, and the faults: the first
/// stop ends the query; a query whose every row failed fails with the
/// first fault.
fn kept<T>(
    what: &str,
    rows: Vec<DRow>,
    got: Vec<Result<T, Fault>>,
    faults: &mut Vec<String>,
) -> Result<Vec<(DRow, T)>, Failed> {
    let incoming = rows.len();
    let mut out = Vec::with_capacity(incoming);
    let mut first: Option<Fault> = None;
    for (r, v) in rows.into_iter().zip(got) {
        match v {
            Ok(v) => out.push((r, v)),
            Err(f) if f.stop.is_some() => return Err(Failed::Stopped(f)),
            Err(f) if f.refuses => {
                return Err(Failed::At(
                    format!("{what}: {}, so the query is refused", f.message),
                    f.at,
                ));
            }
            Err(f) => {
                if faults.len() < 3 {
                    faults.push(format!("{what}: {}", f.message));
                }
                first.get_or_insert(f);
            }
        }
    }
    if out.is_empty()
        && incoming > 0
        && let Some(f) = first
    {
        return Err(Failed::At(
            format!("every row failed at {what}: {}", f.message),
            f.at,
        ));
    }
    Ok(out)
}

/// A row as a value, for a group's `rows`: a page as its fields (with
/// `file`), a task as its own then its page's, each with the names
/// `FLATTEN` bound; a group as `key` and `rows`.
fn value_of(env: &Env, r: &DRow) -> Result<Val, Fault> {
    Ok(match r {
        DRow::Item { note, task, names } => {
            let page = env.page_obj(*note as usize)?;
            let mut o = match task {
                Some(k) => match env.task_obj(*note as usize, *k as usize, 0)? {
                    Val::Obj(o) => o,
                    _ => Vec::new(),
                },
                None => Vec::new(),
            };
            if let Val::Obj(fields) = page {
                for (k, v) in fields {
                    if !o.iter().any(|(n, _)| *n == k) {
                        o.push((k, v));
                    }
                }
            }
            for (k, v) in names {
                match o.iter_mut().find(|(n, _)| n == k) {
                    Some(slot) => slot.1 = v.clone(),
                    None => o.push((k.clone(), v.clone())),
                }
            }
            Val::Obj(o)
        }
        DRow::Group { key, members, .. } => Val::Obj(vec![
            ("key".into(), key.clone()),
            (
                "rows".into(),
                Val::List(
                    members
                        .iter()
                        .map(|m| value_of(env, m))
                        .collect::<Result<_, _>>()?,
                ),
            ),
        ]),
    })
}

fn bind(names: &mut Vec<(String, Val)>, name: &str, v: Val) {
    names.retain(|(n, _)| n != name);
    names.push((name.to_owned(), v));
}

/// Runs query `q` of note `this`, collecting the first faults of rows
/// left out in `faults`.
pub fn run(
    env: &Env,
    q: &Query,
    this: Option<FileRef>,
    faults: &mut Vec<String>,
) -> Result<Answer, Failed> {
    let g = env.graph;
    let pages = match &q.from {
        Some(s) => source(env, s, this).map_err(|m| Failed::At(m, 0))?,
        None => vec![true; g.notes.len()],
    };
    let mut rows: Vec<DRow> = Vec::new();
    for (i, _) in pages.iter().enumerate().filter(|(_, m)| **m) {
        let note = i as u32;
        match q.kind {
            Kind::Task => rows.extend((0..g.notes[i].facts.tasks.len()).map(|k| DRow::Item {
                note,
                task: Some(k as u32),
                names: Vec::new(),
            })),
            _ => rows.push(DRow::Item {
                note,
                task: None,
                names: Vec::new(),
            }),
        }
    }
    let with_rows = uses_rows(q);
    let spent = Spent(std::sync::atomic::AtomicUsize::new(0));
    let mut group_names: Vec<String> = Vec::new();
    for c in &q.commands {
        rows = match c {
            Command::Where(e) => {
                let got = each(&rows, |row, s| env.dv_test(e, row, s));
                kept("WHERE", rows, got, faults)?
                    .into_iter()
                    .filter(|(_, keep)| *keep)
                    .map(|(r, _)| r)
                    .collect()
            }
            Command::Sort(keys) => {
                let got = each(&rows, |row, s| {
                    let k = keys
                        .iter()
                        .map(|(e, _)| env.dv(e, row, s))
                        .collect::<Result<Vec<Val>, Fault>>()?;
                    spent.charge(k.iter().map(size).sum(), keys[0].0.at)?;
                    Ok(k)
                });
                let mut tagged = kept("SORT", rows, got, faults)?;
                tagged.sort_by(|(_, a), (_, b)| {
                    for ((x, y), (_, desc)) in a.iter().zip(b).zip(keys) {
                        let o = env.dv_order(x, y);
                        let o = if *desc { o.reverse() } else { o };
                        if o != Ordering::Equal {
                            return o;
                        }
                    }
                    Ordering::Equal
                });
                tagged.into_iter().map(|(r, _)| r).collect()
            }
            Command::Group(e, name) => {
                let got = each(&rows, |row, s| {
                    let v = env.dv(e, row, s)?;
                    spent.charge(size(&v), e.at)?;
                    Ok(v)
                });
                let mut tagged = kept("GROUP BY", rows, got, faults)?;
                tagged.sort_by(|(_, a), (_, b)| env.dv_order(a, b));
                let mut groups: Vec<(Val, Vec<DRow>)> = Vec::new();
                for (r, key) in tagged {
                    match groups.last_mut() {
                        Some((k, members)) if env.dv_order(k, &key) == Ordering::Equal => {
                            members.push(r)
                        }
                        _ => groups.push((key, vec![r])),
                    }
                }
                group_names.push(name.clone());
                groups
                    .into_iter()
                    .map(|(key, members)| {
                        let mut names = vec![("key".to_owned(), key.clone())];
                        bind(&mut names, name, key.clone());
                        if with_rows {
                            let list = Val::List(
                                members
                                    .iter()
                                    .map(|m| value_of(env, m))
                                    .collect::<Result<_, Fault>>()?,
                            );
                            spent.charge(size(&list), e.at)?;
                            // Each GROUP BY nests the rows a level deeper.
                            if crate::expr::dql::deeper_than(
                                &list,
                                crate::expr::dql::MAX_VALUE_DEPTH,
                            ) {
                                return Err(Failed::At(
                                    format!(
                                        "groups of groups nested more than {} deep",
                                        crate::expr::dql::MAX_VALUE_DEPTH
                                    ),
                                    e.at,
                                ));
                            }
                            bind(&mut names, "rows", list);
                        }
                        Ok(DRow::Group {
                            key,
                            members,
                            names,
                        })
                    })
                    .collect::<Result<_, Failed>>()?
            }
            Command::Flatten(e, name) => {
                let got = each(&rows, |row, s| env.dv(e, row, s));
                let mut out = Vec::new();
                for (r, v) in kept("FLATTEN", rows, got, faults)? {
                    let items = match v {
                        Val::List(l) => l,
                        v => vec![v],
                    };
                    let each_copy = cost(&r);
                    for item in items {
                        spent.charge(each_copy + size(&item), e.at)?;
                        let mut copy = r.clone();
                        match &mut copy {
                            DRow::Item { names, .. } | DRow::Group { names, .. } => {
                                bind(names, name, item)
                            }
                        }
                        out.push(copy);
                        if out.len() > MAX_ROWS {
                            return Err(Failed::At(
                                format!("FLATTEN made more than {MAX_ROWS} rows"),
                                e.at,
                            ));
                        }
                    }
                }
                // A flatten of the group's own name undoes that level.
                if group_names.last() == Some(name) {
                    group_names.pop();
                }
                out
            }
            Command::Limit(e) => {
                let row = Row::new(FileRef::Note(0), 0);
                let scope = Scope {
                    names: &[],
                    outer: None,
                    group: true,
                };
                match env.dv(e, &row, &scope)? {
                    Val::Num(n) if n >= 0.0 => {
                        rows.truncate(n as usize);
                        rows
                    }
                    v => {
                        return Err(Failed::At(
                            format!(
                                "LIMIT takes a number, not a {}",
                                crate::expr::dql::type_name(&v)
                            ),
                            e.at,
                        ));
                    }
                }
            }
        };
    }
    match &q.kind {
        Kind::Task => Ok(tasks(env, rows)),
        Kind::List { id, value } => {
            let id_name = group_names
                .last()
                .cloned()
                .unwrap_or_else(|| "File".to_owned());
            let exprs: Vec<&Dx> = value.iter().map(|(_, e)| e).collect();
            let mut columns = Vec::new();
            if *id || value.is_none() {
                columns.push(id_name);
            }
            columns.extend(value.iter().map(|(n, _)| n.clone()));
            let cells = extract(env, rows, &exprs, &spent, faults)?;
            let rows = cells
                .into_iter()
                .map(|(r, vals)| {
                    let mut out = Vec::new();
                    if *id || value.is_none() {
                        out.push(id_of(env, &r));
                    }
                    out.extend(vals.iter().map(|v| cell(env, v)));
                    out
                })
                .collect();
            Ok(Answer::Rows { columns, rows })
        }
        Kind::Table { id, columns: cols } => {
            let exprs: Vec<&Dx> = cols.iter().map(|(_, e)| e).collect();
            let mut columns = Vec::new();
            if *id {
                columns.push(
                    group_names
                        .last()
                        .cloned()
                        .unwrap_or_else(|| "File".to_owned()),
                );
            }
            columns.extend(cols.iter().map(|(n, _)| n.clone()));
            let cells = extract(env, rows, &exprs, &spent, faults)?;
            let rows = cells
                .into_iter()
                .map(|(r, vals)| {
                    let mut out = Vec::new();
                    if *id {
                        out.push(id_of(env, &r));
                    }
                    out.extend(vals.iter().map(|v| cell(env, v)));
                    out
                })
                .collect();
            Ok(Answer::Rows { columns, rows })
        }
    }
}

/// Each row's columns; a row a column fails on is left out.
fn extract(
    env: &Env,
    rows: Vec<DRow>,
    exprs: &[&Dx],
    spent: &Spent,
    faults: &mut Vec<String>,
) -> Result<Vec<(DRow, Vec<Val>)>, Failed> {
    if exprs.is_empty() {
        return Ok(rows.into_iter().map(|r| (r, Vec::new())).collect());
    }
    let got = each(&rows, |row, s| {
        let cells = exprs
            .iter()
            .map(|e| env.dv(e, row, s))
            .collect::<Result<Vec<Val>, Fault>>()?;
        spent.charge(cells.iter().map(size).sum(), exprs[0].at)?;
        Ok(cells)
    });
    kept("a column", rows, got, faults)
}

/// A row's first column: its page's path, or its group's key.
fn id_of(env: &Env, r: &DRow) -> Value {
    match r {
        DRow::Item { note, .. } => Value::String(env.graph.notes[*note as usize].path.clone()),
        DRow::Group { key, .. } => env.json_of(key),
    }
}

/// A `TASK` query's tasks in order, each under its groups' keys; a task
/// whose parent (or any task above it) is shown in the same group is
/// shown under it, not again.
fn tasks(env: &Env, rows: Vec<DRow>) -> Answer {
    fn walk(
        env: &Env,
        rows: &[DRow],
        keys: &mut Vec<Value>,
        out: &mut Vec<(u32, u32, Option<Value>)>,
        groups: &mut Vec<(Value, u64)>,
    ) {
        let mut here: Vec<(u32, u32)> = Vec::new();
        for r in rows {
            match r {
                DRow::Item {
                    note,
                    task: Some(k),
                    ..
                } => here.push((*note, *k)),
                DRow::Item { .. } => {}
                DRow::Group { key, members, .. } => {
                    keys.push(env.json_of(key));
                    walk(env, members, keys, out, groups);
                    keys.pop();
                }
            }
        }
        if here.is_empty() {
            return;
        }
        let shown: std::collections::HashSet<(u32, u32)> = here.iter().copied().collect();
        let group = match keys.len() {
            0 => None,
            1 => Some(keys[0].clone()),
            _ => Some(Value::Array(keys.clone())),
        };
        let mut count = 0;
        for (note, k) in here {
            let tasks = &env.graph.notes[note as usize].facts.tasks;
            let mut up = tasks[k as usize].parent;
            let mut under_shown = false;
            while let Some(p) = up {
                if shown.contains(&(note, p as u32)) {
                    under_shown = true;
                    break;
                }
                up = tasks[p].parent;
            }
            if !under_shown {
                out.push((note, k, group.clone()));
                count += 1;
            }
        }
        if let Some(v) = group {
            groups.push((v, count));
        }
    }
    let mut out = Vec::new();
    let mut groups = Vec::new();
    walk(env, &rows, &mut Vec::new(), &mut out, &mut groups);
    Answer::Tasks { tasks: out, groups }
}
