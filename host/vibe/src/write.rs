//! The write side of seed 002: create_doc, update_doc, create_task,
//! update_task_status, create_plan, log_session. Every write is atomic
//! (through [`crate::fs::Root`]), serialised per folder across threads and
//! processes, and re-indexes its file before it returns (`indexed`).

use schemars::JsonSchema;
use serde::Serialize;
use serde_json::{Map, Value};

use super::read::sha256;
use super::{FOLDERS, STATUSES, Vibe, doc};
use crate::args::Input;
use crate::error::{Code, Error, Result, VibeCode};
use crate::fs::RelPath;
use crate::index::SyncStats;

#[derive(Debug, Serialize, JsonSchema)]
pub struct CreateDocOutput {
    pub success: bool,
    pub path: String,
    pub absolute_path: String,
    pub indexed: bool,
}

#[derive(Debug, Serialize, JsonSchema)]
pub struct UpdateDocOutput {
    pub success: bool,
    pub path: String,
    /// SHA-256 (hex) of the content replaced.
    pub previous_hash: String,
    /// SHA-256 (hex) of the content written.
    pub new_hash: String,
    pub indexed: bool,
}

#[derive(Debug, Serialize, JsonSchema)]
pub struct NewTask {
    pub number: String,
    pub filename: String,
    pub path: String,
    pub status: String,
}

#[derive(Debug, Serialize, JsonSchema)]
pub struct CreateTaskOutput {
    pub success: bool,
    pub task: NewTask,
    pub indexed: bool,
}

#[derive(Debug, Serialize, JsonSchema)]
pub struct StatusChange {
    pub filename: String,
    pub path: String,
    /// The status the task had (null when it had none).
    pub previous_status: Option<String>,
    pub new_status: String,
}

#[derive(Debug, Serialize, JsonSchema)]
pub struct UpdateStatusOutput {
    pub success: bool,
    pub task: StatusChange,
    pub indexed: bool,
}

#[derive(Debug, Serialize, JsonSchema)]
pub struct CreatePlanOutput {
    pub success: bool,
    pub path: String,
    /// `created` or `updated`.
    pub action: String,
    pub indexed: bool,
}

#[derive(Debug, Serialize, JsonSchema)]
pub struct SessionFile {
    pub filename: String,
    pub path: String,
    /// `created` or `appended`.
    pub action: String,
}

#[derive(Debug, Serialize, JsonSchema)]
pub struct LogSessionOutput {
    pub success: bool,
    pub session: SessionFile,
    pub indexed: bool,
}

#[derive(Debug, Serialize, JsonSchema)]
pub struct ReindexStats {
    /// scanned, added, updated, deleted, unchanged.
    #[serde(flatten)]
    pub files: SyncStats,
    pub duration_ms: u64,
}

#[derive(Debug, Serialize, JsonSchema)]
pub struct ReindexOutput {
    pub success: bool,
    /// The project re-indexed (null: all of them).
    pub project: Option<String>,
    pub stats: ReindexStats,
}

pub fn reindex_output(project: Option<String>, s: SyncStats, duration_ms: u64) -> ReindexOutput {
    ReindexOutput {
        success: true,
        project,
        stats: ReindexStats {
            files: s,
            duration_ms,
        },
    }
}

/// A kebab-case slug: diacritics dropped (`Diseñar` → `disenar`), lower
/// case, every run of other characters one `-`, at most 60 characters (cut
/// at a dash). Letters of any script are kept.
pub fn slug(title: &str) -> String {
    let folded = kura_text::tokenize::fold(&title.to_lowercase());
    let mut out = String::new();
    for c in folded.chars() {
        if c.is_alphanumeric() {
            out.push(c);
        } else if !out.is_empty() && !out.ends_with('-') {
            out.push('-');
        }
    }
    let mut out = out.trim_end_matches('-').to_owned();
    if out.chars().count() > 60 {
        let cut: String = out.chars().take(60).collect();
        out = match cut.rfind('-') {
            Some(i) if i > 20 => cut[..i].to_owned(),
            _ => cut,
        };
    }
    out
}

/// The next task number after those the names in `tasks/` start with.
pub fn next_number(names: &[String]) -> u64 {
    names
        .iter()
        .filter_map(|n| {
            let digits: String = n.chars().take_while(char::is_ascii_digit).collect();
            (!digits.is_empty() && n[digits.len()..].starts_with(['-', '.']))
                .then(|| digits.parse::<u64>().ok())
                .flatten()
        })
        .max()
        .map_or(1, |m| m + 1)
}

fn one_line(s: &str) -> String {
    s.split_whitespace().collect::<Vec<_>>().join(" ")
}

fn yaml_scalar(s: &str) -> String {
    let plain = !s.is_empty()
        && s.chars()
            .all(|c| c.is_alphanumeric() || matches!(c, '-' | '_' | '.' | '/'))
        && !matches!(s, "true" | "false" | "null" | "yes" | "no" | "on" | "off");
    if plain {
        s.to_owned()
    } else {
        serde_json::to_string(s).unwrap_or_default()
    }
}

/// A task file in seed 002's format.
pub struct TaskText<'a> {
    pub title: &'a str,
    pub status: &'a str,
    pub objective: &'a str,
    pub steps: &'a [&'a str],
    pub acceptance: &'a [&'a str],
    pub context: Option<&'a Map<String, Value>>,
    pub notes: Option<&'a str>,
    pub tags: &'a [&'a str],
}

fn context_value(v: &Value, code: bool) -> String {
    let item = |s: &str| {
        if code { format!("`{s}`") } else { s.to_owned() }
    };
    match v {
        Value::Array(items) => items
            .iter()
            .map(|i| match i {
                Value::String(s) => item(s),
                other => item(&other.to_string()),
            })
            .collect::<Vec<_>>()
            .join(", "),
        Value::String(s) => item(s),
        other => other.to_string(),
    }
}

impl TaskText<'_> {
    pub fn render(&self) -> String {
        let mut t = String::new();
        if !self.tags.is_empty() {
            let tags: Vec<String> = self.tags.iter().map(|s| yaml_scalar(s)).collect();
            t.push_str(&format!("---\ntags: [{}]\n---\n", tags.join(", ")));
        }
        t.push_str(&format!(
            "# Task: {}\n\nStatus: {}\n\n",
            one_line(self.title),
            self.status
        ));
        t.push_str(&format!("## Objective\n{}\n", self.objective.trim()));
        if let Some(ctx) = self.context.filter(|c| !c.is_empty()) {
            t.push_str("\n## Context\n");
            // 002's order first; other keys after, by name.
            let rank = |k: &str| match k {
                "related_files" => 0,
                "dependencies" => 1,
                _ => 2,
            };
            let mut entries: Vec<_> = ctx.iter().collect();
            entries.sort_by_key(|(k, _)| rank(k));
            for (k, v) in entries {
                let label = match k.as_str() {
                    "related_files" => "Related files".to_owned(),
                    "dependencies" => "Dependencies".to_owned(),
                    other => {
                        let words = other.replace('_', " ");
                        let mut c = words.chars();
                        c.next()
                            .map(|f| f.to_uppercase().chain(c).collect())
                            .unwrap_or_default()
                    }
                };
                t.push_str(&format!(
                    "- {label}: {}\n",
                    context_value(v, k == "related_files")
                ));
            }
        }
        t.push_str("\n## Steps\n");
        for (i, s) in self.steps.iter().enumerate() {
            t.push_str(&format!("{}. [ ] {}\n", i + 1, one_line(s)));
        }
        t.push_str("\n## Acceptance Criteria\n");
        for s in self.acceptance {
            t.push_str(&format!("- [ ] {}\n", one_line(s)));
        }
        if let Some(n) = self.notes.filter(|n| !n.trim().is_empty()) {
            t.push_str(&format!("\n## Notes\n{}\n", n.trim()));
        }
        t
    }
}

/// Front matter `extra` merged over the one at the top of `content` (a null
/// value removes a key), in front of the content's body.
fn with_front(
    content: &str,
    base: Option<Map<String, Value>>,
    extra: &Map<String, Value>,
) -> String {
    let s = doc::split(content);
    let mut front = s.front.or(base).unwrap_or_default();
    for (k, v) in extra {
        if v.is_null() {
            front.remove(k);
        } else {
            front.insert(k.clone(), v.clone());
        }
    }
    format!("{}{}", doc::render_front(&front), s.body)
}

fn exists(project: &str, rel: &str) -> Error {
    Error::vibe(
        VibeCode::FileExists,
        format!("File '{rel}' already exists in project '{project}'; use update_doc to change it"),
    )
    .with("project", project)
    .with("path", rel)
}

fn missing(project: &str, rel: &str) -> Error {
    Error::vibe(
        VibeCode::FileNotFound,
        format!("File '{rel}' not found in project '{project}'"),
    )
    .with("project", project)
    .with("path", rel)
}

#[derive(Input)]
pub struct CreateDocInput {
    /// Project name: a folder directly under VIBE_ROOT
    pub project: String,
    /// Folder to create the file in
    #[arg(one_of = FOLDERS)]
    pub folder: &'static str,
    /// File name
    pub filename: String,
    /// File content
    #[arg(text)]
    pub content: String,
    /// YAML front matter fields
    pub frontmatter: Option<Map<String, Value>>,
}

#[derive(Input)]
pub struct UpdateDocInput {
    /// Project name: a folder directly under VIBE_ROOT
    pub project: String,
    /// Folder holding the file
    #[arg(one_of = FOLDERS)]
    pub folder: &'static str,
    /// File name
    pub filename: String,
    /// The new full content
    #[arg(text)]
    pub content: String,
    /// Front matter fields to merge
    pub frontmatter: Option<Map<String, Value>>,
    /// SHA-256 (hex) the file must still have
    pub expected_hash: Option<String>,
}

#[derive(Input)]
pub struct CreateTaskInput {
    /// Project name: a folder directly under VIBE_ROOT
    pub project: String,
    /// Task title
    #[arg(nonempty)]
    pub title: String,
    /// Objective (one paragraph)
    pub objective: String,
    /// Steps, in order
    pub steps: Vec<String>,
    /// Acceptance criteria
    pub acceptance_criteria: Vec<String>,
    /// e.g. related_files, dependencies (arrays)
    pub context: Option<Map<String, Value>>,
    /// Additional notes
    pub notes: Option<String>,
    /// Initial status (default pending)
    #[arg(one_of = STATUSES)]
    pub status: Option<&'static str>,
    /// Tags for the front matter
    pub tags: Option<Vec<String>>,
}

#[derive(Input)]
pub struct UpdateTaskStatusInput {
    /// Project name: a folder directly under VIBE_ROOT
    pub project: String,
    /// Task number ("004") or filename ("004-definir-interfaz-mcp.md")
    #[arg(nonempty)]
    pub task: String,
    /// New status
    #[arg(one_of = STATUSES)]
    pub status: &'static str,
}

#[derive(Input)]
pub struct CreatePlanInput {
    /// Project name: a folder directly under VIBE_ROOT
    pub project: String,
    /// Plan file name (default execution-plan.md)
    pub filename: Option<String>,
    /// The full plan
    #[arg(text)]
    pub content: String,
}

#[derive(Input)]
pub struct LogSessionInput {
    /// Project name: a folder directly under VIBE_ROOT
    pub project: String,
    /// The note (markdown)
    #[arg(nonempty)]
    pub content: String,
    /// Suffix for the file name, e.g. debugging-auth
    pub suffix: Option<String>,
    /// Append to the day's note (default false)
    pub append: Option<bool>,
}

impl Vibe {
    pub fn create_doc(&self, input: CreateDocInput) -> Result<CreateDocOutput> {
        let (project, _) = self.project_arg(&input.project)?;
        let folder = input.folder;
        let filename = super::segment("filename", &input.filename)?;
        let content = input.content.as_str();
        let text = match &input.frontmatter {
            Some(f) => with_front(content, None, f),
            None => content.to_owned(),
        };
        let rel = format!("{folder}/{filename}");
        let path = RelPath::parse(&format!("{project}/{rel}"), false)?;
        self.root.update(&path, |current| {
            if current.is_some() {
                return Err(exists(&project, &rel));
            }
            Ok(Some((text.as_bytes().to_vec(), ())))
        })?;
        let indexed = self.written(&path);
        tracing::info!(tool = "create_doc", path = %path, bytes = text.len(), "write");
        Ok(CreateDocOutput {
            success: true,
            absolute_path: self
                .root
                .path()
                .join(path.as_fs_path())
                .display()
                .to_string(),
            path: path.to_string(),
            indexed,
        })
    }

    pub fn update_doc(&self, input: UpdateDocInput) -> Result<UpdateDocOutput> {
        let (project, _) = self.project_arg(&input.project)?;
        let folder = input.folder;
        let filename = super::segment("filename", &input.filename)?;
        let content = input.content.as_str();
        let front = input.frontmatter.as_ref();
        let expected = input
            .expected_hash
            .as_deref()
            .map(|h| h.trim().to_ascii_lowercase());
        let rel = format!("{folder}/{filename}");
        let path = RelPath::parse(&format!("{project}/{rel}"), false)?;
        let (previous_hash, new_hash) = self
            .root
            .update(&path, |current| {
                let Some(current) = current else {
                    return Err(missing(&project, &rel));
                };
                let previous = sha256(current);
                if let Some(want) = &expected
                    && *want != previous
                {
                    return Err(Error::vibe(
                        VibeCode::Conflict,
                        format!(
                            "'{rel}' changed since it was read (expected_hash does not match); read it again"
                        ),
                    )
                    .with("project", project.as_str())
                    .with("path", rel.as_str())
                    .with("expected_hash", want.as_str())
                    .with("current_hash", previous.as_str()));
                }
                let text = match front {
                    Some(f) => {
                        let old = String::from_utf8_lossy(current);
                        with_front(content, doc::split(&old).front, f)
                    }
                    None => content.to_owned(),
                };
                let new = sha256(text.as_bytes());
                Ok(Some((text.into_bytes(), (previous, new))))
            })?
            .ok_or_else(|| missing(&project, &rel))?;
        let indexed = self.written(&path);
        tracing::info!(tool = "update_doc", path = %path, "write");
        Ok(UpdateDocOutput {
            success: true,
            path: path.to_string(),
            previous_hash,
            new_hash,
            indexed,
        })
    }

    pub fn create_task(&self, input: CreateTaskInput) -> Result<CreateTaskOutput> {
        let (_, dir) = self.project_arg(&input.project)?;
        let title = input.title.as_str();
        let objective = input.objective.as_str();
        fn strs(l: &[String]) -> Vec<&str> {
            l.iter().map(String::as_str).collect()
        }
        let steps = strs(&input.steps);
        let acceptance = strs(&input.acceptance_criteria);
        let context = input.context.as_ref();
        let notes = input.notes.as_deref();
        let status = input.status.unwrap_or("pending");
        let tags = strs(input.tags.as_deref().unwrap_or_default());
        let text = TaskText {
            title,
            status,
            objective,
            steps: &steps,
            acceptance: &acceptance,
            context,
            notes,
            tags: &tags,
        }
        .render();
        let slug = match slug(title) {
            s if s.is_empty() => "task".to_owned(),
            s => s,
        };
        let (path, number) = self.root.create_in(&dir.join("tasks"), |names| {
            let number = format!("{:03}", next_number(names));
            Ok((
                format!("{number}-{slug}.md"),
                text.clone().into_bytes(),
                number,
            ))
        })?;
        let indexed = self.written(&path);
        tracing::info!(tool = "create_task", path = %path, "write");
        Ok(CreateTaskOutput {
            success: true,
            task: NewTask {
                number,
                filename: path.file_name().unwrap_or_default().to_owned(),
                path: path.to_string(),
                status: status.to_owned(),
            },
            indexed,
        })
    }

    /// The task file `task` names in `tasks/`: its filename (with or without
    /// `.md`) or its number (`"004"`, `"4"`).
    pub(super) fn find_task(&self, project: &str, dir: &RelPath, task: &str) -> Result<String> {
        let task = task.trim();
        let names: Vec<String> = match self.root.list(&dir.join("tasks")) {
            Ok(entries) => entries
                .into_iter()
                .filter(|e| e.kind == crate::fs::EntryKind::File)
                .map(|e| e.name)
                .collect(),
            Err(e) if e.code == Code::NotFound => vec![],
            Err(e) => return Err(e),
        };
        if let Some(n) = names
            .iter()
            .find(|n| *n == task || **n == format!("{task}.md"))
        {
            return Ok(n.clone());
        }
        let gone = || missing(project, &format!("tasks/{task}"));
        if task.is_empty() || !task.chars().all(|c| c.is_ascii_digit()) {
            return Err(gone());
        }
        let want: u64 = task.parse().map_err(|_| gone())?;
        let found: Vec<&String> = names
            .iter()
            .filter(|n| {
                let digits: String = n.chars().take_while(char::is_ascii_digit).collect();
                !digits.is_empty()
                    && n.ends_with(".md")
                    && digits.parse::<u64>().ok() == Some(want)
                    && n[digits.len()..].starts_with(['-', '.'])
            })
            .collect();
        match found.as_slice() {
            [one] => Ok((*one).clone()),
            [] => Err(gone()),
            many => Err(Error::vibe(
                VibeCode::InvalidParameter,
                format!("task number {task} is ambiguous in project '{project}'; name the file"),
            )
            .with("project", project)
            .with(
                "candidates",
                many.iter().map(|s| s.to_string()).collect::<Vec<_>>(),
            )),
        }
    }

    pub fn update_task_status(&self, input: UpdateTaskStatusInput) -> Result<UpdateStatusOutput> {
        let (project, dir) = self.project_arg(&input.project)?;
        let task = input.task.as_str();
        let status = input.status;
        let filename = self.find_task(&project, &dir, task)?;
        let path = dir.join("tasks").join(&filename);
        let rel = format!("tasks/{filename}");
        let previous = self
            .root
            .update(&path, |current| {
                let Some(current) = current else {
                    return Err(missing(&project, &rel));
                };
                let text = String::from_utf8(current.to_vec()).map_err(|_| {
                    Error::vibe(
                        VibeCode::FilesystemError,
                        format!("'{rel}' is not UTF-8 text"),
                    )
                })?;
                let (new, previous) = doc::set_status(&text, status);
                if new == text {
                    return Ok(None); // already so: nothing to write
                }
                Ok(Some((new.into_bytes(), previous)))
            })?
            .unwrap_or_else(|| Some(status.to_owned()));
        let indexed = self.written(&path);
        tracing::info!(tool = "update_task_status", path = %path, status, "write");
        Ok(UpdateStatusOutput {
            success: true,
            task: StatusChange {
                filename,
                path: path.to_string(),
                previous_status: previous,
                new_status: status.to_owned(),
            },
            indexed,
        })
    }

    pub fn create_plan(&self, input: CreatePlanInput) -> Result<CreatePlanOutput> {
        let (_, dir) = self.project_arg(&input.project)?;
        let filename = match &input.filename {
            Some(f) => super::segment("filename", f)?,
            None => "execution-plan.md",
        };
        let content = input.content.as_str();
        let path = dir.join("plans").join(filename);
        let action = self
            .root
            .update(&path, |current| {
                let action = if current.is_some() {
                    "updated"
                } else {
                    "created"
                };
                Ok(Some((content.as_bytes().to_vec(), action)))
            })?
            .unwrap_or("updated");
        let indexed = self.written(&path);
        tracing::info!(tool = "create_plan", path = %path, action, "write");
        Ok(CreatePlanOutput {
            success: true,
            path: path.to_string(),
            action: action.to_owned(),
            indexed,
        })
    }

    pub fn log_session(&self, input: LogSessionInput) -> Result<LogSessionOutput> {
        let (project, dir) = self.project_arg(&input.project)?;
        let content = input.content.as_str();
        let append = input.append.unwrap_or(false);
        let date = chrono::Local::now().format("%Y-%m-%d").to_string();
        let filename = match input.suffix.as_deref() {
            Some(s) => {
                let s = slug(s);
                if s.is_empty() {
                    return Err(Error::vibe(
                        VibeCode::InvalidParameter,
                        "`suffix` has no letters or digits to name a file with",
                    )
                    .with("parameter", "suffix"));
                }
                format!("{date}-{s}.md")
            }
            None => format!("{date}.md"),
        };
        let rel = format!("sessions/{filename}");
        let path = dir.join("sessions").join(&filename);
        let mut body = content.trim_end_matches('\n').to_owned();
        body.push('\n');
        let action = self
            .root
            .update(&path, |current| match current {
                None => Ok(Some((body.clone().into_bytes(), "created"))),
                Some(_) if !append => Err(Error::vibe(
                    VibeCode::FileExists,
                    format!(
                        "Session note '{rel}' already exists in project '{project}'; pass append=true \
                         to add to it, or a suffix for a separate note"
                    ),
                )
                .with("project", project.as_str())
                .with("path", rel.as_str())),
                Some(old) => {
                    let mut text = old.to_vec();
                    while text.last() == Some(&b'\n') {
                        text.pop();
                    }
                    text.extend_from_slice(b"\n\n---\n\n");
                    text.extend_from_slice(body.as_bytes());
                    Ok(Some((text, "appended")))
                }
            })?
            .unwrap_or("created");
        let indexed = self.written(&path);
        tracing::info!(tool = "log_session", path = %path, action, "write");
        Ok(LogSessionOutput {
            success: true,
            session: SessionFile {
                filename,
                path: path.to_string(),
                action: action.to_owned(),
            },
            indexed,
        })
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn slugs_are_kebab_case_without_diacritics() {
        assert_eq!(slug("Implementar tool search"), "implementar-tool-search");
        assert_eq!(slug("Diseñar schema SQLite!"), "disenar-schema-sqlite");
        assert_eq!(slug("  C++ & rate-limiting (v2)  "), "c-rate-limiting-v2");
        assert_eq!(slug("認証を直す"), "認証を直す");
        assert_eq!(slug("!!!"), "");
        assert!(slug(&"word ".repeat(40)).chars().count() <= 60);
    }

    #[test]
    fn next_number_follows_the_highest() {
        let names = |v: &[&str]| v.iter().map(|s| s.to_string()).collect::<Vec<_>>();
        assert_eq!(next_number(&names(&[])), 1);
        assert_eq!(
            next_number(&names(&["001-a.md", "004-b.md", "notes.md"])),
            5
        );
        assert_eq!(next_number(&names(&["999-z.md"])), 1000);
        assert_eq!(
            next_number(&names(&["2025-plan.md"])),
            2026,
            "digits then dash count"
        );
    }

    #[test]
    fn task_text_is_the_format_of_002() {
        let ctx: Map<String, Value> = serde_json::from_str(
            r#"{"related_files": ["src/tools/search.py", "src/db/fts.py"], "dependencies": ["003-disenar-schema-sqlite"]}"#,
        )
        .unwrap();
        let t = TaskText {
            title: "Implementar tool search",
            status: "pending",
            objective: "Implementar la tool search con FTS5 y ranking inteligente.",
            steps: &["Crear función de búsqueda en SQLite", "Agregar tests"],
            acceptance: &["Búsqueda devuelve resultados relevantes"],
            context: Some(&ctx),
            notes: Some("Usar BM25 nativo de FTS5."),
            tags: &["backend", "fts5", "search"],
        };
        assert_eq!(
            t.render(),
            "---\ntags: [backend, fts5, search]\n---\n# Task: Implementar tool search\n\nStatus: pending\n\n\
             ## Objective\nImplementar la tool search con FTS5 y ranking inteligente.\n\n\
             ## Context\n- Related files: `src/tools/search.py`, `src/db/fts.py`\n- Dependencies: 003-disenar-schema-sqlite\n\n\
             ## Steps\n1. [ ] Crear función de búsqueda en SQLite\n2. [ ] Agregar tests\n\n\
             ## Acceptance Criteria\n- [ ] Búsqueda devuelve resultados relevantes\n\n\
             ## Notes\nUsar BM25 nativo de FTS5.\n"
        );
    }

    #[test]
    fn a_task_without_tags_has_no_front_matter() {
        let t = TaskText {
            title: "x",
            status: "done",
            objective: "y",
            steps: &[],
            acceptance: &[],
            context: None,
            notes: None,
            tags: &[],
        };
        assert!(t.render().starts_with("# Task: x\n\nStatus: done\n"));
    }

    #[test]
    fn front_matter_merges_and_null_removes() {
        let extra: Map<String, Value> =
            serde_json::from_str(r#"{"tags": ["a"], "owner": null}"#).unwrap();
        let base: Map<String, Value> =
            serde_json::from_str(r#"{"owner": "ana", "updated": "2025-02-09"}"#).unwrap();
        let out = with_front("# T\nbody\n", Some(base), &extra);
        assert!(out.starts_with("---\n"), "{out}");
        assert!(
            out.contains("updated: 2025-02-09") || out.contains("updated: '2025-02-09'"),
            "{out}"
        );
        assert!(!out.contains("owner"), "{out}");
        assert!(out.ends_with("---\n# T\nbody\n"), "{out}");
    }
}
