//! History and undo as an agent's client meets them: a whole session over
//! the official Python SDK — create, overwrite, replace-all, a section
//! rewritten, a note with backlinks moved, a folder deleted, a bridge copy
//! over a note, a vibe document rewritten — undone in one call per root,
//! every byte and every folder back as it was; and with the user's edit in
//! between, `conflict` and nothing changed.

use std::process::Command;

use kura_tests::{Fixture, kura_bin, succeeded, toolchain, workspace};
use serde_json::Value;

fn session(mode: &str) -> (Fixture, Value) {
    let f = Fixture::new();
    // Notes that link to the one the agent moves, in several forms.
    f.write(
        "notes/links.md",
        "# Links\n[[backup-guide]] and [[backup-guide#Restore|the drills]].\n[guide](../research/backup-guide.md)\n",
    );
    f.write("daily/2026-01-06.md", "- read [[backup-guide]]\n");
    let python = toolchain::python_sdk(toolchain::SDK_1X);
    let manuals = f.manuals().display().to_string();
    let stdout = succeeded(
        Command::new(python)
            .arg(workspace().join("tests/python/undo_session.py"))
            .arg(mode)
            .arg(f.vault())
            .arg(f.vibe())
            .arg(kura_bin())
            .args(f.vibe_args(&["--manuals-root", &manuals])),
    );
    let stdout = String::from_utf8_lossy(&stdout);
    let seen: Value = serde_json::from_str(stdout.trim()).unwrap();
    for call in seen["calls"].as_array().unwrap() {
        assert_eq!(
            call[1]["is_error"], false,
            "the session's calls succeed: {call}"
        );
    }
    assert_ne!(
        seen["session"], seen["start"],
        "the session changed the files"
    );
    (f, seen)
}

#[test]
fn a_whole_agent_session_is_undone_byte_for_byte() {
    let (_f, seen) = session("clean");
    let changes = seen["history"]["data"]["changes"].as_array().unwrap();
    assert_eq!(
        changes.len(),
        7,
        "one change per vault call: {}",
        seen["history"]
    );
    let tools: Vec<&str> = changes
        .iter()
        .map(|c| c["tool"].as_str().unwrap())
        .collect();
    assert_eq!(
        tools,
        [
            "bridge_copy_section",
            "vault_delete",
            "vault_move",
            "vault_edit",
            "vault_replace",
            "vault_write",
            "vault_create"
        ]
    );
    assert!(
        changes
            .iter()
            .all(|c| c["client"] == changes[0]["client"] && c["client"] != "")
    );
    // The move's link rewrites are part of the move.
    let moved: Vec<&str> = changes[2]["files"]
        .as_array()
        .unwrap()
        .iter()
        .map(|f| f["path"].as_str().unwrap())
        .collect();
    assert!(
        moved.contains(&"notes/links.md") && moved.contains(&"daily/2026-01-06.md"),
        "{moved:?}"
    );
    assert_eq!(seen["undo"]["is_error"], false, "{}", seen["undo"]);
    assert_eq!(
        seen["vibe_undo"]["is_error"], false,
        "{}",
        seen["vibe_undo"]
    );
    assert_eq!(
        seen["end"]["files"], seen["start"]["files"],
        "every byte back"
    );
    assert_eq!(
        seen["end"]["folders"], seen["start"]["folders"],
        "every folder back"
    );
}

#[test]
fn an_undo_over_the_user_s_edit_is_a_conflict_and_changes_nothing() {
    let (_f, seen) = session("conflict");
    let undo = &seen["undo"];
    assert_eq!(undo["is_error"], true, "{undo}");
    assert_eq!(undo["data"]["error"]["code"], "conflict", "{undo}");
    let files = undo["data"]["error"]["details"]["files"]
        .as_array()
        .unwrap();
    let named: Vec<&str> = files.iter().map(|f| f["path"].as_str().unwrap()).collect();
    assert_eq!(named, ["notes/welcome.md"], "{undo}");
    // The vault is as the user left it; the vibe workspace (no conflict
    // there) is undone.
    let vault = |s: &Value| -> Vec<(String, Value)> {
        s["files"]
            .as_object()
            .unwrap()
            .iter()
            .filter(|(k, _)| k.starts_with("vault/"))
            .map(|(k, v)| (k.clone(), v.clone()))
            .collect()
    };
    assert_eq!(
        vault(&seen["end"]),
        vault(&seen["edited"]),
        "nothing undone in the vault"
    );
}
