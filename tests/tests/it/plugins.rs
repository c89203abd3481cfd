//! Plugin faults: a component that loops, allocates without bound or traps
//! ends that call only (`timeout` / `plugin_failed`), the write is refused,
//! and the server keeps serving. Bad components are named at start-up.

use kura_tests::{
    Fixture, Kura, command, granted_wasm, hostile_wasm, mistyped_wasm, reranker_wasm,
    rust_reranker_wasm, wait_for_log,
};
use rmcp::service::ClientLifecycleMode;
use serde_json::json;

async fn hostile(f: &Fixture) -> Kura {
    let wasm = hostile_wasm().display().to_string();
    Kura::start(
        f.args(&[
            "--plugin",
            &format!("write_policy={wasm}"),
            "--set",
            "plugin_timeout_ms=300",
            "--set",
            "plugin_memory_mib=16",
        ]),
        ClientLifecycleMode::Initialize,
    )
    .await
}

async fn still_serving(k: &Kura) {
    let r = k
        .call(
            "vault_read",
            json!({"path": "notes/welcome.md", "range": {"start_line": 1, "end_line": 1}}),
        )
        .await;
    assert_eq!(r.ok()["text"], "# Welcome to the kura demo vault\n");
}

#[tokio::test]
async fn plugin_infinite_loop_times_out_and_the_write_is_refused() {
    let f = Fixture::new();
    let k = hostile(&f).await;
    let t = std::time::Instant::now();
    let r = k
        .call("vault_create", json!({"path": "loop/a.md", "content": "x"}))
        .await;
    assert_eq!(r.code(), "timeout");
    assert!(
        t.elapsed() < std::time::Duration::from_secs(5),
        "{:?}",
        t.elapsed()
    );
    assert!(!f.vault().join("loop").exists());
    still_serving(&k).await;
}

#[tokio::test]
async fn plugin_unbounded_allocation_fails_and_the_write_is_refused() {
    let f = Fixture::new();
    let k = hostile(&f).await;
    let r = k
        .call(
            "vault_create",
            json!({"path": "alloc/a.md", "content": "x"}),
        )
        .await;
    assert_eq!(r.code(), "plugin_failed");
    assert!(!f.vault().join("alloc").exists());
    still_serving(&k).await;
}

#[tokio::test]
async fn plugin_trap_fails_and_the_write_is_refused() {
    let f = Fixture::new();
    f.write("trap/a.md", "before");
    let k = hostile(&f).await;
    for _ in 0..3 {
        let r = k
            .call(
                "vault_write",
                json!({"path": "trap/a.md", "content": "after", "mode": "overwrite"}),
            )
            .await;
        assert_eq!(r.code(), "plugin_failed");
    }
    assert_eq!(f.read("trap/a.md"), "before");
    still_serving(&k).await;
}

#[tokio::test]
async fn plugin_denial_code_is_passed_through() {
    let f = Fixture::new();
    let k = hostile(&f).await;
    let r = k
        .call("vault_create", json!({"path": "deny/a.md", "content": "x"}))
        .await;
    assert_eq!(r.code(), "conflict");
    assert!(
        r.body["error"]["message"]
            .as_str()
            .unwrap()
            .contains("hostile")
    );
}

#[tokio::test]
async fn a_component_denial_message_is_cut_to_a_bounded_length() {
    // The component denies with a 4 MiB message (its memory cap is 16 MiB);
    // the result carries at most 500 characters of it and the server goes on.
    let f = Fixture::new();
    let k = hostile(&f).await;
    let r = k
        .call(
            "vault_create",
            json!({"path": "shout/a.md", "content": "x"}),
        )
        .await;
    assert_eq!(r.code(), "forbidden", "{}", r.body);
    let message = r.body["error"]["message"].as_str().unwrap();
    assert!(message.starts_with("nono"), "{message}");
    assert!(
        message.chars().count() <= 501,
        "{} characters",
        message.len()
    );
    assert!(!f.vault().join("shout").exists());
    still_serving(&k).await;
}

#[tokio::test]
async fn a_swapped_policy_cannot_lift_the_baseline_rules() {
    // The hostile component allows everything but its trap folders: the
    // host's baseline still reserves `.system/` and keeps daily notes
    // append-only.
    let f = Fixture::new();
    let k = hostile(&f).await;
    let r = k.call("vault_replace", json!({"path": "daily/2026-01-05.md", "find": "MCP", "replace": "Model Context Protocol"})).await;
    assert_eq!(r.code(), "forbidden");
    assert_eq!(r.body["error"]["details"]["policy"], "baseline");
    let r = k
        .call(
            "vault_create",
            json!({"path": ".system/x.md", "content": "x"}),
        )
        .await;
    assert_eq!(r.code(), "forbidden");
    assert!(!f.vault().join(".system/x.md").exists());
    // What the baseline allows, the component still decides.
    let r = k
        .call(
            "vault_create",
            json!({"path": "notes/fine.md", "content": "x"}),
        )
        .await;
    r.ok();
}

async fn start_failure(f: &Fixture, extra: &[&str]) -> String {
    let out = command(&f.args(extra))
        .stdin(std::process::Stdio::null())
        .output()
        .await
        .unwrap();
    assert!(!out.status.success(), "kura started with {extra:?}");
    assert!(out.stdout.is_empty(), "nothing but JSON-RPC on stdout");
    String::from_utf8(out.stderr).unwrap()
}

#[tokio::test]
async fn a_file_that_is_not_a_component_is_reported_at_start() {
    let f = Fixture::new();
    let junk = f.dir.path().join("junk.wasm");
    std::fs::write(&junk, b"this is not wasm").unwrap();
    let err = start_failure(
        &f,
        &["--plugin", &format!("write_policy={}", junk.display())],
    )
    .await;
    assert!(
        err.contains("write-policy") && err.contains("junk.wasm"),
        "{err}"
    );
    // A core module (not a component) is refused too.
    let core = f.dir.path().join("core.wasm");
    std::fs::write(&core, b"\0asm\x01\0\0\0").unwrap();
    let err = start_failure(
        &f,
        &["--plugin", &format!("write_policy={}", core.display())],
    )
    .await;
    assert!(
        err.contains("write-policy") && err.contains("core.wasm"),
        "{err}"
    );
}

#[tokio::test]
async fn a_component_for_another_world_is_named_with_its_missing_export() {
    let f = Fixture::new();
    let wasm = hostile_wasm().display().to_string();
    let err = start_failure(&f, &["--plugin", &format!("reranker={wasm}")]).await;
    assert!(
        err.contains("reranker") && err.contains("`rerank`"),
        "{err}"
    );
    let err = start_failure(&f, &["--plugin", &format!("auditor={wasm}")]).await;
    assert!(err.contains("`audit`"), "{err}");
}

#[tokio::test]
async fn a_component_whose_export_has_the_wrong_type_stops_the_start() {
    // Refused from its type section before any compile: the same on every
    // run, not a race with the background compile.
    let f = Fixture::new();
    let wasm = mistyped_wasm().display().to_string();
    let err = start_failure(&f, &["--plugin", &format!("write_policy={wasm}")]).await;
    assert!(
        err.contains("write-policy")
            && err.contains("export `check` has the wrong type")
            && err.contains("parameter 1 (`request`) is `string`, not `write-request`"),
        "{err}"
    );
}

#[tokio::test]
async fn a_missing_component_file_is_reported_at_start() {
    let f = Fixture::new();
    let err = start_failure(&f, &["--plugin", "write_policy=/nonexistent/policy.wasm"]).await;
    assert!(
        err.contains("write-policy") && err.contains("/nonexistent/policy.wasm"),
        "{err}"
    );
}

/// The compiled components in the state folder, once `n` are there.
fn cached_components(f: &Fixture, n: usize) -> Vec<std::path::PathBuf> {
    let dir = f.dir.path().join("state/components");
    for _ in 0..200 {
        // Only finished entries: a write in progress is a temporary file.
        let cached: Vec<_> = std::fs::read_dir(&dir)
            .map(|d| {
                d.map(|e| e.unwrap().path())
                    .filter(|p| p.extension().is_some_and(|e| e == "cwasm"))
                    .collect()
            })
            .unwrap_or_default();
        if cached.len() >= n {
            return cached;
        }
        std::thread::sleep(std::time::Duration::from_millis(50));
    }
    panic!(
        "{n} compiled components never appeared in {}",
        dir.display()
    );
}

#[tokio::test]
async fn compiled_components_are_cached_and_a_damaged_cache_is_rebuilt() {
    let f = Fixture::uncompiled();
    let k = f.start().await;
    // A vault-only server loads the auditor (the write policy's baseline is
    // built in).
    let cached = cached_components(&f, 1);
    k.stop().await;
    assert_eq!(cached.len(), 1, "{cached:?}");
    assert!(
        cached
            .iter()
            .all(|c| c.extension().is_some_and(|e| e == "cwasm"))
    );
    let good = std::fs::read(&cached[0]).unwrap();
    // A damaged artifact (one flipped byte: the hash no longer matches) is
    // recompiled, never deserialized.
    let mut flipped = good.clone();
    let last = flipped.len() - 1;
    flipped[last] ^= 0xff;
    std::fs::write(&cached[0], &flipped).unwrap();
    let k = f.start().await;
    let r = k
        .call(
            "artifact_audit",
            json!({"artifact_path": "notes/welcome.md", "source_path": "notes/welcome.md"}),
        )
        .await;
    r.ok();
    k.stop().await;
    assert_eq!(
        std::fs::read(&cached[0]).unwrap(),
        good,
        "the cache was rewritten"
    );
}

#[tokio::test]
async fn a_changed_component_is_reloaded_and_a_bad_one_leaves_the_old_one_serving() {
    const QUERY: &str = "算出プロパティとは";
    let f = Fixture::new();
    let wasm = f.dir.path().join("reranker.wasm");
    std::fs::copy(rust_reranker_wasm(), &wasm).unwrap();
    let log = f.dir.path().join("kura.log");
    let manuals = f.manuals().display().to_string();
    let plugin = format!("reranker={}", wasm.display());
    let k = Kura::start_logging(
        f.args(&["--manuals-root", &manuals, "--plugin", &plugin]),
        ClientLifecycleMode::Initialize,
        std::fs::File::create(&log).unwrap().into(),
    )
    .await;
    let found = k.find_reranked(QUERY).await;
    assert_eq!(found["applied"]["late_rerank"], "applied");
    let first = k.ranking(&found).await;
    // A broken file is refused (the watcher saw it and kura said so); the
    // component that was serving still does.
    std::fs::write(&wasm, b"not a component").unwrap();
    wait_for_log(&log, "reload refused", std::time::Duration::from_secs(20));
    let r = k.find_reranked(QUERY).await;
    assert_eq!(r["applied"]["late_rerank"], "applied");
    assert_eq!(k.ranking(&r).await, first);
    // Another reranker is swapped in, without a restart.
    std::fs::copy(reranker_wasm(), &wasm).unwrap();
    assert!(
        k.ranking_changes(QUERY, &first).await,
        "the new component was never loaded"
    );
}

#[tokio::test]
async fn sighup_reloads_a_component_the_watcher_cannot_see_change() {
    // The configured path is a link into another folder: rewriting the
    // target makes no event where kura watches, so only SIGHUP reloads it.
    const QUERY: &str = "算出プロパティとは";
    let f = Fixture::new();
    let store = f.dir.path().join("store");
    std::fs::create_dir_all(&store).unwrap();
    std::fs::copy(rust_reranker_wasm(), store.join("current.wasm")).unwrap();
    let link = f.dir.path().join("reranker.wasm");
    std::os::unix::fs::symlink(store.join("current.wasm"), &link).unwrap();
    let k = f
        .start_with_manuals(&["--plugin", &format!("reranker={}", link.display())])
        .await;
    let found = k.find_reranked(QUERY).await;
    let first = k.ranking(&found).await;
    std::fs::copy(reranker_wasm(), store.join("current.wasm")).unwrap();
    tokio::time::sleep(std::time::Duration::from_millis(1000)).await;
    let r = k.find_reranked(QUERY).await;
    assert_eq!(k.ranking(&r).await, first, "nothing reloaded it yet");
    let pid = k.pid.expect("the server's pid").to_string();
    let sent = std::process::Command::new("kill")
        .args(["-HUP", &pid])
        .status()
        .unwrap();
    assert!(sent.success());
    assert!(
        k.ranking_changes(QUERY, &first).await,
        "SIGHUP did not reload the component"
    );
}

/// `kura plugins SUBCOMMAND` with the fixture's settings and `extra`: its
/// standard output.
async fn plugins_command(f: &Fixture, subcommand: &str, extra: &[&str]) -> String {
    let args: Vec<String> = ["plugins", subcommand]
        .iter()
        .map(|s| s.to_string())
        .chain(f.args(extra).into_iter().skip(1))
        .collect();
    let out = command(&args).output().await.unwrap();
    let said = String::from_utf8_lossy(&out.stdout).into_owned();
    assert!(
        out.status.success(),
        "{said}{}",
        String::from_utf8_lossy(&out.stderr)
    );
    said
}

#[tokio::test]
async fn plugins_list_names_each_slots_component_its_digest_and_its_load() {
    let f = Fixture::new();
    let wasm = hostile_wasm();
    let policy = format!("write_policy={}", wasm.display());
    let extra = [
        "--plugin",
        policy.as_str(),
        "--set",
        "plugin_timeout_ms=750",
    ];
    let row = |listing: &str, slot: &str| -> String {
        listing
            .lines()
            .find(|l| l.starts_with(slot))
            .unwrap_or_else(|| panic!("no {slot} row in\n{listing}"))
            .to_owned()
    };
    let before = plugins_command(&f, "list", &extra).await;
    assert_eq!(
        before.lines().count(),
        6,
        "a header and five slots:\n{before}"
    );
    let policy_row = row(&before, "write-policy");
    let size = std::fs::metadata(&wasm).unwrap().len() as f64 / (1 << 20) as f64;
    assert!(
        policy_row.ends_with(&wasm.display().to_string())
            && policy_row.contains(&format!("{size:.1} MiB"))
            && policy_row
                .contains(kura::config::Digest::of(&std::fs::read(&wasm).unwrap()).short())
            && policy_row.contains("unsigned")
            && policy_row.contains(" ms compiled")
            && policy_row.contains("/ 750 ms /"),
        "{policy_row}"
    );
    assert!(
        row(&before, "reranker").ends_with("embedded default"),
        "{before}"
    );
    assert!(
        row(&before, "reranker").contains("kura (built in)"),
        "{before}"
    );
    // The listing loaded each component as a start would: into the cache.
    let after = plugins_command(&f, "list", &extra).await;
    assert!(
        row(&after, "write-policy").contains(" ms cached"),
        "{after}"
    );
    plugins_command(&f, "precompile", &extra).await;
}

/// `kura plugins check FILE --eval ARGS`, run from the checkout (the gold
/// set's default paths): its output and whether it passed.
async fn admission(wasm: &std::path::Path, extra: &[&str]) -> (String, bool) {
    admission_with(wasm, "fixtures/eval/gold.jsonl", extra, &[]).await
}

/// The same with another gold set and variables in kura's environment.
async fn admission_with(
    wasm: &std::path::Path,
    gold: &str,
    extra: &[&str],
    env: &[(&str, &str)],
) -> (String, bool) {
    let f = Fixture::new();
    let mut args: Vec<String> = ["plugins", "check"].map(String::from).to_vec();
    args.push(wasm.display().to_string());
    args.extend(
        ["--eval", "--gold", gold]
            .iter()
            .chain(extra)
            .map(|s| s.to_string()),
    );
    args.extend(f.args(&[]).into_iter().skip(1));
    let mut cmd = command(&args);
    cmd.current_dir(kura_tests::workspace());
    for (k, v) in env {
        cmd.env(k, v);
    }
    let out = cmd.output().await.unwrap();
    (
        String::from_utf8_lossy(&out.stdout).into_owned() + &String::from_utf8_lossy(&out.stderr),
        out.status.success(),
    )
}

#[tokio::test]
async fn the_admission_eval_lends_no_grants_and_refuses_a_candidate_whose_calls_fail() {
    // The slot grants a folder of weights and the variable that tells the
    // test component to read them; the first questions of the gold set.
    let dir = kura_tests::scratch::folder();
    std::fs::write(dir.path().join("weights.txt"), "0.25\n0.75\n").unwrap();
    let all =
        std::fs::read_to_string(kura_tests::workspace().join("fixtures/eval/gold.jsonl")).unwrap();
    let gold = dir.path().join("gold.jsonl");
    std::fs::write(&gold, all.lines().take(6).collect::<Vec<_>>().join("\n")).unwrap();
    let gold = gold.display().to_string();
    let folder = format!("plugins.reranker.folder={}", dir.path().display());
    let granted = [
        "--set",
        folder.as_str(),
        "--set",
        "plugins.reranker.http_hosts=127.0.0.1:9",
        "--set",
        "plugins.reranker.env=GRANTED_MODE,GRANTED_FAIL_ON",
    ];
    let env = [("GRANTED_MODE", "folder")];
    // By default the candidate has none of the slot's grants: without
    // its HTTP host it does not even load, and is refused for it.
    let (said, ok) = admission_with(&granted_wasm(), &gold, &granted, &env).await;
    assert!(!ok, "{said}");
    assert!(
        said.contains("grants       the candidate has none"),
        "{said}"
    );
    assert!(
        said.contains("verdict      refused: the candidate did not load: ")
            && said.contains("http_hosts"),
        "{said}"
    );
    // Lent the grants, it reads its weights and every call succeeds.
    let mut lent = granted.to_vec();
    lent.push("--with-grants");
    let (said, ok) = admission_with(&granted_wasm(), &gold, &lent, &env).await;
    assert!(ok, "{said}");
    assert!(!said.contains("warning "), "no call failed: {said}");
    // Lent grants, it passes the check's sample call but fails on one
    // question of the six (the reranker would fall back unseen, and score
    // as the current one there): refused, without any margin asked for.
    let fails_on_one = [("GRANTED_MODE", "folder"), ("GRANTED_FAIL_ON", "watch")];
    let (said, ok) = admission_with(&granted_wasm(), &gold, &lent, &fails_on_one).await;
    assert!(!ok, "{said}");
    assert!(said.contains("sample call  ok"), "{said}");
    assert!(
        said.contains("verdict      refused: the candidate failed in 1 of 6 answers"),
        "{said}"
    );
}

#[tokio::test]
async fn the_admission_eval_prints_both_sides_and_refuses_a_swap_that_lowers_mrr() {
    let (said, ok) = admission(&rust_reranker_wasm(), &["--max-mrr-drop", "0.01"]).await;
    for line in [
        "admission eval of a reranker: 235 questions (fixtures/eval/gold.jsonl)",
        "current      the embedded default",
        "[dev] current",
        "[test] candidate",
        "[all] candidate",
        "change       hit@5 ",
    ] {
        assert!(said.contains(line), "no `{line}` in\n{said}");
    }
    // The example scores token overlap only: below the default on this set.
    assert!(!ok, "{said}");
    assert!(
        said.contains("verdict      refused: MRR@5 falls by"),
        "{said}"
    );
    // The default's own bytes in its place change nothing.
    let (said, ok) = admission(&reranker_wasm(), &["--max-mrr-drop", "0"]).await;
    assert!(ok, "{said}");
    assert!(said.contains("hit@5 +0.000, MRR@5 +0.000"), "{said}");
    assert!(said.contains("verdict      admitted"), "{said}");
    assert!(!said.contains("warning "), "no component failed: {said}");
}
