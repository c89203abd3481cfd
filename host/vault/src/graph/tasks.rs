//! A note's tasks as the Tasks and Dataview plugins read them: every list
//! item with a checkbox (`- [ ] …`, any status character), outside code,
//! with its line, heading, parent task, tags, the Tasks plugin's emoji
//! fields (read from the end of the line, as the plugin reads them) and
//! Dataview's inline fields (`[key:: value]`, `(key:: value)`).
//!
//! The index keeps them in each note's facts (short keys, empty fields
//! left out); vault_tasks asks them with the vault's expression language.

use std::ops::Range;

use pulldown_cmark::{Event, Options, Parser, Tag, TagEnd};
use regex::Regex;
use serde::{Deserialize, Serialize};

/// The kinds of status the Tasks plugin has (its "status types").
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Status {
    Todo,
    InProgress,
    OnHold,
    Done,
    Cancelled,
    NonTask,
}

impl Status {
    /// A character as Dataview reads it: `x` or `X` done, `-` cancelled,
    /// `/` in progress, any other to do (the Tasks plugin's own reading
    /// goes through its settings: [`Statuses`]).
    pub fn of(symbol: char) -> Status {
        match symbol {
            'x' | 'X' => Status::Done,
            '/' => Status::InProgress,
            '-' => Status::Cancelled,
            _ => Status::Todo,
        }
    }

    /// What the Tasks plugin's `done` filter keeps: nothing left to do.
    pub fn completed(self) -> bool {
        matches!(self, Status::Done | Status::Cancelled | Status::NonTask)
    }

    /// Its name in the plugin's settings and filters (`status.type`).
    pub fn type_name(self) -> &'static str {
        match self {
            Status::Todo => "TODO",
            Status::InProgress => "IN_PROGRESS",
            Status::OnHold => "ON_HOLD",
            Status::Done => "DONE",
            Status::Cancelled => "CANCELLED",
            Status::NonTask => "NON_TASK",
        }
    }

    pub fn from_type_name(name: &str) -> Option<Status> {
        [
            Status::Todo,
            Status::InProgress,
            Status::OnHold,
            Status::Done,
            Status::Cancelled,
            Status::NonTask,
        ]
        .into_iter()
        .find(|s| s.type_name().eq_ignore_ascii_case(name))
    }
}

/// One status the Tasks plugin knows: its character, name, kind and the
/// character a task takes after it.
#[derive(Clone, Debug, PartialEq)]
pub struct StatusDef {
    pub symbol: char,
    pub name: String,
    pub kind: Status,
    pub next: char,
}

/// The Tasks plugin's statuses: those its settings list (core and
/// custom), else its defaults (`[ ]` Todo, `[x]` Done, `[/]` In Progress,
/// `[-]` Cancelled). A character none names is `Unknown`, to do, as in
/// the plugin (so `[X]` is to do unless a setting names it).
#[derive(Clone, Debug, PartialEq)]
pub struct Statuses(Vec<StatusDef>);

/// Where the Tasks plugin keeps its settings.
pub const TASKS_SETTINGS: &str = ".obsidian/plugins/obsidian-tasks-plugin/data.json";

impl Default for Statuses {
    fn default() -> Statuses {
        let def = |symbol, name: &str, kind, next| StatusDef {
            symbol,
            name: name.to_owned(),
            kind,
            next,
        };
        Statuses(vec![
            def(' ', "Todo", Status::Todo, 'x'),
            def('x', "Done", Status::Done, ' '),
            def('/', "In Progress", Status::InProgress, 'x'),
            def('-', "Cancelled", Status::Cancelled, ' '),
        ])
    }
}

impl Statuses {
    /// Those of the plugin's settings (`statusSettings.coreStatuses` and
    /// `customStatuses`); the defaults where it lists none.
    pub fn from_settings(v: &serde_json::Value) -> Statuses {
        let listed: Vec<StatusDef> = ["coreStatuses", "customStatuses"]
            .iter()
            .filter_map(|k| v.get("statusSettings")?.get(k)?.as_array())
            .flatten()
            .filter_map(|s| {
                let one = |k: &str| {
                    let mut c = s.get(k)?.as_str()?.chars();
                    let first = c.next()?;
                    c.next().is_none().then_some(first)
                };
                Some(StatusDef {
                    symbol: one("symbol")?,
                    name: s.get("name")?.as_str()?.to_owned(),
                    kind: Status::from_type_name(s.get("type")?.as_str()?)?,
                    next: one("nextStatusSymbol").unwrap_or(' '),
                })
            })
            .collect();
        if listed.is_empty() {
            Statuses::default()
        } else {
            Statuses(listed)
        }
    }

    /// The defaults, shared.
    pub fn defaults() -> &'static Statuses {
        static DEFAULTS: std::sync::OnceLock<Statuses> = std::sync::OnceLock::new();
        DEFAULTS.get_or_init(Statuses::default)
    }

    /// The plugin's statuses in the vault `root`.
    pub fn load(root: &crate::fs::Root) -> Statuses {
        plugin_settings(root).map_or_else(Statuses::default, |v| Statuses::from_settings(&v))
    }

    /// What `symbol` means to the plugin.
    pub fn of(&self, symbol: char) -> StatusDef {
        self.0
            .iter()
            .find(|s| s.symbol == symbol)
            .cloned()
            .unwrap_or_else(|| StatusDef {
                symbol,
                name: "Unknown".to_owned(),
                kind: Status::Todo,
                next: 'x',
            })
    }
}

/// The Tasks plugin's settings file, read; None when it has none.
pub fn plugin_settings(root: &crate::fs::Root) -> Option<serde_json::Value> {
    let path = crate::fs::RelPath::parse(TASKS_SETTINGS, false).ok()?;
    let bytes = root.read(&path).ok()?;
    serde_json::from_slice(&bytes).ok()
}

/// The Tasks plugin's priorities, highest first; `None` is its "normal".
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq, PartialOrd, Ord, Serialize, Deserialize)]
#[serde(rename_all = "lowercase")]
pub enum Priority {
    Highest,
    High,
    Medium,
    #[default]
    None,
    Low,
    Lowest,
}

/// A task's date: the day written (`YYYY-MM-DD`) and its midnight in the
/// vault's time zone, read once when the task is read rather than at each
/// query. Kept in the index as the text.
#[derive(Clone, Copy, Debug, PartialEq)]
pub struct Day {
    pub date: chrono::NaiveDate,
    pub at: crate::expr::time::Date,
}

impl Day {
    pub fn parse(s: &str) -> Option<Day> {
        let s = s.trim();
        if s.len() != 10 {
            return None;
        }
        let date = chrono::NaiveDate::parse_from_str(s, "%Y-%m-%d").ok()?;
        Some(Day {
            date,
            at: crate::expr::time::Date::parse(s)?,
        })
    }
}

impl std::fmt::Display for Day {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        write!(f, "{}", self.date.format("%Y-%m-%d"))
    }
}

impl Serialize for Day {
    fn serialize<S: serde::Serializer>(&self, s: S) -> Result<S::Ok, S::Error> {
        s.collect_str(self)
    }
}

/// A date the index kept that no longer reads (it never should) is no
/// date, not a note without facts.
fn some_day<'de, D: serde::Deserializer<'de>>(d: D) -> Result<Option<Day>, D::Error> {
    let text = Option::<String>::deserialize(d)?;
    Ok(text.as_deref().and_then(Day::parse))
}

/// One task of a note, as the index keeps it in the note's facts.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
pub struct Task {
    /// 1-based line of its checkbox.
    #[serde(rename = "l")]
    pub line: u32,
    /// The status character between the brackets.
    #[serde(rename = "s")]
    pub symbol: char,
    /// The text after the checkbox, without the emoji fields at its end.
    #[serde(rename = "t")]
    pub text: String,
    /// The whole text after the checkbox (Dataview's `text`), when it is
    /// not `text`.
    #[serde(rename = "r", default, skip_serializing_if = "Option::is_none")]
    pub raw: Option<String>,
    /// Its tags, lowercase, without `#`.
    #[serde(rename = "g", default, skip_serializing_if = "Vec::is_empty")]
    pub tags: Vec<String>,
    /// The heading it is under, if any.
    #[serde(rename = "h", default, skip_serializing_if = "Option::is_none")]
    pub heading: Option<String>,
    /// The task it is indented under (an index into the note's tasks).
    #[serde(rename = "p", default, skip_serializing_if = "Option::is_none")]
    pub parent: Option<usize>,
    #[serde(
        default,
        skip_serializing_if = "Option::is_none",
        deserialize_with = "some_day"
    )]
    pub created: Option<Day>,
    #[serde(
        default,
        skip_serializing_if = "Option::is_none",
        deserialize_with = "some_day"
    )]
    pub scheduled: Option<Day>,
    #[serde(
        default,
        skip_serializing_if = "Option::is_none",
        deserialize_with = "some_day"
    )]
    pub start: Option<Day>,
    #[serde(
        default,
        skip_serializing_if = "Option::is_none",
        deserialize_with = "some_day"
    )]
    pub due: Option<Day>,
    #[serde(
        default,
        skip_serializing_if = "Option::is_none",
        deserialize_with = "some_day"
    )]
    pub done: Option<Day>,
    #[serde(
        default,
        skip_serializing_if = "Option::is_none",
        deserialize_with = "some_day"
    )]
    pub cancelled: Option<Day>,
    /// `every week`, `every month on the last day when done`, …
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub recurrence: Option<String>,
    #[serde(default, skip_serializing_if = "is_normal")]
    pub priority: Priority,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub id: Option<String>,
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub depends_on: Vec<String>,
    /// `keep` or `delete` (🏁).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub on_completion: Option<String>,
    /// Dataview's inline fields, `[key:: value]` and `(key:: value)`, in
    /// order; keys as written.
    #[serde(rename = "f", default, skip_serializing_if = "Vec::is_empty")]
    pub fields: Vec<(String, String)>,
    /// Which of its plugin fields were written in Dataview's format rather
    /// than as emoji (a bit each, [`inline`]): the Tasks plugin reads one
    /// format, the one its settings name.
    #[serde(rename = "i", default, skip_serializing_if = "is_zero")]
    pub inline: u16,
    /// [`line_hash`] of its line.
    #[serde(rename = "k", default)]
    pub hash: u64,
    /// Indented in its list (a sub-item, in the Tasks plugin's words): its
    /// marker follows spaces, or more than one after a blockquote's `>`.
    #[serde(rename = "n", default, skip_serializing_if = "std::ops::Not::not")]
    pub indented: bool,
}

fn is_zero(n: &u16) -> bool {
    *n == 0
}

/// The bits of [`Task::inline`].
pub mod inline {
    pub const CREATED: u16 = 1;
    pub const SCHEDULED: u16 = 1 << 1;
    pub const START: u16 = 1 << 2;
    pub const DUE: u16 = 1 << 3;
    pub const DONE: u16 = 1 << 4;
    pub const CANCELLED: u16 = 1 << 5;
    pub const RECURRENCE: u16 = 1 << 6;
    pub const PRIORITY: u16 = 1 << 7;
    pub const ID: u16 = 1 << 8;
    pub const DEPENDS_ON: u16 = 1 << 9;
    pub const ON_COMPLETION: u16 = 1 << 10;
}

fn is_normal(p: &Priority) -> bool {
    *p == Priority::None
}

/// The emoji fields, each with what it sets. Read from the end of the
/// line backwards, as the Tasks plugin reads them: a field followed by
/// plain words is part of the text.
type DateSlot = fn(&mut Task) -> &mut Option<Day>;

const DATES: &[(&str, DateSlot)] = &[
    ("➕", |t| &mut t.created),
    ("⏳", |t| &mut t.scheduled),
    ("⌛", |t| &mut t.scheduled),
    ("🛫", |t| &mut t.start),
    ("📅", |t| &mut t.due),
    ("📆", |t| &mut t.due),
    ("🗓", |t| &mut t.due),
    ("✅", |t| &mut t.done),
    ("❌", |t| &mut t.cancelled),
];

/// The most fields read from a line's end, as the plugin's own reading
/// stops (a line of a thousand `📅` fields is read in bounded time).
const MAX_FIELDS: usize = 20;

const PRIORITIES: &[(&str, Priority)] = &[
    ("🔺", Priority::Highest),
    ("⏫", Priority::High),
    ("🔼", Priority::Medium),
    ("🔽", Priority::Low),
    ("⏬", Priority::Lowest),
];

fn date_at_end() -> &'static Regex {
    static RE: std::sync::OnceLock<Regex> = std::sync::OnceLock::new();
    RE.get_or_init(|| {
        Regex::new(r"(➕|⏳|⌛|🛫|📅|📆|🗓|✅|❌)\u{FE0F}?\s*(\d{4}-\d{2}-\d{2})\s*$")
            .expect("a valid pattern")
    })
}

fn word_field_at_end() -> &'static Regex {
    static RE: std::sync::OnceLock<Regex> = std::sync::OnceLock::new();
    // The values the plugin reads: a rule of letters, digits, commas,
    // spaces and `!` (🔁); one id of letters, digits, `-` and `_` (🆔);
    // ids joined by commas (⛔); a word (🏁). Anything else after the
    // emoji is text.
    RE.get_or_init(|| {
        Regex::new(
            r"(?:(🔁)\u{FE0F}?\s*([a-zA-Z0-9, !]+)|(🆔)\u{FE0F}?\s*([a-zA-Z0-9_-]+)|(⛔)\u{FE0F}?\s*([a-zA-Z0-9_-]+(?:\s*,\s*[a-zA-Z0-9_-]+)*)|(🏁)\u{FE0F}?\s*([a-zA-Z]+))\s*$",
        )
        .expect("a valid pattern")
    })
}

/// A block link at the end of a line: ` ^id`.
pub fn block_link() -> &'static Regex {
    static RE: std::sync::OnceLock<Regex> = std::sync::OnceLock::new();
    RE.get_or_init(|| Regex::new(r"\s+\^[A-Za-z0-9-]+\s*$").expect("a valid pattern"))
}

/// Dataview's bracketed inline fields of a text (`[key:: value]`,
/// `(key:: value)`), in order, read as its parser reads them: the key has
/// no bracket, the value runs to the matching close (nested brackets and
/// `\` escapes kept: `[project:: [[Alpha]]]`).
pub fn inline_fields(text: &str) -> Vec<(String, String)> {
    let mut found: Vec<(usize, String, String)> = Vec::new();
    for (open, close) in [('[', ']'), ('(', ')')] {
        let mut from = 0;
        while let Some(rel) = text[from..].find(open) {
            let start = from + rel;
            from = start + 1;
            let Some(sep) = text[start + 1..].find("::") else {
                break;
            };
            let key = &text[start + 1..start + 1 + sep];
            if key.contains(['[', ']', '(', ')']) {
                continue;
            }
            let value_at = start + 1 + sep + 2;
            let (mut depth, mut escaped) = (0usize, false);
            let mut end = None;
            for (k, c) in text[value_at..].char_indices() {
                if c == '\\' {
                    escaped = !escaped;
                    continue;
                }
                if escaped {
                    escaped = false;
                    continue;
                }
                if c == open {
                    depth += 1;
                } else if c == close {
                    if depth == 0 {
                        end = Some(value_at + k);
                        break;
                    }
                    depth -= 1;
                }
            }
            let Some(end) = end else {
                continue;
            };
            found.push((
                start,
                key.trim().to_owned(),
                text[value_at..end].trim().to_owned(),
            ));
            from = end + 1;
        }
    }
    found.sort_by_key(|(at, _, _)| *at);
    found.into_iter().map(|(_, k, v)| (k, v)).collect()
}

/// Dataview's date shorthands (`📅 2026-12-04`, `✅2026-12-01`) anywhere
/// in a text: the field's name and the first date each names.
pub fn shorthands(text: &str) -> Vec<(&'static str, String)> {
    const MARKS: [(&str, &[char]); 5] = [
        ("created", &['\u{2795}']),
        ("start", &['\u{1F6EB}']),
        ("scheduled", &['\u{23F3}', '\u{231B}']),
        ("due", &['\u{1F4C5}', '\u{1F4C6}', '\u{1F5D3}', '\u{FE0F}']),
        ("completion", &['\u{2705}']),
    ];
    let date_after = |at: usize| {
        let rest = text[at..].trim_start();
        let day = rest.get(..10)?;
        let b = day.as_bytes();
        let shaped = b.iter().enumerate().all(|(j, d)| {
            if j == 4 || j == 7 {
                *d == b'-'
            } else {
                d.is_ascii_digit()
            }
        });
        shaped.then(|| day.to_owned())
    };
    MARKS
        .iter()
        .filter_map(|(name, marks)| {
            text.char_indices()
                .filter(|(_, c)| marks.contains(c))
                .find_map(|(i, c)| date_after(i + c.len_utf8()))
                .map(|d| (*name, d))
        })
        .collect()
}

/// Where a note's front matter ends (0 without one): a `---` first line
/// up to the next `---` or `...` line, as Obsidian reads it — only at the
/// very start.
fn front_matter_end(text: &str) -> usize {
    let mut lines = text.split_inclusive('\n');
    match lines.next() {
        Some(first) if first.trim_end_matches(['\r', '\n']) == "---" => {}
        _ => return 0,
    }
    let mut at = text.split_inclusive('\n').next().map_or(0, str::len);
    for line in lines {
        at += line.len();
        if matches!(line.trim_end_matches(['\r', '\n']), "---" | "...") {
            return at;
        }
    }
    0
}

/// The markdown events of a note's body, with offsets into the whole
/// text. The body is parsed on its own: pulldown-cmark's metadata option
/// reads a block between `---` lines anywhere, and a rule in the body
/// would hide what follows it.
fn body_events(text: &str) -> impl Iterator<Item = (Event<'_>, Range<usize>)> {
    let front = front_matter_end(text);
    Parser::new_ext(&text[front..], Options::empty())
        .into_offset_iter()
        .map(move |(e, r)| (e, r.start + front..r.end + front))
}

/// Where a list item's marker is: pulldown-cmark starts an item's range
/// at its indentation, or at the line break before a tab-indented one.
fn item_start(text: &str, range: &Range<usize>) -> usize {
    let item = text.get(range.clone()).unwrap_or("");
    range.start + (item.len() - item.trim_start_matches([' ', '\t', '\r', '\n']).len())
}

fn trailing_tag() -> &'static Regex {
    static RE: std::sync::OnceLock<Regex> = std::sync::OnceLock::new();
    // Every tag at the end at once: one match, whatever their number.
    RE.get_or_init(|| Regex::new(r"(?:\s#[\p{L}\p{N}_\-/]+)+\s*$").expect("a valid pattern"))
}

impl Task {
    /// What its status character means.
    pub fn status(&self) -> Status {
        Status::of(self.symbol)
    }

    fn new(line: u32, symbol: char, heading: Option<String>, parent: Option<usize>) -> Task {
        Task {
            line,
            symbol,
            text: String::new(),
            raw: None,
            tags: Vec::new(),
            heading,
            parent,
            created: None,
            scheduled: None,
            start: None,
            due: None,
            done: None,
            cancelled: None,
            recurrence: None,
            priority: Priority::None,
            id: None,
            depends_on: Vec::new(),
            on_completion: None,
            fields: Vec::new(),
            inline: 0,
            hash: 0,
            indented: false,
        }
    }

    /// The text after the checkbox: its fields taken off its end, its
    /// tags and inline fields read.
    /// Read the text after the checkbox; returns where its trailing
    /// fields start (a byte of `body`): what a status change may rewrite.
    fn read(&mut self, body: &str) -> usize {
        // A block link (`^id`) ends the line after the fields; it is no
        // part of the text.
        let body = body.trim_end();
        let body = block_link().find(body).map_or(body, |m| &body[..m.start()]);
        let mut rest = body.to_owned();
        // Tags after the fields stay in the text; they do not end the
        // fields (`📅 2023-04-16 #work`).
        let mut tail = String::new();
        for _ in 0..MAX_FIELDS {
            let before = rest.len();
            if let Some(m) = trailing_tag().find(&rest) {
                tail.insert_str(0, &rest[m.start()..]);
                rest.truncate(m.start());
            }
            if let Some(c) = date_at_end().captures(&rest) {
                let at = c.get(0).expect("whole").start();
                let slot = DATES
                    .iter()
                    .find(|(e, _)| *e == &c[1])
                    .map(|(_, f)| f)
                    .expect("a date emoji");
                if let Some(day) = Day::parse(&c[2]) {
                    slot(self).get_or_insert(day);
                }
                rest.truncate(at);
            } else if let Some((e, p)) = PRIORITIES
                .iter()
                .find(|(e, _)| rest.trim_end().trim_end_matches('\u{FE0F}').ends_with(*e))
            {
                let cut = rest.trim_end().trim_end_matches('\u{FE0F}').len() - e.len();
                if self.priority == Priority::None {
                    self.priority = *p;
                }
                rest.truncate(cut);
            } else if let Some(c) = word_field_at_end().captures(&rest) {
                let at = c.get(0).expect("whole").start();
                let value = |k: usize| c.get(k).map(|m| m.as_str().trim().to_owned());
                if let Some(v) = value(2) {
                    self.recurrence.get_or_insert(v);
                } else if let Some(v) = value(4) {
                    self.id.get_or_insert(v);
                } else if let Some(v) = value(6) {
                    if self.depends_on.is_empty() {
                        self.depends_on = v
                            .split(',')
                            .map(|s| s.trim().to_owned())
                            .filter(|s| !s.is_empty())
                            .collect();
                    }
                } else if let Some(v) = value(8) {
                    self.on_completion.get_or_insert(v);
                }
                rest.truncate(at);
            }
            if rest.len() == before {
                break;
            }
            rest.truncate(rest.trim_end().len());
        }
        let fields_at = rest.trim_end().len();
        let text = format!("{}{}", rest.trim_end(), tail.trim_end());
        for c in crate::graph::facts::tag_pattern().captures_iter(&text) {
            let tag = c[1].trim_matches('/').to_lowercase();
            if !tag.is_empty() && !self.tags.contains(&tag) {
                self.tags.push(tag);
            }
        }
        self.fields.extend(inline_fields(&text));
        self.dataview_fields();
        self.text = text.trim().to_owned();
        let whole = body.trim();
        self.raw = (whole != self.text).then(|| whole.to_owned());
        fields_at
    }
}

impl Task {
    /// The Tasks plugin's Dataview format: its fields written as inline
    /// fields (`[due:: 2026-12-04]`, `[priority:: high]`,
    /// `[repeat:: every day]`). An emoji field wins over the same field
    /// inline, as neither plugin writes both.
    fn dataview_fields(&mut self) {
        let fields = std::mem::take(&mut self.fields);
        for (key, value) in &fields {
            let value = value.trim();
            let words = || Some(value.to_owned());
            let bit = match key.as_str() {
                "created" => set(&mut self.created, || Day::parse(value), inline::CREATED),
                "scheduled" => set(&mut self.scheduled, || Day::parse(value), inline::SCHEDULED),
                "start" => set(&mut self.start, || Day::parse(value), inline::START),
                "due" => set(&mut self.due, || Day::parse(value), inline::DUE),
                "completion" => set(&mut self.done, || Day::parse(value), inline::DONE),
                "cancelled" => set(&mut self.cancelled, || Day::parse(value), inline::CANCELLED),
                "repeat" => set(&mut self.recurrence, words, inline::RECURRENCE),
                "id" => set(&mut self.id, words, inline::ID),
                "onCompletion" => set(&mut self.on_completion, words, inline::ON_COMPLETION),
                "dependsOn" if self.depends_on.is_empty() => {
                    self.depends_on = value
                        .split(',')
                        .map(|s| s.trim().to_owned())
                        .filter(|s| !s.is_empty())
                        .collect();
                    inline::DEPENDS_ON
                }
                "priority" if self.priority == Priority::None => {
                    self.priority = match value.to_lowercase().as_str() {
                        "highest" => Priority::Highest,
                        "high" => Priority::High,
                        "medium" => Priority::Medium,
                        "low" => Priority::Low,
                        "lowest" => Priority::Lowest,
                        _ => Priority::None,
                    };
                    if self.priority == Priority::None {
                        0
                    } else {
                        inline::PRIORITY
                    }
                }
                _ => 0,
            };
            self.inline |= bit;
        }
        self.fields = fields;
    }
}

/// `slot` given the value `read` gives when it has none: `bit` when it
/// was set here.
fn set<T>(slot: &mut Option<T>, read: impl FnOnce() -> Option<T>, bit: u16) -> u16 {
    if slot.is_some() {
        return 0;
    }
    *slot = read();
    if slot.is_some() { bit } else { 0 }
}

/// `[c] ` right after a list item's marker: the status character.
fn checkbox(item: &str) -> Option<(char, usize)> {
    let t = item.trim_start();
    let lead = item.len() - t.len();
    let marker = if t.starts_with(['-', '*', '+']) {
        1
    } else {
        let digits = t.bytes().take_while(u8::is_ascii_digit).count();
        match t.as_bytes().get(digits) {
            Some(b'.' | b')') if digits > 0 => digits + 1,
            _ => return None,
        }
    };
    let after = &t[marker..];
    let spaced = after.trim_start_matches([' ', '\t']);
    if spaced.len() == after.len() {
        return None;
    }
    let mut chars = spaced.chars();
    if chars.next() != Some('[') {
        return None;
    }
    let symbol = chars.next()?;
    if chars.next() != Some(']') || symbol == '\n' {
        return None;
    }
    let body_at = lead + marker + (after.len() - spaced.len()) + 2 + symbol.len_utf8();
    match item[body_at..].chars().next() {
        Some(' ' | '\t') | None => Some((symbol, body_at)),
        Some('\n' | '\r') => Some((symbol, body_at)),
        _ => None,
    }
}

/// The tasks under task `k` (its sub-tasks, theirs, …), by index: they
/// follow it, so the look ends at the first task not under it.
pub fn under(tasks: &[Task], k: usize) -> impl Iterator<Item = usize> + '_ {
    (k + 1..tasks.len()).take_while(move |&j| {
        let mut up = tasks[j].parent;
        while let Some(p) = up {
            if p == k {
                return true;
            }
            if p < k {
                return false;
            }
            up = tasks[p].parent;
        }
        false
    })
}

/// Every task of a note's text, in order.
pub fn tasks(text: &str) -> Vec<Task> {
    tasks_at(text).into_iter().map(|f| f.task).collect()
}

/// A task where it is written: what a status change rewrites.
pub struct Found {
    pub task: Task,
    /// The byte of its status character.
    pub symbol_at: usize,
    /// The byte where the fields at the end of its line start.
    pub fields_at: usize,
}

/// The hash of a task's line, from its list marker to its end: what names
/// it exactly (its status, text and fields), so that a stale reference
/// cannot change another task.
pub fn line_hash(line: &str) -> u64 {
    let h = blake3::hash(line.trim_end_matches(['\r', '\n']).trim_start().as_bytes());
    u64::from_le_bytes(h.as_bytes()[..8].try_into().expect("8 bytes"))
}

/// Every task of a note's text, in order, with where it is written.
pub fn tasks_at(text: &str) -> Vec<Found> {
    let mut out: Vec<Found> = Vec::new();
    // Open list items: the task each is, if it is one.
    let mut open: Vec<Option<usize>> = Vec::new();
    let mut heading: Option<String> = None;
    let mut reading_heading: Option<String> = None;
    let lines = crate::text::Lines::new(text);
    for (event, range) in body_events(text) {
        match event {
            Event::Start(Tag::Heading { .. }) => reading_heading = Some(String::new()),
            Event::End(TagEnd::Heading(_)) => {
                heading = reading_heading
                    .take()
                    .map(|h| h.split_whitespace().collect::<Vec<_>>().join(" "));
            }
            Event::Text(t) | Event::Code(t) => {
                if let Some(h) = reading_heading.as_mut() {
                    h.push_str(&t);
                }
            }
            Event::Start(Tag::Item) => {
                let range = item_start(text, &range)..range.end;
                let found = first_line(text, range.clone()).and_then(|line| {
                    let (symbol, body) = checkbox(line)?;
                    let parent = open.iter().rev().find_map(|t| *t);
                    let at = lines.line_of(range.start) as u32;
                    let mut task = Task::new(at, symbol, heading.clone(), parent);
                    let fields = task.read(&line[body..]);
                    task.hash = line_hash(line);
                    // What stands before the marker on its line.
                    let lead = line.len() - line.trim_start().len();
                    let before = &text[lines.start(at as usize)..range.start + lead];
                    task.indented = match before.rfind('>') {
                        Some(q) => !matches!(&before[q + 1..], "" | " "),
                        None => !before.is_empty(),
                    };
                    Some(Found {
                        task,
                        symbol_at: range.start + body - 1 - symbol.len_utf8(),
                        fields_at: range.start + body + fields,
                    })
                });
                open.push(found.map(|t| {
                    out.push(t);
                    out.len() - 1
                }));
            }
            Event::End(TagEnd::Item) => {
                open.pop();
            }
            _ => {}
        }
    }
    out
}

/// Dataview's fields of the note itself, as its page reads them: in a
/// paragraph or heading line, its `[key:: value]` and `(key:: value)`
/// fields, or the whole line `key:: value`; the same on the first line of
/// a list item that is not a task (Dataview gives those to the page); not
/// a task's (they are the task's own), not in code or front matter.
pub fn note_fields(text: &str) -> Vec<(String, String)> {
    static RE: std::sync::OnceLock<(Regex, Regex)> = std::sync::OnceLock::new();
    let (line_field, marker) = RE.get_or_init(|| {
        (
            // Dataview's full-line key: what leads it and the emphasis
            // that closes it are not the key (`**Rating**:: 6`, `> k:: v`).
            Regex::new(r"^[^\p{L}\p{N}]*?([\p{L}\p{N}_][\p{L}\p{N}_ \-/]*?)[_*~`]*::\s*(.*?)\s*$")
                .expect("a valid pattern"),
            Regex::new(r"^(?:[-*+]|\d{1,9}[.)])(?:[ \t]+|$)(\[.\][ \t])?")
                .expect("a valid pattern"),
        )
    });
    // Code, front matter and list items, where the lines are not a
    // paragraph's; and where each item's first line starts, with its
    // marker's end (or none for a task's).
    let mut skipped: Vec<Range<usize>> = Vec::new();
    // The front matter first.
    skipped.push(0..front_matter_end(text));
    let mut items: Vec<(usize, Option<usize>)> = Vec::new();
    for (event, range) in body_events(text) {
        match event {
            Event::Start(Tag::CodeBlock(_)) => skipped.push(range),
            Event::Start(Tag::Item) => {
                let start = item_start(text, &range);
                let rest = text.get(start..).unwrap_or("");
                let body = marker
                    .captures(rest)
                    .filter(|c| c.get(1).is_none())
                    .map(|c| start + c.get(0).expect("whole").end());
                let line = text[..start].rfind('\n').map_or(0, |n| n + 1);
                items.push((line, body));
                skipped.push(range);
            }
            _ => {}
        }
    }
    items.sort_by_key(|(line, _)| *line);
    // The ranges come in the order they start: one pass over them, the
    // furthest end reached so far covering the line.
    skipped.sort_by_key(|r| r.start);
    let mut ranges = skipped.iter().peekable();
    let mut starts = items.iter().peekable();
    let mut covered = 0;
    // Dataview merges a page's list items' fields before its paragraphs'.
    let mut listed: Vec<(String, String)> = Vec::new();
    let mut out = Vec::new();
    let mut at = 0;
    for line in text.split_inclusive('\n') {
        let here = at;
        at += line.len();
        let mut item = None;
        while let Some((_, body)) = starts.next_if(|(l, _)| *l <= here) {
            item = Some(*body);
        }
        let body = match item {
            // An item's first line: a task's fields are its own.
            Some(None) => {
                while let Some(r) = ranges.next_if(|r| r.start < at) {
                    covered = covered.max(r.end);
                }
                continue;
            }
            Some(Some(from)) => &text[from.min(at)..at],
            None => {
                while let Some(r) = ranges.next_if(|r| r.start <= here) {
                    covered = covered.max(r.end);
                }
                if here < covered {
                    continue;
                }
                line
            }
        };
        if item.is_some() {
            while let Some(r) = ranges.next_if(|r| r.start < at) {
                covered = covered.max(r.end);
            }
        }
        let body = body.trim_end_matches(['\n', '\r']);
        let into = if item.is_some() {
            &mut listed
        } else {
            &mut out
        };
        let mut found = inline_fields(body);
        if item.is_some() {
            // A list item's date shorthands are fields too (Dataview reads
            // a task's fields on every item).
            found.extend(shorthands(body).into_iter().map(|(k, d)| (k.to_owned(), d)));
        }
        if found.is_empty()
            && body.contains("::")
            && let Some(c) = line_field.captures(body)
        {
            found.push((c[1].trim().to_owned(), c[2].to_owned()));
        }
        into.extend(found);
    }
    listed.extend(out);
    listed
}

/// The first line of the list item at `range` (from its marker).
fn first_line(text: &str, range: Range<usize>) -> Option<&str> {
    let item = text.get(range)?;
    Some(
        item.split('\n')
            .next()
            .unwrap_or(item)
            .trim_end_matches('\r'),
    )
}

#[cfg(test)]
mod tests {
    use super::*;

    fn one(line: &str) -> Task {
        let mut t = tasks(line);
        assert_eq!(t.len(), 1, "{line}");
        t.remove(0)
    }

    /// The Tasks plugin's "Tasks Emoji Format" samples, each read as the
    /// page says.
    #[test]
    fn the_emoji_format_s_samples_read_as_the_tasks_plugin_documents() {
        let t = one("- [ ] #task Has a created date ➕ 2023-04-13\n");
        assert_eq!(
            (t.text.as_str(), t.created.map(|d| d.to_string()).as_deref()),
            ("#task Has a created date", Some("2023-04-13"))
        );
        assert_eq!(
            one("- [ ] #task Has a scheduled date ⏳ 2023-04-14")
                .scheduled
                .map(|d| d.to_string())
                .as_deref(),
            Some("2023-04-14")
        );
        assert_eq!(
            one("- [ ] #task Has a start date 🛫 2023-04-15")
                .start
                .map(|d| d.to_string())
                .as_deref(),
            Some("2023-04-15")
        );
        assert_eq!(
            one("- [ ] #task Has a due date 📅 2023-04-16")
                .due
                .map(|d| d.to_string())
                .as_deref(),
            Some("2023-04-16")
        );
        let done = one("- [x] #task Has a done date ✅ 2023-04-17");
        assert_eq!(
            (done.status(), done.done.map(|d| d.to_string()).as_deref()),
            (Status::Done, Some("2023-04-17"))
        );
        let cancelled = one("- [-] #task Has a cancelled date ❌ 2023-04-18");
        assert_eq!(
            (
                cancelled.status(),
                cancelled.cancelled.map(|d| d.to_string()).as_deref()
            ),
            (Status::Cancelled, Some("2023-04-18"))
        );
        for (line, p) in [
            ("- [ ] #task Lowest priority ⏬", Priority::Lowest),
            ("- [ ] #task Low priority 🔽", Priority::Low),
            ("- [ ] #task Normal priority", Priority::None),
            ("- [ ] #task Medium priority 🔼", Priority::Medium),
            ("- [ ] #task High priority ⏫", Priority::High),
            ("- [ ] #task Highest priority 🔺", Priority::Highest),
        ] {
            let t = one(line);
            assert_eq!(t.priority, p, "{line}");
            assert!(
                !t.text.contains(['⏬', '🔽', '🔼', '⏫', '🔺']),
                "{}",
                t.text
            );
        }
        let r = one("- [ ] #task Is a recurring task 🔁 every day when done");
        assert_eq!(
            (r.text.as_str(), r.recurrence.as_deref()),
            ("#task Is a recurring task", Some("every day when done"))
        );
        let first = one("- [ ] #task do this first 🆔 dcf64c");
        assert_eq!(first.id.as_deref(), Some("dcf64c"));
        let after = one("- [ ] #task do this after first and some other task ⛔️ dcf64c,0h17ye");
        assert_eq!(after.depends_on, ["dcf64c", "0h17ye"]);
        assert_eq!(after.text, "#task do this after first and some other task");
        assert_eq!(after.tags, ["task"]);
    }

    /// Several fields in any order at the end; a tag among them stays in
    /// the text; a field followed by words is text, as the plugin reads it.
    #[test]
    fn fields_are_read_from_the_end_of_the_line() {
        let t = one("- [ ] Call the bank 📅 2026-12-04 ⏫ 🔁 every month #errand");
        assert_eq!(t.due.map(|d| d.to_string()).as_deref(), Some("2026-12-04"));
        assert_eq!(t.priority, Priority::High);
        assert_eq!(t.recurrence.as_deref(), Some("every month"));
        assert_eq!(t.text, "Call the bank #errand");
        assert_eq!(t.tags, ["errand"]);
        let t = one("- [ ] Pay 📅 2026-12-04 after the call");
        assert_eq!(t.due, None, "a field inside the text is text");
        assert_eq!(t.text, "Pay 📅 2026-12-04 after the call");
    }

    /// A sub-item is indented: after spaces, or after more than one space
    /// following a blockquote's `>`.
    #[test]
    fn sub_items_are_the_indented_ones() {
        let t = tasks(
            "- [ ] top\n  - [ ] under\n> - [ ] quoted\n> > - [ ] twice quoted\n>   - [ ] quoted under\n1. [ ] numbered\n",
        );
        let indented: Vec<bool> = t.iter().map(|t| t.indented).collect();
        assert_eq!(indented, [false, true, false, false, true, false]);
    }

    /// The plugin's statuses: its defaults (`X` is unknown, to do), or
    /// those its settings list.
    #[test]
    fn statuses_are_the_plugin_s_defaults_or_its_settings() {
        let d = Statuses::default();
        assert_eq!(d.of('x').kind, Status::Done);
        assert_eq!(d.of('-').kind, Status::Cancelled);
        let unknown = d.of('X');
        assert_eq!(
            (unknown.kind, unknown.name.as_str()),
            (Status::Todo, "Unknown")
        );
        let s = Statuses::from_settings(&serde_json::json!({"statusSettings": {
            "coreStatuses": [{"symbol": " ", "name": "Todo", "nextStatusSymbol": "/", "type": "TODO"}],
            "customStatuses": [{"symbol": "h", "name": "On hold", "nextStatusSymbol": " ", "type": "ON_HOLD"},
                               {"symbol": "~", "name": "Pro", "nextStatusSymbol": "~", "type": "NON_TASK"}]
        }}));
        assert_eq!(s.of(' ').next, '/');
        assert_eq!(s.of('h').kind, Status::OnHold);
        assert!(s.of('~').kind.completed());
        // Without statuses listed, the defaults.
        assert_eq!(Statuses::from_settings(&serde_json::json!({})), d);
    }

    /// The plugin's values: a recurrence of words (tags after it are
    /// tags), one id (words after it are text), the other due and
    /// scheduled emoji.
    #[test]
    fn field_values_are_what_the_plugin_reads() {
        let t = one("- [ ] Tidy 🔁 every week #home #chores");
        assert_eq!(t.recurrence.as_deref(), Some("every week"));
        assert_eq!(t.tags, ["home", "chores"]);
        assert_eq!(t.text, "Tidy #home #chores");
        let t = one("- [ ] Ask 🆔 abc more words");
        assert_eq!(t.id, None);
        assert_eq!(t.text, "Ask 🆔 abc more words");
        let t = one("- [ ] Pay 📆 2026-12-04 ⌛ 2026-12-01");
        assert_eq!(t.due.map(|d| d.to_string()).as_deref(), Some("2026-12-04"));
        assert_eq!(
            t.scheduled.map(|d| d.to_string()).as_deref(),
            Some("2026-12-01")
        );
    }

    /// A line of a thousand fields and a note of a hundred thousand tasks
    /// are read (fields: as many as the plugin reads; lines found by a
    /// search, not by counting from the start for each task).
    #[test]
    fn many_fields_and_many_tasks_are_read_in_bounded_time() {
        let line = format!("- [ ] x{}\n", " 📅 2026-12-04".repeat(1000));
        let t = one(&line);
        assert_eq!(t.due.map(|d| d.to_string()).as_deref(), Some("2026-12-04"));
        let many = "- [ ] a #t\n".repeat(100_000);
        let t = tasks(&many);
        assert_eq!((t.len(), t[99_999].line), (100_000, 100_000));
    }

    /// Dataview's inline fields; statuses beyond the four defaults; tasks
    /// in code are not tasks; sub-tasks know their parent; headings.
    #[test]
    fn dataview_fields_statuses_code_and_nesting() {
        let text = "# Week\n\n- [ ] Call the bank [due:: 2026-12-04] (owner:: Ana)\n  - [/] Find the number\n    - [?] Ask Luis\n- Plain item\n  - [x] Done under a plain item\n\n```md\n- [ ] not a task\n```\n\n## Later\n1. [ ] Numbered\n- [ ]no space is no task\n";
        let t = tasks(text);
        let texts: Vec<&str> = t.iter().map(|t| t.text.as_str()).collect();
        assert_eq!(
            texts,
            [
                "Call the bank [due:: 2026-12-04] (owner:: Ana)",
                "Find the number",
                "Ask Luis",
                "Done under a plain item",
                "Numbered"
            ]
        );
        assert_eq!(
            t[0].fields,
            [
                ("due".to_owned(), "2026-12-04".to_owned()),
                ("owner".to_owned(), "Ana".to_owned())
            ]
        );
        assert_eq!(
            t.iter().map(|t| t.line).collect::<Vec<_>>(),
            [3, 4, 5, 7, 14]
        );
        assert_eq!(
            t.iter().map(|t| t.parent).collect::<Vec<_>>(),
            [None, Some(0), Some(1), None, None]
        );
        assert_eq!(
            t.iter().map(|t| t.status()).collect::<Vec<_>>(),
            [
                Status::Todo,
                Status::InProgress,
                Status::Todo,
                Status::Done,
                Status::Todo
            ]
        );
        assert_eq!(t[2].symbol, '?');
        assert_eq!(t[0].heading.as_deref(), Some("Week"));
        assert_eq!(t[4].heading.as_deref(), Some("Later"));
        assert!(Status::Cancelled.completed() && !Status::InProgress.completed());
    }

    /// Dataview's page fields: a paragraph's `key:: value` line or its
    /// bracketed fields, and a plain list item's (Dataview gives them to
    /// the page); not a task's, not in code, not front matter.
    #[test]
    fn key_value_lines_are_the_note_s_fields() {
        let text = "---\nstatus:: not a field\n---\n# Plan\nstatus:: active\nDue Date:: 2026-12-04\nRead [rating:: 4] and (mood:: calm) today\n\n- item:: the note's\n- [ ] task [own:: the task's]\n  - nested [deep:: yes]\n\n```\ncode:: no\n```\n";
        let f = note_fields(text);
        let pair = |k: &str, v: &str| (k.to_owned(), v.to_owned());
        // List items' fields first, as Dataview merges them.
        assert_eq!(
            f,
            [
                pair("item", "the note's"),
                pair("deep", "yes"),
                pair("status", "active"),
                pair("Due Date", "2026-12-04"),
                pair("rating", "4"),
                pair("mood", "calm"),
            ]
        );
    }

    /// What Dataview's own pages and parser read: a decorated full-line
    /// key, a quote's field, a value holding a link, a plain item's date
    /// shorthand, items indented by spaces or tabs.
    #[test]
    fn page_fields_as_dataview_s_parser_finds_them() {
        let text = "**Rating**:: 6\n> Quoted:: yes\nSee [project:: [[Alpha]]] now\n\n- went out 📅 2026-12-04\n - one space [a:: 1]\n- top\n\t- tabbed [b:: 2]\n    - four spaces [c:: 3]\n";
        let pair = |k: &str, v: &str| (k.to_owned(), v.to_owned());
        assert_eq!(
            note_fields(text),
            [
                pair("due", "2026-12-04"),
                pair("a", "1"),
                pair("b", "2"),
                pair("c", "3"),
                pair("Rating", "6"),
                pair("Quoted", "yes"),
                pair("project", "[[Alpha]]"),
            ]
        );
    }

    /// Front matter is only at the very start: a `---` rule in the body
    /// hides nothing after it, and tab-indented sub-tasks are sub-tasks.
    #[test]
    fn a_rule_in_the_body_and_tab_indents_hide_no_task() {
        let text = "---\nx: 1\n---\nText\n\n---\nMood:: good\n- [ ] call\n\t- [ ] sub\n\n---\n";
        let t = tasks(text);
        let lines: Vec<u32> = t.iter().map(|t| t.line).collect();
        assert_eq!(lines, [8, 9]);
        assert_eq!(t[1].parent, Some(0));
        assert_eq!(note_fields(text), [("Mood".to_owned(), "good".to_owned())]);
    }
}
