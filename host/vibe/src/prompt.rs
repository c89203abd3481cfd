//! The two prompts of seed 002, assembled from the index and the files:
//! `project_briefing` (status, active, blocked and pending tasks, the last
//! three sessions, recent decisions) and `session_start` (the briefing in
//! short, the focus task or the documents matching the focus, its related
//! files, the last session, suggested actions).

use std::fmt::Write;

use super::Vibe;
use super::doc::{self, DocMeta};
use crate::error::Result;
use crate::fs::RelPath;

pub struct PromptDef {
    pub name: &'static str,
    pub description: &'static str,
    /// (name, description, required)
    pub arguments: &'static [(&'static str, &'static str, bool)],
}

pub static PROMPTS: &[PromptDef] = &[
    PromptDef {
        name: "project_briefing",
        description: "Catch up on a vibe project: document and task counts, tasks in progress and blocked, \
                      the next pending tasks, the last three sessions and recent decisions.",
        arguments: &[("project", "Project name (a folder under VIBE_ROOT)", true)],
    },
    PromptDef {
        name: "session_start",
        description: "Load a vibe project's context before working: a short briefing, the focus task \
                      (or the documents matching the focus), related files, the last session and suggested actions.",
        arguments: &[
            ("project", "Project name (a folder under VIBE_ROOT)", true),
            (
                "focus",
                "Area of focus: a task number or filename, or a feature name",
                false,
            ),
        ],
    },
];

struct Task {
    filename: String,
    meta: DocMeta,
}

impl Task {
    fn number(&self) -> &str {
        let n = self
            .filename
            .find(|c: char| !c.is_ascii_digit())
            .unwrap_or(0);
        &self.filename[..n]
    }

    fn label(&self) -> String {
        match self.number() {
            "" => self.meta.title.clone(),
            n => format!("{n} - {}", self.meta.title),
        }
    }
}

/// What a briefing is made of.
struct Context {
    project: String,
    summary: super::read::ProjectSummary,
    tasks: Vec<Task>,
    /// (date, text) newest first.
    sessions: Vec<(String, String)>,
}

/// The gist of a note: its list items (at most `max`), else its first
/// lines of text.
fn gist(text: &str, max: usize) -> Vec<String> {
    let body = doc::split(text).body;
    let items: Vec<String> = body
        .lines()
        .map(str::trim)
        .filter(|l| l.starts_with("- ") || l.starts_with("* "))
        .map(|l| l[2..].trim().to_owned())
        .filter(|l| !l.is_empty())
        .take(max)
        .collect();
    if !items.is_empty() {
        return items;
    }
    body.lines()
        .map(str::trim)
        .filter(|l| !l.is_empty() && !l.starts_with('#') && *l != "---")
        .take(max.min(3))
        .map(str::to_owned)
        .collect()
}

impl Vibe {
    fn context(&self, project: &str) -> Result<Context> {
        self.project("project", project)?;
        let summary = self.summary(project)?;
        let index = self.fresh()?;
        let mut tasks = Vec::new();
        let mut session_files = Vec::new();
        {
            let files = index.files();
            let prefix = format!("{project}/");
            for (key, info) in files.iter() {
                let Some(rest) = key.strip_prefix(&prefix) else {
                    continue;
                };
                if let Some(filename) = rest.strip_prefix("tasks/") {
                    let meta = DocMeta::of(info.meta);
                    tasks.push(Task {
                        filename: filename.to_owned(),
                        meta,
                    });
                } else if let Some(name) = rest.strip_prefix("sessions/") {
                    session_files.push(name.to_owned());
                }
            }
        }
        session_files.sort_by(|a, b| b.cmp(a));
        let mut sessions = Vec::new();
        for name in session_files.into_iter().take(3) {
            let path = RelPath::parse(&format!("{project}/sessions/{name}"), false)?;
            if let Some(text) = self.root.read_indexed(&path) {
                let date = name.strip_suffix(".md").unwrap_or(&name).to_owned();
                sessions.push((date, text));
            }
        }
        Ok(Context {
            project: project.to_owned(),
            summary,
            tasks,
            sessions,
        })
    }

    fn with_status<'a>(c: &'a Context, status: &str) -> Vec<&'a Task> {
        c.tasks
            .iter()
            .filter(|t| t.meta.status.as_deref() == Some(status))
            .collect()
    }

    /// `## Decisions` (or Decisiones) items of plans/ and changelog/.
    fn decisions(&self, project: &str) -> Vec<String> {
        let mut out = Vec::new();
        for folder in ["plans", "changelog"] {
            let Ok(dir) = RelPath::parse(&format!("{project}/{folder}"), false) else {
                continue;
            };
            let Ok(entries) = self.root.list(&dir) else {
                continue;
            };
            let mut entries: Vec<_> = entries
                .into_iter()
                .filter(|e| e.name.ends_with(".md"))
                .collect();
            entries.sort_by_key(|e| std::cmp::Reverse(e.mtime_ns));
            for e in entries {
                let Some(text) = self.root.read_indexed(&dir.join(&e.name)) else {
                    continue;
                };
                let body = doc::split(&text).body;
                for title in [
                    "Decisions",
                    "Decisiones",
                    "Recent Decisions",
                    "Key Decisions",
                ] {
                    if let Some(s) = doc::section(body, &[title]) {
                        out.extend(gist(&s, 8));
                    }
                }
                if out.len() >= 8 {
                    out.truncate(8);
                    return out;
                }
            }
        }
        out
    }

    fn status_block(c: &Context, out: &mut String) {
        let s = &c.summary.stats;
        let _ = writeln!(out, "## Current Status");
        let _ = writeln!(out, "- **Total documents:** {}", s.total_docs);
        let _ = writeln!(
            out,
            "- **Open tasks:** {} ({} in-progress, {} pending)",
            s.open_tasks, s.in_progress_tasks, s.pending_tasks
        );
        let _ = writeln!(out, "- **Blocked tasks:** {}", s.blocked_tasks);
        let _ = writeln!(out, "- **Done tasks:** {}", s.done_tasks);
        let updated = c
            .summary
            .last_updated
            .as_deref()
            .and_then(|u| u.get(..10))
            .unwrap_or("unknown");
        let _ = writeln!(out, "- **Last updated:** {updated}");
        out.push('\n');
    }

    fn task_block(t: &Task, out: &mut String) {
        let _ = writeln!(out, "### {}", t.label());
        if let Some(o) = &t.meta.objective {
            let _ = writeln!(
                out,
                "**Objective:** {}",
                o.split_whitespace().collect::<Vec<_>>().join(" ")
            );
        }
        if let Some((done, all)) = t.meta.steps.filter(|(_, all)| *all > 0) {
            let _ = writeln!(out, "**Progress:** {done}/{all} steps completed");
        }
        out.push('\n');
    }

    /// The text of `project_briefing`.
    pub fn project_briefing(&self, project: &str) -> Result<String> {
        let c = self.context(project)?;
        let mut out = format!("# Project Briefing: {}\n\n", c.project);
        Self::status_block(&c, &mut out);
        out.push_str("## Active Tasks (in-progress)\n\n");
        let active = Self::with_status(&c, "in-progress");
        if active.is_empty() {
            out.push_str("(none)\n\n");
        }
        for t in active {
            Self::task_block(t, &mut out);
        }
        out.push_str("## Blocked Tasks\n\n");
        let blocked = Self::with_status(&c, "blocked");
        if blocked.is_empty() {
            out.push_str("(none)\n\n");
        }
        for t in blocked {
            Self::task_block(t, &mut out);
        }
        out.push_str("## Pending Tasks (next up)\n\n");
        let pending = Self::with_status(&c, "pending");
        if pending.is_empty() {
            out.push_str("(none)\n");
        }
        for (i, t) in pending.iter().take(10).enumerate() {
            let _ = writeln!(out, "{}. {}", i + 1, t.label());
        }
        if pending.len() > 10 {
            let _ = writeln!(out, "… and {} more", pending.len() - 10);
        }
        out.push_str("\n## Recent Sessions\n\n");
        if c.sessions.is_empty() {
            out.push_str("(none)\n\n");
        }
        for (date, text) in &c.sessions {
            let _ = writeln!(out, "### {date}");
            for line in gist(text, 6) {
                let _ = writeln!(out, "- {line}");
            }
            out.push('\n');
        }
        out.push_str("## Recent Decisions\n\n");
        let decisions = self.decisions(project);
        if decisions.is_empty() {
            out.push_str("(none recorded in plans/ or changelog/)\n");
        }
        for d in decisions {
            let _ = writeln!(out, "- {d}");
        }
        Ok(out)
    }

    /// The text of `session_start`.
    pub fn session_start(&self, project: &str, focus: Option<&str>) -> Result<String> {
        let c = self.context(project)?;
        let focus = focus.map(str::trim).filter(|f| !f.is_empty());
        let task = focus.and_then(|f| {
            let dir = RelPath::parse(project, false).ok()?;
            let name = self.find_task(project, &dir, f).ok()?;
            c.tasks.iter().find(|t| t.filename == name)
        });
        let mut out = format!("# Session Start: {}\n", c.project);
        match (focus, task) {
            (_, Some(t)) => {
                let _ = writeln!(out, "Focus: Task {}", t.label());
            }
            (Some(f), None) => {
                let _ = writeln!(out, "Focus: {f}");
            }
            (None, None) => {}
        }
        out.push('\n');
        Self::status_block(&c, &mut out);
        let active = Self::with_status(&c, "in-progress");
        if !active.is_empty() {
            out.push_str("## Active Tasks\n\n");
            for t in &active {
                let _ = writeln!(out, "- {}", t.label());
            }
            out.push('\n');
        }
        let (related, first_step) = match (task, focus) {
            (Some(t), _) => self.task_details(project, t, &mut out)?,
            (None, Some(f)) => (self.feature_files(project, f), None),
            (None, None) => (Vec::new(), None),
        };
        out.push_str("## Related Files\n");
        if related.is_empty() {
            out.push_str("(none found)\n");
        }
        for r in &related {
            let _ = writeln!(out, "- {r}");
        }
        out.push('\n');
        match c.sessions.first() {
            Some((date, text)) => {
                let _ = writeln!(out, "## Last Session ({date})");
                for line in gist(text, 6) {
                    let _ = writeln!(out, "- {line}");
                }
            }
            None => out.push_str("## Last Session\n(none)\n"),
        }
        out.push_str("\n## Suggested Actions\n");
        let actions = Self::actions(&c, task, !related.is_empty(), first_step.as_deref());
        for (i, a) in actions.iter().enumerate() {
            let _ = writeln!(out, "{}. {a}", i + 1);
        }
        Ok(out)
    }

    /// The focused task's status, objective and steps (written to `out`);
    /// the gist of its context, and its first open step.
    fn task_details(
        &self,
        project: &str,
        t: &Task,
        out: &mut String,
    ) -> Result<(Vec<String>, Option<String>)> {
        let mut related = Vec::new();
        let mut first_step = None;
        out.push_str("## Task Details\n");
        let _ = writeln!(
            out,
            "**Status:** {}",
            t.meta.status.as_deref().unwrap_or("unknown")
        );
        if let Some(o) = &t.meta.objective {
            let _ = writeln!(out, "**Objective:** {o}");
        }
        let path = RelPath::parse(&format!("{project}/tasks/{}", t.filename), false)?;
        if let Some(text) = self.root.read_indexed(&path) {
            let body = doc::split(&text).body;
            if let Some(steps) = doc::section(body, &["Steps", "Pasos"]) {
                let _ = writeln!(out, "\n### Steps\n{steps}");
                first_step = steps
                    .lines()
                    .find(|l| l.contains("[ ]"))
                    .and_then(|l| l.split_once("[ ]"))
                    .map(|(_, s)| s.trim().to_owned());
            }
            if let Some(ctx) = doc::section(body, &["Context", "Contexto"]) {
                related.extend(gist(&ctx, 10));
            }
        }
        out.push('\n');
        Ok((related, first_step))
    }

    /// A feature name as the focus: the documents that match it best.
    fn feature_files(&self, project: &str, feature: &str) -> Vec<String> {
        let input = super::SearchInput {
            query: feature.to_owned(),
            queries: None,
            project: Some(project.to_owned()),
            folder: None,
            limit: Some(5),
        };
        let Ok(found) = self.search(input) else {
            return Vec::new();
        };
        found
            .results
            .into_iter()
            .map(|r| {
                let heading = if r.heading.is_empty() {
                    String::new()
                } else {
                    format!(" ({})", r.heading)
                };
                format!("`{}/{}`{heading}", r.folder, r.filename)
            })
            .collect()
    }

    /// What to do first, by the focused task's status (or the next
    /// pending task); logging the session always comes last.
    fn actions(
        c: &Context,
        task: Option<&Task>,
        has_related: bool,
        first_step: Option<&str>,
    ) -> Vec<String> {
        let mut actions: Vec<String> = Vec::new();
        if has_related {
            actions.push("Read the related files for context (read_doc)".into());
        }
        match task.and_then(|t| t.meta.status.as_deref().map(|s| (t, s))) {
            Some((t, "pending")) => {
                actions.push(format!(
                    "Mark task {} in-progress (update_task_status)",
                    t.number()
                ));
                if let Some(s) = first_step {
                    actions.push(format!("Start with the first step: {s}"));
                }
            }
            Some((_, "in-progress")) => {
                if let Some(s) = first_step {
                    actions.push(format!("Continue with the next open step: {s}"));
                }
            }
            Some((t, "blocked")) => actions.push(format!(
                "Resolve what blocks task {} or pick another task",
                t.number()
            )),
            Some((_, "done")) => {
                actions.push("The task is done: pick the next pending task".into())
            }
            _ => {
                if let Some(next) = Self::with_status(c, "pending").first() {
                    actions.push(format!("Pick up the next pending task: {}", next.label()));
                }
            }
        }
        actions.push("Record what you did with log_session when you stop".into());
        actions
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn gist_prefers_list_items() {
        assert_eq!(
            gist("## Lo que hice\n\n- Diseñé la interfaz\n- Documenté\n", 6),
            ["Diseñé la interfaz", "Documenté"]
        );
        assert_eq!(gist("# Notes\nJust prose.\n", 6), ["Just prose."]);
    }
}
