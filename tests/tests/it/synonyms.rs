//! Query expansion in manual_find: a manual's own `synonyms.txt`, and the
//! Sudachi dictionary installed by `kura models install` (the pinned npm
//! package, digest checked), with its flags respected.

use kura_tests::{Fixture, Kura, toolchain};
use serde_json::{Value, json};

/// A manual whose sections never use the words the tests ask with.
fn add_manual(f: &Fixture) {
    f.write_manual(
        "m/outage.md",
        "# 連絡\n\nシステムの不具合が起きたときは運用担当へ電話する。\n",
    );
    f.write_manual(
        "m/lists.md",
        "# 出力\n\nコマンドはファイルのリストを出す。\n",
    );
    f.write_manual(
        "m/wrist.md",
        "# 体\n\n手首を痛めないようにキーボードの高さを合わせる。\n",
    );
}

async fn paths(k: &Kura, query: &str) -> Vec<String> {
    let r = k
        .call(
            "manual_find",
            json!({"query": query, "manual_id": "m", "use_cache": false, "expand_scope": false}),
        )
        .await
        .ok()
        .clone();
    let hits = k
        .call(
            "manual_hits",
            json!({"trace_id": r["trace_id"], "kind": "candidates", "limit": 50}),
        )
        .await
        .ok()
        .clone();
    hits["items"]
        .as_array()
        .unwrap_or(&Vec::new())
        .iter()
        .filter_map(|i: &Value| i["ref"]["path"].as_str().map(str::to_owned))
        .collect()
}

/// Put a copy of the installed dictionary in the state folder `state`.
fn give_dictionary(state: &std::path::Path) {
    let from = toolchain::model_state().join("synonyms/sudachi");
    let into = state.join("synonyms/sudachi");
    std::fs::create_dir_all(&into).unwrap();
    for e in std::fs::read_dir(from).unwrap() {
        let e = e.unwrap();
        std::fs::copy(e.path(), into.join(e.file_name())).unwrap();
    }
}

#[tokio::test]
async fn a_manuals_own_synonyms_find_a_section_in_other_words() {
    let f = Fixture::new();
    add_manual(&f);
    let k = f.start_with_manuals(&[]).await;
    assert!(
        !paths(&k, "故障").await.contains(&"outage.md".to_owned()),
        "without a dictionary nothing shares a word with the question"
    );
    k.stop().await;
    f.write_manual("m/synonyms.txt", "# ours\n故障, 不具合\n");
    let k = f.start_with_manuals(&[]).await;
    assert_eq!(
        paths(&k, "故障").await.first().map(String::as_str),
        Some("outage.md")
    );
    k.stop().await;
}

#[tokio::test]
async fn synonyms_enabled_false_turns_expansion_off() {
    let f = Fixture::new();
    add_manual(&f);
    f.write_manual("m/synonyms.txt", "故障, 不具合\n");
    let k = f
        .start_with_manuals(&["--set", "synonyms_enabled=false"])
        .await;
    assert!(!paths(&k, "故障").await.contains(&"outage.md".to_owned()));
    k.stop().await;
}

#[tokio::test]
async fn the_installed_dictionary_expands_only_from_words_flagged_to() {
    let f = Fixture::new();
    add_manual(&f);
    give_dictionary(&f.dir.path().join("state"));
    let k = f.start_with_manuals(&[]).await;
    // `一覧表` expands to `リスト` (its group's flags let it).
    assert_eq!(
        paths(&k, "一覧表").await.first().map(String::as_str),
        Some("lists.md")
    );
    // `リスト` is never a trigger (it is also a wrist): no `手首`.
    assert!(!paths(&k, "リスト").await.contains(&"wrist.md".to_owned()));
    k.stop().await;
}

#[test]
fn models_list_names_the_installed_dictionary() {
    let state = toolchain::model_state();
    let out = std::process::Command::new(kura_tests::kura_bin())
        .args(["models", "list", "--state-dir"])
        .arg(&state)
        .output()
        .unwrap();
    let text = String::from_utf8_lossy(&out.stdout);
    assert!(out.status.success());
    assert!(
        text.contains("synonyms          sudachi-synonyms-dictionary 18.0.0 f59fdcfd"),
        "{text}"
    );
}
