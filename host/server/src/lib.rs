//! The MCP face of kura (rmcp over stdio). Thin by design: it lists the
//! catalog, hands each call to [`App::call`] on the blocking pool, and turns
//! the outcome into a result: `structuredContent` plus the same JSON as text,
//! or `isError` with `{"error": {code, message, details}}` and one readable
//! sentence.

// The layers below, under the names this crate's modules use.
use kura_bridge as bridge;
use kura_core::{args, config, error, fs, job};
use kura_domain as domain;
use kura_index as index;
use kura_manual as manual;
use kura_plugins as plugins;
use kura_vault as vault;
use kura_vibe as vibe;

pub mod app;
mod calls;
pub mod framing;
mod http;
pub mod reference;
mod schema;
pub mod tools;
mod workspace;

pub use http::{HttpOptions, SERVING_AT, TOKEN_MIN_CHARS, Tokens, router, serve_http};
use std::sync::Arc;

use rmcp::model::{
    CallToolRequestParams, CallToolResponse, CallToolResult, CompleteRequestParams, CompleteResult,
    CompletionInfo, ContentBlock, GetPromptRequestParams, GetPromptResponse, Implementation,
    ListPromptsResult, ListResourceTemplatesResult, ListResourcesResult, ListToolsResult,
    PaginatedRequestParams, ProgressNotificationParam, ReadResourceRequestParams,
    ReadResourceResponse, ServerCapabilities, ServerConfig, SubscribeRequestParams,
    SubscriptionFilter, Tool, ToolAnnotations, UnsubscribeRequestParams,
};
use rmcp::service::{NotificationContext, RequestContext, SubscriptionContext};
use rmcp::{ErrorData as McpError, RoleServer, ServerHandler, ServiceExt};

use crate::app::App;
use crate::domain::Spec;
use crate::error::Error;
use crate::job::Job;
use crate::tools::Profile;
use calls::Calls;
use tokio_util::sync::CancellationToken;

#[derive(Clone)]
pub struct KuraServer {
    app: Arc<App>,
    /// Every tool call's turn (shared by the sessions of one server).
    calls: Arc<Calls>,
    /// The resources this client subscribed to.
    subscriptions: workspace::Subscriptions,
    /// Resource notifications (with the vibe domain, once serving).
    announcer: Option<workspace::Announcer>,
    /// Cancelled once stdio's input ends or a shutdown signal arrives:
    /// requests that last until the client cancels them
    /// (`subscriptions/listen`) end then, or rmcp's drain waits for them
    /// (over HTTP, rmcp ends them with their session).
    ending: CancellationToken,
}

impl KuraServer {
    pub fn new(app: Arc<App>) -> Self {
        KuraServer {
            calls: Calls::for_config(&app.config),
            app,
            subscriptions: Arc::default(),
            announcer: None,
            ending: CancellationToken::new(),
        }
    }

    /// The vibe domain if `caller` may see it: the configuration's profile
    /// and the caller's token (HTTP) must both grant its data. Otherwise
    /// every surface (resources, templates, subscriptions, prompts,
    /// completions, notifications, capabilities) answers as if VIBE_ROOT
    /// were not configured.
    fn vibe(&self, caller: Option<&Profile>) -> Option<Arc<crate::vibe::Vibe>> {
        let granted = |p: &Profile| p.grants(&crate::vibe::DOMAIN);
        self.app
            .domains
            .shared::<crate::vibe::Vibe>()
            .filter(|_| granted(&self.app.profile) && caller.is_none_or(granted))
    }

    /// What `initialize` and `server/discover` tell `caller` (None: stdio,
    /// or no token profile).
    fn info(&self, caller: Option<&Profile>) -> ServerConfig {
        let capabilities = if self.vibe(caller).is_some() {
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
    fn instructions(&self, caller: Option<&Profile>) -> String {
        let app = &self.app;
        let mut served = app.tool_names();
        if let Some(p) = caller {
            served.retain(|&name| crate::tools::find(name).is_some_and(|d| p.admits(d)));
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
        let mut parts = Vec::new();
        if let Some(n) = some(&crate::manual::DOMAIN) {
            parts.push(format!("read-only manuals ({n})"));
        }
        if let Some(n) = some(&crate::vault::DOMAIN) {
            parts.push(format!("a markdown vault of notes ({n})"));
        }
        if let Some(n) = some(&crate::vibe::DOMAIN) {
            parts.push(format!(
                "vibe project workspaces ({n}; resources vibe://projects, prompts \
                 project_briefing and session_start)"
            ));
        }
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
        crate::tools::all()
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

    /// Run a call to completion as a tool result (None: no such tool).
    pub async fn run(
        &self,
        name: String,
        args: Option<rmcp::model::JsonObject>,
    ) -> Option<CallToolResult> {
        self.run_with(name, args, None, CancellationToken::new())
            .await
    }

    /// [`KuraServer::run`], sending `(done, total)` reports to `progress`
    /// and stopping once `cancel` is cancelled.
    pub async fn run_with(
        &self,
        name: String,
        args: Option<rmcp::model::JsonObject>,
        progress: Option<tokio::sync::mpsc::UnboundedSender<(u64, u64)>>,
        cancel: CancellationToken,
    ) -> Option<CallToolResult> {
        let app = self.app.clone();
        let tool = name.clone();
        // A call cancelled while it waits for its turn never runs.
        let turn = tokio::select! {
            turn = self.calls.enter() => turn,
            () = cancel.cancelled() => return self.app.cancelled(&name).map(error_result),
        };
        let joined = tokio::task::spawn_blocking(move || {
            let _turn = turn;
            let sink = progress.map(|tx| {
                move |done: u64, total: u64| {
                    let _ = tx.send((done, total));
                }
            });
            let sink = sink.as_ref().map(|f| f as &(dyn Fn(u64, u64) + Sync));
            let cancelled = || cancel.is_cancelled();
            app.call_with(&tool, args.as_ref(), Job::new(sink, Some(&cancelled)))
        })
        .await;
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
                error_result(e)
            }
        })
    }
}

/// A failed call: `isError`, the error envelope and one readable sentence.
fn error_result(e: Error) -> CallToolResult {
    let mut r = CallToolResult::structured_error(e.to_json());
    r.content = vec![ContentBlock::text(e.to_text())];
    r
}

/// A tool's hints. `destructiveHint` and `idempotentHint` mean something
/// only for a tool that writes (MCP's schema), so only those carry them.
fn annotations(t: &crate::tools::ToolDef) -> ToolAnnotations {
    use crate::tools::Effect;
    let hints = ToolAnnotations::new()
        .read_only(t.read_only())
        .open_world(false);
    match t.effect {
        Effect::Read => hints,
        Effect::Write { idempotent } => hints.destructive(false).idempotent(idempotent),
        Effect::Destructive { idempotent } => hints.destructive(true).idempotent(idempotent),
    }
}

/// Descriptions name the configured read cap, not the default.
pub(crate) fn with_cap(text: &str, cap: &str) -> String {
    text.replace("{scan_max_chars}", cap)
}

/// A schema as listed: the cap filled in.
fn listed(schema: serde_json::Value, cap: &str) -> Arc<rmcp::model::JsonObject> {
    let schema: serde_json::Value = serde_json::from_str(&with_cap(&schema.to_string(), cap))
        .expect("a number put in a JSON string keeps it JSON");
    match schema {
        serde_json::Value::Object(m) => Arc::new(m),
        _ => unreachable!("tool schemas are objects"),
    }
}

/// Run `f` on the blocking pool (it reads files), as a JSON-RPC result.
impl KuraServer {
    /// Run a resource or prompt read on a blocking thread, in its turn: it
    /// reads files as a tool call does, so it waits at the same gate
    /// (`max_concurrent_calls`).
    async fn blocking<T: Send + 'static>(
        &self,
        f: impl FnOnce() -> Result<T, McpError> + Send + 'static,
    ) -> Result<T, McpError> {
        let turn = self.calls.enter().await;
        tokio::task::spawn_blocking(move || {
            let _turn = turn;
            f()
        })
        .await
        .map_err(|e| McpError::internal_error(e.to_string(), None))?
    }
}

impl ServerHandler for KuraServer {
    fn get_info(&self) -> ServerConfig {
        self.info(None)
    }

    async fn initialize(
        &self,
        request: rmcp::model::InitializeRequestParams,
        context: RequestContext<RoleServer>,
    ) -> Result<rmcp::model::InitializeResult, McpError> {
        context.peer.set_peer_info(request.clone());
        let mut result = self.negotiate_initialize(&request)?;
        let info = self.info(http::profile_of(&context.extensions));
        result.capabilities = info.capabilities;
        result.instructions = info.instructions;
        Ok(result)
    }

    async fn discover(
        &self,
        context: RequestContext<RoleServer>,
    ) -> Result<rmcp::model::DiscoverResult, McpError> {
        let info = self.info(http::profile_of(&context.extensions));
        // Private to the caller (rmcp's default): a token's answer differs.
        Ok(rmcp::model::DiscoverResult::from_server_info(
            self.supported_protocol_versions().into_owned(),
            info,
        ))
    }

    async fn list_resources(
        &self,
        _request: Option<PaginatedRequestParams>,
        context: RequestContext<RoleServer>,
    ) -> Result<ListResourcesResult, McpError> {
        let vibe = self.vibe(http::profile_of(&context.extensions));
        let list = self
            .blocking(move || Ok(vibe.map(|v| workspace::resources(&v))))
            .await?;
        Ok(ListResourcesResult::with_all_items(
            list.unwrap_or_default(),
        ))
    }

    async fn list_resource_templates(
        &self,
        _request: Option<PaginatedRequestParams>,
        context: RequestContext<RoleServer>,
    ) -> Result<ListResourceTemplatesResult, McpError> {
        let list = if self.vibe(http::profile_of(&context.extensions)).is_some() {
            workspace::templates()
        } else {
            vec![]
        };
        Ok(ListResourceTemplatesResult::with_all_items(list))
    }

    async fn read_resource(
        &self,
        request: ReadResourceRequestParams,
        context: RequestContext<RoleServer>,
    ) -> Result<ReadResourceResponse, McpError> {
        let vibe = self.vibe(http::profile_of(&context.extensions));
        let uri = request.uri;
        self.blocking(move || match &vibe {
            Some(v) => workspace::read(v, &uri),
            None => Err(workspace::no_such_resource(&uri)),
        })
        .await
        .map(Into::into)
    }

    async fn subscribe(
        &self,
        request: SubscribeRequestParams,
        context: RequestContext<RoleServer>,
    ) -> Result<(), McpError> {
        let caller = http::profile_of(&context.extensions);
        if self.vibe(caller).is_none() || !workspace::is_resource(&request.uri) {
            return Err(workspace::no_such_resource(&request.uri));
        }
        self.subscriptions
            .lock()
            .unwrap_or_else(|e| e.into_inner())
            .insert(request.uri);
        Ok(())
    }

    fn accepted_subscription_filter(
        &self,
        requested: &SubscriptionFilter,
    ) -> Option<SubscriptionFilter> {
        // No caller here: `listen` checks the caller's token.
        self.vibe(None)
            .is_some()
            .then(|| workspace::accepted_filter(requested))
    }

    /// One `subscriptions/listen` (protocol 2026-07-28): the same
    /// announcements as for a subscribed session, for as long as it lasts.
    async fn listen(&self, context: SubscriptionContext) -> Result<(), McpError> {
        let caller = http::profile_of(&context.request_context().extensions);
        if let Some(announcer) = self
            .announcer
            .as_ref()
            .filter(|_| self.vibe(caller).is_some())
        {
            let stop = CancellationToken::new();
            announcer.add(workspace::Audience::Listen {
                sink: context.sink().clone(),
                stop: stop.clone(),
            });
            tokio::select! {
                () = context.cancelled() => {}
                () = self.ending.cancelled() => {}
            }
            stop.cancel();
            announcer.forget_ended();
        }
        Ok(())
    }

    async fn unsubscribe(
        &self,
        request: UnsubscribeRequestParams,
        _context: RequestContext<RoleServer>,
    ) -> Result<(), McpError> {
        self.subscriptions
            .lock()
            .unwrap_or_else(|e| e.into_inner())
            .remove(&request.uri);
        Ok(())
    }

    async fn complete(
        &self,
        request: CompleteRequestParams,
        context: RequestContext<RoleServer>,
    ) -> Result<CompleteResult, McpError> {
        let vibe = self.vibe(http::profile_of(&context.extensions));
        let completion = self
            .blocking(move || {
                Ok(match &vibe {
                    Some(v) => workspace::complete(v, &request.r#ref, &request.argument),
                    None => CompletionInfo::default(),
                })
            })
            .await?;
        Ok(CompleteResult::new(completion))
    }

    async fn list_prompts(
        &self,
        _request: Option<PaginatedRequestParams>,
        context: RequestContext<RoleServer>,
    ) -> Result<ListPromptsResult, McpError> {
        let list = if self.vibe(http::profile_of(&context.extensions)).is_some() {
            workspace::prompts()
        } else {
            vec![]
        };
        Ok(ListPromptsResult::with_all_items(list))
    }

    async fn get_prompt(
        &self,
        request: GetPromptRequestParams,
        context: RequestContext<RoleServer>,
    ) -> Result<GetPromptResponse, McpError> {
        let vibe = self.vibe(http::profile_of(&context.extensions));
        self.blocking(move || match &vibe {
            Some(v) => workspace::prompt(v, &request.name, request.arguments.as_ref()),
            None => Err(McpError::invalid_params(
                format!("no such prompt: {}", request.name),
                None,
            )),
        })
        .await
        .map(Into::into)
    }

    /// The session hears resource changes from now on (stdio's one session,
    /// and each HTTP session that negotiated with `initialize`).
    async fn on_initialized(&self, context: NotificationContext<RoleServer>) {
        let caller = http::profile_of(&context.extensions);
        if let Some(a) = self
            .announcer
            .as_ref()
            .filter(|_| self.vibe(caller).is_some())
        {
            a.add(workspace::Audience::Session {
                peer: context.peer.clone(),
                subscriptions: self.subscriptions.clone(),
            });
        }
    }

    async fn list_tools(
        &self,
        _request: Option<PaginatedRequestParams>,
        context: RequestContext<RoleServer>,
    ) -> Result<ListToolsResult, McpError> {
        let mut tools = self.tools();
        if let Some(profile) = http::profile_of(&context.extensions) {
            tools.retain(|t| crate::tools::find(&t.name).is_some_and(|d| profile.admits(d)));
        }
        Ok(ListToolsResult::with_all_items(tools))
    }

    async fn call_tool(
        &self,
        request: CallToolRequestParams,
        context: RequestContext<RoleServer>,
    ) -> Result<CallToolResponse, McpError> {
        let name = request.name.to_string();
        let unknown = || McpError::invalid_params(format!("unknown tool: {name}"), None);
        // A tool this caller's token does not allow does not exist for it.
        if let Some(profile) = http::profile_of(&context.extensions)
            && !crate::tools::find(&name).is_some_and(|d| profile.admits(d))
        {
            return Err(unknown());
        }
        let token = request
            .meta
            .as_ref()
            .and_then(|m| m.get_progress_token())
            .or_else(|| context.meta.get_progress_token());
        // Progress reports go out in order, each at most once per percent,
        // and all of them before the result.
        let (progress, forwarder) = match token {
            Some(token) => {
                let (tx, mut rx) = tokio::sync::mpsc::unbounded_channel::<(u64, u64)>();
                let peer = context.peer.clone();
                let cancelled = context.ct.clone();
                let forwarder = tokio::spawn(async move {
                    let mut last = None;
                    while let Some((done, total)) = rx.recv().await {
                        // No report for a request the client has given up.
                        if cancelled.is_cancelled() {
                            continue;
                        }
                        let step = (done * 100).checked_div(total).unwrap_or(100);
                        if last == Some(step) && done != total {
                            continue;
                        }
                        last = Some(step);
                        let p = ProgressNotificationParam::new(token.clone(), done as f64)
                            .with_total(total as f64);
                        let _ = peer.notify_progress(p).await;
                    }
                });
                (Some(tx), Some(forwarder))
            }
            None => (None, None),
        };
        let outcome = self
            .run_with(
                name.clone(),
                request.arguments,
                progress,
                context.ct.clone(),
            )
            .await;
        if let Some(f) = forwarder {
            let _ = f.await;
        }
        match outcome {
            Some(r) => Ok(r.into()),
            None => Err(unknown()),
        }
    }
}

fn reload_on_sighup(plugins: Arc<crate::plugins::Plugins>) {
    use tokio::signal::unix::{SignalKind, signal};
    let mut hup = match signal(SignalKind::hangup()) {
        Ok(s) => s,
        Err(e) => {
            tracing::warn!("no SIGHUP reload ({e})");
            return;
        }
    };
    tokio::spawn(async move {
        while hup.recv().await.is_some() {
            let p = plugins.clone();
            match tokio::task::spawn_blocking(move || p.reload()).await {
                Ok((done, refused)) => tracing::info!(
                    reloaded = done,
                    refused,
                    "SIGHUP: plugin components re-read"
                ),
                Err(e) => tracing::warn!("SIGHUP reload: {e}"),
            }
        }
    });
}

/// Serve MCP over this process's stdin/stdout until the client goes away
/// or a SIGTERM or SIGINT arrives.
pub async fn serve_stdio(app: Arc<App>) -> anyhow::Result<()> {
    if app.domains.is_empty() {
        eprintln!(
            "kura: no root configured, so no tool is served: set manuals_root, vault_root or \
             vibe_root (in the config file, as --manuals-root/--vault-root/--vibe-root, or as \
             MANUALS_ROOT/VAULT_ROOT/VIBE_ROOT), or try `kura serve --demo`"
        );
    }
    app.index_in_background();
    // Swap plugin components without a restart: when a configured `.wasm`
    // changes, or on SIGHUP. A bad new component leaves the old one serving.
    let _watch = app.plugins.watch();
    reload_on_sighup(app.plugins.clone());
    // Malformed lines are answered by the guard; rmcp sees the rest.
    let (stdin, stdout) = rmcp::transport::io::stdio_pipes();
    // SIGTERM (what desktop clients send on close) and SIGINT end the
    // service like a closed stdin, before or after `initialize`: the
    // caller's destructors run (the demo copy is removed, pending index
    // commits are made) and the runtime waits for writes already running.
    // SIGHUP keeps reloading components.
    let shutdown = shutdown_signal();
    tokio::pin!(shutdown);
    let mut server = KuraServer::new(app.clone());
    let calls = server.calls.clone();
    calls.announce();
    if let Some(v) = server.vibe(None) {
        server.announcer = Some(workspace::Announcer::start(v));
    }
    let ending = server.ending.clone();
    let service = tokio::select! {
        s = server.serve(framing::guard(stdin, stdout, ending.clone())) => s?,
        signal = &mut shutdown => {
            tracing::info!("{signal}: shutting down");
            return Ok(());
        }
    };
    let token = service.cancellation_token();
    let waiting = service.waiting();
    tokio::pin!(waiting);
    tokio::select! {
        r = &mut waiting => {
            r?;
        }
        signal = &mut shutdown => {
            tracing::info!("{signal}: shutting down");
            ending.cancel();
            token.cancel();
            waiting.await?;
        }
    }
    calls.drain().await;
    Ok(())
}

/// The first of SIGTERM and SIGINT (never, for one that cannot be caught).
/// The handlers are installed when this is called, not when first polled.
fn shutdown_signal() -> impl std::future::Future<Output = &'static str> {
    use tokio::signal::unix::{Signal, SignalKind, signal};
    let catch = |kind: SignalKind| {
        signal(kind)
            .inspect_err(|e| tracing::warn!("cannot catch a signal ({e})"))
            .ok()
    };
    async fn next(s: Option<Signal>) {
        match s {
            Some(mut s) => {
                s.recv().await;
            }
            None => std::future::pending::<()>().await,
        }
    }
    let (term, int) = (
        catch(SignalKind::terminate()),
        catch(SignalKind::interrupt()),
    );
    async move {
        tokio::select! {
            () = next(term) => "SIGTERM",
            () = next(int) => "SIGINT",
        }
    }
}
