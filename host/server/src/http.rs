//! Streamable HTTP (`kura serve --http ADDR`): the same tools, resources and
//! prompts as stdio, to many clients at once, from one `App` (one set of
//! indexes). rmcp's tower service speaks the protocol and its sessions
//! (closed after `idle` without a request), checks `Host` against the
//! allowed names (loopback by default: DNS rebinding) and `Origin` (refused
//! unless allowed: a browser page cannot drive it), and caps request bodies.
//! In front of it: bearer tokens (kept as SHA-256 digests, compared in
//! constant time; 401 without) and `/healthz`, which needs no token.

use std::sync::Arc;
use std::sync::atomic::{AtomicU64, AtomicUsize, Ordering};
use std::time::Duration;

use axum::Router;
use axum::extract::{Request, State};
use axum::http::{Method, StatusCode, header};
use axum::middleware::{self, Next};
use axum::response::{IntoResponse, Response};
use axum::routing::get;
use rmcp::transport::streamable_http_server::session::local::LocalSessionManager;
use rmcp::transport::streamable_http_server::{StreamableHttpServerConfig, StreamableHttpService};
use sha2::{Digest, Sha256};
use subtle::{ConditionallySelectable, ConstantTimeEq};
use tokio_util::sync::CancellationToken;

use super::{Calls, KuraServer, reload_on_sighup, shutdown_signal};
use crate::app::App;
use crate::domain::{Catalog, Profile};
use crate::oauth::{OAuth, Refusal};

/// The shortest token accepted: shorter ones are guessable.
pub const TOKEN_MIN_CHARS: usize = 16;
/// The start of the log line that names the URL served, which clients
/// started by a script read (`client::http_url`).
pub const SERVING_AT: &str = "serving MCP at ";

const LOOPBACK_ORIGINS: [&str; 3] = ["http://localhost:*", "http://127.0.0.1:*", "http://[::1]:*"];

/// How an HTTP server is exposed.
pub struct HttpOptions {
    /// Empty and no `oauth`: no authentication (`--no-auth`, loopback only).
    pub tokens: Tokens,
    /// Access tokens from an authorization server, besides `tokens`.
    pub oauth: Option<Arc<OAuth>>,
    /// `Host` names (or `host:port`) accepted besides rmcp's loopback ones.
    pub extra_hosts: Vec<String>,
    /// `Origin`s accepted (with scheme) besides the loopback ones; a
    /// request with any other is refused.
    pub extra_origins: Vec<String>,
    /// A session without a request for this long is closed.
    pub idle: Duration,
    /// Sessions open at once; an `initialize` beyond is refused (503).
    pub max_sessions: usize,
    pub max_body_bytes: usize,
}

/// The sessions open at once, capped: rmcp removes a session from its
/// manager when it ends (DELETE, idle, or its client gone), so the count is
/// of live ones. `initialize`s take turns at the check, so a burst of them
/// cannot slip past the cap together.
struct SessionCap {
    manager: Arc<LocalSessionManager>,
    max: usize,
    max_body_bytes: usize,
    opening: tokio::sync::Mutex<()>,
    refused: AtomicU64,
    /// The most sessions open at once since memory was last given back.
    peak: AtomicUsize,
}

/// Only the method and id of a JSON-RPC message matter here.
#[derive(serde::Deserialize)]
struct Head {
    method: Option<String>,
    #[serde(default)]
    id: serde_json::Value,
}

async fn cap_sessions(
    State(cap): State<Arc<SessionCap>>,
    request: Request,
    next: Next,
) -> Response {
    // Only a POST without a session can open one.
    if request.method() != Method::POST || request.headers().contains_key("mcp-session-id") {
        return next.run(request).await;
    }
    let (parts, body) = request.into_parts();
    let Ok(bytes) = axum::body::to_bytes(body, cap.max_body_bytes).await else {
        return (
            StatusCode::PAYLOAD_TOO_LARGE,
            "kura: request body too large\n",
        )
            .into_response();
    };
    let head = serde_json::from_slice::<Head>(&bytes).ok();
    let request = Request::from_parts(parts, axum::body::Body::from(bytes));
    let Some(head) = head.filter(|h| h.method.as_deref() == Some("initialize")) else {
        return next.run(request).await;
    };
    let _turn = cap.opening.lock().await;
    let open = cap.manager.sessions.read().await.len();
    if open < cap.max {
        cap.peak.fetch_max(open + 1, Ordering::Relaxed);
        return next.run(request).await;
    }
    let refused = cap.refused.fetch_add(1, Ordering::Relaxed) + 1;
    // One line per doubling: a flood of refusals cannot flood the log.
    if refused.is_power_of_two() {
        tracing::warn!(
            "refused a new session: {open} are open (--max-sessions {}); {refused} refused so far",
            cap.max
        );
    }
    let body = serde_json::json!({
        "jsonrpc": "2.0",
        "id": head.id,
        "error": {
            "code": -32000,
            "message": format!(
                "kura: {open} sessions are open, the most this server keeps (--max-sessions); \
                 end one (DELETE /mcp) or retry when one has been idle for the idle time"
            ),
            "data": {"open_sessions": open, "max_sessions": cap.max},
        }
    });
    (
        StatusCode::SERVICE_UNAVAILABLE,
        [
            (header::CONTENT_TYPE, "application/json"),
            (header::RETRY_AFTER, "60"),
        ],
        body.to_string(),
    )
        .into_response()
}

/// Bearer tokens, kept as SHA-256 digests (comparing digests in constant
/// time tells nothing of a token's length or prefix), each with the
/// profile its holder is served under.
#[derive(Clone, Default)]
pub struct Tokens(Arc<Vec<([u8; 32], Profile)>>);

fn digest(token: &str) -> [u8; 32] {
    Sha256::digest(token.as_bytes()).into()
}

fn checked(token: &str) -> Result<&str, String> {
    if token.chars().count() < TOKEN_MIN_CHARS || token.chars().any(char::is_whitespace) {
        return Err(format!(
            "a token must be at least {TOKEN_MIN_CHARS} characters without spaces"
        ));
    }
    Ok(token)
}

impl Tokens {
    /// A token file: one token per line, optionally followed by its
    /// profile (`read_only`, `tools=manual,vault_read`); blank lines and
    /// `#` comments are skipped. A token on two lines is refused: which of
    /// its profiles would hold is not something to guess.
    pub fn parse(text: &str, catalog: Catalog) -> Result<Tokens, String> {
        let mut tokens: Vec<([u8; 32], Profile)> = Vec::new();
        let mut lines = Vec::new();
        for (n, line) in text.lines().enumerate() {
            let mut words = line.split_whitespace();
            let Some(token) = words.next().filter(|w| !w.starts_with('#')) else {
                continue;
            };
            let at = |e: String| format!("line {}: {e}", n + 1);
            let profile = Profile::parse(words, catalog).map_err(at)?;
            let d = digest(checked(token).map_err(at)?);
            if let Some(i) = tokens.iter().position(|(t, _)| *t == d) {
                return Err(at(format!("the token of line {} again", lines[i])));
            }
            tokens.push((d, profile));
            lines.push(n + 1);
        }
        Self::nonempty(tokens)
    }

    /// Comma-separated tokens (`KURA_HTTP_TOKENS`), each served everything.
    pub fn list(text: &str) -> Result<Tokens, String> {
        let tokens = text
            .split(',')
            .map(str::trim)
            .filter(|t| !t.is_empty())
            .map(|t| Ok((digest(checked(t)?), Profile::default())))
            .collect::<Result<Vec<_>, String>>()?;
        Self::nonempty(tokens)
    }

    fn nonempty(tokens: Vec<([u8; 32], Profile)>) -> Result<Tokens, String> {
        if tokens.is_empty() {
            return Err("no token given".into());
        }
        Ok(Tokens(Arc::new(tokens)))
    }

    pub fn is_empty(&self) -> bool {
        self.0.is_empty()
    }

    /// How many tokens there are.
    pub fn len(&self) -> usize {
        self.0.len()
    }

    /// The profile of `presented` if it is one of the tokens (every token
    /// is compared, whichever matches).
    pub fn admits(&self, presented: &str) -> Option<Profile> {
        let d = digest(presented);
        let mut found = 0u64;
        for (i, (t, _)) in self.0.iter().enumerate() {
            found.conditional_assign(&(i as u64 + 1), t.ct_eq(&d));
        }
        (found > 0).then(|| self.0[found as usize - 1].1.clone())
    }
}

/// Who may pass: the static tokens, and access tokens OAuth accepts.
#[derive(Clone)]
struct Gate {
    tokens: Tokens,
    oauth: Option<Arc<OAuth>>,
}

impl Gate {
    /// The profile of `presented`, or why it does not pass. A static token
    /// is looked up first (no network); anything else goes to OAuth.
    async fn admit(&self, presented: Option<&str>) -> Result<Profile, Refusal> {
        let Some(token) = presented else {
            return Err(Refusal::Invalid(String::new()));
        };
        if let Some(profile) = self.tokens.admits(token) {
            return Ok(profile);
        }
        match &self.oauth {
            Some(o) => o.admit(token).await,
            None => Err(Refusal::Invalid("unknown token".into())),
        }
    }

    /// 401 (no token, or one not accepted) or 403 (a good token without a
    /// scope that grants anything), with the challenge RFC 6750 and RFC
    /// 9728 describe: where the metadata is, what went wrong, which scopes
    /// would do.
    fn refuse(&self, refusal: Refusal, presented: bool) -> Response {
        let mut challenge = String::from("Bearer");
        let mut params: Vec<String> = Vec::new();
        let (status, text) = match &refusal {
            Refusal::Invalid(why) if presented => {
                params.push("error=\"invalid_token\"".into());
                if !why.is_empty() {
                    params.push(format!("error_description=\"{why}\""));
                }
                (
                    StatusCode::UNAUTHORIZED,
                    format!("kura: the bearer token is not accepted: {why}\n"),
                )
            }
            Refusal::Invalid(_) => (
                StatusCode::UNAUTHORIZED,
                "kura: a valid bearer token is required (Authorization: Bearer TOKEN)\n".to_owned(),
            ),
            Refusal::Scope => {
                params.push("error=\"insufficient_scope\"".into());
                (
                    StatusCode::FORBIDDEN,
                    "kura: the token holds none of the scopes this server grants\n".to_owned(),
                )
            }
        };
        if let Some(o) = &self.oauth {
            let c = o.config();
            if refusal == Refusal::Scope || !presented {
                params.push(format!("scope=\"{}\"", c.scope_names().join(" ")));
            }
            params.push(format!("resource_metadata=\"{}\"", c.metadata_url()));
        }
        if !params.is_empty() {
            challenge.push(' ');
            challenge.push_str(&params.join(", "));
        }
        (status, [(header::WWW_AUTHENTICATE, challenge)], text).into_response()
    }
}

async fn require_token(State(gate): State<Gate>, mut request: Request, next: Next) -> Response {
    let presented = request
        .headers()
        .get(header::AUTHORIZATION)
        .and_then(|v| v.to_str().ok())
        .and_then(|v| v.strip_prefix("Bearer "))
        .map(str::trim)
        .map(str::to_owned);
    match gate.admit(presented.as_deref()).await {
        Ok(profile) => {
            // rmcp hands the request's parts to each handler: the tools
            // listed and callable follow this token's profile.
            request.extensions_mut().insert(profile);
            next.run(request).await
        }
        Err(refusal) => gate.refuse(refusal, presented.is_some()),
    }
}

/// The Protected Resource Metadata document, readable by anyone (a
/// browser-based client fetches it from another origin).
async fn resource_metadata(State(oauth): State<Arc<OAuth>>) -> Response {
    (
        [
            (header::CONTENT_TYPE, "application/json"),
            (header::ACCESS_CONTROL_ALLOW_ORIGIN, "*"),
        ],
        oauth.config().metadata().to_string(),
    )
        .into_response()
}

/// The profile the HTTP layer attached to this request (none over stdio).
pub(super) fn profile_of(extensions: &rmcp::model::Extensions) -> Option<&Profile> {
    extensions
        .get::<axum::http::request::Parts>()
        .and_then(|parts| parts.extensions.get::<Profile>())
}

/// The MCP session of this request (none over stdio).
pub(super) fn session_of(extensions: &rmcp::model::Extensions) -> Option<String> {
    extensions
        .get::<axum::http::request::Parts>()
        .and_then(|parts| parts.headers.get("mcp-session-id"))
        .and_then(|v| v.to_str().ok())
        .map(str::to_owned)
}

/// rmcp answers a session's DELETE with 202; the spec names no code, and
/// the Python SDK logs a failed termination for anything but 200 or 204,
/// so an ended session is 204 No Content.
async fn session_ended(request: Request, next: Next) -> Response {
    let delete = request.method() == axum::http::Method::DELETE;
    let mut response = next.run(request).await;
    if delete && response.status() == StatusCode::ACCEPTED {
        *response.status_mut() = StatusCode::NO_CONTENT;
    }
    response
}

async fn healthz() -> impl IntoResponse {
    (
        [(header::CONTENT_TYPE, "application/json")],
        "{\"status\":\"ok\"}\n",
    )
}

/// Serve `app` on `listener` (bound before the process confined itself)
/// until SIGTERM or SIGINT; then stop taking requests, end the sessions and
/// wait for the tool calls still running.
pub async fn serve_http(
    app: Arc<App>,
    listener: std::net::TcpListener,
    options: HttpOptions,
) -> anyhow::Result<()> {
    app.index_in_background();
    let _watch = app.plugins.watch();
    reload_on_sighup(app.plugins.clone());
    let stop = CancellationToken::new();
    let options_oauth = options.oauth.clone();
    let (router, calls, cap) = service(app, options, stop.clone());
    tokio::spawn(give_back_memory(cap, stop.clone()));
    listener.set_nonblocking(true)?;
    let listener = tokio::net::TcpListener::from_std(listener)?;
    // The address a client or test connects to (a port 0 is resolved here).
    tracing::info!("{SERVING_AT}http://{}/mcp", listener.local_addr()?);
    if let Some(o) = &options_oauth {
        let c = o.config();
        tracing::info!(
            "OAuth: access tokens from {} for {} (scopes {}); metadata at {}; the issuer's host is the only one kura connects to",
            c.issuer(),
            c.resource(),
            c.scope_names().join(", "),
            c.metadata_url()
        );
    }
    calls.announce();
    let shutdown = shutdown_signal();
    axum::serve(listener, router)
        .with_graceful_shutdown(async move {
            let signal = shutdown.await;
            tracing::info!("{signal}: shutting down");
            stop.cancel();
        })
        .await?;
    calls.drain().await;
    Ok(())
}

/// The whole HTTP face of `app` — tokens, `/healthz`, the MCP sessions —
/// as one service: what [`serve_http`] serves, for a caller without a
/// socket (the HTTP fuzz target). Cancelling `stop` ends the sessions.
pub fn router(app: Arc<App>, options: HttpOptions, stop: CancellationToken) -> Router {
    service(app, options, stop).0
}

/// Once sessions have ended, hand the memory they held back to the
/// system. glibc's allocator keeps what a burst of sessions freed (about
/// 45 KiB each) for reuse, so a server that once held a thousand idle
/// sessions would stay that size for good; every 30 s, if fewer sessions
/// are open than at the peak since the last look, `malloc_trim` returns the
/// free pages.
async fn give_back_memory(cap: Arc<SessionCap>, stop: CancellationToken) {
    let mut every = tokio::time::interval(Duration::from_secs(30));
    loop {
        tokio::select! {
            _ = every.tick() => {}
            () = stop.cancelled() => return,
        }
        let open = cap.manager.sessions.read().await.len();
        if cap.peak.swap(open, Ordering::Relaxed) > open {
            let _ = tokio::task::spawn_blocking(crate::heap::give_back).await;
        }
    }
}

/// [`router`], the gate its tool calls wait at, and its session cap.
fn service(
    app: Arc<App>,
    options: HttpOptions,
    stop: CancellationToken,
) -> (Router, Arc<Calls>, Arc<SessionCap>) {
    // One gate for every session: the limit is the server's, not a client's.
    let calls = Calls::for_config(&app.config);
    let mut announcing = KuraServer::new(app.clone());
    announcing.announce();
    let announcers = announcing.announcers;
    let mut sessions = LocalSessionManager::default();
    sessions.session_config.keep_alive = Some(options.idle);
    let sessions = Arc::new(sessions);
    let cap = Arc::new(SessionCap {
        manager: sessions.clone(),
        max: options.max_sessions.max(1),
        max_body_bytes: options.max_body_bytes,
        opening: tokio::sync::Mutex::new(()),
        refused: AtomicU64::new(0),
        peak: AtomicUsize::new(0),
    });
    let mut defaults = StreamableHttpServerConfig::default();
    // rmcp's loopback names, and the names this server is reached by.
    let mut hosts = std::mem::take(&mut defaults.allowed_hosts);
    hosts.extend(options.extra_hosts);
    // Pages served from this machine may call it; any other origin (a
    // rebinding page's) is refused.
    let origins = LOOPBACK_ORIGINS
        .map(String::from)
        .into_iter()
        .chain(options.extra_origins);
    let config = defaults
        .with_allowed_hosts(hosts)
        .with_allowed_origins(origins)
        .enforce_origin_validation()
        .with_max_request_body_bytes(options.max_body_bytes)
        .with_cancellation_token(stop.child_token());
    let factory = {
        let (app, calls) = (app.clone(), calls.clone());
        move || {
            let mut server = KuraServer::new(app.clone());
            server.calls = calls.clone();
            server.announcers = announcers.clone();
            Ok(server)
        }
    };
    let mcp = StreamableHttpService::new(factory, sessions, config);
    let mut router = Router::new()
        .route_service("/mcp", mcp)
        .layer(middleware::from_fn(session_ended))
        .layer(middleware::from_fn_with_state(cap.clone(), cap_sessions));
    if !options.tokens.is_empty() || options.oauth.is_some() {
        let gate = Gate {
            tokens: options.tokens.clone(),
            oauth: options.oauth.clone(),
        };
        router = router.layer(middleware::from_fn_with_state(gate, require_token));
    }
    // Added after the token layer: a load balancer's probe and a client
    // looking for where to get a token need none.
    let mut router = router.route("/healthz", get(healthz));
    if let Some(oauth) = &options.oauth {
        for path in oauth.config().metadata_paths() {
            router = router.route(&path, get(resource_metadata).with_state(oauth.clone()));
        }
    }
    (router, calls, cap)
}
