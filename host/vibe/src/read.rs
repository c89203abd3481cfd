//! The read side of seed 002: read_doc, list_tasks, get_plan, and the JSON
//! of the three `vibe://projects…` resources. Task lists and counts come
//! from the index's manifest (each document's [`DocMeta`]); file contents
//! from the files.

use std::collections::BTreeMap;

use schemars::JsonSchema;
use serde::Serialize;

use super::doc::{self, DocMeta};
use super::{FOLDERS, STATUSES, Vibe, doc_type, local_date};
use crate::args::Input;
use crate::error::{Error, Result, VibeCode};
use crate::fs::{EntryKind, RelPath};
use crate::text::sha256;

/// A document's metadata (002): front matter fields, status for tasks,
/// `updated` (front matter, else the file's modification date).
#[derive(Clone, Debug, Serialize, JsonSchema)]
pub struct Metadata {
    #[serde(rename = "type")]
    pub kind: String,
    pub status: Option<String>,
    pub updated: String,
    pub tags: Vec<String>,
    pub owner: Option<String>,
}

#[derive(Debug, Serialize, JsonSchema)]
pub struct DocOutput {
    pub project: String,
    pub folder: String,
    pub filename: String,
    pub path: String,
    pub metadata: Metadata,
    pub content: String,
    /// SHA-256 of the content (hex): update_doc's `expected_hash`.
    pub hash: String,
}

#[derive(Debug, Serialize, JsonSchema)]
pub struct TaskFilter {
    pub status: Option<String>,
}

#[derive(Debug, Serialize, JsonSchema)]
pub struct TaskEntry {
    pub project: String,
    pub filename: String,
    pub title: String,
    pub status: Option<String>,
    pub updated: String,
    pub objective: Option<String>,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub content: Option<String>,
}

#[derive(Debug, Serialize, JsonSchema)]
pub struct ListTasksOutput {
    /// The project asked for (null: every project).
    pub project: Option<String>,
    pub filter: TaskFilter,
    pub total: u64,
    pub tasks: Vec<TaskEntry>,
}

#[derive(Debug, Serialize, JsonSchema)]
pub struct PlanCounts {
    /// `## Overview` of the plan.
    pub overview: Option<String>,
    pub task_count: u64,
    pub pending: u64,
    pub in_progress: u64,
    pub done: u64,
    pub blocked: u64,
}

#[derive(Debug, Serialize, JsonSchema)]
pub struct PlanOutput {
    pub project: String,
    pub filename: String,
    pub path: String,
    pub exists: bool,
    pub metadata: Option<Metadata>,
    pub content: Option<String>,
    pub parsed: Option<PlanCounts>,
}

#[derive(Debug, Default, Serialize)]
pub struct ProjectStats {
    pub total_docs: u64,
    pub open_tasks: u64,
    pub pending_tasks: u64,
    pub in_progress_tasks: u64,
    pub done_tasks: u64,
    pub blocked_tasks: u64,
    pub last_session_date: Option<String>,
}

#[derive(Debug, Serialize)]
pub struct ProjectSummary {
    pub name: String,
    pub path: String,
    pub last_updated: Option<String>,
    pub stats: ProjectStats,
    pub folders: BTreeMap<String, u64>,
}

#[derive(Debug, Serialize)]
pub struct ProjectsOutput {
    pub projects: Vec<ProjectSummary>,
}

#[derive(Debug, Serialize)]
pub struct FileEntry {
    pub filename: String,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub status: Option<String>,
    pub updated: String,
}

#[derive(Debug, Serialize)]
pub struct ProjectDetail {
    pub name: String,
    pub path: String,
    pub last_updated: Option<String>,
    pub folders: BTreeMap<String, Vec<FileEntry>>,
}

fn rfc3339(mtime_ns: i128) -> Option<String> {
    let secs = (mtime_ns / 1_000_000_000) as i64;
    chrono::DateTime::from_timestamp(secs, 0)
        .map(|t| t.to_rfc3339_opts(chrono::SecondsFormat::Secs, true))
}

/// The date a session file is about: its `YYYY-MM-DD` name, else its
/// modification date.
fn session_date(name: &str, mtime_ns: i128) -> String {
    let d = name.get(..10).unwrap_or("");
    if chrono::NaiveDate::parse_from_str(d, "%Y-%m-%d").is_ok() {
        d.to_owned()
    } else {
        local_date(mtime_ns)
    }
}

fn metadata(folder: &str, meta: &DocMeta, mtime_ns: i128) -> Metadata {
    Metadata {
        kind: doc_type(folder).to_owned(),
        status: meta.status.clone(),
        updated: meta.updated.clone().unwrap_or_else(|| local_date(mtime_ns)),
        tags: meta.tags.clone(),
        owner: meta.owner.clone(),
    }
}

/// `## Current Status` of a plan as counts: `key: number` lines (total,
/// pending, in progress, done, blocked; English or Spanish), else its
/// check-list (`[x]` done, `[ ]` pending); the whole plan's check-list when
/// the section has neither.
pub fn plan_counts(body: &str) -> PlanCounts {
    let overview = doc::section(body, &["Overview", "Resumen", "Visión general"]);
    let status = doc::section(body, &["Current Status", "Estado actual", "Status"]);
    let mut c = PlanCounts {
        overview,
        task_count: 0,
        pending: 0,
        in_progress: 0,
        done: 0,
        blocked: 0,
    };
    let mut explicit_total = None;
    let mut any = false;
    for line in status.as_deref().unwrap_or("").lines() {
        let l = line
            .trim()
            .trim_start_matches(['-', '*', '|', ' '])
            .replace("**", "")
            .to_lowercase();
        let Some((key, rest)) = l.split_once([':', '|']) else {
            continue;
        };
        let Some(n) = rest
            .split(|ch: char| !ch.is_ascii_digit())
            .find(|w| !w.is_empty())
            .and_then(|w| w.parse::<u64>().ok())
        else {
            continue;
        };
        let key = key.trim();
        let slot = if key.contains("progress") || key.contains("progreso") || key.contains("curso")
        {
            &mut c.in_progress
        } else if key.contains("pending") || key.contains("pendiente") || key.contains("todo") {
            &mut c.pending
        } else if key.contains("done") || key.contains("complete") || key.contains("hecha") {
            &mut c.done
        } else if key.contains("block") || key.contains("bloque") {
            &mut c.blocked
        } else if key.contains("total") || key.contains("task") || key.contains("tarea") {
            explicit_total = Some(n);
            any = true;
            continue;
        } else {
            continue;
        };
        *slot = n;
        any = true;
    }
    if !any {
        let (done, all) = doc::checklist(status.as_deref().unwrap_or(""));
        let (done, all) = if all > 0 {
            (done, all)
        } else {
            doc::checklist(body)
        };
        c.done = done as u64;
        c.pending = (all - done) as u64;
    }
    c.task_count = explicit_total.unwrap_or(c.pending + c.in_progress + c.done + c.blocked);
    c
}

#[derive(Input)]
pub struct ReadDocInput {
    /// Project (a folder in VIBE_ROOT)
    pub project: String,
    /// The file's folder
    #[arg(one_of = FOLDERS)]
    pub folder: &'static str,
    /// File name, e.g. 004-definir-interfaz-mcp.md
    pub filename: String,
}

#[derive(Input)]
pub struct ListTasksInput {
    /// Only this project (default: all)
    pub project: Option<String>,
    /// Only this status
    #[arg(one_of = STATUSES)]
    pub status: Option<&'static str>,
    /// Include full task text (default false)
    pub include_content: Option<bool>,
}

#[derive(Input)]
pub struct GetPlanInput {
    /// Project (a folder in VIBE_ROOT)
    pub project: String,
    /// Plan file in plans/ (default execution-plan.md)
    pub filename: Option<String>,
}

impl Vibe {
    /// Read `{project}/{folder}/{filename}` with its metadata.
    pub fn read_file(&self, project: &str, folder: &str, filename: &str) -> Result<DocOutput> {
        let path = RelPath::parse(&format!("{project}/{folder}/{filename}"), false)?;
        let not_found = || {
            Error::vibe(
                VibeCode::FileNotFound,
                format!("File '{folder}/{filename}' not found in project '{project}'"),
            )
            .with("project", project)
            .with("path", format!("{folder}/{filename}"))
        };
        let stat = match self.root.stat(&path)? {
            Some(s) if !s.is_dir => s,
            _ => return Err(not_found()),
        };
        let bytes = match self.root.read(&path) {
            Ok(b) => b,
            Err(e) if e.code == crate::error::Code::NotFound => return Err(not_found()),
            Err(e) => return Err(e),
        };
        let hash = sha256(&bytes);
        let content = String::from_utf8(bytes).map_err(|_| {
            Error::vibe(
                VibeCode::FilesystemError,
                format!("'{folder}/{filename}' is not a UTF-8 text file"),
            )
            .with("project", project)
            .with("path", format!("{folder}/{filename}"))
        })?;
        let stem = filename.rsplit_once('.').map_or(filename, |(a, _)| a);
        let meta = doc::meta(&content, stem, folder == "tasks");
        Ok(DocOutput {
            project: project.to_owned(),
            folder: folder.to_owned(),
            filename: filename.to_owned(),
            path: path.to_string(),
            metadata: metadata(folder, &meta, stat.mtime_ns),
            content,
            hash,
        })
    }

    pub fn read_doc(&self, input: ReadDocInput) -> Result<DocOutput> {
        let (project, _) = self.project_arg(&input.project)?;
        let filename = super::segment("filename", &input.filename)?;
        self.read_file(&project, input.folder, filename)
    }

    pub fn list_tasks(&self, input: ListTasksInput) -> Result<ListTasksOutput> {
        let project = self.project_filter(input.project)?;
        let status = input.status;
        let include_content = input.include_content.unwrap_or(false);
        let index = self.fresh()?;
        let mut tasks = Vec::new();
        {
            let files = index.files();
            for (key, info) in files.iter() {
                let mut parts = key.splitn(3, '/');
                let (Some(p), Some("tasks"), Some(filename)) =
                    (parts.next(), parts.next(), parts.next())
                else {
                    continue;
                };
                if project.as_deref().is_some_and(|want| want != p) {
                    continue;
                }
                let meta = DocMeta::of(info.meta);
                if status.is_some_and(|s| meta.status.as_deref() != Some(s)) {
                    continue;
                }
                tasks.push(TaskEntry {
                    project: p.to_owned(),
                    filename: filename.to_owned(),
                    title: meta.title,
                    updated: meta.updated.unwrap_or_else(|| local_date(info.mtime_ns)),
                    status: meta.status,
                    objective: meta.objective,
                    content: None,
                });
            }
        }
        if include_content {
            for t in &mut tasks {
                let path = RelPath::parse(&format!("{}/tasks/{}", t.project, t.filename), false)?;
                t.content = self.root.read_indexed(&path);
            }
        }
        Ok(ListTasksOutput {
            project,
            filter: TaskFilter {
                status: status.map(str::to_owned),
            },
            total: tasks.len() as u64,
            tasks,
        })
    }

    pub fn get_plan(&self, input: GetPlanInput) -> Result<PlanOutput> {
        let (project, _) = self.project_arg(&input.project)?;
        let filename = match &input.filename {
            Some(f) => super::segment("filename", f)?,
            None => "execution-plan.md",
        };
        let path = format!("{project}/plans/{filename}");
        match self.read_file(&project, "plans", filename) {
            Ok(d) => {
                let body = doc::split(&d.content).body;
                Ok(PlanOutput {
                    parsed: Some(plan_counts(body)),
                    project,
                    filename: filename.to_owned(),
                    path,
                    exists: true,
                    metadata: Some(d.metadata),
                    content: Some(d.content),
                })
            }
            Err(e) if e.code == crate::error::Code::Vibe(VibeCode::FileNotFound) => {
                Ok(PlanOutput {
                    project,
                    filename: filename.to_owned(),
                    path,
                    exists: false,
                    metadata: None,
                    content: None,
                    parsed: None,
                })
            }
            Err(e) => Err(e),
        }
    }

    /// Per folder of a project, its files (any kind) with their
    /// modification times; the task statuses from the index.
    fn project_files(&self, name: &str) -> Result<BTreeMap<String, Vec<(String, i128)>>> {
        let mut out = BTreeMap::new();
        let p = RelPath::parse(name, false)?;
        for e in self.root.list(&p)? {
            if e.kind != EntryKind::Dir || !FOLDERS.contains(&e.name.as_str()) {
                continue;
            }
            let files = self
                .root
                .list(&p.join(&e.name))?
                .into_iter()
                .filter(|f| f.kind == EntryKind::File && !f.name.starts_with('.'))
                .map(|f| (f.name, f.mtime_ns))
                .collect();
            out.insert(e.name, files);
        }
        Ok(out)
    }

    fn metas(&self, name: &str) -> Result<BTreeMap<String, (DocMeta, i128)>> {
        let index = self.fresh()?;
        let files = index.files();
        let prefix = format!("{name}/");
        Ok(files
            .iter()
            .filter(|(k, _)| k.starts_with(&prefix))
            .map(|(k, i)| {
                (
                    k[prefix.len()..].to_owned(),
                    (DocMeta::of(i.meta), i.mtime_ns),
                )
            })
            .collect())
    }

    /// The payload of `vibe://projects`.
    pub fn projects_resource(&self) -> Result<ProjectsOutput> {
        let mut projects = Vec::new();
        for name in self.projects()? {
            projects.push(self.summary(&name)?);
        }
        Ok(ProjectsOutput { projects })
    }

    /// One project's overview: stats and file counts per folder.
    pub fn summary(&self, name: &str) -> Result<ProjectSummary> {
        let files = self.project_files(name)?;
        let metas = self.metas(name)?;
        let mut stats = ProjectStats::default();
        let mut newest = 0i128;
        let mut folders = BTreeMap::new();
        for (folder, list) in &files {
            folders.insert(folder.clone(), list.len() as u64);
            for (file, mtime) in list {
                newest = newest.max(*mtime);
                if folder == "sessions" {
                    let d = session_date(file, *mtime);
                    if stats.last_session_date.as_ref().is_none_or(|l| *l < d) {
                        stats.last_session_date = Some(d);
                    }
                }
            }
        }
        for (key, (meta, _)) in &metas {
            stats.total_docs += 1;
            if !key.starts_with("tasks/") {
                continue;
            }
            match meta.status.as_deref() {
                Some("pending") => stats.pending_tasks += 1,
                Some("in-progress") => stats.in_progress_tasks += 1,
                Some("done") => stats.done_tasks += 1,
                Some("blocked") => stats.blocked_tasks += 1,
                _ => {}
            }
        }
        stats.open_tasks = stats.pending_tasks + stats.in_progress_tasks;
        Ok(ProjectSummary {
            name: name.to_owned(),
            path: self.root.path().join(name).display().to_string(),
            last_updated: (newest > 0).then(|| rfc3339(newest)).flatten(),
            stats,
            folders,
        })
    }

    /// The payload of `vibe://projects/{name}`.
    pub fn project_resource(&self, name: &str) -> Result<ProjectDetail> {
        self.project("name", name)?;
        let files = self.project_files(name)?;
        let metas = self.metas(name)?;
        let mut newest = 0i128;
        let mut folders = BTreeMap::new();
        for (folder, list) in files {
            let entries = list
                .into_iter()
                .map(|(filename, mtime)| {
                    newest = newest.max(mtime);
                    let meta = metas.get(&format!("{folder}/{filename}"));
                    FileEntry {
                        status: meta
                            .filter(|_| folder == "tasks")
                            .and_then(|(m, _)| m.status.clone()),
                        updated: meta
                            .and_then(|(m, _)| m.updated.clone())
                            .unwrap_or_else(|| local_date(mtime)),
                        filename,
                    }
                })
                .collect();
            folders.insert(folder, entries);
        }
        Ok(ProjectDetail {
            name: name.to_owned(),
            path: self.root.path().join(name).display().to_string(),
            last_updated: (newest > 0).then(|| rfc3339(newest)).flatten(),
            folders,
        })
    }

    /// The payload of `vibe://projects/{name}/{folder}/{file}`.
    pub fn file_resource(&self, name: &str, folder: &str, file: &str) -> Result<DocOutput> {
        self.project("name", name)?;
        if !FOLDERS.contains(&folder) {
            return Err(Error::vibe(
                VibeCode::InvalidFolder,
                format!("'{folder}' is not a project folder"),
            ));
        }
        self.read_file(name, folder, super::segment("file", file)?)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn plan_counts_read_key_number_lines() {
        let plan = "# Plan\n\n## Overview\nExponer el sistema.\n\n## Current Status\n- Total tasks: 12\n- Pending: 5\n- In progress: 1\n- **Done:** 6\n";
        let c = plan_counts(plan);
        assert_eq!(c.overview.as_deref(), Some("Exponer el sistema."));
        assert_eq!(
            (c.task_count, c.pending, c.in_progress, c.done),
            (12, 5, 1, 6)
        );
    }

    #[test]
    fn plan_counts_fall_back_to_the_checklist() {
        let plan = "## Current Status\n- [x] 001 a\n- [x] 002 b\n- [ ] 003 c\n";
        let c = plan_counts(plan);
        assert_eq!((c.task_count, c.pending, c.done), (3, 1, 2));
        assert_eq!(c.overview, None);
    }

    #[test]
    fn session_dates_come_from_the_name() {
        assert_eq!(session_date("2025-02-09-debugging.md", 0), "2025-02-09");
    }
}
