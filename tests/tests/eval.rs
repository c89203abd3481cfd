//! The retrieval evaluation as a test: `kura eval` on the bundled gold set
//! (69 queries in Japanese, English and Spanish) must stay above issue 3's
//! bar, and the late rerank must not lower MRR.

use kura_tests::{command, workspace};
use serde_json::Value;

#[tokio::test]
async fn gold_set_meets_the_bar_and_the_reranker_does_not_lower_mrr() {
    let mut cmd = command(&["eval".into(), "--json".into()]);
    cmd.current_dir(workspace());
    let out = cmd.output().await.expect("run kura eval");
    assert!(
        out.status.success(),
        "kura eval failed: {}",
        String::from_utf8_lossy(&out.stderr)
    );
    let report: Value = serde_json::from_slice(&out.stdout).expect("JSON report");
    let total = |name: &str| report[name]["total"].clone();
    let default = total("default (reranker + claim graph)");
    let no_rerank = total("no reranker");
    let f = |v: &Value, k: &str| v[k].as_f64().unwrap();
    assert_eq!(default["queries"], 69);
    assert!(f(&default, "hit_at_5") >= 0.90, "{default}");
    assert!(f(&default, "mrr_at_5") >= 0.75, "{default}");
    assert!(
        f(&default, "mrr_at_5") >= f(&no_rerank, "mrr_at_5"),
        "the reranker lowers MRR: {default} vs {no_rerank}"
    );
    // Every language holds its own, not just the average.
    for lang in ["ja", "en", "es"] {
        let l = &report["default (reranker + claim graph)"]["per_language"][lang];
        assert!(f(l, "hit_at_5") >= 0.85, "{lang}: {l}");
    }
}
