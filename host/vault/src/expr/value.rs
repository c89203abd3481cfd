//! The values an expression computes, and how they compare, add up, read
//! as true or false and print.

use std::cmp::Ordering;
use std::sync::Arc;

use serde_json::Value;

use super::time::{Date, Dur};

/// A file of the vault: a note of the graph, or one of its other files.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub enum FileRef {
    Note(u32),
    Other(u32),
}

/// A link: its target as written, what it shows, and the note it is
/// written in (links resolve relative to it).
#[derive(Clone, Debug, PartialEq)]
pub struct LinkVal {
    pub target: String,
    pub display: Option<String>,
    pub from: Option<FileRef>,
}

#[derive(Clone, Debug)]
pub enum Val {
    Null,
    Bool(bool),
    Num(f64),
    Str(String),
    Date(Date),
    Dur(Dur),
    List(Vec<Val>),
    Obj(Vec<(String, Val)>),
    Link(Box<LinkVal>),
    File(FileRef),
    Regex(Arc<regex::Regex>, bool),
}

impl Val {
    pub fn type_name(&self) -> &'static str {
        match self {
            Val::Null => "null",
            Val::Bool(_) => "boolean",
            Val::Num(_) => "number",
            Val::Str(_) => "string",
            Val::Date(_) => "date",
            Val::Dur(_) => "duration",
            Val::List(_) => "list",
            Val::Obj(_) => "object",
            Val::Link(_) => "link",
            Val::File(_) => "file",
            Val::Regex(..) => "regexp",
        }
    }

    pub fn truthy(&self) -> bool {
        match self {
            Val::Null => false,
            Val::Bool(b) => *b,
            Val::Num(n) => *n != 0.0 && !n.is_nan(),
            Val::Str(s) => !s.is_empty(),
            Val::List(l) => !l.is_empty(),
            Val::Obj(o) => !o.is_empty(),
            Val::Date(_) | Val::Dur(_) | Val::Link(_) | Val::File(_) | Val::Regex(..) => true,
        }
    }

    pub fn is_empty(&self) -> bool {
        match self {
            Val::Null => true,
            Val::Str(s) => s.is_empty(),
            Val::List(l) => l.is_empty(),
            Val::Obj(o) => o.is_empty(),
            _ => false,
        }
    }

    /// A text standing for a duration (`"1 week"`) where one is wanted.
    pub fn as_dur(&self) -> Option<Dur> {
        match self {
            Val::Dur(d) => Some(*d),
            Val::Str(s) => Dur::parse(s),
            _ => None,
        }
    }

    /// A text standing for a date (`"2026-11-30"`) where one is wanted.
    pub fn as_date(&self) -> Option<Date> {
        match self {
            Val::Date(d) => Some(*d),
            Val::Str(s) => Date::parse(s),
            _ => None,
        }
    }

    pub fn as_num(&self) -> Option<f64> {
        match self {
            Val::Num(n) => Some(*n),
            Val::Dur(d) => Some(d.approx_ms()),
            _ => None,
        }
    }
}

/// The most a value an expression builds may weigh (its texts' bytes
/// and its items): what a query may hold per file, whatever it is asked.
pub const MAX_WEIGHT: usize = 4 << 20;

/// What a value weighs: its texts' bytes, and one for each item.
pub fn weight(v: &Val) -> usize {
    match v {
        Val::Str(s) => s.len() + 1,
        Val::List(l) => 1 + l.iter().map(weight).sum::<usize>(),
        Val::Obj(o) => 1 + o.iter().map(|(k, v)| k.len() + weight(v)).sum::<usize>(),
        Val::Link(l) => l.target.len() + 1,
        _ => 1,
    }
}

/// A number as JavaScript prints it: `3`, `2.5`, `0.1`.
pub fn num_text(n: f64) -> String {
    if n.is_nan() {
        "NaN".to_owned()
    } else if n.is_infinite() {
        if n > 0.0 { "Infinity" } else { "-Infinity" }.to_owned()
    } else if n == n.trunc() && n.abs() < 1e16 {
        format!("{}", n as i64)
    } else {
        format!("{n}")
    }
}

/// Two values of comparable kinds, in order; None across kinds (a date and
/// a text that reads as a date compare as dates).
pub fn compare(a: &Val, b: &Val) -> Option<Ordering> {
    match (a, b) {
        (Val::Num(x), Val::Num(y)) => x.partial_cmp(y),
        (Val::Str(x), Val::Str(y)) => Some(x.cmp(y)),
        (Val::Bool(x), Val::Bool(y)) => Some(x.cmp(y)),
        (Val::Date(x), y) => y.as_date().map(|y| x.ms.cmp(&y.ms)),
        (x, Val::Date(y)) => x.as_date().map(|x| x.ms.cmp(&y.ms)),
        (Val::Dur(_), _) | (_, Val::Dur(_)) => a.as_num()?.partial_cmp(&b.as_num()?),
        _ => None,
    }
}

/// The order a sort puts values in: empty last, then by kind (numbers,
/// dates, texts without case, ...), then by value.
pub fn sort_order(a: &Val, b: &Val) -> Ordering {
    // A total order (a sort may panic on one that is not): each kind its
    // own rank, and within a kind a comparison that never says "equal" to
    // two values it would order against a third differently.
    fn rank(v: &Val) -> u8 {
        match v {
            Val::Num(_) => 0,
            Val::Date(_) => 1,
            Val::Dur(_) => 2,
            Val::Bool(_) => 3,
            Val::Str(_) => 4,
            Val::Link(_) => 5,
            Val::File(_) => 6,
            Val::Regex(..) => 7,
            Val::List(_) => 8,
            Val::Obj(_) => 9,
            Val::Null => 10,
        }
    }
    fn text_order(x: &str, y: &str) -> Ordering {
        // Folded without allocating: a sort compares each text many times.
        if x.is_ascii() && y.is_ascii() {
            let (a, b) = (x.as_bytes(), y.as_bytes());
            a.iter()
                .map(u8::to_ascii_lowercase)
                .cmp(b.iter().map(u8::to_ascii_lowercase))
                .then_with(|| x.cmp(y))
        } else {
            let folded = |s: &str| s.chars().flat_map(char::to_lowercase).collect::<Vec<_>>();
            folded(x).cmp(&folded(y)).then_with(|| x.cmp(y))
        }
    }
    let (ea, eb) = (a.is_empty(), b.is_empty());
    if ea != eb {
        return ea.cmp(&eb);
    }
    rank(a).cmp(&rank(b)).then_with(|| match (a, b) {
        (Val::Num(x), Val::Num(y)) => x.total_cmp(y),
        (Val::Date(x), Val::Date(y)) => x.ms.cmp(&y.ms),
        (Val::Dur(x), Val::Dur(y)) => x.approx_ms().total_cmp(&y.approx_ms()),
        (Val::Bool(x), Val::Bool(y)) => x.cmp(y),
        (Val::Str(x), Val::Str(y)) => text_order(x, y),
        (Val::Link(x), Val::Link(y)) => text_order(&x.target, &y.target),
        (Val::File(x), Val::File(y)) => {
            let key = |f: &FileRef| match f {
                FileRef::Note(i) => (0, *i),
                FileRef::Other(j) => (1, *j),
            };
            key(x).cmp(&key(y))
        }
        (Val::Regex(x, _), Val::Regex(y, _)) => x.as_str().cmp(y.as_str()),
        (Val::List(x), Val::List(y)) => {
            for (p, q) in x.iter().zip(y) {
                let o = sort_order(p, q);
                if o != Ordering::Equal {
                    return o;
                }
            }
            x.len().cmp(&y.len())
        }
        (Val::Obj(x), Val::Obj(y)) => {
            for ((k, p), (l, q)) in x.iter().zip(y) {
                let o = k.cmp(l).then_with(|| sort_order(p, q));
                if o != Ordering::Equal {
                    return o;
                }
            }
            x.len().cmp(&y.len())
        }
        _ => Ordering::Equal,
    })
}

/// [`sort_order`] in a direction: descending reverses it, except that
/// empty values stay last.
pub fn sort_order_by(a: &Val, b: &Val, desc: bool) -> Ordering {
    let o = sort_order(a, b);
    if desc && !(a.is_empty() || b.is_empty()) {
        o.reverse()
    } else {
        o
    }
}

/// `v`, or a fault when it weighs more than a query may hold.
pub fn heavy(v: Val, at: usize) -> Result<Val, super::Fault> {
    if weight(&v) > MAX_WEIGHT {
        return Err(super::Fault::new("a value over 4 MiB", at));
    }
    Ok(v)
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

/// Values in the order a sort puts them.
pub fn sorted(mut v: Vec<Val>) -> Vec<Val> {
    v.sort_by(sort_order);
    v
}

/// A value made from front matter, as Obsidian reads it without a type.
pub fn from_json(v: &Value, from: Option<FileRef>) -> Val {
    match v {
        Value::Null => Val::Null,
        Value::Bool(b) => Val::Bool(*b),
        Value::Number(n) => n.as_f64().map_or(Val::Null, Val::Num),
        Value::String(s) => text_val(s, from),
        Value::Array(a) => Val::List(a.iter().map(|v| from_json(v, from)).collect()),
        Value::Object(o) => Val::Obj(
            o.iter()
                .map(|(k, v)| (k.clone(), from_json(v, from)))
                .collect(),
        ),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn numbers_print_as_javascript_prints_them() {
        assert_eq!(num_text(3.0), "3");
        assert_eq!(num_text(2.5), "2.5");
        assert_eq!(num_text(-0.25), "-0.25");
    }

    #[test]
    fn the_sort_order_is_total_across_kinds_and_nan() {
        use super::super::time::Date;
        let link = |t: &str| {
            Val::Link(Box::new(LinkVal {
                target: t.into(),
                display: None,
                from: None,
            }))
        };
        let vals = [
            Val::Str("foo".into()),
            link("A"),
            Val::Str("bar".into()),
            Val::Num(f64::NAN),
            Val::Num(1.0),
            link("B"),
            Val::Date(Date::from_ms(5, false)),
            Val::File(FileRef::Other(1)),
            Val::File(FileRef::Note(2)),
            Val::Null,
            Val::Bool(true),
        ];
        for a in &vals {
            for b in &vals {
                assert_eq!(sort_order(a, b), sort_order(b, a).reverse(), "{a:?} {b:?}");
                for c in &vals {
                    if sort_order(a, b) != Ordering::Greater
                        && sort_order(b, c) != Ordering::Greater
                    {
                        assert_ne!(sort_order(a, c), Ordering::Greater, "{a:?} {b:?} {c:?}");
                    }
                }
            }
        }
    }

    #[test]
    fn a_sort_puts_empty_values_last_and_texts_without_case() {
        let mut v = [
            Val::Null,
            Val::Str("b".into()),
            Val::Str("A".into()),
            Val::Num(2.0),
            Val::Str(String::new()),
        ];
        v.sort_by(sort_order);
        let shown: Vec<String> = v.iter().map(|v| format!("{v:?}")).collect();
        assert_eq!(shown[..3], ["Num(2.0)", "Str(\"A\")", "Str(\"b\")"]);
    }
}
