//! Confirmations: a call its user may regret (here vault_delete of a
//! folder) is asked about through the client first, when the client can
//! ask (elicitation), by the official Python SDK; declined, nothing is
//! deleted and the call says so; a client that cannot ask gets the call
//! run as asked; `confirm = "never"` asks nothing; a plain note is deleted
//! without a question.

use std::process::Command;

use kura_tests::{Fixture, kura_bin, toolchain};
use serde_json::Value;

/// The questions asked and each call's outcome, with the client answering
/// `answer` (`none`: it cannot ask).
fn delete_with(f: &Fixture, answer: &str, extra: &[&str]) -> Value {
    delete_with_sdk(f, answer, extra, toolchain::SDK_1X)
}

/// [`delete_with`] through another line of the SDK.
fn delete_with_sdk(f: &Fixture, answer: &str, extra: &[&str], sdk: (&str, &str)) -> Value {
    let python = toolchain::python_sdk(sdk);
    let out = Command::new(python)
        .arg(kura_tests::workspace().join("tests/python/confirm.py"))
        .arg(answer)
        .arg(kura_bin())
        .args(f.args(extra))
        .output()
        .unwrap();
    let stdout = String::from_utf8_lossy(&out.stdout);
    assert!(
        out.status.success(),
        "{stdout}\n{}",
        String::from_utf8_lossy(&out.stderr)
    );
    serde_json::from_str(stdout.trim()).unwrap()
}

fn fixture() -> Fixture {
    let f = Fixture::new();
    f.write("old-drafts/a.md", "# a\n");
    f.write("old-drafts/b.md", "# b\n");
    f.write("inbox/one.md", "# one\n");
    f
}

#[test]
fn deleting_a_folder_asks_the_user_and_a_refusal_deletes_nothing() {
    let f = fixture();
    let seen = delete_with(&f, "decline", &[]);
    let asked = seen["asked"].as_array().unwrap();
    assert_eq!(asked.len(), 1, "only the folder is asked about: {seen}");
    let question = asked[0].as_str().unwrap();
    assert!(
        question.contains("`old-drafts`") && question.contains("2 file(s)"),
        "{question}"
    );
    assert_eq!(seen["calls"]["old-drafts"]["is_error"], true, "{seen}");
    assert!(
        seen["calls"]["old-drafts"]["text"]
            .as_str()
            .unwrap()
            .contains("declined"),
        "{seen}"
    );
    assert!(
        f.vault().join("old-drafts/a.md").exists(),
        "nothing deleted"
    );
    assert_eq!(seen["calls"]["inbox/one.md"]["is_error"], false, "{seen}");
    assert!(!f.vault().join("inbox/one.md").exists());

    let f = fixture();
    let seen = delete_with(&f, "accept", &[]);
    assert_eq!(seen["calls"]["old-drafts"]["is_error"], false, "{seen}");
    assert!(
        !f.vault().join("old-drafts").exists(),
        "deleted once accepted"
    );
}

/// The client can ask, but its answer is an error (the user closed the
/// dialog): the call is not run and says `cancelled`.
#[test]
fn a_question_that_fails_changes_nothing() {
    let f = fixture();
    let seen = delete_with(&f, "error", &[]);
    assert_eq!(seen["asked"].as_array().unwrap().len(), 1, "{seen}");
    let call = &seen["calls"]["old-drafts"];
    assert_eq!(call["is_error"], true, "{seen}");
    let text = call["text"].as_str().unwrap();
    assert!(
        text.contains("cancelled") && text.contains("no answer"),
        "{text}"
    );
    assert!(
        f.vault().join("old-drafts/a.md").exists() && f.vault().join("old-drafts/b.md").exists(),
        "nothing deleted"
    );
    // A plain note is not asked about and goes as asked.
    assert_eq!(seen["calls"]["inbox/one.md"]["is_error"], false, "{seen}");
}

/// A client that declares no elicitation gets the call as asked (every
/// change can be undone from its history), and `confirm = "never"` asks
/// nothing.
#[test]
fn a_client_that_cannot_ask_gets_the_call_as_asked() {
    let f = fixture();
    let seen = delete_with(&f, "none", &[]);
    assert_eq!(seen["asked"], serde_json::json!([]), "{seen}");
    assert_eq!(seen["calls"]["old-drafts"]["is_error"], false, "{seen}");
    assert!(!f.vault().join("old-drafts").exists());

    let f = fixture();
    let seen = delete_with(&f, "decline", &["--set", "confirm=never"]);
    assert_eq!(seen["asked"], serde_json::json!([]), "{seen}");
    assert!(!f.vault().join("old-drafts").exists());
}

/// On protocol 2026-07-28, which forbids server-to-client requests, kura
/// answers the call with `input_required` (an elicitation to fulfil); the
/// SDK 2.x asks its user and calls again with the answer.
#[test]
fn on_2026_07_28_the_question_travels_as_input_required() {
    let sdk2 = toolchain::SDK_2X;
    let f = fixture();
    let seen = delete_with_sdk(&f, "decline", &[], sdk2);
    assert_eq!(seen["protocol"], "2026-07-28", "{seen}");
    assert_eq!(seen["asked"].as_array().unwrap().len(), 1, "{seen}");
    assert_eq!(seen["calls"]["old-drafts"]["is_error"], true, "{seen}");
    assert!(
        f.vault().join("old-drafts/a.md").exists(),
        "nothing deleted"
    );
    let f = fixture();
    let seen = delete_with_sdk(&f, "accept", &[], sdk2);
    assert_eq!(seen["calls"]["old-drafts"]["is_error"], false, "{seen}");
    assert!(!f.vault().join("old-drafts").exists());
}
