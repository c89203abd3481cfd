//! Serving over this process's stdin and stdout, and the signals a server
//! process answers: SIGTERM and SIGINT end it, SIGHUP reloads components.

use std::sync::Arc;

use rmcp::ServiceExt;

use crate::app::App;
use crate::{KuraServer, framing};

pub(crate) fn reload_on_sighup(plugins: Arc<crate::plugins::Plugins>) {
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
    server.announce();
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
pub(crate) fn shutdown_signal() -> impl std::future::Future<Output = &'static str> {
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
