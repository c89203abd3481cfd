//! A ```` ```dataview ```` block read as Dataview's query language reads
//! it: `TASK`, `LIST [WITHOUT ID] [expr]` or `TABLE [WITHOUT ID] expr [AS
//! name], …`; then `FROM` a source (`#tag`, `"folder"`, `[[note]]` for the
//! pages linking to it, `outgoing([[note]])`, joined by `and`/`or`,
//! negated by `-` or `!`); then `WHERE`, `SORT`, `GROUP BY`, `FLATTEN` and
//! `LIMIT` in any order. Expressions have Dataview's precedence (`and` and
//! `or` one level, left to right, below comparisons, below `+`/`-`, below
//! `*`/`/`/`%`) and literals (`date(today)`, `dur(1 week)`, `[[link]]`,
//! lists, objects, lambdas). What kura does not evaluate (`CALENDAR`,
//! `csv()`, an unknown function) is refused with its position.

use crate::expr::dql::{DNode, Dx, FUNCTIONS, MOMENTS, date_text, duration};
use crate::expr::parse::Bin;
use crate::expr::value::{LinkVal, Val};

/// The deepest an expression or a source may nest.
const MAX_DEPTH: u32 = 64;

/// The most parts (values, sources, `.x`, `[x]`, calls) a query may
/// have: a chain nests one level per part, and a tree is walked
/// recursively (a real query has tens).
const MAX_ATOMS: usize = 2048;

/// The most commands a query may have.
const MAX_COMMANDS: usize = 64;

/// The longest query read (a block in a note; Dataview's are lines).
pub const MAX_QUERY: usize = 64 * 1024;

/// Words no name may be (Dataview's list): they start the next part of
/// the query.
const KEYWORDS: &[&str] = &["FROM", "WHERE", "LIMIT", "GROUP", "FLATTEN"];

#[derive(Debug)]
pub struct Query {
    pub kind: Kind,
    pub from: Option<Source>,
    pub commands: Vec<Command>,
}

#[derive(Debug)]
pub enum Kind {
    Task,
    List {
        id: bool,
        /// What each item shows after its page, and its text.
        value: Option<(String, Dx)>,
    },
    Table {
        id: bool,
        columns: Vec<(String, Dx)>,
    },
}

#[derive(Debug)]
pub enum Source {
    /// Pages with the tag (or one under it), without `#`.
    Tag(String),
    /// Pages in the folder, or the one page at that path.
    Folder(String),
    /// Pages that link to the note.
    Incoming(String),
    /// Pages the note links to.
    Outgoing(String),
    Not(Box<Source>),
    And(Box<Source>, Box<Source>),
    Or(Box<Source>, Box<Source>),
}

#[derive(Debug)]
pub enum Command {
    Where(Dx),
    /// Each key, descending or not.
    Sort(Vec<(Dx, bool)>),
    /// The key and the name its value is bound to.
    Group(Dx, String),
    Flatten(Dx, String),
    Limit(Dx),
}

/// Why a query is refused, and where (a byte offset).
pub type Refused = (String, usize);

struct P<'a> {
    s: &'a str,
    i: usize,
    depth: u32,
    /// Values read so far: a chain `a + a + …` nests one level per
    /// operator, so their number bounds the tree as depth bounds parens.
    atoms: usize,
}

fn ident_start(c: char) -> bool {
    c.is_alphabetic() || (c as u32 >= 0x2100 && !c.is_whitespace() && !c.is_alphanumeric())
}

fn ident_char(c: char) -> bool {
    ident_start(c) || c.is_alphanumeric() || c == '_' || c == '-'
}

/// The query with its `//` comment lines blanked (offsets kept).
fn uncommented(text: &str) -> String {
    text.split_inclusive('\n')
        .map(|line| {
            if line.trim_start().starts_with("//") {
                // A space per byte: offsets into the query stay its own.
                line.chars()
                    .flat_map(|c| {
                        let fill = if c == '\n' { '\n' } else { ' ' };
                        std::iter::repeat_n(fill, c.len_utf8())
                    })
                    .collect()
            } else {
                line.to_owned()
            }
        })
        .collect()
}

pub fn parse(text: &str) -> Result<Query, Refused> {
    if text.len() > MAX_QUERY {
        return Err((format!("a query over {} KiB", MAX_QUERY / 1024), 0));
    }
    let clean = uncommented(text);
    let mut p = P {
        s: &clean,
        i: 0,
        depth: 0,
        atoms: 0,
    };
    p.query()
}

/// One expression alone (the tests evaluate the documentation's).
#[cfg(test)]
pub fn expression(text: &str) -> Result<Dx, Refused> {
    let mut p = P {
        s: text,
        i: 0,
        depth: 0,
        atoms: 0,
    };
    p.ws();
    let e = p.expr()?;
    p.ws();
    if !p.rest().is_empty() {
        return Err(p.unexpected("the end"));
    }
    Ok(e)
}

impl P<'_> {
    fn rest(&self) -> &str {
        &self.s[self.i..]
    }

    fn peek(&self) -> Option<char> {
        self.rest().chars().next()
    }

    fn ws(&mut self) {
        let n = self.rest().len() - self.rest().trim_start().len();
        self.i += n;
    }

    fn eat(&mut self, t: &str) -> bool {
        if self.rest().starts_with(t) {
            self.i += t.len();
            true
        } else {
            false
        }
    }

    fn expect(&mut self, t: &str) -> Result<(), Refused> {
        self.ws();
        if self.eat(t) {
            Ok(())
        } else {
            Err(self.unexpected(&format!("`{t}`")))
        }
    }

    fn unexpected(&self, wanted: &str) -> Refused {
        let got: String = self.rest().chars().take(20).collect();
        let got = if got.is_empty() {
            "the end".to_owned()
        } else {
            format!("`{}`", got.lines().next().unwrap_or(""))
        };
        (format!("expected {wanted}, found {got}"), self.i)
    }

    /// Whether the word `w` (any case) is next, a whole word.
    fn at_word(&self, w: &str) -> bool {
        let r = self.rest();
        r.len() >= w.len()
            && r.is_char_boundary(w.len())
            && r[..w.len()].eq_ignore_ascii_case(w)
            && !r[w.len()..].chars().next().is_some_and(ident_char)
    }

    fn word(&mut self, w: &str) -> bool {
        self.ws();
        if self.at_word(w) {
            self.i += w.len();
            true
        } else {
            false
        }
    }

    fn at_keyword(&self) -> bool {
        KEYWORDS.iter().any(|k| self.at_word(k))
    }

    /// Whether the next word starts a command: `LIST SORT x` has no
    /// value to show.
    fn at_command(&self) -> bool {
        self.at_keyword() || (self.at_word("SORT") && !self.rest()[4..].starts_with('('))
    }

    fn deeper(&mut self) -> Result<(), Refused> {
        self.depth += 1;
        if self.depth > MAX_DEPTH {
            return Err((format!("nesting deeper than {MAX_DEPTH}"), self.i));
        }
        Ok(())
    }

    fn query(&mut self) -> Result<Query, Refused> {
        self.ws();
        let at = self.i;
        let kind = if self.word("TASK") {
            Kind::Task
        } else if self.word("LIST") {
            let id = !self.without_id();
            self.ws();
            let value = if self.rest().is_empty() || self.at_command() {
                None
            } else {
                let start = self.i;
                let e = self.expr()?;
                let name = self.s[start..self.i]
                    .lines()
                    .map(str::trim)
                    .collect::<Vec<_>>()
                    .join(" ");
                Some((name, e))
            };
            Kind::List { id, value }
        } else if self.word("TABLE") {
            let id = !self.without_id();
            let mut columns = Vec::new();
            self.ws();
            if !self.rest().is_empty() && !self.at_command() {
                loop {
                    self.ws();
                    let start = self.i;
                    let e = self.expr()?;
                    let name = self.named(start)?;
                    columns.push((name, e));
                    self.ws();
                    if !self.eat(",") {
                        break;
                    }
                }
            }
            Kind::Table { id, columns }
        } else if self.word("CALENDAR") {
            return Err((
                "a CALENDAR query draws a calendar, which kura does not evaluate".into(),
                at,
            ));
        } else {
            return Err(self.unexpected("TASK, LIST or TABLE"));
        };
        let from = if self.word("FROM") {
            Some(self.source()?)
        } else {
            None
        };
        let mut commands = Vec::new();
        loop {
            self.ws();
            if self.rest().is_empty() {
                break;
            }
            let command = if self.word("WHERE") {
                Command::Where(self.expr()?)
            } else if self.word("SORT") {
                let mut keys = Vec::new();
                loop {
                    self.ws();
                    let e = self.expr()?;
                    let desc = if self.word("DESCENDING") || self.word("DESC") {
                        true
                    } else {
                        let _ = self.word("ASCENDING") || self.word("ASC");
                        false
                    };
                    keys.push((e, desc));
                    self.ws();
                    if !self.eat(",") {
                        break;
                    }
                }
                Command::Sort(keys)
            } else if self.word("GROUP") {
                if !self.word("BY") {
                    return Err(self.unexpected("`BY`"));
                }
                self.ws();
                let start = self.i;
                let e = self.expr()?;
                Command::Group(e, self.named(start)?)
            } else if self.word("FLATTEN") {
                self.ws();
                let start = self.i;
                let e = self.expr()?;
                Command::Flatten(e, self.named(start)?)
            } else if self.word("LIMIT") {
                Command::Limit(self.expr()?)
            } else if self.word("FROM") {
                return Err((
                    "FROM comes once, right after TASK, LIST or TABLE".into(),
                    self.i,
                ));
            } else if self.at_word("CALENDAR") {
                return Err((
                    "CALENDAR starts a query of its own; a query has one type".into(),
                    self.i,
                ));
            } else {
                return Err(self.unexpected("WHERE, SORT, GROUP BY, FLATTEN or LIMIT"));
            };
            commands.push(command);
            if commands.len() > MAX_COMMANDS {
                return Err((format!("more than {MAX_COMMANDS} commands"), self.i));
            }
        }
        Ok(Query {
            kind,
            from,
            commands,
        })
    }

    fn without_id(&mut self) -> bool {
        let save = self.i;
        if self.word("WITHOUT") && self.word("ID") {
            return true;
        }
        self.i = save;
        false
    }

    /// `AS name` after an expression that started at `start`, or the
    /// expression's text.
    fn named(&mut self, start: usize) -> Result<String, Refused> {
        // Its lines joined: a name is one line.
        let text = self.s[start..self.i]
            .lines()
            .map(str::trim)
            .collect::<Vec<_>>()
            .join(" ");
        if !self.word("AS") {
            return Ok(text);
        }
        self.ws();
        if self.peek() == Some('"') {
            return self.string();
        }
        self.ident()
            .ok_or_else(|| self.unexpected("a name after AS"))
    }

    fn source(&mut self) -> Result<Source, Refused> {
        self.deeper()?;
        let mut left = self.source_atom()?;
        loop {
            let save = self.i;
            self.ws();
            let and = if self.eat("&") || self.word("and") {
                true
            } else if self.eat("|") || self.word("or") {
                false
            } else {
                self.i = save;
                break;
            };
            let right = self.source_atom()?;
            left = if and {
                Source::And(Box::new(left), Box::new(right))
            } else {
                Source::Or(Box::new(left), Box::new(right))
            };
        }
        self.depth -= 1;
        Ok(left)
    }

    fn source_atom(&mut self) -> Result<Source, Refused> {
        self.ws();
        self.node()?;
        let at = self.i;
        if self.eat("(") {
            let s = self.source()?;
            self.expect(")")?;
            return Ok(s);
        }
        if self.eat("-") || self.eat("!") {
            self.deeper()?;
            let s = self.source_atom()?;
            self.depth -= 1;
            return Ok(Source::Not(Box::new(s)));
        }
        if self.rest().starts_with("outgoing(") {
            self.i += "outgoing(".len();
            self.ws();
            let l = self
                .link()
                .ok_or_else(|| self.unexpected("a link `[[…]]`"))?;
            self.expect(")")?;
            return Ok(Source::Outgoing(l.target));
        }
        if let Some(l) = self.link() {
            return Ok(Source::Incoming(l.target));
        }
        if self.peek() == Some('"') {
            return Ok(Source::Folder(self.string()?));
        }
        if self.eat("#") {
            let start = self.i;
            while let Some(c) = self.peek() {
                if c.is_alphanumeric() || matches!(c, '_' | '/' | '-') || c as u32 >= 0x2100 {
                    self.i += c.len_utf8();
                } else {
                    break;
                }
            }
            return Ok(Source::Tag(self.s[start..self.i].to_owned()));
        }
        if self.rest().starts_with("csv(") {
            return Err((
                "a csv() source reads a CSV file, which kura does not evaluate".into(),
                at,
            ));
        }
        Err(self.unexpected("a source: #tag, \"folder\", [[note]] or outgoing([[note]])"))
    }

    /// `[[target|display]]`, if one is next.
    fn link(&mut self) -> Option<LinkVal> {
        let r = self.rest();
        let inner_end = r.strip_prefix("[[")?.find("]]")?;
        let inner = r[2..2 + inner_end].to_owned();
        if inner.contains('[') || inner.contains(']') {
            return None;
        }
        self.i += inner_end + 4;
        let (target, display) = match inner.split_once('|') {
            Some((t, d)) => (t.to_owned(), Some(d.to_owned())),
            None => (inner.to_owned(), None),
        };
        Some(LinkVal {
            target,
            display,
            from: None,
        })
    }

    fn string(&mut self) -> Result<String, Refused> {
        let at = self.i;
        if !self.eat("\"") {
            return Err(self.unexpected("a text in quotes"));
        }
        let mut out = String::new();
        loop {
            let Some(c) = self.peek() else {
                return Err(("a text with no closing quote".into(), at));
            };
            self.i += c.len_utf8();
            match c {
                '"' => return Ok(out),
                '\\' => {
                    let Some(n) = self.peek() else {
                        return Err(("a text with no closing quote".into(), at));
                    };
                    self.i += n.len_utf8();
                    if !matches!(n, '"' | '\\') {
                        out.push('\\');
                    }
                    out.push(n);
                }
                c => out.push(c),
            }
        }
    }

    fn ident(&mut self) -> Option<String> {
        let start = self.i;
        let first = self.peek()?;
        if !ident_start(first) {
            return None;
        }
        self.i += first.len_utf8();
        while let Some(c) = self.peek() {
            if ident_char(c) {
                self.i += c.len_utf8();
            } else {
                break;
            }
        }
        Some(self.s[start..self.i].to_owned())
    }

    pub fn expr(&mut self) -> Result<Dx, Refused> {
        self.deeper()?;
        let e = self.binary(0)?;
        self.depth -= 1;
        Ok(e)
    }

    /// The operator of precedence `level` next (0 `and`/`or`, 1
    /// comparisons, 2 `+`/`-`, 3 `*`/`/`/`%`), taken.
    fn operator(&mut self, level: u8) -> Option<Bin> {
        let save = self.i;
        self.ws();
        let op = match level {
            0 => {
                if self.eat("&") || self.word("and") {
                    Some(Bin::And)
                } else if self.eat("|") || self.word("or") {
                    Some(Bin::Or)
                } else {
                    None
                }
            }
            1 => [
                (">=", Bin::Ge),
                ("<=", Bin::Le),
                ("!=", Bin::Ne),
                (">", Bin::Gt),
                ("<", Bin::Lt),
                ("=", Bin::Eq),
            ]
            .into_iter()
            .find(|(t, _)| self.rest().starts_with(t) && !self.rest().starts_with("=>"))
            .map(|(t, op)| {
                self.i += t.len();
                op
            }),
            2 => {
                if self.eat("+") {
                    Some(Bin::Add)
                } else if self.eat("-") {
                    Some(Bin::Sub)
                } else {
                    None
                }
            }
            _ => {
                if self.eat("*") {
                    Some(Bin::Mul)
                } else if self.eat("/") {
                    Some(Bin::Div)
                } else if self.eat("%") {
                    Some(Bin::Rem)
                } else {
                    None
                }
            }
        };
        if op.is_none() {
            self.i = save;
        }
        op
    }

    fn binary(&mut self, level: u8) -> Result<Dx, Refused> {
        let child = |p: &mut Self| {
            if level == 3 {
                p.ws();
                p.postfix()
            } else {
                p.binary(level + 1)
            }
        };
        let mut left = child(self)?;
        while let Some(op) = self.operator(level) {
            let right = child(self)?;
            left = Dx {
                at: left.at,
                node: DNode::Bin(op, Box::new(left), Box::new(right)),
            };
        }
        Ok(left)
    }

    fn postfix(&mut self) -> Result<Dx, Refused> {
        let mut e = self.atom()?;
        loop {
            let at = self.i;
            if matches!(self.peek(), Some('.' | '[' | '(')) {
                self.node()?;
            }
            if self.eat(".") {
                let key = self
                    .ident()
                    .ok_or_else(|| self.unexpected("a name after `.`"))?;
                e = self.index(e, Val::Str(key), at);
            } else if self.eat("[") {
                let key = self.expr()?;
                self.expect("]")?;
                // `x[name]`: a bare name is the key itself, as Dataview
                // reads it.
                let key = match key.node {
                    DNode::Name(n) => Dx {
                        node: DNode::Lit(Val::Str(n)),
                        at: key.at,
                    },
                    node => Dx { node, at: key.at },
                };
                e = match (&e.node, key.node) {
                    (DNode::Name(n), DNode::Lit(Val::Str(k))) if n == "row" => Dx {
                        node: DNode::Name(k),
                        at: e.at,
                    },
                    (_, node) => Dx {
                        at: e.at,
                        node: DNode::Index(Box::new(e), Box::new(Dx { node, at })),
                    },
                };
            } else if self.peek() == Some('(') {
                let DNode::Name(name) = &e.node else {
                    return Err(("only a function's name can be called".into(), at));
                };
                let Some(f) = FUNCTIONS.iter().find(|f| **f == name.as_str()) else {
                    return Err((
                        format!("`{name}()` is not one of Dataview's functions kura evaluates"),
                        e.at,
                    ));
                };
                self.i += 1;
                let args = self.separated(')', Self::expr)?;
                e = Dx {
                    at: e.at,
                    node: DNode::Call(f, args),
                };
            } else {
                break;
            }
        }
        if let DNode::Name(n) = &e.node
            && n == "row"
        {
            return Err((
                "`row` as a whole is not evaluated; name its field (`row.x`, `row[\"x\"]`)".into(),
                e.at,
            ));
        }
        Ok(e)
    }

    /// `e.key`: `row.key` is the row's field `key`.
    fn index(&self, e: Dx, key: Val, at: usize) -> Dx {
        match (&e.node, key) {
            (DNode::Name(n), Val::Str(k)) if n == "row" => Dx {
                node: DNode::Name(k),
                at: e.at,
            },
            (_, key) => Dx {
                at: e.at,
                node: DNode::Index(
                    Box::new(e),
                    Box::new(Dx {
                        node: DNode::Lit(key),
                        at,
                    }),
                ),
            },
        }
    }

    /// One more node of the tree: values, sources, `.x`, `[x]` and calls
    /// each count, so no chain nests past [`MAX_ATOMS`].
    fn node(&mut self) -> Result<(), Refused> {
        self.atoms += 1;
        if self.atoms > MAX_ATOMS {
            return Err((format!("a query of more than {MAX_ATOMS} parts"), self.i));
        }
        Ok(())
    }

    /// Items read by `item`, separated by `,`, up to `close` (the opening
    /// bracket taken): a list, an object, a call's arguments.
    fn separated<T>(
        &mut self,
        close: char,
        mut item: impl FnMut(&mut Self) -> Result<T, Refused>,
    ) -> Result<Vec<T>, Refused> {
        let mut items = Vec::new();
        self.ws();
        if self.eat(&close.to_string()) {
            return Ok(items);
        }
        loop {
            items.push(item(self)?);
            self.ws();
            if self.eat(&close.to_string()) {
                return Ok(items);
            }
            if !self.eat(",") {
                return Err(self.unexpected(&format!("`,` or `{close}`")));
            }
        }
    }

    fn atom(&mut self) -> Result<Dx, Refused> {
        let at = self.i;
        self.node()?;
        let lit = |v: Val| {
            Ok(Dx {
                node: DNode::Lit(v),
                at,
            })
        };
        let Some(c) = self.peek() else {
            return Err(self.unexpected("a value"));
        };
        if c == '!' {
            self.i += 1;
            if let Some(l) = self.link() {
                return lit(Val::Link(Box::new(l)));
            }
            self.deeper()?;
            let inner = self.postfix()?;
            self.depth -= 1;
            return Ok(Dx {
                node: DNode::Not(Box::new(inner)),
                at,
            });
        }
        if let Some(l) = self.link() {
            return lit(Val::Link(Box::new(l)));
        }
        if c == '[' {
            self.i += 1;
            let items = self.separated(']', Self::expr)?;
            return Ok(Dx {
                node: DNode::List(items),
                at,
            });
        }
        if c == '{' {
            self.i += 1;
            let entries = self.separated('}', |p| {
                p.ws();
                let key = if p.peek() == Some('"') {
                    p.string()?
                } else {
                    p.ident().ok_or_else(|| p.unexpected("a key"))?
                };
                p.expect(":")?;
                Ok((key, p.expr()?))
            })?;
            return Ok(Dx {
                node: DNode::Object(entries),
                at,
            });
        }
        if c == '(' {
            if let Some(params) = self.lambda_params() {
                let body = self.expr()?;
                return Ok(Dx {
                    node: DNode::Lambda(params, Box::new(body)),
                    at,
                });
            }
            self.i += 1;
            let e = self.expr()?;
            self.expect(")")?;
            return Ok(e);
        }
        if c == '"' {
            return lit(Val::Str(self.string()?));
        }
        if c.is_ascii_digit()
            || (c == '-' && self.rest()[1..].starts_with(|d: char| d.is_ascii_digit()))
        {
            let r = self.rest();
            let mut end = usize::from(c == '-');
            end += r[end..]
                .find(|d: char| !d.is_ascii_digit())
                .unwrap_or(r.len() - end);
            if r[end..].starts_with('.') && r[end + 1..].starts_with(|d: char| d.is_ascii_digit()) {
                end += 1;
                end += r[end..]
                    .find(|d: char| !d.is_ascii_digit())
                    .unwrap_or(r.len() - end);
            }
            let n: f64 = r[..end].parse().map_err(|_| self.unexpected("a number"))?;
            self.i += end;
            return lit(Val::Num(n));
        }
        for (word, v) in [
            ("true", Val::Bool(true)),
            ("True", Val::Bool(true)),
            ("false", Val::Bool(false)),
            ("False", Val::Bool(false)),
            ("null", Val::Null),
        ] {
            if self.rest().starts_with(word) && !self.rest()[word.len()..].starts_with(ident_char) {
                self.i += word.len();
                return lit(v);
            }
        }
        if let Some(d) = self.date_literal() {
            return Ok(Dx { node: d, at });
        }
        if self.at_keyword() {
            return Err(self.unexpected("a value"));
        }
        match self.ident() {
            Some(name) => Ok(Dx {
                node: DNode::Name(name),
                at,
            }),
            None => Err(self.unexpected("a value")),
        }
    }

    /// `(a, b) =>`, taken if it is next.
    fn lambda_params(&mut self) -> Option<Vec<String>> {
        let save = self.i;
        self.i += 1;
        let mut params = Vec::new();
        let ok = loop {
            self.ws();
            if self.eat(")") {
                break true;
            }
            match self.ident() {
                Some(p) => params.push(p),
                None => break false,
            }
            self.ws();
            if self.eat(")") {
                break true;
            }
            if !self.eat(",") {
                break false;
            }
        };
        self.ws();
        if ok && self.eat("=>") {
            Some(params)
        } else {
            self.i = save;
            None
        }
    }

    /// `date(…)` with a date or a moment's name, or `dur(…)` with a
    /// duration, written bare: a literal, taken if it is next.
    fn date_literal(&mut self) -> Option<DNode> {
        let r = self.rest();
        let (is_date, open) = if r.starts_with("date(") {
            (true, 5)
        } else if r.starts_with("dur(") {
            (false, 4)
        } else {
            return None;
        };
        let close = r.find(')')?;
        let inner = r[open..close].trim();
        if inner.starts_with('"') || inner.is_empty() {
            return None;
        }
        let node = if is_date {
            match MOMENTS.iter().find(|m| **m == inner) {
                Some(m) => DNode::When(m),
                None => DNode::Lit(Val::Date(date_text(inner)?)),
            }
        } else {
            DNode::Lit(Val::Dur(duration(inner)?))
        };
        self.i += close + 1;
        Some(node)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn kind(q: &str) -> Kind {
        parse(q).expect("parses").kind
    }

    #[test]
    fn and_and_or_are_one_level_read_left_to_right() {
        // Dataview: `a or b and c` is `(a or b) and c`.
        let q = parse("TASK WHERE a or b and c").unwrap();
        let Command::Where(e) = &q.commands[0] else {
            panic!()
        };
        let DNode::Bin(Bin::And, l, _) = &e.node else {
            panic!("{e:?}")
        };
        assert!(matches!(l.node, DNode::Bin(Bin::Or, ..)));
    }

    #[test]
    fn a_dash_inside_a_name_is_part_of_it() {
        let q = parse("LIST WHERE due-date").unwrap();
        let Command::Where(e) = &q.commands[0] else {
            panic!()
        };
        assert!(matches!(&e.node, DNode::Name(n) if n == "due-date"));
    }

    #[test]
    fn table_columns_are_named_by_as_or_by_their_text() {
        let Kind::Table { id, columns } =
            kind("TABLE WITHOUT ID file.name AS \"Name\", due + dur(1 day)")
        else {
            panic!()
        };
        assert!(!id);
        let names: Vec<&str> = columns.iter().map(|(n, _)| n.as_str()).collect();
        assert_eq!(names, ["Name", "due + dur(1 day)"]);
    }

    #[test]
    fn sources_combine_with_and_or_and_negation() {
        let q = parse("LIST FROM #errand and -\"archive\" or [[Home]]").unwrap();
        assert!(matches!(q.from, Some(Source::Or(..))));
    }

    #[test]
    fn bare_date_and_duration_literals() {
        let q =
            parse("TASK WHERE due < date(today) + dur(1 week) AND x = date(2026-12-10)").unwrap();
        assert_eq!(q.commands.len(), 1);
    }

    #[test]
    fn commands_in_any_order_and_comments_skipped() {
        let q = parse("TASK\n// only open ones\nWHERE !completed\nGROUP BY file.link\nSORT due DESC, text\nLIMIT 5\nFLATTEN tags AS t").unwrap();
        assert_eq!(q.commands.len(), 5);
        let Command::Sort(keys) = &q.commands[2] else {
            panic!()
        };
        assert_eq!(keys.iter().map(|k| k.1).collect::<Vec<_>>(), [true, false]);
    }

    #[test]
    fn what_kura_does_not_evaluate_is_refused_with_its_place() {
        for (q, at) in [
            ("CALENDAR file.day", 0),
            ("LIST FROM csv(\"x.csv\")", 10),
            ("LIST WHERE nosuch(1)", 11),
            ("LIST WHERE x.y(1)", 14),
        ] {
            let (_, got) = parse(q).expect_err(q);
            assert_eq!(got, at, "{q}");
        }
    }

    #[test]
    fn a_comment_with_wide_characters_keeps_the_places_after_it() {
        let (_, at) = parse("TASK\n// 日本語のコメント\nWHERE nosuch(1)").expect_err("refused");
        assert_eq!(at, "TASK\n// 日本語のコメント\nWHERE ".len());
    }

    #[test]
    fn nesting_is_bounded() {
        let long = format!("LIST WHERE {}1", "1 + ".repeat(5000));
        assert!(parse(&long).is_err());
        let deep = format!("LIST WHERE {}1{}", "(".repeat(500), ")".repeat(500));
        assert!(parse(&deep).is_err());
        let deep = format!("LIST WHERE {}x", "!".repeat(500));
        assert!(parse(&deep).is_err());
    }
}
