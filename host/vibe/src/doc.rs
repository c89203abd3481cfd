//! Reading a vibe document: YAML front matter, the task fields of seed 002's
//! format (`# Task: …`, the `Status:` line, `## Objective`, `## Steps`), the
//! chunks search indexes (sections under level-1 and level-2 headings), and
//! the two edits a task's status needs. Plain text in, plain values out.

use serde::{Deserialize, Serialize};
use serde_json::Value;

use crate::index::Unit;
use crate::text::Lines;
use crate::text::markdown::headings;

/// What the index keeps about a document (in its manifest), so that listing
/// tasks or counting them never re-reads the files.
#[derive(Clone, Debug, Default, PartialEq, Serialize, Deserialize)]
pub struct DocMeta {
    pub title: String,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub status: Option<String>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub objective: Option<String>,
    /// The front matter's `updated`, when it has one.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub updated: Option<String>,
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub tags: Vec<String>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub owner: Option<String>,
    /// Checked and all check-list items of `## Steps` (tasks).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub steps: Option<(u32, u32)>,
}

impl DocMeta {
    /// The metadata the index keeps for a file (default when it has none).
    pub fn of(kept: Option<&serde_json::value::RawValue>) -> DocMeta {
        kept.and_then(|m| serde_json::from_str(m.get()).ok())
            .unwrap_or_default()
    }
}

pub use crate::text::front::{Split, render_front, split};

fn is_fence(line: &str) -> Option<&'static str> {
    let t = line.trim_start();
    if t.starts_with("```") {
        Some("```")
    } else if t.starts_with("~~~") {
        Some("~~~")
    } else {
        None
    }
}

/// Each line of `body` with whether it lies inside a code fence.
fn lines_outside_fences(body: &str) -> impl Iterator<Item = (usize, &str, bool)> {
    let mut fence: Option<&'static str> = None;
    let mut offset = 0;
    body.split_inclusive('\n').map(move |line| {
        let at = offset;
        offset += line.len();
        let inside = match (fence, is_fence(line)) {
            (None, Some(f)) => {
                fence = Some(f);
                true
            }
            (Some(f), Some(g)) if f == g => {
                fence = None;
                true
            }
            (Some(_), _) => true,
            (None, None) => false,
        };
        (at, line, inside)
    })
}

fn status_re() -> &'static regex::Regex {
    static RE: std::sync::OnceLock<regex::Regex> = std::sync::OnceLock::new();
    RE.get_or_init(|| {
        regex::Regex::new(
            r"(?i)^[ \t]*(?:[-*][ \t]+)?(?:\*\*)?status(?:\*\*)?[ \t]*:[ \t]*(?:\*\*)?[ \t]*(in[ _-]progress|[a-z]+(?:-[a-z]+)*)",
        )
        .expect("status pattern")
    })
}

/// Where the `Status:` line's value is in `body` (byte range), outside code
/// fences: the first such line.
pub fn status_span(body: &str) -> Option<(usize, usize)> {
    for (at, line, inside) in lines_outside_fences(body) {
        if inside {
            continue;
        }
        if let Some(c) = status_re().captures(line.trim_end_matches(['\n', '\r']))
            && let Some(m) = c.get(1)
        {
            return Some((at + m.start(), at + m.end()));
        }
    }
    None
}

/// A status as written, in seed 002's spelling (`In Progress` → `in-progress`).
pub fn canonical_status(s: &str) -> String {
    s.trim()
        .to_lowercase()
        .split([' ', '_', '-'])
        .filter(|w| !w.is_empty())
        .collect::<Vec<_>>()
        .join("-")
}

/// The text of the first level-1/2 section titled one of `titles` (case
/// folded), heading line excluded, trimmed; None without such a section.
pub fn section(body: &str, titles: &[&str]) -> Option<String> {
    let lines = Lines::new(body);
    let heads: Vec<_> = headings(body)
        .into_iter()
        .filter(|h| h.level <= 3)
        .collect();
    for (i, h) in heads.iter().enumerate() {
        if !titles.iter().any(|t| h.title.eq_ignore_ascii_case(t)) {
            continue;
        }
        let end = heads[i + 1..]
            .iter()
            .find(|n| n.level <= h.level)
            .map_or(lines.count(), |n| n.line - 1);
        if end <= h.line {
            return Some(String::new());
        }
        let text = &body[lines.start(h.line + 1)..lines.end(end)];
        return Some(text.trim().to_owned());
    }
    None
}

/// Check-list items in `text`: (checked, all).
pub fn checklist(text: &str) -> (u32, u32) {
    let mut done = 0;
    let mut all = 0;
    for line in text.lines() {
        let t = line.trim_start();
        let t = t
            .strip_prefix("- ")
            .or_else(|| t.strip_prefix("* "))
            .or_else(|| {
                let digits = t.find(|c: char| !c.is_ascii_digit())?;
                (digits > 0).then(|| t[digits..].strip_prefix(". "))?
            });
        let Some(t) = t else { continue };
        if t.starts_with("[ ]") {
            all += 1;
        } else if t.starts_with("[x]") || t.starts_with("[X]") {
            all += 1;
            done += 1;
        }
    }
    (done, all)
}

fn string_list(v: Option<&Value>) -> Vec<String> {
    match v {
        Some(Value::Array(items)) => items
            .iter()
            .filter_map(|i| match i {
                Value::String(s) => Some(s.clone()),
                Value::Null => None,
                other => Some(other.to_string()),
            })
            .collect(),
        Some(Value::String(s)) => s
            .split(',')
            .map(|t| t.trim().to_owned())
            .filter(|t| !t.is_empty())
            .collect(),
        _ => vec![],
    }
}

fn scalar(v: Option<&Value>) -> Option<String> {
    match v? {
        Value::String(s) => Some(s.clone()),
        Value::Null => None,
        other => Some(other.to_string()),
    }
}

/// Everything [`DocMeta`] holds, read from a document's text. `is_task`:
/// it lives in `tasks/` (only tasks have a status and steps).
pub fn meta(text: &str, file_stem: &str, is_task: bool) -> DocMeta {
    let s = split(text);
    let front = s.front.unwrap_or_default();
    let h1 = headings(s.body).into_iter().find(|h| h.level == 1);
    let title = match h1 {
        Some(h) => {
            let t = h.title.trim();
            t.strip_prefix("Task:")
                .or_else(|| t.strip_prefix("Tarea:"))
                .unwrap_or(t)
                .trim()
                .to_owned()
        }
        None => scalar(front.get("title")).unwrap_or_else(|| file_stem.to_owned()),
    };
    let mut m = DocMeta {
        title,
        updated: scalar(front.get("updated")),
        tags: string_list(front.get("tags")),
        owner: scalar(front.get("owner")),
        ..DocMeta::default()
    };
    if is_task {
        m.status = status_span(s.body)
            .map(|(a, b)| canonical_status(&s.body[a..b]))
            .or_else(|| scalar(front.get("status")).map(|v| canonical_status(&v)));
        m.objective = section(s.body, &["Objective", "Objetivo"]);
        m.steps = section(s.body, &["Steps", "Pasos"]).map(|t| checklist(&t));
    }
    m
}

/// The chunks search indexes: the sections under level-1 and level-2
/// headings (fence-aware), each with its heading as written (`## Objective`);
/// a non-blank preamble (front matter included) is a chunk without heading.
pub fn chunks(text: &str) -> Vec<Unit> {
    let lines = Lines::new(text);
    let total = lines.count();
    let heads: Vec<_> = headings(text)
        .into_iter()
        .filter(|h| h.level <= 2)
        .collect();
    let mut out = Vec::new();
    let first = heads.first().map_or(total + 1, |h| h.line);
    if first > 1 && !text[..lines.start(first)].trim().is_empty() {
        out.push(Unit {
            start_line: 1,
            end_line: (first - 1) as u64,
            heading: String::new(),
            body: text[..lines.start(first)].to_owned(),
        });
    }
    for (i, h) in heads.iter().enumerate() {
        let end = heads.get(i + 1).map_or(total, |n| n.line - 1).max(h.line);
        out.push(Unit {
            start_line: h.line as u64,
            end_line: end as u64,
            heading: format!("{} {}", "#".repeat(h.level as usize), h.title),
            body: text[lines.start(h.line)..lines.end(end)].to_owned(),
        });
    }
    out
}

/// `text` with its task status set to `status`: the `Status:` line outside
/// code fences is rewritten (or one is added under the title), and a front
/// matter `status` key, when there is one, is kept the same. Returns the new
/// text and the status it had.
pub fn set_status(text: &str, status: &str) -> (String, Option<String>) {
    let s = split(text);
    let mut previous = None;
    let mut front_raw = s.front_raw.to_owned();
    if let Some(mut front) = s.front.clone()
        && let Some(old) = front.get("status")
    {
        previous = scalar(Some(old)).map(|v| canonical_status(&v));
        front.insert("status".into(), Value::String(status.to_owned()));
        front_raw = render_front(&front);
    }
    let body = match status_span(s.body) {
        Some((a, b)) => {
            previous = Some(canonical_status(&s.body[a..b]));
            format!("{}{status}{}", &s.body[..a], &s.body[b..])
        }
        None => {
            // Under the first level-1 heading, as seed 002's format has it.
            let lines = Lines::new(s.body);
            let at = headings(s.body)
                .into_iter()
                .find(|h| h.level == 1)
                .map_or(0, |h| lines.end(h.line));
            let (head, tail) = s.body.split_at(at);
            let sep = if head.is_empty() || head.ends_with('\n') {
                ""
            } else {
                "\n"
            };
            let lead = if head.is_empty() { "" } else { "\n" };
            format!(
                "{head}{sep}{lead}Status: {status}\n\n{}",
                tail.trim_start_matches('\n')
            )
        }
    };
    (format!("{front_raw}{body}"), previous)
}

#[cfg(test)]
mod tests {
    use super::*;

    const TASK: &str = "---\ntags: [mcp, design]\nowner: ana\n---\n# Task: Definir interfaz MCP\n\nStatus: pending\n\n## Objective\nDocumentar la API.\n\n## Steps\n1. [x] Definir resources\n2. [ ] Definir tools\n\n```md\nStatus: done\n```\n";

    #[test]
    fn task_meta_reads_title_status_objective_steps_and_front_matter() {
        let m = meta(TASK, "004-x", true);
        assert_eq!(m.title, "Definir interfaz MCP");
        assert_eq!(m.status.as_deref(), Some("pending"));
        assert_eq!(m.objective.as_deref(), Some("Documentar la API."));
        assert_eq!(m.steps, Some((1, 2)));
        assert_eq!(m.tags, ["mcp", "design"]);
        assert_eq!(m.owner.as_deref(), Some("ana"));
    }

    #[test]
    fn status_line_inside_a_fence_is_not_the_status() {
        let text = "# Task: x\n\n```\nStatus: done\n```\n\nStatus: blocked\n";
        let (a, b) = status_span(text).unwrap();
        assert_eq!(&text[a..b], "blocked");
        assert_eq!(status_span("```\nStatus: done\n```\n"), None);
    }

    #[test]
    fn set_status_rewrites_the_line_and_the_front_matter() {
        let text = "---\nstatus: pending\n---\n# Task: x\n\n**Status:** pending\n\n```\nStatus: pending\n```\n";
        let (new, prev) = set_status(text, "in-progress");
        assert_eq!(prev.as_deref(), Some("pending"));
        assert!(new.starts_with("---\nstatus: in-progress\n---\n"), "{new}");
        assert!(new.contains("**Status:** in-progress\n"), "{new}");
        assert!(
            new.contains("```\nStatus: pending\n```"),
            "fence untouched: {new}"
        );
    }

    #[test]
    fn set_status_adds_a_line_under_the_title_when_there_is_none() {
        let (new, prev) = set_status("# Task: x\n## Objective\ny\n", "done");
        assert_eq!(prev, None);
        assert_eq!(new, "# Task: x\n\nStatus: done\n\n## Objective\ny\n");
    }

    #[test]
    fn chunks_split_at_levels_one_and_two_only_and_ignore_fences() {
        let text = "---\ntags: [a]\n---\n# T\nintro\n## A\na\n### A.1\nsub\n```\n## not a heading\n```\n## B\nb\n";
        let c = chunks(text);
        let heads: Vec<_> = c.iter().map(|u| u.heading.as_str()).collect();
        assert_eq!(heads, ["", "# T", "## A", "## B"]);
        assert!(c[2].body.contains("### A.1\nsub"));
        assert!(c[2].body.contains("## not a heading"));
        assert_eq!((c[3].start_line, c[3].end_line), (13, 14));
    }

    #[test]
    fn checklists_count_numbered_and_bulleted_items() {
        assert_eq!(
            checklist("1. [x] a\n2. [ ] b\n- [X] c\n* [ ] d\nplain"),
            (2, 4)
        );
    }

    #[test]
    fn statuses_are_canonical() {
        assert_eq!(canonical_status("In Progress"), "in-progress");
        assert_eq!(canonical_status("in_progress"), "in-progress");
        assert_eq!(canonical_status(" DONE "), "done");
    }
}
