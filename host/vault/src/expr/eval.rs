//! Evaluating an expression for one file of the vault: its note
//! properties (typed as Obsidian types them), its file properties, the
//! base's formulas (each computed once per file, a circle refused), and
//! `this`, all answered from the graph the index keeps, never by reading
//! notes.

use std::cell::RefCell;
use std::cmp::Ordering;

use serde_json::Value;

use super::Fault;
use super::parse::{Bin, Ex, Node};
use super::time::Date;
use super::types::Types;
use super::value::{FileRef, LinkVal, Val, compare, num_text, sort_order};
use crate::fs::{RelPath, Root};
use crate::graph::Graph;
use crate::graph::facts::Form;
use crate::graph::resolve::Names;

/// The most characters a text an expression builds may have.
const MAX_TEXT: usize = 1 << 20;

/// The most items a list an expression joins may have (`reduce` could
/// double one at each step).
const MAX_ITEMS: usize = 1 << 16;

/// How long a query may evaluate, and whether its caller gave up: looked
/// at every [`CHECK_EVERY`] evaluation steps of each thread. A step is
/// one node of the tree for one file (each item of `map`, `filter` and
/// `reduce` is its own steps); each does bounded work (texts of at most
/// 1 MiB, lists of at most 65,536 items), so a deadline is met within
/// milliseconds whatever the expression. A deadline rather than a step
/// count: what a person waits for is time, and a step's cost varies by
/// a thousandfold.
#[derive(Clone, Copy)]
pub struct Budget<'a> {
    pub deadline: std::time::Instant,
    pub ms: u64,
    pub job: crate::job::Job<'a>,
}

/// Evaluation steps between two looks at the budget.
const CHECK_EVERY: u32 = 64;

/// The deepest evaluations may nest (a node inside another, formulas
/// inside formulas, the argument of a per-item method): each level is a
/// recursion, and 1,024 of them fit in well under the 2 MiB stack of the
/// threads queries run on (a test evaluates that deep on a 1 MiB stack).
pub const MAX_NEST: u32 = 1024;

impl Budget<'_> {
    /// `Err` once the deadline has passed or the call was cancelled.
    fn check(&self, at: usize) -> Result<(), Fault> {
        let stop = if self.job.is_cancelled() {
            super::Stop::Cancelled
        } else if std::time::Instant::now() > self.deadline {
            super::Stop::Budget
        } else {
            return Ok(());
        };
        let message = match stop {
            super::Stop::Budget => format!(
                "the query ran past its budget of {} ms (QUERY_BUDGET_MS)",
                self.ms
            ),
            super::Stop::Cancelled => "the client cancelled the call".to_owned(),
        };
        Err(Fault {
            stop: Some(stop),
            ..fault(message, at)
        })
    }
}

/// What every file's evaluation shares.
pub struct Env<'a> {
    pub graph: &'a Graph,
    /// The vault's files that are not notes (attachments, bases).
    pub others: &'a Names,
    pub root: &'a Root,
    pub types: &'a Types,
    /// The moment the query started, in milliseconds since the epoch:
    /// `now()` is the same for every file.
    pub now: i64,
    pub this: Option<FileRef>,
    pub formulas: &'a [(String, Ex)],
    pub budget: Budget<'a>,
}

/// One file being evaluated, with the formulas computed for it so far.
pub struct Row {
    pub file: FileRef,
    memo: RefCell<Vec<Slot>>,
    /// How many formulas are being computed, one inside another.
    depth: std::cell::Cell<usize>,
    /// Evaluation steps taken, for the budget's looks.
    steps: std::cell::Cell<u32>,
    /// How deep the evaluation is now.
    nest: std::cell::Cell<u32>,
}

/// One level of evaluation, given back when it ends.
struct Level<'r>(&'r std::cell::Cell<u32>);

impl Drop for Level<'_> {
    fn drop(&mut self) {
        self.0.set(self.0.get() - 1);
    }
}

/// The deepest formulas may use one another (each level is a recursion).
const MAX_FORMULA_DEPTH: usize = 32;

/// `v`, or a fault when it weighs more than a query may hold.
pub fn heavy(v: Val, at: usize) -> Result<Val, Fault> {
    if super::value::weight(&v) > super::value::MAX_WEIGHT {
        return Err(fault("a value over 4 MiB", at));
    }
    Ok(v)
}

#[derive(Clone)]
enum Slot {
    Empty,
    Busy,
    Done(Val),
}

impl Row {
    pub fn new(file: FileRef, formulas: usize) -> Row {
        Row {
            file,
            memo: RefCell::new(vec![Slot::Empty; formulas]),
            depth: std::cell::Cell::new(0),
            steps: std::cell::Cell::new(CHECK_EVERY - 1),
            nest: std::cell::Cell::new(0),
        }
    }

    /// One evaluation step at column `at`, one level deeper: the budget is
    /// looked at every [`CHECK_EVERY`] steps.
    fn enter(&self, at: usize, budget: &Budget<'_>) -> Result<Level<'_>, Fault> {
        let steps = self.steps.get().wrapping_add(1);
        self.steps.set(steps);
        if steps.is_multiple_of(CHECK_EVERY) {
            budget.check(at)?;
        }
        if self.nest.get() >= MAX_NEST {
            return Err(fault(
                format!("an evaluation nested more than {MAX_NEST} deep"),
                at,
            ));
        }
        self.nest.set(self.nest.get() + 1);
        Ok(Level(&self.nest))
    }

    /// The same, for another file (its memory kept). Its first step looks
    /// at the budget: a file's first steps may be heavy (`split()` of a
    /// long text), and a query past its deadline starts no file.
    pub fn reset(&mut self, file: FileRef) {
        self.file = file;
        self.memo.get_mut().fill(Slot::Empty);
        self.depth.set(0);
        self.nest.set(0);
        self.steps.set(CHECK_EVERY - 1);
    }
}

/// The variables of `filter`, `map` and `reduce`, and of a summary.
#[derive(Clone, Copy, Default)]
pub struct Vars<'v> {
    value: Option<&'v Val>,
    index: Option<usize>,
    acc: Option<&'v Val>,
    pub values: Option<&'v Val>,
}

impl<'v> Vars<'v> {
    pub fn summary(values: &'v Val) -> Vars<'v> {
        Vars {
            values: Some(values),
            ..Vars::default()
        }
    }
}

fn fault(message: impl Into<String>, at: usize) -> Fault {
    Fault::new(message, at)
}

/// The file properties Bases has.
pub const FILE_FIELDS: &[&str] = &[
    "name",
    "basename",
    "path",
    "folder",
    "ext",
    "size",
    "ctime",
    "mtime",
    "tags",
    "links",
    "embeds",
    "backlinks",
    "properties",
    "file",
];

impl Env<'_> {
    pub fn path(&self, f: FileRef) -> &str {
        match f {
            FileRef::Note(i) => &self.graph.notes[i as usize].path,
            FileRef::Other(j) => self.others.path(j as usize),
        }
    }

    /// Whether `e` holds for the file of `row`.
    pub fn test(&self, e: &Ex, row: &Row) -> Result<bool, Fault> {
        Ok(self.eval(e, row, Vars::default())?.truthy())
    }

    pub fn eval(&self, e: &Ex, row: &Row, vars: Vars<'_>) -> Result<Val, Fault> {
        let _level = row.enter(e.at, &self.budget)?;
        self.node(e, row, vars)
    }

    fn node(&self, e: &Ex, row: &Row, vars: Vars<'_>) -> Result<Val, Fault> {
        let at = e.at;
        Ok(match &e.node {
            Node::Lit(v) => v.clone(),
            Node::List(items) => heavy(
                Val::List(
                    items
                        .iter()
                        .map(|i| self.eval(i, row, vars))
                        .collect::<Result<_, _>>()?,
                ),
                at,
            )?,
            Node::Object(entries) => heavy(
                Val::Obj(
                    entries
                        .iter()
                        .map(|(k, e)| Ok((k.clone(), self.eval(e, row, vars)?)))
                        .collect::<Result<_, Fault>>()?,
                ),
                at,
            )?,
            Node::Prop(name) => self.prop(row.file, name, at)?,
            Node::File => Val::File(row.file),
            Node::This => self.this.map_or(Val::Null, Val::File),
            Node::ThisProp(name) => match self.this {
                Some(f) => self.prop(f, name, at)?,
                None => Val::Null,
            },
            Node::Formula(name) => self.formula(name, row, at)?,
            Node::Var(name) => match *name {
                "value" => vars.value.cloned().unwrap_or(Val::Null),
                "index" => vars.index.map_or(Val::Null, |i| Val::Num(i as f64)),
                "acc" => vars.acc.cloned().unwrap_or(Val::Null),
                _ => vars.values.cloned().unwrap_or(Val::Null),
            },
            Node::Field(on, name) => {
                let v = self.eval(on, row, vars)?;
                self.field(&v, name, at)?
            }
            Node::Index(on, i) => {
                let v = self.eval(on, row, vars)?;
                let i = self.eval(i, row, vars)?;
                index(&v, &i)
            }
            Node::Not(x) => Val::Bool(!self.eval(x, row, vars)?.truthy()),
            Node::Neg(x) => match self.eval(x, row, vars)? {
                Val::Num(n) => Val::Num(-n),
                Val::Dur(d) => Val::Dur(d.scaled(-1.0)),
                Val::Null => Val::Null,
                v => return Err(fault(format!("`-` cannot negate a {}", v.type_name()), at)),
            },
            Node::Bin(op, a, b) => self.binary(*op, a, b, row, vars)?,
            Node::Call(f, args) => self.call(f, args, row, vars, at)?,
            Node::Method(on, m, args) => {
                let v = self.eval(on, row, vars)?;
                self.method(v, m, args, row, vars, at)?
            }
        })
    }

    fn formula(&self, name: &str, row: &Row, at: usize) -> Result<Val, Fault> {
        let Some(k) = self.formulas.iter().position(|(n, _)| n == name) else {
            return Err(fault(
                format!("`formula.{name}` is not one of the base's formulas"),
                at,
            ));
        };
        let slot = row.memo.borrow()[k].clone();
        match slot {
            Slot::Done(v) => return Ok(v),
            Slot::Busy => {
                return Err(fault(format!("`formula.{name}` refers to itself"), at));
            }
            Slot::Empty => {}
        }
        if row.depth.get() >= MAX_FORMULA_DEPTH {
            return Err(fault(
                format!("formulas that use formulas more than {MAX_FORMULA_DEPTH} deep"),
                at,
            ));
        }
        row.memo.borrow_mut()[k] = Slot::Busy;
        row.depth.set(row.depth.get() + 1);
        let v = self.eval(&self.formulas[k].1, row, Vars::default());
        row.depth.set(row.depth.get() - 1);
        row.memo.borrow_mut()[k] = match &v {
            Ok(v) => Slot::Done(v.clone()),
            Err(_) => Slot::Empty,
        };
        v
    }

    /// A note property of `file`, typed by `.obsidian/types.json` or, when
    /// it names no type, by its value.
    fn prop(&self, file: FileRef, name: &str, at: usize) -> Result<Val, Fault> {
        let FileRef::Note(i) = file else {
            return Ok(Val::Null);
        };
        let props = &self.graph.notes[i as usize].facts.props;
        let found = props.get(name).or_else(|| {
            props
                .iter()
                .find(|(k, _)| k.eq_ignore_ascii_case(name))
                .map(|(_, v)| v)
        });
        let Some(v) = found else {
            return Ok(Val::Null);
        };
        self.types.read(name, v, file).map_err(|why| Fault {
            malformed: true,
            ..fault(format!("property `{name}` {why}"), at)
        })
    }

    /// A value made from front matter, as Obsidian reads it without a type.
    pub fn json(v: &Value, from: Option<FileRef>) -> Val {
        match v {
            Value::Null => Val::Null,
            Value::Bool(b) => Val::Bool(*b),
            Value::Number(n) => n.as_f64().map_or(Val::Null, Val::Num),
            Value::String(s) => text_val(s, from),
            Value::Array(a) => Val::List(a.iter().map(|v| Env::json(v, from)).collect()),
            Value::Object(o) => Val::Obj(
                o.iter()
                    .map(|(k, v)| (k.clone(), Env::json(v, from)))
                    .collect(),
            ),
        }
    }

    fn field(&self, v: &Val, name: &str, at: usize) -> Result<Val, Fault> {
        Ok(match v {
            Val::File(f) => self.file_field(*f, name, at)?,
            Val::Date(d) => d.field(name).map_or(Val::Null, Val::Num),
            Val::Str(s) if name == "length" => Val::Num(s.chars().count() as f64),
            Val::List(l) if name == "length" => Val::Num(l.len() as f64),
            Val::Obj(o) => o
                .iter()
                .find(|(k, _)| k == name)
                .map_or(Val::Null, |(_, v)| v.clone()),
            _ => Val::Null,
        })
    }

    fn stat(&self, f: FileRef) -> (u64, i128, i128) {
        match f {
            FileRef::Note(i) => {
                let n = &self.graph.notes[i as usize];
                (n.size, n.mtime_ns, n.ctime_ns)
            }
            FileRef::Other(_) => RelPath::parse(self.path(f), false)
                .ok()
                .and_then(|p| self.root.stat(&p).ok().flatten())
                .map_or((0, 0, 0), |s| (s.size, s.mtime_ns, s.ctime_ns)),
        }
    }

    fn file_field(&self, f: FileRef, name: &str, at: usize) -> Result<Val, Fault> {
        let path = self.path(f);
        let file_name = path.rsplit('/').next().unwrap_or(path);
        let (stem, ext) = match file_name.rsplit_once('.') {
            Some((s, e)) if !s.is_empty() => (s, e),
            _ => (file_name, ""),
        };
        let note = match f {
            FileRef::Note(i) => Some(i as usize),
            FileRef::Other(_) => None,
        };
        let ns_date = |ns: i128| Val::Date(Date::from_ms((ns / 1_000_000) as i64, true));
        Ok(match name {
            "name" => Val::Str(file_name.to_owned()),
            "basename" => Val::Str(stem.to_owned()),
            "path" => Val::Str(path.to_owned()),
            "folder" => Val::Str(match path.rsplit_once('/') {
                Some((dir, _)) => dir.to_owned(),
                None => "/".to_owned(),
            }),
            "ext" => Val::Str(ext.to_owned()),
            "size" => Val::Num(self.stat(f).0 as f64),
            "mtime" => ns_date(self.stat(f).1),
            "ctime" => {
                let (_, m, c) = self.stat(f);
                ns_date(if c > 0 { c } else { m })
            }
            "file" => Val::File(f),
            "tags" => Val::List(
                note.map(|i| &self.graph.notes[i].facts.tags)
                    .into_iter()
                    .flatten()
                    .map(|t| Val::Str(format!("#{t}")))
                    .collect(),
            ),
            "links" | "embeds" => {
                let embeds = name == "embeds";
                let Some(i) = note else {
                    return Ok(Val::List(Vec::new()));
                };
                let facts = &self.graph.notes[i].facts;
                Val::List(
                    facts
                        .links
                        .iter()
                        .zip(self.graph.targets(i))
                        .filter(|(l, _)| (l.form == Form::Embed) == embeds)
                        .map(|(l, t)| {
                            Val::Link(Box::new(LinkVal {
                                target: match t {
                                    Some(t) => self.graph.notes[*t as usize].path.clone(),
                                    None => l.target.clone(),
                                },
                                display: None,
                                from: Some(f),
                            }))
                        })
                        .collect(),
                )
            }
            "backlinks" => {
                let Some(i) = note else {
                    return Ok(Val::List(Vec::new()));
                };
                let mut from: Vec<u32> = self.graph.backlinks(i).iter().map(|e| e.from).collect();
                from.dedup();
                Val::List(
                    from.into_iter()
                        .map(|n| Val::File(FileRef::Note(n)))
                        .collect(),
                )
            }
            "properties" => match note {
                Some(i) => Env::json(
                    &Value::Object(self.graph.notes[i].facts.props.clone()),
                    Some(f),
                ),
                None => Val::Obj(Vec::new()),
            },
            other => {
                return Err(fault(format!("`file.{other}` is not a file property"), at));
            }
        })
    }

    /// The file a link, a file or a path names.
    /// `v` with each link that resolves written as the file it resolves
    /// to (`[[Ana]]`, `[[people/Ana]]` and `[[ana]]` are one value): what
    /// groups and unique values are told apart by, as `==` tells them.
    pub fn canonical(&self, v: Val) -> Val {
        match v {
            Val::Link(l) => match self.resolve(&l.target, l.from) {
                Some(f) => {
                    let path = self.path(f);
                    Val::Link(Box::new(LinkVal {
                        target: path.strip_suffix(".md").unwrap_or(path).to_owned(),
                        display: None,
                        from: None,
                    }))
                }
                None => Val::Link(l),
            },
            Val::List(items) => Val::List(items.into_iter().map(|i| self.canonical(i)).collect()),
            v => v,
        }
    }

    pub fn file_of(&self, v: &Val) -> Option<FileRef> {
        match v {
            Val::File(f) => Some(*f),
            Val::Link(l) => self.resolve(&l.target, l.from),
            Val::Str(s) => self.resolve(s, None),
            _ => None,
        }
    }

    /// A link target (`Note`, `folder/Note.md`, `[[Note|shown]]`) as a note
    /// or other file, resolved as Obsidian resolves links from `from`.
    fn resolve(&self, target: &str, from: Option<FileRef>) -> Option<FileRef> {
        let t = link_text(target);
        if let Some(i) = self.graph.find(t) {
            return Some(FileRef::Note(i as u32));
        }
        let from = from.map_or("", |f| self.path(f));
        if let Some(i) = self.graph.names().resolve(from, t, Form::Wikilink) {
            return Some(FileRef::Note(i as u32));
        }
        self.others
            .resolve(from, t, Form::Wikilink)
            .map(|j| FileRef::Other(j as u32))
    }

    /// Whether note `f` links to what `other` names.
    fn has_link(&self, f: FileRef, other: &Val) -> bool {
        let FileRef::Note(i) = f else {
            return false;
        };
        let i = i as usize;
        match self.file_of(other) {
            Some(FileRef::Note(t)) => self.graph.targets(i).contains(&Some(t)),
            Some(FileRef::Other(j)) => {
                let want = self.others.path(j as usize);
                let from = &self.graph.notes[i].path;
                self.graph.notes[i].facts.links.iter().any(|l| {
                    self.others
                        .resolve(from, &l.target, l.form)
                        .is_some_and(|k| self.others.path(k) == want)
                })
            }
            None => {
                let Some(s) = text_of(other) else {
                    return false;
                };
                let want = link_text(&s).to_lowercase();
                self.graph.notes[i]
                    .facts
                    .links
                    .iter()
                    .any(|l| l.target.to_lowercase() == want)
            }
        }
    }

    /// Whether two values are equal as `==` says: links equal the file they
    /// resolve to and each other when they point to the same file.
    pub fn equal(&self, a: &Val, b: &Val) -> bool {
        match (a, b) {
            (Val::Null, Val::Null) => true,
            (Val::Null, _) | (_, Val::Null) => false,
            (Val::List(x), Val::List(y)) => {
                x.len() == y.len() && x.iter().zip(y).all(|(p, q)| self.equal(p, q))
            }
            (Val::Link(_) | Val::File(_), Val::Link(_) | Val::File(_)) => {
                match (self.file_of(a), self.file_of(b)) {
                    (Some(p), Some(q)) => p == q,
                    _ => link_key(a) == link_key(b),
                }
            }
            (Val::Link(_), Val::Str(s)) | (Val::Str(s), Val::Link(_)) => {
                let l = if matches!(a, Val::Link(_)) { a } else { b };
                match (self.file_of(l), self.resolve(s, None)) {
                    (Some(p), Some(q)) => p == q,
                    _ => link_key(l).as_deref() == Some(&link_text(s).to_lowercase()),
                }
            }
            (Val::Regex(..), _) | (_, Val::Regex(..)) | (Val::Obj(_), _) | (_, Val::Obj(_)) => {
                false
            }
            _ => compare(a, b) == Some(Ordering::Equal),
        }
    }

    /// A value as a text (`toString()`, `+` with a text, `join`).
    pub fn text(&self, v: &Val) -> String {
        match v {
            Val::Null => String::new(),
            Val::Bool(b) => b.to_string(),
            Val::Num(n) => num_text(*n),
            Val::Str(s) => s.clone(),
            Val::Date(d) => {
                if d.time {
                    d.format("YYYY-MM-DD HH:mm:ss")
                } else {
                    d.format("YYYY-MM-DD")
                }
            }
            Val::Dur(d) => num_text(d.approx_ms()),
            Val::List(l) => l
                .iter()
                .map(|v| self.text(v))
                .collect::<Vec<_>>()
                .join(", "),
            Val::Obj(o) => {
                serde_json::to_string(&self.json_of(&Val::Obj(o.clone()))).unwrap_or_default()
            }
            Val::Link(l) => l
                .display
                .clone()
                .unwrap_or_else(|| link_text(&l.target).to_owned()),
            Val::File(f) => self.path(*f).to_owned(),
            Val::Regex(r, _) => format!("/{}/", r.as_str()),
        }
    }

    /// A value as a tool returns it: dates in ISO 8601, a link as the path
    /// it resolves to (or its target as written), a file as its path.
    pub fn json_of(&self, v: &Val) -> Value {
        match v {
            Val::Null => Value::Null,
            Val::Bool(b) => Value::Bool(*b),
            Val::Num(n) => num_json(*n),
            Val::Str(s) => Value::String(s.clone()),
            Val::Date(d) => Value::String(d.iso()),
            Val::Dur(d) => {
                serde_json::Number::from_f64(d.approx_ms()).map_or(Value::Null, Value::Number)
            }
            Val::List(l) => Value::Array(l.iter().map(|v| self.json_of(v)).collect()),
            Val::Obj(o) => Value::Object(
                o.iter()
                    .map(|(k, v)| (k.clone(), self.json_of(v)))
                    .collect(),
            ),
            Val::Link(l) => Value::String(match self.file_of(v) {
                Some(f) => self.path(f).to_owned(),
                None => link_text(&l.target).to_owned(),
            }),
            Val::File(f) => Value::String(self.path(*f).to_owned()),
            Val::Regex(r, _) => Value::String(format!("/{}/", r.as_str())),
        }
    }

    fn binary(&self, op: Bin, a: &Ex, b: &Ex, row: &Row, vars: Vars<'_>) -> Result<Val, Fault> {
        let at = a.at;
        let x = self.eval(a, row, vars)?;
        match op {
            Bin::And if !x.truthy() => return Ok(Val::Bool(false)),
            Bin::Or if x.truthy() => return Ok(Val::Bool(true)),
            _ => {}
        }
        let y = self.eval(b, row, vars)?;
        let ord = || compare(&x, &y);
        Ok(match op {
            Bin::And | Bin::Or => Val::Bool(y.truthy()),
            Bin::Eq => Val::Bool(self.equal(&x, &y)),
            Bin::Ne => Val::Bool(!self.equal(&x, &y)),
            Bin::Lt => Val::Bool(ord() == Some(Ordering::Less)),
            Bin::Le => Val::Bool(matches!(ord(), Some(Ordering::Less | Ordering::Equal))),
            Bin::Gt => Val::Bool(ord() == Some(Ordering::Greater)),
            Bin::Ge => Val::Bool(matches!(ord(), Some(Ordering::Greater | Ordering::Equal))),
            Bin::Add | Bin::Sub => self.add(op == Bin::Add, x, y, at)?,
            Bin::Mul | Bin::Div | Bin::Rem => arith(op, x, y, at)?,
        })
    }

    /// `x + y` (or `x - y`), adding to `x` in place where it can: a text
    /// or a list is extended, not copied.
    fn add(&self, plus: bool, x: Val, y: Val, at: usize) -> Result<Val, Fault> {
        let sign = if plus { 1 } else { -1 };
        Ok(match (x, y) {
            (Val::Null, _) | (_, Val::Null) => Val::Null,
            (Val::Num(a), Val::Num(b)) => Val::Num(a + sign as f64 * b),
            (Val::Date(d), other) if other.as_dur().is_some() => {
                let dur = other.as_dur().expect("checked");
                Val::Date(d.add(dur, sign).ok_or_else(|| {
                    fault(
                        "a date past the range dates hold (years -271821 to 275760)",
                        at,
                    )
                })?)
            }
            (Val::Date(a), Val::Date(b)) if !plus => Val::Num(a.ms as f64 - b.ms as f64),
            (Val::Dur(a), Val::Dur(b)) => Val::Dur(a.plus(b, sign)),
            (x @ Val::Str(_), y) | (x, y @ Val::Str(_)) if plus => {
                let mut s = match x {
                    Val::Str(s) => s,
                    x => self.text(&x),
                };
                s.push_str(&self.text(&y));
                if s.len() > MAX_TEXT {
                    return Err(fault("a text over 1 MiB", at));
                }
                Val::Str(s)
            }
            (Val::List(mut a), Val::List(b)) if plus => {
                if a.len() + b.len() > MAX_ITEMS {
                    return Err(fault(format!("a list of more than {MAX_ITEMS} items"), at));
                }
                a.extend(b);
                heavy(Val::List(a), at)?
            }
            (x, y) => {
                return Err(fault(
                    format!(
                        "`{}` does not apply to a {} and a {}",
                        if plus { "+" } else { "-" },
                        x.type_name(),
                        y.type_name()
                    ),
                    at,
                ));
            }
        })
    }

    fn call(
        &self,
        f: &str,
        args: &[Ex],
        row: &Row,
        vars: Vars<'_>,
        at: usize,
    ) -> Result<Val, Fault> {
        if f == "if" {
            let [c, rest @ ..] = args else {
                return Err(fault("`if()` takes a condition and one or two values", at));
            };
            if rest.is_empty() || rest.len() > 2 {
                return Err(fault("`if()` takes a condition and one or two values", at));
            }
            return if self.eval(c, row, vars)?.truthy() {
                self.eval(&rest[0], row, vars)
            } else {
                rest.get(1)
                    .map_or(Ok(Val::Null), |e| self.eval(e, row, vars))
            };
        }
        let a: Vec<Val> = args
            .iter()
            .map(|e| self.eval(e, row, vars))
            .collect::<Result<_, _>>()?;
        super::call::global(self, f, &a, at)
    }

    fn method(
        &self,
        v: Val,
        m: &str,
        args: &[Ex],
        row: &Row,
        vars: Vars<'_>,
        at: usize,
    ) -> Result<Val, Fault> {
        // The per-item methods evaluate their argument once per item.
        if let ("filter" | "map" | "reduce", Val::List(items)) = (m, &v) {
            return self.per_item(m, items, args, row, vars, at);
        }
        let a: Vec<Val> = args
            .iter()
            .map(|e| self.eval(e, row, vars))
            .collect::<Result<_, _>>()?;
        super::call::method(self, v, m, &a, at)
    }

    fn per_item(
        &self,
        m: &str,
        items: &[Val],
        args: &[Ex],
        row: &Row,
        vars: Vars<'_>,
        at: usize,
    ) -> Result<Val, Fault> {
        let Some(body) = args.first() else {
            return Err(fault(
                format!("`{m}()` takes an expression of `value` and `index`"),
                at,
            ));
        };
        let with = |value: &Val, index: usize, acc: Option<&Val>| -> Result<Val, Fault> {
            self.eval(
                body,
                row,
                Vars {
                    value: Some(value),
                    index: Some(index),
                    acc,
                    values: vars.values,
                },
            )
        };
        Ok(match m {
            "filter" => {
                let mut out = Vec::new();
                for (i, v) in items.iter().enumerate() {
                    if with(v, i, None)?.truthy() {
                        out.push(v.clone());
                    }
                }
                Val::List(out)
            }
            "map" => {
                let mut out = Vec::with_capacity(items.len());
                let mut held = 0;
                for (i, v) in items.iter().enumerate() {
                    let x = with(v, i, None)?;
                    held += super::value::weight(&x);
                    if held > super::value::MAX_WEIGHT {
                        return Err(fault("`map()` would make a value over 4 MiB", at));
                    }
                    out.push(x);
                }
                Val::List(out)
            }
            _ => {
                let mut acc = match args.get(1) {
                    Some(e) => self.eval(e, row, vars)?,
                    None => Val::Null,
                };
                // `acc + x` adds to the accumulator in place: read as
                // written, each item would copy it whole (n items, n²/2
                // bytes copied: 200,000 one-letter items took 4.9 s).
                let added = match &body.node {
                    Node::Bin(Bin::Add, l, r) if matches!(l.node, Node::Var("acc")) => Some(&**r),
                    _ => None,
                };
                let mut held = super::value::weight(&acc);
                for (i, v) in items.iter().enumerate() {
                    acc = match added {
                        Some(r) => {
                            let _level = row.enter(body.at, &self.budget)?;
                            let x = self.eval(
                                r,
                                row,
                                Vars {
                                    value: Some(v),
                                    index: Some(i),
                                    acc: Some(&acc),
                                    values: vars.values,
                                },
                            )?;
                            held += super::value::weight(&x);
                            match (acc, x) {
                                // Weighed by `held`, not again whole.
                                (Val::List(mut a), Val::List(b)) => {
                                    if a.len() + b.len() > MAX_ITEMS {
                                        return Err(fault(
                                            format!("a list of more than {MAX_ITEMS} items"),
                                            at,
                                        ));
                                    }
                                    a.extend(b);
                                    Val::List(a)
                                }
                                (acc, x) => self.add(true, acc, x, at)?,
                            }
                        }
                        None => {
                            let x = with(v, i, Some(&acc))?;
                            held = super::value::weight(&x);
                            x
                        }
                    };
                    if held > super::value::MAX_WEIGHT {
                        return Err(fault("`reduce()` would make a value over 4 MiB", at));
                    }
                }
                acc
            }
        })
    }

    pub fn tagged(&self, f: FileRef, wanted: &[Val]) -> bool {
        let FileRef::Note(i) = f else {
            return false;
        };
        let tags = &self.graph.notes[i as usize].facts.tags;
        wanted.iter().any(|w| {
            let text;
            let w = match w {
                Val::Str(s) => s.as_str(),
                other => {
                    text = self.text(other);
                    text.as_str()
                }
            };
            let w = w.trim_start_matches('#');
            let lower;
            let w = if w.chars().any(char::is_uppercase) {
                lower = w.to_lowercase();
                lower.as_str()
            } else {
                w
            };
            tags.iter().any(|t| crate::graph::filter::tag_is(t, w))
        })
    }

    pub fn links_to(&self, f: FileRef, other: &Val) -> bool {
        self.has_link(f, other)
    }

    pub fn has_property(&self, f: FileRef, name: &str) -> bool {
        match f {
            FileRef::Note(i) => self.graph.notes[i as usize]
                .facts
                .props
                .keys()
                .any(|k| k == name || k.eq_ignore_ascii_case(name)),
            FileRef::Other(_) => false,
        }
    }

    pub fn now(&self) -> i64 {
        self.now
    }
}

/// A number as JSON: a whole one as an integer (`5`, not `5.0`); one
/// JSON cannot hold (NaN, infinite) as null.
pub fn num_json(n: f64) -> Value {
    if n.fract() == 0.0 && n.abs() < 9.0e15 {
        Value::from(n as i64)
    } else {
        serde_json::Number::from_f64(n).map_or(Value::Null, Value::Number)
    }
}

/// A link's target without `[[ ]]`, a shown text after `|`, or `#place`.
pub fn link_text(s: &str) -> &str {
    let s = s.trim();
    let s = s
        .strip_prefix("[[")
        .and_then(|s| s.strip_suffix("]]"))
        .unwrap_or(s);
    let s = s.split('|').next().unwrap_or(s);
    s.split('#').next().unwrap_or(s).trim()
}

fn link_key(v: &Val) -> Option<String> {
    match v {
        Val::Link(l) => Some(link_text(&l.target).trim_end_matches(".md").to_lowercase()),
        _ => None,
    }
}

fn text_of(v: &Val) -> Option<String> {
    match v {
        Val::Str(s) => Some(s.clone()),
        Val::Link(l) => Some(l.target.clone()),
        _ => None,
    }
}

/// A front-matter text as Obsidian reads it: `[[Note]]` a link, an ISO
/// date a date, anything else text.
pub fn text_val(s: &str, from: Option<FileRef>) -> Val {
    let t = s.trim();
    if t.starts_with("[[") && t.ends_with("]]") && t.matches("[[").count() == 1 {
        let inner = &t[2..t.len() - 2];
        let (target, display) = match inner.split_once('|') {
            Some((a, b)) => (a, Some(b.to_owned())),
            None => (inner, None),
        };
        return Val::Link(Box::new(LinkVal {
            target: target.to_owned(),
            display,
            from,
        }));
    }
    if t.len() >= 10
        && t.as_bytes()[4] == b'-'
        && let Some(d) = Date::parse(t)
    {
        return Val::Date(d);
    }
    Val::Str(s.to_owned())
}

fn index(v: &Val, i: &Val) -> Val {
    match (v, i) {
        (Val::List(l), Val::Num(n)) if *n >= 0.0 => {
            l.get(*n as usize).cloned().unwrap_or(Val::Null)
        }
        (Val::Str(s), Val::Num(n)) if *n >= 0.0 => s
            .chars()
            .nth(*n as usize)
            .map_or(Val::Null, |c| Val::Str(c.to_string())),
        (Val::Obj(o), Val::Str(k)) => o
            .iter()
            .find(|(n, _)| n == k)
            .map_or(Val::Null, |(_, v)| v.clone()),
        _ => Val::Null,
    }
}

fn arith(op: Bin, x: Val, y: Val, at: usize) -> Result<Val, Fault> {
    Ok(match (&x, &y) {
        (Val::Null, _) | (_, Val::Null) => Val::Null,
        (Val::Num(a), Val::Num(b)) => Val::Num(match op {
            Bin::Mul => a * b,
            Bin::Div => a / b,
            _ => a % b,
        }),
        (Val::Dur(d), Val::Num(n)) if op != Bin::Rem => {
            Val::Dur(d.scaled(if op == Bin::Mul { *n } else { 1.0 / n }))
        }
        _ => {
            let sym = match op {
                Bin::Mul => "*",
                Bin::Div => "/",
                _ => "%",
            };
            return Err(fault(
                format!(
                    "`{sym}` does not apply to a {} and a {}",
                    x.type_name(),
                    y.type_name()
                ),
                at,
            ));
        }
    })
}

/// Values in the order a sort puts them.
pub fn sorted(mut v: Vec<Val>) -> Vec<Val> {
    v.sort_by(sort_order);
    v
}
