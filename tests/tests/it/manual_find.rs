//! One test per fixed rule (固定ルール) of seed 004's search tools,
//! manual_find and manual_hits, plus the settlements of docs/decisions.md (traces, cache,
//! corrective stage, components), through the real binary over stdio.

use kura_tests::{Fixture, Kura, queries_hint, reranker_wasm};
use serde_json::{Value, json};

const MANUAL: &str = "vue-docs-ja";
const COMPUTED: &str = "guide/essentials/computed.md";
/// A query the fixture answers well (computed.md, "算出プロパティ vs. メソッド").
const CACHING: &str = "算出プロパティとメソッドの違い、キャッシュされる？";

async fn kura(extra: &[&str]) -> (Fixture, Kura) {
    let f = Fixture::new();
    let k = f.start_with_manuals(extra).await;
    (f, k)
}

/// A second manual, so that scope and hoisting can be seen.
fn add_other_manual(f: &Fixture) {
    let dir = f.manuals().join("other");
    std::fs::create_dir_all(&dir).unwrap();
    std::fs::write(
        dir.join("zebra.md"),
        "# Zebra crossing\n\nA zebra crossing is where pedestrians cross.\n\n## Zebra rules\n\nDrivers must stop at a zebra crossing.\n",
    )
    .unwrap();
}

async fn find(k: &Kura, args: Value) -> Value {
    k.call("manual_find", args).await.ok().clone()
}

async fn hits(k: &Kura, trace: &Value, kind: &str) -> Value {
    let r = k
        .call(
            "manual_hits",
            json!({"trace_id": trace["trace_id"], "kind": kind, "limit": 1000}),
        )
        .await;
    r.ok().clone()
}

/// Wait until manual_find, asked `query` within `manual` alone, proposes
/// to read `path`: a page written on disk while kura runs is indexed once
/// the watcher has reported it, asynchronously. (Even uncached, a search is
/// remembered: `query` must not be one the test then asserts on.)
async fn page_indexed(k: &Kura, manual: &str, query: &str, path: &str) {
    let proposed = |r: &Value| {
        r["next_actions"]
            .as_array()
            .unwrap()
            .iter()
            .any(|a| a["params"]["ref"]["path"] == path)
    };
    let args = json!({
        "query": query,
        "manual_id": manual,
        "expand_scope": false,
        "use_cache": false,
    });
    let r = k.until("manual_find", args, proposed).await;
    assert!(proposed(&r), "{manual}/{path} never indexed: {r}");
}

// ---- manual_find ------------------------------------------------------------

#[tokio::test]
async fn claim_graph_is_the_body_and_summary_is_derived_from_it() {
    let (_f, k) = kura(&[]).await;
    for q in [CACHING, "createApp の例外", "テンプレート構文とは"] {
        let r = find(&k, json!({"query": q, "include_claim_graph": true})).await;
        let g = &r["claim_graph"];
        let s = &r["summary"];
        let conflicted = g["claims"]
            .as_array()
            .unwrap()
            .iter()
            .filter(|c| c["status"] == "conflicted")
            .count();
        let uncovered = g["facets"]
            .as_array()
            .unwrap()
            .iter()
            .filter(|f| f["coverage_status"] != "covered")
            .count();
        assert_eq!(s["conflict_count"], conflicted, "{q}: {r}");
        assert_eq!(s["gap_count"], uncovered, "{q}: {r}");
        let status = if conflicted + uncovered > 0 {
            "needs_followup"
        } else {
            "ready"
        };
        assert_eq!(s["integration_status"], status, "{q}");
        // Every edge joins a claim and an evidence of this graph.
        for e in g["edges"].as_array().unwrap() {
            assert!(
                g["claims"]
                    .as_array()
                    .unwrap()
                    .iter()
                    .any(|c| c["claim_id"] == e["from_claim_id"])
            );
            assert!(
                g["evidences"]
                    .as_array()
                    .unwrap()
                    .iter()
                    .any(|v| v["evidence_id"] == e["to_evidence_id"])
            );
        }
    }
}

#[tokio::test]
async fn candidates_are_bm25_with_signal_and_coverage_corrections() {
    let (_f, k) = kura(&[]).await;
    let r = find(&k, json!({"query": CACHING})).await;
    let c = hits(&k, &r, "candidates").await;
    let items = c["items"].as_array().unwrap();
    assert_eq!(items[0]["ref"]["path"], COMPUTED, "{c}");
    let signals = items[0]["signals"].as_array().unwrap();
    assert!(signals.contains(&json!("heading")), "{signals:?}");
    let scores: Vec<f64> = items.iter().map(|i| i["score"].as_f64().unwrap()).collect();
    assert!(
        scores.windows(2).all(|w| w[0] >= w[1]),
        "ranked: {scores:?}"
    );
}

#[tokio::test]
async fn sparse_query_coverage_weight_is_added_to_the_score() {
    let top = |extra: &'static [&'static str]| async move {
        let (_f, k) = kura(extra).await;
        let args = json!({"query": CACHING, "use_cache": false});
        let r = find(&k, args).await;
        let c = hits(&k, &r, "candidates").await;
        c["items"][0]["score"].as_f64().unwrap()
    };
    let none = top(&[
        "--set",
        "sparse_query_coverage_weight=0",
        "--set",
        "late_rerank_enabled=false",
    ])
    .await;
    let heavy = top(&[
        "--set",
        "sparse_query_coverage_weight=2",
        "--set",
        "late_rerank_enabled=false",
    ])
    .await;
    assert!(heavy > none + 0.5, "coverage bonus: {none} -> {heavy}");
}

#[tokio::test]
async fn late_rerank_applies_when_enabled() {
    let (_f, k) = kura(&[]).await;
    // A first start compiles the reranker in the background: wait for it.
    let r = k.find_reranked(CACHING).await;
    assert_eq!(r["applied"]["late_rerank"], "applied");
    let c = hits(&k, &r, "candidates").await;
    assert!(
        c["items"][0]["signals"]
            .as_array()
            .unwrap()
            .contains(&json!("late_rerank"))
    );
    let (_f, k) = kura(&["--set", "late_rerank_enabled=false"]).await;
    let r = find(&k, json!({"query": CACHING})).await;
    assert_eq!(r["applied"]["late_rerank"], "disabled");
    let c = hits(&k, &r, "candidates").await;
    assert!(c["items"].as_array().unwrap().iter().all(|i| {
        !i["signals"]
            .as_array()
            .unwrap()
            .contains(&json!("late_rerank"))
    }));
}

#[tokio::test]
async fn late_reranker_hook_applies_even_when_the_setting_is_off() {
    let wasm = format!("reranker={}", reranker_wasm().display());
    let (_f, k) = kura(&["--set", "late_rerank_enabled=false", "--plugin", &wasm]).await;
    let r = k.find_reranked(CACHING).await;
    assert_eq!(r["applied"]["late_rerank"], "applied");
}

#[tokio::test]
async fn a_component_of_the_wrong_world_is_refused_at_start_naming_the_slot() {
    let f = Fixture::new();
    let wasm = format!("reranker={}", kura_tests::hostile_wasm().display());
    let manuals = f.manuals().display().to_string();
    let out = kura_tests::command(&f.args(&["--manuals-root", &manuals, "--plugin", &wasm]))
        .stdin(std::process::Stdio::null())
        .output()
        .await
        .unwrap();
    assert!(!out.status.success());
    let err = String::from_utf8_lossy(&out.stderr);
    assert!(
        err.contains("reranker") && err.contains("`rerank`"),
        "{err}"
    );
}

#[tokio::test]
async fn include_claim_graph_only_when_true() {
    let (_f, k) = kura(&[]).await;
    let r = find(&k, json!({"query": CACHING})).await;
    assert!(r.get("claim_graph").is_none());
    let r = find(&k, json!({"query": CACHING, "include_claim_graph": false})).await;
    assert!(r.get("claim_graph").is_none());
    let r = find(&k, json!({"query": CACHING, "include_claim_graph": true})).await;
    assert!(r["claim_graph"]["claims"].is_array(), "{r}");
    let ev = &r["claim_graph"]["evidences"][0];
    assert_eq!(ev["ref"]["target"], "manual");
    assert_eq!(ev["snippet_digest"].as_str().unwrap().len(), 16);
}

#[tokio::test]
async fn conflict_count_equals_manual_hits_conflicts_total() {
    let (_f, k) = kura(&[]).await;
    for q in [
        CACHING,
        "createApp",
        "v-if v-show 違い",
        "mount できない 例外",
    ] {
        let r = find(&k, json!({"query": q})).await;
        let h = hits(&k, &r, "conflicts").await;
        assert_eq!(h["total"], r["summary"]["conflict_count"], "{q}");
    }
}

#[tokio::test]
async fn gap_count_equals_manual_hits_gaps_total() {
    let (_f, k) = kura(&[]).await;
    for q in [CACHING, "createApp", "zebra の手順", "mount できない 例外"] {
        let r = find(&k, json!({"query": q})).await;
        let h = hits(&k, &r, "gaps").await;
        assert_eq!(h["total"], r["summary"]["gap_count"], "{q}");
    }
}

#[tokio::test]
async fn expand_scope_defaults_to_true() {
    let (f, k) = kura(&[]).await;
    add_other_manual(&f);
    page_indexed(&k, "other", "zebra", "zebra.md").await;
    let r = find(
        &k,
        json!({"query": "zebra crossing rules", "manual_id": MANUAL}),
    )
    .await;
    assert_eq!(r["applied"]["expand_scope"], true);
    assert_eq!(r["applied"]["scope_expanded"], true, "{r}");
    let c = hits(&k, &r, "candidates").await;
    assert_eq!(c["manual_id"], "other", "{c}");
    let r = find(
        &k,
        json!({"query": "zebra crossing rules", "manual_id": MANUAL, "expand_scope": false}),
    )
    .await;
    assert_eq!(r["applied"]["scope_expanded"], false);
    let c = hits(&k, &r, "candidates").await;
    assert!(
        c["items"]
            .as_array()
            .unwrap()
            .iter()
            .all(|i| c["manual_id"] == MANUAL || i["ref"]["manual_id"] == MANUAL),
        "{c}"
    );
}

/// A manual where one side of a comparison crowds out the other: eight
/// sections on rsync that also name scp, one short page on scp.
fn add_crowded_manual(f: &Fixture) {
    let dir = f.manuals().join("tools");
    std::fs::create_dir_all(&dir).unwrap();
    let mut rsync = String::from("# rsync\n\n");
    for i in 1..=8 {
        rsync.push_str(&format!(
            "## rsync の使い方 {i}\n\nrsync は差分だけを転送する。rsync copies only the differences; rsync copia solo las diferencias. rsync is faster than scp, rsync es más rápido que scp, rsync は scp より速い。\n\n"
        ));
    }
    std::fs::write(dir.join("rsync.md"), rsync).unwrap();
    std::fs::write(
        dir.join("scp.md"),
        "# scp\n\nscp はファイルを ssh でコピーする。scp copies a file over ssh. scp copia un archivo por ssh.\n",
    )
    .unwrap();
}

/// Both sides of a comparison are in the top five, in every language.
async fn both_sides_in_the_top_five(query: &str) {
    let (f, k) = kura(&[]).await;
    add_crowded_manual(&f);
    page_indexed(&k, "tools", "rsync", "rsync.md").await;
    page_indexed(&k, "tools", "ssh", "scp.md").await;
    let r = find(
        &k,
        json!({"query": query, "manual_id": "tools", "include_claim_graph": true}),
    )
    .await;
    assert_eq!(
        r["applied"]["compare_sides"],
        json!(["rsync", "scp"]),
        "{r}"
    );
    let top: Vec<&str> = r["claim_graph"]["evidences"]
        .as_array()
        .unwrap()
        .iter()
        .take(5)
        .map(|e| e["ref"]["path"].as_str().unwrap())
        .collect();
    assert!(
        top.contains(&"rsync.md") && top.contains(&"scp.md"),
        "{query}: {top:?}"
    );
    let scores: Vec<f64> = r["claim_graph"]["evidences"]
        .as_array()
        .unwrap()
        .iter()
        .map(|e| e["score"].as_f64().unwrap())
        .collect();
    assert!(
        scores.windows(2).all(|w| w[0] >= w[1]),
        "scores stay in order: {scores:?}"
    );
}

#[tokio::test]
async fn a_japanese_comparison_has_both_sides_in_the_top_five() {
    both_sides_in_the_top_five("rsync と scp の違い").await;
}

#[tokio::test]
async fn an_english_comparison_has_both_sides_in_the_top_five() {
    both_sides_in_the_top_five("difference between rsync and scp").await;
}

#[tokio::test]
async fn a_spanish_comparison_has_both_sides_in_the_top_five() {
    both_sides_in_the_top_five("diferencia entre rsync y scp").await;
}

#[tokio::test]
async fn a_query_that_compares_nothing_has_no_sides() {
    let (_f, k) = kura(&[]).await;
    let r = find(&k, json!({"query": CACHING.replace("の違い", "")})).await;
    assert!(r["applied"].get("compare_sides").is_none(), "{r}");
}

#[tokio::test]
async fn corrective_stage_runs_when_stage3_is_weak() {
    // Two of the three words asked about are nowhere: the best section covers a
    // third of the query, stage 3 is weak, stage 4 runs.
    let q = "createApp と zebra と quokka の例外";
    let (_f, k) = kura(&[]).await;
    let r = find(&k, json!({"query": q, "include_claim_graph": true})).await;
    assert_eq!(r["applied"]["corrective"], "applied", "{r}");
    // A query the manual answers well is not weak.
    let r = find(&k, json!({"query": CACHING})).await;
    assert_eq!(r["applied"]["corrective"], "not_needed", "{r}");
    let (_f, k) = kura(&["--set", "corrective_enabled=false"]).await;
    let r = find(&k, json!({"query": q})).await;
    assert_eq!(r["applied"]["corrective"], "disabled");
}

#[tokio::test]
async fn default_manual_id_applies_when_manual_id_is_omitted() {
    let f = Fixture::new();
    add_other_manual(&f);
    let k = f
        .start_with_manuals(&["--set", "default_manual_id=other"])
        .await;
    let r = find(&k, json!({"query": "zebra"})).await;
    assert_eq!(r["applied"]["manual_id"], "other");
    let r = find(&k, json!({"query": "zebra", "manual_id": MANUAL})).await;
    assert_eq!(
        r["applied"]["manual_id"], MANUAL,
        "an explicit manual_id wins"
    );
    let (_f, k) = kura(&["--set", "default_manual_id=nope"]).await;
    assert_eq!(
        k.call("manual_find", json!({"query": "zebra"}))
            .await
            .code(),
        "not_found"
    );
}

#[tokio::test]
async fn expand_scope_include_claim_graph_use_cache_are_boolean_only() {
    let (_f, k) = kura(&[]).await;
    for key in ["expand_scope", "include_claim_graph", "use_cache"] {
        for bad in [json!("true"), json!(1), json!([])] {
            let mut args = json!({"query": "createApp"});
            args[key] = bad.clone();
            let r = k.call("manual_find", args).await;
            assert_eq!(r.code(), "invalid_parameter", "{key}={bad}");
            assert_eq!(r.body["error"]["details"]["parameter"], key);
        }
    }
}

#[tokio::test]
async fn use_cache_defaults_to_sem_cache_enabled() {
    let (_f, k) = kura(&[]).await;
    let a = find(&k, json!({"query": CACHING})).await;
    assert_eq!(a["applied"]["cache"], "miss");
    // Same terms in another order, case and width: the same query.
    let b = find(
        &k,
        json!({"query": "キャッシュされる？ 算出プロパティとメソッドの違い、"}),
    )
    .await;
    assert_eq!(b["applied"]["cache"], "hit", "{b}");
    assert_eq!(a["trace_id"], b["trace_id"]);
    let c = find(&k, json!({"query": CACHING, "use_cache": false})).await;
    assert_eq!(c["applied"]["cache"], "off");
    assert_ne!(a["trace_id"], c["trace_id"]);
    let (_f, k) = kura(&["--set", "sem_cache_enabled=false"]).await;
    let a = find(&k, json!({"query": CACHING})).await;
    let b = find(&k, json!({"query": CACHING})).await;
    assert_eq!(b["applied"]["cache"], "off");
    assert_ne!(a["trace_id"], b["trace_id"]);
    let c = find(&k, json!({"query": CACHING, "use_cache": true})).await;
    assert_eq!(
        c["applied"]["cache"], "hit",
        "use_cache=true overrides the setting"
    );
}

#[tokio::test]
async fn cache_hit_over_the_gap_threshold_searches_again() {
    let q = "createApp を使えない例外";
    let (_f, k) = kura(&["--set", "sem_cache_max_summary_gap=0"]).await;
    let a = find(&k, json!({"query": q})).await;
    assert!(a["summary"]["gap_count"].as_u64().unwrap() > 0, "{a}");
    let b = find(&k, json!({"query": q})).await;
    assert_eq!(b["applied"]["cache"], "miss");
    assert_ne!(a["trace_id"], b["trace_id"]);
    let (_f, k) = kura(&["--set", "sem_cache_max_summary_gap=-1"]).await;
    find(&k, json!({"query": q})).await;
    let b = find(&k, json!({"query": q})).await;
    assert_eq!(b["applied"]["cache"], "hit", "-1 means no threshold");
}

#[tokio::test]
async fn cache_is_invalidated_when_a_manual_changes() {
    let (f, k) = kura(&[]).await;
    let a = find(&k, json!({"query": "quokka"})).await;
    assert_eq!(a["summary"]["candidates"], 0);
    std::fs::write(
        f.manuals().join(MANUAL).join("guide/quokka.md"),
        "# Quokka\n\nThe quokka is a small marsupial.\n",
    )
    .unwrap();
    // The watcher reports the change asynchronously; a search after that
    // sees it, not the cached answer.
    let b = k
        .until("manual_find", json!({"query": "quokka"}), |r| {
            r["summary"]["candidates"] == 1
        })
        .await;
    assert_eq!(b["applied"]["cache"], "miss", "{b}");
    assert_eq!(b["summary"]["candidates"], 1, "{b}");
    let c = hits(&k, &b, "candidates").await;
    assert_eq!(c["items"][0]["ref"]["path"], "guide/quokka.md");
}

#[tokio::test]
async fn budget_defaults_are_60000_ms_and_200_candidates() {
    let (_f, k) = kura(&[]).await;
    let r = find(&k, json!({"query": "createApp"})).await;
    assert_eq!(
        r["applied"]["budget"],
        json!({"max_candidates": 200, "time_ms": 60000})
    );
    assert!(r.get("cutoff_reason").is_none());
}

#[tokio::test]
async fn budget_values_are_integers_at_least_1() {
    let (_f, k) = kura(&[]).await;
    for key in ["max_candidates", "time_ms"] {
        for bad in [
            json!(0),
            json!(-1),
            json!(1.5),
            json!("abc"),
            json!(true),
            json!(""),
        ] {
            let r = k
                .call(
                    "manual_find",
                    json!({"query": "createApp", "budget": {key: bad}}),
                )
                .await;
            assert_eq!(r.code(), "invalid_parameter", "{key}={bad}");
            assert_eq!(
                r.body["error"]["details"]["parameter"],
                format!("budget.{key}")
            );
        }
    }
}

#[tokio::test]
async fn budget_integer_convertible_values_are_accepted() {
    let (_f, k) = kura(&[]).await;
    let r = find(
        &k,
        json!({"query": "createApp", "budget": {"max_candidates": "100", "time_ms": 5000.0}}),
    )
    .await;
    assert_eq!(
        r["applied"]["budget"],
        json!({"max_candidates": 100, "time_ms": 5000})
    );
}

#[tokio::test]
async fn budget_max_candidates_cuts_the_list_and_says_so() {
    let (_f, k) = kura(&[]).await;
    let r = find(
        &k,
        json!({"query": CACHING, "budget": {"max_candidates": 1}}),
    )
    .await;
    assert_eq!(r["summary"]["candidates"], 1);
    assert_eq!(r["cutoff_reason"], "max_candidates");
    assert_eq!(hits(&k, &r, "candidates").await["total"], 1);
}

/// kura over the manuals whose first search stage takes `ms` longer (a
/// fault the test build injects on request).
async fn slow_search(f: &Fixture, ms: u64, extra: &[&str]) -> Kura {
    let manuals = f.manuals().display().to_string();
    let mut args = vec!["--manuals-root", manuals.as_str()];
    args.extend_from_slice(extra);
    let cmd = kura_tests::faulty_command(
        &f.args(&args),
        &[("KURA_FAULT_SLOW_SEARCH_MS", ms.to_string())],
    );
    Kura::start_command(
        cmd,
        rmcp::service::ClientLifecycleMode::Initialize,
        std::process::Stdio::null(),
    )
    .await
}

#[tokio::test]
async fn budget_time_ms_skips_later_stages_and_says_so() {
    let f = Fixture::new();
    let k = slow_search(&f, 300, &[]).await;
    // The reranker is ready: what follows is skipped for the budget alone.
    let full = k.find_reranked(CACHING).await;
    assert_eq!(full["applied"]["late_rerank"], "applied", "{full}");
    assert_ne!(full["cutoff_reason"], "time_ms", "{full}");
    // The first stage alone outlasts a 100 ms budget.
    let r = find(
        &k,
        json!({"query": CACHING, "budget": {"time_ms": 100}, "use_cache": false}),
    )
    .await;
    assert_eq!(r["applied"]["late_rerank"], "skipped", "{r}");
    assert_eq!(r["cutoff_reason"], "time_ms", "{r}");
    assert!(r["summary"]["candidates"].as_u64().unwrap() > 0, "{r}");
}

#[tokio::test]
async fn a_cancelled_manual_find_stops_and_caches_nothing() {
    let f = Fixture::new();
    // One call at a time: the next call runs once the cancelled one ended.
    let k = slow_search(&f, 2000, &["--set", "max_concurrent_calls=1"]).await;
    let params = rmcp::model::CallToolRequestParams::new("manual_find")
        .with_arguments(json!({"query": CACHING}).as_object().unwrap().clone());
    let request =
        rmcp::model::ClientRequest::CallToolRequest(rmcp::model::CallToolRequest::new(params));
    let handle = k
        .client
        .peer()
        .send_cancellable_request(request, rmcp::service::PeerRequestOptions::no_options())
        .await
        .unwrap();
    // Cancelled during its first stage: it stops at the next stage's door.
    handle.cancel(Some("test".into())).await.unwrap();
    // Run after it: had it finished, its answer would be cached.
    let again = find(&k, json!({"query": CACHING})).await;
    assert_eq!(again["applied"]["cache"], "miss", "{again}");
    let third = find(&k, json!({"query": CACHING})).await;
    assert_eq!(third["applied"]["cache"], "hit", "{third}");
}

#[tokio::test]
async fn only_unscanned_from_trace_id_leaves_out_what_was_integrated() {
    let (_f, k) = kura(&[]).await;
    let a = find(&k, json!({"query": CACHING})).await;
    let first = hits(&k, &a, "evidences").await;
    let b = find(
        &k,
        json!({"query": CACHING, "only_unscanned_from_trace_id": a["trace_id"]}),
    )
    .await;
    let second = hits(&k, &b, "candidates").await;
    let key = |r: &Value| (r["path"].clone(), r["start_line"].clone());
    for e in first["items"].as_array().unwrap() {
        for c in second["items"].as_array().unwrap() {
            assert_ne!(key(&e["ref"]), key(&c["ref"]), "already integrated: {e}");
        }
    }
    let r = k
        .call(
            "manual_find",
            json!({"query": CACHING, "only_unscanned_from_trace_id": "tr_nope"}),
        )
        .await;
    assert_eq!(r.code(), "not_found");
}

#[tokio::test]
async fn next_actions_use_only_the_types_004_allows() {
    let (_f, k) = kura(&[]).await;
    for q in [CACHING, "createApp を使えない例外", "quokka"] {
        let r = find(&k, json!({"query": q})).await;
        for a in r["next_actions"].as_array().unwrap() {
            let t = a["type"].as_str().unwrap();
            assert!(
                ["manual_hits", "manual_read", "manual_find"].contains(&t),
                "{a}"
            );
            // The params are a call that works.
            let res = k.call(t, a["params"].clone()).await;
            assert!(!res.is_error, "{t} {}: {}", a["params"], res.body);
        }
    }
}

#[tokio::test]
async fn query_text_is_never_syntax() {
    let (_f, k) = kura(&[]).await;
    for q in [
        "C++ \"rate-limiting\" (auth) -x:y",
        "title:createApp AND NOT",
        "*",
        "\\",
    ] {
        let r = k.call("manual_find", json!({"query": q})).await;
        assert!(!r.is_error, "{q}: {}", r.body);
    }
}

#[tokio::test]
async fn query_is_required_and_not_empty() {
    let (_f, k) = kura(&[]).await;
    for args in [
        json!({}),
        json!({"query": ""}),
        json!({"query": "  "}),
        json!({"query": 3}),
    ] {
        let r = k.call("manual_find", args.clone()).await;
        assert_eq!(r.code(), "invalid_parameter", "{args}");
    }
}

#[tokio::test]
async fn unknown_manual_id_is_not_found() {
    let (_f, k) = kura(&[]).await;
    let r = k
        .call("manual_find", json!({"query": "x", "manual_id": "nope"}))
        .await;
    assert_eq!(r.code(), "not_found");
}

#[tokio::test]
async fn trace_max_keep_forgets_the_oldest_trace() {
    let (_f, k) = kura(&["--set", "trace_max_keep=1"]).await;
    let a = find(&k, json!({"query": "createApp"})).await;
    find(&k, json!({"query": CACHING})).await;
    let r = k
        .call("manual_hits", json!({"trace_id": a["trace_id"]}))
        .await;
    assert_eq!(r.code(), "not_found");
}

// ---- manual_hits -------------------------------------------------------------

#[tokio::test]
async fn manual_hits_kind_defaults_to_candidates() {
    let (_f, k) = kura(&[]).await;
    let r = find(&k, json!({"query": CACHING})).await;
    let h = k
        .call("manual_hits", json!({"trace_id": r["trace_id"]}))
        .await;
    assert_eq!(h.ok()["kind"], "candidates");
    assert_eq!(h.ok()["total"], r["summary"]["candidates"]);
}

#[tokio::test]
async fn manual_hits_offset_and_limit_default_to_0_and_50() {
    let (_f, k) = kura(&[]).await;
    let r = find(&k, json!({"query": CACHING})).await;
    let h = k
        .call("manual_hits", json!({"trace_id": r["trace_id"]}))
        .await;
    assert_eq!(h.ok()["offset"], 0);
    assert_eq!(h.ok()["limit"], 50);
    let all = hits(&k, &r, "candidates").await;
    let page = k
        .call(
            "manual_hits",
            json!({"trace_id": r["trace_id"], "offset": 1, "limit": 2}),
        )
        .await;
    assert_eq!(page.ok()["items"].as_array().unwrap().len(), 2);
    assert_eq!(page.ok()["items"][0], all["items"][1]);
    assert_eq!(page.ok()["total"], all["total"]);
}

#[tokio::test]
async fn manual_hits_offset_at_least_0_and_limit_at_least_1() {
    let (_f, k) = kura(&[]).await;
    let r = find(&k, json!({"query": CACHING})).await;
    for (key, bad) in [
        ("offset", json!(-1)),
        ("offset", json!(1.5)),
        ("offset", json!("1")),
        ("limit", json!(0)),
        ("limit", json!(-3)),
        ("limit", json!(true)),
    ] {
        let mut args = json!({"trace_id": r["trace_id"]});
        args[key] = bad.clone();
        let h = k.call("manual_hits", args).await;
        assert_eq!(h.code(), "invalid_parameter", "{key}={bad}");
    }
}

#[tokio::test]
async fn manual_hits_candidates_are_compressed() {
    let (_f, k) = kura(&[]).await;
    let r = find(&k, json!({"query": CACHING})).await;
    let c = hits(&k, &r, "candidates").await;
    for i in c["items"].as_array().unwrap() {
        assert!(
            i.get("target").is_none() && i.get("json_path").is_none(),
            "{i}"
        );
        assert!(i["ref"].get("target").is_none() && i["ref"].get("json_path").is_none());
    }
}

#[tokio::test]
async fn manual_hits_candidates_hoist_a_shared_manual_id() {
    let (f, k) = kura(&[]).await;
    let r = find(&k, json!({"query": CACHING})).await;
    let c = hits(&k, &r, "candidates").await;
    assert_eq!(c["manual_id"], MANUAL);
    assert!(
        c["items"]
            .as_array()
            .unwrap()
            .iter()
            .all(|i| i["ref"].get("manual_id").is_none())
    );
    // Candidates from two manuals: each ref names its own.
    add_other_manual(&f);
    std::fs::write(
        f.manuals().join("other/computed.md"),
        "# 算出プロパティ\n\n算出プロパティはキャッシュされます。\n",
    )
    .unwrap();
    // Once the watcher has reported the new manual.
    let r = k
        .until(
            "manual_find",
            json!({"query": CACHING, "use_cache": false}),
            |r| r.to_string().contains("other"),
        )
        .await;
    let c = hits(&k, &r, "candidates").await;
    assert!(c.get("manual_id").is_none(), "{c}");
    let manuals: std::collections::BTreeSet<&str> = c["items"]
        .as_array()
        .unwrap()
        .iter()
        .map(|i| i["ref"]["manual_id"].as_str().unwrap())
        .collect();
    assert_eq!(manuals, [MANUAL, "other"].into_iter().collect());
}

#[tokio::test]
async fn manual_hits_serves_every_kind() {
    let (_f, k) = kura(&[]).await;
    let r = find(
        &k,
        json!({"query": "createApp を使えない例外", "include_claim_graph": true}),
    )
    .await;
    let g = &r["claim_graph"];
    for (kind, expected) in [
        (
            "candidates",
            r["summary"]["candidates"].as_u64().unwrap() as usize,
        ),
        ("claims", g["claims"].as_array().unwrap().len()),
        ("evidences", g["evidences"].as_array().unwrap().len()),
        ("edges", g["edges"].as_array().unwrap().len()),
        ("integrated_top", g["evidences"].as_array().unwrap().len()),
        ("gaps", r["summary"]["gap_count"].as_u64().unwrap() as usize),
        (
            "conflicts",
            r["summary"]["conflict_count"].as_u64().unwrap() as usize,
        ),
    ] {
        let h = hits(&k, &r, kind).await;
        assert_eq!(h["kind"], kind);
        assert_eq!(h["total"], expected, "{kind}: {h}");
        assert_eq!(h["items"].as_array().unwrap().len(), expected, "{kind}");
    }
    let cands = r["summary"]["candidates"].as_u64().unwrap();
    let ev = g["evidences"].as_array().unwrap().len() as u64;
    assert_eq!(hits(&k, &r, "unscanned").await["total"], cands - ev);
    let top = hits(&k, &r, "integrated_top").await;
    assert!(top["items"][0]["snippet"].as_str().is_some());
}

#[tokio::test]
async fn manual_hits_unknown_trace_is_not_found_and_unknown_kind_is_invalid() {
    let (_f, k) = kura(&[]).await;
    let h = k.call("manual_hits", json!({"trace_id": "tr_0"})).await;
    assert_eq!(h.code(), "not_found");
    let r = find(&k, json!({"query": CACHING})).await;
    let h = k
        .call(
            "manual_hits",
            json!({"trace_id": r["trace_id"], "kind": "everything"}),
        )
        .await;
    assert_eq!(h.code(), "invalid_parameter");
    let h = k.call("manual_hits", json!({})).await;
    assert_eq!(h.code(), "invalid_parameter");
}

/// The counts of `kura index`'s manuals line: (scanned, added, updated, unchanged).
fn indexed(f: &Fixture, state: &std::path::Path) -> (u64, u64, u64, u64) {
    let mut cmd = std::process::Command::new(kura_tests::kura_bin());
    cmd.arg("index")
        .arg("--config")
        .arg(f.dir.path().join("empty.toml"))
        .arg("--manuals-root")
        .arg(f.manuals())
        .arg("--state-dir")
        .arg(state);
    for var in kura::config::env_names() {
        cmd.env_remove(var);
    }
    let out = cmd.output().unwrap();
    assert!(out.status.success(), "{out:?}");
    let stdout = String::from_utf8_lossy(&out.stdout);
    let line = stdout
        .lines()
        .find(|l| l.starts_with("manuals:"))
        .unwrap_or_else(|| panic!("no manuals line: {stdout}"));
    let count = |word: &str| -> u64 {
        let before = line.split(&format!(" {word}")).next().unwrap();
        before.rsplit(' ').next().unwrap().parse().unwrap()
    };
    (
        count("files scanned"),
        count("added"),
        count("updated"),
        count("unchanged"),
    )
}

/// docs/scale-out.md: the manuals' index is built once by `kura index` and
/// shipped to each replica's state folder; there it is used as is, whether
/// the copy kept the files' times or not (then each file is hashed, not
/// re-indexed).
#[test]
#[allow(clippy::disallowed_methods)] // builds and copies its fixture with std::fs
fn an_index_built_once_and_shipped_is_used_without_reindexing() {
    let f = Fixture::new();
    let build = f.dir.path().join("build");
    let (scanned, added, _, _) = indexed(&f, &build);
    assert!(scanned > 0 && added == scanned, "{scanned} {added}");
    // `cp -a` keeps the files' times, `cp -r` does not.
    let ship = |to: &str, flag: &str| {
        let state = f.dir.path().join(to);
        std::fs::create_dir_all(&state).unwrap();
        let ok = std::process::Command::new("cp")
            .arg(flag)
            .arg(build.join("index"))
            .arg(&state)
            .status()
            .unwrap();
        assert!(ok.success());
        state
    };
    let replica = ship("replica", "-a");
    assert_eq!(
        indexed(&f, &replica),
        (scanned, 0, 0, scanned),
        "times kept"
    );
    // Every manual rewritten unchanged: new times, same bytes.
    let mut stack = vec![f.manuals()];
    while let Some(dir) = stack.pop() {
        for e in std::fs::read_dir(&dir).unwrap().flatten() {
            if e.file_type().unwrap().is_dir() {
                stack.push(e.path());
            } else {
                let bytes = std::fs::read(e.path()).unwrap();
                std::fs::write(e.path(), bytes).unwrap();
            }
        }
    }
    let fresh = ship("replica-2", "-r");
    assert_eq!(
        indexed(&f, &fresh),
        (scanned, 0, 0, scanned),
        "times changed"
    );
}

// ---- queries: the agent's other phrasings (issue 55) --------------------------

/// An English manual of system calls: the page a Japanese question means
/// shares none of its words.
fn add_syscalls_manual(f: &Fixture) {
    let dir = f.manuals().join("syscalls");
    std::fs::create_dir_all(&dir).unwrap();
    let pages = [
        (
            "dup.md",
            "# dup, dup2\n\nDuplicate a file descriptor. dup2() makes newfd a copy of oldfd, closing newfd first: the usual way to redirect standard output.\n",
        ),
        (
            "pipe.md",
            "# pipe\n\nCreate a pipe: a unidirectional data channel between processes.\n",
        ),
        (
            "wait.md",
            "# wait, waitpid\n\nWait for a child process to change state and obtain its exit status.\n",
        ),
        (
            "open.md",
            "# open\n\nOpen and possibly create a file, returning a file descriptor.\n",
        ),
    ];
    for (name, text) in pages {
        std::fs::write(dir.join(name), text).unwrap();
    }
}

/// Wait until the index holds every page of [`add_syscalls_manual`].
async fn syscalls_indexed(k: &Kura) {
    for (word, path) in [
        ("dup2", "dup.md"),
        ("pipe", "pipe.md"),
        ("waitpid", "wait.md"),
        ("open", "open.md"),
    ] {
        page_indexed(k, "syscalls", word, path).await;
    }
}

#[tokio::test]
async fn the_agent_s_phrasings_find_the_page_the_question_s_own_words_miss() {
    let (f, k) = kura(&[]).await;
    add_syscalls_manual(&f);
    syscalls_indexed(&k).await;
    let question = "標準出力を別のファイルに差し替えたい";
    let alone = find(
        &k,
        json!({"query": question, "manual_id": "syscalls", "expand_scope": false}),
    )
    .await;
    let first = |r: &Value| {
        r["next_actions"][0]["params"]["ref"]["path"]
            .as_str()
            .map(str::to_owned)
    };
    assert_ne!(first(&alone).as_deref(), Some("dup.md"), "{alone}");
    let phrased = find(
        &k,
        json!({
            "query": question,
            "manual_id": "syscalls",
            "expand_scope": false,
            "queries": ["redirect standard output to a file", "dup2", "標準出力を別のファイルに差し替えたい！"],
        }),
    )
    .await;
    let c = hits(&k, &phrased, "candidates").await;
    assert_eq!(c["items"][0]["ref"]["path"], "dup.md", "{c}");
    // One call, one trace; a phrasing with the question's own words is left out.
    assert_eq!(
        phrased["applied"]["queries"],
        json!(["redirect standard output to a file", "dup2"]),
        "{phrased}"
    );
}

#[tokio::test]
async fn more_than_four_phrasings_or_a_blank_one_is_refused_by_name() {
    let (_f, k) = kura(&[]).await;
    let five = json!({"query": CACHING, "queries": ["a", "b", "c", "d", "e"]});
    let r = k.call("manual_find", five).await;
    assert_eq!(r.code(), "invalid_parameter", "{r:?}");
    assert_eq!(r.body["error"]["details"]["parameter"], "queries", "{r:?}");
    let blank = json!({"query": CACHING, "queries": ["computed", " "]});
    let r = k.call("manual_find", blank).await;
    assert_eq!(r.code(), "invalid_parameter", "{r:?}");
    assert_eq!(
        r.body["error"]["details"]["parameter"], "queries[1]",
        "{r:?}"
    );
}

#[tokio::test]
async fn a_question_in_another_language_than_the_manual_is_told_what_to_pass() {
    let (f, k) = kura(&[]).await;
    add_syscalls_manual(&f);
    syscalls_indexed(&k).await;
    let hint = |r: &Value| queries_hint(r).map(str::to_owned);
    let args = json!({"query": "標準出力を別のファイルに差し替えたい", "manual_id": "syscalls", "expand_scope": false});
    let r = find(&k, args).await;
    let said = hint(&r).unwrap_or_else(|| panic!("no hint: {r}"));
    assert!(
        said.contains("Japanese") && said.contains("English"),
        "{said}"
    );
    // Asked in the manual's language and answered: nothing to say.
    let r = find(
        &k,
        json!({"query": "duplicate a file descriptor", "manual_id": "syscalls"}),
    )
    .await;
    assert_eq!(hint(&r), None, "{r}");
    // With phrasings given, the caller has done what the hint would ask.
    let args = json!({"query": "標準出力を差し替えたい", "manual_id": "syscalls", "queries": ["redirect standard output"]});
    assert_eq!(hint(&find(&k, args).await), None);
}

#[tokio::test]
async fn manual_ls_says_what_each_manual_is_written_in_and_its_size() {
    let (f, k) = kura(&[]).await;
    add_syscalls_manual(&f);
    let r = k.call("manual_ls", json!({})).await;
    let items = r.ok()["items"].as_array().unwrap().clone();
    let of = |id: &str| items.iter().find(|i| i["id"] == id).unwrap().clone();
    let vue = of(MANUAL);
    assert_eq!(vue["languages"][0]["code"], "jpn", "{vue}");
    assert!(vue["files"].as_u64().unwrap() > 0 && vue["bytes"].as_u64().unwrap() > 0);
    let calls = of("syscalls");
    assert_eq!(calls["languages"][0]["name"], "English", "{calls}");
    assert_eq!(calls["files"], 4);
}
