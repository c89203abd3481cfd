//! The expression language of Obsidian's Bases, which kura's filters and
//! `.base` files share: comparisons, arithmetic, `&&`/`||`/`!`, texts,
//! lists, dates and durations, `file.*`, `note.*`, `formula.*`, `this`, and
//! the documented functions. It is read ([`lex`], [`parse`]) once per
//! query and evaluated ([`eval`]) for each file from the graph. A construct
//! kura does not evaluate is refused with its column, never evaluated
//! differently.

mod call;
pub mod dql;
pub mod env;
pub mod eval;
mod lex;
pub mod parse;
pub mod task;
pub mod time;
pub mod types;
pub mod value;

use crate::error::Error;
use parse::{Bin, Ex, Node};

/// What is wrong with an expression, and the column (1-based) where.
#[derive(Clone, Debug, PartialEq)]
pub struct Fault {
    pub message: String,
    pub at: usize,
    /// A property whose value is not of its declared type.
    pub malformed: bool,
    /// The whole query stops here, not only this file's row.
    pub stop: Option<Stop>,
    /// A construct kura does not evaluate, or a value past a bound (a
    /// Dataview query's): the whole query is refused, never answered
    /// without the rows it would fail on.
    pub refuses: bool,
}

/// Why a query stopped before its last file.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Stop {
    /// Its time ran out (`QUERY_BUDGET_MS`).
    Budget,
    /// The client cancelled the call.
    Cancelled,
}

impl Fault {
    pub fn new(message: impl Into<String>, at: usize) -> Fault {
        Fault {
            message: message.into(),
            at,
            malformed: false,
            stop: None,
            refuses: false,
        }
    }

    /// As the tool error of a query (`what`, its text `text`) that stopped
    /// here: `timeout` or `cancelled`, with where it stopped.
    pub fn stopped(&self, what: &str, text: &str) -> Option<Error> {
        let code = match self.stop? {
            Stop::Budget => crate::error::Code::Timeout,
            Stop::Cancelled => crate::error::Code::Cancelled,
        };
        Some(
            Error::new(
                code,
                format!(
                    "{what} stopped: {} (at column {} of `{text}`)",
                    self.message, self.at
                ),
            )
            .with("column", self.at),
        )
    }

    /// As the tool error for argument `param` holding `text`.
    pub fn error(&self, param: &str, text: &str) -> Error {
        Error::invalid_parameter(
            param,
            format!("{} (at column {} of `{text}`)", self.message, self.at),
        )
        .with("column", self.at)
    }
}

/// Read one expression; `summary`: a summary formula, where `values` is
/// the column's values.
pub fn parse(text: &str, summary: bool) -> Result<Ex, Fault> {
    let toks = lex::tokens(text)?;
    // Its tree is evaluated (and dropped) by recursion: a bounded text
    // keeps it shallow whatever an argument holds.
    if toks.len() > MAX_TOKENS {
        return Err(Fault::new(
            format!("an expression of more than {MAX_TOKENS} tokens"),
            toks[MAX_TOKENS].at,
        ));
    }
    let e = parse::Parser::new(toks, summary).whole()?;
    check(&e)?;
    if summary {
        only_values(&e)?;
    }
    Ok(e)
}

/// The most tokens an expression may have (a filter a person writes has
/// tens).
pub const MAX_TOKENS: usize = 1000;

/// A summary reads its column's `values`, never a file's properties.
fn only_values(e: &Ex) -> Result<(), Fault> {
    let mut bad = None;
    walk(e, &mut |x| {
        if matches!(
            x.node,
            Node::Prop(_)
                | Node::NoteProp(_)
                | Node::File
                | Node::This
                | Node::ThisProp(_)
                | Node::Formula(_)
        ) && bad.is_none()
        {
            bad = Some(Fault::new(
                "a summary reads `values` (the column's values), not a file's properties",
                x.at,
            ));
        }
    });
    bad.map_or(Ok(()), Err)
}

/// A property as a view names it (`file.mtime`, `note.due`, `due`,
/// `formula.ppu`; a name may hold spaces): the expression reading it.
pub fn property(id: &str) -> Result<Ex, Fault> {
    let id = id.trim();
    let node = if let Some(f) = id.strip_prefix("file.") {
        if !env::FILE_FIELDS.contains(&f) {
            return Err(Fault::new(format!("`file.{f}` is not a file property"), 1));
        }
        Node::Field(
            Box::new(Ex {
                node: Node::File,
                at: 1,
            }),
            f.to_owned(),
        )
    } else if let Some(f) = id.strip_prefix("formula.") {
        Node::Formula(f.to_owned())
    } else if let Some(n) = id.strip_prefix("note.") {
        Node::NoteProp(n.to_owned())
    } else if id.is_empty() {
        return Err(Fault::new("an empty property name", 1));
    } else {
        Node::Prop(id.to_owned())
    };
    Ok(Ex { node, at: 1 })
}

/// Refuse what reads as an expression but names nothing Bases has:
/// `file.nothing`.
fn check(e: &Ex) -> Result<(), Fault> {
    let mut bad = None;
    walk(e, &mut |e| {
        if let Node::Field(on, name) = &e.node
            && matches!(on.node, Node::File | Node::This)
            && !env::FILE_FIELDS.contains(&name.as_str())
            && bad.is_none()
        {
            bad = Some(Fault::new(
                format!("`file.{name}` is not a file property"),
                e.at,
            ));
        }
    });
    bad.map_or(Ok(()), Err)
}

/// Every node of `e`, parents first.
pub fn walk(e: &Ex, f: &mut impl FnMut(&Ex)) {
    f(e);
    match &e.node {
        Node::List(items) | Node::Call(_, items) => items.iter().for_each(|i| walk(i, f)),
        Node::Object(entries) => entries.iter().for_each(|(_, i)| walk(i, f)),
        Node::Field(on, _) | Node::Not(on) | Node::Neg(on) => walk(on, f),
        Node::Index(a, b) | Node::Bin(_, a, b) => {
            walk(a, f);
            walk(b, f);
        }
        Node::Method(on, _, args) => {
            walk(on, f);
            args.iter().for_each(|i| walk(i, f));
        }
        Node::Lit(_)
        | Node::Prop(_)
        | Node::NoteProp(_)
        | Node::File
        | Node::Formula(_)
        | Node::This
        | Node::ThisProp(_)
        | Node::Var(_) => {}
    }
}

/// The tags (lowercase, without `#`) a file must carry for `e` to hold:
/// those of `file.hasTag("x")` with one tag, joined by `&&` at the top. A
/// caller may look at the notes with those tags only.
pub fn required_tag(e: &Ex) -> Option<String> {
    match &e.node {
        Node::Bin(Bin::And, a, b) => required_tag(a).or_else(|| required_tag(b)),
        Node::Method(on, "hasTag", args) if matches!(on.node, Node::File) && args.len() == 1 => {
            match &args[0].node {
                Node::Lit(value::Val::Str(t)) => Some(t.trim_start_matches('#').to_lowercase()),
                _ => None,
            }
        }
        _ => None,
    }
}

#[cfg(test)]
mod tests;
