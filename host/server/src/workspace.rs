//! The MCP face of the vibe domain beyond its tools: the `vibe://projects…`
//! resources (a resource per project, two templates), the two prompts of
//! seed 002, and completions for their project and folder arguments. A resource or prompt that names no project is a JSON-RPC error
//! (`-32002` resource not found, or invalid params), with 002's error in
//! `data`.

use rmcp::ErrorData as McpError;
use rmcp::model::{
    ArgumentInfo, CompletionInfo, GetPromptResult, Prompt, PromptArgument, PromptMessage,
    ReadResourceResult, Reference, Resource, ResourceContents, ResourceTemplate, Role,
};

use std::collections::BTreeSet;
use std::path::PathBuf;
use std::sync::{Arc, Mutex};
use std::time::Duration;

use rmcp::RoleServer;
use rmcp::model::{ResourceUpdatedNotificationParam, SubscriptionFilter};
use rmcp::service::{Peer, SubscriptionSink};
use tokio_util::sync::CancellationToken;

use crate::error::{Code, Error, VibeCode};
use crate::vibe::{PROMPTS, Vibe};

const JSON: &str = "application/json";

pub fn resources(vibe: &Vibe) -> Vec<Resource> {
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

pub fn templates() -> Vec<ResourceTemplate> {
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

/// A URI that names nothing kura serves (JSON-RPC -32002).
pub fn no_such_resource(uri: &str) -> McpError {
    McpError::resource_not_found(format!("no such resource: {uri}"), None)
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
pub fn is_resource(uri: &str) -> bool {
    segments(uri).is_some_and(|p| matches!(p.len(), 0 | 1 | 3))
}

/// Read one `vibe://projects…` resource.
pub fn read(vibe: &Vibe, uri: &str) -> Result<ReadResourceResult, McpError> {
    let not_found = || no_such_resource(uri);
    let parts = segments(uri).ok_or_else(not_found)?;
    let value = match parts.as_slice() {
        [] => vibe.projects_resource().and_then(json),
        [name] => vibe.project_resource(name).and_then(json),
        [name, folder, file] => vibe.file_resource(name, folder, file).and_then(json),
        _ => return Err(not_found()),
    }
    .map_err(|e| to_mcp(crate::vibe::as_vibe(e)))?;
    Ok(ReadResourceResult::new(vec![
        ResourceContents::text(value, uri).with_mime_type(JSON),
    ]))
}

fn json<T: serde::Serialize>(v: T) -> crate::error::Result<String> {
    serde_json::to_string_pretty(&v).map_err(|e| Error::internal(e.to_string()))
}

pub fn prompts() -> Vec<Prompt> {
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

pub fn prompt(
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
    .map_err(|e| match to_mcp(crate::vibe::as_vibe(e)) {
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

/// `completion/complete` for the templates' `{name}` and `{folder}` and the
/// prompts' `project`: the projects or folders that start with what was
/// typed (case-insensitive), at most 100, in name order.
pub fn complete(vibe: &Vibe, reference: &Reference, argument: &ArgumentInfo) -> CompletionInfo {
    let known = match (reference, argument.name.as_str()) {
        (Reference::Resource(r), "name") if r.uri.starts_with("vibe://projects/") => {
            vibe.projects().unwrap_or_default()
        }
        (Reference::Prompt(p), "project") if PROMPTS.iter().any(|x| x.name == p.name) => {
            vibe.projects().unwrap_or_default()
        }
        (Reference::Resource(r), "folder") if r.uri.starts_with("vibe://projects/") => {
            crate::vibe::FOLDERS.iter().map(|f| f.to_string()).collect()
        }
        _ => Vec::new(),
    };
    let typed = argument.value.to_lowercase();
    let mut values: Vec<String> = known
        .into_iter()
        .filter(|v| v.to_lowercase().starts_with(&typed))
        .collect();
    values.sort();
    let total = values.len();
    values.truncate(CompletionInfo::MAX_VALUES);
    let more = total > values.len();
    CompletionInfo::with_pagination(values, Some(total as u32), more).unwrap_or_default()
}

/// The resources a client subscribed to, by URI.
pub type Subscriptions = Arc<Mutex<BTreeSet<String>>>;

/// Gathered after a first change before anything is announced, so that a
/// burst (a checkout, an editor's save-by-rename) is one notification.
const SETTLE: Duration = Duration::from_millis(150);

/// Whether a change at `changed` (root-relative segments; none: anything)
/// updates the resource at `uri`: the project list changes with anything, a
/// project with anything below it, a document with itself.
fn updates(uri: &str, changed: &[String]) -> bool {
    let Some(covered) = segments(uri) else {
        return false;
    };
    changed.is_empty() || changed.starts_with(&covered) || covered.starts_with(changed)
}

/// Who hears the announcements, and of what.
pub enum Audience {
    /// A session that negotiated with `initialize`: every `list_changed`,
    /// and `updated` for what it subscribed to with `resources/subscribe`.
    Session {
        peer: Peer<RoleServer>,
        subscriptions: Subscriptions,
    },
    /// One `subscriptions/listen` request (protocol 2026-07-28): what its
    /// accepted filter names, until `stop`.
    Listen {
        sink: SubscriptionSink,
        stop: CancellationToken,
    },
}

impl Audience {
    fn wants_list(&self) -> bool {
        match self {
            Audience::Session { .. } => true,
            Audience::Listen { sink, .. } => sink.accepted().resources_list_changed == Some(true),
        }
    }

    fn subscribed(&self) -> Vec<String> {
        match self {
            Audience::Session { subscriptions, .. } => subscriptions
                .lock()
                .unwrap_or_else(|e| e.into_inner())
                .iter()
                .cloned()
                .collect(),
            Audience::Listen { sink, .. } => sink
                .accepted()
                .resource_subscriptions
                .clone()
                .unwrap_or_default(),
        }
    }

    /// Send one notification; `false` once the audience is gone.
    async fn tell(&self, updated: Option<String>) -> bool {
        match (self, updated) {
            // A session without `initialize` (protocol 2026-07-28) hears
            // changes only through its `subscriptions/listen` requests.
            (Audience::Session { peer, .. }, _) if peer.peer_info().is_none() => true,
            (Audience::Session { peer, .. }, None) => {
                peer.notify_resource_list_changed().await.is_ok()
            }
            (Audience::Session { peer, .. }, Some(uri)) => peer
                .notify_resource_updated(ResourceUpdatedNotificationParam::new(uri))
                .await
                .is_ok(),
            (Audience::Listen { sink, .. }, None) => {
                sink.notify_resource_list_changed().await.is_ok()
            }
            (Audience::Listen { sink, .. }, Some(uri)) => {
                sink.notify_resource_updated(uri).await.is_ok()
            }
        }
    }

    /// Whether it can no longer hear (its session or listen request
    /// ended).
    fn ended(&self) -> bool {
        match self {
            Audience::Session { peer, .. } => peer.is_transport_closed(),
            Audience::Listen { stop, .. } => stop.is_cancelled(),
        }
    }
}

/// The filter kura accepts out of a `subscriptions/listen` request: the
/// resource list and any `vibe://projects…` resource asked for.
pub fn accepted_filter(requested: &SubscriptionFilter) -> SubscriptionFilter {
    let mut f = SubscriptionFilter::new();
    f.resources_list_changed = requested.resources_list_changed;
    f.resource_subscriptions = requested
        .resource_subscriptions
        .as_ref()
        .map(|uris| uris.iter().filter(|u| is_resource(u)).cloned().collect());
    f
}

/// Tells every audience what the file watcher sees below VIBE_ROOT, once
/// per burst: `notifications/resources/list_changed` when the projects
/// differ, and `notifications/resources/updated` for each subscribed
/// resource a change touches. One watcher listener and one list of projects
/// for all audiences, started with the server: a `subscriptions/listen`
/// added right after its acknowledgment still hears a change made just
/// before (the burst settles first).
#[derive(Clone, Default)]
pub struct Announcer {
    audiences: Arc<Mutex<Vec<Arc<Audience>>>>,
}

impl Announcer {
    pub fn start(vibe: Arc<Vibe>) -> Announcer {
        let announcer = Announcer::default();
        let (tx, mut rx) = tokio::sync::mpsc::unbounded_channel::<Vec<PathBuf>>();
        vibe.index
            .listen(Box::new(move |paths| tx.send(paths.to_vec()).is_ok()));
        let root = vibe.root.path().to_owned();
        let audiences = announcer.audiences.clone();
        let projects = |v: Arc<Vibe>| async move {
            tokio::task::spawn_blocking(move || v.projects().unwrap_or_default())
                .await
                .unwrap_or_default()
        };
        tokio::spawn(async move {
            // The watcher runs once the index is open: open it before the
            // first list, so no change falls between the list and the
            // watcher's start (the start-up sync may open it later).
            let opening = vibe.clone();
            let _ = tokio::task::spawn_blocking(move || opening.index.index().map(|_| ())).await;
            let mut known = projects(vibe.clone()).await;
            while let Some(first) = rx.recv().await {
                tokio::time::sleep(SETTLE).await;
                let mut paths = vec![first];
                while let Ok(more) = rx.try_recv() {
                    paths.push(more);
                }
                let changed = relative(&root, &paths);
                let now = projects(vibe.clone()).await;
                let list_changed = now != known;
                known = now;
                let all: Vec<Arc<Audience>> =
                    audiences.lock().unwrap_or_else(|e| e.into_inner()).clone();
                for audience in all {
                    if !audience.hear(list_changed, &changed).await {
                        let mut kept = audiences.lock().unwrap_or_else(|e| e.into_inner());
                        kept.retain(|a| !Arc::ptr_eq(a, &audience));
                    }
                }
            }
        });
        announcer
    }

    /// Add an audience, and forget those that ended since the last one
    /// came: the list holds the live sessions and listens, however many
    /// came and went between two changes.
    pub fn add(&self, audience: Audience) {
        self.forget_ended();
        self.audiences
            .lock()
            .unwrap_or_else(|e| e.into_inner())
            .push(Arc::new(audience));
    }

    /// Forget the audiences that ended now, not at the next change: an
    /// ended listen's sink would otherwise hold rmcp's response channel
    /// open, and a closed input would wait for it before the process ends.
    pub fn forget_ended(&self) {
        self.audiences
            .lock()
            .unwrap_or_else(|e| e.into_inner())
            .retain(|a| !a.ended());
    }
}

/// Root-relative segments of each changed path; an empty one (a change
/// with no path) stands for anything.
fn relative(root: &std::path::Path, paths: &[Vec<PathBuf>]) -> Vec<Vec<String>> {
    paths
        .iter()
        .flat_map(|ps| {
            if ps.is_empty() {
                vec![vec![]]
            } else {
                ps.iter()
                    .filter_map(|p| p.strip_prefix(root).ok())
                    .map(|rel| {
                        rel.iter()
                            .map(|c| c.to_string_lossy().into_owned())
                            .collect()
                    })
                    .collect()
            }
        })
        .collect()
}

impl Audience {
    /// Tell this audience of one burst; `false` once it is gone.
    async fn hear(&self, list_changed: bool, changed: &[Vec<String>]) -> bool {
        if self.ended() {
            return false;
        }
        if list_changed && self.wants_list() && !self.tell(None).await {
            return false;
        }
        for uri in self.subscribed() {
            if changed.iter().any(|c| updates(&uri, c)) && !self.tell(Some(uri)).await {
                return false;
            }
        }
        true
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
