//! What a session is told kura offers: `initialize`'s capabilities and
//! instructions, and tools/list (each tool's schemas as listed, its
//! annotations), all derived from the tool declarations and the open
//! domains.

use std::sync::Arc;

use rmcp::model::{Implementation, ServerCapabilities, ServerConfig, Tool, ToolAnnotations};

use crate::KuraServer;
use crate::domain::{Profile, Spec};
use crate::schema;

impl KuraServer {
    /// What `initialize` and `server/discover` tell `caller` (None: stdio,
    /// or no token profile).
    pub(crate) fn info(&self, caller: Option<&Profile>) -> ServerConfig {
        let capabilities = if !self.surfaces(caller).is_empty() {
            ServerCapabilities::builder()
                .enable_tools()
                .enable_resources()
                .enable_resources_list_changed()
                .enable_resources_subscribe()
                .enable_prompts()
                .enable_completions()
                .build()
        } else {
            ServerCapabilities::builder().enable_tools().build()
        };
        ServerConfig::new(capabilities)
            .with_server_info(Implementation::new("kura", env!("CARGO_PKG_VERSION")))
            .with_instructions(self.instructions(caller))
    }

    /// What the server offers, for `initialize`: only the domains and
    /// tools served (to this caller: an HTTP token's profile narrows them).
    pub(crate) fn instructions(&self, caller: Option<&Profile>) -> String {
        let app = &self.app;
        let mut served = app.tool_names();
        if let Some(p) = caller {
            served.retain(|&name| self.app.catalog.find(name).is_some_and(|d| p.admits(d)));
        }
        let some = |domain: &Spec| {
            let names: Vec<&str> = domain
                .tools
                .iter()
                .filter(|t| served.contains(&t.name))
                .map(|t| t.name)
                .collect();
            match names.len() {
                0 => None,
                1..=4 => Some(names.join(", ")),
                _ => Some(format!("{}, ...", names[..4].join(", "))),
            }
        };
        let parts: Vec<String> = app
            .domains
            .iter()
            .filter_map(|d| Some(d.spec().offer?.replace("{tools}", &some(d.spec())?)))
            .collect();
        if parts.is_empty() {
            return "kura is running with no root configured (or no tool selected), so it serves \
                    no tool: set manuals_root, vault_root or vibe_root (or start it with --demo)."
                .to_owned();
        }
        let mut out = format!(
            "kura gives evidence-tracking access to {}. Paths are relative to their root; reads are \
             capped at {} characters and resume with a scan cursor.",
            parts.join(", "),
            app.config.scan_max_chars
        );
        if app.config.read_only || caller.is_some_and(|p| p.read_only) {
            out.push_str(" Read-only: no tool that writes is served.");
        }
        out
    }

    /// The MCP tool list for this configuration.
    pub fn tools(&self) -> Vec<Tool> {
        let served = self.app.tool_names();
        let cap = self.app.config.scan_max_chars.to_string();
        self.app
            .catalog
            .tools()
            .filter(|t| served.contains(&t.name))
            .map(|t| {
                let success = serde_json::Value::Object(Arc::unwrap_or_clone(t.output()));
                let input = listed(schema::input(t.input()), &cap);
                let output = listed(schema::output(&success), &cap);
                Tool::new(t.name, with_cap(t.description, &cap), input)
                    .with_title(t.title)
                    .with_raw_output_schema(output)
                    .with_annotations(annotations(t))
            })
            .collect()
    }
}

/// A tool's hints: `readOnlyHint` always (the one every client looks at),
/// the others only where they say more than MCP's default for them
/// (`destructiveHint` true, `idempotentHint` false, `openWorldHint` true):
/// a client reads the same, in fewer bytes. `destructiveHint` and
/// `idempotentHint` mean something only for a tool that writes.
pub(crate) fn annotations(t: &crate::domain::ToolDef) -> ToolAnnotations {
    use crate::domain::Effect;
    let mut hints = ToolAnnotations::new()
        .read_only(t.read_only())
        .open_world(false);
    let (destructive, idempotent) = match t.effect {
        Effect::Read => return hints,
        Effect::Write { idempotent } => (false, idempotent),
        Effect::Destructive { idempotent } => (true, idempotent),
    };
    if !destructive {
        hints = hints.destructive(false);
    }
    if idempotent {
        hints = hints.idempotent(true);
    }
    hints
}

/// Descriptions name the configured read cap, not the default.
pub(crate) fn with_cap(text: &str, cap: &str) -> String {
    text.replace("{scan_max_chars}", cap)
}

/// A schema as listed: the cap filled in.
pub(crate) fn listed(schema: serde_json::Value, cap: &str) -> Arc<rmcp::model::JsonObject> {
    let schema: serde_json::Value = serde_json::from_str(&with_cap(&schema.to_string(), cap))
        .expect("a number put in a JSON string keeps it JSON");
    match schema {
        serde_json::Value::Object(m) => Arc::new(m),
        _ => unreachable!("tool schemas are objects"),
    }
}
