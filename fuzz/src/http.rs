//! The HTTP request path (`kura serve --http`): any request — method, path,
//! headers, body — through the whole service (token check, Host and Origin
//! checks, rmcp's sessions, kura's handlers) over a real vault. Never a
//! panic, never a hang, never a server error; every refusal has a status.
//!
//! The input is a request written as text: `METHOD PATH` on the first line,
//! `Name: value` header lines, a blank line, the body. A request without a
//! `Host`, `Authorization`, `Content-Type` or `Accept` header gets a valid
//! one, so the fuzzer spends its time past the front door.

use std::sync::{Arc, OnceLock};
use std::time::Duration;

use axum::body::Body;
use axum::http::{Method, Request};
use tokio_util::sync::CancellationToken;
use tower::ServiceExt;

const TOKEN: &str = "fuzz-token-0123456789abcdef";
const READER: &str = "fuzz-reader-0123456789abcdef";

struct World {
    rt: tokio::runtime::Runtime,
    router: axum::Router,
    _dir: tempfile::TempDir,
}

fn world() -> &'static World {
    static WORLD: OnceLock<World> = OnceLock::new();
    WORLD.get_or_init(|| {
        let dir = tempfile::tempdir().unwrap();
        let vault = dir.path().join("vault");
        std::fs::create_dir_all(vault.join("daily")).unwrap();
        std::fs::write(vault.join("note.md"), "# Note\n\nSome text.\n").unwrap();
        let config = kura::config::Config {
            vault_root: Some(vault),
            state_dir: Some(dir.path().join("state")),
            ..Default::default()
        };
        let rt = tokio::runtime::Builder::new_multi_thread()
            .worker_threads(2)
            .enable_all()
            .build()
            .unwrap();
        let _entered = rt.enter();
        let app = Arc::new(kura::app::App::start(config, kura::CATALOG).expect("the app starts"));
        let options = kura::server::HttpOptions {
            oauth: None,
            tokens: kura::server::Tokens::parse(
                &format!("{TOKEN}\n{READER} read_only\n"),
                kura::CATALOG,
            )
            .unwrap(),
            extra_hosts: Vec::new(),
            extra_origins: Vec::new(),
            idle: Duration::from_secs(60),
            // Low, so that the fuzzer also reaches the refusal past it.
            max_sessions: 64,
            max_body_bytes: 1 << 20,
        };
        let router = kura::server::router(app, options, CancellationToken::new());
        World {
            rt,
            router,
            _dir: dir,
        }
    })
}

pub fn run(data: &[u8]) {
    let text = String::from_utf8_lossy(data);
    let (head, body) = text.split_once("\n\n").unwrap_or((&text, ""));
    let mut lines = head.lines();
    let first = lines.next().unwrap_or_default();
    let (method, path) = first.split_once(' ').unwrap_or(("POST", "/mcp"));
    let Ok(method) = Method::from_bytes(method.as_bytes()) else {
        return;
    };
    let mut request = Request::builder().method(method).uri(path);
    let mut given = Vec::new();
    for line in lines {
        if let Some((name, value)) = line.split_once(':') {
            given.push(name.trim().to_ascii_lowercase());
            request = request.header(name.trim(), value.trim());
        }
    }
    let bearer = format!("Bearer {TOKEN}");
    for (name, value) in [
        ("host", "127.0.0.1"),
        ("authorization", bearer.as_str()),
        ("content-type", "application/json"),
        ("accept", "application/json, text/event-stream"),
    ] {
        if !given.iter().any(|g| g == name) {
            request = request.header(name, value);
        }
    }
    let Ok(request) = request.body(Body::from(body.to_owned())) else {
        return;
    };
    let w = world();
    let response = w.rt.block_on(async {
        tokio::time::timeout(Duration::from_secs(10), w.router.clone().oneshot(request)).await
    });
    let response = response
        .expect("an answer within 10 s")
        .expect("infallible");
    assert!(
        !response.status().is_server_error(),
        "{} for {first:?}",
        response.status()
    );
}
