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
use super::value::{FileRef, LinkVal, MAX_WEIGHT, Val, heavy, num_text};

/// The most characters a text a function builds may have.
const MAX_TEXT: usize = 1 << 20;

/// The deepest a task's sub-tasks are made into values (each level holds
/// the ones below it).
const MAX_TASK_DEPTH: usize = 64;

/// The deepest values a query builds may nest (`reduce` may wrap its
/// accumulator in a list at each step): copying, weighing and printing
/// a value recurse through it.
pub const MAX_VALUE_DEPTH: usize = 64;

/// What a value holds in memory, about: its texts' bytes, and a value's
/// own size for each item (a list of a million numbers weighs 32 MB, not
/// a million bytes).
pub fn size(v: &Val) -> usize {
    const NODE: usize = std::mem::size_of::<Val>();
    NODE + match v {
        Val::Str(s) => s.len(),
        Val::List(l) => l.iter().map(size).sum(),
        Val::Obj(o) => o.iter().map(|(k, v)| 24 + k.len() + size(v)).sum(),
        Val::Link(l) => 64 + l.target.len() + l.display.as_ref().map_or(0, String::len),
        _ => 0,
    }
}

/// A value past a bound: the query is refused (its rows would not all be
/// answered).
fn too_big(message: impl Into<String>, at: usize) -> Fault {
    Fault {
        refuses: true,
        ..Fault::new(message, at)
    }
}

/// Whether `v` nests more than `n` levels deep (looked at no deeper).
pub fn deeper_than(v: &Val, n: usize) -> bool {
    match v {
        Val::List(items) => n == 0 || items.iter().any(|i| deeper_than(i, n - 1)),
        Val::Obj(o) => n == 0 || o.iter().any(|(_, i)| deeper_than(i, n - 1)),
        _ => false,
    }
}

/// Values made one at a time, weighed as they come: a list is never
/// built past what a query may hold, nor nested past
/// [`MAX_VALUE_DEPTH`].
struct Held {
    items: Vec<Val>,
    weight: usize,
    at: usize,
}

impl Held {
    fn new(at: usize) -> Held {
        Held {
            items: Vec::new(),
            weight: 0,
            at,
        }
    }

    fn push(&mut self, v: Val) -> Result<(), Fault> {
        self.weight = self.weight.saturating_add(size(&v));
        if self.weight > MAX_WEIGHT {
            return Err(too_big("a value over 4 MiB", self.at));
        }
        if deeper_than(&v, MAX_VALUE_DEPTH) {
            return Err(too_big(
                format!("a value nested more than {MAX_VALUE_DEPTH} deep"),
                self.at,
            ));
        }
        self.items.push(v);
        Ok(())
    }
}

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

/// A construct Dataview evaluates and kura does not: the query is refused.
fn unevaluated(message: impl Into<String>, at: usize) -> Fault {
    Fault {
        refuses: true,
        ..Fault::new(message, at)
    }
}

/// Whether a value holds, as Dataview says (`isTruthy`): NaN holds (it is
/// not 0), a zero duration and the epoch do not.
pub fn truthy(v: &Val) -> bool {
    match v {
        Val::Num(n) => *n != 0.0,
        Val::Dur(d) => dur_ms(*d) != 0.0,
        Val::Date(d) => d.ms != 0,
        Val::Link(l) => !l.target.is_empty(),
        v => v.truthy(),
    }
}

/// A duration's length as Luxon measures one to compare it: a year 365
/// days, a month 30, a day 24 hours.
fn dur_ms(d: Dur) -> f64 {
    const DAY: f64 = 86_400_000.0;
    let (years, months) = (d.months / 12, d.months % 12);
    (years as f64 * 365.0 + months as f64 * 30.0 + d.days as f64) * DAY + d.ms as f64
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
    // Letters first without their accents (`É` with `E`), then with them,
    // then lowercase before uppercase.
    use unicode_normalization::UnicodeNormalization;
    use unicode_normalization::char::is_combining_mark;
    let folded = if x.is_ascii() && y.is_ascii() {
        x.bytes()
            .map(|b| b.to_ascii_lowercase())
            .cmp(y.bytes().map(|b| b.to_ascii_lowercase()))
    } else {
        let base = |s: &str| {
            s.nfd()
                .filter(|c| !is_combining_mark(*c))
                .flat_map(char::to_lowercase)
                .collect::<String>()
        };
        base(x).cmp(&base(y)).then_with(|| {
            x.chars()
                .flat_map(char::to_lowercase)
                .cmp(y.chars().flat_map(char::to_lowercase))
        })
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
            // A total order, as a sort needs (NaN after every number).
            (Val::Num(x), Val::Num(y)) => x.total_cmp(y),
            (Val::Bool(x), Val::Bool(y)) => x.cmp(y),
            (Val::Date(x), Val::Date(y)) => x.ms.cmp(&y.ms),
            (Val::Dur(x), Val::Dur(y)) => dur_ms(*x).total_cmp(&dur_ms(*y)),
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
            (Val::File(_), _) => Ordering::Less,
            (_, Val::File(_)) => Ordering::Greater,
            (Val::Regex(x, _), Val::Regex(y, _)) => text_order(x.as_str(), y.as_str()),
            (Val::Regex(x, _), Val::Str(y)) => text_order(x.as_str(), y),
            (Val::Str(x), Val::Regex(y, _)) => text_order(x, y.as_str()),
            _ => Ordering::Equal,
        }
    }

    /// Whether `e` holds for the row.
    pub fn dv_test(&self, e: &Dx, row: &Row, scope: &Scope) -> Result<bool, Fault> {
        Ok(truthy(&self.dv(e, row, scope)?))
    }

    /// `e` evaluated for the row (a page, a task, or a group when the
    /// scope says so).
    pub fn dv(&self, e: &Dx, row: &Row, scope: &Scope) -> Result<Val, Fault> {
        let _level = row.enter(e.at, &self.budget)?;
        let at = e.at;
        Ok(match &e.node {
            DNode::Lit(v) => v.clone(),
            DNode::List(items) => Val::List(self.gather(items, row, scope, at)?),
            DNode::Object(entries) => {
                let exprs: Vec<Dx> = entries.iter().map(|(_, e)| e.clone()).collect();
                let values = self.gather(&exprs, row, scope, at)?;
                // A key written twice: the last wins, as in JavaScript.
                let mut o: Vec<(String, Val)> = Vec::new();
                for ((k, _), v) in entries.iter().zip(values) {
                    match o.iter_mut().find(|(n, _)| n == k) {
                        Some(slot) => slot.1 = v,
                        None => o.push((k.clone(), v)),
                    }
                }
                Val::Obj(o)
            }
            DNode::Name(n) => self.dv_name(n, row, scope, at)?,
            DNode::When(name) => self.moment(name).map_or(Val::Null, Val::Date),
            DNode::Index(on, key) => {
                let v = self.dv(on, row, scope)?;
                let k = self.dv(key, row, scope)?;
                self.dv_index(&v, &k, at)?
            }
            DNode::Not(x) => Val::Bool(!truthy(&self.dv(x, row, scope)?)),
            DNode::Bin(op, a, b) => {
                let x = self.dv(a, row, scope)?;
                match op {
                    Bin::And if !truthy(&x) => return Ok(Val::Bool(false)),
                    Bin::Or if truthy(&x) => return Ok(Val::Bool(true)),
                    _ => {}
                }
                let y = self.dv(b, row, scope)?;
                self.dv_binary(*op, x, y, at)?
            }
            DNode::Lambda(..) => {
                return Err(unevaluated(
                    "a lambda (`(x) => …`) is only evaluated as the last argument of filter, map, all, any, none, minby, maxby, sort or reduce",
                    at,
                ));
            }
            DNode::Call(f, args) => self.dv_call(f, args, row, scope, at)?,
        })
    }

    /// Each of `exprs`, held as they come.
    fn gather(&self, exprs: &[Dx], row: &Row, scope: &Scope, at: usize) -> Result<Vec<Val>, Fault> {
        let mut held = Held::new(at);
        for e in exprs {
            held.push(self.dv(e, row, scope)?)?;
        }
        Ok(held.items)
    }

    fn dv_binary(&self, op: Bin, x: Val, y: Val, at: usize) -> Result<Val, Fault> {
        let ord = || self.dv_order(&x, &y);
        Ok(match op {
            Bin::And | Bin::Or => Val::Bool(truthy(&y)),
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
            // Dataview's null rules: null with null, and a date plus or
            // minus null, are null; a text joins null as `\-`; any other
            // kind with null is an error (the row is left out).
            (_, Val::Null, Val::Null) => Val::Null,
            (Bin::Add | Bin::Sub, Val::Date(_), Val::Null)
            | (Bin::Add | Bin::Sub, Val::Null, Val::Date(_)) => Val::Null,
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
            (Bin::Sub, Val::Date(a), Val::Date(b)) => Val::Dur(diff(a, b).ok_or_else(past)?),
            (Bin::Add, Val::Obj(mut a), Val::Obj(b)) => {
                for (k, v) in b {
                    match a.iter_mut().find(|(n, _)| *n == k) {
                        Some(slot) => slot.1 = v,
                        None => a.push((k, v)),
                    }
                }
                heavy(Val::Obj(a), at)?
            }
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
            // Dataview's `renderNullAs` setting, by default.
            Val::Null => "\\-".to_owned(),
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
        let mut group = false;
        while let Some(sc) = s {
            if let Some((_, v)) = sc.names.iter().rev().find(|(k, _)| k == n) {
                return Ok(v.clone());
            }
            group |= sc.group;
            s = if sc.group { None } else { sc.outer };
        }
        // `this` is the query's note in every row, a group's too.
        if n == "this" {
            return Ok(self.this.map_or(Val::Null, |f| self.page_link(f)));
        }
        let FileRef::Note(i) = row.file else {
            return Ok(Val::Null);
        };
        if group {
            return Ok(Val::Null);
        }
        if n == "file" {
            return Ok(Val::File(row.file));
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

    /// A page's field: its front matter (as the vault types it) and its
    /// inline fields, by name or by Dataview's lowercase-dashed name; a
    /// name given more than once is the list of its values, as Dataview
    /// merges them.
    fn page_field(&self, i: usize, name: &str) -> Result<Val, Fault> {
        let facts = &self.graph.notes[i].facts;
        let f = FileRef::Note(i as u32);
        let mut values = Vec::new();
        if let Some(key) = facts.props.keys().find(|k| key_is(k, name)) {
            values.push(front(self.prop(f, key, 0)?));
        }
        for (_, v) in facts.fields.iter().filter(|(k, _)| key_is(k, name)) {
            values.push(field_value(v, f));
        }
        Ok(match values.len() {
            0 => Val::Null,
            1 => values.pop().expect("one"),
            _ => Val::List(values),
        })
    }

    /// Task `k` of note `i`'s field `name`, as a `TASK` query reads it.
    fn task_field(&self, i: usize, k: usize, name: &str, at: usize) -> Result<Val, Fault> {
        let f = FileRef::Note(i as u32);
        let tasks = &self.graph.notes[i].facts.tasks;
        let t = &tasks[k];
        let text = t.raw.as_deref().unwrap_or(&t.text);
        match name {
            "children" => return self.children(i, k, 0, at),
            // Its section's link: a block's own link would be its `^id`,
            // which the index does not keep (it is the section's then).
            "link" | "section" => {
                let path = &self.graph.notes[i].path;
                return Ok(Val::Link(Box::new(LinkVal {
                    target: match &t.heading {
                        Some(h) => format!("{path}#{h}"),
                        None => path.clone(),
                    },
                    display: None,
                    from: None,
                })));
            }
            // Dataview's lines count from 0 (Obsidian's positions).
            "line" => return Ok(Val::Num(t.line as f64 - 1.0)),
            "parent" => {
                return Ok(t
                    .parent
                    .and_then(|p| tasks.get(p))
                    .map_or(Val::Null, |p| Val::Num(p.line as f64 - 1.0)));
            }
            // The tags of its text, as written.
            "tags" => {
                let mut tags: Vec<Val> = Vec::new();
                for c in crate::graph::facts::tag_pattern().captures_iter(text) {
                    let tag = Val::Str(format!("#{}", c[1].trim_end_matches('/')));
                    if !tags
                        .iter()
                        .any(|t| self.dv_order(t, &tag) == Ordering::Equal)
                    {
                        tags.push(tag);
                    }
                }
                return Ok(Val::List(tags));
            }
            "outlinks" | "symbol" | "list" | "blockId" | "lineCount" | "position" | "real" => {
                return Err(unevaluated(
                    format!("a task's `{name}` is not kept by kura's index"),
                    at,
                ));
            }
            "text" | "visual" => return Ok(Val::Str(text.to_owned())),
            "annotated" => return Ok(Val::Bool(!t.fields.is_empty())),
            // Dataview reads its date shorthands anywhere in the text, the
            // Tasks plugin only among the fields at the end.
            "created" | "start" | "scheduled" | "due" | "completion" => {
                let v = self.task_prop(f, k as u32, name, at)?;
                if !matches!(v, Val::Null) {
                    return Ok(v);
                }
                return Ok(shorthand(text, name).map_or(Val::Null, Val::Date));
            }
            own if TASK_OWN.contains(&own) => return self.task_prop(f, k as u32, name, at),
            _ => {}
        }
        if let Some((_, v)) = t.fields.iter().find(|(key, _)| key_is(key, name)) {
            return Ok(field_value(v, f));
        }
        self.page_field(i, name)
    }

    /// A page as a value (a group's `rows`): its front matter and inline
    /// fields, then `file`.
    pub fn page_obj(&self, i: usize) -> Result<Val, Fault> {
        let facts = &self.graph.notes[i].facts;
        let mut o: Vec<(String, Val)> = Vec::new();
        let names = facts
            .props
            .keys()
            .map(String::as_str)
            .chain(facts.fields.iter().map(|(k, _)| k.as_str()));
        for name in names {
            if !o.iter().any(|(n, _)| n == name) {
                o.push((name.to_owned(), self.page_field(i, name)?));
            }
        }
        o.push(("file".to_owned(), Val::File(FileRef::Note(i as u32))));
        Ok(Val::Obj(o))
    }

    /// A task as a value (`file.tasks`, `children`, a group's `rows`).
    pub fn task_obj(&self, i: usize, k: usize, at: usize) -> Result<Val, Fault> {
        self.task_obj_at(i, k, 0, at)
    }

    /// Task `k` as a value, `depth` tasks below the one asked for.
    fn task_obj_at(&self, i: usize, k: usize, depth: usize, at: usize) -> Result<Val, Fault> {
        let f = FileRef::Note(i as u32);
        let mut o: Vec<(String, Val)> = Vec::new();
        for name in TASK_OWN {
            let v = self.task_field(i, k, name, at)?;
            if !matches!(v, Val::Null) {
                o.push(((*name).to_owned(), v));
            }
        }
        let t = &self.graph.notes[i].facts.tasks[k];
        for (key, v) in &t.fields {
            if !o.iter().any(|(n, _)| n == key) {
                o.push((key.clone(), field_value(v, f)));
            }
        }
        o.push(("children".to_owned(), self.children(i, k, depth, at)?));
        o.push(("file".to_owned(), Val::File(f)));
        Ok(Val::Obj(o))
    }

    /// The tasks right under task `k`, as values: they follow it, so the
    /// look ends at the first task not under it.
    fn children(&self, i: usize, k: usize, depth: usize, at: usize) -> Result<Val, Fault> {
        if depth >= MAX_TASK_DEPTH {
            return Err(fault(
                format!("tasks nested more than {MAX_TASK_DEPTH} deep"),
                at,
            ));
        }
        let tasks = &self.graph.notes[i].facts.tasks;
        let mut out = Vec::new();
        for j in crate::graph::tasks::under(tasks, k) {
            if tasks[j].parent == Some(k) {
                out.push(self.task_obj_at(i, j, depth + 1, at)?);
            }
        }
        heavy(Val::List(out), at)
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
            (Val::List(items), Val::Str(_)) => {
                let mut held = Held::new(at);
                for i in items {
                    held.push(self.dv_index(i, key, at)?)?;
                }
                Val::List(held.items)
            }
            // A position before the start, or not whole, is nothing (as
            // JavaScript's `a[-1]` and `a[1.5]` are undefined).
            (Val::List(_) | Val::Str(_), Val::Num(n)) if *n < 0.0 || n.fract() != 0.0 => Val::Null,
            (Val::List(items), Val::Num(n)) => items.get(*n as usize).cloned().unwrap_or(Val::Null),
            (Val::Str(s), Val::Num(n)) => s
                .chars()
                .nth(*n as usize)
                .map_or(Val::Null, |c| Val::Str(c.to_string())),
            // A date's parts as Luxon names them; any other name is
            // undefined there, null here.
            (Val::Date(d), Val::Str(k)) => {
                use chrono::Datelike;
                let local = chrono::DateTime::from_timestamp_millis(d.ms)
                    .map(|t| t.with_timezone(&chrono::Local));
                let part = |f: fn(&chrono::DateTime<chrono::Local>) -> u32| {
                    local.as_ref().map_or(Val::Null, |t| Val::Num(f(t) as f64))
                };
                match k.as_str() {
                    "weekday" => part(|t| t.weekday().number_from_monday()),
                    "weekNumber" => part(|t| t.iso_week().week()),
                    "weekYear" => local
                        .as_ref()
                        .map_or(Val::Null, |t| Val::Num(t.iso_week().year() as f64)),
                    "ordinal" => part(|t| t.ordinal()),
                    "quarter" => part(|t| (t.month() - 1) / 3 + 1),
                    name => d.field(name).map_or(Val::Null, Val::Num),
                }
            }
            (Val::Dur(_), Val::Str(k)) => {
                return Err(unevaluated(
                    format!(
                        "a duration's `.{k}` (Luxon keeps the units it was written in, kura does not)"
                    ),
                    at,
                ));
            }
            (Val::Str(_), Val::Str(k)) => {
                return Err(fault(
                    format!("a text has no field `{k}`: it is indexed by numbers"),
                    at,
                ));
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
                        .map(|k| self.task_obj(i as usize, k, at))
                        .collect::<Result<_, _>>()?,
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
                return Err(unevaluated(
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
                return Err(unevaluated(
                    format!("`{f}()` does not take a lambda here"),
                    at,
                ));
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
        let a = self.gather(args, row, scope, at)?;
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
                    if truthy(&call(std::slice::from_ref(&v))?) {
                        kept.push(v);
                    }
                }
                Val::List(kept)
            }
            "map" => {
                let mut held = Held::new(at);
                for v in &items {
                    held.push(call(std::slice::from_ref(v))?)?;
                }
                Val::List(held.items)
            }
            "all" | "any" | "none" => {
                let mut hits = 0;
                for v in &items {
                    if truthy(&call(std::slice::from_ref(v))?) {
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
                            // Dataview keeps the first of equal keys for
                            // minby, the last for maxby.
                            let o = self.dv_order(b, &key);
                            if f == "minby" {
                                o == Ordering::Greater
                            } else {
                                o != Ordering::Greater
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
                let mut keys = Held::new(at);
                for v in &items {
                    keys.push(call(std::slice::from_ref(v))?)?;
                }
                let mut keyed: Vec<(Val, Val)> = keys.items.into_iter().zip(items).collect();
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
            let mut out = Held::new(at);
            for k in 0..n {
                // An item's call may be slow (a pattern over a long
                // text): the budget is looked at as the items go.
                if k % 64 == 63 {
                    self.budget.check(at)?;
                }
                let args = a
                    .iter()
                    .enumerate()
                    .map(|(p, v)| match v {
                        Val::List(l) if lists.contains(&p) => l[k].clone(),
                        v => v.clone(),
                    })
                    .collect();
                out.push(self.dv_apply(f, args, at)?)?;
            }
            return Ok(Val::List(out.items));
        }
        self.dv_scalar(f, a, at)
    }

    fn dv_scalar(&self, f: &str, mut a: Vec<Val>, at: usize) -> Result<Val, Fault> {
        let types = || a.iter().map(type_name).collect::<Vec<_>>().join(", ");
        let none = || fault(format!("`{f}()` has no form for ({})", types()), at);
        // JavaScript's patterns, with JavaScript's meaning of `\w`, `\d`
        // and `\b` (ASCII).
        let regex = |p: &str| -> Result<regex::Regex, Fault> {
            // The last pattern compiled on this thread: a function applied
            // to each item of a list compiles its pattern once.
            thread_local! {
                static LAST: std::cell::RefCell<Option<(String, regex::Regex)>> =
                    const { std::cell::RefCell::new(None) };
            }
            let cached = LAST.with(|l| {
                l.borrow()
                    .as_ref()
                    .filter(|(q, _)| q == p)
                    .map(|(_, re)| re.clone())
            });
            if let Some(re) = cached {
                return Ok(re);
            }
            let bad = |e: String| {
                fault(
                    format!("`{f}()`: `{p}` is not a regular expression: {e}"),
                    at,
                )
            };
            let js = super::parse::js_pattern(p).map_err(bad)?;
            let re = regex::RegexBuilder::new(&js)
                .size_limit(1 << 20)
                .build()
                .map_err(|e| bad(e.to_string()))?;
            LAST.with(|l| *l.borrow_mut() = Some((p.to_owned(), re.clone())));
            Ok(re)
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
                let mut o: Vec<(String, Val)> = Vec::new();
                for pair in a.chunks(2) {
                    let Val::Str(k) = &pair[0] else {
                        return Err(fault("`object()`'s keys are texts", at));
                    };
                    match o.iter_mut().find(|(n, _)| n == k) {
                        Some(slot) => slot.1 = pair[1].clone(),
                        None => o.push((k.clone(), pair[1].clone())),
                    }
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
                return Err(unevaluated(
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
                // Of equal values, min keeps the first and max the last,
                // as Dataview's do.
                let mut best: Option<Val> = None;
                for v in a {
                    if matches!(v, Val::Null) {
                        continue;
                    }
                    let keep = |b: &Val| match self.dv_order(&v, b) {
                        Ordering::Less => f == "max",
                        Ordering::Equal => f == "min",
                        Ordering::Greater => f == "min",
                    };
                    best = match best {
                        Some(b) if keep(&b) => Some(b),
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
                                Bin::And => Val::Bool(truthy(&acc) && truthy(&v)),
                                Bin::Or => Val::Bool(truthy(&acc) || truthy(&v)),
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
                let re = regex(&format!(r"\b{}\b", regex::escape(&word.to_lowercase())))?;
                Val::Bool(re.is_match(&hay.to_lowercase()))
            }
            ("extract", [Val::List(l), keys @ ..]) => {
                let mut held = Held::new(at);
                for o in l {
                    let mut args = vec![o.clone()];
                    args.extend(keys.iter().cloned());
                    held.push(self.dv_scalar("extract", args, at)?)?;
                }
                Val::List(held.items)
            }
            ("extract", [o, keys @ ..]) => {
                let mut held = Held::new(at);
                let mut names = Vec::new();
                for k in keys {
                    let Val::Str(name) = k else {
                        return Err(fault("`extract()` takes text keys", at));
                    };
                    names.push(name.clone());
                    held.push(self.dv_index(o, k, at)?)?;
                }
                Val::Obj(names.into_iter().zip(held.items).collect())
            }
            ("sort", [Val::List(l)]) => {
                let mut l = l.clone();
                l.sort_by(|x, y| self.dv_order(x, y));
                Val::List(l)
            }
            ("reverse", [Val::List(l)]) => Val::List(l.iter().rev().cloned().collect()),
            ("reverse", [Val::Str(s)]) => Val::Str(s.chars().rev().collect()),
            ("sort" | "reverse", [v]) => v.clone(),
            // Sorted, then each value once (Dataview's `distinct` of a
            // sorted list).
            ("unique", [Val::List(l)]) => {
                let mut out = l.clone();
                out.sort_by(|x, y| self.dv_order(x, y));
                out.dedup_by(|x, y| self.dv_order(x, y) == Ordering::Equal);
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
                let hits = l.iter().filter(|v| truthy(v)).count();
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
            ("join", [Val::List(l), Val::Str(sep)]) => {
                let parts: Vec<String> = l.iter().map(|v| self.dv_text(v)).collect();
                let total = parts.iter().map(String::len).sum::<usize>()
                    + sep.len().saturating_mul(parts.len().saturating_sub(1));
                if total > MAX_TEXT {
                    return Err(too_big("`join()` would make a text over 1 MiB", at));
                }
                Val::Str(parts.join(sep))
            }
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
            ("regexmatch" | "regextest", [Val::Null, _] | [_, Val::Null]) => Val::Bool(false),
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
                let mut parts = Held::new(at);
                let mut last = 0;
                for c in re.captures_iter(s) {
                    let m = c.get(0).expect("a match");
                    if m.as_str().is_empty() && (m.start() == 0 || m.start() == s.len()) {
                        continue;
                    }
                    parts.push(Val::Str(s[last..m.start()].to_owned()))?;
                    for g in c.iter().skip(1) {
                        parts.push(Val::Str(g.map_or("", |g| g.as_str()).to_owned()))?;
                    }
                    last = m.end();
                    if parts.items.len() >= limit {
                        break;
                    }
                }
                parts.push(Val::Str(s[last..].to_owned()))?;
                parts.items.truncate(limit);
                Val::List(parts.items)
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
                if truthy(c) {
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

/// A front-matter value as Dataview reads one: a text that is a date or
/// a duration is one (a link already is).
fn front(v: Val) -> Val {
    match v {
        Val::Str(s) => match date_text(&s) {
            Some(d) => Val::Date(d),
            None => duration(&s).map_or(Val::Str(s), Val::Dur),
        },
        Val::List(items) => Val::List(items.into_iter().map(front).collect()),
        v => v,
    }
}

/// The date of field `name`'s shorthand anywhere in a task's text
/// (`🛫 2026-12-01`), as Dataview's inline field parser reads it.
fn shorthand(text: &str, name: &str) -> Option<Date> {
    crate::graph::tasks::shorthands(text)
        .into_iter()
        .find(|(k, _)| *k == name)
        .and_then(|(_, d)| Date::parse(&d))
}

/// `a - b` as Luxon's `diff` in years, months, days and time gives it:
/// whole calendar months, then whole days, then the time left (negative
/// when `a` is before `b`).
fn diff(a: Date, b: Date) -> Option<Dur> {
    if a.ms < b.ms {
        let d = diff(b, a)?;
        return Some(Dur {
            months: -d.months,
            days: -d.days,
            ms: -d.ms,
        });
    }
    let field = |d: Date, f: &str| d.field(f).unwrap_or(0.0) as i64;
    let span = |months: i64, days: i64| Dur {
        months,
        days,
        ms: 0,
    };
    let mut months =
        (field(a, "year") * 12 + field(a, "month")) - (field(b, "year") * 12 + field(b, "month"));
    while months > 0 && b.add(span(months, 0), 1)?.ms > a.ms {
        months -= 1;
    }
    let from = b.add(span(months, 0), 1)?;
    let mut days = (a.ms - from.ms) / 86_400_000 + 1;
    while days > 0 && from.add(span(0, days), 1)?.ms > a.ms {
        days -= 1;
    }
    let at = from.add(span(0, days), 1)?;
    Some(Dur {
        months,
        days,
        ms: a.ms - at.ms,
    })
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
