//! `kura doctor`: run as a user would, it says what works and what does
//! not, each problem with its fix, and exits non-zero when kura could not
//! serve as configured.

use std::path::Path;
use std::process::{Command, Output};

use kura_tests::kura_bin;
use serde_json::Value;

fn doctor(home: &Path, args: &[&str]) -> (Output, Value) {
    let mut cmd = Command::new(kura_bin());
    cmd.arg("doctor").arg("--json").args(args);
    for var in kura::config::env_names() {
        cmd.env_remove(var);
    }
    let out = cmd
        .env("HOME", home)
        .env_remove("XDG_CONFIG_HOME")
        .env_remove("CODEX_HOME")
        .output()
        .unwrap();
    let json = serde_json::from_slice(&out.stdout).unwrap_or_else(|_| {
        panic!(
            "{}\n{}",
            String::from_utf8_lossy(&out.stdout),
            String::from_utf8_lossy(&out.stderr)
        )
    });
    (out, json)
}

/// The findings of `area` with `status`, as text.
fn said(report: &Value, area: &str, status: &str) -> Vec<String> {
    report["findings"]
        .as_array()
        .unwrap()
        .iter()
        .filter(|f| f["area"] == area && f["status"] == status)
        .map(|f| format!("{} → {}", f["says"], f["fix"]))
        .collect()
}

#[test]
fn a_sound_setup_passes_and_names_what_it_found() {
    let home = kura_tests::scratch::folder();
    let vault = home.path().join("vault");
    std::fs::create_dir_all(&vault).unwrap();
    let state = home.path().join("state");
    let v = vault.display().to_string();
    let s = state.display().to_string();
    // kura in Cursor's configuration first.
    let setup = Command::new(kura_bin())
        .args(["setup", "cursor", "--vault-root", &v])
        .env("HOME", home.path())
        .env_remove("XDG_CONFIG_HOME")
        .output()
        .unwrap();
    assert!(setup.status.success(), "{setup:?}");
    let (out, report) = doctor(
        home.path(),
        &[
            "--config",
            "/dev/null",
            "--vault-root",
            &v,
            "--state-dir",
            &s,
        ],
    );
    assert!(out.status.success(), "{report:#}");
    assert_eq!(report["failed"], false);
    let roots = said(&report, "roots", "ok");
    assert!(
        roots
            .iter()
            .any(|r| r.contains(&v) && r.contains("read-write")),
        "{roots:?}"
    );
    // The sandbox line says what this kernel enforces, as `serve` logs it.
    let sandbox = |status| said(&report, "sandbox", status).join(" ");
    match super::sandbox::landlock_abi() {
        0 => assert!(sandbox("warn").contains("not available"), "{report:#}"),
        1..=5 => assert!(sandbox("warn").contains("partly enforced"), "{report:#}"),
        _ => assert!(sandbox("ok").contains("fully enforced"), "{report:#}"),
    }
    let clients = said(&report, "clients", "ok");
    assert!(
        clients
            .iter()
            .any(|c| c.contains("Cursor: kura is configured")),
        "{clients:?}"
    );
    // Without the model installed: a warning with the command that fixes it.
    let model = said(&report, "model", "warn");
    assert!(
        model.iter().any(|m| m.contains("kura models install")),
        "{model:?}"
    );
}

#[test]
fn a_missing_root_or_an_unreachable_issuer_fails_with_its_fix() {
    let home = kura_tests::scratch::folder();
    let gone = home.path().join("no-such-vault").display().to_string();
    let (out, report) = doctor(
        home.path(),
        &["--config", "/dev/null", "--vault-root", &gone],
    );
    assert!(!out.status.success());
    assert_eq!(report["failed"], true);
    let failed = said(&report, "roots", "fail");
    assert!(
        failed
            .iter()
            .any(|f| f.contains(&gone) && f.contains("create the folder")),
        "{failed:?}"
    );

    let vault = home.path().join("vault");
    std::fs::create_dir_all(&vault).unwrap();
    let oauth = home.path().join("oauth.toml");
    std::fs::write(
        &oauth,
        "issuer = \"http://127.0.0.1:1\"\nresource = \"http://127.0.0.1:8080/mcp\"\n[[scope]]\nname = \"kura:all\"\n",
    )
    .unwrap();
    let v = vault.display().to_string();
    let o = oauth.display().to_string();
    let (out, report) = doctor(
        home.path(),
        &["--config", "/dev/null", "--vault-root", &v, "--oauth", &o],
    );
    assert!(!out.status.success());
    let failed = said(&report, "oauth", "fail");
    assert!(
        failed.iter().any(|f| f.contains("cannot be reached")),
        "{report:#}"
    );

    // A token file with a short token, and a port another program holds.
    let tokens = home.path().join("tokens");
    std::fs::write(&tokens, "a-good-token-0123456789\nshort\n").unwrap();
    let held = std::net::TcpListener::bind("127.0.0.1:0").unwrap();
    let addr = held.local_addr().unwrap().to_string();
    let t = tokens.display().to_string();
    let (out, report) = doctor(
        home.path(),
        &[
            "--config",
            "/dev/null",
            "--vault-root",
            &v,
            "--token-file",
            &t,
            "--http",
            &addr,
        ],
    );
    assert!(!out.status.success());
    let failed = said(&report, "http", "fail");
    assert!(failed.iter().any(|f| f.contains("line 2")), "{report:#}");
    assert!(failed.iter().any(|f| f.contains(&addr)), "{report:#}");
}

/// The locks in force are listed: the locked folders and each note whose
/// front matter locks it.
#[test]
fn doctor_lists_the_locks_in_force() {
    let home = kura_tests::scratch::folder();
    let vault = home.path().join("vault");
    std::fs::create_dir_all(vault.join("notes")).unwrap();
    std::fs::write(
        vault.join("notes/mine.md"),
        "---\nlocked: true\n---\n# Mine\n",
    )
    .unwrap();
    std::fs::write(vault.join("notes/free.md"), "# Free\n").unwrap();
    let (v, s) = (
        vault.display().to_string(),
        home.path().join("state").display().to_string(),
    );
    let (_, report) = doctor(
        home.path(),
        &[
            "--vault-root",
            &v,
            "--state-dir",
            &s,
            "--set",
            "locked_folders=journal",
        ],
    );
    let locks = said(&report, "locks", "ok");
    assert_eq!(locks.len(), 1, "{report}");
    assert!(
        locks[0].contains("`journal`") && locks[0].contains("notes/mine.md"),
        "{locks:?}"
    );
    assert!(!locks[0].contains("free.md"), "{locks:?}");
}

/// A history over its size that the floor keeps there is said, with the
/// settings that would let retention cut deeper; without a floor it is not.
#[test]
fn doctor_says_when_the_floor_holds_a_history_over_its_size() {
    let home = kura_tests::scratch::folder();
    let vault = home.path().join("vault");
    std::fs::create_dir_all(&vault).unwrap();
    let (v, s) = (
        vault.display().to_string(),
        home.path().join("state").display().to_string(),
    );
    let roots = ["--vault-root", &v, "--state-dir", &s];
    // The person's big note, twice replaced by the agent: both versions
    // (random text, about 600 KB packed each) go into the history.
    let mut rng = fastrand::Rng::with_seed(67);
    for _ in 0..2 {
        let big: String = (0..800_000).map(|_| rng.alphanumeric()).collect();
        std::fs::write(vault.join("big.md"), big).unwrap();
        let mut call = Command::new(kura_bin());
        call.arg("call").args(roots).args([
            "vault_write",
            r#"{"path": "big.md", "content": "small\n", "mode": "overwrite"}"#,
        ]);
        kura_tests::succeeded(&mut call);
    }
    let (_, held) = doctor(
        home.path(),
        &[&roots[..], &["--set", "history_max_mb=1"]].concat(),
    );
    let warned = said(&held, "history", "warn");
    assert_eq!(warned.len(), 1, "{held}");
    assert!(
        warned[0].contains("held there by the floor") && warned[0].contains("HISTORY_KEEP_CHANGES"),
        "{warned:?}"
    );
    let unfloored = [
        &roots[..],
        &[
            "--set",
            "history_max_mb=1",
            "--set",
            "history_keep_changes=0",
            "--set",
            "history_keep_days=0",
        ],
    ]
    .concat();
    let (_, free) = doctor(home.path(), &unfloored);
    assert!(said(&free, "history", "warn").is_empty(), "{free}");
    let ok = said(&free, "history", "ok");
    assert!(
        ok.len() == 1 && ok[0].contains("vault: ") && ok[0].contains("MB of packs"),
        "{free}"
    );
}

/// `kura doctor` names the time zone Bases' dates are in and where it
/// comes from: `KURA_TZ` (kura's own), `TZ`, or the machine's.
#[test]
fn doctor_names_the_time_zone_dates_are_in() {
    let home = kura_tests::scratch::folder();
    let vault = home.path().join("vault");
    std::fs::create_dir_all(&vault).unwrap();
    let (v, s) = (
        vault.display().to_string(),
        home.path().join("state").display().to_string(),
    );
    let mut cmd = Command::new(kura_bin());
    cmd.args(["doctor", "--json", "--vault-root", &v, "--state-dir", &s])
        .env("HOME", home.path())
        .env("KURA_TZ", "America/Santiago")
        .env("TZ", "Europe/Berlin");
    let out = cmd.output().unwrap();
    let report: Value = serde_json::from_slice(&out.stdout).unwrap();
    let zone = said(&report, "time zone", "ok");
    assert_eq!(zone.len(), 1, "{report}");
    assert!(
        zone[0].contains("America/Santiago (KURA_TZ)") && zone[0].contains("UTC-0"),
        "{zone:?}"
    );
}
