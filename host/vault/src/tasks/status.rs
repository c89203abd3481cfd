//! vault_task_status: a task's status changed as the Tasks plugin changes
//! it, on its line of the note: the status character; `✅ date` added when
//! it becomes done and `❌ date` when cancelled (each removed when it goes
//! back), as the plugin's settings say; and, for a recurring task done,
//! its next occurrence put above it (or below, `recurrenceOnNextLine`) with
//! its dates moved by the rule ([`super::recur`]), its done, cancelled, id
//! and dependsOn fields dropped. The rest of the line is kept as written.
//! Through the vault's one write path: the write policy, locks, one change
//! in the history (undoable); a task whose line changed since it was listed
//! is `conflict`.

use std::ops::Range;

use chrono::NaiveDate;
use regex::Regex;
use schemars::JsonSchema;
use serde::Serialize;
use serde_json::Value;

use super::recur::Rule;
use crate::Vault;
use crate::args::Input;
use crate::error::{Code, Error, Result};
use crate::fs::{RelPath, Root};
use crate::graph::tasks::{Found, Status, Statuses, Task, inline, tasks_at};
use crate::plugins::WriteKind;
use crate::text::sha256;

/// The statuses a call names, and the character each writes.
pub const STATUSES: [(&str, char); 4] = [
    ("todo", ' '),
    ("in_progress", '/'),
    ("done", 'x'),
    ("cancelled", '-'),
];

#[derive(Input)]
pub struct TaskStatusInput {
    /// The note
    #[arg(nonempty)]
    pub path: String,
    /// The task's line
    #[arg(min = 1, max = 100_000_000)]
    pub line: i64,
    /// The task's `hash` as listed (a changed task is `conflict`)
    pub hash: Option<String>,
    /// Or its `text` as listed
    pub text: Option<String>,
    /// `done`, `todo`, `in_progress`, `cancelled` or a status character
    #[arg(nonempty)]
    pub status: String,
    /// Day done or cancelled, YYYY-MM-DD (default today)
    pub date: Option<String>,
}

#[derive(Debug, Serialize, JsonSchema)]
pub struct TaskStatusOutput {
    pub written_path: String,
    /// The task's line now (one lower when its next occurrence went above);
    /// null when `🏁 delete` removed it.
    pub line: Option<u32>,
    /// Its status character now.
    pub status: String,
    /// The lines now where its line was, in order.
    pub lines: Vec<String>,
    /// The line of its next occurrence, when one was added.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub next_line: Option<u32>,
    /// The note's hash after the write.
    pub hash: String,
}

/// The Tasks plugin's settings that change what a status change writes
/// (`.obsidian/plugins/obsidian-tasks-plugin/data.json`), with its
/// defaults where the file or a setting is missing.
#[derive(Clone, Debug, PartialEq)]
pub struct Settings {
    pub set_done_date: bool,
    pub set_cancelled_date: bool,
    pub set_created_date: bool,
    pub recurrence_on_next_line: bool,
    pub remove_scheduled_date_on_recurrence: bool,
    /// The Dataview format (`[completion:: …]`) rather than emoji.
    pub dataview: bool,
    /// Its global filter and global query (empty: none): what makes a
    /// checkbox a task, and lines added to every block.
    pub global_filter: String,
    pub global_query: String,
    /// Its statuses: what each character means, and the one after it.
    pub statuses: Statuses,
}

impl Default for Settings {
    fn default() -> Settings {
        Settings {
            set_done_date: true,
            set_cancelled_date: true,
            set_created_date: false,
            recurrence_on_next_line: false,
            remove_scheduled_date_on_recurrence: false,
            dataview: false,
            global_filter: String::new(),
            global_query: String::new(),
            statuses: Statuses::default(),
        }
    }
}

impl Settings {
    pub fn load(root: &Root) -> Settings {
        crate::graph::tasks::plugin_settings(root)
            .map(|v| Settings::from_json(&v))
            .unwrap_or_default()
    }

    fn from_json(v: &Value) -> Settings {
        let d = Settings::default();
        let flag = |k: &str, or: bool| v.get(k).and_then(Value::as_bool).unwrap_or(or);
        let text = |k: &str| {
            v.get(k)
                .and_then(Value::as_str)
                .unwrap_or("")
                .trim()
                .to_owned()
        };
        Settings {
            set_done_date: flag("setDoneDate", d.set_done_date),
            set_cancelled_date: flag("setCancelledDate", d.set_cancelled_date),
            set_created_date: flag("setCreatedDate", d.set_created_date),
            recurrence_on_next_line: flag("recurrenceOnNextLine", d.recurrence_on_next_line),
            remove_scheduled_date_on_recurrence: flag(
                "removeScheduledDateOnRecurrence",
                d.remove_scheduled_date_on_recurrence,
            ),
            dataview: v.get("taskFormat").and_then(Value::as_str) == Some("dataview"),
            global_filter: text("globalFilter"),
            global_query: text("globalQuery"),
            statuses: Statuses::from_settings(v),
        }
    }
}

/// A field a status change reads or writes: its emoji (and the others
/// the plugin reads for it), and its name in the Dataview format.
#[derive(Clone, Copy, PartialEq, Eq)]
struct Field {
    emoji: &'static str,
    also: &'static str,
    key: &'static str,
}

const fn field(emoji: &'static str, also: &'static str, key: &'static str) -> Field {
    Field { emoji, also, key }
}

const CREATED: Field = field("➕", "", "created");
const START: Field = field("🛫", "", "start");
const SCHEDULED: Field = field("⏳", "⌛", "scheduled");
const DUE: Field = field("📅", "📆|🗓", "due");
const DONE: Field = field("✅", "", "completion");
const CANCELLED: Field = field("❌", "", "cancelled");
const ID: Field = field("🆔", "", "id");
const DEPENDS_ON: Field = field("⛔", "", "dependsOn");
const FIELDS: [Field; 8] = [
    CREATED, START, SCHEDULED, DUE, DONE, CANCELLED, ID, DEPENDS_ON,
];

/// Each field's two patterns (as an emoji field, as an inline field), made
/// once.
fn patterns(f: Field) -> &'static (Regex, Regex) {
    static ALL: std::sync::OnceLock<Vec<(Regex, Regex)>> = std::sync::OnceLock::new();
    let all = ALL.get_or_init(|| {
        FIELDS
            .iter()
            .map(|f| {
                let value = match f.key {
                    "id" => r"[A-Za-z0-9_-]+",
                    "dependsOn" => r"[A-Za-z0-9_-]+(?:\s*,\s*[A-Za-z0-9_-]+)*",
                    _ => r"\d{4}-\d{2}-\d{2}",
                };
                let emoji = match f.also {
                    "" => f.emoji.to_owned(),
                    also => format!("(?:{}|{also})", f.emoji),
                };
                let emoji = Regex::new(&format!(r"\s*{emoji}\u{{FE0F}}?\s*({value})"))
                    .expect("a valid pattern");
                let inline = Regex::new(&format!(
                    r"\s*[\[(]{}::\s*([^\[\]()]*?)\s*[\])]",
                    regex::escape(f.key)
                ))
                .expect("a valid pattern");
                (emoji, inline)
            })
            .collect()
    });
    let k = FIELDS.iter().position(|x| *x == f).expect("a known field");
    &all[k]
}

/// Where `field` is written on `line` in the format the plugin's settings
/// name: an emoji field among the fields at the end (from byte
/// `fields_from`; an emoji in the description is text), or an inline field
/// (`[due:: …]`, unmistakable wherever it is). The whole field with the
/// space before it, and its value; the last one, as fields are read from
/// the end.
fn find(
    line: &str,
    field: Field,
    dataview: bool,
    fields_from: usize,
) -> Option<(Range<usize>, Range<usize>)> {
    let (emoji, inline) = patterns(field);
    let (re, from) = if dataview {
        (inline, 0)
    } else {
        (emoji, fields_from.min(line.len()))
    };
    let c = re.captures_iter(line.get(from..)?).last()?;
    let shift = |r: Range<usize>| r.start + from..r.end + from;
    Some((
        shift(c.get(0).expect("whole").range()),
        shift(c.get(1).expect("value").range()),
    ))
}

/// Where a field added at the end of the line goes: before a block link
/// (`^id`) and the space at the end.
fn end_of_fields(line: &str) -> usize {
    let end = line.trim_end().len();
    crate::graph::tasks::block_link()
        .find(&line[..end])
        .map_or(end, |m| m.start())
}

/// One task's line while it is changed.
struct Line {
    text: String,
    settings: Settings,
    /// Where the fields at its end start.
    fields_from: usize,
}

impl Line {
    fn find(&self, f: Field) -> Option<(Range<usize>, Range<usize>)> {
        find(&self.text, f, self.settings.dataview, self.fields_from)
    }

    fn has(&self, f: Field) -> bool {
        self.find(f).is_some()
    }

    fn remove(&mut self, f: Field) {
        if let Some((whole, _)) = self.find(f) {
            self.text.replace_range(whole, "");
        }
    }

    fn field_text(&self, f: Field, value: &str) -> String {
        if self.settings.dataview {
            format!("  [{}:: {value}]", f.key)
        } else {
            format!(" {} {value}", f.emoji)
        }
    }

    /// `f` set to `value`: where it is, or added before the first of
    /// `before` the line has, else at the end of its fields.
    fn set(&mut self, f: Field, value: &str, before: &[Field]) {
        if let Some((_, v)) = self.find(f) {
            self.text.replace_range(v, value);
            return;
        }
        let at = before
            .iter()
            .filter_map(|b| self.find(*b).map(|(whole, _)| whole.start))
            .min()
            .unwrap_or_else(|| {
                end_of_fields(&self.text).max(self.fields_from.min(self.text.len()))
            });
        let added = self.field_text(f, value);
        self.text.insert_str(at, &added);
    }

    fn date(&self, f: Field) -> Option<NaiveDate> {
        let (_, v) = self.find(f)?;
        NaiveDate::parse_from_str(&self.text[v], "%Y-%m-%d").ok()
    }

    /// The task's line with its status character `to`.
    fn with_symbol(at: &TaskLine<'_>, to: char, settings: &Settings) -> Line {
        let from = at.task.symbol;
        let mut text = at.line.to_owned();
        text.replace_range(
            at.symbol_at..at.symbol_at + from.len_utf8(),
            to.encode_utf8(&mut [0; 4]),
        );
        Line {
            text,
            settings: settings.clone(),
            // The fields lie after the character: they move with it.
            fields_from: (at.fields_from + to.len_utf8()).saturating_sub(from.len_utf8()),
        }
    }
}

/// A task's line hash as the tools show it.
pub fn hex(hash: u64) -> String {
    format!("{hash:016x}")
}

/// The status a call names.
pub fn symbol_of(status: &str) -> Result<char> {
    if let Some((_, c)) = STATUSES.iter().find(|(n, _)| *n == status) {
        return Ok(*c);
    }
    let mut chars = status.chars();
    match (chars.next(), chars.next()) {
        (Some(c), None) if c != '[' && c != ']' && !c.is_control() => Ok(c),
        _ => Err(Error::invalid_parameter(
            "status",
            format!(
                "`{status}` is not a status: write done, todo, in_progress, cancelled or one status character"
            ),
        )),
    }
}

/// The lines that take the place of a task's line, which is the task and
/// which its next occurrence.
#[derive(Debug, PartialEq)]
pub struct Changed {
    pub lines: Vec<String>,
    /// None: the task was removed (`🏁 delete`).
    pub own: Option<usize>,
    pub next: Option<usize>,
}

/// A task's line (without its line break) and where its parts are.
pub struct TaskLine<'a> {
    pub line: &'a str,
    /// The byte of its status character.
    pub symbol_at: usize,
    /// The byte where the fields at its end start.
    pub fields_from: usize,
    pub task: &'a Task,
}

/// What takes the place of a task's line when its status becomes `to` on
/// `today`.
pub fn change(
    at: &TaskLine<'_>,
    to: char,
    today: NaiveDate,
    settings: &Settings,
) -> std::result::Result<Changed, String> {
    let task = at.task;
    let from = settings.statuses.of(task.symbol).kind;
    let new = settings.statuses.of(to).kind;
    let mut done = Line::with_symbol(at, to, settings);
    let day = today.format("%Y-%m-%d").to_string();
    match new {
        Status::Done if from != Status::Done => {
            done.remove(CANCELLED);
            if settings.set_done_date {
                done.set(DONE, &day, &[]);
            }
        }
        Status::Cancelled if from != Status::Cancelled => {
            done.remove(DONE);
            if settings.set_cancelled_date {
                done.set(CANCELLED, &day, &[]);
            }
        }
        Status::Todo | Status::InProgress | Status::OnHold => {
            done.remove(DONE);
            done.remove(CANCELLED);
        }
        // Another done or cancelled status, or one that is no task: its
        // character only (the plugin never dates a NON_TASK).
        _ => {}
    }
    // What the plugin reads of the task: the fields of its configured
    // format only.
    let own = |bit: u16| (task.inline & bit != 0) == settings.dataview;
    let becomes_done = new == Status::Done && from != Status::Done;
    let rule = task
        .recurrence
        .as_deref()
        .filter(|_| own(inline::RECURRENCE));
    let next = match (rule, becomes_done) {
        (Some(rule), true) => Some(next_occurrence(at, to, rule, today, settings)?),
        _ => None,
    };
    let on_completion = task
        .on_completion
        .as_deref()
        .filter(|_| own(inline::ON_COMPLETION));
    let delete = becomes_done && on_completion == Some("delete");
    let (lines, own, next) = match (next, delete) {
        (None, true) => (Vec::new(), None, None),
        (Some(n), true) => (vec![n], None, Some(0)),
        (None, false) => (vec![done.text], Some(0), None),
        (Some(n), false) if settings.recurrence_on_next_line => {
            (vec![done.text, n], Some(0), Some(1))
        }
        (Some(n), false) => (vec![n, done.text], Some(1), Some(0)),
    };
    Ok(Changed { lines, own, next })
}

/// The next occurrence of a recurring task done `today`: to-do, its dates
/// moved as far as its reference date (due, else scheduled, else start)
/// moves by the rule, without done, cancelled, id or dependsOn; created
/// today when the setting asks for it, else without.
fn next_occurrence(
    at: &TaskLine<'_>,
    to: char,
    rule: &str,
    today: NaiveDate,
    settings: &Settings,
) -> std::result::Result<String, String> {
    let rule = Rule::parse(rule)?;
    // The new occurrence takes the status after the done one (` ` after
    // `x` by default).
    let after = settings.statuses.of(to).next;
    let mut next = Line::with_symbol(at, after, settings);
    for f in [DONE, CANCELLED, ID, DEPENDS_ON] {
        next.remove(f);
    }
    let dates = [DUE, SCHEDULED, START];
    let reference = dates.iter().find_map(|f| next.date(*f));
    if let Some(reference) = reference {
        let from = if rule.when_done { today } else { reference };
        let past = || "the next occurrence falls past the dates kura holds".to_owned();
        let moved = rule.next(from).ok_or_else(past)?;
        let by = moved - reference;
        for f in dates {
            if let Some(d) = next.date(f) {
                let shifted = d.checked_add_signed(by).ok_or_else(past)?;
                next.set(f, &shifted.format("%Y-%m-%d").to_string(), &[]);
            }
        }
        if settings.remove_scheduled_date_on_recurrence && (next.has(DUE) || next.has(START)) {
            next.remove(SCHEDULED);
        }
    }
    if settings.set_created_date {
        let day = today.format("%Y-%m-%d").to_string();
        next.set(CREATED, &day, &[START, SCHEDULED, DUE]);
    } else {
        next.remove(CREATED);
    }
    Ok(next.text)
}

impl Vault {
    pub fn task_status(&self, input: TaskStatusInput) -> Result<TaskStatusOutput> {
        const TOOL: &str = "vault_task_status";
        let path = RelPath::parse(&input.path, false)?;
        if input.hash.is_none() && input.text.is_none() {
            return Err(Error::invalid_parameter(
                "hash",
                "name the task by its `hash` (or `text`) as vault_tasks listed it",
            ));
        }
        let to = symbol_of(&input.status)?;
        let today = match &input.date {
            Some(d) => NaiveDate::parse_from_str(d, "%Y-%m-%d").map_err(|_| {
                Error::invalid_parameter("date", format!("`{d}` is not a date YYYY-MM-DD"))
            })?,
            None => chrono::Local::now().date_naive(),
        };
        let settings = Settings::load(&self.root);
        let want_line = input.line as u32;
        let done = self.root.update(&path, |current| {
            let Some(current) = current else {
                self.policy(TOOL, WriteKind::Replace, &path, false)?;
                return Err(Error::new(Code::NotFound, format!("`{path}` does not exist"))
                    .with("path", path.to_string()));
            };
            let text = std::str::from_utf8(current).map_err(|_| {
                Error::invalid_parameter("path", format!("`{path}` is not a UTF-8 text file"))
            })?;
            let stale = |why: String| {
                Error::new(Code::Conflict, why)
                    .with("path", path.to_string())
                    .with("line", want_line as u64)
            };
            let found = tasks_at(text).into_iter().find(|f| f.task.line == want_line);
            let Some(Found {
                task,
                symbol_at,
                fields_at,
            }) = found
            else {
                return Err(stale(format!(
                    "line {want_line} of `{path}` is not a task now; list the tasks again"
                )));
            };
            let hash = hex(task.hash);
            let same_hash = input.hash.as_ref().is_none_or(|h| h.eq_ignore_ascii_case(&hash));
            let same_text = input.text.as_ref().is_none_or(|t| *t == task.text);
            if !(same_hash && same_text) {
                return Err(stale(format!(
                    "the task on line {want_line} of `{path}` changed since it was listed: it reads `{}` now",
                    task.text
                ))
                .with("text", task.text.as_str())
                .with("hash", hash));
            }
            let start = text[..symbol_at].rfind('\n').map_or(0, |i| i + 1);
            let end = text[symbol_at..]
                .find('\n')
                .map_or(text.len(), |i| symbol_at + i);
            let end = if text[..end].ends_with('\r') { end - 1 } else { end };
            // The note's own line ending, also for a last line without one.
            let eol = if text[end..].starts_with("\r\n")
                || (end == text.len() && text[..start].ends_with("\r\n"))
            {
                "\r\n"
            } else {
                "\n"
            };
            let at = TaskLine {
                line: &text[start..end],
                symbol_at: symbol_at - start,
                fields_from: fields_at - start,
                task: &task,
            };
            let changed = change(&at, to, today, &settings)
            .map_err(|why| {
                Error::invalid_parameter("status", format!("{why}; nothing was written"))
                    .with("path", path.to_string())
                    .with("line", want_line as u64)
            })?;
            if changed.lines.len() == 1 && changed.lines[0] == text[start..end] {
                // Nothing changes: nothing is written.
                return Ok(None);
            }
            let lines = &changed.lines;
            self.policy(TOOL, WriteKind::Replace, &path, true)?;
            let mut new = String::with_capacity(text.len() + 64);
            new.push_str(&text[..start]);
            new.push_str(&lines.join(eol));
            if lines.is_empty() {
                // The line removed with its line break.
                let rest = &text[end..];
                new.push_str(rest.strip_prefix(eol).unwrap_or(rest));
            } else {
                new.push_str(&text[end..]);
            }
            let hash = sha256(new.as_bytes());
            Ok(Some((new.into_bytes(), (changed, hash))))
        })?;
        let (changed, hash) = match done {
            Some(d) => d,
            None => {
                // Unchanged: the note as it is.
                let bytes = self.root.read(&path)?;
                let text = String::from_utf8_lossy(&bytes);
                let line = text
                    .lines()
                    .nth(want_line as usize - 1)
                    .unwrap_or("")
                    .to_owned();
                let same = Changed {
                    lines: vec![line],
                    own: Some(0),
                    next: None,
                };
                (same, sha256(&bytes))
            }
        };
        self.index.written(&self.root, &path);
        tracing::info!(tool = TOOL, path = %path, line = want_line, status = %to, "write");
        let at = |k: usize| want_line + k as u32;
        Ok(TaskStatusOutput {
            written_path: path.to_string(),
            line: changed.own.map(at),
            status: to.to_string(),
            lines: changed.lines,
            next_line: changed.next.map(at),
            hash,
        })
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn date(s: &str) -> NaiveDate {
        NaiveDate::parse_from_str(s, "%Y-%m-%d").unwrap()
    }

    /// `line` with its status set to `to` on `today`: the lines written.
    fn set(line: &str, to: char, today: &str, settings: &Settings) -> Vec<String> {
        let f = tasks_at(line).remove(0);
        let at = TaskLine {
            line,
            symbol_at: f.symbol_at,
            fields_from: f.fields_at,
            task: &f.task,
        };
        change(&at, to, date(today), settings).unwrap().lines
    }

    /// The plugin's test statuses: a cycle `!` → `D` → `X` → `!`.
    fn important() -> Settings {
        let status = |symbol: &str, name: &str, next: &str, kind: &str| serde_json::json!({"symbol": symbol, "name": name, "nextStatusSymbol": next, "type": kind});
        Settings::from_json(&serde_json::json!({"statusSettings": {
            "coreStatuses": [status(" ", "Todo", "x", "TODO"), status("x", "Done", " ", "DONE")],
            "customStatuses": [
                status("!", "Important", "D", "TODO"),
                status("D", "Doing - Important", "X", "IN_PROGRESS"),
                status("X", "Done - Important", "!", "DONE"),
            ]
        }}))
    }

    fn done(line: &str, today: &str) -> Vec<String> {
        set(line, 'x', today, &Settings::default())
    }

    /// The Recurring Tasks page's examples, line for line.
    #[test]
    fn the_recurring_tasks_page_s_examples_complete_as_it_shows() {
        assert_eq!(
            done(
                "- [ ] take out the trash 🔁 every Sunday 📅 2021-04-25",
                "2021-04-24"
            ),
            [
                "- [ ] take out the trash 🔁 every Sunday 📅 2021-05-02",
                "- [x] take out the trash 🔁 every Sunday 📅 2021-04-25 ✅ 2021-04-24",
            ]
        );
        let created = Settings {
            set_created_date: true,
            ..Settings::default()
        };
        assert_eq!(
            set(
                "- [ ] take out the trash 🔁 every Sunday 📅 2021-04-25",
                'x',
                "2023-03-10",
                &created
            ),
            [
                "- [ ] take out the trash 🔁 every Sunday ➕ 2023-03-10 📅 2021-05-02",
                "- [x] take out the trash 🔁 every Sunday 📅 2021-04-25 ✅ 2023-03-10",
            ]
        );
        assert_eq!(
            done(
                "- [ ] sweep the floors 🔁 every week ⏳ 2021-02-06",
                "2022-02-13"
            ),
            [
                "- [ ] sweep the floors 🔁 every week ⏳ 2021-02-13",
                "- [x] sweep the floors 🔁 every week ⏳ 2021-02-06 ✅ 2022-02-13",
            ]
        );
        assert_eq!(
            done(
                "- [ ] sweep the floors 🔁 every week when done ⏳ 2021-02-06",
                "2022-02-13"
            ),
            [
                "- [ ] sweep the floors 🔁 every week when done ⏳ 2022-02-20",
                "- [x] sweep the floors 🔁 every week when done ⏳ 2021-02-06 ✅ 2022-02-13",
            ]
        );
        // Priority of dates: due is the reference, scheduled keeps its
        // distance to it.
        assert_eq!(
            done(
                "-   [ ] Mow the lawn 🔁 every 2 weeks ⏳ 2021-10-28 📅 2021-10-30",
                "2021-10-30"
            )[0],
            "-   [ ] Mow the lawn 🔁 every 2 weeks ⏳ 2021-11-11 📅 2021-11-13"
        );
        // A recurring task without dates recurs without dates.
        assert_eq!(
            done("- [ ] Do stuff 🔁 every day", "2023-02-11"),
            [
                "- [ ] Do stuff 🔁 every day",
                "- [x] Do stuff 🔁 every day ✅ 2023-02-11"
            ]
        );
    }

    /// The plugin's own status changes (its tests): block links kept, the
    /// done date removed when a task goes back, id and dependsOn dropped
    /// from the next occurrence only, the cancelled date replaced by the
    /// done date, the created date dropped unless the setting asks.
    #[test]
    fn status_changes_follow_the_plugin_s_rules() {
        assert_eq!(
            done(
                "- [ ] this is a task 📅 2021-09-12 ^my-precious",
                "2023-03-08"
            ),
            ["- [x] this is a task 📅 2021-09-12 ✅ 2023-03-08 ^my-precious"]
        );
        assert_eq!(
            set(
                "- [x] I thought I finished ✅ 2021-09-12",
                ' ',
                "2023-03-08",
                &Settings::default()
            ),
            ["- [ ] I thought I finished"]
        );
        let no_done_date = Settings {
            set_done_date: false,
            ..Settings::default()
        };
        assert_eq!(
            set(
                "- [ ] should retain *id* and *dependsOn* 🆔 id2 ⛔ id1",
                'x',
                "2024-02-13",
                &no_done_date
            ),
            ["- [x] should retain *id* and *dependsOn* 🆔 id2 ⛔ id1"]
        );
        assert_eq!(
            set(
                "- [ ] should remove *id* and *dependsOn* in next recurrence 🆔 id2 ⛔ id1 🔁 every day 📅 2024-02-13",
                'x',
                "2024-02-13",
                &no_done_date
            ),
            [
                "- [ ] should remove *id* and *dependsOn* in next recurrence 🔁 every day 📅 2024-02-14",
                "- [x] should remove *id* and *dependsOn* in next recurrence 🆔 id2 ⛔ id1 🔁 every day 📅 2024-02-13",
            ]
        );
        assert_eq!(
            set(
                "- [X] Stuff 📅 2023-12-15 ✅ 2019-01-17",
                '-',
                "2023-06-26",
                &Settings::default()
            ),
            ["- [-] Stuff 📅 2023-12-15 ❌ 2023-06-26"]
        );
        let no_cancelled_date = Settings {
            set_cancelled_date: false,
            ..Settings::default()
        };
        assert_eq!(
            set("- [ ] Stuff", '-', "2023-06-26", &no_cancelled_date),
            ["- [-] Stuff"]
        );
        assert_eq!(
            done(
                "- [-] Stuff 🔁 every day 📅 2023-05-15 ❌ 2023-05-16",
                "2023-06-26"
            ),
            [
                "- [ ] Stuff 🔁 every day 📅 2023-05-16",
                "- [x] Stuff 🔁 every day 📅 2023-05-15 ✅ 2023-06-26",
            ]
        );
        assert_eq!(
            done(
                "- [ ] this is a task 🔁 every day ➕ 2021-09-11 📅 2021-09-12",
                "2023-03-08"
            ),
            [
                "- [ ] this is a task 🔁 every day 📅 2021-09-13",
                "- [x] this is a task 🔁 every day ➕ 2021-09-11 📅 2021-09-12 ✅ 2023-03-08",
            ]
        );
        let created = Settings {
            set_created_date: true,
            ..Settings::default()
        };
        assert_eq!(
            set(
                "- [ ] this is a task 🔁 every day ➕ 2021-09-11 📅 2021-09-12",
                'x',
                "2023-03-08",
                &created
            )[0],
            "- [ ] this is a task 🔁 every day ➕ 2023-03-08 📅 2021-09-13"
        );
        // Done to another done status (`X`, a custom status as in the
        // plugin's test): the symbol only, no recurrence.
        assert_eq!(
            set(
                "- [x] A recurring, done task 🔁 every day 📅 2023-12-15 ✅ 2023-12-15",
                'X',
                "2023-12-20",
                &important()
            ),
            ["- [X] A recurring, done task 🔁 every day 📅 2023-12-15 ✅ 2023-12-15"]
        );
        // A custom cycle: in progress `D` done becomes `X`, and the next
        // occurrence takes the status after `X`: `!`.
        assert_eq!(
            set(
                "- [D] Cycle 🔁 every day 📅 2023-01-19",
                'X',
                "2023-01-19",
                &important()
            ),
            [
                "- [!] Cycle 🔁 every day 📅 2023-01-20",
                "- [X] Cycle 🔁 every day 📅 2023-01-19 ✅ 2023-01-19",
            ]
        );
        // The new task below the done one when the setting says so.
        let below = Settings {
            recurrence_on_next_line: true,
            ..Settings::default()
        };
        assert_eq!(
            set(
                "- [ ] this is a recurring task 🔁 every day",
                'x',
                "2023-05-16",
                &below
            ),
            [
                "- [x] this is a recurring task 🔁 every day ✅ 2023-05-16",
                "- [ ] this is a recurring task 🔁 every day",
            ]
        );
    }

    /// The Dataview format: fields read and written as inline fields, two
    /// spaces before each, as the plugin writes them.
    #[test]
    fn the_dataview_format_is_written_as_inline_fields() {
        let dv = Settings {
            dataview: true,
            ..Settings::default()
        };
        assert_eq!(
            set(
                "- [ ] #task Has a due date  [due:: 2023-04-16]  [repeat:: every day]",
                'x',
                "2023-04-17",
                &dv
            ),
            [
                "- [ ] #task Has a due date  [due:: 2023-04-17]  [repeat:: every day]",
                "- [x] #task Has a due date  [due:: 2023-04-16]  [repeat:: every day]  [completion:: 2023-04-17]",
            ]
        );
    }

    /// `🏁 delete`: the done task goes, its next occurrence stays.
    #[test]
    fn on_completion_delete_removes_the_done_task() {
        assert_eq!(
            done("- [ ] A 🏁 delete", "2024-01-01"),
            Vec::<String>::new()
        );
        assert_eq!(
            done("- [ ] B 🔁 every day 🏁 delete 📅 2024-01-01", "2024-01-01"),
            ["- [ ] B 🔁 every day 🏁 delete 📅 2024-01-02"]
        );
    }

    #[test]
    fn a_rule_kura_cannot_read_writes_nothing() {
        let refused = |line: &str| {
            let f = tasks_at(line).remove(0);
            let at = TaskLine {
                line,
                symbol_at: f.symbol_at,
                fields_from: f.fields_at,
                task: &f.task,
            };
            change(&at, 'x', date("2024-01-01"), &Settings::default()).unwrap_err()
        };
        let e = refused("- [ ] A 🔁 every blue moon 📅 2024-01-01");
        assert!(e.contains("every blue moon"), "{e}");
        // Dates past what chrono holds are refused, not a panic.
        let e = refused("- [ ] x 🔁 every 260000 years 📅 0001-01-01 ⏳ 9999-12-31");
        assert!(e.contains("past the dates"), "{e}");
    }

    /// An emoji inside the description is text: only the fields at the
    /// end are read or written.
    #[test]
    fn a_date_in_the_description_is_never_rewritten() {
        let today = "2026-12-07";
        assert_eq!(
            done("- [ ] Check ✅ 2024-01-01 entries 📅 2026-12-04", today),
            ["- [x] Check ✅ 2024-01-01 entries 📅 2026-12-04 ✅ 2026-12-07"]
        );
        assert_eq!(
            set(
                "- [x] Undo ❌ 2020-01-01 import ✅ 2024-01-02",
                ' ',
                today,
                &Settings::default()
            ),
            ["- [ ] Undo ❌ 2020-01-01 import"]
        );
        assert_eq!(
            done(
                "- [ ] Move 📅 2020-01-01 boxes 🔁 every day 📅 2026-12-04",
                today
            ),
            [
                "- [ ] Move 📅 2020-01-01 boxes 🔁 every day 📅 2026-12-05",
                "- [x] Move 📅 2020-01-01 boxes 🔁 every day 📅 2026-12-04 ✅ 2026-12-07",
            ]
        );
    }

    /// The plugin reads the fields of its configured format only: in the
    /// emoji format a `[repeat:: …]` does not recur and a
    /// `[completion:: …]` is left as written.
    #[test]
    fn the_other_format_s_fields_are_text() {
        assert_eq!(
            done(
                "- [ ] Renew [due:: 2026-12-31] [repeat:: every year]",
                "2026-12-07"
            ),
            [
                "- [ ] Renew [due:: 2026-12-31] [repeat:: every year]".replace("[ ]", "[x]")
                    + " ✅ 2026-12-07"
            ]
        );
    }

    #[test]
    fn settings_are_read_from_the_plugin_s_file() {
        let s = Settings::from_json(&serde_json::json!({
            "setDoneDate": false,
            "recurrenceOnNextLine": true,
            "taskFormat": "dataview"
        }));
        assert!(!s.set_done_date && s.recurrence_on_next_line && s.dataview);
        assert!(s.set_cancelled_date && !s.set_created_date);
    }
}
