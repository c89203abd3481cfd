//! The MCP Inspector's CLI (installed from npm by the test setup) against
//! `kura serve --demo`, as a user checking the server would run it: the
//! strict listing finds nothing to warn about, and a failed call shows
//! kura's own error, not a schema complaint.

use std::process::{Command, Output};

use kura_tests::{kura_bin, toolchain};
use serde_json::Value;

fn inspector(args: &[&str]) -> Output {
    let home = kura_tests::scratch::folder();
    let mut cmd = Command::new(toolchain::inspector());
    cmd.arg("--cli")
        .args(args)
        .arg("--")
        .arg(kura_bin())
        .args(["serve", "--demo"])
        // No user config: the demo data only.
        .env("HOME", home.path());
    cmd.output().expect("the Inspector runs")
}

#[test]
fn the_inspector_strict_listing_has_no_error_and_no_warning() {
    let out = inspector(&["--method", "tools/list", "--strict"]);
    let stderr = String::from_utf8_lossy(&out.stderr);
    assert!(out.status.success(), "{stderr}");
    let complaints: Vec<&str> = stderr
        .lines()
        .filter(|l| {
            l.starts_with("Warning") || l.starts_with("Error") || l.contains("unknown format")
        })
        .collect();
    assert!(complaints.is_empty(), "{}", complaints.join("\n"));
    let listed: Value = serde_json::from_slice(&out.stdout).unwrap();
    let names: Vec<&str> = listed["tools"]
        .as_array()
        .unwrap()
        .iter()
        .map(|t| t["name"].as_str().unwrap())
        .collect();
    assert_eq!(names, kura::tools::names());
}

#[test]
fn the_inspector_shows_kuras_error_code() {
    for (tool, args, code) in [
        (
            "vault_read",
            &["path=nothing/here.md", "full=true"][..],
            "not_found",
        ),
        (
            "vault_create",
            &["path=.system/x.md", "content=x"][..],
            "forbidden",
        ),
    ] {
        let mut call = vec!["--method", "tools/call", "--tool-name", tool, "--tool-arg"];
        call.extend(args);
        let out = inspector(&call);
        let stdout = String::from_utf8_lossy(&out.stdout);
        let stderr = String::from_utf8_lossy(&out.stderr);
        assert!(
            !stdout.contains("must have required property")
                && !stderr.contains("must have required property"),
            "{tool}: the Inspector validated the error against the success schema:\n{stdout}\n{stderr}"
        );
        let shown = stdout.split("\n{\"error\"").next().unwrap();
        let result: Value = serde_json::from_str(shown)
            .unwrap_or_else(|e| panic!("{tool}: {e}\n{stdout}\n{stderr}"));
        assert_eq!(result["isError"], true, "{tool}: {result}");
        assert_eq!(
            result["structuredContent"]["error"]["code"], code,
            "{tool}: {result}"
        );
    }
}
