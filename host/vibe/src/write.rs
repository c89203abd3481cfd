//! The write side of seed 002: create_doc, update_doc, create_task,
//! update_task_status, create_plan, log_session. Every write is atomic
//! (through [`crate::fs::Root`]), serialised per folder across threads and
//! processes, and re-indexes its file before it returns (`indexed`).

use schemars::JsonSchema;
use serde::Serialize;
use serde_json::{Map, Value};

use super::{FOLDERS, STATUSES, Vibe, doc};
use crate::args::Input;
use crate::error::{Code, Error, Result, VibeCode};
use crate::fs::RelPath;
use crate::index::SyncStats;
use crate::text::sha256;

mod format;

use format::with_front;
pub use format::{TaskText, next_number, slug};

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
    /// Project (a folder in VIBE_ROOT)
    pub project: String,
    /// Target folder
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
    /// Project (a folder in VIBE_ROOT)
    pub project: String,
    /// The file's folder
    #[arg(one_of = FOLDERS)]
    pub folder: &'static str,
    /// File name
    pub filename: String,
    /// New full content
    #[arg(text)]
    pub content: String,
    /// Front matter fields to merge
    pub frontmatter: Option<Map<String, Value>>,
    /// SHA-256 (hex) the file must still have, else CONFLICT
    pub expected_hash: Option<String>,
}

#[derive(Input)]
pub struct CreateTaskInput {
    /// Project (a folder in VIBE_ROOT)
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
    /// Extra notes
    pub notes: Option<String>,
    /// Initial status (default pending)
    #[arg(one_of = STATUSES)]
    pub status: Option<&'static str>,
    /// Front matter tags
    pub tags: Option<Vec<String>>,
}

#[derive(Input)]
pub struct UpdateTaskStatusInput {
    /// Project (a folder in VIBE_ROOT)
    pub project: String,
    /// Task number (`004`) or filename
    #[arg(nonempty)]
    pub task: String,
    /// New status
    #[arg(one_of = STATUSES)]
    pub status: &'static str,
}

#[derive(Input)]
pub struct CreatePlanInput {
    /// Project (a folder in VIBE_ROOT)
    pub project: String,
    /// Plan file name (default execution-plan.md)
    pub filename: Option<String>,
    /// Full plan
    #[arg(text)]
    pub content: String,
}

#[derive(Input)]
pub struct LogSessionInput {
    /// Project (a folder in VIBE_ROOT)
    pub project: String,
    /// Markdown note
    #[arg(nonempty)]
    pub content: String,
    /// File name suffix, e.g. debugging-auth
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
