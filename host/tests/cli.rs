//! The command line itself. (Being an integration test of the `kura`
//! package, this also makes `cargo test --workspace` build the `kura`
//! binary that the end-to-end suites in `tests/` drive.)

use std::process::Command;

fn kura() -> Command {
    Command::new(env!("CARGO_BIN_EXE_kura"))
}

#[test]
fn help_names_every_command() {
    let out = kura().arg("--help").output().unwrap();
    assert!(out.status.success());
    let help = String::from_utf8(out.stdout).unwrap();
    for cmd in ["serve", "demo", "call", "bench"] {
        assert!(help.contains(cmd), "{help}");
    }
}

#[test]
fn a_bad_setting_is_one_line_on_stderr_and_nothing_on_stdout() {
    let out = kura()
        .args(["call", "--set", "no_such_setting=1", "vault_ls"])
        .output()
        .unwrap();
    assert_eq!(out.status.code(), Some(2));
    assert!(out.stdout.is_empty());
    let err = String::from_utf8(out.stderr).unwrap();
    assert_eq!(
        err.lines().filter(|l| l.starts_with("kura:")).count(),
        1,
        "{err}"
    );
    assert!(err.contains("no_such_setting"), "{err}");
}
