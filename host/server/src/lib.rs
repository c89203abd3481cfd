//! The MCP face of kura (rmcp over stdio). Thin by design: it lists the
//! catalog, hands each call to [`App::call`] on the blocking pool, and turns
//! the outcome into a result: `structuredContent` plus the same JSON as text,
//! or `isError` with `{"error": {code, message, details}}` and one readable
//! sentence.

// The layers below, under the names this crate's modules use.
use kura_core::{args, config, error, fs, heap, job};
use kura_domain as domain;
use kura_index as index;
use kura_plugins as plugins;

mod announce;
pub mod app;
mod calls;
mod confirm;
pub mod framing;
mod http;
mod listing;
pub mod oauth;
pub mod reference;
mod schema;
mod stdio;

pub use http::{HttpOptions, SERVING_AT, TOKEN_MIN_CHARS, Tokens, router, serve_http};
use listing::with_cap;
use std::sync::Arc;
pub use stdio::serve_stdio;
use stdio::{reload_on_sighup, shutdown_signal};

use rmcp::model::{
    CallToolRequestParams, CallToolResponse, CallToolResult, CompleteRequestParams, CompleteResult,
    CompletionInfo, ContentBlock, GetPromptRequestParams, GetPromptResponse, ListPromptsResult,
    ListResourceTemplatesResult, ListResourcesResult, ListToolsResult, PaginatedRequestParams,
    ProgressNotificationParam, ReadResourceRequestParams, ReadResourceResponse, ServerConfig,
    SubscribeRequestParams, SubscriptionFilter, UnsubscribeRequestParams,
};
use rmcp::service::{NotificationContext, RequestContext, SubscriptionContext};
use rmcp::{ErrorData as McpError, RoleServer, ServerHandler};

use crate::app::App;
use crate::domain::Profile;
use crate::domain::Spec;
use crate::domain::surface::{Surfaces, no_such_resource};
use crate::error::Error;
use crate::job::Job;
use calls::Calls;
use confirm::Answer;
use tokio_util::sync::CancellationToken;

#[derive(Clone)]
pub struct KuraServer {
    app: Arc<App>,
    /// Every tool call's turn (shared by the sessions of one server).
    calls: Arc<Calls>,
    /// The resources this client subscribed to.
    subscriptions: announce::Subscriptions,
    /// Confirmations asked on 2026-07-28 and not answered yet.
    asked: Arc<confirm::Asked>,
    /// Resource notifications: one per open domain with resources, once
    /// serving.
    announcers: Vec<(&'static Spec, announce::Announcer)>,
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
            asked: Arc::default(),
            announcers: Vec::new(),
            ending: CancellationToken::new(),
        }
    }

    /// Whether `caller` may see `domain`'s data: the configuration's
    /// profile and the caller's token (HTTP) must both grant it.
    fn grants(&self, caller: Option<&Profile>, domain: &Spec) -> bool {
        self.app.profile.grants(domain) && caller.is_none_or(|p| p.grants(domain))
    }

    /// The surfaces beyond tools of the open domains `caller` may see. A
    /// domain it may not see answers on every surface (resources,
    /// templates, subscriptions, prompts, completions, notifications,
    /// capabilities) as if its root were not configured.
    fn surfaces(&self, caller: Option<&Profile>) -> Vec<Arc<dyn Surfaces>> {
        self.app
            .domains
            .iter()
            .filter(|d| self.grants(caller, d.spec()))
            .filter_map(|d| d.clone().surfaces())
            .collect()
    }

    /// The announcers of the domains `caller` may see.
    fn announcers(&self, caller: Option<&Profile>) -> impl Iterator<Item = &announce::Announcer> {
        self.announcers
            .iter()
            .filter(move |(spec, _)| self.grants(caller, spec))
            .map(|(_, a)| a)
    }

    /// Start announcing the changes of every open domain with resources.
    fn announce(&mut self) {
        self.announcers = self
            .app
            .domains
            .iter()
            .filter_map(|d| Some((d.spec(), announce::Announcer::start(d.clone().surfaces()?))))
            .collect();
    }

    /// Run a call to completion as a tool result (None: no such tool).
    pub async fn run(
        &self,
        name: String,
        args: Option<rmcp::model::JsonObject>,
    ) -> Option<CallToolResult> {
        let who = crate::domain::history::Who::terminal("call");
        self.run_with(name, args, None, CancellationToken::new(), who)
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
        who: crate::domain::history::Who,
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
            app.call_with(&tool, args.as_ref(), Job::new(sink, Some(&cancelled)), &who)
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
        let served = self.surfaces(http::profile_of(&context.extensions));
        let list = self
            .blocking(move || Ok(served.iter().flat_map(|s| s.resources()).collect()))
            .await?;
        Ok(ListResourcesResult::with_all_items(list))
    }

    async fn list_resource_templates(
        &self,
        _request: Option<PaginatedRequestParams>,
        context: RequestContext<RoleServer>,
    ) -> Result<ListResourceTemplatesResult, McpError> {
        let served = self.surfaces(http::profile_of(&context.extensions));
        let list = served.iter().flat_map(|s| s.templates()).collect();
        Ok(ListResourceTemplatesResult::with_all_items(list))
    }

    async fn read_resource(
        &self,
        request: ReadResourceRequestParams,
        context: RequestContext<RoleServer>,
    ) -> Result<ReadResourceResponse, McpError> {
        let served = self.surfaces(http::profile_of(&context.extensions));
        let uri = request.uri;
        self.blocking(move || match served.iter().find(|s| s.owns(&uri)) {
            Some(s) => s.read(&uri),
            None => Err(no_such_resource(&uri)),
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
        if !self.surfaces(caller).iter().any(|s| s.owns(&request.uri)) {
            return Err(no_such_resource(&request.uri));
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
        let served = self.surfaces(None);
        (!served.is_empty()).then(|| announce::accepted_filter(requested, &served))
    }

    /// One `subscriptions/listen` (protocol 2026-07-28): the same
    /// announcements as for a subscribed session, for as long as it lasts.
    async fn listen(&self, context: SubscriptionContext) -> Result<(), McpError> {
        let caller = http::profile_of(&context.request_context().extensions);
        let announcers: Vec<_> = self.announcers(caller).collect();
        if !announcers.is_empty() {
            let stop = CancellationToken::new();
            let audience = Arc::new(announce::Audience::Listen {
                sink: context.sink().clone(),
                stop: stop.clone(),
            });
            for a in &announcers {
                a.add(audience.clone());
            }
            tokio::select! {
                () = context.cancelled() => {}
                () = self.ending.cancelled() => {}
            }
            stop.cancel();
            for a in &announcers {
                a.forget_ended();
            }
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
        let served = self.surfaces(http::profile_of(&context.extensions));
        let completion = self
            .blocking(move || {
                let known = served
                    .iter()
                    .find_map(|s| s.complete(&request.r#ref, &request.argument.name));
                Ok(completion(
                    known.unwrap_or_default(),
                    &request.argument.value,
                ))
            })
            .await?;
        Ok(CompleteResult::new(completion))
    }

    async fn list_prompts(
        &self,
        _request: Option<PaginatedRequestParams>,
        context: RequestContext<RoleServer>,
    ) -> Result<ListPromptsResult, McpError> {
        let served = self.surfaces(http::profile_of(&context.extensions));
        let list = served.iter().flat_map(|s| s.prompts()).collect();
        Ok(ListPromptsResult::with_all_items(list))
    }

    async fn get_prompt(
        &self,
        request: GetPromptRequestParams,
        context: RequestContext<RoleServer>,
    ) -> Result<GetPromptResponse, McpError> {
        let served = self.surfaces(http::profile_of(&context.extensions));
        self.blocking(move || {
            served
                .iter()
                .find_map(|s| s.prompt(&request.name, request.arguments.as_ref()))
                .unwrap_or_else(|| {
                    Err(McpError::invalid_params(
                        format!("no such prompt: {}", request.name),
                        None,
                    ))
                })
        })
        .await
        .map(Into::into)
    }

    /// The session hears resource changes from now on (stdio's one session,
    /// and each HTTP session that negotiated with `initialize`).
    async fn on_initialized(&self, context: NotificationContext<RoleServer>) {
        let caller = http::profile_of(&context.extensions);
        let audience = Arc::new(announce::Audience::Session {
            peer: context.peer.clone(),
            subscriptions: self.subscriptions.clone(),
        });
        for a in self.announcers(caller) {
            a.add(audience.clone());
        }
    }

    async fn list_tools(
        &self,
        _request: Option<PaginatedRequestParams>,
        context: RequestContext<RoleServer>,
    ) -> Result<ListToolsResult, McpError> {
        let mut tools = self.tools();
        if let Some(profile) = http::profile_of(&context.extensions) {
            tools.retain(|t| {
                self.app
                    .catalog
                    .find(&t.name)
                    .is_some_and(|d| profile.admits(d))
            });
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
            && !self
                .app
                .catalog
                .find(&name)
                .is_some_and(|d| profile.admits(d))
        {
            return Err(unknown());
        }
        // A call its user may regret is asked about first, when the client
        // can ask; one that cannot runs it as asked. Judging that may walk
        // the link graph: on the blocking pool, as tools run.
        let question = {
            let (app, tool, args) = (self.app.clone(), name.clone(), request.arguments.clone());
            tokio::task::spawn_blocking(move || app.confirmation(&tool, args.as_ref()))
                .await
                .map_err(|e| {
                    McpError::internal_error(format!("the confirmation failed: {e}"), None)
                })?
        };
        if let Some(question) = question {
            match confirm::confirmed(&context, &self.asked, &request, &question).await {
                Answer::Yes | Answer::CannotAsk => {}
                Answer::Ask(input) => return Ok(input.into()),
                Answer::No => {
                    return match self.app.declined(&name, &question) {
                        Some(e) => Ok(error_result(e).into()),
                        None => Err(unknown()),
                    };
                }
                Answer::Failed(why) => {
                    return match self.app.unconfirmed(&name, &question, &why) {
                        Some(e) => Ok(error_result(e).into()),
                        None => Err(unknown()),
                    };
                }
            }
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
                who_of(&context),
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

/// Who is calling, for the history: the client's name and its session
/// (the HTTP session, or this stdio process).
fn who_of(context: &RequestContext<RoleServer>) -> crate::domain::history::Who {
    let client = context
        .peer
        .peer_info()
        .map(|i| i.client_info.name.clone())
        .unwrap_or_default();
    let session = match http::session_of(&context.extensions) {
        Some(id) => format!("http-{id}"),
        None => crate::domain::history::process_session("stdio"),
    };
    crate::domain::history::Who { client, session }
}

/// `completion/complete`: the values that start with what was typed
/// (case-insensitive), at most 100, in order.
fn completion(known: Vec<String>, typed: &str) -> CompletionInfo {
    let typed = typed.to_lowercase();
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
