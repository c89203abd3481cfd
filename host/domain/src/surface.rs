//! What a domain serves over MCP beyond its tools: resources and their
//! templates, prompts, completions for their arguments, and the changes
//! that update its resources. A domain that has any returns itself as
//! [`Surfaces`] from `Domain::surfaces`; the server lists, reads and
//! announces them for every open domain the caller may see, and turns the
//! MCP capabilities on only when one does.

use std::path::Path;

use rmcp::ErrorData as McpError;
use rmcp::model::{
    GetPromptResult, JsonObject, Prompt, ReadResourceResult, Reference, Resource, ResourceTemplate,
};

/// Told the changed paths (absolute; none: anything may have changed);
/// returns `false` once it no longer listens.
pub type ChangeListener = crate::fs::Listener;

pub trait Surfaces: Send + Sync {
    /// The resources it lists now.
    fn resources(&self) -> Vec<Resource>;

    fn templates(&self) -> Vec<ResourceTemplate>;

    /// Whether `uri` has the shape of one of its resources (what it names
    /// may come later): what a client may read and subscribe to.
    fn owns(&self, uri: &str) -> bool;

    /// Read one of its resources.
    fn read(&self, uri: &str) -> Result<ReadResourceResult, McpError>;

    fn prompts(&self) -> Vec<Prompt>;

    /// One of its prompts, filled in; None when `name` is not one of them.
    fn prompt(
        &self,
        name: &str,
        args: Option<&JsonObject>,
    ) -> Option<Result<GetPromptResult, McpError>>;

    /// The values an argument of one of its templates or prompts may take
    /// (the server keeps those that start with what was typed); None when
    /// the reference is not its.
    fn complete(&self, reference: &Reference, argument: &str) -> Option<Vec<String>>;

    /// The folder the changed paths lie under.
    fn root(&self) -> &Path;

    /// Call `listener` after each change under [`Surfaces::root`], once
    /// [`Surfaces::watch`] has run.
    fn listen(&self, listener: ChangeListener);

    /// Open what sees the changes (it may block: run it off the async
    /// threads), so that none falls between a first list and the watch.
    fn watch(&self);

    /// What its resource list depends on: when this differs after a
    /// change, clients hear `resources/list_changed`.
    fn list_key(&self) -> Vec<String>;

    /// Whether a change at `changed` (root-relative path segments; none:
    /// anything) updates the resource `uri`.
    fn updates(&self, uri: &str, changed: &[String]) -> bool;
}

/// A URI that names nothing kura serves (JSON-RPC -32002).
pub fn no_such_resource(uri: &str) -> McpError {
    McpError::resource_not_found(format!("no such resource: {uri}"), None)
}
