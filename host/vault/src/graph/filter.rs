//! The note filter of vault_notes, vault_search and vault_find: a Bases
//! expression ([`crate::expr`]: `file.hasTag("book") && rating >= 4`), or,
//! as before it, clauses joined by `and`, each a tag (`#project/x`, which its nested tags
//! `#project/x/y` match too) or a property compared with a value
//! (`status = done`, `due < 2026-12-01`, `tags contains project/x`,
//! `reviewed exists`). Values are typed as the front matter's are: numbers
//! compare as numbers, dates (`YYYY-MM-DD`, with a time or not) as dates,
//! `true`/`false` as booleans, anything else as text without case; a list
//! property matches when one of its items does. A text that reads whole
//! as clauses keeps their meaning (`status != done` compares with the text
//! `done`); anything else is read as an expression, and what is neither is
//! refused by name.

use std::cmp::Ordering;

use serde_json::Value;

use super::facts::Facts;
use crate::error::{Error, Result};

#[derive(Clone, Copy, Debug, PartialEq, Eq)]
enum Op {
    Eq,
    Ne,
    Lt,
    Le,
    Gt,
    Ge,
    Contains,
    Exists,
}

#[derive(Clone, Debug, PartialEq)]
enum Clause {
    Tag(String),
    Prop { key: String, op: Op, value: Scalar },
}

/// A value as the filter compares it.
#[derive(Clone, Debug, PartialEq)]
enum Scalar {
    Number(f64),
    Bool(bool),
    Date(String),
    Text(String),
}

fn is_date(s: &str) -> bool {
    let b = s.as_bytes();
    b.len() >= 10
        && b[..4].iter().all(u8::is_ascii_digit)
        && b[4] == b'-'
        && b[5..7].iter().all(u8::is_ascii_digit)
        && b[7] == b'-'
        && b[8..10].iter().all(u8::is_ascii_digit)
        && (b.len() == 10 || b[10] == b'T' || b[10] == b' ')
}

impl Scalar {
    fn parse(s: &str) -> Scalar {
        let s = s.trim();
        if let Ok(n) = s.parse::<f64>()
            && n.is_finite()
        {
            return Scalar::Number(n);
        }
        match s.to_ascii_lowercase().as_str() {
            "true" => Scalar::Bool(true),
            "false" => Scalar::Bool(false),
            _ if is_date(s) => Scalar::Date(s.to_owned()),
            _ => Scalar::Text(s.to_lowercase()),
        }
    }

    /// A front-matter value (not a list).
    fn of(v: &Value) -> Option<Scalar> {
        match v {
            Value::Number(n) => n.as_f64().map(Scalar::Number),
            Value::Bool(b) => Some(Scalar::Bool(*b)),
            Value::String(s) => Some(Scalar::parse(s)),
            _ => None,
        }
    }

    /// The order of two values of one type; None across types.
    fn cmp(&self, other: &Scalar) -> Option<Ordering> {
        match (self, other) {
            (Scalar::Number(a), Scalar::Number(b)) => a.partial_cmp(b),
            (Scalar::Bool(a), Scalar::Bool(b)) => Some(a.cmp(b)),
            // `2026-12-01` and `2026-12-01T10:00` compare on their text.
            (Scalar::Date(a), Scalar::Date(b)) => Some(a.as_str().cmp(b.as_str())),
            (Scalar::Text(a), Scalar::Text(b)) => Some(a.cmp(b)),
            _ => None,
        }
    }
}

/// A parsed filter.
#[derive(Clone, Debug)]
pub enum Filter {
    Clauses(Clauses),
    Expr(crate::expr::parse::Ex),
}

/// Clauses joined by `and`.
#[derive(Clone, Debug, Default, PartialEq)]
pub struct Clauses(Vec<Clause>);

impl Filter {
    pub fn parse(text: &str) -> Result<Filter> {
        if let Some(c) = Clauses::strict(text) {
            return Ok(Filter::Clauses(c));
        }
        crate::expr::parse(text, false).map(Filter::Expr).map_err(|f| {
            let mut e = f.error("filter", text);
            e.message.push_str(
                ": write a Bases expression such as `file.hasTag(\"book\") && rating >= 4`, or clauses such as `#book and rating >= 4`",
            );
            e
        })
    }

    /// A tag (lowercase) every note the filter keeps carries, by which a
    /// caller may narrow the notes first.
    pub fn first_tag(&self) -> Option<String> {
        match self {
            Filter::Clauses(c) => c.first_tag().map(str::to_owned),
            Filter::Expr(e) => crate::expr::required_tag(e),
        }
    }
}

const OPS: &[(&str, Op)] = &[
    ("<=", Op::Le),
    (">=", Op::Ge),
    ("!=", Op::Ne),
    ("=", Op::Eq),
    ("<", Op::Lt),
    (">", Op::Gt),
];

fn bad(message: String) -> Error {
    Error::invalid_parameter("filter", message)
}

/// `text` split at ` and ` outside double quotes.
fn clauses(text: &str) -> Vec<String> {
    let mut out = vec![String::new()];
    let mut quoted = false;
    let words: Vec<&str> = text.split(' ').collect();
    for w in words {
        let cur = out.last_mut().expect("never empty");
        if !quoted && w.eq_ignore_ascii_case("and") {
            out.push(String::new());
            continue;
        }
        quoted ^= w.matches('"').count() % 2 == 1;
        if !cur.is_empty() {
            cur.push(' ');
        }
        cur.push_str(w);
    }
    out
}

fn unquote(s: &str) -> &str {
    let s = s.trim();
    s.strip_prefix('"')
        .and_then(|s| s.strip_suffix('"'))
        .unwrap_or(s)
}

/// Whether `key` may be a property name in a clause: no operator, bracket,
/// quote or dot of the expression syntax in it.
fn plain_key(key: &str) -> bool {
    !key.is_empty()
        && key
            .chars()
            .all(|c| c.is_alphanumeric() || matches!(c, '_' | '-' | ' ' | '/'))
}

/// Whether `value` may be a clause's value: one quoted text, or words
/// without the expression syntax's quotes, brackets or operators.
fn plain_value(value: &str) -> bool {
    let v = value.trim();
    if v.is_empty() || v.starts_with('=') {
        return false;
    }
    if let Some(inner) = v.strip_prefix('"').and_then(|v| v.strip_suffix('"')) {
        return !inner.contains('"');
    }
    !v.contains(['"', '\'', '(', ')', '[', ']', '!', '<', '>', '='])
        && !v.contains("&&")
        && !v.contains("||")
}

impl Clauses {
    /// The text read as clauses only when every clause is plainly one.
    fn strict(text: &str) -> Option<Clauses> {
        let parsed = Clauses::parse(text).ok()?;
        let plain = parsed.0.iter().all(|c| match c {
            Clause::Tag(t) => !t.is_empty() && !t.contains(['(', ')', '"', '\'', ' ']),
            Clause::Prop { .. } => true,
        }) && clauses(text).iter().all(|c| {
            let c = c.trim();
            if c.starts_with('#') {
                return true;
            }
            let lower = c.to_ascii_lowercase();
            if let Some(key) = lower.strip_suffix(" exists") {
                return plain_key(key.trim());
            }
            if let Some(at) = lower.find(" contains ") {
                return plain_key(c[..at].trim()) && plain_value(&c[at + " contains ".len()..]);
            }
            OPS.iter()
                .find_map(|(sym, _)| c.find(sym).map(|at| (at, sym.len())))
                .is_some_and(|(at, len)| plain_key(c[..at].trim()) && plain_value(&c[at + len..]))
        });
        plain.then_some(parsed)
    }

    fn parse(text: &str) -> Result<Clauses> {
        let mut out = Vec::new();
        for c in clauses(text) {
            let c = c.trim();
            if c.is_empty() {
                return Err(bad(format!(
                    "`{text}` has an empty clause: write clauses such as `#tag and status = done`"
                )));
            }
            out.push(Self::clause(c)?);
        }
        Ok(Clauses(out))
    }

    fn clause(c: &str) -> Result<Clause> {
        if let Some(tag) = c.strip_prefix('#') {
            return Ok(Clause::Tag(tag.trim().to_lowercase()));
        }
        let lower = c.to_ascii_lowercase();
        if let Some(key) = lower.strip_suffix(" exists") {
            return Ok(Clause::Prop {
                key: c[..key.len()].trim().to_owned(),
                op: Op::Exists,
                value: Scalar::Bool(true),
            });
        }
        if let Some(at) = lower.find(" contains ") {
            let key = c[..at].trim();
            let value = unquote(&c[at + " contains ".len()..]);
            if key.eq_ignore_ascii_case("tags") || key.eq_ignore_ascii_case("tag") {
                return Ok(Clause::Tag(value.trim_start_matches('#').to_lowercase()));
            }
            return Ok(Clause::Prop {
                key: key.to_owned(),
                op: Op::Contains,
                value: Scalar::parse(value),
            });
        }
        for (sym, op) in OPS {
            if let Some(at) = c.find(sym) {
                let key = c[..at].trim();
                if key.is_empty() {
                    break;
                }
                return Ok(Clause::Prop {
                    key: key.to_owned(),
                    op: *op,
                    value: Scalar::parse(unquote(&c[at + sym.len()..])),
                });
            }
        }
        Err(bad(format!(
            "`{c}` is not a clause: write `#tag`, `key = value` (also !=, <, <=, >, >=), `key contains value` or `key exists`"
        )))
    }

    /// The filter's first tag clause (lowercase), by which a caller may
    /// narrow the notes before [`Clauses::matches`].
    pub fn first_tag(&self) -> Option<&str> {
        self.0.iter().find_map(|c| match c {
            Clause::Tag(t) => Some(t.as_str()),
            Clause::Prop { .. } => None,
        })
    }

    /// Whether a note with these facts passes every clause.
    pub fn matches(&self, facts: &Facts) -> bool {
        self.0.iter().all(|c| match c {
            Clause::Tag(t) => facts.tags.iter().any(|have| tag_is(have, t)),
            Clause::Prop { key, op, value } => {
                let found = facts
                    .props
                    .iter()
                    .find(|(k, _)| k.eq_ignore_ascii_case(key))
                    .map(|(_, v)| v);
                holds(found, *op, value)
            }
        })
    }
}

/// Whether tag `have` is `want` (lowercase) or nested under it, without
/// case and without allocating.
pub fn tag_is(have: &str, want: &str) -> bool {
    let mut h = have.chars().flat_map(char::to_lowercase);
    for w in want.chars() {
        if h.next() != Some(w) {
            return false;
        }
    }
    matches!(h.next(), None | Some('/'))
}

fn holds(found: Option<&Value>, op: Op, want: &Scalar) -> bool {
    let Some(v) = found.filter(|v| !v.is_null()) else {
        // A note without the property is not equal to any value.
        return op == Op::Ne;
    };
    if op == Op::Exists {
        return true;
    }
    let items: Vec<Scalar> = match v {
        Value::Array(a) => a.iter().filter_map(Scalar::of).collect(),
        v => Scalar::of(v).into_iter().collect(),
    };
    let text_contains = |s: &Scalar| match (s, want) {
        (Scalar::Text(a), Scalar::Text(b)) => a.contains(b.as_str()),
        _ => s.cmp(want) == Some(Ordering::Equal),
    };
    let ord = |s: &Scalar| s.cmp(want);
    match op {
        Op::Eq => items.iter().any(|s| ord(s) == Some(Ordering::Equal)),
        Op::Ne => !items.iter().any(|s| ord(s) == Some(Ordering::Equal)),
        Op::Lt => items.iter().any(|s| ord(s) == Some(Ordering::Less)),
        Op::Le => items
            .iter()
            .any(|s| matches!(ord(s), Some(Ordering::Less | Ordering::Equal))),
        Op::Gt => items.iter().any(|s| ord(s) == Some(Ordering::Greater)),
        Op::Ge => items
            .iter()
            .any(|s| matches!(ord(s), Some(Ordering::Greater | Ordering::Equal))),
        Op::Contains => items.iter().any(text_contains),
        Op::Exists => true,
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn facts(text: &str) -> Facts {
        Facts::of(text)
    }

    fn passes(filter: &str, text: &str) -> bool {
        match Filter::parse(filter).unwrap() {
            Filter::Clauses(c) => c.matches(&facts(text)),
            Filter::Expr(e) => panic!("`{filter}` read as an expression: {e:?}"),
        }
    }

    const TASK: &str = "---\nstatus: Done\ndue: 2026-11-30\npriority: 2\nreviewed: true\nowners: [ana, Luis]\ntags: project/x/api\n---\nBody #urgent\n";

    #[test]
    fn properties_compare_by_their_type() {
        for (f, want) in [
            ("status = done", true),
            ("status != done", false),
            ("due < 2026-12-01", true),
            ("due >= 2026-12-01", false),
            ("priority > 1", true),
            ("priority <= 1", false),
            ("reviewed = true", true),
            ("owners contains luis", true),
            ("owners = ana", true),
            ("owners contains pedro", false),
            ("status contains on", true),
            ("missing exists", false),
            ("missing != x", true),
            ("status exists", true),
            ("due < 10", false),
        ] {
            assert_eq!(passes(f, TASK), want, "{f}");
        }
    }

    #[test]
    fn tags_match_their_nested_tags_without_case() {
        for (f, want) in [
            ("#project/x", true),
            ("#PROJECT", true),
            ("#project/x/api", true),
            ("#project/xy", false),
            ("tags contains project/x", true),
            ("#urgent and status = done", true),
            ("#urgent and status = open", false),
        ] {
            assert_eq!(passes(f, TASK), want, "{f}");
        }
    }

    #[test]
    fn quoted_values_keep_their_and() {
        let t = "---\ntitle: salt and pepper\n---\n";
        assert!(passes("title = \"salt and pepper\"", t));
    }

    #[test]
    fn a_clause_that_is_not_one_is_an_invalid_parameter() {
        for f in ["#a and", "= done", "status ==", "a &&", "status = done and"] {
            let e = Filter::parse(f).unwrap_err();
            assert_eq!(e.code, crate::error::Code::InvalidParameter, "{f}");
        }
    }

    #[test]
    fn a_text_that_is_not_plainly_clauses_is_read_as_an_expression() {
        for f in [
            "file.hasTag(\"book\") && rating >= 4",
            "status == \"done\"",
            "due < today()",
            "!reviewed",
            "rating >= 4 || #x",
        ] {
            match Filter::parse(f) {
                Ok(Filter::Expr(_)) => {}
                Ok(Filter::Clauses(c)) => panic!("`{f}` read as clauses: {c:?}"),
                Err(e) => assert!(f.contains('#'), "`{f}`: {}", e.message),
            }
        }
        let e = Filter::parse("file.hasTag(\"book\") && rating >= 4 &&").unwrap_err();
        assert!(e.message.contains("column"), "{}", e.message);
    }
}
