//! What a name means for a task (vault_tasks): the task's own fields, named
//! as Dataview names them for a `TASK` query (`status`, `completed`,
//! `due`, `completion`, …) with the Tasks plugin's (`priority`,
//! `recurrence`, `dependsOn`), then its inline fields (`[key:: value]`),
//! then its note's properties and `key:: value` lines, which a task
//! inherits as in Dataview. `file` and `note.x` are always the note's.

use super::Fault;
use super::env::Env;
use super::value::{FileRef, Val, text_val};
use crate::graph::tasks::{Day, Priority, Status, Task};

/// The names a task answers itself, for the docs and the tool's description.
pub const TASK_FIELDS: &[&str] = &[
    "text",
    "status",
    "statusType",
    "checked",
    "completed",
    "fullyCompleted",
    "line",
    "path",
    "heading",
    "tags",
    "parent",
    "task",
    "created",
    "scheduled",
    "start",
    "due",
    "completion",
    "done",
    "cancelled",
    "priority",
    "priorityNumber",
    "recurrence",
    "recurring",
    "id",
    "dependsOn",
    "onCompletion",
];

/// The Tasks plugin's name of a priority, lowercase.
pub fn priority_name(p: Priority) -> &'static str {
    match p {
        Priority::Highest => "highest",
        Priority::High => "high",
        Priority::Medium => "medium",
        Priority::None => "normal",
        Priority::Low => "low",
        Priority::Lowest => "lowest",
    }
}

fn date(d: &Option<Day>) -> Val {
    d.map_or(Val::Null, |d| Val::Date(d.at))
}

/// An inline field's value read as Dataview reads one (its inline value
/// grammar): a date, a duration, a quoted text, a tag, a link, a boolean,
/// a number or null, or a list of those separated by commas; nothing is
/// null; anything else is text.
pub(super) fn field_value(s: &str, from: FileRef) -> Val {
    let t = s.trim();
    if t.is_empty() {
        return Val::Null;
    }
    if let Some(v) = inline_atom(t, from) {
        return v;
    }
    if t.contains(',') {
        let items: Option<Vec<Val>> = t.split(',').map(|p| inline_atom(p.trim(), from)).collect();
        if let Some(items) = items {
            return Val::List(items);
        }
    }
    Val::Str(t.to_owned())
}

/// One value of Dataview's inline grammar, if `t` is one whole.
fn inline_atom(t: &str, from: FileRef) -> Option<Val> {
    match t {
        "true" | "True" => return Some(Val::Bool(true)),
        "false" | "False" => return Some(Val::Bool(false)),
        "null" => return Some(Val::Null),
        _ => {}
    }
    let digits = |s: &str| !s.is_empty() && s.bytes().all(|b| b.is_ascii_digit());
    let body = t.strip_prefix('-').unwrap_or(t);
    let number = match body.split_once('.') {
        Some((a, b)) => digits(a) && digits(b),
        None => digits(body),
    };
    if number {
        return t.parse().ok().map(Val::Num);
    }
    if let Some(q) = t.strip_prefix('"').and_then(|q| q.strip_suffix('"'))
        && !q.contains('"')
    {
        return Some(Val::Str(q.to_owned()));
    }
    if t.starts_with('#') && t.len() > 1 && !t.contains(char::is_whitespace) {
        return Some(Val::Str(t.to_owned()));
    }
    let link = t.strip_prefix('!').unwrap_or(t);
    if link.starts_with("[[") && link.ends_with("]]") && link.matches("[[").count() == 1 {
        return Some(text_val(link, Some(from)));
    }
    if let Some(d) = super::dql::date_text(t) {
        return Some(Val::Date(d));
    }
    super::dql::duration(t).map(Val::Dur)
}

/// Whether task `k` and every task under it are done. The tasks under it
/// follow it, so the look ends at the first that is not.
fn fully_completed(tasks: &[Task], k: usize) -> bool {
    tasks[k].status() == Status::Done
        && crate::graph::tasks::under(tasks, k).all(|j| tasks[j].status() == Status::Done)
}

impl Env<'_> {
    /// Task `k` of note `file`'s property `name`.
    pub(super) fn task_prop(
        &self,
        file: FileRef,
        k: u32,
        name: &str,
        at: usize,
    ) -> Result<Val, Fault> {
        let FileRef::Note(i) = file else {
            return Ok(Val::Null);
        };
        let facts = &self.graph.notes[i as usize].facts;
        let Some(t) = facts.tasks.get(k as usize) else {
            return Ok(Val::Null);
        };
        Ok(match name {
            "text" => Val::Str(t.text.clone()),
            "status" => Val::Str(t.symbol.to_string()),
            "statusType" => Val::Str(self.statuses.of(t.symbol).kind.type_name().to_owned()),
            "checked" => Val::Bool(t.symbol != ' '),
            "completed" => Val::Bool(t.status() == Status::Done),
            "fullyCompleted" => Val::Bool(fully_completed(&facts.tasks, k as usize)),
            "line" => Val::Num(t.line as f64),
            "path" => Val::Str(self.graph.notes[i as usize].path.clone()),
            "heading" => t.heading.clone().map_or(Val::Null, Val::Str),
            "tags" => Val::List(t.tags.iter().map(|g| Val::Str(format!("#{g}"))).collect()),
            "parent" => t
                .parent
                .and_then(|p| facts.tasks.get(p))
                .map_or(Val::Null, |p| Val::Num(p.line as f64)),
            "task" => Val::Bool(true),
            "created" => date(&t.created),
            "scheduled" => date(&t.scheduled),
            "start" => date(&t.start),
            "due" => date(&t.due),
            "completion" | "done" => date(&t.done),
            "cancelled" => date(&t.cancelled),
            "priority" => Val::Str(priority_name(t.priority).to_owned()),
            "priorityNumber" => Val::Num(t.priority as u8 as f64),
            "recurrence" => t.recurrence.clone().map_or(Val::Null, Val::Str),
            "recurring" => Val::Bool(t.recurrence.is_some()),
            "id" => t.id.clone().map_or(Val::Null, Val::Str),
            "dependsOn" => Val::List(t.depends_on.iter().cloned().map(Val::Str).collect()),
            "onCompletion" => t.on_completion.clone().map_or(Val::Null, Val::Str),
            _ => {
                let own = |fields: &[(String, String)]| {
                    fields
                        .iter()
                        .find(|(key, _)| key.eq_ignore_ascii_case(name))
                        .map(|(_, v)| field_value(v, file))
                };
                if let Some(v) = own(&t.fields) {
                    return Ok(v);
                }
                match self.prop(file, name, at)? {
                    Val::Null => own(&facts.fields).unwrap_or(Val::Null),
                    v => v,
                }
            }
        })
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::graph::tasks::tasks;

    /// Dataview: a task is fully completed when it and every task under it
    /// are; a sibling's state does not count.
    #[test]
    fn fully_completed_looks_at_the_tasks_under_it_only() {
        let t = tasks("- [x] a\n  - [x] b\n    - [ ] c\n- [x] d\n  - [x] e\n- [ ] f\n");
        let got: Vec<bool> = (0..t.len()).map(|k| fully_completed(&t, k)).collect();
        assert_eq!(got, [false, false, false, true, true, false]);
    }

    #[test]
    fn inline_values_read_as_dataview_reads_them() {
        let f = FileRef::Note(0);
        assert!(matches!(field_value("3", f), Val::Num(n) if n == 3.0));
        assert!(matches!(field_value("2026-12-04", f), Val::Date(_)));
        assert!(matches!(field_value("[[Ana]]", f), Val::Link(_)));
        assert!(matches!(field_value("true", f), Val::Bool(true)));
        assert!(matches!(field_value("Ana", f), Val::Str(_)));
        // Dataview's inline grammar: durations, lists of values, null.
        assert!(matches!(field_value("2h", f), Val::Dur(d) if d.ms == 7_200_000));
        assert!(matches!(field_value("1, 2", f), Val::List(l) if l.len() == 2));
        assert!(matches!(field_value("Ana, Luis", f), Val::Str(_)));
        assert!(matches!(field_value("", f), Val::Null));
        assert!(matches!(field_value("1e5", f), Val::Str(_)));
    }
}
