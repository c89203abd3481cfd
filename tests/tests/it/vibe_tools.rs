//! The eleven vibe tools of seed 002 against the real binary over stdio, on
//! a copy of `fixtures/demo/vibe` (projects `vibeMCP` and `webapp`): each
//! behaviour of its "Comportamiento" lists, each error of its tables, and
//! the settlements of docs/decisions.md (folders, statuses, paths, local date,
//! incremental reindex, writes indexed before they return).

#![allow(clippy::disallowed_methods)] // tests look at the files with std::fs

use kura_tests::{Fixture, Kura, queries_hint};
use rmcp::service::ClientLifecycleMode;
use serde_json::{Value, json};

async fn kura() -> (Fixture, Kura) {
    let f = Fixture::new();
    let k = f.start_vibe(&[]).await;
    (f, k)
}

fn read(f: &Fixture, rel: &str) -> String {
    std::fs::read_to_string(f.vibe().join(rel)).unwrap()
}

fn paths(v: &Value) -> Vec<String> {
    v["results"]
        .as_array()
        .unwrap()
        .iter()
        .map(|r| r["path"].as_str().unwrap().to_owned())
        .collect()
}

fn today() -> String {
    // The local date, as `date` prints it: log_session must use the same.
    let out = std::process::Command::new("date")
        .arg("+%Y-%m-%d")
        .output()
        .unwrap();
    String::from_utf8(out.stdout).unwrap().trim().to_owned()
}

#[tokio::test]
async fn every_tool_of_002_is_listed_with_annotations() {
    let (_f, k) = kura().await;
    let tools = k.tools().await;
    for (name, read_only) in [
        ("search", true),
        ("read_doc", true),
        ("list_tasks", true),
        ("get_plan", true),
        ("create_doc", false),
        ("update_doc", false),
        ("create_task", false),
        ("update_task_status", false),
        ("create_plan", false),
        ("log_session", false),
        ("reindex", false),
    ] {
        let t = tools
            .iter()
            .find(|t| t.name == name)
            .unwrap_or_else(|| panic!("{name} is not listed"));
        let a = t.annotations.as_ref().expect("annotations");
        assert_eq!(a.read_only_hint, Some(read_only), "{name}");
        assert!(t.output_schema.is_some(), "{name} has an outputSchema");
    }
    k.stop().await;
}

#[tokio::test]
async fn search_ranks_the_best_match_first() {
    // The seed's own implementation multiplies a negative bm25 by the boosts
    // and sorts descending: the worst match first. Here the chunk holding
    // both words comes first and scores only go down.
    let (_f, k) = kura().await;
    let v = k
        .call(
            "search",
            json!({"query": "indexador sqlite", "project": "vibeMCP", "limit": 10}),
        )
        .await;
    let v = v.ok();
    let first = &v["results"][0];
    assert_eq!(first["path"], "vibeMCP/tasks/003-disenar-schema-sqlite.md");
    assert_eq!(first["heading"], "## Objective");
    assert_eq!(first["metadata"]["type"], "task");
    assert_eq!(first["metadata"]["status"], "done");
    let snippet = first["snippet"].as_str().unwrap();
    assert!(
        snippet.contains("**SQLite**") && snippet.contains("**indexador**"),
        "{snippet}"
    );
    let scores: Vec<f64> = v["results"]
        .as_array()
        .unwrap()
        .iter()
        .map(|r| r["score"].as_f64().unwrap())
        .collect();
    assert!(scores.windows(2).all(|w| w[0] >= w[1]), "{scores:?}");
    assert!(v["total_matches"].as_u64().unwrap() >= scores.len() as u64);
    k.stop().await;
}

#[tokio::test]
async fn search_treats_any_user_text_as_text() {
    let (_f, k) = kura().await;
    for (query, expect) in [
        ("rate-limiting", "webapp/tasks/001-add-rate-limiting.md"),
        ("auth.py", "webapp/tasks/001-add-rate-limiting.md"),
        ("C++", "webapp/tasks/003-port-image-resizer.md"),
        ("what is JWT?", "webapp/tasks/002-explain-jwt-refresh.md"),
        ("\"Retry-After\" (429)", "webapp/references/auth-notes.md"),
        ("title:foo AND OR NOT * ^2 ~ {x} [y]", ""),
    ] {
        let v = k.call("search", json!({ "query": query })).await;
        let v = v.ok();
        if expect.is_empty() {
            continue; // only: no error
        }
        let got = paths(v);
        assert!(
            got.iter().take(3).any(|p| p == expect),
            "{query}: {expect} not in the top 3 of {got:?}"
        );
    }
    k.stop().await;
}

#[tokio::test]
async fn search_filters_by_project_folder_and_limit() {
    let (_f, k) = kura().await;
    let v = k
        .call(
            "search",
            json!({"query": "token", "project": "webapp", "folder": "references"}),
        )
        .await;
    let got = paths(v.ok());
    assert!(!got.is_empty());
    assert!(
        got.iter().all(|p| p.starts_with("webapp/references/")),
        "{got:?}"
    );
    let all = k.call("search", json!({"query": "tasks"})).await;
    let all = all.ok();
    let one = k
        .call("search", json!({"query": "tasks", "limit": 1}))
        .await;
    let one = one.ok();
    assert_eq!(one["results"].as_array().unwrap().len(), 1);
    assert_eq!(
        one["total_matches"], all["total_matches"],
        "total is before the limit"
    );
    assert_eq!(one["results"][0]["path"], all["results"][0]["path"]);
    k.stop().await;
}

#[tokio::test]
async fn search_boosts_task_status_and_priority_headings() {
    let (_f, k) = kura().await;
    for (name, status) in [
        ("100-zeta-done.md", "done"),
        ("101-zeta-active.md", "in-progress"),
    ] {
        let text =
            format!("# Task: zeta\n\nStatus: {status}\n\n## Objective\nQuokka migration plan.\n");
        k.call(
            "create_doc",
            json!({"project": "webapp", "folder": "tasks", "filename": name, "content": text}),
        )
        .await
        .ok();
    }
    let v = k.call("search", json!({"query": "quokka migration"})).await;
    let got = paths(v.ok());
    assert_eq!(got[0], "webapp/tasks/101-zeta-active.md", "{got:?}");
    // Same words under "Next Steps" and under "Notes": the priority heading wins.
    let note = "# Notes\n\n## Notes\nWombat rollout.\n\n## Next Steps\nWombat rollout.\n";
    k.call(
        "create_doc",
        json!({"project": "webapp", "folder": "references", "filename": "wombat.md", "content": note}),
    )
    .await
    .ok();
    let v = k.call("search", json!({"query": "wombat rollout"})).await;
    assert_eq!(v.ok()["results"][0]["heading"], "## Next Steps");
    k.stop().await;
}

#[tokio::test]
async fn search_refuses_bad_arguments_with_the_codes_of_002() {
    let (_f, k) = kura().await;
    for (args, code) in [
        (json!({"query": ""}), "INVALID_QUERY"),
        (json!({"query": "   "}), "INVALID_QUERY"),
        (json!({"query": "x", "limit": 0}), "INVALID_QUERY"),
        (json!({"query": "x", "limit": "5"}), "INVALID_QUERY"),
        (json!({"query": "x", "limit": 101}), "INVALID_QUERY"),
        (json!({"query": 5}), "INVALID_QUERY"),
        (json!({}), "INVALID_QUERY"),
        (json!({"query": "x", "folder": "notes"}), "INVALID_FOLDER"),
        (
            json!({"query": "x", "project": "nope"}),
            "PROJECT_NOT_FOUND",
        ),
        (
            json!({"query": "x", "project": "../outside"}),
            "INVALID_PATH",
        ),
    ] {
        let r = k.call("search", args.clone()).await;
        assert_eq!(r.code(), code, "{args}");
        assert_eq!(r.body["success"], false, "002's envelope: {}", r.body);
    }
    k.stop().await;
}

#[tokio::test]
async fn read_doc_returns_content_metadata_and_hash() {
    let (f, k) = kura().await;
    let v = k
        .call(
            "read_doc",
            json!({"project": "vibeMCP", "folder": "tasks", "filename": "004-definir-interfaz-mcp.md"}),
        )
        .await;
    let v = v.ok();
    assert_eq!(v["path"], "vibeMCP/tasks/004-definir-interfaz-mcp.md");
    assert_eq!(v["metadata"]["type"], "task");
    assert_eq!(
        v["metadata"]["status"], "in-progress",
        "not the fenced example"
    );
    assert_eq!(v["metadata"]["tags"], json!(["mcp", "design"]));
    assert_eq!(v["metadata"]["owner"], Value::Null);
    let text = read(&f, "vibeMCP/tasks/004-definir-interfaz-mcp.md");
    assert_eq!(v["content"], text);
    assert_eq!(v["hash"].as_str().unwrap().len(), 64);
    let plan = k
        .call(
            "read_doc",
            json!({"project": "vibeMCP", "folder": "plans", "filename": "execution-plan.md"}),
        )
        .await;
    assert_eq!(
        plan.ok()["metadata"]["updated"],
        "2025-02-09",
        "front matter wins"
    );
    k.stop().await;
}

#[tokio::test]
async fn read_doc_errors_follow_the_table_of_002() {
    let (_f, k) = kura().await;
    let r = k
        .call(
            "read_doc",
            json!({"project": "vibeMCP", "folder": "tasks", "filename": "999-nonexistent.md"}),
        )
        .await;
    assert_eq!(r.code(), "FILE_NOT_FOUND");
    assert_eq!(
        r.body["error"]["message"],
        "File 'tasks/999-nonexistent.md' not found in project 'vibeMCP'"
    );
    assert_eq!(
        r.body["error"]["details"],
        json!({"project": "vibeMCP", "path": "tasks/999-nonexistent.md"})
    );
    for (args, code) in [
        (
            json!({"project": "nope", "folder": "tasks", "filename": "a.md"}),
            "PROJECT_NOT_FOUND",
        ),
        (
            json!({"project": "vibeMCP", "folder": "notes", "filename": "a.md"}),
            "INVALID_FOLDER",
        ),
        (
            json!({"project": "vibeMCP", "folder": "tasks", "filename": "../plans/execution-plan.md"}),
            "INVALID_PATH",
        ),
        (
            json!({"project": "vibeMCP", "folder": "tasks", "filename": ".."}),
            "INVALID_PATH",
        ),
        (
            json!({"project": "vibeMCP", "folder": "tasks"}),
            "INVALID_PARAMETER",
        ),
        (
            json!({"project": true, "folder": "tasks", "filename": "a.md"}),
            "INVALID_PARAMETER",
        ),
    ] {
        assert_eq!(
            k.call("read_doc", args.clone()).await.code(),
            code,
            "{args}"
        );
    }
    k.stop().await;
}

#[tokio::test]
async fn list_tasks_filters_by_status_and_includes_content() {
    let (f, k) = kura().await;
    let v = k
        .call(
            "list_tasks",
            json!({"project": "vibeMCP", "status": "pending"}),
        )
        .await;
    let v = v.ok();
    assert_eq!(v["project"], "vibeMCP");
    assert_eq!(v["filter"], json!({"status": "pending"}));
    assert_eq!(v["total"], 1);
    let t = &v["tasks"][0];
    assert_eq!(t["filename"], "005-crear-workspace-ejemplo.md");
    assert_eq!(t["title"], "Crear un workspace de ejemplo");
    assert_eq!(
        t["objective"],
        "Armar 2-3 proyectos con contenido realista para validación."
    );
    assert!(t.get("content").is_none(), "content only when asked");
    let all = k.call("list_tasks", json!({"include_content": true})).await;
    let all = all.ok();
    assert_eq!(all["project"], Value::Null);
    assert_eq!(all["total"], 9, "6 in vibeMCP + 3 in webapp");
    let one = all["tasks"]
        .as_array()
        .unwrap()
        .iter()
        .find(|t| t["filename"] == "002-explain-jwt-refresh.md")
        .unwrap();
    assert_eq!(one["project"], "webapp");
    assert_eq!(
        one["content"],
        read(&f, "webapp/tasks/002-explain-jwt-refresh.md")
    );
    let r = k.call("list_tasks", json!({"status": "started"})).await;
    assert_eq!(r.code(), "INVALID_STATUS");
    k.stop().await;
}

#[tokio::test]
async fn get_plan_parses_overview_and_current_status() {
    let (_f, k) = kura().await;
    let v = k.call("get_plan", json!({"project": "vibeMCP"})).await;
    let v = v.ok();
    assert_eq!(v["exists"], true);
    assert_eq!(v["filename"], "execution-plan.md");
    assert_eq!(v["path"], "vibeMCP/plans/execution-plan.md");
    assert_eq!(v["metadata"]["type"], "plan");
    let p = &v["parsed"];
    assert!(
        p["overview"]
            .as_str()
            .unwrap()
            .starts_with("Exponer el sistema")
    );
    assert_eq!(
        (
            p["task_count"].clone(),
            p["pending"].clone(),
            p["in_progress"].clone(),
            p["done"].clone()
        ),
        (json!(6), json!(1), json!(1), json!(3))
    );
    // A check-list status section is counted by its boxes.
    let w = k.call("get_plan", json!({"project": "webapp"})).await;
    let w = w.ok();
    assert_eq!(
        (
            w["parsed"]["task_count"].clone(),
            w["parsed"]["done"].clone()
        ),
        (json!(3), json!(1))
    );
    let none = k
        .call(
            "get_plan",
            json!({"project": "webapp", "filename": "later.md"}),
        )
        .await;
    let none = none.ok();
    assert_eq!(none["exists"], false);
    assert_eq!(none["content"], Value::Null);
    k.stop().await;
}

#[tokio::test]
async fn create_doc_writes_front_matter_and_is_searchable_at_once() {
    let (f, k) = kura().await;
    let v = k
        .call(
            "create_doc",
            json!({
                "project": "vibeMCP", "folder": "references", "filename": "mcp-protocol-notes.md",
                "content": "# MCP Protocol Notes\n\n## Overview\nThe xylophonic handshake.\n",
                "frontmatter": {"tags": ["mcp", "protocol"]},
            }),
        )
        .await;
    let v = v.ok();
    assert_eq!(v["success"], true);
    assert_eq!(v["indexed"], true);
    assert_eq!(v["path"], "vibeMCP/references/mcp-protocol-notes.md");
    let abs = v["absolute_path"].as_str().unwrap();
    assert!(
        abs.ends_with("/vibeMCP/references/mcp-protocol-notes.md"),
        "{abs}"
    );
    let text = read(&f, "vibeMCP/references/mcp-protocol-notes.md");
    assert!(
        text.starts_with("---\ntags:\n- mcp\n- protocol\n---\n# MCP Protocol Notes\n"),
        "{text}"
    );
    let s = k.call("search", json!({"query": "xylophonic"})).await;
    assert_eq!(paths(s.ok()), ["vibeMCP/references/mcp-protocol-notes.md"]);
    // The folder is created when the project lacks it.
    k.call(
        "create_doc",
        json!({"project": "webapp", "folder": "reports", "filename": "r.md", "content": "x"}),
    )
    .await
    .ok();
    assert!(f.vibe().join("webapp/reports/r.md").exists());
    k.stop().await;
}

#[tokio::test]
async fn create_doc_errors_follow_the_table_of_002() {
    let (f, k) = kura().await;
    let base = json!({"project": "vibeMCP", "folder": "tasks", "filename": "001-documentar-estructura.md", "content": "x"});
    let before = read(&f, "vibeMCP/tasks/001-documentar-estructura.md");
    assert_eq!(
        k.call("create_doc", base.clone()).await.code(),
        "FILE_EXISTS"
    );
    assert_eq!(
        read(&f, "vibeMCP/tasks/001-documentar-estructura.md"),
        before,
        "untouched"
    );
    let mut bad = base.clone();
    bad["folder"] = json!("secrets");
    assert_eq!(k.call("create_doc", bad).await.code(), "INVALID_FOLDER");
    let mut bad = base.clone();
    bad["project"] = json!("ghost");
    assert_eq!(k.call("create_doc", bad).await.code(), "PROJECT_NOT_FOUND");
    assert!(!f.vibe().join("ghost").exists(), "no project is created");
    let mut bad = base;
    bad["filename"] = json!("../../../outside/pwned.md");
    assert_eq!(k.call("create_doc", bad).await.code(), "INVALID_PATH");
    f.assert_canary_untouched();
    k.stop().await;
}

#[tokio::test]
async fn update_doc_returns_both_hashes_and_honours_expected_hash() {
    let (f, k) = kura().await;
    let at = json!({"project": "webapp", "folder": "scratch", "filename": "questions.md"});
    let doc = k.call("read_doc", at.clone()).await;
    let hash = doc.ok()["hash"].as_str().unwrap().to_owned();
    let mut args = at.clone();
    args["content"] = json!("# Open questions\n\n- none left\n");
    args["expected_hash"] = json!(hash);
    let v = k.call("update_doc", args.clone()).await;
    let v = v.ok();
    assert_eq!(v["previous_hash"], hash);
    assert_ne!(v["new_hash"], hash);
    assert_eq!(v["indexed"], true);
    assert_eq!(
        read(&f, "webapp/scratch/questions.md"),
        "# Open questions\n\n- none left\n"
    );
    // The same expected_hash again: the file has changed since.
    args["content"] = json!("lost update");
    let r = k.call("update_doc", args).await;
    assert_eq!(r.code(), "CONFLICT");
    assert_eq!(r.body["error"]["details"]["current_hash"], v["new_hash"]);
    assert_eq!(
        read(&f, "webapp/scratch/questions.md"),
        "# Open questions\n\n- none left\n"
    );
    let mut gone = at;
    gone["filename"] = json!("nope.md");
    gone["content"] = json!("x");
    assert_eq!(k.call("update_doc", gone).await.code(), "FILE_NOT_FOUND");
    assert!(!f.vibe().join("webapp/scratch/nope.md").exists());
    k.stop().await;
}

#[tokio::test]
async fn update_doc_merges_front_matter() {
    let (f, k) = kura().await;
    let v = k
        .call(
            "update_doc",
            json!({
                "project": "vibeMCP", "folder": "tasks", "filename": "003-disenar-schema-sqlite.md",
                "content": "# Task: Diseñar schema SQLite\n\nStatus: done\n",
                "frontmatter": {"owner": "luis", "reviewed": true},
            }),
        )
        .await;
    v.ok();
    let text = read(&f, "vibeMCP/tasks/003-disenar-schema-sqlite.md");
    assert!(
        text.contains("tags:") && text.contains("- sqlite"),
        "old keys kept: {text}"
    );
    assert!(
        text.contains("owner: luis") && text.contains("reviewed: true"),
        "{text}"
    );
    assert!(
        text.ends_with("---\n# Task: Diseñar schema SQLite\n\nStatus: done\n"),
        "{text}"
    );
    k.stop().await;
}

#[tokio::test]
async fn create_task_writes_the_format_of_002() {
    let (f, k) = kura().await;
    let v = k
        .call(
            "create_task",
            json!({
                "project": "vibeMCP",
                "title": "Implementar tool search",
                "objective": "Implementar la tool search con FTS5 y ranking inteligente.",
                "steps": ["Crear función de búsqueda en SQLite", "Implementar cálculo de ranking con boosts",
                          "Formatear respuesta según spec MCP", "Agregar tests"],
                "acceptance_criteria": ["Búsqueda devuelve resultados relevantes",
                                        "Ranking ordena por relevancia combinada",
                                        "Snippets muestran contexto del match"],
                "context": {"related_files": ["src/tools/search.py", "src/db/fts.py"],
                            "dependencies": ["003-disenar-schema-sqlite"]},
                "notes": "Usar BM25 nativo de FTS5. Los boosts están documentados en sqlite-schema.md",
                "tags": ["backend", "fts5", "search"],
            }),
        )
        .await;
    let v = v.ok();
    assert_eq!(
        v["task"],
        json!({"number": "007", "filename": "007-implementar-tool-search.md",
               "path": "vibeMCP/tasks/007-implementar-tool-search.md", "status": "pending"})
    );
    assert_eq!(v["indexed"], true);
    let expected = "---\ntags: [backend, fts5, search]\n---\n# Task: Implementar tool search\n\nStatus: pending\n\n\
## Objective\nImplementar la tool search con FTS5 y ranking inteligente.\n\n\
## Context\n- Related files: `src/tools/search.py`, `src/db/fts.py`\n- Dependencies: 003-disenar-schema-sqlite\n\n\
## Steps\n1. [ ] Crear función de búsqueda en SQLite\n2. [ ] Implementar cálculo de ranking con boosts\n\
3. [ ] Formatear respuesta según spec MCP\n4. [ ] Agregar tests\n\n\
## Acceptance Criteria\n- [ ] Búsqueda devuelve resultados relevantes\n- [ ] Ranking ordena por relevancia combinada\n\
- [ ] Snippets muestran contexto del match\n\n\
## Notes\nUsar BM25 nativo de FTS5. Los boosts están documentados en sqlite-schema.md\n";
    assert_eq!(
        read(&f, "vibeMCP/tasks/007-implementar-tool-search.md"),
        expected
    );
    // No tags: no front matter; a status given is used; the slug folds accents.
    let w = k
        .call(
            "create_task",
            json!({"project": "webapp", "title": "Diseñar el caché (v2)", "objective": "o",
                   "steps": [], "acceptance_criteria": [], "status": "blocked"}),
        )
        .await;
    let w = w.ok();
    assert_eq!(w["task"]["filename"], "004-disenar-el-cache-v2.md");
    let text = read(&f, "webapp/tasks/004-disenar-el-cache-v2.md");
    assert!(
        text.starts_with("# Task: Diseñar el caché (v2)\n\nStatus: blocked\n"),
        "{text}"
    );
    let listed = k
        .call(
            "list_tasks",
            json!({"project": "webapp", "status": "blocked"}),
        )
        .await;
    assert_eq!(listed.ok()["total"], 1, "indexed before it returned");
    k.stop().await;
}

#[tokio::test]
async fn create_task_refuses_bad_arguments() {
    let (f, k) = kura().await;
    let ok = json!({"project": "webapp", "title": "t", "objective": "o", "steps": ["a"], "acceptance_criteria": ["b"]});
    for (key, value, code) in [
        ("status", json!("started"), "INVALID_STATUS"),
        ("steps", json!("a"), "INVALID_PARAMETER"),
        ("steps", json!([1, 2]), "INVALID_PARAMETER"),
        ("tags", json!("x"), "INVALID_PARAMETER"),
        ("context", json!(["a"]), "INVALID_PARAMETER"),
        ("title", json!(""), "INVALID_PARAMETER"),
        ("project", json!("ghost"), "PROJECT_NOT_FOUND"),
    ] {
        let mut args = ok.clone();
        args[key] = value;
        assert_eq!(k.call("create_task", args).await.code(), code, "{key}");
    }
    let mut missing = ok;
    missing
        .as_object_mut()
        .unwrap()
        .remove("acceptance_criteria");
    assert_eq!(
        k.call("create_task", missing).await.code(),
        "INVALID_PARAMETER"
    );
    let names = std::fs::read_dir(f.vibe().join("webapp/tasks"))
        .unwrap()
        .count();
    assert_eq!(names, 3, "nothing was written");
    k.stop().await;
}

#[tokio::test]
async fn concurrent_create_task_never_shares_a_number() {
    // Two server processes on one workspace, eight calls each at once.
    let f = Fixture::new();
    let a = f.start_vibe(&[]).await;
    let b = f.start_vibe(&[]).await;
    let mut calls = Vec::new();
    for i in 0..8 {
        calls.push(call(&a, i));
    }
    for i in 8..16 {
        calls.push(call(&b, i));
    }
    let mut numbers: Vec<String> = futures_join(calls).await;
    numbers.sort();
    let expected: Vec<String> = (4..20).map(|n| format!("{n:03}")).collect();
    assert_eq!(numbers, expected);
    let files = std::fs::read_dir(f.vibe().join("webapp/tasks"))
        .unwrap()
        .count();
    assert_eq!(files, 19);
    a.stop().await;
    b.stop().await;
}

async fn call(k: &Kura, i: usize) -> String {
    let args = json!({"project": "webapp", "title": format!("Parallel {i}"), "objective": "o",
                      "steps": ["s"], "acceptance_criteria": ["c"]});
    k.call("create_task", args).await.ok()["task"]["number"]
        .as_str()
        .unwrap()
        .to_owned()
}

/// Run the futures concurrently on this task and collect their outputs.
async fn futures_join<F: std::future::Future<Output = String>>(fs: Vec<F>) -> Vec<String> {
    let mut pinned: Vec<_> = fs.into_iter().map(Box::pin).collect();
    let mut out: Vec<Option<String>> = vec![None; pinned.len()];
    std::future::poll_fn(|cx| {
        let mut pending = false;
        for (i, f) in pinned.iter_mut().enumerate() {
            if out[i].is_none() {
                match f.as_mut().poll(cx) {
                    std::task::Poll::Ready(v) => out[i] = Some(v),
                    std::task::Poll::Pending => pending = true,
                }
            }
        }
        if pending {
            std::task::Poll::Pending
        } else {
            std::task::Poll::Ready(())
        }
    })
    .await;
    out.into_iter().map(Option::unwrap).collect()
}

#[tokio::test]
async fn update_task_status_rewrites_the_status_line_outside_code_fences() {
    let (f, k) = kura().await;
    let v = k
        .call(
            "update_task_status",
            json!({"project": "vibeMCP", "task": "004", "status": "done"}),
        )
        .await;
    let v = v.ok();
    assert_eq!(
        v["task"],
        json!({"filename": "004-definir-interfaz-mcp.md", "path": "vibeMCP/tasks/004-definir-interfaz-mcp.md",
               "previous_status": "in-progress", "new_status": "done"})
    );
    let text = read(&f, "vibeMCP/tasks/004-definir-interfaz-mcp.md");
    assert!(text.contains("\nStatus: done\n\n## Objective"), "{text}");
    assert!(
        text.contains("```markdown\nStatus: done\n```"),
        "fence kept as it was"
    );
    assert_eq!(text.matches("Status:").count(), 2);
    // By filename, and by number without zeros.
    let by_name = k
        .call("update_task_status", json!({"project": "vibeMCP", "task": "005-crear-workspace-ejemplo.md", "status": "in-progress"}))
        .await;
    assert_eq!(by_name.ok()["task"]["previous_status"], "pending");
    let by_number = k
        .call(
            "update_task_status",
            json!({"project": "vibeMCP", "task": "5", "status": "blocked"}),
        )
        .await;
    assert_eq!(by_number.ok()["task"]["previous_status"], "in-progress");
    let listed = k
        .call(
            "list_tasks",
            json!({"project": "vibeMCP", "status": "blocked"}),
        )
        .await;
    assert_eq!(listed.ok()["total"], 2, "re-indexed before it returned");
    k.stop().await;
}

#[tokio::test]
async fn update_task_status_keeps_a_front_matter_status_consistent() {
    let (f, k) = kura().await;
    let text = "---\nstatus: pending\ntags: [x]\n---\n# Task: Dual\n\nStatus: pending\n";
    k.call(
        "create_doc",
        json!({"project": "webapp", "folder": "tasks", "filename": "050-dual.md", "content": text}),
    )
    .await
    .ok();
    k.call(
        "update_task_status",
        json!({"project": "webapp", "task": "050", "status": "done"}),
    )
    .await
    .ok();
    let new = read(&f, "webapp/tasks/050-dual.md");
    assert!(new.starts_with("---\nstatus: done\n"), "{new}");
    assert!(new.ends_with("# Task: Dual\n\nStatus: done\n"), "{new}");
    k.stop().await;
}

#[tokio::test]
async fn update_task_status_errors() {
    let (_f, k) = kura().await;
    for (args, code) in [
        (
            json!({"project": "vibeMCP", "task": "999", "status": "done"}),
            "FILE_NOT_FOUND",
        ),
        (
            json!({"project": "vibeMCP", "task": "004", "status": "finished"}),
            "INVALID_STATUS",
        ),
        (
            json!({"project": "vibeMCP", "task": "../plans/execution-plan", "status": "done"}),
            "FILE_NOT_FOUND",
        ),
        (
            json!({"project": "ghost", "task": "001", "status": "done"}),
            "PROJECT_NOT_FOUND",
        ),
    ] {
        assert_eq!(
            k.call("update_task_status", args.clone()).await.code(),
            code,
            "{args}"
        );
    }
    k.stop().await;
}

#[tokio::test]
async fn create_plan_creates_then_updates() {
    let (f, k) = kura().await;
    let args = json!({"project": "webapp", "filename": "beta-plan.md", "content": "# Beta\n\n## Overview\nShip it.\n"});
    let v = k.call("create_plan", args.clone()).await;
    assert_eq!(v.ok()["action"], "created");
    let v = k.call("create_plan", args).await;
    let v = v.ok();
    assert_eq!(v["action"], "updated");
    assert_eq!(v["path"], "webapp/plans/beta-plan.md");
    let plan = k
        .call(
            "get_plan",
            json!({"project": "webapp", "filename": "beta-plan.md"}),
        )
        .await;
    assert_eq!(plan.ok()["parsed"]["overview"], "Ship it.");
    let d = k
        .call(
            "create_plan",
            json!({"project": "webapp", "content": "# New plan\n"}),
        )
        .await;
    assert_eq!(
        d.ok()["action"],
        "updated",
        "execution-plan.md by default, and it exists"
    );
    assert_eq!(read(&f, "webapp/plans/execution-plan.md"), "# New plan\n");
    k.stop().await;
}

#[tokio::test]
async fn log_session_creates_appends_with_separator_and_uses_the_local_date() {
    let (f, k) = kura().await;
    let date = today();
    let v = k
        .call(
            "log_session",
            json!({"project": "webapp", "content": "## Did\n\n- one"}),
        )
        .await;
    let v = v.ok();
    assert_eq!(
        v["session"],
        json!({"filename": format!("{date}.md"), "path": format!("webapp/sessions/{date}.md"), "action": "created"})
    );
    let again = k
        .call(
            "log_session",
            json!({"project": "webapp", "content": "- two"}),
        )
        .await;
    assert_eq!(
        again.code(),
        "FILE_EXISTS",
        "nothing is overwritten without append"
    );
    let v = k
        .call(
            "log_session",
            json!({"project": "webapp", "content": "## Afternoon\n\n- three", "append": true}),
        )
        .await;
    assert_eq!(v.ok()["session"]["action"], "appended");
    assert_eq!(
        read(&f, &format!("webapp/sessions/{date}.md")),
        "## Did\n\n- one\n\n---\n\n## Afternoon\n\n- three\n"
    );
    let s = k
        .call("log_session", json!({"project": "webapp", "content": "x", "suffix": "Debugging Auth", "append": true}))
        .await;
    let s = s.ok();
    assert_eq!(
        s["session"]["filename"],
        format!("{date}-debugging-auth.md")
    );
    assert_eq!(
        s["session"]["action"], "created",
        "append to a missing note creates it"
    );
    let bad = k
        .call(
            "log_session",
            json!({"project": "webapp", "content": "x", "suffix": "../.."}),
        )
        .await;
    assert_eq!(bad.code(), "INVALID_PARAMETER");
    k.stop().await;
}

#[tokio::test]
async fn reindex_is_incremental_and_full_on_request() {
    let f = Fixture::new();
    let log = f.dir.path().join("kura.log");
    let k = Kura::start_logging(
        f.vibe_args(&[]),
        ClientLifecycleMode::Initialize,
        std::fs::File::create(&log).unwrap().into(),
    )
    .await;
    // The start-up index done, so that the reindex below finds everything
    // indexed already and no late start-up re-check takes the edits first.
    kura_tests::wait_for_log(
        &log,
        "vibe index ready",
        std::time::Duration::from_secs(120),
    );
    let first = k.call("reindex", json!({})).await;
    let s = first.ok()["stats"].clone();
    assert_eq!(s["scanned"], 20, "13 documents in vibeMCP, 7 in webapp");
    assert_eq!(
        s["updated"].as_u64().unwrap() + s["added"].as_u64().unwrap(),
        0,
        "{s}"
    );
    // Outside edits: one changed, one added, one deleted, one touched only.
    std::fs::write(
        f.vibe().join("webapp/scratch/questions.md"),
        "# Changed\n\nperiwinkle\n",
    )
    .unwrap();
    std::fs::write(f.vibe().join("webapp/references/new.md"), "# New\n").unwrap();
    std::fs::remove_file(f.vibe().join("vibeMCP/scratch/ideas.md")).unwrap();
    let touched = f.vibe().join("vibeMCP/reports/ranking-review.md");
    let text = std::fs::read(&touched).unwrap();
    std::fs::write(&touched, text).unwrap();
    // Another modification time than the index holds, whatever the clock's
    // resolution.
    std::fs::File::options()
        .write(true)
        .open(&touched)
        .unwrap()
        .set_modified(
            std::time::SystemTime::UNIX_EPOCH + std::time::Duration::from_secs(1_000_000_000),
        )
        .unwrap();
    let v = k.call("reindex", json!({})).await;
    let v = v.ok();
    assert_eq!(v["success"], true);
    assert_eq!(v["project"], Value::Null);
    let s = &v["stats"];
    assert_eq!(
        (
            s["updated"].clone(),
            s["added"].clone(),
            s["deleted"].clone()
        ),
        (json!(1), json!(1), json!(1)),
        "{s}"
    );
    assert_eq!(
        s["unchanged"], 18,
        "the touched file's hash is unchanged: {s}"
    );
    let found = k.call("search", json!({"query": "periwinkle"})).await;
    assert_eq!(paths(found.ok()), ["webapp/scratch/questions.md"]);
    let full = k
        .call("reindex", json!({"project": "webapp", "full": true}))
        .await;
    let full = full.ok();
    assert_eq!(full["project"], "webapp");
    assert_eq!(full["stats"]["scanned"], 8);
    assert_eq!(full["stats"]["updated"], 8, "full re-reads every file");
    assert_eq!(
        full["stats"]["deleted"], 0,
        "vibeMCP is not touched by a webapp reindex"
    );
    let after = k
        .call("search", json!({"query": "ranking", "project": "vibeMCP"}))
        .await;
    assert!(!paths(after.ok()).is_empty());
    assert_eq!(
        k.call("reindex", json!({"project": "ghost"})).await.code(),
        "PROJECT_NOT_FOUND"
    );
    assert_eq!(
        k.call("reindex", json!({"full": "yes"})).await.code(),
        "INVALID_PARAMETER"
    );
    k.stop().await;
}

#[tokio::test]
async fn writes_are_atomic_and_leave_no_temporary_files() {
    let (f, k) = kura().await;
    for i in 0..5 {
        k.call(
            "log_session",
            json!({"project": "webapp", "content": format!("- {i}"), "append": true}),
        )
        .await
        .ok();
    }
    k.call(
        "create_plan",
        json!({"project": "webapp", "content": "# P\n"}),
    )
    .await
    .ok();
    for dir in ["webapp/sessions", "webapp/plans", "webapp"] {
        for e in std::fs::read_dir(f.vibe().join(dir)).unwrap() {
            let name = e.unwrap().file_name().into_string().unwrap();
            assert!(!name.contains("kura-tmp"), "{dir}/{name}");
        }
    }
    k.stop().await;
}

#[tokio::test]
async fn outside_edits_are_seen_by_the_next_search_without_reindex() {
    let (f, k) = kura().await;
    k.call("search", json!({"query": "warm"})).await.ok();
    let found = |v: &Value| paths(v);
    // A new file, a changed file, a deleted file.
    std::fs::write(
        f.vibe().join("webapp/references/fresh.md"),
        "# Fresh\n\nmarmalade\n",
    )
    .unwrap();
    std::fs::write(
        f.vibe().join("webapp/scratch/questions.md"),
        "# Q\n\nmarmalade too\n",
    )
    .unwrap();
    std::fs::remove_file(f.vibe().join("webapp/references/auth-notes.md")).unwrap();
    let search = |q: &str| json!({"query": q});
    let v = k
        .until("search", search("ES256"), |v| v["total_matches"] == 0)
        .await;
    assert_eq!(v["total_matches"], 0, "the deleted file is gone");
    let v = k
        .until("search", search("marmalade"), |v| v["total_matches"] == 2)
        .await;
    let mut got = found(&v);
    got.sort();
    assert_eq!(
        got,
        ["webapp/references/fresh.md", "webapp/scratch/questions.md"]
    );
    // A folder renamed: its files move with it.
    std::fs::rename(
        f.vibe().join("webapp/references"),
        f.vibe().join("webapp/reports"),
    )
    .unwrap();
    let v = k
        .until("search", search("marmalade"), |v| {
            v.to_string().contains("webapp/reports/fresh.md")
        })
        .await;
    let mut got = found(&v);
    got.sort();
    assert_eq!(
        got,
        ["webapp/reports/fresh.md", "webapp/scratch/questions.md"]
    );
    // A whole project appears.
    let p = f.vibe().join("newproj/tasks");
    std::fs::create_dir_all(&p).unwrap();
    std::fs::write(
        p.join("001-x.md"),
        "# Task: Gooseberry\n\nStatus: pending\n",
    )
    .unwrap();
    let v = k
        .until("search", search("gooseberry"), |v| v["total_matches"] == 1)
        .await;
    assert_eq!(found(&v), ["newproj/tasks/001-x.md"]);
    let listed = k.call("list_tasks", json!({"project": "newproj"})).await;
    assert_eq!(listed.ok()["total"], 1);
    k.stop().await;
}

#[tokio::test]
async fn a_file_that_is_not_text_is_a_filesystem_error() {
    let (f, k) = kura().await;
    std::fs::create_dir_all(f.vibe().join("webapp/assets")).unwrap();
    std::fs::write(
        f.vibe().join("webapp/assets/logo.md"),
        [0x89, b'P', b'N', b'G', 0xff, 0xfe],
    )
    .unwrap();
    let r = k
        .call(
            "read_doc",
            json!({"project": "webapp", "folder": "assets", "filename": "logo.md"}),
        )
        .await;
    assert_eq!(r.code(), "FILESYSTEM_ERROR");
    assert_eq!(r.body["error"]["details"]["path"], "assets/logo.md");
    // A folder where a file is named: not found, never read.
    let r = k
        .call(
            "read_doc",
            json!({"project": "webapp", "folder": "tasks", "filename": "."}),
        )
        .await;
    assert_eq!(r.code(), "INVALID_PATH");
    std::fs::create_dir_all(f.vibe().join("webapp/tasks/sub")).unwrap();
    let r = k
        .call(
            "read_doc",
            json!({"project": "webapp", "folder": "tasks", "filename": "sub"}),
        )
        .await;
    assert_eq!(r.code(), "FILE_NOT_FOUND");
    k.stop().await;
}

#[tokio::test]
async fn search_fuses_the_agent_s_phrasings_and_refuses_a_fifth_as_002_would() {
    let (_f, k) = kura().await;
    let question = "ログインの試行回数を制限する";
    let alone = k
        .call("search", json!({"query": question, "project": "webapp"}))
        .await;
    let expected = "webapp/references/auth-notes.md";
    assert_ne!(
        paths(alone.ok()).first().map(String::as_str),
        Some(expected)
    );
    let phrased = k
        .call(
            "search",
            json!({"query": question, "project": "webapp", "queries": ["login attempts rate limit", "Retry-After"]}),
        )
        .await;
    let v = phrased.ok();
    assert_eq!(paths(v)[0], expected, "{v}");
    assert_eq!(
        v["queries"],
        json!(["login attempts rate limit", "Retry-After"])
    );
    let five = json!({"query": "login", "queries": ["a", "b", "c", "d", "e"]});
    assert_eq!(k.call("search", five).await.code(), "INVALID_QUERY");
    k.stop().await;
}

#[tokio::test]
async fn search_in_another_language_than_the_files_says_what_to_pass() {
    let (_f, k) = kura().await;
    let said = |v: &Value| queries_hint(v).is_some();
    let v = k
        .call(
            "search",
            json!({"query": "ログインの試行回数を制限する", "project": "webapp"}),
        )
        .await;
    assert!(said(v.ok()), "{v:?}");
    let v = k
        .call(
            "search",
            json!({"query": "rate limiting of logins", "project": "webapp"}),
        )
        .await;
    assert!(!said(v.ok()), "{v:?}");
    k.stop().await;
}
