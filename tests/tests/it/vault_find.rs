//! vault_find (seed 001) against the real binary over stdio: one test per
//! fixed rule, the summary fields on fixtures built to provoke each, and the
//! exploration-and-audit loop of 001 §3 played by a scripted agent.

use kura_tests::{Fixture, Kura, queries_hint, workspace};
use serde_json::{Value, json};

async fn kura() -> (Fixture, Kura) {
    let f = Fixture::new();
    let k = f.start().await;
    (f, k)
}

async fn find(k: &Kura, args: Value) -> Value {
    k.call("vault_find", args).await.ok().clone()
}

/// Wait until vault_find, asked `query` within `path` alone (as a glob: no
/// glob syntax in it), proposes `path`: a note written on disk while kura
/// runs is indexed once the watcher has reported it, asynchronously.
/// (Until then the scope matches nothing and the search widens.)
async fn indexed(k: &Kura, query: &str, path: &str) {
    let proposed = |v: &Value| {
        v["next_actions"]
            .as_array()
            .unwrap()
            .iter()
            .any(|a| a["params"]["path"] == path)
    };
    let args = json!({"query": query, "scope": {"glob": path}});
    let v = k.until("vault_find", args, proposed).await;
    assert!(proposed(&v), "{path} never indexed: {v}");
}

fn kinds(v: &Value) -> Vec<String> {
    v["next_actions"]
        .as_array()
        .unwrap()
        .iter()
        .map(|a| a["type"].as_str().unwrap().to_owned())
        .collect()
}

/// Call every suggested action except `stop`: each must work as given.
async fn follow_all(k: &Kura, v: &Value) {
    for a in v["next_actions"].as_array().unwrap() {
        let t = a["type"].as_str().unwrap();
        if t == "stop" {
            assert!(a["params"].is_null());
            continue;
        }
        k.call(t, a["params"].clone()).await.ok();
    }
}

/// A note of `n` sections that all mention "backup", each `body` long.
fn many_sections(n: usize, body: usize) -> String {
    let mut s = String::new();
    for i in 0..n {
        s.push_str(&format!("## Backup {i}\n\n"));
        s.push_str(&"The backup rotates keys and files every night. ".repeat(body));
        s.push_str("\n\n");
    }
    s
}

// ---- input rules -----------------------------------------------------------

#[tokio::test]
async fn default_budget_is_200_candidates_and_60000_ms() {
    let (_f, k) = kura().await;
    let v = find(&k, json!({"query": "backup"})).await;
    assert_eq!(
        v["applied"]["budget"],
        json!({"max_candidates": 200, "time_ms": 60000})
    );
    assert!(v["trace_id"].as_str().unwrap().starts_with("vf-"));
}

#[tokio::test]
async fn budget_accepts_values_that_convert_to_integers() {
    let (_f, k) = kura().await;
    let v = find(
        &k,
        json!({"query": "backup", "budget": {"max_candidates": "7", "time_ms": 900.0}}),
    )
    .await;
    assert_eq!(
        v["applied"]["budget"],
        json!({"max_candidates": 7, "time_ms": 900})
    );
    for bad in [
        json!("seven"),
        json!(1.5),
        json!(true),
        json!(0),
        json!(-3),
        json!([1]),
    ] {
        let r = k
            .call(
                "vault_find",
                json!({"query": "backup", "budget": {"max_candidates": bad}}),
            )
            .await;
        assert_eq!(r.code(), "invalid_parameter", "{bad}");
    }
}

#[tokio::test]
async fn query_is_required_and_non_empty() {
    let (_f, k) = kura().await;
    for args in [
        json!({}),
        json!({"query": ""}),
        json!({"query": "   "}),
        json!({"query": 3}),
    ] {
        let r = k.call("vault_find", args.clone()).await;
        assert_eq!(r.code(), "invalid_parameter", "{args}");
    }
}

#[tokio::test]
async fn scope_is_checked_like_any_path() {
    let (f, k) = kura().await;
    let r = k
        .call(
            "vault_find",
            json!({"query": "x", "scope": {"relative_dir": "../outside"}}),
        )
        .await;
    assert_eq!(r.code(), "out_of_scope");
    let r = k
        .call(
            "vault_find",
            json!({"query": "x", "scope": {"relative_dir": "nope"}}),
        )
        .await;
    assert_eq!(r.code(), "not_found");
    let r = k
        .call(
            "vault_find",
            json!({"query": "x", "scope": {"glob": "a/{b"}}),
        )
        .await;
    assert_eq!(r.code(), "invalid_parameter");
    f.assert_canary_untouched();
}

#[tokio::test]
async fn query_text_is_never_syntax() {
    let (_f, k) = kura().await;
    for q in [
        "\"C++\" AND (x OR y)",
        "foo:bar*",
        "*",
        "a^2 ~ b",
        "[[#x]]",
        "-",
        "))((",
    ] {
        let v = find(&k, json!({"query": q})).await;
        assert!(v["summary"]["integration_status"].is_string(), "{q}");
    }
}

// ---- output rules ----------------------------------------------------------

#[tokio::test]
async fn cutoff_reason_is_omitted_when_nothing_was_cut() {
    let (_f, k) = kura().await;
    let v = find(&k, json!({"query": "backup"})).await;
    let summary = v["summary"].as_object().unwrap();
    assert!(!summary.contains_key("cutoff_reason"), "{v:#}");
    for key in [
        "scanned_files",
        "scanned_nodes",
        "candidates",
        "warnings",
        "max_stage_applied",
        "scope_expanded",
        "integrated_candidates",
        "signal_coverage",
        "file_bias_ratio",
        "gap_ranges_count",
        "sufficiency_score",
        "integration_status",
    ] {
        assert!(summary.contains_key(key), "{key} missing");
    }
}

#[tokio::test]
async fn cutoff_reason_says_which_budget_cut_the_search() {
    let (f, k) = kura().await;
    f.write("big/backups.md", &many_sections(1100, 40));
    indexed(&k, "backup rotates", "big/backups.md").await;
    // The candidate cap.
    let v = find(
        &k,
        json!({"query": "backup rotates", "budget": {"max_candidates": 3}}),
    )
    .await;
    assert_eq!(v["summary"]["cutoff_reason"], "candidate_cap");
    assert_eq!(v["summary"]["candidates"], 3);
    // A larger cap than the hard limit is lowered to it, and says so when it cuts.
    let v = find(
        &k,
        json!({"query": "backup rotates", "budget": {"max_candidates": 5000}}),
    )
    .await;
    assert_eq!(v["applied"]["budget"]["max_candidates"], 1000);
    assert_eq!(v["summary"]["cutoff_reason"], "hard_limit");
    assert_eq!(v["summary"]["candidates"], 1000);
    // The time budget: 1 ms is not enough to read 1000 sections of 2 KB.
    let v = find(
        &k,
        json!({"query": "backup rotates", "budget": {"max_candidates": 1000, "time_ms": 1}}),
    )
    .await;
    assert_eq!(v["summary"]["cutoff_reason"], "time_budget");
    assert!(v["summary"]["scanned_nodes"].as_u64().unwrap() < 1000);
}

#[tokio::test]
async fn stage_0_is_the_normalised_whole_query() {
    let (_f, k) = kura().await;
    // Full-width letters and other case still match the phrase as written.
    let v = find(&k, json!({"query": "ＥＮＣＲＹＰＴＥＤ Archive"})).await;
    let s = &v["summary"];
    assert_eq!(s["max_stage_applied"], 0, "{v:#}");
    assert_eq!(s["signal_coverage"]["normalized"], 1.0);
    assert_eq!(s["integrated_candidates"], 1);
    assert_eq!(
        v["next_actions"][0]["params"]["path"],
        "research/backup-guide.md"
    );
    assert_eq!(
        v["next_actions"][0]["params"]["range"],
        json!({"start_line": 25, "end_line": 34})
    );
}

#[tokio::test]
async fn stage_1_is_the_words_in_any_order() {
    let (_f, k) = kura().await;
    let v = find(&k, json!({"query": "archive encrypted remote"})).await;
    let s = &v["summary"];
    assert_eq!(s["max_stage_applied"], 1, "{v:#}");
    assert_eq!(s["signal_coverage"]["normalized"], 0.0);
    assert_eq!(s["signal_coverage"]["loose"], 1.0);
    // The guide's section and the summary's section that retells it.
    assert_eq!(s["integrated_candidates"], 2);
    let best = &v["next_actions"][0]["params"];
    let at = (
        best["path"].as_str().unwrap(),
        best["range"]["start_line"].as_u64().unwrap(),
    );
    assert!(
        [
            ("research/backup-guide.md", 25),
            ("research/backup-summary.md", 13)
        ]
        .contains(&at),
        "{at:?}"
    );
}

#[tokio::test]
async fn ready_means_read_the_evidence_and_stop() {
    let (_f, k) = kura().await;
    let v = find(&k, json!({"query": "3-2-1 rule"})).await;
    assert_eq!(v["summary"]["integration_status"], "ready", "{v:#}");
    assert!(v["summary"]["sufficiency_score"].as_f64().unwrap() >= 0.7);
    assert_eq!(kinds(&v), ["vault_read", "stop"]);
    let read = &v["next_actions"][0]["params"];
    let keys: Vec<&String> = read.as_object().unwrap().keys().collect();
    assert_eq!(keys, ["path", "range"], "smallest params");
    follow_all(&k, &v).await;
}

#[tokio::test]
async fn nothing_found_is_blocked_with_a_literal_search_next() {
    let (_f, k) = kura().await;
    let v = find(&k, json!({"query": "zebrafish quaternion"})).await;
    let s = &v["summary"];
    assert_eq!(s["integration_status"], "blocked");
    assert_eq!(
        (
            s["integrated_candidates"].as_u64(),
            s["sufficiency_score"].as_f64()
        ),
        (Some(0), Some(0.0))
    );
    assert_eq!(kinds(&v), ["vault_search"]);
    assert_eq!(
        v["next_actions"][0]["params"],
        json!({"query": "zebrafish quaternion", "mode": "plain"})
    );
    follow_all(&k, &v).await;
}

#[tokio::test]
async fn bias_and_gaps_ask_for_a_scan_of_the_file() {
    let (f, k) = kura().await;
    // Four sections about ferrets in one note, with unrelated sections between.
    let mut note = String::from("# Pets\n\n");
    for i in 0..4 {
        note.push_str(&format!(
            "## Ferret care {i}\n\nFerrets need a cage and daily play.\n\n"
        ));
        note.push_str(&format!("## Garden {i}\n\nTomatoes like sun.\n\n"));
    }
    f.write("pets.md", &note);
    f.write("other.md", "# Other\n\nA ferret in a cage once visited.\n");
    indexed(&k, "ferrets need a cage", "pets.md").await;
    indexed(&k, "ferret in a cage", "other.md").await;
    let v = find(&k, json!({"query": "ferret cage play"})).await;
    let s = &v["summary"];
    assert_eq!(s["integration_status"], "needs_followup", "{v:#}");
    assert_eq!(
        s["file_bias_ratio"], 0.8,
        "4 of the 5 integrated sections are in pets.md"
    );
    assert_eq!(
        s["gap_ranges_count"], 3,
        "a garden section between each two ferret sections"
    );
    assert_eq!(
        kinds(&v)[..3],
        ["vault_read", "vault_scan", "vault_coverage"]
    );
    assert_eq!(v["next_actions"][1]["params"], json!({"path": "pets.md"}));
    assert_eq!(
        v["next_actions"][2]["params"]["cited_ranges"]
            .as_array()
            .unwrap()
            .len(),
        4
    );
    follow_all(&k, &v).await;
}

/// Not sure of its best note, vault_find also proposes the best section
/// of each of the next notes in its ranking (four at most: five notes in
/// all), each less sure than the one before, no note twice.
#[tokio::test]
async fn an_unsure_search_proposes_the_next_notes_too() {
    let (f, k) = kura().await;
    for (i, name) in ["a", "b", "c", "d", "e", "f"].iter().enumerate() {
        let play = " and daily play".repeat(i % 2);
        f.write(
            &format!("{name}.md"),
            &format!("# Note {name}\n\nFerrets need a cage{play}.\n"),
        );
    }
    for name in ["a", "b", "c", "d", "e", "f"] {
        indexed(&k, "ferrets need a cage", &format!("{name}.md")).await;
    }
    // "toys" is in no note: the best one holds three words of four.
    let v = find(&k, json!({"query": "ferret cage play toys"})).await;
    assert_eq!(
        v["summary"]["integration_status"], "needs_followup",
        "{v:#}"
    );
    let reads: Vec<(&str, f64)> = v["next_actions"]
        .as_array()
        .unwrap()
        .iter()
        .filter(|a| a["type"] == "vault_read")
        .map(|a| {
            let path = a["params"]["path"].as_str().unwrap();
            (path, a["confidence"].as_f64().unwrap())
        })
        .collect();
    assert_eq!(reads.len(), 5, "the best note and four more: {v:#}");
    let mut paths: Vec<&str> = reads.iter().map(|r| r.0).collect();
    paths.sort_unstable();
    paths.dedup();
    assert_eq!(paths.len(), 5, "no note twice: {v:#}");
    for w in reads.windows(2) {
        assert!(w[1].1 < w[0].1, "each less sure than the one before: {v:#}");
    }
    follow_all(&k, &v).await;
}

#[tokio::test]
async fn scanned_counts_are_what_was_read() {
    let (f, k) = kura().await;
    f.write("a/one.md", "# One\n\nwombat\n\n## Two\n\nwombat again\n");
    f.write("b/two.md", "# Three\n\nwombat\n");
    indexed(&k, "wombat", "a/one.md").await;
    indexed(&k, "wombat", "b/two.md").await;
    let v = find(&k, json!({"query": "wombat"})).await;
    let s = &v["summary"];
    assert_eq!(
        (
            s["scanned_files"].as_u64(),
            s["scanned_nodes"].as_u64(),
            s["candidates"].as_u64()
        ),
        (Some(2), Some(3), Some(3))
    );
    assert_eq!(s["warnings"], 0);
}

#[tokio::test]
async fn scope_limits_the_search_and_widens_when_empty() {
    let (f, k) = kura().await;
    f.write("a/one.md", "# One\n\nwombat\n");
    f.write("b/two.md", "# Two\n\nwombat\n");
    indexed(&k, "wombat", "a/one.md").await;
    indexed(&k, "wombat", "b/two.md").await;
    let v = find(
        &k,
        json!({"query": "wombat", "scope": {"relative_dir": "a"}}),
    )
    .await;
    assert_eq!(v["summary"]["candidates"], 1);
    assert_eq!(v["summary"]["scope_expanded"], false);
    let v = find(&k, json!({"query": "wombat", "scope": {"glob": "b/*.md"}})).await;
    assert_eq!(v["next_actions"][0]["params"]["path"], "b/two.md");
    // Nothing in `daily/`: the whole vault is searched, and it says so.
    let v = find(
        &k,
        json!({"query": "wombat", "scope": {"relative_dir": "daily"}}),
    )
    .await;
    assert_eq!(v["summary"]["scope_expanded"], true);
    assert_eq!(v["summary"]["candidates"], 2);
    assert_eq!(v["summary"]["warnings"], 1);
    assert_eq!(v["warnings"].as_array().unwrap().len(), 1);
}

#[tokio::test]
async fn a_write_is_found_by_the_next_find() {
    let (_f, k) = kura().await;
    let v = find(&k, json!({"query": "okapi"})).await;
    assert_eq!(v["summary"]["integration_status"], "blocked");
    k.call(
        "vault_create",
        json!({"path": "zoo/animal.md", "content": "# Okapi\n\nThe okapi is a forest giraffe.\n"}),
    )
    .await
    .ok();
    let v = find(&k, json!({"query": "okapi"})).await;
    assert_eq!(
        v["next_actions"][0]["params"]["path"], "zoo/animal.md",
        "{v:#}"
    );
    k.call(
        "vault_replace",
        json!({"path": "zoo/animal.md", "find": "okapi", "replace": "zebra", "max_replacements": 0}),
    )
    .await
    .ok();
    k.call(
        "vault_replace",
        json!({"path": "zoo/animal.md", "find": "Okapi", "replace": "Zebra"}),
    )
    .await
    .ok();
    // (The file is not named after the okapi: a note's name is evidence too.)
    let v = find(&k, json!({"query": "okapi"})).await;
    assert_eq!(v["summary"]["integration_status"], "blocked", "{v:#}");
}

#[tokio::test]
async fn a_note_is_found_by_its_file_name_when_the_body_never_says_it() {
    let (f, k) = kura().await;
    f.write(
        "people/Ada Lovelace.md",
        "Wrote the first published program, for the Analytical Engine.\n",
    );
    f.write(
        "会議/週次定例 2026.md",
        "## 議題\n\n予算の見直しと採用計画。\n",
    );
    indexed(&k, "Analytical Engine", "people/Ada Lovelace.md").await;
    indexed(&k, "採用計画", "会議/週次定例 2026.md").await;
    for (query, path) in [
        ("Ada Lovelace", "people/Ada Lovelace.md"),
        ("週次定例の議題", "会議/週次定例 2026.md"),
    ] {
        let v = find(&k, json!({"query": query})).await;
        assert_eq!(
            v["next_actions"][0]["params"]["path"], path,
            "{query}: {v:#}"
        );
    }
    // The whole query is the note's name: stage 0.
    let v = find(&k, json!({"query": "ada lovelace"})).await;
    assert_eq!(v["summary"]["max_stage_applied"], 0, "{v:#}");
}

#[tokio::test]
async fn a_change_made_outside_the_server_is_found_too() {
    let (f, k) = kura().await;
    find(&k, json!({"query": "anything"})).await;
    f.write(
        "notes/outside-edit.md",
        "# Capybara\n\nA capybara note written by an editor.\n",
    );
    // The watcher's event may take a moment to arrive.
    let v = k
        .until("vault_find", json!({"query": "capybara"}), |v| {
            v["summary"]["integrated_candidates"] == 1
        })
        .await;
    assert_eq!(v["summary"]["integrated_candidates"], 1, "{v}");
}

#[tokio::test]
async fn the_reserved_system_folder_is_not_searched() {
    let (f, k) = kura().await;
    f.write(".system/secret.md", "# Narwhal\n\nnarwhal\n");
    let v = find(&k, json!({"query": "narwhal"})).await;
    assert_eq!(v["summary"]["candidates"], 0);
}

#[tokio::test]
async fn japanese_queries_find_japanese_notes() {
    let (_f, k) = kura().await;
    let v = find(&k, json!({"query": "予約領域"})).await;
    assert_eq!(v["summary"]["max_stage_applied"], 0, "{v:#}");
    assert_eq!(
        v["next_actions"][0]["params"]["path"],
        "notes/日本語メモ.md"
    );
}

// ---- 001 §3: the loop --------------------------------------------------------

/// An agent that follows next_actions: find, scan from the top, write an
/// artifact citing what it read, check coverage, audit, scan what is
/// uncovered, ... until an audit says stop.
#[tokio::test]
async fn the_find_scan_coverage_audit_loop_reaches_stop() {
    let (f, k) = kura().await;
    let chapter = std::fs::read_to_string(workspace().join(
        "fixtures/corpora/debian-reference-en/ch02/2.1-debian-package-management-prerequisites.md",
    ))
    .unwrap();
    f.write("sources/apt.md", &chapter);
    let source = "sources/apt.md";
    let artifact = "notes/apt-summary.md";
    indexed(&k, "package management prerequisites", source).await;

    let v = find(
        &k,
        json!({"query": "package dependencies upgrade troubles"}),
    )
    .await;
    assert_eq!(
        v["summary"]["integration_status"], "needs_followup",
        "{v:#}"
    );
    let scan = v["next_actions"]
        .as_array()
        .unwrap()
        .iter()
        .find(|a| a["type"] == "vault_scan")
        .expect("a scan of the large source")
        .clone();
    assert_eq!(
        scan["params"],
        json!({"path": source}),
        "the first scan starts at the top"
    );

    let mut next = scan["params"].clone();
    let mut cited: Vec<(u64, u64)> = Vec::new();
    let mut steps = 1;
    let mut created = false;
    loop {
        steps += 1;
        assert!(steps < 30, "the loop did not converge");
        // Scan.
        let s = k.call("vault_scan", next.clone()).await.ok().clone();
        let (a, b) = (
            s["applied_range"]["start_line"].as_u64().unwrap(),
            s["applied_range"]["end_line"].as_u64().unwrap(),
        );
        cited.push((a, b));
        // Write the artifact: one cited bullet per piece read.
        let mut text = String::from("# Notes on the APT chapter\n\n");
        for (a, b) in &cited {
            text.push_str(&format!("- read and summarised (L{a}-L{b})\n"));
        }
        let args = json!({"path": artifact, "content": text});
        if created {
            let mut w = args.clone();
            w["mode"] = json!("overwrite");
            k.call("vault_write", w).await.ok();
        } else {
            k.call("vault_create", args).await.ok();
            created = true;
        }
        // Coverage.
        let ranges: Vec<Value> = cited
            .iter()
            .map(|(a, b)| json!({"start_line": a, "end_line": b}))
            .collect();
        steps += 1;
        let c = k
            .call(
                "vault_coverage",
                json!({"path": source, "cited_ranges": ranges}),
            )
            .await
            .ok()
            .clone();
        // Audit.
        steps += 1;
        let au = k
            .call(
                "artifact_audit",
                json!({"artifact_path": artifact, "source_path": source}),
            )
            .await
            .ok()
            .clone();
        assert_eq!(
            au["coverage_ratio"], c["coverage_ratio"],
            "the audit reads the same citations"
        );
        assert_eq!(au["findings"], json!([]), "{au:#}");
        let first = &au["next_actions"][0];
        if first["type"] == "stop" {
            assert_eq!(au["needs_forced_full_scan"], false);
            assert_eq!(c["meets_min_coverage"], true);
            break;
        }
        assert_eq!(first["type"], "vault_scan");
        assert_eq!(first["params"]["path"], source);
        // Uncovered ranges first, as the coverage tool also says.
        if c["next_actions"][0]["type"] == "vault_scan" {
            assert_eq!(first["params"], c["next_actions"][0]["params"]);
        }
        next = first["params"].clone();
    }
    assert!(steps <= 14, "{steps} steps");
}

// ---- queries: the agent's other phrasings (issue 55) --------------------------

#[tokio::test]
async fn the_agent_s_phrasings_find_the_note_the_question_s_own_words_miss() {
    let (f, k) = kura().await;
    let dir = f.vault().join("admin");
    std::fs::create_dir_all(&dir).unwrap();
    std::fs::write(
        dir.join("APT pinning.md"),
        "# APT pinning\n\nTo prefer packages from one release over another, give it a higher Pin-Priority in /etc/apt/preferences.\n",
    )
    .unwrap();
    indexed(&k, "Pin-Priority", "admin/APT pinning.md").await;
    let question = "特定のリリースのパッケージを優先したい";
    let reads = |v: &Value| -> Vec<String> {
        v["next_actions"]
            .as_array()
            .unwrap()
            .iter()
            .filter(|a| a["type"] == "vault_read")
            .map(|a| a["params"]["path"].as_str().unwrap().to_owned())
            .collect()
    };
    let alone = find(&k, json!({"query": question})).await;
    assert!(
        !reads(&alone).contains(&"admin/APT pinning.md".to_owned()),
        "{alone}"
    );
    let phrased = find(
        &k,
        json!({"query": question, "queries": ["prefer packages from one release", "Pin-Priority"]}),
    )
    .await;
    assert_eq!(reads(&phrased)[0], "admin/APT pinning.md", "{phrased}");
    assert_eq!(
        phrased["applied"]["queries"],
        json!(["prefer packages from one release", "Pin-Priority"])
    );
}

#[tokio::test]
async fn a_question_in_another_language_than_the_notes_is_told_what_to_pass() {
    let (_f, k) = kura().await;
    let hint = |v: &Value| queries_hint(v).is_some_and(|w| w.contains("Japanese"));
    let question = "夜間のバックアップで鍵を入れ替える仕組み";
    let v = find(&k, json!({"query": question})).await;
    assert!(hint(&v), "{v}");
    assert_eq!(
        v["summary"]["warnings"],
        v["warnings"].as_array().unwrap().len()
    );
    let v = find(
        &k,
        json!({"query": question, "queries": ["backup key rotation"]}),
    )
    .await;
    assert!(!hint(&v), "{v}");
    // vault_ls of the root says what the notes are written in.
    let ls = k.call("vault_ls", json!({})).await;
    assert_eq!(ls.ok()["languages"][0]["code"], "eng", "{ls:?}");
}
