//! The MCP face of kura (rmcp over stdio). Thin by design: it lists the
//! catalog, hands each call to [`App::call`] on the blocking pool, and turns
//! the outcome into a result: `structuredContent` plus the same JSON as text,
//! or `isError` with `{"error": {code, message, details}}` and one readable
//! sentence.

pub mod catalog;

use std::sync::Arc;

use rmcp::model::{
    CallToolRequestParams, CallToolResponse, CallToolResult, ContentBlock, Implementation,
    ListToolsResult, PaginatedRequestParams, ServerCapabilities, ServerConfig, Tool,
    ToolAnnotations,
};
use rmcp::service::RequestContext;
use rmcp::{ErrorData as McpError, RoleServer, ServerHandler, ServiceExt};

use crate::app::App;
use crate::error::Error;

#[derive(Clone)]
pub struct KuraServer {
    app: Arc<App>,
}

impl KuraServer {
    pub fn new(app: Arc<App>) -> Self {
        KuraServer { app }
    }

    /// The MCP tool list for this configuration.
    pub fn tools(&self) -> Vec<Tool> {
        let served = self.app.tool_names();
        catalog::TOOLS
            .iter()
            .filter(|t| served.contains(&t.name))
            .map(|t| {
                let input = match (t.input)() {
                    serde_json::Value::Object(m) => m,
                    _ => unreachable!("input schemas are objects"),
                };
                Tool::new(t.name, t.description, Arc::new(input))
                    .with_raw_output_schema((t.output)())
                    .with_annotations(
                        ToolAnnotations::new()
                            .read_only(t.read_only)
                            .destructive(t.destructive)
                            .idempotent(t.idempotent)
                            .open_world(false),
                    )
            })
            .collect()
    }

    /// Run a call to completion as a tool result (None: no such tool).
    pub async fn run(
        &self,
        name: String,
        args: Option<rmcp::model::JsonObject>,
    ) -> Option<CallToolResult> {
        let app = self.app.clone();
        let tool = name.clone();
        let joined = tokio::task::spawn_blocking(move || app.call(&tool, args.as_ref())).await;
        let outcome = match joined {
            Ok(None) => return None,
            Ok(Some(r)) => r,
            // A panic in a tool ends that call only.
            Err(e) => Err(Error::internal(format!(
                "the {name} tool failed unexpectedly: {e}"
            ))),
        };
        Some(match outcome {
            Ok(value) => CallToolResult::structured(value),
            Err(e) => {
                tracing::info!(tool = %name, code = e.code.as_str(), "{}", e.message);
                let mut r = CallToolResult::structured_error(e.to_json());
                r.content = vec![ContentBlock::text(e.to_text())];
                r
            }
        })
    }
}

impl ServerHandler for KuraServer {
    fn get_info(&self) -> ServerConfig {
        ServerConfig::new(ServerCapabilities::builder().enable_tools().build())
            .with_server_info(Implementation::new("kura", env!("CARGO_PKG_VERSION")))
            .with_instructions(
                "kura gives evidence-tracking access to a markdown vault (vault_*). Paths are relative to the \
                 vault root; reads are capped at 12000 characters and resume with vault_scan's cursor.",
            )
    }

    async fn list_tools(
        &self,
        _request: Option<PaginatedRequestParams>,
        _context: RequestContext<RoleServer>,
    ) -> Result<ListToolsResult, McpError> {
        Ok(ListToolsResult::with_all_items(self.tools()))
    }

    async fn call_tool(
        &self,
        request: CallToolRequestParams,
        _context: RequestContext<RoleServer>,
    ) -> Result<CallToolResponse, McpError> {
        let name = request.name.to_string();
        match self.run(name.clone(), request.arguments).await {
            Some(r) => Ok(r.into()),
            None => Err(McpError::invalid_params(
                format!("unknown tool: {name}"),
                None,
            )),
        }
    }
}

/// Serve MCP over this process's stdin/stdout until the client goes away.
pub async fn serve_stdio(app: Arc<App>) -> anyhow::Result<()> {
    app.index_in_background();
    let service = KuraServer::new(app)
        .serve(rmcp::transport::io::stdio_pipes())
        .await?;
    service.waiting().await?;
    Ok(())
}
