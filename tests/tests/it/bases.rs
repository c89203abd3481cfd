//! The vault as a database, against the real binary over stdio: every view
//! of the Bases fixture vault returns the rows worked out by hand in
//! `fixtures/vaults/bases.expected.json` (committed before kura first ran
//! them), property filters in one call, and what is refused by name.

use kura_tests::{Fixture, Kura, copy_tree, workspace};
use serde_json::{Value, json};

/// A fixture whose vault is the Bases fixture vault, served with `extra`.
async fn start(extra: &[&str]) -> (Fixture, Kura) {
    let f = Fixture::new();
    std::fs::remove_dir_all(f.vault()).unwrap();
    copy_tree(&workspace().join("fixtures/vaults/bases"), &f.vault());
    let k = Kura::start(
        f.args(extra),
        rmcp::service::ClientLifecycleMode::Initialize,
    )
    .await;
    (f, k)
}

fn expected() -> Value {
    let text =
        std::fs::read_to_string(workspace().join("fixtures/vaults/bases.expected.json")).unwrap();
    serde_json::from_str(&text).unwrap()
}

/// How many files an answer's warnings say were left out.
fn left_out(answer: &Value) -> u64 {
    answer["warnings"]
        .as_array()
        .and_then(|w| w.first())
        .and_then(Value::as_str)
        .and_then(|w| w.split(' ').next())
        .and_then(|n| n.parse().ok())
        .unwrap_or(0)
}

#[tokio::test]
async fn every_view_of_the_fixture_returns_its_hand_worked_rows() {
    let (_f, k) = start(&[]).await;
    for want in expected()["views"].as_array().unwrap() {
        let what = format!("{} / {}", want["path"], want["view"]);
        let r = k
            .call(
                "vault_base",
                json!({"path": want["path"], "view": want["view"]}),
            )
            .await;
        let got = r.ok();
        assert_eq!(got["type"], want["type"], "{what}");
        assert_eq!(got["columns"], want["columns"], "{what}");
        assert_eq!(got["rows"], want["rows"], "{what}: {got}");
        assert_eq!(
            got.get("groups").cloned().unwrap_or(json!([])),
            want["groups"],
            "{what}"
        );
        assert_eq!(
            got.get("summaries").cloned().unwrap_or(json!({})),
            want["summaries"],
            "{what}"
        );
        assert_eq!(got["total"], want["total"], "{what}");
        assert_eq!(
            json!(left_out(got)),
            want["left_out"],
            "{what}: {}",
            got["warnings"]
        );
    }
}

#[tokio::test]
async fn property_filters_answer_in_one_call_in_either_syntax() {
    let (_f, k) = start(&[]).await;
    for want in expected()["notes"].as_array().unwrap() {
        let mut args = json!({"filter": want["filter"]});
        for key in ["sort", "properties"] {
            if let Some(v) = want.get(key) {
                args[key] = v.clone();
            }
        }
        let got = k.call("vault_notes", args).await.ok().clone();
        let paths: Vec<&Value> = got["notes"]
            .as_array()
            .unwrap()
            .iter()
            .map(|n| &n["path"])
            .collect();
        let wanted: Vec<&Value> = want["notes"]
            .as_array()
            .unwrap()
            .iter()
            .map(|n| &n["path"])
            .collect();
        assert_eq!(paths, wanted, "{}", want["filter"]);
        for (g, w) in got["notes"]
            .as_array()
            .unwrap()
            .iter()
            .zip(want["notes"].as_array().unwrap())
        {
            if let Some(p) = w.get("properties") {
                assert_eq!(&g["properties"], p, "{}", want["filter"]);
            }
        }
        assert_eq!(
            json!(left_out(&got)),
            want["left_out"],
            "{}: {}",
            want["filter"],
            got["warnings"]
        );
    }
    // vault_search and vault_find take the same expression.
    let filter = "file.hasTag(\"book\") && rating >= 4";
    let r = k
        .call("vault_search", json!({"query": "novel", "filter": filter}))
        .await;
    let mut files: Vec<String> = r.ok()["results"]
        .as_array()
        .unwrap()
        .iter()
        .map(|m| m["path"].as_str().unwrap().to_owned())
        .collect();
    files.dedup();
    assert_eq!(
        files,
        ["books/Dune.md", "books/Neuromancer.md"],
        "{}",
        r.body
    );
    let r = k
        .call(
            "vault_find",
            json!({"query": "novel", "scope": {"filter": filter}}),
        )
        .await;
    let got = r.ok();
    assert_eq!(got["summary"]["scanned_files"], 2, "{got}");
    let read: Vec<&str> = got["next_actions"]
        .as_array()
        .unwrap()
        .iter()
        .filter_map(|a| a["params"]["path"].as_str())
        .collect();
    assert!(
        !read.is_empty()
            && read
                .iter()
                .all(|p| *p == "books/Dune.md" || *p == "books/Neuromancer.md"),
        "{got}"
    );
}

#[tokio::test]
async fn a_filter_or_base_kura_cannot_read_is_refused_by_name() {
    let (_f, k) = start(&[]).await;
    // Before, this parsed as one clause on a property named
    // `file.hasTag("book") && rating` and returned no notes and no error.
    for filter in [
        "file.hasTag(\"book\") && rating >=",
        "rating.sum() > 2",
        "status = done and",
    ] {
        let r = k.call("vault_notes", json!({"filter": filter})).await;
        assert_eq!(r.code(), "invalid_parameter", "{filter}");
    }
    let r = k
        .call("vault_notes", json!({"filter": "rating.sum() > 2"}))
        .await;
    assert!(
        r.text.contains("sum()") && r.text.contains("column 8"),
        "{}",
        r.text
    );
    let r = k
        .call("vault_search", json!({"query": "x", "filter": "a &&"}))
        .await;
    assert_eq!(r.code(), "invalid_parameter");
    let r = k.call("vault_base", json!({"path": "Refused.base"})).await;
    assert_eq!(r.code(), "invalid_parameter");
    assert!(
        r.text.contains("sum()")
            && r.text.contains("views[0].filters.and[1]")
            && r.text.contains("column 11"),
        "{}",
        r.text
    );
    let r = k
        .call(
            "vault_base",
            json!({"path": "Projects.base", "view": "Nope"}),
        )
        .await;
    assert_eq!(r.code(), "invalid_parameter");
    assert!(
        r.text.contains("All") && r.text.contains("Overdue"),
        "{}",
        r.text
    );
    let r = k
        .call("vault_base", json!({"path": "people/Luis.md"}))
        .await;
    assert_eq!(r.code(), "invalid_parameter");
    let r = k.call("vault_base", json!({"path": "nowhere.base"})).await;
    assert_eq!(r.code(), "not_found");
    let r = k
        .call("vault_base", json!({"path": "../outside/x.base"}))
        .await;
    assert!(r.is_error);
}

#[tokio::test]
async fn rows_page_with_a_cursor_and_hidden_folders_stay_out() {
    let (f, k) = start(&[]).await;
    let first = k
        .call(
            "vault_base",
            json!({"path": "Projects.base", "view": "By status", "limit": 2}),
        )
        .await
        .ok()
        .clone();
    assert_eq!(first["rows"].as_array().unwrap().len(), 2);
    assert_eq!(first["truncated"], true);
    assert_eq!(first["next_cursor"], 2);
    let rest = k
        .call(
            "vault_base",
            json!({"path": "Projects.base", "view": "By status", "limit": 2, "cursor": 2}),
        )
        .await
        .ok()
        .clone();
    let paths: Vec<&str> = first["rows"]
        .as_array()
        .unwrap()
        .iter()
        .chain(rest["rows"].as_array().unwrap())
        .map(|r| r["path"].as_str().unwrap())
        .collect();
    assert_eq!(
        paths,
        [
            "projects/Alpha.md",
            "projects/Gamma.md",
            "projects/Beta.md",
            "projects/Delta.md"
        ]
    );
    assert_eq!(rest["next_cursor"], Value::Null);
    // Nothing under `.trash/`, `.obsidian/` or kura's `.system/` is a row,
    // even in a base without filters.
    f.write(
        "All.base",
        "views:\n  - type: table\n    name: All\n    order: [file.path]\n",
    );
    let all = k
        .call("vault_base", json!({"path": "All.base", "limit": 1000}))
        .await
        .ok()
        .clone();
    let paths: Vec<&str> = all["rows"]
        .as_array()
        .unwrap()
        .iter()
        .map(|r| r["path"].as_str().unwrap())
        .collect();
    assert!(
        paths.contains(&"cover.png") && paths.contains(&"projects/Beta.md"),
        "{paths:?}"
    );
    assert!(paths.iter().all(|p| !p.starts_with('.')), "{paths:?}");
    // `this` is the base however its path is spelled.
    let r = k
        .call("vault_base", json!({"path": "./Everything.base"}))
        .await;
    assert_eq!(r.ok()["path"], "Everything.base");
    assert_eq!(
        r.ok()["rows"][0]["values"]["formula.here"],
        "Everything.base"
    );
}

#[tokio::test]
async fn bases_read_locked_notes_and_are_served_read_only() {
    // Beta is locked (`locked: true`): a base reads it as any note, and
    // vault_base is a read tool, so a read-only server serves it.
    let (_f, k) = start(&["--read-only"]).await;
    let tools = k.tools().await;
    let t = tools
        .iter()
        .find(|t| t.name == "vault_base")
        .expect("vault_base listed");
    let a = t.annotations.as_ref().unwrap();
    assert_eq!(a.read_only_hint, Some(true));
    let r = k
        .call(
            "vault_base",
            json!({"path": "Projects.base", "view": "By status"}),
        )
        .await;
    assert!(
        r.ok()["rows"]
            .as_array()
            .unwrap()
            .iter()
            .any(|r| r["path"] == "projects/Beta.md")
    );
}
