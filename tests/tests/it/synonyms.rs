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
    candidates(k, "m", query).await
}

/// The candidates of `query` in `manual`, best first.
async fn candidates(k: &Kura, manual: &str, query: &str) -> Vec<String> {
    let r = k
        .call(
            "manual_find",
            json!({"query": query, "manual_id": manual, "use_cache": false, "expand_scope": false}),
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
    give(state, "synonyms/sudachi");
}

/// Put a copy of the installed bilingual lexicon in the state folder.
fn give_lexicon(state: &std::path::Path) {
    give(state, "lexicons/jmdict");
}

/// Copy folder `sub` of the installed models' state folder into `state`.
fn give(state: &std::path::Path, sub: &str) {
    let from = toolchain::model_state().join(sub);
    let into = state.join(sub);
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
fn models_list_names_the_installed_dictionaries() {
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
    assert!(
        text.contains("lexicon           jamdict-data 1.5 a4247dd9"),
        "{text}"
    );
}

/// An English manual of a few pages, none of them sharing a word (or a
/// pair of letters) with a Japanese question.
fn add_english_manual(f: &Fixture) {
    let pages = [
        (
            "shm.md",
            "# Shared memory\n\nTwo processes exchange data through a shared memory segment.\n",
        ),
        (
            "pipe.md",
            "# Pipes\n\nA pipe carries bytes from a writer to a reader.\n",
        ),
        (
            "signal.md",
            "# Signals\n\nA signal interrupts a process and runs its handler.\n",
        ),
        (
            "socket.md",
            "# Sockets\n\nA socket connects two programs over a network.\n",
        ),
        (
            "timer.md",
            "# Timers\n\nA timer wakes a thread after a delay.\n",
        ),
    ];
    for (name, text) in pages {
        f.write_manual(&format!("en/{name}"), text);
    }
}

/// The first candidate of `query` over the English manual, once the
/// vectors that say the manual's script are built.
async fn first_over_english(k: &Kura, query: &str) -> String {
    let ask = json!({"query": query, "manual_id": "en", "use_cache": false, "expand_scope": false});
    k.until("manual_find", ask, |r| {
        r["warnings"].as_array().is_none_or(|w| w.is_empty())
    })
    .await;
    let first = candidates(k, "en", query).await.into_iter().next();
    first.unwrap_or_default()
}

/// The installed lexicon (JMdict, kept by `kura models install`) turns a
/// Japanese question's words into English ones when the manual searched is
/// English: `共有メモリ` finds the page on shared memory, which shares not
/// even a pair of letters with the question (the embedder here hashes
/// pairs of letters, so meaning cannot find it). `translations_enabled =
/// false` turns it off.
#[tokio::test]
async fn a_japanese_question_searches_an_english_manual_in_english_words() {
    let f = Fixture::new();
    add_english_manual(&f);
    give_lexicon(&f.dir.path().join("state"));
    let plugin = format!("embedder={}", kura_tests::rust_embedder_wasm().display());
    let question = "共有メモリでデータを渡す";
    let k = f.start_with_manuals(&["--plugin", &plugin]).await;
    assert_eq!(first_over_english(&k, question).await, "shm.md");
    k.stop().await;
    let k = f
        .start_with_manuals(&["--plugin", &plugin, "--set", "translations_enabled=false"])
        .await;
    assert_ne!(first_over_english(&k, question).await, "shm.md");
    k.stop().await;
}
