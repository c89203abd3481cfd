//! Per-slot grants, deny by default: a reranker granted one HTTP host calls
//! the scoring service the test runs on loopback, and one granted another
//! host cannot reach it; a reranker granted a folder reads its weights
//! there and nothing elsewhere; a slot sees only the environment variables
//! it is granted. The servers run sandboxed (Landlock), which must let the
//! granted call through and nothing more.

use std::io::{BufRead, BufReader, Read, Write};
use std::net::TcpListener;
use std::sync::Arc;
use std::sync::atomic::{AtomicUsize, Ordering};

use kura_tests::{Fixture, Kura, command, granted_wasm};
use rmcp::service::ClientLifecycleMode;
use serde_json::Value;

const QUERY: &str = "算出プロパティとは";

/// A scoring service on a loopback port: to a POST of candidate ids, one a
/// line, it answers a score for each, the last one highest. Counts the
/// requests it served.
struct Scorer {
    port: u16,
    served: Arc<AtomicUsize>,
}

impl Scorer {
    fn start() -> Scorer {
        let listener = TcpListener::bind("127.0.0.1:0").unwrap();
        let port = listener.local_addr().unwrap().port();
        let served = Arc::new(AtomicUsize::new(0));
        let count = served.clone();
        std::thread::spawn(move || {
            for stream in listener.incoming() {
                let Ok(mut stream) = stream else { continue };
                let mut reader = BufReader::new(stream.try_clone().unwrap());
                let mut length = 0;
                loop {
                    let mut line = String::new();
                    if reader.read_line(&mut line).unwrap_or(0) == 0 || line == "\r\n" {
                        break;
                    }
                    if let Some(v) = line.to_ascii_lowercase().strip_prefix("content-length:") {
                        length = v.trim().parse().unwrap_or(0);
                    }
                }
                let mut body = vec![0; length];
                if reader.read_exact(&mut body).is_err() {
                    continue;
                }
                let n = String::from_utf8_lossy(&body).lines().count();
                let scores: String = (0..n)
                    .map(|i| format!("{}\n", (i + 1) as f64 / n as f64))
                    .collect();
                count.fetch_add(1, Ordering::SeqCst);
                let _ = write!(
                    stream,
                    "HTTP/1.1 200 OK\r\ncontent-length: {}\r\nconnection: close\r\n\r\n{scores}",
                    scores.len()
                );
            }
        });
        Scorer { port, served }
    }

    fn served(&self) -> usize {
        self.served.load(Ordering::SeqCst)
    }
}

/// Serve the fixture's manuals with the granted reranker, `settings`
/// (`--set` values) and `env` in kura's environment.
async fn serve(f: &Fixture, settings: &[String], env: &[(&str, String)]) -> Kura {
    let manuals = f.manuals().display().to_string();
    let plugin = format!("reranker={}", granted_wasm().display());
    let mut args = vec![
        "--manuals-root",
        manuals.as_str(),
        "--plugin",
        plugin.as_str(),
    ];
    for s in settings {
        args.extend(["--set", s.as_str()]);
    }
    let mut cmd = command(&f.args(&args));
    for (k, v) in env {
        cmd.env(k, v);
    }
    Kura::start_command(
        cmd,
        ClientLifecycleMode::Initialize,
        std::process::Stdio::null(),
    )
    .await
}

fn warnings(found: &Value) -> String {
    found["warnings"].to_string()
}

#[tokio::test]
async fn a_granted_reranker_calls_its_service_and_an_ungranted_host_is_refused() {
    let f = Fixture::new();
    let scorer = Scorer::start();
    let env = [
        ("GRANTED_MODE", "http".to_owned()),
        ("GRANTED_URL", format!("127.0.0.1:{}/score", scorer.port)),
    ];
    let granted = [
        format!("plugins.reranker.http_hosts=127.0.0.1:{}", scorer.port),
        "plugins.reranker.env=GRANTED_MODE,GRANTED_URL".to_owned(),
    ];
    let k = serve(&f, &granted, &env).await;
    let found = k.find_reranked(QUERY).await;
    assert_eq!(found["applied"]["late_rerank"], "applied", "{found}");
    assert!(scorer.served() >= 1, "the service was called");
    k.stop().await;
    // Another port of the same host is another grant: the request fails
    // inside the component, the search says so, the service sees nothing.
    let before = scorer.served();
    let elsewhere = [
        format!("plugins.reranker.http_hosts=127.0.0.1:{}", scorer.port + 1),
        granted[1].clone(),
    ];
    let k = serve(&f, &elsewhere, &env).await;
    let found = k.find_reranked(QUERY).await;
    assert_eq!(found["applied"]["late_rerank"], "failed", "{found}");
    assert!(warnings(&found).contains("HttpRequestDenied"), "{found}");
    k.stop().await;
    assert_eq!(scorer.served(), before, "no request reached the service");
}

#[tokio::test]
async fn a_granted_folder_is_readable_and_nothing_else_is() {
    let f = Fixture::new();
    let weights = f.dir.path().join("weights");
    std::fs::create_dir_all(&weights).unwrap();
    std::fs::write(weights.join("weights.txt"), "0.25\n0.75\n").unwrap();
    // The component imports wasi:http: it is granted a host it never calls.
    let settings = |env: &str| {
        vec![
            format!("plugins.reranker.folder={}", weights.display()),
            "plugins.reranker.http_hosts=127.0.0.1:9".to_owned(),
            format!("plugins.reranker.env={env}"),
        ]
    };
    let k = serve(
        &f,
        &settings("GRANTED_MODE"),
        &[("GRANTED_MODE", "folder".into())],
    )
    .await;
    let found = k.find_reranked(QUERY).await;
    assert_eq!(found["applied"]["late_rerank"], "applied", "{found}");
    let scores: Vec<f64> = k
        .call(
            "manual_hits",
            serde_json::json!({"trace_id": found["trace_id"], "kind": "candidates", "limit": 1000}),
        )
        .await
        .ok()["items"]
        .as_array()
        .unwrap()
        .iter()
        .filter_map(|i| i["score"].as_f64())
        .collect();
    assert!(!scores.is_empty());
    k.stop().await;
    // The fixture's canary, outside the granted folder: not there for it.
    let canary = f.outside().join("canary.txt").display().to_string();
    let k = serve(
        &f,
        &settings("GRANTED_MODE,GRANTED_PROBE"),
        &[
            ("GRANTED_MODE", "folder".into()),
            ("GRANTED_PROBE", canary.clone()),
        ],
    )
    .await;
    let found = k.find_reranked(QUERY).await;
    assert_eq!(found["applied"]["late_rerank"], "failed", "{found}");
    assert!(
        warnings(&found).contains(&format!("cannot read {canary}")),
        "{found}"
    );
    k.stop().await;
    f.assert_canary_untouched();
}

#[tokio::test]
async fn a_slot_sees_only_the_environment_it_is_granted() {
    let f = Fixture::new();
    // Set in kura's environment, not granted.
    let k = serve(
        &f,
        &["plugins.reranker.http_hosts=127.0.0.1:9".to_owned()],
        &[("GRANTED_MODE", "folder".into())],
    )
    .await;
    let found = k.find_reranked(QUERY).await;
    assert_eq!(found["applied"]["late_rerank"], "failed", "{found}");
    assert!(
        warnings(&found).contains("GRANTED_MODE is not set"),
        "{found}"
    );
    k.stop().await;
}

#[tokio::test]
async fn a_component_that_imports_wasi_http_without_a_grant_stops_the_start_with_the_fix() {
    let f = Fixture::new();
    let manuals = f.manuals().display().to_string();
    let plugin = format!("reranker={}", granted_wasm().display());
    let out = command(&f.args(&["--manuals-root", &manuals, "--plugin", &plugin]))
        .stdin(std::process::Stdio::null())
        .output()
        .await
        .unwrap();
    let err = String::from_utf8_lossy(&out.stderr);
    assert!(!out.status.success(), "{err}");
    assert!(
        err.contains("which kura does not provide") && err.contains("plugins.<slot>.http_hosts"),
        "{err}"
    );
}
