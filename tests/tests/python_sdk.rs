//! kura driven by a client nobody here wrote: the official MCP Python SDK,
//! both lines (1.x sends `initialize`, 2.x sends `server/discover` first).
//! Each line gets its own virtual environment under `target/py/`, created
//! on first use (`python3 -m venv` + `pip install mcp...`); set
//! `KURA_PYTHON` to use another interpreter.

use std::path::{Path, PathBuf};
use std::process::Command;

use kura_tests::{Fixture, kura_bin, workspace};

fn venv(name: &str, requirement: &str) -> PathBuf {
    let dir = kura_bin()
        .parent()
        .unwrap()
        .parent()
        .unwrap()
        .join("py")
        .join(name);
    let python = dir.join("bin/python");
    let marker = dir.join(format!(
        ".installed-{}",
        requirement.replace(['<', '>', '=', ','], "_")
    ));
    if marker.exists() {
        return python;
    }
    let base = std::env::var("KURA_PYTHON").unwrap_or_else(|_| "python3".into());
    let ok = Command::new(&base)
        .args(["-m", "venv"])
        .arg(&dir)
        .status()
        .expect("python3 -m venv");
    assert!(ok.success(), "creating the venv {} failed", dir.display());
    let ok = Command::new(&python)
        .args([
            "-m",
            "pip",
            "install",
            "--quiet",
            "--disable-pip-version-check",
            requirement,
        ])
        .status()
        .expect("pip install");
    assert!(ok.success(), "pip install {requirement} failed");
    std::fs::write(&marker, b"").unwrap();
    python
}

fn run_suite(python: &Path, expect_handshake: &str) {
    let f = Fixture::new();
    let out = Command::new(python)
        .arg(workspace().join("tests/python/sdk_suite.py"))
        .arg(kura_bin())
        .arg(f.vault())
        .arg(f.dir.path().join("state"))
        .arg(f.dir.path().join("empty.toml"))
        .arg(f.vibe())
        .output()
        .expect("run the Python suite");
    let stdout = String::from_utf8_lossy(&out.stdout);
    let stderr = String::from_utf8_lossy(&out.stderr);
    assert!(
        out.status.success(),
        "Python SDK suite failed:\n{stdout}\n{stderr}"
    );
    assert!(stdout.contains("9 passed, 0 failed"), "{stdout}");
    assert!(stdout.contains(expect_handshake), "{stdout}");
}

#[test]
fn python_sdk_1x_initialize_handshake() {
    let py = venv("sdk1", "mcp>=1.20,<2");
    run_suite(&py, "sdk1 (protocol");
}

#[test]
fn python_sdk_2x_discover_handshake() {
    let py = venv("sdk2", "mcp>=2,<3");
    run_suite(&py, "sdk2 (protocol 2026-07-28)");
}
