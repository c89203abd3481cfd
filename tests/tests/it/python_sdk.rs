//! kura driven by a client nobody here wrote: the official MCP Python SDK,
//! both lines (1.x sends `initialize`, 2.x sends `server/discover` first),
//! over stdio and over Streamable HTTP with a bearer token.
//! Each line gets its own virtual environment under `target/toolchains/`,
//! created once under a file lock (`python3 -m venv` + `pip install
//! mcp...`); set `KURA_PYTHON` to use another interpreter.

use std::path::Path;
use std::process::{Command, Stdio};

use kura_tests::{Fixture, http_url, kura_bin, toolchain, workspace};

use kura_tests::toolchain::{SDK_1X, SDK_2X};

const TOKEN: &str = "python-sdk-token-0123456789";

/// `kura serve --http` on the fixture's roots (as the suite's stdio
/// parameters), its URL read from the log.
fn serve_http(f: &Fixture) -> (std::process::Child, String) {
    let tokens = f.dir.path().join("tokens");
    std::fs::write(&tokens, format!("{TOKEN}\n")).unwrap();
    let state = f.dir.path().join("state");
    let mut cmd = Command::new(kura_bin());
    cmd.arg("serve")
        .arg("--config")
        .arg(f.dir.path().join("empty.toml"))
        .arg("--vault-root")
        .arg(f.vault())
        .arg("--vibe-root")
        .arg(f.vibe())
        .arg("--state-dir")
        .arg(&state)
        .args(["--http", "127.0.0.1:0", "--token-file"])
        .arg(&tokens);
    for var in kura::config::env_names() {
        cmd.env_remove(var);
    }
    let mut child = cmd
        .env_remove("KURA_HTTP_TOKENS")
        .env("HOME", &state)
        .stdin(Stdio::null())
        .stdout(Stdio::null())
        .stderr(Stdio::piped())
        .spawn()
        .expect("start kura --http");
    let url = http_url(&mut child);
    (child, url)
}

fn run_suite(python: &Path, expect_handshake: &str, http: bool) {
    let f = Fixture::new();
    let out = suite(python, &f, http, None);
    assert!(out.contains("10 passed, 0 failed"), "{out}");
    assert!(out.contains(expect_handshake), "{out}");
}

/// Run the suite on the fixture's roots (the linked vault's checks with
/// `linked`, the truth about the vault it holds); its output.
fn suite(python: &Path, f: &Fixture, http: bool, linked: Option<&Path>) -> String {
    let server = http.then(|| serve_http(f));
    let mut cmd = Command::new(python);
    if let Some(truth) = linked {
        cmd.env("KURA_SDK_LINKED", truth);
    }
    cmd.arg(workspace().join("tests/python/sdk_suite.py"))
        .arg(kura_bin())
        .arg(f.vault())
        .arg(f.dir.path().join("state"))
        .arg(f.dir.path().join("empty.toml"))
        .arg(f.vibe());
    if let Some((_, url)) = &server {
        cmd.arg(url).arg(TOKEN);
    }
    let out = cmd.output().expect("run the Python suite");
    if let Some((mut child, _)) = server {
        // SIGTERM: the server stops taking requests and exits cleanly.
        unsafe { libc::kill(child.id() as i32, libc::SIGTERM) };
        let status = child.wait().unwrap();
        assert!(status.success(), "kura --http ended with {status}");
    }
    let stdout = String::from_utf8_lossy(&out.stdout);
    let stderr = String::from_utf8_lossy(&out.stderr);
    assert!(
        out.status.success(),
        "Python SDK suite failed:\n{stdout}\n{stderr}"
    );
    // The SDK ends its HTTP session with a DELETE and warns about any
    // answer but 200 or 204: a user's client log should stay quiet.
    assert!(
        !stderr.contains("Session termination failed"),
        "the SDK complained about kura's answer to DELETE:\n{stderr}"
    );
    stdout.into_owned()
}

/// Both SDK lines on the generated linked vault: every note's links and
/// backlinks, orphans, broken links, a tag query and a hub's move, checked
/// against the generator's record.
fn run_linked(python: &Path) {
    let f = Fixture::new();
    std::fs::remove_dir_all(f.vault()).unwrap();
    std::fs::create_dir_all(f.vault()).unwrap();
    let truth = kura_tests::graph_vault::build(&f.vault(), &workspace().join("fixtures/corpora"));
    let file = f.dir.path().join("truth.json");
    std::fs::write(&file, truth.to_json().to_string()).unwrap();
    let out = suite(python, &f, false, Some(&file));
    assert!(out.contains("1 passed, 0 failed"), "{out}");
}

#[test]
fn python_sdk_1x_on_the_linked_vault() {
    run_linked(&toolchain::python_sdk(SDK_1X));
}

#[test]
fn python_sdk_2x_on_the_linked_vault() {
    run_linked(&toolchain::python_sdk(SDK_2X));
}

#[test]
fn python_sdk_1x_initialize_handshake() {
    let py = toolchain::python_sdk(SDK_1X);
    run_suite(&py, "sdk1 (protocol", false);
}

#[test]
fn python_sdk_2x_discover_handshake() {
    let py = toolchain::python_sdk(SDK_2X);
    run_suite(&py, "sdk2 (protocol 2026-07-28)", false);
}

#[test]
fn python_sdk_1x_over_streamable_http_with_a_token() {
    let py = toolchain::python_sdk(SDK_1X);
    run_suite(&py, "sdk1 (protocol", true);
}

#[test]
fn python_sdk_2x_over_streamable_http_with_a_token() {
    let py = toolchain::python_sdk(SDK_2X);
    run_suite(&py, "sdk2 (protocol 2026-07-28)", true);
}
