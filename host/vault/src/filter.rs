//! The note filter of vault_notes, vault_search and vault_find: a Bases
//! expression ([`crate::expr`]: `file.hasTag("book") && rating >= 4`). The
//! clauses of kura before expressions (`#project/x and status = done`,
//! `tags contains project/x`, `reviewed exists`) are still read, but only
//! where the text is not an expression, and only as the expression they
//! stand for, evaluated by the one evaluator: no text has two meanings.
//! `#t` and `tags contains t` are `file.hasTag("t")` (its nested tags too,
//! without case); `key = value` is `key == value` (and `!=`, `<`, `<=`,
//! `>`, `>=` the same), the value a number, `true`/`false`, a date
//! (`YYYY-MM-DD`, with a time or not) or else a text, compared as Bases
//! compares: texts with their case, a list as a list; `key contains value`
//! is `key.contains(value)` (an item of a list, a part of a text); `key
//! exists` is `file.hasProperty("key")`; `and` is `&&`. What is neither is
//! refused by name, with the expression's column.

use crate::error::{Error, Result};
use crate::expr::parse::{Bin, Ex, Node};
use crate::expr::value::Val;

/// A parsed filter: the expression every note is tested with.
#[derive(Clone, Debug)]
pub struct Filter(Ex);

impl Filter {
    pub fn parse(text: &str) -> Result<Filter> {
        let (expression, clauses) = (crate::expr::parse(text, false), clauses(text));
        let fault = match (expression, clauses) {
            // Read both ways, to the same tree: one meaning.
            (Ok(e), Some(c)) if tree(&e) == tree(&c) => return Ok(Filter(e)),
            (Ok(_), Some(_)) => {
                return Err(Error::invalid_parameter(
                    "filter",
                    format!(
                        "`{text}` reads two ways, as kura's clauses and as a Bases expression, with different meanings \
                         (unquoted, `done` is a property and `2026-12-01` is 2026 - 12 - 1 in an expression): write the \
                         expression you mean, texts quoted and dates as `date(\"2026-12-01\")`, e.g. `status != \"done\"`"
                    ),
                ));
            }
            (Ok(e), None) => return Ok(Filter(e)),
            (Err(_), Some(c)) => return Ok(Filter(c)),
            (Err(f), None) => f,
        };
        let mut e = fault.error("filter", text);
        e.message.push_str(
            ": write a Bases expression such as `file.hasTag(\"book\") && rating >= 4`, or clauses such as `#book and rating >= 4`",
        );
        Err(e)
    }

    /// The expression every note is tested with.
    pub fn expr(&self) -> &Ex {
        &self.0
    }

    /// A tag (lowercase) every note the filter keeps carries, by which a
    /// caller may narrow the notes first.
    pub fn first_tag(&self) -> Option<String> {
        crate::expr::required_tag(&self.0)
    }
}

const OPS: &[(&str, Bin)] = &[
    ("<=", Bin::Le),
    (">=", Bin::Ge),
    ("!=", Bin::Ne),
    ("=", Bin::Eq),
    ("<", Bin::Lt),
    (">", Bin::Gt),
];

/// `text` split at ` and ` outside double quotes: each clause with the
/// column (1-based) it starts at.
fn split(text: &str) -> Vec<(usize, String)> {
    let mut out = vec![(1, String::new())];
    let mut quoted = false;
    let mut col = 1;
    for w in text.split(' ') {
        let here = col;
        col += w.chars().count() + 1;
        if !quoted && w.eq_ignore_ascii_case("and") {
            out.push((col, String::new()));
            continue;
        }
        quoted ^= w.matches('"').count() % 2 == 1;
        let cur = out.last_mut().expect("never empty");
        if cur.1.is_empty() {
            cur.0 = here;
        } else {
            cur.1.push(' ');
        }
        cur.1.push_str(w);
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

/// An expression's tree without its columns, to tell whether two
/// readings of one text mean the same.
fn tree(e: &Ex) -> String {
    let text = format!("{e:?}");
    let mut out = String::with_capacity(text.len());
    let mut rest = text.as_str();
    while let Some(i) = rest.find("at: ") {
        out.push_str(&rest[..i]);
        rest = rest[i + 4..].trim_start_matches(|c: char| c.is_ascii_digit());
    }
    out.push_str(rest);
    out
}

fn ex(node: Node, at: usize) -> Ex {
    Ex { node, at }
}

/// A clause's value as the literal it stands for.
fn literal(value: &str, at: usize) -> Ex {
    let quoted = value.trim().starts_with('"');
    let v = unquote(value);
    if !quoted {
        if let Ok(n) = v.parse::<f64>()
            && n.is_finite()
        {
            return ex(Node::Lit(Val::Num(n)), at);
        }
        match v {
            "true" | "TRUE" | "True" => return ex(Node::Lit(Val::Bool(true)), at),
            "false" | "FALSE" | "False" => return ex(Node::Lit(Val::Bool(false)), at),
            // Read once, as the parser reads `date("…")` of a text.
            _ if is_date(v) => {
                return ex(
                    crate::expr::time::Date::parse(v).map_or_else(
                        || Node::Call("date", vec![ex(Node::Lit(Val::Str(v.to_owned())), at)]),
                        |d| Node::Lit(Val::Date(d)),
                    ),
                    at,
                );
            }
            _ => {}
        }
    }
    ex(Node::Lit(Val::Str(v.to_owned())), at)
}

/// `file.<method>("<arg>")`.
fn file_method(method: &'static str, arg: String, at: usize) -> Ex {
    ex(
        Node::Method(
            Box::new(ex(Node::File, at)),
            method,
            vec![ex(Node::Lit(Val::Str(arg)), at)],
        ),
        at,
    )
}

fn has_tag(tag: &str, at: usize) -> Ex {
    file_method(
        "hasTag",
        tag.trim().trim_start_matches('#').to_lowercase(),
        at,
    )
}

/// One clause (at column `at`) as its expression; None when it is not
/// plainly a clause.
fn clause(c: &str, at: usize) -> Option<Ex> {
    if let Some(tag) = c.strip_prefix('#') {
        let ok = !tag.is_empty() && !tag.contains(['(', ')', '"', '\'', ' ']);
        return ok.then(|| has_tag(tag, at));
    }
    let lower = c.to_ascii_lowercase();
    if let Some(key) = lower.strip_suffix(" exists") {
        let key = c[..key.len()].trim();
        return plain_key(key).then(|| file_method("hasProperty", key.to_owned(), at));
    }
    if let Some(i) = lower.find(" contains ") {
        let (key, value) = (c[..i].trim(), &c[i + " contains ".len()..]);
        if !plain_key(key) || !plain_value(value) {
            return None;
        }
        if key.eq_ignore_ascii_case("tags") || key.eq_ignore_ascii_case("tag") {
            return Some(has_tag(unquote(value), at));
        }
        let value = ex(Node::Lit(Val::Str(unquote(value).to_owned())), at);
        return Some(ex(
            Node::Method(
                Box::new(ex(Node::Prop(key.to_owned()), at)),
                "contains",
                vec![value],
            ),
            at,
        ));
    }
    let (i, sym, op) = OPS
        .iter()
        .find_map(|(sym, op)| c.find(sym).map(|i| (i, *sym, *op)))?;
    let (key, value) = (c[..i].trim(), &c[i + sym.len()..]);
    (plain_key(key) && plain_value(value)).then(|| {
        ex(
            Node::Bin(
                op,
                Box::new(ex(Node::Prop(key.to_owned()), at)),
                Box::new(literal(value, at)),
            ),
            at,
        )
    })
}

/// The text read as clauses joined by `and`, when every one plainly is a
/// clause: the expression they stand for.
fn clauses(text: &str) -> Option<Ex> {
    let mut parts = split(text).into_iter().map(|(at, c)| clause(c.trim(), at));
    let first = parts.next()??;
    parts.try_fold(first, |acc, next| {
        let at = acc.at;
        Some(ex(Node::Bin(Bin::And, Box::new(acc), Box::new(next?)), at))
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    fn read(text: &str) -> String {
        tree(Filter::parse(text).unwrap().expr())
    }

    /// Each clause is the expression it stands for, node for node: one
    /// evaluator gives both their rows.
    #[test]
    fn a_clause_is_the_expression_it_stands_for() {
        for (clauses, expression) in [
            ("status = done", "status == \"done\""),
            ("status != \"Done\"", "status != \"Done\""),
            (
                "due < 2026-12-01 and #x",
                "due < date(\"2026-12-01\") && file.hasTag(\"x\")",
            ),
            ("priority >= 2", "priority >= 2"),
            ("reviewed = true", "reviewed == true"),
            ("owners contains Luis", "owners.contains(\"Luis\")"),
            ("missing exists", "file.hasProperty(\"missing\")"),
            ("#Project/X", "file.hasTag(\"project/x\")"),
            ("tags contains project/x", "file.hasTag(\"project/x\")"),
            (
                "#urgent and status = done and title = \"salt and pepper\"",
                "file.hasTag(\"urgent\") && status == \"done\" && title == \"salt and pepper\"",
            ),
            (
                "status = 2026-01-01T10:00",
                "status == date(\"2026-01-01T10:00\")",
            ),
        ] {
            let want = tree(&crate::expr::parse(expression, false).unwrap());
            assert_eq!(read(clauses), want, "{clauses}");
        }
    }

    /// The case: a text that is an expression is read as one, so
    /// that `vault_notes` and a `.base` filter give the same rows.
    #[test]
    fn a_text_that_is_an_expression_is_never_read_as_clauses() {
        for f in [
            "status != \"done\"",
            "budget > 100",
            "status == \"done\"",
            "due < today()",
            "!reviewed",
            "file.hasTag(\"book\") && rating >= 4",
        ] {
            let want = tree(&crate::expr::parse(f, false).unwrap());
            assert_eq!(read(f), want, "{f}");
        }
    }

    /// A text both readings accept with different trees is refused: it
    /// would otherwise give one answer as an expression and another as
    /// clauses (`2026-12-01` subtracts, an unquoted `done` is a property).
    #[test]
    fn a_text_with_two_meanings_is_refused_by_name() {
        for f in ["due < 2026-12-01", "status != done"] {
            let e = Filter::parse(f).unwrap_err();
            assert_eq!(e.code, crate::error::Code::InvalidParameter, "{f}");
            assert!(e.message.contains("two ways"), "{f}: {}", e.message);
        }
        assert!(Filter::parse("rating >= 4").is_ok(), "one meaning");
        assert!(Filter::parse("balance < -100").is_ok(), "a negative number");
    }

    #[test]
    fn a_clause_that_is_not_one_is_an_invalid_parameter() {
        for f in [
            "#a and",
            "= done",
            "status ==",
            "a &&",
            "status = done and",
            "rating >= 4 || #x",
        ] {
            let e = Filter::parse(f).unwrap_err();
            assert_eq!(e.code, crate::error::Code::InvalidParameter, "{f}");
            assert!(e.message.contains("column"), "{f}: {}", e.message);
        }
    }

    #[test]
    fn the_first_tag_narrows_the_notes() {
        let f = Filter::parse("#PROJECT/X and status = done").unwrap();
        assert_eq!(f.first_tag().as_deref(), Some("project/x"));
        assert_eq!(Filter::parse("status = done").unwrap().first_tag(), None);
    }
}
