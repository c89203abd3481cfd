//! Streamable HTTP (`kura serve --http ADDR`): the same tools, resources and
//! prompts as stdio, to many clients at once, from one `App` (one set of
//! indexes). rmcp's tower service speaks the protocol and its sessions
//! (closed after `idle` without a request), checks `Host` against the
//! allowed names (loopback by default: DNS rebinding) and `Origin` (refused
//! unless allowed: a browser page cannot drive it), and caps request bodies.
//! In front of it: bearer tokens (kept as SHA-256 digests, compared in
//! constant time; 401 without) and `/healthz`, which needs no token.

use std::sync::Arc;
use std::time::Duration;

use axum::Router;
use axum::extract::{Request, State};
use axum::http::{StatusCode, header};
use axum::middleware::{self, Next};
use axum::response::{IntoResponse, Response};
use axum::routing::get;
use rmcp::transport::streamable_http_server::session::local::LocalSessionManager;
use rmcp::transport::streamable_http_server::{StreamableHttpServerConfig, StreamableHttpService};
use sha2::{Digest, Sha256};
use subtle::ConstantTimeEq;
use tokio_util::sync::CancellationToken;

use super::{KuraServer, reload_on_sighup, shutdown_signal, vibe, wait_for_calls};
use crate::app::App;

/// The shortest token accepted: shorter ones are guessable.
pub const TOKEN_MIN_CHARS: usize = 16;

/// How an HTTP server is exposed.
pub struct HttpOptions {
    /// Empty: no authentication (`--no-auth`, loopback only).
    pub tokens: Tokens,
    /// `Host` names (or `host:port`) accepted besides none: loopback by default.
    pub allowed_hosts: Vec<String>,
    /// `Origin`s accepted (with scheme); a request with any other is refused.
    pub allowed_origins: Vec<String>,
    /// A session without a request for this long is closed.
    pub idle: Duration,
    pub max_body_bytes: usize,
}

/// Bearer tokens, kept as SHA-256 digests: comparing digests in constant
/// time tells nothing of a token's length or prefix.
#[derive(Clone, Default)]
pub struct Tokens(Arc<Vec<[u8; 32]>>);

fn digest(token: &str) -> [u8; 32] {
    Sha256::digest(token.as_bytes()).into()
}

impl Tokens {
    /// One token per line (or comma-separated); blank lines and `#`
    /// comments are skipped.
    pub fn parse(text: &str) -> Result<Tokens, String> {
        let mut digests = Vec::new();
        for token in text
            .lines()
            .map(str::trim)
            .filter(|l| !l.is_empty() && !l.starts_with('#'))
            .flat_map(|l| l.split(','))
            .map(str::trim)
            .filter(|t| !t.is_empty())
        {
            if token.chars().count() < TOKEN_MIN_CHARS || token.chars().any(char::is_whitespace) {
                return Err(format!(
                    "a token must be at least {TOKEN_MIN_CHARS} characters without spaces"
                ));
            }
            digests.push(digest(token));
        }
        if digests.is_empty() {
            return Err("no token given".into());
        }
        Ok(Tokens(Arc::new(digests)))
    }

    pub fn is_empty(&self) -> bool {
        self.0.is_empty()
    }

    /// Whether `presented` is one of the tokens (every token is compared).
    fn admits(&self, presented: &str) -> bool {
        let d = digest(presented);
        let mut ok = subtle::Choice::from(0);
        for t in self.0.iter() {
            ok |= t.ct_eq(&d);
        }
        ok.into()
    }
}

async fn require_token(State(tokens): State<Tokens>, request: Request, next: Next) -> Response {
    let presented = request
        .headers()
        .get(header::AUTHORIZATION)
        .and_then(|v| v.to_str().ok())
        .and_then(|v| v.strip_prefix("Bearer "))
        .map(str::trim);
    match presented {
        Some(t) if tokens.admits(t) => next.run(request).await,
        _ => (
            StatusCode::UNAUTHORIZED,
            [(header::WWW_AUTHENTICATE, "Bearer")],
            "kura: a valid bearer token is required (Authorization: Bearer TOKEN)\n",
        )
            .into_response(),
    }
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
    let calls: Arc<tokio::sync::RwLock<()>> = Arc::default();
    let announcer = app
        .domains
        .vibe
        .as_ref()
        .map(|v| vibe::Announcer::start(v.clone()));
    let stop = CancellationToken::new();
    let mut sessions = LocalSessionManager::default();
    sessions.session_config.keep_alive = Some(options.idle);
    let config = StreamableHttpServerConfig::default()
        .with_allowed_hosts(options.allowed_hosts)
        .with_allowed_origins(options.allowed_origins)
        .enforce_origin_validation()
        .with_max_request_body_bytes(options.max_body_bytes)
        .with_cancellation_token(stop.child_token());
    let factory = {
        let (app, calls) = (app.clone(), calls.clone());
        move || {
            let mut server = KuraServer::new(app.clone());
            server.calls = calls.clone();
            server.announcer = announcer.clone();
            Ok(server)
        }
    };
    let mcp = StreamableHttpService::new(factory, Arc::new(sessions), config);
    let mut router = Router::new().route_service("/mcp", mcp);
    if !options.tokens.is_empty() {
        router = router.layer(middleware::from_fn_with_state(
            options.tokens.clone(),
            require_token,
        ));
    }
    // Added after the token layer: a load balancer's probe needs none.
    let router = router.route("/healthz", get(healthz));
    listener.set_nonblocking(true)?;
    let listener = tokio::net::TcpListener::from_std(listener)?;
    // The address a client or test connects to (a port 0 is resolved here).
    tracing::info!("serving MCP at http://{}/mcp", listener.local_addr()?);
    let shutdown = shutdown_signal();
    axum::serve(listener, router)
        .with_graceful_shutdown(async move {
            let signal = shutdown.await;
            tracing::info!("{signal}: shutting down");
            stop.cancel();
        })
        .await?;
    wait_for_calls(&calls).await;
    Ok(())
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn only_a_listed_token_is_admitted() {
        let tokens = Tokens::parse(
            "# team\nalpha-0123456789abcdef\n\nbeta-0123456789abcdef, gamma-0123456789abcdef\n",
        )
        .unwrap();
        assert!(tokens.admits("alpha-0123456789abcdef"));
        assert!(tokens.admits("gamma-0123456789abcdef"));
        assert!(!tokens.admits("alpha-0123456789abcde"));
        assert!(!tokens.admits(""));
    }

    #[test]
    fn short_or_missing_tokens_are_refused() {
        assert!(Tokens::parse("short").is_err());
        assert!(Tokens::parse("# only a comment\n").is_err());
        assert!(Tokens::parse("has a space in it 0123456789").is_err());
    }
}
