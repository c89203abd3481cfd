//! What every file's evaluation shares, and what the vault says of a
//! file: its note properties (typed as Obsidian types them), its file
//! properties, its links and tags, how its values compare, print and read
//! as JSON. All answered from the graph the index keeps, never by reading
//! notes; the tree is walked by [`super::eval`].

use std::cmp::Ordering;

use serde_json::Value;

use super::Fault;
use super::parse::Ex;
use super::time::Date;
use super::types::Types;
use super::value::{FileRef, LinkVal, Val, compare, from_json, link_text, num_text};
use crate::fs::{RelPath, Root};
use crate::graph::Graph;
use crate::graph::facts::Form;
use crate::graph::resolve::Names;

/// How long a query may evaluate, and whether its caller gave up: looked
/// at every 64 evaluation steps of each thread (`eval::CHECK_EVERY`). A step is
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

impl Budget<'_> {
    /// `Err` once the deadline has passed or the call was cancelled.
    pub(crate) fn check(&self, at: usize) -> Result<(), Fault> {
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
            ..Fault::new(message, at)
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
    /// The Tasks plugin's statuses (a task's `statusType`).
    pub statuses: &'a crate::graph::tasks::Statuses,
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

/// A number as JSON: a whole one as an integer (`5`, not `5.0`); one
/// JSON cannot hold (NaN, infinite) as null.
pub fn num_json(n: f64) -> Value {
    if n.fract() == 0.0 && n.abs() < 9.0e15 {
        Value::from(n as i64)
    } else {
        serde_json::Number::from_f64(n).map_or(Value::Null, Value::Number)
    }
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

impl Env<'_> {
    pub fn path(&self, f: FileRef) -> &str {
        match f {
            FileRef::Note(i) => &self.graph.notes[i as usize].path,
            FileRef::Other(j) => self.others.path(j as usize),
        }
    }

    /// A note property of `file`, typed by `.obsidian/types.json` or, when
    /// it names no type, by its value.
    pub(super) fn prop(&self, file: FileRef, name: &str, at: usize) -> Result<Val, Fault> {
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
            ..Fault::new(format!("property `{name}` {why}"), at)
        })
    }

    pub(super) fn field(&self, v: &Val, name: &str, at: usize) -> Result<Val, Fault> {
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

    pub(super) fn stat(&self, f: FileRef) -> (u64, i128, i128) {
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

    pub(super) fn file_field(&self, f: FileRef, name: &str, at: usize) -> Result<Val, Fault> {
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
                Some(i) => from_json(
                    &Value::Object(self.graph.notes[i].facts.props.clone()),
                    Some(f),
                ),
                None => Val::Obj(Vec::new()),
            },
            other => {
                return Err(Fault::new(
                    format!("`file.{other}` is not a file property"),
                    at,
                ));
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
    pub(super) fn resolve(&self, target: &str, from: Option<FileRef>) -> Option<FileRef> {
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
    pub(super) fn has_link(&self, f: FileRef, other: &Val) -> bool {
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
            tags.iter().any(|t| crate::graph::tag_is(t, w))
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
