//! An expression's tree, read from its tokens by precedence (`||` below
//! `&&` below `==`/`!=` below `<`/`>` below `+`/`-` below `*`/`/`/`%`
//! below `!`/unary `-` below `.`, calls and `[ ]`). Names are told apart
//! here: `file`, `this`, `note.x`, `formula.x`, and the variables of
//! `filter`/`map`/`reduce` (`value`, `index`, `acc`) and of summaries
//! (`values`); any other name is a note property.

use std::sync::Arc;

use super::Fault;
use super::lex::{Tok, Token};
use super::value::Val;

#[derive(Clone, Debug)]
pub struct Ex {
    pub node: Node,
    /// The column it starts at.
    pub at: usize,
}

#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Bin {
    Or,
    And,
    Eq,
    Ne,
    Lt,
    Le,
    Gt,
    Ge,
    Add,
    Sub,
    Mul,
    Div,
    Rem,
}

#[derive(Clone, Debug)]
pub enum Node {
    Lit(Val),
    List(Vec<Ex>),
    /// `{"a": 1, b: 2}`: keys in the order written.
    Object(Vec<(String, Ex)>),
    /// A property of the row evaluated: of its file, or of its task (a
    /// task's own fields, then its note's).
    Prop(String),
    /// `note.x`: a property of the row's note, even for a task.
    NoteProp(String),
    /// The file evaluated.
    File,
    Formula(String),
    /// The base's own file, or the note embedding it.
    This,
    ThisProp(String),
    /// `value`, `index`, `acc` or `values`.
    Var(&'static str),
    Field(Box<Ex>, String),
    Index(Box<Ex>, Box<Ex>),
    Call(&'static str, Vec<Ex>),
    Method(Box<Ex>, &'static str, Vec<Ex>),
    Not(Box<Ex>),
    Neg(Box<Ex>),
    Bin(Bin, Box<Ex>, Box<Ex>),
}

/// The global functions kura evaluates.
pub const GLOBALS: &[&str] = &[
    "date",
    "duration",
    "escapeHTML",
    "file",
    "html",
    "icon",
    "if",
    "image",
    "link",
    "list",
    "max",
    "min",
    "now",
    "number",
    "today",
];

/// The functions called on a value (`x.lower()`) kura evaluates.
pub const METHODS: &[&str] = &[
    // any value
    "isTruthy",
    "isType",
    "toString",
    "isEmpty",
    // dates
    "date",
    "format",
    "time",
    "relative",
    // texts
    "contains",
    "containsAll",
    "containsAny",
    "endsWith",
    "lower",
    "replace",
    "repeat",
    "reverse",
    "slice",
    "split",
    "startsWith",
    "title",
    "trim",
    // numbers
    "abs",
    "ceil",
    "floor",
    "round",
    "toFixed",
    // lists
    "filter",
    "flat",
    "join",
    "map",
    "reduce",
    "sort",
    "unique",
    "mean",
    // links and files
    "asFile",
    "linksTo",
    "asLink",
    "hasLink",
    "hasProperty",
    "hasTag",
    "inFolder",
    // objects
    "keys",
    "values",
    // regular expressions
    "matches",
];

/// The methods whose arguments are evaluated once per list item.
const PER_ITEM: &[&str] = &["filter", "map", "reduce"];

pub struct Parser {
    toks: Vec<Token>,
    pos: usize,
    /// How deep in brackets, calls and unary operators the reading is.
    depth: usize,
    /// Inside the arguments of `filter`, `map` or `reduce`.
    per_item: usize,
    /// A summary formula, where `values` is the column's values.
    summary: bool,
}

fn binary(op: &str) -> Option<(Bin, u8)> {
    Some(match op {
        "||" => (Bin::Or, 1),
        "&&" => (Bin::And, 3),
        "==" => (Bin::Eq, 5),
        "!=" => (Bin::Ne, 5),
        "<" => (Bin::Lt, 7),
        "<=" => (Bin::Le, 7),
        ">" => (Bin::Gt, 7),
        ">=" => (Bin::Ge, 7),
        "+" => (Bin::Add, 9),
        "-" => (Bin::Sub, 9),
        "*" => (Bin::Mul, 11),
        "/" => (Bin::Div, 11),
        "%" => (Bin::Rem, 11),
        _ => return None,
    })
}

const UNARY: u8 = 13;

/// The deepest nesting of brackets, calls and unary operators read.
const MAX_DEPTH: usize = 64;

fn known(list: &[&'static str], name: &str) -> Option<&'static str> {
    list.iter().copied().find(|n| *n == name)
}

impl Parser {
    pub fn new(toks: Vec<Token>, summary: bool) -> Parser {
        Parser {
            toks,
            pos: 0,
            depth: 0,
            per_item: 0,
            summary,
        }
    }

    fn peek(&self) -> &Token {
        &self.toks[self.pos]
    }

    fn next(&mut self) -> Token {
        let t = self.toks[self.pos].clone();
        if self.pos + 1 < self.toks.len() {
            self.pos += 1;
        }
        t
    }

    fn is_op(&self, op: &str) -> bool {
        matches!(&self.peek().tok, Tok::Op(o) if *o == op)
    }

    fn expect(&mut self, op: &'static str) -> Result<(), Fault> {
        let t = self.next();
        if t.tok == Tok::Op(op) {
            return Ok(());
        }
        Err(Fault::new(
            format!("`{op}` expected, found {}", shown(&t.tok)),
            t.at,
        ))
    }

    /// The whole text as one expression.
    pub fn whole(&mut self) -> Result<Ex, Fault> {
        let e = self.expr(0)?;
        let t = self.peek();
        if t.tok != Tok::End {
            return Err(unexpected(t));
        }
        Ok(e)
    }

    fn expr(&mut self, min: u8) -> Result<Ex, Fault> {
        self.depth += 1;
        if self.depth > MAX_DEPTH {
            return Err(Fault::new(
                format!("an expression nested more than {MAX_DEPTH} deep"),
                self.peek().at,
            ));
        }
        let e = self.binary_from(min);
        self.depth -= 1;
        e
    }

    fn binary_from(&mut self, min: u8) -> Result<Ex, Fault> {
        let mut lhs = self.prefix()?;
        loop {
            let t = self.peek().clone();
            match &t.tok {
                Tok::Op(".") => {
                    self.next();
                    lhs = self.member(lhs)?;
                }
                Tok::Op("[") => {
                    self.next();
                    let i = self.expr(0)?;
                    self.expect("]")?;
                    lhs = Ex {
                        at: lhs.at,
                        node: Node::Index(Box::new(lhs), Box::new(i)),
                    };
                }
                Tok::Op("=") => {
                    return Err(Fault::new(
                        "`=` is not an operator: compare with `==`",
                        t.at,
                    ));
                }
                Tok::Op(op) => {
                    let Some((bin, bp)) = binary(op) else {
                        return Ok(lhs);
                    };
                    if bp < min {
                        return Ok(lhs);
                    }
                    self.next();
                    let rhs = self.expr(bp + 1)?;
                    lhs = Ex {
                        at: lhs.at,
                        node: Node::Bin(bin, Box::new(lhs), Box::new(rhs)),
                    };
                }
                _ => return Ok(lhs),
            }
        }
    }

    /// What follows a `.`: a field, or a method call.
    fn member(&mut self, on: Ex) -> Result<Ex, Fault> {
        let t = self.next();
        let Tok::Name(name) = &t.tok else {
            return Err(Fault::new(
                format!("a name expected after `.`, found {}", shown(&t.tok)),
                t.at,
            ));
        };
        if !self.is_op("(") {
            return Ok(Ex {
                at: on.at,
                node: Node::Field(Box::new(on), name.clone()),
            });
        }
        let Some(method) = known(METHODS, name) else {
            return Err(Fault::new(
                format!("`{name}()` is not a Bases function kura supports"),
                t.at,
            ));
        };
        self.next();
        let per_item = PER_ITEM.contains(&method);
        self.per_item += per_item as usize;
        let args = self.args();
        self.per_item -= per_item as usize;
        Ok(Ex {
            at: on.at,
            node: Node::Method(Box::new(on), method, args?),
        })
    }

    /// Arguments up to the closing `)` (the `(` read).
    fn args(&mut self) -> Result<Vec<Ex>, Fault> {
        self.items(")")
    }

    fn items(&mut self, close: &'static str) -> Result<Vec<Ex>, Fault> {
        let mut out = Vec::new();
        if self.is_op(close) {
            self.next();
            return Ok(out);
        }
        loop {
            out.push(self.expr(0)?);
            let t = self.next();
            match t.tok {
                Tok::Op(",") => continue,
                Tok::Op(c) if c == close => return Ok(out),
                _ => {
                    return Err(Fault::new(
                        format!("`,` or `{close}` expected, found {}", shown(&t.tok)),
                        t.at,
                    ));
                }
            }
        }
    }

    /// An object's `key: value` entries up to its `}` (a key a text or a
    /// name, as JavaScript writes them).
    fn entries(&mut self) -> Result<Vec<(String, Ex)>, Fault> {
        let mut out = Vec::new();
        if self.is_op("}") {
            self.next();
            return Ok(out);
        }
        loop {
            let t = self.next();
            let key = match t.tok {
                Tok::Str(k) | Tok::Name(k) => k,
                other => {
                    return Err(Fault::new(
                        format!("a key expected in an object, found {}", shown(&other)),
                        t.at,
                    ));
                }
            };
            self.expect(":")?;
            out.push((key, self.expr(0)?));
            let t = self.next();
            match t.tok {
                Tok::Op(",") => continue,
                Tok::Op("}") => return Ok(out),
                _ => {
                    return Err(Fault::new(
                        format!("`,` or `}}` expected, found {}", shown(&t.tok)),
                        t.at,
                    ));
                }
            }
        }
    }

    /// `.name` or `["name"]` after `note`, `formula` or `this`.
    fn key_after(&mut self, what: &str) -> Result<Option<String>, Fault> {
        if self.is_op(".") {
            self.next();
            let t = self.next();
            return match t.tok {
                Tok::Name(n) => Ok(Some(n)),
                other => Err(Fault::new(
                    format!("a name expected after `{what}.`, found {}", shown(&other)),
                    t.at,
                )),
            };
        }
        if self.is_op("[")
            && matches!(
                self.toks.get(self.pos + 1).map(|t| &t.tok),
                Some(Tok::Str(_))
            )
        {
            self.next();
            let Tok::Str(n) = self.next().tok else {
                unreachable!("checked above")
            };
            self.expect("]")?;
            return Ok(Some(n));
        }
        Ok(None)
    }

    fn prefix(&mut self) -> Result<Ex, Fault> {
        let t = self.next();
        let at = t.at;
        let node = match t.tok {
            Tok::Num(n) => Node::Lit(Val::Num(n)),
            Tok::Str(s) => Node::Lit(Val::Str(s)),
            Tok::Regex(p, flags) => regex(&p, &flags, at)?,
            Tok::Op("(") => {
                let e = self.expr(0)?;
                self.expect(")")?;
                return Ok(e);
            }
            Tok::Op("[") => Node::List(self.items("]")?),
            Tok::Op("!") => Node::Not(Box::new(self.expr(UNARY)?)),
            // `-100` is the number -100 (as a clause reads it), not a
            // negation: one tree for one text.
            Tok::Op("-") => match self.expr(UNARY)? {
                Ex {
                    node: Node::Lit(Val::Num(n)),
                    ..
                } => Node::Lit(Val::Num(-n)),
                e => Node::Neg(Box::new(e)),
            },
            Tok::Op("+") => return self.expr(UNARY),
            Tok::Op("{") => Node::Object(self.entries()?),
            Tok::Name(name) => return self.name(name, at),
            other => return Err(unexpected(&Token { tok: other, at })),
        };
        Ok(Ex { node, at })
    }

    fn name(&mut self, name: String, at: usize) -> Result<Ex, Fault> {
        let ex = |node| Ok(Ex { node, at });
        if self.is_op("(") {
            let Some(f) = known(GLOBALS, &name) else {
                return Err(Fault::new(
                    format!("`{name}()` is not a Bases function kura supports"),
                    at,
                ));
            };
            self.next();
            let args = self.args()?;
            // `date("2026-12-01")` is the same for every file: read once.
            let folded = match (f, args.as_slice()) {
                (
                    "date",
                    [
                        Ex {
                            node: Node::Lit(Val::Str(s)),
                            ..
                        },
                    ],
                ) => super::time::Date::parse(s).map(Val::Date),
                (
                    "duration",
                    [
                        Ex {
                            node: Node::Lit(Val::Str(s)),
                            ..
                        },
                    ],
                ) => super::time::Dur::parse(s).map(Val::Dur),
                _ => None,
            };
            return ex(folded.map_or(Node::Call(f, args), Node::Lit));
        }
        match name.as_str() {
            "true" => ex(Node::Lit(Val::Bool(true))),
            "false" => ex(Node::Lit(Val::Bool(false))),
            "null" => ex(Node::Lit(Val::Null)),
            "file" => ex(Node::File),
            "note" => match self.key_after("note")? {
                Some(k) => ex(Node::NoteProp(k)),
                None => Err(Fault::new(
                    "`note` names a property: write `note.name` or `note[\"name\"]`",
                    at,
                )),
            },
            "formula" => match self.key_after("formula")? {
                Some(k) => ex(Node::Formula(k)),
                None => Err(Fault::new(
                    "`formula` names a formula: write `formula.name`",
                    at,
                )),
            },
            "this" => {
                let save = self.pos;
                match self.key_after("this")? {
                    None => ex(Node::This),
                    Some(k) if k == "file" => ex(Node::This),
                    Some(k) if k == "note" => match self.key_after("this.note")? {
                        Some(k) => ex(Node::ThisProp(k)),
                        None => Err(Fault::new("write `this.note.name`", at)),
                    },
                    Some(k) if k == "formula" => Err(Fault::new(
                        "`this.formula` (another file's formulas) is not supported by kura",
                        at,
                    )),
                    Some(k) if self.is_op("(") => {
                        // `this.hasTag(...)`: a method of this file.
                        self.pos = save;
                        let _ = k;
                        ex(Node::This)
                    }
                    Some(k) => ex(Node::ThisProp(k)),
                }
            }
            "value" | "index" | "acc" if self.per_item > 0 => ex(Node::Var(match name.as_str() {
                "value" => "value",
                "index" => "index",
                _ => "acc",
            })),
            "values" if self.summary => ex(Node::Var("values")),
            _ => ex(Node::Prop(name)),
        }
    }
}

/// A JavaScript pattern as the `regex` crate reads it with JavaScript's
/// meaning: `\w`, `\d` and `\b` are ASCII there (`/^\w+$/` does not match
/// `café`), Unicode in the crate. Anything else is the same in both for
/// what kura accepts; what the crate refuses is refused by name.
pub fn js_pattern(pattern: &str) -> Result<String, String> {
    let mut out = String::with_capacity(pattern.len() + 16);
    let mut class = false;
    let mut chars = pattern.chars().peekable();
    while let Some(c) = chars.next() {
        match c {
            '\\' => match chars.next() {
                Some(e @ ('w' | 'd')) if class => {
                    out.push_str(if e == 'w' { "[:word:]" } else { "[:digit:]" });
                    // `[\w-.]`: JavaScript reads the `-` after a class as
                    // itself, the crate as a range.
                    if chars.peek() == Some(&'-') {
                        chars.next();
                        out.push_str("\\-");
                    }
                }
                Some('w') => out.push_str("[0-9A-Za-z_]"),
                Some('W') => out.push_str("[^0-9A-Za-z_]"),
                Some('d') => out.push_str("[0-9]"),
                Some('D') => out.push_str("[^0-9]"),
                Some('b') if !class => out.push_str("(?-u:\\b)"),
                Some('B') if !class => out.push_str("(?-u:\\B)"),
                Some(e) => {
                    out.push('\\');
                    out.push(e);
                }
                None => out.push('\\'),
            },
            '[' if !class => {
                class = true;
                out.push(c);
                if chars.peek() == Some(&'^') {
                    chars.next();
                    out.push('^');
                }
                // JavaScript's `[]` matches nothing and `[^]` anything;
                // the crate has no such classes.
                if chars.peek() == Some(&']') {
                    return Err("an empty class `[]` or `[^]`".into());
                }
            }
            ']' if class => {
                class = false;
                out.push(c);
            }
            // Plain characters in JavaScript's classes, a nested class and
            // set operations (`&&`, `--`, `~~`) in the crate's.
            '[' | '&' | '~' if class => {
                out.push('\\');
                out.push(c);
            }
            '-' if class && chars.peek() == Some(&'-') => out.push_str("\\-"),
            c => out.push(c),
        }
    }
    Ok(out)
}

fn regex(pattern: &str, flags: &str, at: usize) -> Result<Node, Fault> {
    let translated = js_pattern(pattern).map_err(|why| {
        Fault::new(
            format!("`/{pattern}/` has {why}, which kura does not read"),
            at,
        )
    })?;
    let mut b = regex::RegexBuilder::new(&translated);
    let mut global = false;
    for f in flags.chars() {
        match f {
            'g' => global = true,
            'i' => {
                b.case_insensitive(true);
            }
            'm' => {
                b.multi_line(true);
            }
            's' => {
                b.dot_matches_new_line(true);
            }
            'u' => {}
            other => {
                return Err(Fault::new(
                    format!("the regular expression flag `{other}` is not supported by kura"),
                    at,
                ));
            }
        }
    }
    let re = b.size_limit(1 << 20).build().map_err(|e| {
        Fault::new(
            format!("`/{pattern}/` is not a regular expression kura reads: {e}"),
            at,
        )
    })?;
    Ok(Node::Lit(Val::Regex(Arc::new(re), global)))
}

fn shown(t: &Tok) -> String {
    match t {
        Tok::Num(n) => format!("`{}`", super::value::num_text(*n)),
        Tok::Str(s) => format!("\"{s}\""),
        Tok::Regex(p, f) => format!("`/{p}/{f}`"),
        Tok::Name(n) => format!("`{n}`"),
        Tok::Op(o) => format!("`{o}`"),
        Tok::End => "the end".to_owned(),
    }
}

fn unexpected(t: &Token) -> Fault {
    match &t.tok {
        Tok::Op(":") => Fault::new("`:` is not part of the Bases expression syntax", t.at),
        other => Fault::new(format!("{} was not expected here", shown(other)), t.at),
    }
}
