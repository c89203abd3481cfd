//! The official MCP conformance suite (`@modelcontextprotocol/conformance`,
//! installed from npm with the Node 22 it needs) against `kura serve --http`
//! on the demo data: every server scenario that applies to kura passes.
//! The others call the suite's own reference fixtures (tools such as
//! `test_simple_text`, resources under `test://`, prompts such as
//! `test_simple_prompt`) or features kura does not offer (logging,
//! sampling, elicitation); README lists them.

use std::process::{Command, Stdio};

use kura_tests::{http_url, kura_bin, toolchain};

/// The server scenarios that apply to kura.
const APPLICABLE: [&str; 8] = [
    "server-initialize",
    "ping",
    "tools-list",
    "completion-complete",
    "resources-list",
    "prompts-list",
    "server-sse-multiple-streams",
    "dns-rebinding-protection",
];

/// How many checks the suite's summary says passed, if every one that ran
/// passed and none failed (`Passed: N/N, 0 failed`): a scenario that ran no
/// check has not passed.
fn checks_passed(stdout: &str) -> Option<u64> {
    stdout.lines().find_map(|line| {
        let rest = line.trim().strip_prefix("Passed: ")?;
        let (counts, rest) = rest.split_once(", ")?;
        let (passed, ran) = counts.split_once('/')?;
        let (passed, ran): (u64, u64) = (passed.parse().ok()?, ran.parse().ok()?);
        (rest.starts_with("0 failed") && passed == ran).then_some(passed)
    })
}

#[test]
fn a_summary_with_no_check_run_is_not_a_pass() {
    assert_eq!(checks_passed("Passed: 3/3, 0 failed, 0 warnings"), Some(3));
    assert_eq!(checks_passed("Passed: 0/0, 0 failed, 0 warnings"), Some(0));
    assert_eq!(checks_passed("Passed: 2/3, 1 failed, 0 warnings"), None);
    assert_eq!(checks_passed("nothing ran"), None);
}

#[test]
fn every_applicable_conformance_scenario_passes_over_streamable_http() {
    let (node, suite) = (toolchain::node_22(), toolchain::conformance());
    let home = kura_tests::scratch::folder();
    let mut kura = Command::new(kura_bin())
        .args(["serve", "--demo", "--http", "127.0.0.1:0", "--no-auth"])
        .env("HOME", home.path())
        .stdin(Stdio::null())
        .stdout(Stdio::null())
        .stderr(Stdio::piped())
        .spawn()
        .unwrap();
    let url = http_url(&mut kura);
    let mut failed = Vec::new();
    for scenario in APPLICABLE {
        let out = Command::new(&node)
            .arg(&suite)
            .args(["server", "--url", &url, "--scenario", scenario])
            .current_dir(home.path())
            .output()
            .unwrap();
        let stdout = String::from_utf8_lossy(&out.stdout);
        if !out.status.success() || checks_passed(&stdout).is_none_or(|n| n == 0) {
            failed.push(format!(
                "{scenario}:\n{stdout}\n{}",
                String::from_utf8_lossy(&out.stderr)
            ));
        }
    }
    unsafe { libc::kill(kura.id() as i32, libc::SIGTERM) };
    assert!(kura.wait().unwrap().success());
    assert!(failed.is_empty(), "{}", failed.join("\n\n"));
}
