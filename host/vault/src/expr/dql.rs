//! Dataview's expressions (the `WHERE`, `SORT`, columns and the rest of a
//! ```` ```dataview ```` query), evaluated over the same values and graph
//! as Bases' but with Dataview's meanings, which differ: `=` is equality
//! and `and`/`or` one level; values have one total order (null lowest,
//! then kinds by name), so `due < date(today)` holds for a task without
//! `due`; `file.name` has no extension; a name is a field of the row (a
//! task's own, then its page's front matter and `key:: value` lines);
//! `a.b` on a link reads the linked page, on a list each item's; functions
//! are global (`contains(tags, "#x")`) and apply to each item of a list
//! argument where Dataview's do. The query around them is
//! [`crate::dql`]; what it reads is its Expressions, Functions and
//! metadata pages.

use std::cmp::Ordering;

use super::Fault;
use super::env::Env;
use super::eval::Row;
use super::parse::Bin;
use super::task::field_value;
use super::time::{Date, Dur, today};
use super::value::{FileRef, LinkVal, Val, heavy, num_text};

/// The most characters a text a function builds may have.
const MAX_TEXT: usize = 1 << 20;

#[derive(Clone, Debug)]
pub struct Dx {
    pub node: DNode,
    /// Where it starts in the query (a byte offset).
    pub at: usize,
}

#[derive(Clone, Debug)]
pub enum DNode {
    Lit(Val),
    List(Vec<Dx>),
    Object(Vec<(String, Dx)>),
    /// A field of the row, or a name bound by `FLATTEN`, `GROUP BY` or a
    /// lambda.
    Name(String),
    /// `date(today)`, `date(sow)`, …: a moment relative to the query's.
    When(&'static str),
    /// `a.b` (the key a text) and `a[b]`.
    Index(Box<Dx>, Box<Dx>),
    Call(&'static str, Vec<Dx>),
    /// `(x) => …`: only as an argument of the functions that take one.
    Lambda(Vec<String>, Box<Dx>),
    Not(Box<Dx>),
    Bin(Bin, Box<Dx>, Box<Dx>),
}

/// The functions kura evaluates, named as Dataview names them.
pub const FUNCTIONS: &[&str] = &[
    "all",
    "any",
    "array",
    "average",
    "ceil",
    "choice",
    "contains",
    "containsword",
    "date",
    "default",
    "dur",
    "econtains",
    "endswith",
    "extract",
    "filter",
    "flat",
    "floor",
    "icontains",
    "join",
    "ldefault",
    "length",
    "link",
    "list",
    "lower",
    "map",
    "max",
    "maxby",
    "meta",
    "min",
    "minby",
    "none",
    "nonnull",
    "number",
    "object",
    "padleft",
    "padright",
    "product",
    "reduce",
    "regexmatch",
    "regexreplace",
    "regextest",
    "replace",
    "reverse",
    "round",
    "slice",
    "sort",
    "split",
    "startswith",
    "string",
    "striptime",
    "substring",
    "sum",
    "trunc",
    "truncate",
    "typeof",
    "unique",
    "upper",
];

/// The functions whose last argument may be a lambda.
const WITH_LAMBDA: &[&str] = &[
    "all", "any", "none", "filter", "map", "minby", "maxby", "sort", "reduce",
];

/// The fields Dataview gives a task itself; any other name is its inline
/// fields', then its page's.
const TASK_OWN: &[&str] = &[
    "status",
    "checked",
    "completed",
    "fullyCompleted",
    "text",
    "line",
    "path",
    "tags",
    "parent",
    "task",
    "created",
    "scheduled",
    "start",
    "due",
    "completion",
];

/// Names bound for a row: `FLATTEN`'s, a group's (`key`, `rows`, its
/// name) and a lambda's parameters, innermost first.
#[derive(Clone, Copy)]
pub struct Scope<'s> {
    pub names: &'s [(String, Val)],
    pub outer: Option<&'s Scope<'s>>,
    /// A group's row: it has its bound names and nothing else.
    pub group: bool,
}

impl Scope<'_> {
    pub const EMPTY: Scope<'static> = Scope {
        names: &[],
        outer: None,
        group: false,
    };
}

fn fault(message: impl Into<String>, at: usize) -> Fault {
    Fault::new(message, at)
}

/// Dataview's name of a value's kind, which also orders kinds.
pub fn type_name(v: &Val) -> &'static str {
    match v {
        Val::Null => "null",
        Val::Bool(_) => "boolean",
        Val::Num(_) => "number",
        Val::Str(_) | Val::Regex(..) => "string",
        Val::Date(_) => "date",
        Val::Dur(_) => "duration",
        Val::List(_) => "array",
        Val::Obj(_) | Val::File(_) => "object",
        Val::Link(_) => "link",
    }
}

/// Texts as JavaScript's `localeCompare` orders them for most texts:
/// letters without case first, then lowercase before uppercase.
fn text_order(x: &str, y: &str) -> Ordering {
    // Folded as it is compared, without allocating: a sort compares each
    // text many times.
    let folded = if x.is_ascii() && y.is_ascii() {
        x.bytes()
            .map(|b| b.to_ascii_lowercase())
            .cmp(y.bytes().map(|b| b.to_ascii_lowercase()))
    } else {
        x.chars()
            .flat_map(char::to_lowercase)
            .cmp(y.chars().flat_map(char::to_lowercase))
    };
    folded.then_with(|| y.cmp(x))
}

/// A field name as Dataview also offers it: lowercase, spaces as `-`.
fn sanitized(key: &str) -> String {
    key.trim()
        .chars()
        .map(|c| if c.is_whitespace() { '-' } else { c })
        .flat_map(char::to_lowercase)
        .collect()
}

fn key_is(key: &str, name: &str) -> bool {
    key == name || key.eq_ignore_ascii_case(name) || sanitized(key) == name
}

/// A duration as Dataview writes one (`dur(1 week, 2 days)`): numbers
/// each with a unit, spelled long or short.
pub fn duration(s: &str) -> Option<Dur> {
    let mut rest = s.trim();
    if rest.is_empty() {
        return None;
    }
    let mut out = Dur {
        months: 0,
        days: 0,
        ms: 0,
    };
    while !rest.is_empty() {
        let end = rest
            .char_indices()
            .find(|&(i, c)| !(c.is_ascii_digit() || c == '.' || (i == 0 && c == '-')))
            .map_or(rest.len(), |(i, _)| i);
        let n: f64 = rest[..end].parse().ok()?;
        rest = rest[end..].trim_start();
        let unit_end = rest
            .char_indices()
            .find(|(_, c)| !c.is_ascii_alphabetic())
            .map_or(rest.len(), |(i, _)| i);
        let (months, days, ms) = match &rest[..unit_end] {
            "year" | "years" | "yr" | "yrs" => (12.0, 0.0, 0.0),
            "month" | "months" | "mo" | "mos" => (1.0, 0.0, 0.0),
            "week" | "weeks" | "wk" | "wks" | "w" => (0.0, 7.0, 0.0),
            "day" | "days" | "d" => (0.0, 1.0, 0.0),
            "hour" | "hours" | "hr" | "hrs" | "h" => (0.0, 0.0, 3_600_000.0),
            "minute" | "minutes" | "min" | "mins" | "m" => (0.0, 0.0, 60_000.0),
            "second" | "seconds" | "sec" | "secs" | "s" => (0.0, 0.0, 1000.0),
            _ => return None,
        };
        rest = rest[unit_end..].trim_start();
        rest = rest.strip_prefix(',').unwrap_or(rest).trim_start();
        let whole = (n * days).trunc();
        out.months = out.months.checked_add((n * months).round() as i64)?;
        out.days = out.days.checked_add(whole as i64)?;
        out.ms = out
            .ms
            .checked_add((n * ms + (n * days - whole) * 86_400_000.0).round() as i64)?;
    }
    Some(out)
}

/// Dataview's short names of moments (`date(today)`), longest first.
pub const MOMENTS: &[&str] = &[
    "start-of-month",
    "start-of-week",
    "start-of-year",
    "end-of-month",
    "end-of-week",
    "end-of-year",
    "yesterday",
    "tomorrow",
    "today",
    "now",
    "sow",
    "eow",
    "som",
    "eom",
    "soy",
    "eoy",
];

/// A date Dataview reads (`2026-12-10`, `2026-12`, `2026-12-10T09:30`).
pub fn date_text(s: &str) -> Option<Date> {
    let t = s.trim();
    let b = t.as_bytes();
    if b.len() == 7 && b[4] == b'-' {
        return Date::parse(&format!("{t}-01"));
    }
    if b.len() == 13 && b[10] == b'T' {
        return Date::parse(&format!("{t}:00"));
    }
    Date::parse(t)
}

impl Env<'_> {
    /// A moment named as Dataview names it, from the query's start: weeks
    /// start on Monday (Luxon's), the end of a span is its last millisecond.
    fn moment(&self, name: &str) -> Option<Date> {
        let day = today(self.now);
        let field = |f: &str| day.field(f).unwrap_or(1.0) as i64;
        let days = |n: i64| Dur {
            months: 0,
            days: n,
            ms: 0,
        };
        let months = |n: i64| Dur {
            months: n,
            days: 0,
            ms: 0,
        };
        let last_ms = Dur {
            months: 0,
            days: 0,
            ms: -1,
        };
        let weekday = {
            use chrono::Datelike;
            chrono::DateTime::from_timestamp_millis(day.ms)
                .map(|d| {
                    d.with_timezone(&chrono::Local)
                        .weekday()
                        .num_days_from_monday()
                })
                .unwrap_or(0) as i64
        };
        let som = day.add(days(field("day") - 1), -1)?;
        let sow = day.add(days(weekday), -1)?;
        let soy = som.add(months(field("month") - 1), -1)?;
        let end = |start: Date, span: Dur| {
            start
                .add(span, 1)
                .and_then(|d| d.add(last_ms, 1))
                .map(|d| Date { time: true, ..d })
        };
        match name {
            "now" => Some(Date::from_ms(self.now, true)),
            "today" => Some(day),
            "yesterday" => day.add(days(1), -1),
            "tomorrow" => day.add(days(1), 1),
            "sow" | "start-of-week" => Some(sow),
            "eow" | "end-of-week" => end(sow, days(7)),
            "som" | "start-of-month" => Some(som),
            "eom" | "end-of-month" => end(som, months(1)),
            "soy" | "start-of-year" => Some(soy),
            "eoy" | "end-of-year" => end(soy, months(12)),
            _ => None,
        }
    }

    /// Dataview's order of two values: null lowest, then kinds by name,
    /// then by value (links by the path they resolve to).
    pub fn dv_order(&self, a: &Val, b: &Val) -> Ordering {
        match (a, b) {
            (Val::Null, Val::Null) => return Ordering::Equal,
            (Val::Null, _) => return Ordering::Less,
            (_, Val::Null) => return Ordering::Greater,
            _ => {}
        }
        let (ta, tb) = (type_name(a), type_name(b));
        if ta != tb {
            return ta.cmp(tb);
        }
        match (a, b) {
            (Val::Str(x), Val::Str(y)) => text_order(x, y),
            (Val::Num(x), Val::Num(y)) => x.partial_cmp(y).unwrap_or(Ordering::Equal),
            (Val::Bool(x), Val::Bool(y)) => x.cmp(y),
            (Val::Date(x), Val::Date(y)) => x.ms.cmp(&y.ms),
            (Val::Dur(x), Val::Dur(y)) => x.approx_ms().total_cmp(&y.approx_ms()),
            (Val::Link(_), Val::Link(_)) => {
                let path = |v: &Val| match v {
                    Val::Link(l) => match self.resolve(&l.target, l.from) {
                        Some(f) => self.path(f).to_owned(),
                        None => l.target.clone(),
                    },
                    _ => String::new(),
                };
                text_order(&path(a), &path(b))
            }
            (Val::List(x), Val::List(y)) => {
                for (p, q) in x.iter().zip(y) {
                    let o = self.dv_order(p, q);
                    if o != Ordering::Equal {
                        return o;
                    }
                }
                x.len().cmp(&y.len())
            }
            (Val::Obj(x), Val::Obj(y)) => {
                fn keys(o: &[(String, Val)]) -> Vec<&str> {
                    let mut k: Vec<&str> = o.iter().map(|(k, _)| k.as_str()).collect();
                    k.sort_unstable();
                    k
                }
                let (kx, ky) = (keys(x), keys(y));
                kx.cmp(&ky).then_with(|| {
                    for k in kx {
                        let get = |o: &[(String, Val)]| {
                            o.iter().find(|(n, _)| n == k).map(|(_, v)| v.clone())
                        };
                        let o = self
                            .dv_order(&get(x).unwrap_or(Val::Null), &get(y).unwrap_or(Val::Null));
                        if o != Ordering::Equal {
                            return o;
                        }
                    }
                    Ordering::Equal
                })
            }
            (Val::File(x), Val::File(y)) => text_order(self.path(*x), self.path(*y)),
            _ => Ordering::Equal,
        }
    }

    /// Whether `e` holds for the row.
    pub fn dv_test(&self, e: &Dx, row: &Row, scope: &Scope) -> Result<bool, Fault> {
        Ok(self.dv(e, row, scope)?.truthy())
    }

    /// `e` evaluated for the row (a page, a task, or a group when the
    /// scope says so).
    pub fn dv(&self, e: &Dx, row: &Row, scope: &Scope) -> Result<Val, Fault> {
        let _level = row.enter(e.at, &self.budget)?;
        let at = e.at;
        Ok(match &e.node {
            DNode::Lit(v) => v.clone(),
            DNode::List(items) => heavy(
                Val::List(
                    items
                        .iter()
                        .map(|i| self.dv(i, row, scope))
                        .collect::<Result<_, _>>()?,
                ),
                at,
            )?,
            DNode::Object(entries) => heavy(
                Val::Obj(
                    entries
                        .iter()
                        .map(|(k, e)| Ok((k.clone(), self.dv(e, row, scope)?)))
                        .collect::<Result<_, Fault>>()?,
                ),
                at,
            )?,
            DNode::Name(n) => self.dv_name(n, row, scope, at)?,
            DNode::When(name) => self.moment(name).map_or(Val::Null, Val::Date),
            DNode::Index(on, key) => {
                let v = self.dv(on, row, scope)?;
                let k = self.dv(key, row, scope)?;
                self.dv_index(&v, &k, at)?
            }
            DNode::Not(x) => Val::Bool(!self.dv(x, row, scope)?.truthy()),
            DNode::Bin(op, a, b) => {
                let x = self.dv(a, row, scope)?;
                match op {
                    Bin::And if !x.truthy() => return Ok(Val::Bool(false)),
                    Bin::Or if x.truthy() => return Ok(Val::Bool(true)),
                    _ => {}
                }
                let y = self.dv(b, row, scope)?;
                self.dv_binary(*op, x, y, at)?
            }
            DNode::Lambda(..) => {
                return Err(fault(
                    "a lambda (`(x) => …`) is only evaluated as the last argument of filter, map, all, any, none, minby, maxby, sort or reduce",
                    at,
                ));
            }
            DNode::Call(f, args) => self.dv_call(f, args, row, scope, at)?,
        })
    }

    fn dv_binary(&self, op: Bin, x: Val, y: Val, at: usize) -> Result<Val, Fault> {
        let ord = || self.dv_order(&x, &y);
        Ok(match op {
            Bin::And | Bin::Or => Val::Bool(y.truthy()),
            Bin::Eq => Val::Bool(ord() == Ordering::Equal),
            Bin::Ne => Val::Bool(ord() != Ordering::Equal),
            Bin::Lt => Val::Bool(ord() == Ordering::Less),
            Bin::Le => Val::Bool(ord() != Ordering::Greater),
            Bin::Gt => Val::Bool(ord() == Ordering::Greater),
            Bin::Ge => Val::Bool(ord() != Ordering::Less),
            _ => self.dv_arith(op, x, y, at)?,
        })
    }

    fn dv_arith(&self, op: Bin, x: Val, y: Val, at: usize) -> Result<Val, Fault> {
        let past = || fault("a date past the range dates hold", at);
        Ok(match (op, x, y) {
            (_, Val::Null, _) | (_, _, Val::Null) => Val::Null,
            (Bin::Add, Val::Num(a), Val::Num(b)) => Val::Num(a + b),
            (Bin::Sub, Val::Num(a), Val::Num(b)) => Val::Num(a - b),
            (Bin::Mul, Val::Num(a), Val::Num(b)) => Val::Num(a * b),
            (Bin::Div, Val::Num(a), Val::Num(b)) => Val::Num(a / b),
            (Bin::Rem, Val::Num(a), Val::Num(b)) => Val::Num(a % b),
            (Bin::Add, Val::Str(a), y) => self.joined(a, &self.dv_text(&y), at)?,
            (Bin::Add, x, Val::Str(b)) => {
                let mut a = self.dv_text(&x);
                a.push_str(&b);
                self.joined(a, "", at)?
            }
            (Bin::Mul, Val::Str(s), Val::Num(n)) | (Bin::Mul, Val::Num(n), Val::Str(s)) => {
                let n = n.max(0.0) as usize;
                if s.len().saturating_mul(n) > MAX_TEXT {
                    return Err(fault("a text over 1 MiB", at));
                }
                Val::Str(s.repeat(n))
            }
            (Bin::Add, Val::Date(d), Val::Dur(u)) | (Bin::Add, Val::Dur(u), Val::Date(d)) => {
                Val::Date(d.add(u, 1).ok_or_else(past)?)
            }
            (Bin::Sub, Val::Date(d), Val::Dur(u)) => Val::Date(d.add(u, -1).ok_or_else(past)?),
            (Bin::Sub, Val::Date(a), Val::Date(b)) => Val::Dur(Dur {
                months: 0,
                days: 0,
                ms: a.ms.saturating_sub(b.ms),
            }),
            (Bin::Add, Val::Dur(a), Val::Dur(b)) => Val::Dur(a.plus(b, 1)),
            (Bin::Sub, Val::Dur(a), Val::Dur(b)) => Val::Dur(a.plus(b, -1)),
            (Bin::Mul, Val::Dur(d), Val::Num(n)) | (Bin::Mul, Val::Num(n), Val::Dur(d)) => {
                Val::Dur(d.scaled(n))
            }
            (Bin::Div, Val::Dur(d), Val::Num(n)) if n != 0.0 => Val::Dur(d.scaled(1.0 / n)),
            (Bin::Add, Val::List(mut a), Val::List(b)) => {
                a.extend(b);
                heavy(Val::List(a), at)?
            }
            (op, x, y) => {
                let sign = match op {
                    Bin::Add => "+",
                    Bin::Sub => "-",
                    Bin::Mul => "*",
                    Bin::Div => "/",
                    _ => "%",
                };
                return Err(fault(
                    format!(
                        "`{sign}` does not apply to a {} and a {}",
                        type_name(&x),
                        type_name(&y)
                    ),
                    at,
                ));
            }
        })
    }

    fn joined(&self, mut a: String, b: &str, at: usize) -> Result<Val, Fault> {
        a.push_str(b);
        if a.len() > MAX_TEXT {
            return Err(fault("a text over 1 MiB", at));
        }
        Ok(Val::Str(a))
    }

    /// A value as Dataview writes it in text (`string()`, `+`, `join`).
    pub fn dv_text(&self, v: &Val) -> String {
        match v {
            Val::Null => "null".to_owned(),
            Val::Date(d) if !d.time => d.format("MMMM DD, YYYY"),
            Val::Date(d) => d.format("h:mm A - MMMM DD, YYYY"),
            Val::Dur(d) => {
                // Shifted into every unit as Dataview normalizes one
                // (Luxon's casual lengths: a year 365 days, a month 30, a
                // week 7, a day 24 hours), largest first.
                const DAY: i64 = 86_400_000;
                let mut rest = d.days.saturating_mul(DAY).saturating_add(d.ms);
                let mut take = |unit: i64| {
                    let n = rest / unit;
                    rest -= n * unit;
                    n
                };
                let (years, months) = (take(365 * DAY), take(30 * DAY));
                let (years, months) = (years + d.months / 12, months + d.months % 12);
                let units = [
                    (years, "year"),
                    (months, "month"),
                    (take(7 * DAY), "week"),
                    (take(DAY), "day"),
                    (take(3_600_000), "hour"),
                    (take(60_000), "minute"),
                    (take(1000), "second"),
                ];
                let mut parts = Vec::new();
                for (n, unit) in units {
                    if n != 0 {
                        parts.push(format!("{n} {unit}{}", if n.abs() == 1 { "" } else { "s" }));
                    }
                }
                if parts.is_empty() {
                    "0 seconds".to_owned()
                } else {
                    parts.join(", ")
                }
            }
            Val::List(l) => l
                .iter()
                .map(|v| self.dv_text(v))
                .collect::<Vec<_>>()
                .join(", "),
            Val::Link(l) => match &l.display {
                Some(d) => format!("[[{}|{d}]]", l.target),
                None => format!("[[{}]]", l.target),
            },
            Val::Num(n) => num_text(*n),
            other => self.text(other),
        }
    }

    /// A name: bound ones first, then the row's task's own field, its
    /// inline fields, its page's.
    fn dv_name(&self, n: &str, row: &Row, scope: &Scope, at: usize) -> Result<Val, Fault> {
        let mut s = Some(scope);
        while let Some(sc) = s {
            if let Some((_, v)) = sc.names.iter().rev().find(|(k, _)| k == n) {
                return Ok(v.clone());
            }
            if sc.group {
                return Ok(Val::Null);
            }
            s = sc.outer;
        }
        let FileRef::Note(i) = row.file else {
            return Ok(Val::Null);
        };
        match n {
            "file" => return Ok(Val::File(row.file)),
            "this" => {
                return Ok(self.this.map_or(Val::Null, |f| self.page_link(f)));
            }
            _ => {}
        }
        match row.task {
            Some(k) => self.task_field(i as usize, k as usize, n, at),
            None => self.page_field(i as usize, n),
        }
    }

    fn page_link(&self, f: FileRef) -> Val {
        Val::Link(Box::new(LinkVal {
            target: self.path(f).to_owned(),
            display: None,
            from: None,
        }))
    }

    /// A page's field: its front matter (as the vault types it), then its
    /// `key:: value` lines, by name or by Dataview's lowercase-dashed name.
    fn page_field(&self, i: usize, name: &str) -> Result<Val, Fault> {
        let facts = &self.graph.notes[i].facts;
        let f = FileRef::Note(i as u32);
        if let Some(key) = facts.props.keys().find(|k| key_is(k, name)) {
            return self.prop(f, key, 0);
        }
        Ok(facts
            .fields
            .iter()
            .find(|(k, _)| key_is(k, name))
            .map_or(Val::Null, |(_, v)| field_value(v, f)))
    }

    /// Task `k` of note `i`'s field `name`, as a `TASK` query reads it.
    fn task_field(&self, i: usize, k: usize, name: &str, at: usize) -> Result<Val, Fault> {
        let f = FileRef::Note(i as u32);
        let tasks = &self.graph.notes[i].facts.tasks;
        let t = &tasks[k];
        match name {
            "children" => {
                return Ok(Val::List(
                    (k + 1..tasks.len())
                        .filter(|&j| tasks[j].parent == Some(k))
                        .map(|j| self.task_obj(i, j))
                        .collect(),
                ));
            }
            "link" | "section" => {
                let path = &self.graph.notes[i].path;
                return Ok(Val::Link(Box::new(LinkVal {
                    target: match &t.heading {
                        Some(h) if name == "section" => format!("{path}#{h}"),
                        _ => path.clone(),
                    },
                    display: None,
                    from: None,
                })));
            }
            "text" | "visual" => {
                return Ok(Val::Str(t.raw.clone().unwrap_or_else(|| t.text.clone())));
            }
            "annotated" => return Ok(Val::Bool(!t.fields.is_empty())),
            own if TASK_OWN.contains(&own) => return self.task_prop(f, k as u32, name, at),
            _ => {}
        }
        if let Some((_, v)) = t.fields.iter().find(|(key, _)| key_is(key, name)) {
            return Ok(field_value(v, f));
        }
        self.page_field(i, name)
    }

    /// A task as a value (`file.tasks`, `children`, a group's `rows`).
    pub fn task_obj(&self, i: usize, k: usize) -> Val {
        let f = FileRef::Note(i as u32);
        let mut o: Vec<(String, Val)> = Vec::new();
        for name in TASK_OWN {
            if let Ok(v) = self.task_field(i, k, name, 0)
                && !matches!(v, Val::Null)
            {
                o.push(((*name).to_owned(), v));
            }
        }
        let t = &self.graph.notes[i].facts.tasks[k];
        for (key, v) in &t.fields {
            if !o.iter().any(|(n, _)| n == key) {
                o.push((key.clone(), field_value(v, f)));
            }
        }
        if let Ok(Val::List(children)) = self.task_field(i, k, "children", 0) {
            o.push(("children".to_owned(), Val::List(children)));
        }
        o.push(("file".to_owned(), Val::File(f)));
        Val::Obj(o)
    }

    /// `v.key` and `v[key]`.
    fn dv_index(&self, v: &Val, key: &Val, at: usize) -> Result<Val, Fault> {
        Ok(match (v, key) {
            (Val::Null, _) | (_, Val::Null) => Val::Null,
            (Val::File(f), Val::Str(k)) => self.dv_file(*f, k, at)?,
            (Val::Link(l), Val::Str(k)) => match self.resolve(&l.target, l.from) {
                Some(f @ FileRef::Note(i)) if k == "file" => {
                    let _ = i;
                    Val::File(f)
                }
                Some(FileRef::Note(i)) => self.page_field(i as usize, k)?,
                _ => Val::Null,
            },
            (Val::Obj(o), Val::Str(k)) => o
                .iter()
                .find(|(n, _)| n == k)
                .map_or(Val::Null, |(_, v)| v.clone()),
            (Val::List(items), Val::Str(_)) => heavy(
                Val::List(
                    items
                        .iter()
                        .map(|i| self.dv_index(i, key, at))
                        .collect::<Result<_, _>>()?,
                ),
                at,
            )?,
            (Val::List(items), Val::Num(n)) => items.get(*n as usize).cloned().unwrap_or(Val::Null),
            (Val::Str(s), Val::Num(n)) => s
                .chars()
                .nth(*n as usize)
                .map_or(Val::Null, |c| Val::Str(c.to_string())),
            (Val::Str(s), Val::Str(k)) if k == "length" => Val::Num(s.chars().count() as f64),
            (Val::Date(d), Val::Str(k)) => {
                let name = match k.as_str() {
                    "years" => "year",
                    "months" => "month",
                    "days" => "day",
                    "hours" => "hour",
                    "minutes" => "minute",
                    "seconds" => "second",
                    other => other,
                };
                d.field(name).map_or(Val::Null, Val::Num)
            }
            _ => Val::Null,
        })
    }

    /// A page's `file.*` as Dataview has it.
    fn dv_file(&self, f: FileRef, name: &str, at: usize) -> Result<Val, Fault> {
        let FileRef::Note(i) = f else {
            return Ok(Val::Null);
        };
        let note = &self.graph.notes[i as usize];
        let path = note.path.as_str();
        let file_name = path.rsplit('/').next().unwrap_or(path);
        let stem = file_name.strip_suffix(".md").unwrap_or(file_name);
        let tag = |t: &String| Val::Str(format!("#{t}"));
        Ok(match name {
            "name" => Val::Str(stem.to_owned()),
            "path" => Val::Str(path.to_owned()),
            "folder" => Val::Str(path.rsplit_once('/').map_or("", |(d, _)| d).to_owned()),
            "ext" => Val::Str("md".to_owned()),
            "link" => self.page_link(f),
            "size" | "ctime" | "mtime" => self.file_field(f, name, at)?,
            "cday" | "mday" => match self.file_field(f, &name.replace("day", "time"), at)? {
                Val::Date(d) => Val::Date(d.day()),
                v => v,
            },
            "etags" => Val::List(note.facts.tags.iter().map(tag).collect()),
            "tags" => {
                let mut all: Vec<String> = Vec::new();
                for t in &note.facts.tags {
                    let mut end = 0;
                    for part in t.split('/') {
                        end += part.len();
                        let prefix = t[..end].to_owned();
                        if !all.contains(&prefix) {
                            all.push(prefix);
                        }
                        end += 1;
                    }
                }
                Val::List(all.iter().map(tag).collect())
            }
            "aliases" => Val::List(note.facts.aliases.iter().cloned().map(Val::Str).collect()),
            "outlinks" => {
                let mut links = match self.file_field(f, "links", at)? {
                    Val::List(l) => l,
                    _ => Vec::new(),
                };
                if let Val::List(e) = self.file_field(f, "embeds", at)? {
                    links.extend(e);
                }
                Val::List(links)
            }
            "inlinks" => match self.file_field(f, "backlinks", at)? {
                Val::List(l) => Val::List(
                    l.iter()
                        .filter_map(|v| match v {
                            Val::File(b) => Some(self.page_link(*b)),
                            _ => None,
                        })
                        .collect(),
                ),
                v => v,
            },
            "tasks" => heavy(
                Val::List(
                    (0..note.facts.tasks.len())
                        .map(|k| self.task_obj(i as usize, k))
                        .collect(),
                ),
                at,
            )?,
            "frontmatter" => self.file_field(f, "properties", at)?,
            "day" => {
                let found = (0..stem.len().saturating_sub(9)).find_map(|s| {
                    stem.get(s..s + 10)
                        .filter(|d| d.as_bytes()[4] == b'-')
                        .and_then(Date::parse)
                });
                match found {
                    Some(d) => Val::Date(d),
                    None => match self.page_field(i as usize, "date")? {
                        d @ Val::Date(_) => d,
                        _ => Val::Null,
                    },
                }
            }
            "lists" | "starred" => {
                return Err(fault(
                    format!("`file.{name}` is not kept by kura's index"),
                    at,
                ));
            }
            _ => Val::Null,
        })
    }

    fn dv_call(
        &self,
        f: &str,
        args: &[Dx],
        row: &Row,
        scope: &Scope,
        at: usize,
    ) -> Result<Val, Fault> {
        if let Some(DNode::Lambda(params, body)) = args.last().map(|a| &a.node) {
            if !WITH_LAMBDA.contains(&f) || args.len() != 2 {
                return Err(fault(format!("`{f}()` does not take a lambda here"), at));
            }
            let items = match self.dv(&args[0], row, scope)? {
                Val::Null => return Ok(Val::Null),
                Val::List(l) => l,
                v => {
                    return Err(fault(
                        format!("`{f}()` takes a list and a lambda, not a {}", type_name(&v)),
                        at,
                    ));
                }
            };
            let call = |vals: &[Val]| -> Result<Val, Fault> {
                let bound: Vec<(String, Val)> =
                    params.iter().cloned().zip(vals.iter().cloned()).collect();
                let inner = Scope {
                    names: &bound,
                    outer: Some(scope),
                    group: false,
                };
                self.dv(body, row, &inner)
            };
            return self.with_lambda(f, items, call, at);
        }
        let a: Vec<Val> = args
            .iter()
            .map(|e| self.dv(e, row, scope))
            .collect::<Result<_, _>>()?;
        self.dv_apply(f, a, at)
    }

    fn with_lambda(
        &self,
        f: &str,
        items: Vec<Val>,
        call: impl Fn(&[Val]) -> Result<Val, Fault>,
        at: usize,
    ) -> Result<Val, Fault> {
        Ok(match f {
            "filter" => {
                let mut kept = Vec::new();
                for v in items {
                    if call(std::slice::from_ref(&v))?.truthy() {
                        kept.push(v);
                    }
                }
                Val::List(kept)
            }
            "map" => heavy(
                Val::List(
                    items
                        .iter()
                        .map(|v| call(std::slice::from_ref(v)))
                        .collect::<Result<_, _>>()?,
                ),
                at,
            )?,
            "all" | "any" | "none" => {
                let mut hits = 0;
                for v in &items {
                    if call(std::slice::from_ref(v))?.truthy() {
                        hits += 1;
                    }
                }
                Val::Bool(match f {
                    "all" => hits == items.len(),
                    "any" => hits > 0,
                    _ => hits == 0,
                })
            }
            "minby" | "maxby" => {
                let mut best: Option<(Val, Val)> = None;
                for v in &items {
                    let key = call(std::slice::from_ref(v))?;
                    if matches!(key, Val::Null) {
                        continue;
                    }
                    let better = match &best {
                        None => true,
                        Some((_, b)) => {
                            let o = self.dv_order(b, &key);
                            if f == "minby" {
                                o == Ordering::Greater
                            } else {
                                o == Ordering::Less
                            }
                        }
                    };
                    if better {
                        best = Some((v.clone(), key));
                    }
                }
                best.map(|(v, _)| v)
                    .or_else(|| items.first().cloned())
                    .unwrap_or(Val::Null)
            }
            "sort" => {
                let mut keyed = items
                    .into_iter()
                    .map(|v| Ok((call(std::slice::from_ref(&v))?, v)))
                    .collect::<Result<Vec<_>, Fault>>()?;
                keyed.sort_by(|(a, _), (b, _)| self.dv_order(a, b));
                Val::List(keyed.into_iter().map(|(_, v)| v).collect())
            }
            _ => {
                // reduce
                let mut it = items.into_iter();
                let Some(mut acc) = it.next() else {
                    return Ok(Val::Null);
                };
                for v in it {
                    if matches!(v, Val::Null) {
                        continue;
                    }
                    acc = call(&[acc, v])?;
                }
                acc
            }
        })
    }

    /// Function `f` on evaluated arguments, each list in a position Dataview
    /// vectorizes taken item by item.
    pub fn dv_apply(&self, f: &str, a: Vec<Val>, at: usize) -> Result<Val, Fault> {
        let positions: &[usize] = match (f, a.len()) {
            (
                "date" | "dur" | "number" | "round" | "trunc" | "floor" | "ceil" | "striptime"
                | "lower" | "upper" | "link",
                1,
            ) => &[0],
            ("round", 2) => &[0],
            ("contains" | "icontains" | "econtains" | "join", 2) => &[1],
            (
                "startswith" | "endswith" | "regexmatch" | "regextest" | "containsword" | "padleft"
                | "padright" | "default" | "link",
                2,
            ) => &[0, 1],
            ("replace" | "regexreplace" | "padleft" | "padright", 3) => &[0, 1, 2],
            ("choice", 3) => &[0],
            _ => &[],
        };
        let lists: Vec<usize> = positions
            .iter()
            .copied()
            .filter(|&p| matches!(a[p], Val::List(_)))
            .collect();
        if !lists.is_empty() {
            let n = lists
                .iter()
                .map(|&p| match &a[p] {
                    Val::List(l) => l.len(),
                    _ => 0,
                })
                .min()
                .unwrap_or(0);
            let mut out = Vec::with_capacity(n);
            for k in 0..n {
                let args = a
                    .iter()
                    .enumerate()
                    .map(|(p, v)| match v {
                        Val::List(l) if lists.contains(&p) => l[k].clone(),
                        v => v.clone(),
                    })
                    .collect();
                out.push(self.dv_apply(f, args, at)?);
            }
            return heavy(Val::List(out), at);
        }
        self.dv_scalar(f, a, at)
    }

    fn dv_scalar(&self, f: &str, mut a: Vec<Val>, at: usize) -> Result<Val, Fault> {
        let types = || a.iter().map(type_name).collect::<Vec<_>>().join(", ");
        let none = || fault(format!("`{f}()` has no form for ({})", types()), at);
        let regex = |p: &str| {
            regex::RegexBuilder::new(p)
                .size_limit(1 << 20)
                .build()
                .map_err(|e| {
                    fault(
                        format!("`{f}()`: `{p}` is not a regular expression: {e}"),
                        at,
                    )
                })
        };
        let num = |v: &Val| match v {
            Val::Num(n) => Some(*n),
            _ => None,
        };
        Ok(match (f, a.as_slice()) {
            ("list" | "array", _) => Val::List(a),
            ("object", _) => {
                if !a.len().is_multiple_of(2) {
                    return Err(fault("`object()` takes keys and values in pairs", at));
                }
                let mut o = Vec::new();
                for pair in a.chunks(2) {
                    let Val::Str(k) = &pair[0] else {
                        return Err(fault("`object()`'s keys are texts", at));
                    };
                    o.push((k.clone(), pair[1].clone()));
                }
                Val::Obj(o)
            }
            ("date", [Val::Null]) | ("dur", [Val::Null]) | ("number", [Val::Null]) => Val::Null,
            ("date", [Val::Date(d)]) => Val::Date(*d),
            ("date", [Val::Str(s)]) => match MOMENTS.contains(&s.trim()) {
                true => self.moment(s.trim()).map_or(Val::Null, Val::Date),
                false => date_text(s).map_or(Val::Null, Val::Date),
            },
            ("date", [Val::Link(l)]) => {
                let text = l.display.as_deref().and_then(date_text);
                match text.or_else(|| date_text(super::value::link_text(&l.target))) {
                    Some(d) => Val::Date(d),
                    None => match self.resolve(&l.target, l.from) {
                        Some(f) => self.dv_file(f, "day", at)?,
                        None => Val::Null,
                    },
                }
            }
            ("date", [_, _]) => {
                return Err(fault(
                    "`date(text, format)` (a Luxon format) is not evaluated by kura",
                    at,
                ));
            }
            ("dur", [Val::Dur(d)]) => Val::Dur(*d),
            ("dur", [Val::Str(s)]) => duration(s).map_or(Val::Null, Val::Dur),
            ("number", [Val::Num(n)]) => Val::Num(*n),
            ("number", [Val::Str(s)]) => {
                let re = regex(r"-?[0-9]+(\.[0-9]+)?")?;
                re.find(s)
                    .and_then(|m| m.as_str().parse().ok())
                    .map_or(Val::Null, Val::Num)
            }
            ("string", [v]) => Val::Str(match v {
                Val::Str(s) => s.clone(),
                v => self.dv_text(v),
            }),
            ("link", [Val::Null, ..]) => Val::Null,
            ("link", [Val::Link(l)]) => Val::Link(l.clone()),
            ("link", [Val::Str(s)]) => Val::Link(Box::new(LinkVal {
                target: s.clone(),
                display: None,
                from: self.this,
            })),
            ("link", [Val::Str(s), Val::Str(d)]) => Val::Link(Box::new(LinkVal {
                target: s.clone(),
                display: Some(d.clone()),
                from: self.this,
            })),
            ("link", [Val::Link(l), Val::Str(d)]) => Val::Link(Box::new(LinkVal {
                display: Some(d.clone()),
                ..(**l).clone()
            })),
            ("typeof", [v]) => Val::Str(type_name(v).to_owned()),
            ("round" | "trunc" | "floor" | "ceil", [Val::Null, ..]) => Val::Null,
            ("round", [Val::Num(n)]) => Val::Num(js_round(*n)),
            ("round", [Val::Num(n), p]) => match num(p) {
                Some(p) if p > 0.0 => {
                    let k = 10f64.powi(p.min(100.0) as i32);
                    Val::Num(js_round(n * k) / k)
                }
                _ => Val::Num(js_round(*n)),
            },
            ("trunc", [Val::Num(n)]) => Val::Num(n.trunc() + 0.0),
            ("floor", [Val::Num(n)]) => Val::Num(n.floor()),
            ("ceil", [Val::Num(n)]) => Val::Num(n.ceil() + 0.0),
            ("min" | "max", [Val::List(l)]) => {
                let l = l.clone();
                self.dv_apply(f, l, at)?
            }
            ("min" | "max", _) => {
                let want = if f == "min" {
                    Ordering::Less
                } else {
                    Ordering::Greater
                };
                let mut best: Option<Val> = None;
                for v in a {
                    if matches!(v, Val::Null) {
                        continue;
                    }
                    best = match best {
                        Some(b) if self.dv_order(&v, &b) != want => Some(b),
                        _ => Some(v),
                    };
                }
                best.unwrap_or(Val::Null)
            }
            ("sum" | "product", [Val::List(l)]) => {
                let op = if f == "sum" { Bin::Add } else { Bin::Mul };
                let mut it = l.iter().cloned();
                match it.next() {
                    None => Val::Null,
                    Some(first) => {
                        let mut acc = first;
                        for v in it {
                            acc = self.dv_arith(op, acc, v, at)?;
                        }
                        acc
                    }
                }
            }
            ("sum" | "product", [v]) => v.clone(),
            ("average", [Val::List(l)]) => {
                if l.is_empty() {
                    Val::Null
                } else {
                    let n = l.len() as f64;
                    match self.dv_apply("sum", vec![Val::List(l.clone())], at)? {
                        Val::Num(s) => Val::Num(s / n),
                        Val::Null => Val::Null,
                        v => return Err(fault(format!("`average()` of {}", type_name(&v)), at)),
                    }
                }
            }
            ("reduce", [Val::Null, _]) => Val::Null,
            ("reduce", [Val::List(l), Val::Str(op)]) => {
                let op = match op.as_str() {
                    "+" => Bin::Add,
                    "-" => Bin::Sub,
                    "*" => Bin::Mul,
                    "/" => Bin::Div,
                    "&" => Bin::And,
                    "|" => Bin::Or,
                    _ => {
                        return Err(fault(
                            "`reduce(list, op)` takes one of \"+\", \"-\", \"*\", \"/\", \"&\", \"|\"",
                            at,
                        ));
                    }
                };
                let mut it = l.iter().cloned();
                match it.next() {
                    None => Val::Null,
                    Some(mut acc) => {
                        for v in it {
                            acc = match op {
                                Bin::And => Val::Bool(acc.truthy() && v.truthy()),
                                Bin::Or => Val::Bool(acc.truthy() || v.truthy()),
                                _ => self.dv_arith(op, acc, v, at)?,
                            };
                        }
                        acc
                    }
                }
            }
            ("contains" | "icontains" | "econtains", [hay, needle]) => {
                Val::Bool(self.contains(f, hay, needle))
            }
            ("containsword", [Val::Null, _] | [_, Val::Null]) => Val::Null,
            ("containsword", [Val::Str(hay), Val::Str(word)]) => {
                let re = regex(&format!(r"(?i)\b{}\b", regex::escape(word)))?;
                Val::Bool(re.is_match(hay))
            }
            ("extract", [Val::List(l), keys @ ..]) => {
                let keys = keys.to_vec();
                Val::List(
                    l.iter()
                        .map(|o| {
                            let mut args = vec![o.clone()];
                            args.extend(keys.iter().cloned());
                            self.dv_scalar("extract", args, at)
                        })
                        .collect::<Result<_, _>>()?,
                )
            }
            ("extract", [o, keys @ ..]) => {
                let mut out = Vec::new();
                for k in keys {
                    let Val::Str(name) = k else {
                        return Err(fault("`extract()` takes text keys", at));
                    };
                    out.push((name.clone(), self.dv_index(o, k, at)?));
                }
                Val::Obj(out)
            }
            ("sort", [Val::List(l)]) => {
                let mut l = l.clone();
                l.sort_by(|x, y| self.dv_order(x, y));
                Val::List(l)
            }
            ("reverse", [Val::List(l)]) => Val::List(l.iter().rev().cloned().collect()),
            ("reverse", [Val::Str(s)]) => Val::Str(s.chars().rev().collect()),
            ("sort" | "reverse", [v]) => v.clone(),
            ("unique", [Val::List(l)]) => {
                let mut out: Vec<Val> = Vec::new();
                for v in l {
                    if !out.iter().any(|o| self.dv_order(o, v) == Ordering::Equal) {
                        out.push(v.clone());
                    }
                }
                Val::List(out)
            }
            ("length", [Val::List(l)]) => Val::Num(l.len() as f64),
            ("length", [Val::Obj(o)]) => Val::Num(o.len() as f64),
            ("length", [Val::Str(s)]) => Val::Num(s.chars().count() as f64),
            ("length", [Val::Null]) => Val::Num(0.0),
            ("nonnull", [Val::List(l)]) => Val::List(
                l.iter()
                    .filter(|v| !matches!(v, Val::Null))
                    .cloned()
                    .collect(),
            ),
            ("nonnull", _) => {
                Val::List(a.into_iter().filter(|v| !matches!(v, Val::Null)).collect())
            }
            ("all" | "any" | "none", [Val::List(l)]) => {
                let hits = l.iter().filter(|v| v.truthy()).count();
                Val::Bool(match f {
                    "all" => hits == l.len(),
                    "any" => hits > 0,
                    _ => hits == 0,
                })
            }
            ("all" | "any" | "none", _) => {
                let l = std::mem::take(&mut a);
                self.dv_scalar(f, vec![Val::List(l)], at)?
            }
            ("join", [Val::List(l)]) => Val::Str(self.dv_text(&Val::List(l.clone()))),
            ("join", [Val::List(l), Val::Str(sep)]) => Val::Str(
                l.iter()
                    .map(|v| self.dv_text(v))
                    .collect::<Vec<_>>()
                    .join(sep),
            ),
            ("join", [Val::List(l), Val::Null]) => Val::Str(self.dv_text(&Val::List(l.clone()))),
            ("join", [v] | [v, _]) => Val::Str(self.dv_text(v)),
            ("flat", [Val::List(l)]) => Val::List(flat(l.clone(), 1)),
            ("flat", [Val::List(l), d]) => Val::List(flat(l.clone(), num(d).unwrap_or(1.0) as u32)),
            ("slice", [Val::List(l), rest @ ..]) if rest.len() <= 2 => {
                let len = l.len() as f64;
                let pos = |v: Option<&Val>, default: f64| {
                    let n = v.and_then(num).unwrap_or(default);
                    let n = if n < 0.0 {
                        (len + n).max(0.0)
                    } else {
                        n.min(len)
                    };
                    n as usize
                };
                let (s, e) = (pos(rest.first(), 0.0), pos(rest.get(1), len));
                Val::List(if s < e { l[s..e].to_vec() } else { Vec::new() })
            }
            ("lower" | "upper" | "striptime", [Val::Null]) => Val::Null,
            ("lower", [Val::Str(s)]) => Val::Str(s.to_lowercase()),
            ("upper", [Val::Str(s)]) => Val::Str(s.to_uppercase()),
            ("striptime", [Val::Date(d)]) => Val::Date(d.day()),
            (
                "replace" | "regexreplace" | "startswith" | "endswith" | "padleft" | "padright"
                | "split" | "substring",
                [Val::Null, ..],
            ) => Val::Null,
            ("replace", [Val::Str(s), Val::Str(p), Val::Str(r)]) => {
                let times = if p.is_empty() {
                    s.chars().count()
                } else {
                    s.matches(p.as_str()).count()
                };
                if s.len().saturating_add(times.saturating_mul(r.len())) > MAX_TEXT {
                    return Err(fault("`replace()` would make a text over 1 MiB", at));
                }
                let out = if p.is_empty() {
                    // JavaScript's split("") puts the replacement between
                    // every two characters.
                    s.chars().map(|c| c.to_string()).collect::<Vec<_>>().join(r)
                } else {
                    s.split(p.as_str()).collect::<Vec<_>>().join(r)
                };
                self.joined(out, "", at)?
            }
            ("regexreplace", [Val::Str(s), Val::Str(p), Val::Str(r)]) => {
                let re = regex(p)?;
                if s.len()
                    .saturating_add(re.find_iter(s).count().saturating_mul(r.len()))
                    > MAX_TEXT
                {
                    return Err(fault("`regexreplace()` would make a text over 1 MiB", at));
                }
                Val::Str(super::call::replaced(&re, s, r, true, at)?)
            }
            ("regextest", [Val::Str(p), Val::Str(s)]) => Val::Bool(regex(p)?.is_match(s)),
            ("regexmatch", [Val::Null, _] | [_, Val::Null]) => Val::Bool(false),
            ("regexmatch", [Val::Str(p), Val::Str(s)]) => {
                let p = if !p.starts_with('^') && !p.ends_with('$') {
                    format!("^(?:{p})$")
                } else {
                    p.clone()
                };
                Val::Bool(regex(&p)?.is_match(s))
            }
            ("startswith", [Val::Str(s), Val::Str(p)]) => Val::Bool(s.starts_with(p.as_str())),
            ("endswith", [Val::Str(s), Val::Str(p)]) => Val::Bool(s.ends_with(p.as_str())),
            ("split", [Val::Str(s), Val::Str(d), rest @ ..]) if rest.len() <= 1 => {
                // As JavaScript splits on a pattern: its groups' texts are
                // spliced in (an unmatched one as ""), then the limit.
                let limit = rest
                    .first()
                    .and_then(num)
                    .map_or(usize::MAX, |n| n.max(0.0) as usize);
                let re = regex(d)?;
                let mut parts = Vec::new();
                let mut last = 0;
                for c in re.captures_iter(s) {
                    let m = c.get(0).expect("a match");
                    if m.as_str().is_empty() && (m.start() == 0 || m.start() == s.len()) {
                        continue;
                    }
                    parts.push(Val::Str(s[last..m.start()].to_owned()));
                    for g in c.iter().skip(1) {
                        parts.push(Val::Str(g.map_or("", |g| g.as_str()).to_owned()));
                    }
                    last = m.end();
                }
                parts.push(Val::Str(s[last..].to_owned()));
                parts.truncate(limit);
                heavy(Val::List(parts), at)?
            }
            ("truncate", [Val::Null, ..]) => Val::Null,
            ("truncate", [Val::Str(s), Val::Num(n), rest @ ..]) if rest.len() <= 1 => {
                let suffix = match rest.first() {
                    Some(Val::Str(x)) => x.clone(),
                    None => "...".to_owned(),
                    Some(_) => return Err(none()),
                };
                let n = n.max(0.0) as usize;
                if s.chars().count() <= n {
                    Val::Str(s.clone())
                } else {
                    let keep = n.saturating_sub(suffix.chars().count());
                    Val::Str(s.chars().take(keep).collect::<String>() + &suffix)
                }
            }
            ("meta", [Val::Link(l)]) => {
                let (path, sub) = match l.target.split_once('#') {
                    Some((p, s)) => (p, Some(s)),
                    None => (l.target.as_str(), None),
                };
                let (kind, sub) = match sub {
                    Some(s) => match s.strip_prefix('^') {
                        Some(b) => ("block", Val::Str(b.to_owned())),
                        None => ("header", Val::Str(s.to_owned())),
                    },
                    None => ("file", Val::Null),
                };
                Val::Obj(vec![
                    (
                        "display".into(),
                        l.display.clone().map_or(Val::Null, Val::Str),
                    ),
                    ("embed".into(), Val::Bool(false)),
                    ("path".into(), Val::Str(path.to_owned())),
                    ("subpath".into(), sub),
                    ("type".into(), Val::Str(kind.to_owned())),
                ])
            }
            ("substring", [Val::Str(s), start, rest @ ..]) if rest.len() <= 1 => {
                let chars: Vec<char> = s.chars().collect();
                let clamp = |v: Option<&Val>, d: usize| {
                    v.and_then(num)
                        .map_or(d, |n| (n.max(0.0) as usize).min(chars.len()))
                };
                let (b, e) = (clamp(Some(start), 0), clamp(rest.first(), chars.len()));
                let (b, e) = if b <= e { (b, e) } else { (e, b) };
                Val::Str(chars[b..e].iter().collect())
            }
            ("padleft" | "padright", [Val::Str(s), Val::Num(n), pad @ ..]) if pad.len() <= 1 => {
                let fill = match pad.first() {
                    Some(Val::Str(p)) => p.clone(),
                    None => " ".to_owned(),
                    Some(_) => return Err(none()),
                };
                let want = n.max(0.0) as usize;
                if want > MAX_TEXT {
                    return Err(fault("a text over 1 MiB", at));
                }
                let have = s.chars().count();
                if have >= want || fill.is_empty() {
                    Val::Str(s.clone())
                } else {
                    let padding: String = fill.chars().cycle().take(want - have).collect();
                    Val::Str(if f == "padleft" {
                        padding + s
                    } else {
                        s.clone() + &padding
                    })
                }
            }
            ("default" | "ldefault", [v, d]) => match v {
                Val::Null => d.clone(),
                v => v.clone(),
            },
            ("choice", [c, x, y]) => {
                if c.truthy() {
                    x.clone()
                } else {
                    y.clone()
                }
            }
            _ if !FUNCTIONS.contains(&f) => {
                return Err(fault(
                    format!("`{f}()` is not one of Dataview's functions kura evaluates"),
                    at,
                ));
            }
            _ => return Err(none()),
        })
    }

    /// `contains`, `icontains` and `econtains` on one needle.
    fn contains(&self, f: &str, hay: &Val, needle: &Val) -> bool {
        match (hay, needle) {
            (Val::List(l), _) if f == "econtains" => l
                .iter()
                .any(|v| self.dv_order(v, needle) == Ordering::Equal),
            (Val::List(l), _) => l.iter().any(|v| self.contains(f, v, needle)),
            (Val::Str(h), Val::Str(n)) if f == "icontains" => {
                h.to_lowercase().contains(&n.to_lowercase())
            }
            (Val::Str(h), Val::Str(n)) => h.contains(n.as_str()),
            (Val::Obj(o), Val::Str(k)) => o.iter().any(|(n, _)| n == k),
            (Val::File(_), Val::Str(k)) => [
                "name",
                "path",
                "folder",
                "ext",
                "link",
                "size",
                "ctime",
                "cday",
                "mtime",
                "mday",
                "tags",
                "etags",
                "inlinks",
                "outlinks",
                "aliases",
                "tasks",
                "frontmatter",
            ]
            .contains(&k.as_str()),
            _ => self.dv_order(hay, needle) == Ordering::Equal,
        }
    }
}

/// JavaScript's `Math.round`: halves up, toward positive infinity.
fn js_round(n: f64) -> f64 {
    (n + 0.5).floor()
}

fn flat(l: Vec<Val>, depth: u32) -> Vec<Val> {
    let mut out = Vec::new();
    for v in l {
        match v {
            Val::List(inner) if depth > 0 => out.extend(flat(inner, depth - 1)),
            v => out.push(v),
        }
    }
    out
}
