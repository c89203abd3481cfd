//! vault_coverage and artifact_audit (seed 001, docs/decisions.md "Vault discovery and
//! audit") against the real binary over stdio, the auditor running as the
//! default wasm component. Fixtures: `research/backup-guide.md` (47 lines),
//! `research/backup-summary.md` (a clean artifact of it) and
//! `research/backup-draft.md` (an artifact with known defects).

use kura_tests::{Fixture, Kura, auditor_wasm};
use serde_json::{Value, json};

const SOURCE: &str = "research/backup-guide.md";
const CLEAN: &str = "research/backup-summary.md";
const DRAFT: &str = "research/backup-draft.md";

async fn kura(extra: &[&str]) -> (Fixture, Kura) {
    let f = Fixture::new();
    let k = kura_tests::Kura::start(
        f.args(extra),
        rmcp::service::ClientLifecycleMode::Initialize,
    )
    .await;
    (f, k)
}

fn ranges(v: &Value) -> Vec<(u64, u64)> {
    v.as_array()
        .unwrap()
        .iter()
        .map(|r| {
            (
                r["start_line"].as_u64().unwrap(),
                r["end_line"].as_u64().unwrap(),
            )
        })
        .collect()
}

fn kinds(actions: &Value) -> Vec<&str> {
    actions
        .as_array()
        .unwrap()
        .iter()
        .map(|a| a["type"].as_str().unwrap())
        .collect()
}

async fn audit(k: &Kura, artifact: &str, cited: Option<Value>) -> Value {
    let mut args = json!({"artifact_path": artifact, "source_path": SOURCE});
    if let Some(c) = cited {
        args["cited_ranges"] = c;
    }
    k.call("artifact_audit", args).await.ok().clone()
}

fn lines(a: u64, b: u64) -> Value {
    json!([{"start_line": a, "end_line": b}])
}

// ---- vault_coverage ------------------------------------------------------

#[tokio::test]
async fn cited_ranges_are_merged_when_they_overlap_or_touch() {
    let (_f, k) = kura(&[]).await;
    let r = k
        .call(
            "vault_coverage",
            json!({"path": SOURCE, "cited_ranges": [
                {"start_line": 5, "end_line": 8}, {"start_line": 1, "end_line": 2},
                {"start_line": 3, "end_line": 4}, {"start_line": 7, "end_line": 10},
                {"start_line": 15, "end_line": 15}
            ]}),
        )
        .await;
    let v = r.ok();
    assert_eq!(v["total_lines"], 47);
    assert_eq!(ranges(&v["covered_ranges"]), vec![(1, 10), (15, 15)]);
    assert_eq!(ranges(&v["uncovered_ranges"]), vec![(11, 14), (16, 47)]);
    assert_eq!(v["covered_lines"], 11);
    assert_eq!(v["coverage_ratio"], 0.234);
}

#[tokio::test]
async fn coverage_ratio_of_an_empty_file_is_one() {
    let (f, k) = kura(&[]).await;
    f.write("empty.md", "");
    let v = k
        .call(
            "vault_coverage",
            json!({"path": "empty.md", "cited_ranges": []}),
        )
        .await
        .ok()
        .clone();
    assert_eq!(v["total_lines"], 0);
    assert_eq!(v["coverage_ratio"], 1.0);
    assert_eq!(v["meets_min_coverage"], true);
    assert_eq!(kinds(&v["next_actions"]), ["stop"]);
}

#[tokio::test]
async fn meets_min_coverage_is_ratio_at_least_coverage_min_ratio() {
    let (_f, k) = kura(&[]).await;
    let at = |a, b| json!({"path": SOURCE, "cited_ranges": lines(a, b)});
    // 43/47 = 0.915 >= 0.90; 42/47 = 0.894 < 0.90.
    let v = k.call("vault_coverage", at(1, 43)).await.ok().clone();
    assert_eq!(v["meets_min_coverage"], true);
    assert_eq!(kinds(&v["next_actions"]), ["stop"]);
    let v = k.call("vault_coverage", at(1, 42)).await.ok().clone();
    assert_eq!(v["meets_min_coverage"], false);
    // Not enough: scan the first uncovered range (001 §3).
    assert_eq!(kinds(&v["next_actions"]), ["vault_scan"]);
    assert_eq!(
        v["next_actions"][0]["params"],
        json!({"path": SOURCE, "start_line": 43})
    );
    // The suggested call works.
    k.call("vault_scan", v["next_actions"][0]["params"].clone())
        .await
        .ok();
    k.stop().await;
    let (_f, k) = kura(&["--set", "COVERAGE_MIN_RATIO=0.5"]).await;
    let v = k.call("vault_coverage", at(1, 24)).await.ok().clone();
    assert_eq!(v["meets_min_coverage"], true, "24/47 = 0.51 >= 0.5");
    assert_eq!(v["applied"]["coverage_min_ratio"], 0.5);
}

#[tokio::test]
async fn coverage_rejects_bad_ranges_with_invalid_parameter() {
    let (_f, k) = kura(&[]).await;
    for (cited, name) in [
        (json!([{"start_line": 5, "end_line": 4}]), "cited_ranges[0]"),
        (
            json!([{"start_line": 1, "end_line": 48}]),
            "cited_ranges[0].end_line",
        ),
        (
            json!([{"start_line": 0, "end_line": 4}]),
            "cited_ranges[0].start_line",
        ),
        (
            json!([{"start_line": 1, "end_line": 2}, {"start_line": true, "end_line": 4}]),
            "cited_ranges[1].start_line",
        ),
        (json!([{"start_line": 1}]), "cited_ranges[0].end_line"),
        (json!([[1, 2]]), "cited_ranges[0]"),
        (json!("1-2"), "cited_ranges"),
    ] {
        let r = k
            .call(
                "vault_coverage",
                json!({"path": SOURCE, "cited_ranges": cited}),
            )
            .await;
        assert_eq!(r.code(), "invalid_parameter", "{cited}");
        assert_eq!(r.body["error"]["details"]["parameter"], name, "{cited}");
    }
    let r = k.call("vault_coverage", json!({"path": SOURCE})).await;
    assert_eq!(r.code(), "invalid_parameter");
    let r = k
        .call(
            "vault_coverage",
            json!({"path": "../outside/canary.txt", "cited_ranges": []}),
        )
        .await;
    assert_eq!(r.code(), "out_of_scope");
    let r = k
        .call(
            "vault_coverage",
            json!({"path": "nope.md", "cited_ranges": []}),
        )
        .await;
    assert_eq!(r.code(), "not_found");
}

// ---- artifact_audit ------------------------------------------------------

#[tokio::test]
async fn audit_counts_each_finding_kind_exactly() {
    let (_f, k) = kura(&[]).await;
    let v = audit(&k, DRAFT, None).await;
    assert_eq!(v["rootless_nodes"], 2, "{v:#}");
    assert_eq!(v["orphan_branches"], 2, "{v:#}");
    assert_eq!(v["one_way_refs"], 3, "{v:#}");
    let found: Vec<(&str, &str)> = v["findings"]
        .as_array()
        .unwrap()
        .iter()
        .map(|f| (f["kind"].as_str().unwrap(), f["node_id"].as_str().unwrap()))
        .collect();
    assert_eq!(
        found,
        [
            ("rootless_node", "item@L7"),
            ("rootless_node", "item@L8"),
            ("orphan_branch", "heading@L10"),
            ("orphan_branch", "heading@L12"),
            ("one_way_ref", "item@L17"),
            ("one_way_ref", "item@L18"),
            ("one_way_ref", "item@L19"),
        ]
    );
    // Messages carry the spec's own term for each kind.
    let msgs: Vec<&str> = v["findings"]
        .as_array()
        .unwrap()
        .iter()
        .map(|f| f["message"].as_str().unwrap())
        .collect();
    assert!(
        msgs[0].contains("根拠なし要素")
            && msgs[2].contains("孤立分岐")
            && msgs[4].contains("片方向参照")
    );
    // Cited: L9, L18-L19, L37, L16, L40 (L120-L125 lies outside the source).
    assert_eq!(v["coverage_ratio"], 0.128);
    assert_eq!(v["uncovered_ranges_count"], 6);
    assert_eq!(v["needs_forced_full_scan"], true);
    assert_eq!(v["applied"]["cited_ranges_from"], "artifact");
    assert_eq!(v["applied"]["node_count"], 14);
    assert_eq!(
        kinds(&v["next_actions"]),
        ["vault_scan", "vault_scan", "artifact_audit"]
    );
    assert_eq!(
        v["next_actions"][0]["params"],
        json!({"path": SOURCE, "start_line": 1})
    );
    assert_eq!(
        v["next_actions"][1]["params"],
        json!({"path": DRAFT, "start_line": 7})
    );
    for a in v["next_actions"].as_array().unwrap() {
        k.call(a["type"].as_str().unwrap(), a["params"].clone())
            .await
            .ok();
    }
}

#[tokio::test]
async fn a_clean_artifact_has_zero_findings_and_stops() {
    let (_f, k) = kura(&[]).await;
    let v = audit(&k, CLEAN, None).await;
    assert_eq!(v["findings"], json!([]), "{v:#}");
    assert_eq!(
        (
            &v["rootless_nodes"],
            &v["orphan_branches"],
            &v["one_way_refs"]
        ),
        (&json!(0), &json!(0), &json!(0))
    );
    assert_eq!(v["coverage_ratio"], 1.0);
    assert_eq!(v["uncovered_ranges_count"], 0);
    assert_eq!(v["needs_forced_full_scan"], false);
    assert_eq!(kinds(&v["next_actions"]), ["stop"]);
}

#[tokio::test]
async fn marginal_gain_is_the_share_newly_covered_since_the_previous_audit() {
    let (f, k) = kura(&[]).await;
    // First audit of the pair: everything covered is new. 10/47 = 0.213.
    let v = audit(&k, CLEAN, Some(lines(1, 10))).await;
    assert_eq!(v["marginal_gain"], 0.213);
    assert_eq!(v["applied"]["cited_ranges_from"], "given");
    // Lines 11..20 are new: 10/47 again.
    let v = audit(&k, CLEAN, Some(lines(1, 20))).await;
    assert_eq!(v["marginal_gain"], 0.213);
    // Nothing new.
    let v = audit(&k, CLEAN, Some(lines(1, 20))).await;
    assert_eq!(v["marginal_gain"], 0.0);
    // The history is the server's, under .system/audit/, and per pair.
    let dir = f.vault().join(".system/audit");
    assert_eq!(std::fs::read_dir(&dir).unwrap().count(), 1);
    let v = audit(&k, DRAFT, Some(lines(1, 20))).await;
    assert_eq!(v["marginal_gain"], 0.426, "a new pair starts afresh");
    assert_eq!(std::fs::read_dir(&dir).unwrap().count(), 2);
    // It survives a restart.
    k.stop().await;
    let k = f.start().await;
    let v = audit(&k, CLEAN, Some(lines(1, 20))).await;
    assert_eq!(v["marginal_gain"], 0.0);
}

#[tokio::test]
async fn needs_forced_full_scan_follows_the_three_rules() {
    let (_f, k) = kura(&[]).await;
    // Rule 1 only: coverage below COVERAGE_MIN_RATIO (gain is 0 the second time).
    audit(&k, CLEAN, Some(lines(1, 20))).await;
    let v = audit(&k, CLEAN, Some(lines(1, 20))).await;
    assert_eq!(
        (
            v["marginal_gain"].as_f64(),
            v["findings"].as_array().unwrap().len()
        ),
        (Some(0.0), 0)
    );
    assert_eq!(v["needs_forced_full_scan"], true);
    assert_eq!(
        v["next_actions"][0]["params"],
        json!({"path": SOURCE, "start_line": 21})
    );
    // Rule 2 only: full coverage, but findings.
    let v = audit(&k, DRAFT, Some(lines(1, 47))).await;
    assert_eq!(
        (
            v["coverage_ratio"].as_f64(),
            v["uncovered_ranges_count"].as_u64()
        ),
        (Some(1.0), Some(0))
    );
    assert_eq!(v["needs_forced_full_scan"], true);
    assert_eq!(kinds(&v["next_actions"]), ["vault_scan", "artifact_audit"]);
    assert_eq!(v["next_actions"][0]["params"]["path"], DRAFT);
    // Rule 3 only: coverage 44/47 = 0.936 is enough and nothing is wrong,
    // but this pass still gained (24 new lines of 47 >= 0.02) and lines remain.
    let v = audit(&k, CLEAN, Some(lines(1, 44))).await;
    assert!(v["marginal_gain"].as_f64().unwrap() >= 0.02);
    assert_eq!(v["uncovered_ranges_count"], 1);
    assert_eq!(v["needs_forced_full_scan"], true);
    assert_eq!(
        v["next_actions"][0]["params"],
        json!({"path": SOURCE, "start_line": 45})
    );
    // None: the same again gains nothing; stop.
    let v = audit(&k, CLEAN, Some(lines(1, 44))).await;
    assert_eq!(v["needs_forced_full_scan"], false);
    assert_eq!(kinds(&v["next_actions"]), ["stop"]);
}

#[tokio::test]
async fn audit_refuses_bad_paths_and_ranges() {
    let (f, k) = kura(&[]).await;
    let r = k
        .call(
            "artifact_audit",
            json!({"artifact_path": "nope.md", "source_path": SOURCE}),
        )
        .await;
    assert_eq!(r.code(), "not_found");
    let r = k
        .call(
            "artifact_audit",
            json!({"artifact_path": CLEAN, "source_path": "../outside/canary.txt"}),
        )
        .await;
    assert_eq!(r.code(), "out_of_scope");
    let r = k
        .call("artifact_audit", json!({"artifact_path": CLEAN}))
        .await;
    assert_eq!(r.code(), "invalid_parameter");
    let r = k
        .call(
            "artifact_audit",
            json!({"artifact_path": CLEAN, "source_path": SOURCE, "cited_ranges": [{"start_line": 3, "end_line": 99}]}),
        )
        .await;
    assert_eq!(r.code(), "invalid_parameter");
    f.assert_canary_untouched();
}

#[tokio::test]
async fn the_auditor_is_swapped_by_one_line_of_config() {
    let wasm = format!("auditor={}", auditor_wasm().display());
    let (_f, k) = kura(&["--plugin", &wasm]).await;
    let v = audit(&k, DRAFT, None).await;
    assert_eq!(
        (
            &v["rootless_nodes"],
            &v["orphan_branches"],
            &v["one_way_refs"]
        ),
        (&json!(2), &json!(2), &json!(3))
    );
}

#[tokio::test]
async fn audit_tools_carry_their_annotations() {
    let (_f, k) = kura(&[]).await;
    let tools = k.tools().await;
    let get = |n: &str| tools.iter().find(|t| t.name == n).unwrap().clone();
    let cov = get("vault_coverage").annotations.unwrap();
    assert_eq!(cov.read_only_hint, Some(true));
    let aud = get("artifact_audit").annotations.unwrap();
    assert_eq!(aud.read_only_hint, Some(false));
    assert_eq!(aud.destructive_hint, Some(false));
    assert!(get("artifact_audit").output_schema.is_some());
}
