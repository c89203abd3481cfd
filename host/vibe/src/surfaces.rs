//! The MCP face of the vibe domain beyond its tools: the `vibe://projects…`
//! resources (a resource per project, two templates), the two prompts of
//! seed 002, completions for their project and folder arguments, and which
//! resources a change under VIBE_ROOT updates. A resource or prompt that
//! names no project is a JSON-RPC error (`-32002` resource not found, or
//! invalid params), with 002's error in `data`.

use std::path::Path;

use rmcp::ErrorData as McpError;
use rmcp::model::{
    GetPromptResult, JsonObject, Prompt, PromptArgument, PromptMessage, ReadResourceResult,
    Reference, Resource, ResourceContents, ResourceTemplate, Role,
};

use crate::domain::surface::{ChangeListener, Surfaces, no_such_resource};
use crate::error::{Code, Error, VibeCode};
use crate::{FOLDERS, PROMPTS, Vibe};

const JSON: &str = "application/json";

fn resources(vibe: &Vibe) -> Vec<Resource> {
    let mut out = vec![
        Resource::new("vibe://projects", "projects")
            .with_title("vibe projects")
            .with_description(
                "Every project under VIBE_ROOT with its stats and file counts per folder",
            )
            .with_mime_type(JSON),
    ];
    match vibe.projects() {
        Ok(names) => out.extend(names.into_iter().map(|n| {
            Resource::new(format!("vibe://projects/{}", encode(&n)), n.clone())
                .with_description(format!("Project {n}: its folders and files"))
                .with_mime_type(JSON)
        })),
        Err(e) => tracing::warn!("cannot list the vibe projects: {}", e.message),
    }
    out
}

fn templates() -> Vec<ResourceTemplate> {
    vec![
        ResourceTemplate::new("vibe://projects/{name}", "project")
            .with_description("One project: its folders and files (tasks with their status)")
            .with_mime_type(JSON),
        ResourceTemplate::new("vibe://projects/{name}/{folder}/{file}", "document")
            .with_description("One document of a project: metadata and content")
            .with_mime_type(JSON),
    ]
}

/// A name as one URI path segment: RFC 3986's unreserved characters stay.
fn encode(s: &str) -> String {
    const SEGMENT: &percent_encoding::AsciiSet = &percent_encoding::NON_ALPHANUMERIC
        .remove(b'-')
        .remove(b'.')
        .remove(b'_')
        .remove(b'~');
    percent_encoding::utf8_percent_encode(s, SEGMENT).to_string()
}

fn to_mcp(e: Error) -> McpError {
    let data = Some(e.to_json());
    match e.code {
        Code::Vibe(VibeCode::ProjectNotFound | VibeCode::FileNotFound) => {
            McpError::resource_not_found(e.message, data)
        }
        Code::Vibe(
            VibeCode::InvalidFolder
            | VibeCode::InvalidPath
            | VibeCode::InvalidParameter
            | VibeCode::InvalidStatus
            | VibeCode::InvalidQuery,
        ) => McpError::invalid_params(e.message, data),
        _ => McpError::internal_error(e.message, data),
    }
}

/// The decoded path segments of a `vibe://projects…` URI (none for the
/// project list itself); `None` for any other URI.
fn segments(uri: &str) -> Option<Vec<String>> {
    let rest = uri.strip_prefix("vibe://projects")?;
    match rest.strip_prefix('/') {
        None if rest.is_empty() => Some(vec![]),
        None => None,
        Some(r) => Some(
            r.trim_end_matches('/')
                .split('/')
                .map(|p| {
                    percent_encoding::percent_decode_str(p)
                        .decode_utf8_lossy()
                        .into_owned()
                })
                .collect(),
        ),
    }
}

/// Whether `uri` is one of the resources [`read`] serves (by its shape:
/// the project or file may come later).
fn is_resource(uri: &str) -> bool {
    segments(uri).is_some_and(|p| matches!(p.len(), 0 | 1 | 3))
}

/// Read one `vibe://projects…` resource.
fn read(vibe: &Vibe, uri: &str) -> Result<ReadResourceResult, McpError> {
    let not_found = || no_such_resource(uri);
    let parts = segments(uri).ok_or_else(not_found)?;
    let value = match parts.as_slice() {
        [] => vibe.projects_resource().and_then(json),
        [name] => vibe.project_resource(name).and_then(json),
        [name, folder, file] => vibe.file_resource(name, folder, file).and_then(json),
        _ => return Err(not_found()),
    }
    .map_err(|e| to_mcp(crate::as_vibe(e)))?;
    Ok(ReadResourceResult::new(vec![
        ResourceContents::text(value, uri).with_mime_type(JSON),
    ]))
}

fn json<T: serde::Serialize>(v: T) -> crate::error::Result<String> {
    serde_json::to_string_pretty(&v).map_err(|e| Error::internal(e.to_string()))
}

fn prompts() -> Vec<Prompt> {
    PROMPTS
        .iter()
        .map(|p| {
            let args = p
                .arguments
                .iter()
                .map(|(name, description, required)| {
                    PromptArgument::new(*name)
                        .with_description(*description)
                        .with_required(*required)
                })
                .collect();
            Prompt::new(p.name, Some(p.description), Some(args))
        })
        .collect()
}

fn prompt(
    vibe: &Vibe,
    name: &str,
    args: Option<&serde_json::Map<String, serde_json::Value>>,
) -> Result<GetPromptResult, McpError> {
    if !PROMPTS.iter().any(|p| p.name == name) {
        return Err(McpError::invalid_params(
            format!("no such prompt: {name}"),
            None,
        ));
    }
    let arg = |key: &str| args.and_then(|a| a.get(key)).and_then(|v| v.as_str());
    let project = arg("project").ok_or_else(|| {
        McpError::invalid_params(format!("{name} needs the argument `project`"), None)
    })?;
    let text = match name {
        "project_briefing" => vibe.project_briefing(project),
        "session_start" => vibe.session_start(project, arg("focus")),
        _ => {
            return Err(McpError::invalid_params(
                format!("no such prompt: {name}"),
                None,
            ));
        }
    }
    .map_err(|e| match to_mcp(crate::as_vibe(e)) {
        // A prompt's missing project is a bad argument, not a missing resource.
        m if m.code == rmcp::model::ErrorCode::RESOURCE_NOT_FOUND => {
            McpError::invalid_params(m.message, m.data)
        }
        m => m,
    })?;
    let description = PROMPTS
        .iter()
        .find(|p| p.name == name)
        .map(|p| p.description)
        .unwrap_or_default();
    Ok(
        GetPromptResult::new(vec![PromptMessage::new_text(Role::User, text)])
            .with_description(description),
    )
}

/// Whether a change at `changed` (root-relative segments; none: anything)
/// updates the resource at `uri`: the project list changes with anything, a
/// project with anything below it, a document with itself.
fn updates(uri: &str, changed: &[String]) -> bool {
    let Some(covered) = segments(uri) else {
        return false;
    };
    changed.is_empty() || changed.starts_with(&covered) || covered.starts_with(changed)
}

impl Surfaces for Vibe {
    fn resources(&self) -> Vec<Resource> {
        resources(self)
    }

    fn templates(&self) -> Vec<ResourceTemplate> {
        templates()
    }

    fn owns(&self, uri: &str) -> bool {
        is_resource(uri)
    }

    fn read(&self, uri: &str) -> Result<ReadResourceResult, McpError> {
        read(self, uri)
    }

    fn prompts(&self) -> Vec<Prompt> {
        prompts()
    }

    fn prompt(
        &self,
        name: &str,
        args: Option<&JsonObject>,
    ) -> Option<Result<GetPromptResult, McpError>> {
        PROMPTS
            .iter()
            .any(|p| p.name == name)
            .then(|| prompt(self, name, args))
    }

    /// The templates' `{name}` and `{folder}` and the prompts' `project`.
    fn complete(&self, reference: &Reference, argument: &str) -> Option<Vec<String>> {
        match (reference, argument) {
            (Reference::Resource(r), "name") if r.uri.starts_with("vibe://projects/") => {
                Some(self.projects().unwrap_or_default())
            }
            (Reference::Prompt(p), "project") if PROMPTS.iter().any(|x| x.name == p.name) => {
                Some(self.projects().unwrap_or_default())
            }
            (Reference::Resource(r), "folder") if r.uri.starts_with("vibe://projects/") => {
                Some(FOLDERS.iter().map(|f| f.to_string()).collect())
            }
            _ => None,
        }
    }

    fn root(&self) -> &Path {
        self.root.path()
    }

    fn listen(&self, listener: ChangeListener) {
        self.index.listen(listener);
    }

    fn watch(&self) {
        // The watcher runs once the index is open.
        let _ = self.index.index();
    }

    /// The projects: the list has one resource per project.
    fn list_key(&self) -> Vec<String> {
        self.projects().unwrap_or_default()
    }

    fn updates(&self, uri: &str, changed: &[String]) -> bool {
        updates(uri, changed)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn segs(p: &str) -> Vec<String> {
        p.split('/')
            .filter(|s| !s.is_empty())
            .map(String::from)
            .collect()
    }

    #[test]
    fn a_change_updates_the_list_its_project_and_its_document_only() {
        let file = segs("webapp/tasks/001-x.md");
        assert!(updates("vibe://projects", &file));
        assert!(updates("vibe://projects/webapp", &file));
        assert!(updates("vibe://projects/webapp/tasks/001-x.md", &file));
        assert!(!updates("vibe://projects/webapp/tasks/002-y.md", &file));
        assert!(!updates("vibe://projects/other", &file));
        // A project folder removed or renamed updates what was below it.
        assert!(updates(
            "vibe://projects/webapp/tasks/002-y.md",
            &segs("webapp")
        ));
        // Anything (a rescan) updates everything subscribed.
        assert!(updates("vibe://projects/other", &[]));
        assert!(updates(
            "vibe://projects/caf%C3%A9",
            &segs("café/tasks/a.md")
        ));
        assert!(!updates("file:///etc/passwd", &[]));
    }

    #[test]
    fn only_vibe_resource_shapes_can_be_subscribed() {
        assert!(is_resource("vibe://projects"));
        assert!(is_resource("vibe://projects/webapp"));
        assert!(is_resource("vibe://projects/webapp/tasks/001-x.md"));
        assert!(!is_resource("vibe://projects/webapp/tasks"));
        assert!(!is_resource("vibe://elsewhere"));
    }
}
