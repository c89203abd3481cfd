//! One test per fixed rule (固定ルール) of seed 000, and of vault_write /
//! vault_search in seed 001, against the real binary over stdio.

use kura_tests::{Fixture, Kura};
use serde_json::json;

async fn kura() -> (Fixture, Kura) {
    let f = Fixture::new();
    let k = f.start().await;
    (f, k)
}

// ---- 000 §1 -------------------------------------------------------------

#[tokio::test]
async fn vault_ls_is_not_a_prerequisite() {
    let (f, k) = kura().await;
    // A fresh session: read, scan, create and replace work without any vault_ls.
    k.call(
        "vault_read",
        json!({"path": "notes/welcome.md", "range": {"start_line": 1, "end_line": 1}}),
    )
    .await
    .ok();
    k.call("vault_scan", json!({"path": "notes/welcome.md"}))
        .await
        .ok();
    k.call(
        "vault_create",
        json!({"path": "n/new.md", "content": "a b"}),
    )
    .await
    .ok();
    k.call(
        "vault_replace",
        json!({"path": "n/new.md", "find": "a", "replace": "c"}),
    )
    .await
    .ok();
    assert_eq!(f.read("n/new.md"), "c b");
}

// ---- 000 §2 vault_create -------------------------------------------------

#[tokio::test]
async fn vault_create_existing_file_is_conflict() {
    let (f, k) = kura().await;
    let before = f.read("notes/welcome.md");
    let r = k
        .call(
            "vault_create",
            json!({"path": "notes/welcome.md", "content": "x"}),
        )
        .await;
    assert_eq!(r.code(), "conflict");
    assert_eq!(f.read("notes/welcome.md"), before);
}

#[tokio::test]
async fn vault_create_under_system_is_forbidden() {
    let (f, k) = kura().await;
    for p in [".system/new.md", ".system/deep/new.md"] {
        assert_eq!(
            k.call("vault_create", json!({"path": p, "content": "x"}))
                .await
                .code(),
            "forbidden"
        );
        assert!(!f.vault().join(p).exists());
    }
    assert!(
        !f.vault().join(".system/deep").exists(),
        "no folder is made for a refused write"
    );
}

#[tokio::test]
async fn vault_create_daily_requires_yyyy_mm_dd_name() {
    let (f, k) = kura().await;
    for p in [
        "daily/today.md",
        "daily/2026-02-30.md",
        "daily/2026-1-01.md",
        "daily/x/2026-01-01.md",
    ] {
        assert_eq!(
            k.call("vault_create", json!({"path": p, "content": "x"}))
                .await
                .code(),
            "forbidden",
            "{p}"
        );
    }
    let r = k
        .call(
            "vault_create",
            json!({"path": "daily/2026-02-28.md", "content": "# day\n"}),
        )
        .await;
    assert_eq!(r.ok()["written_path"], "daily/2026-02-28.md");
    assert_eq!(r.ok()["written_bytes"], 6);
    assert_eq!(f.read("daily/2026-02-28.md"), "# day\n");
}

#[tokio::test]
async fn vault_create_content_is_required_and_non_empty() {
    let (_f, k) = kura().await;
    assert_eq!(
        k.call("vault_create", json!({"path": "a.md"})).await.code(),
        "invalid_parameter"
    );
    assert_eq!(
        k.call("vault_create", json!({"path": "a.md", "content": ""}))
            .await
            .code(),
        "invalid_parameter"
    );
    assert_eq!(
        k.call("vault_create", json!({"path": "a.md", "content": 5}))
            .await
            .code(),
        "invalid_parameter"
    );
}

// ---- 000 §3 vault_read ---------------------------------------------------

#[tokio::test]
async fn vault_read_full_defaults_to_false_so_range_is_required() {
    let (_f, k) = kura().await;
    let r = k
        .call("vault_read", json!({"path": "notes/welcome.md"}))
        .await;
    assert_eq!(r.code(), "invalid_parameter");
    let r = k
        .call(
            "vault_read",
            json!({"path": "notes/welcome.md", "full": false}),
        )
        .await;
    assert_eq!(r.code(), "invalid_parameter");
    let r = k
        .call(
            "vault_read",
            json!({"path": "notes/welcome.md", "full": true}),
        )
        .await;
    assert_eq!(r.ok()["applied"]["full"], true);
}

#[tokio::test]
async fn vault_read_full_accepts_only_boolean() {
    let (_f, k) = kura().await;
    for bad in [json!("true"), json!(1), json!({})] {
        let r = k
            .call(
                "vault_read",
                json!({"path": "notes/welcome.md", "full": bad}),
            )
            .await;
        assert_eq!(r.code(), "invalid_parameter");
        assert_eq!(r.body["error"]["details"]["parameter"], "full");
    }
}

#[tokio::test]
async fn vault_read_range_lines_are_integers_at_least_one() {
    let (_f, k) = kura().await;
    for range in [
        json!({"start_line": 0, "end_line": 2}),
        json!({"start_line": 1, "end_line": 0}),
        json!({"start_line": -1}),
        json!({"start_line": 1.5}),
        json!({"start_line": "1"}),
    ] {
        let r = k
            .call(
                "vault_read",
                json!({"path": "notes/welcome.md", "range": range}),
            )
            .await;
        assert_eq!(r.code(), "invalid_parameter", "{range}");
    }
}

#[tokio::test]
async fn vault_read_range_rejects_booleans() {
    let (_f, k) = kura().await;
    for range in [
        json!({"start_line": true, "end_line": 2}),
        json!({"start_line": 1, "end_line": false}),
    ] {
        let r = k
            .call(
                "vault_read",
                json!({"path": "notes/welcome.md", "range": range}),
            )
            .await;
        assert_eq!(r.code(), "invalid_parameter", "{range}");
    }
}

#[tokio::test]
async fn vault_read_start_line_not_after_end_line() {
    let (_f, k) = kura().await;
    let r = k
        .call(
            "vault_read",
            json!({"path": "notes/welcome.md", "range": {"start_line": 4, "end_line": 3}}),
        )
        .await;
    assert_eq!(r.code(), "invalid_parameter");
}

#[tokio::test]
async fn vault_read_start_line_within_the_file() {
    let (_f, k) = kura().await;
    // welcome.md has 12 lines.
    let r = k
        .call(
            "vault_read",
            json!({"path": "notes/welcome.md", "range": {"start_line": 13, "end_line": 20}}),
        )
        .await;
    assert_eq!(r.code(), "invalid_parameter");
    let r = k
        .call(
            "vault_read",
            json!({"path": "notes/welcome.md", "range": {"start_line": 12, "end_line": 20}}),
        )
        .await;
    let ok = r.ok();
    assert_eq!(
        ok["applied_range"],
        json!({"start_line": 12, "end_line": 12})
    );
    assert_eq!(ok["truncated"], false);
    assert_eq!(ok["truncated_reason"], "none");
}

#[tokio::test]
async fn vault_read_range_end_reports_range_end_and_a_cursor() {
    let (f, k) = kura().await;
    let r = k
        .call(
            "vault_read",
            json!({"path": "notes/welcome.md", "range": {"start_line": 1, "end_line": 2}}),
        )
        .await;
    let ok = r.ok();
    let text = f.read("notes/welcome.md");
    let two: String = text.split_inclusive('\n').take(2).collect();
    assert_eq!(ok["text"], two);
    assert_eq!(ok["truncated"], true);
    assert_eq!(ok["truncated_reason"], "range_end");
    assert_eq!(ok["next_cursor"]["char_offset"], two.chars().count());
    assert_eq!(ok["returned_chars"], two.chars().count());
}

#[tokio::test]
async fn vault_read_max_chars_is_fixed_at_12000() {
    let (_f, k) = kura().await;
    let r = k
        .call(
            "vault_read",
            json!({"path": "notes/long-journal.md", "full": true, "max_chars": 50, "limits": {"max_chars": 50}}),
        )
        .await;
    let ok = r.ok();
    assert_eq!(ok["applied"]["max_chars"], 12000);
    assert_eq!(ok["truncated_reason"], "max_chars");
    let n = ok["returned_chars"].as_u64().unwrap();
    assert!(n <= 12000 && n > 11000, "{n}");
    assert_eq!(ok["text"].as_str().unwrap().chars().count() as u64, n);
}

#[tokio::test]
async fn characters_are_counted_as_unicode_scalar_values() {
    let (f, k) = kura().await;
    let r = k
        .call(
            "vault_read",
            json!({"path": "notes/日本語メモ.md", "full": true}),
        )
        .await;
    let text = f.read("notes/日本語メモ.md");
    assert_eq!(r.ok()["returned_chars"], text.chars().count());
    assert_ne!(text.chars().count(), text.len());
}

// ---- 000 §4 vault_scan ---------------------------------------------------

#[tokio::test]
async fn vault_scan_start_line_wins_over_cursor() {
    let (_f, k) = kura().await;
    let r = k
        .call("vault_scan", json!({"path": "notes/welcome.md", "start_line": 3, "cursor": {"start_line": 5, "char_offset": 0}}))
        .await;
    assert_eq!(r.ok()["applied_range"]["start_line"], 3);
    let r = k
        .call(
            "vault_scan",
            json!({"path": "notes/welcome.md", "cursor": {"start_line": 5}}),
        )
        .await;
    assert_eq!(r.ok()["applied_range"]["start_line"], 5);
}

#[tokio::test]
async fn vault_scan_starts_at_line_1_by_default() {
    let (f, k) = kura().await;
    let r = k
        .call("vault_scan", json!({"path": "notes/welcome.md"}))
        .await;
    let ok = r.ok();
    assert_eq!(
        ok["applied_range"],
        json!({"start_line": 1, "end_line": 12})
    );
    assert_eq!(ok["text"], f.read("notes/welcome.md"));
    assert_eq!(ok["eof"], true);
    assert_eq!(ok["next_cursor"]["char_offset"], serde_json::Value::Null);
}

#[tokio::test]
async fn vault_scan_start_line_within_the_file() {
    let (_f, k) = kura().await;
    for args in [
        json!({"start_line": 13}),
        json!({"start_line": 0}),
        json!({"cursor": {"start_line": 99}}),
    ] {
        let mut a = args.clone();
        a["path"] = json!("notes/welcome.md");
        assert_eq!(
            k.call("vault_scan", a).await.code(),
            "invalid_parameter",
            "{args}"
        );
    }
}

#[tokio::test]
async fn vault_scan_rejects_booleans() {
    let (_f, k) = kura().await;
    for args in [
        json!({"start_line": true}),
        json!({"cursor": {"start_line": false}}),
        json!({"cursor": {"char_offset": true}}),
    ] {
        let mut a = args.clone();
        a["path"] = json!("notes/welcome.md");
        assert_eq!(
            k.call("vault_scan", a).await.code(),
            "invalid_parameter",
            "{args}"
        );
    }
}

#[tokio::test]
async fn vault_scan_max_chars_is_fixed_at_12000() {
    let (_f, k) = kura().await;
    let r = k
        .call(
            "vault_scan",
            json!({"path": "notes/long-journal.md", "max_chars": 10}),
        )
        .await;
    let ok = r.ok();
    assert_eq!(ok["applied"]["max_chars"], 12000);
    assert_eq!(ok["truncated"], true);
    assert_eq!(ok["truncated_reason"], "max_chars");
    assert!(ok["text"].as_str().unwrap().chars().count() <= 12000);
}

#[tokio::test]
async fn scan_resumed_from_char_offset_loses_and_repeats_nothing() {
    let (f, k) = kura().await;
    // Multi-byte text with a line longer than the cap, so cuts fall mid-line too.
    let mut text = String::from("# 長い日本語\n");
    for i in 0..400 {
        text.push_str(&format!(
            "{i}: 日本語のテキストと emoji 😀 が混ざった行です。\n"
        ));
    }
    text.push_str(&"途切れない一行".repeat(3000));
    text.push_str("\n最後の行");
    f.write("notes/multibyte.md", &text);
    let mut out = String::new();
    let mut args = json!({"path": "notes/multibyte.md"});
    let mut rounds = 0;
    loop {
        let r = k.call("vault_scan", args.clone()).await;
        let ok = r.ok().clone();
        out.push_str(ok["text"].as_str().unwrap());
        rounds += 1;
        if ok["eof"] == true {
            break;
        }
        let off = ok["next_cursor"]["char_offset"].as_u64().unwrap();
        assert_eq!(off as usize, out.chars().count(), "the cursor is absolute");
        args = json!({"path": "notes/multibyte.md", "cursor": {"char_offset": off}});
        assert!(rounds < 50);
    }
    assert_eq!(out, text);
    assert!(rounds >= 4, "{rounds}");
}

// ---- 000 §5 vault_replace ------------------------------------------------

#[tokio::test]
async fn vault_replace_under_system_is_forbidden() {
    let (f, k) = kura().await;
    let before = f.read(".system/README.md");
    let r = k
        .call(
            "vault_replace",
            json!({"path": ".system/README.md", "find": "Reserved", "replace": "Mine"}),
        )
        .await;
    assert_eq!(r.code(), "forbidden");
    assert_eq!(f.read(".system/README.md"), before);
}

#[tokio::test]
async fn daily_replace_is_forbidden() {
    let (f, k) = kura().await;
    let before = f.read("daily/2026-01-05.md");
    let r = k
        .call(
            "vault_replace",
            json!({"path": "daily/2026-01-05.md", "find": "MCP", "replace": "x"}),
        )
        .await;
    assert_eq!(r.code(), "forbidden");
    assert_eq!(f.read("daily/2026-01-05.md"), before);
}

#[tokio::test]
async fn vault_replace_max_replacements_defaults_to_1() {
    let (f, k) = kura().await;
    f.write("r.md", "a a a");
    let r = k
        .call(
            "vault_replace",
            json!({"path": "r.md", "find": "a", "replace": "b"}),
        )
        .await;
    assert_eq!(r.ok()["replacements"], 1);
    assert_eq!(f.read("r.md"), "b a a");
}

#[tokio::test]
async fn vault_replace_max_replacements_zero_replaces_all() {
    let (f, k) = kura().await;
    f.write("r.md", "a a a");
    let r = k
        .call(
            "vault_replace",
            json!({"path": "r.md", "find": "a", "replace": "b", "max_replacements": 0}),
        )
        .await;
    assert_eq!(r.ok()["replacements"], 3);
    assert_eq!(f.read("r.md"), "b b b");
    f.write("r.md", "a a a");
    let r = k
        .call(
            "vault_replace",
            json!({"path": "r.md", "find": "a", "replace": "b", "max_replacements": 2}),
        )
        .await;
    assert_eq!(r.ok()["replacements"], 2);
    assert_eq!(f.read("r.md"), "b b a");
}

#[tokio::test]
async fn vault_replace_max_replacements_is_a_non_negative_integer() {
    let (f, k) = kura().await;
    f.write("r.md", "a");
    for bad in [json!(-1), json!(1.5), json!("1"), json!(true), json!(false)] {
        let r = k
            .call(
                "vault_replace",
                json!({"path": "r.md", "find": "a", "replace": "b", "max_replacements": bad}),
            )
            .await;
        assert_eq!(r.code(), "invalid_parameter", "{bad}");
    }
    assert_eq!(f.read("r.md"), "a");
}

#[tokio::test]
async fn vault_replace_absent_find_leaves_the_file_untouched() {
    let (f, k) = kura().await;
    f.write("r.md", "abc");
    // A time no write now could give it: any rewrite would change it.
    let mtime = std::time::SystemTime::UNIX_EPOCH + std::time::Duration::from_secs(1_000_000_000);
    std::fs::File::options()
        .write(true)
        .open(f.vault().join("r.md"))
        .unwrap()
        .set_modified(mtime)
        .unwrap();
    let r = k
        .call(
            "vault_replace",
            json!({"path": "r.md", "find": "zzz", "replace": "b"}),
        )
        .await;
    assert_eq!(r.ok()["replacements"], 0);
    assert_eq!(
        std::fs::metadata(f.vault().join("r.md"))
            .unwrap()
            .modified()
            .unwrap(),
        mtime
    );
}

#[tokio::test]
async fn vault_replace_missing_file_is_not_found() {
    let (_f, k) = kura().await;
    let r = k
        .call(
            "vault_replace",
            json!({"path": "nope.md", "find": "a", "replace": "b"}),
        )
        .await;
    assert_eq!(r.code(), "not_found");
}

// ---- 000 §6 vault_ls -----------------------------------------------------

#[tokio::test]
async fn vault_ls_defaults_to_the_vault_root() {
    let (_f, k) = kura().await;
    let r = k.call("vault_ls", json!({})).await;
    let ok = r.ok();
    assert_eq!(ok["base_path"], serde_json::Value::Null);
    let names: Vec<&str> = ok["items"]
        .as_array()
        .unwrap()
        .iter()
        .map(|i| i["name"].as_str().unwrap())
        .collect();
    assert_eq!(names, [".system", "daily", "notes", "projects", "research"]);
}

#[tokio::test]
async fn vault_ls_is_one_level_only() {
    let (_f, k) = kura().await;
    let r = k.call("vault_ls", json!({"path": "projects"})).await;
    let ok = r.ok();
    assert_eq!(ok["base_path"], "projects");
    assert_eq!(
        ok["items"],
        json!([{"name": "kura", "path": "projects/kura", "kind": "dir"}])
    );
}

#[tokio::test]
async fn vault_ls_orders_dirs_then_files_by_name() {
    let (f, k) = kura().await;
    for p in [
        "mix/b.md",
        "mix/a.md",
        "mix/z/x.md",
        "mix/c/x.md",
        "mix/B.md",
    ] {
        f.write(p, "x");
    }
    let r = k.call("vault_ls", json!({"path": "mix"})).await;
    let items: Vec<(String, String)> = r.ok()["items"]
        .as_array()
        .unwrap()
        .iter()
        .map(|i| {
            (
                i["kind"].as_str().unwrap().into(),
                i["name"].as_str().unwrap().into(),
            )
        })
        .collect();
    let want = [
        ("dir", "c"),
        ("dir", "z"),
        ("file", "B.md"),
        ("file", "a.md"),
        ("file", "b.md"),
    ];
    assert_eq!(items, want.map(|(a, b)| (a.to_string(), b.to_string())));
}

#[tokio::test]
async fn vault_ls_never_returns_symlinks() {
    let (f, k) = kura().await;
    std::os::unix::fs::symlink(
        f.vault().join("notes/welcome.md"),
        f.vault().join("notes/alias.md"),
    )
    .unwrap();
    std::os::unix::fs::symlink(f.vault().join("projects"), f.vault().join("notes/dirlink"))
        .unwrap();
    let r = k.call("vault_ls", json!({"path": "notes"})).await;
    let names: Vec<&str> = r.ok()["items"]
        .as_array()
        .unwrap()
        .iter()
        .map(|i| i["name"].as_str().unwrap())
        .collect();
    assert!(
        !names.contains(&"alias.md") && !names.contains(&"dirlink"),
        "{names:?}"
    );
}

// ---- 001 vault_write -----------------------------------------------------

#[tokio::test]
async fn vault_write_changes_existing_files_only() {
    let (f, k) = kura().await;
    let r = k
        .call(
            "vault_write",
            json!({"path": "notes/missing.md", "content": "x", "mode": "overwrite"}),
        )
        .await;
    assert_eq!(r.code(), "conflict");
    assert!(!f.vault().join("notes/missing.md").exists());
    let r = k
        .call(
            "vault_write",
            json!({"path": "notes/welcome.md", "content": "new", "mode": "overwrite"}),
        )
        .await;
    assert_eq!(r.ok()["written_bytes"], 3);
    assert_eq!(f.read("notes/welcome.md"), "new");
    let r = k
        .call(
            "vault_write",
            json!({"path": "notes/welcome.md", "content": "+more", "mode": "append"}),
        )
        .await;
    assert_eq!(r.ok()["written_bytes"], 5);
    assert_eq!(f.read("notes/welcome.md"), "new+more");
}

#[tokio::test]
async fn vault_write_under_system_is_forbidden() {
    let (f, k) = kura().await;
    for mode in ["overwrite", "append"] {
        let r = k
            .call(
                "vault_write",
                json!({"path": ".system/README.md", "content": "x", "mode": mode}),
            )
            .await;
        assert_eq!(r.code(), "forbidden");
    }
    assert!(f.read(".system/README.md").starts_with("Reserved"));
}

#[tokio::test]
async fn vault_write_daily_is_append_only() {
    let (f, k) = kura().await;
    let before = f.read("daily/2026-01-05.md");
    let r = k
        .call(
            "vault_write",
            json!({"path": "daily/2026-01-05.md", "content": "x", "mode": "overwrite"}),
        )
        .await;
    assert_eq!(r.code(), "forbidden");
    assert_eq!(f.read("daily/2026-01-05.md"), before);
    k.call(
        "vault_write",
        json!({"path": "daily/2026-01-05.md", "content": "- more\n", "mode": "append"}),
    )
    .await
    .ok();
    assert_eq!(f.read("daily/2026-01-05.md"), format!("{before}- more\n"));
}

#[tokio::test]
async fn vault_write_daily_first_creation_is_vault_create() {
    let (f, k) = kura().await;
    let r = k
        .call(
            "vault_write",
            json!({"path": "daily/2026-03-01.md", "content": "x", "mode": "append"}),
        )
        .await;
    assert_eq!(r.code(), "conflict");
    assert!(!f.vault().join("daily/2026-03-01.md").exists());
}

#[tokio::test]
async fn vault_write_daily_name_must_be_a_date() {
    let (f, k) = kura().await;
    f.write("daily/notes.md", "x");
    let r = k
        .call(
            "vault_write",
            json!({"path": "daily/notes.md", "content": "y", "mode": "append"}),
        )
        .await;
    assert_eq!(r.code(), "forbidden");
}

#[tokio::test]
async fn vault_write_mode_is_required_and_checked() {
    let (_f, k) = kura().await;
    let base = json!({"path": "notes/welcome.md", "content": "x"});
    assert_eq!(
        k.call("vault_write", base.clone()).await.code(),
        "invalid_parameter"
    );
    let mut bad = base.clone();
    bad["mode"] = json!("prepend");
    assert_eq!(k.call("vault_write", bad).await.code(), "invalid_parameter");
}

// ---- 001 vault_search ----------------------------------------------------

#[tokio::test]
async fn vault_search_mode_defaults_to_regex() {
    let (_f, k) = kura().await;
    let r = k
        .call("vault_search", json!({"query": "vault_(read|scan)"}))
        .await;
    let ok = r.ok();
    assert_eq!(ok["applied"]["mode"], "regex");
    assert!(!ok["results"].as_array().unwrap().is_empty());
}

#[tokio::test]
async fn vault_search_invalid_regex_falls_back_to_plain() {
    let (f, k) = kura().await;
    f.write("notes/odd.md", "a line with (unbalanced parenthesis\n");
    let r = k
        .call("vault_search", json!({"query": "(unbalanced"}))
        .await;
    let ok = r.ok();
    assert_eq!(ok["applied"]["mode"], "plain");
    assert!(ok["applied"]["regex_error"].is_string());
    assert_eq!(ok["results"][0]["path"], "notes/odd.md");
}

#[tokio::test]
async fn vault_search_limit_defaults_to_50() {
    let (f, k) = kura().await;
    f.write("notes/many.md", &"needle\n".repeat(80));
    let r = k
        .call("vault_search", json!({"query": "needle", "mode": "plain"}))
        .await;
    assert_eq!(r.ok()["results"].as_array().unwrap().len(), 50);
    let r = k
        .call(
            "vault_search",
            json!({"query": "needle", "mode": "plain", "limit": 7}),
        )
        .await;
    assert_eq!(r.ok()["results"].as_array().unwrap().len(), 7);
    for bad in [json!(0), json!(true), json!("5"), json!(100000)] {
        assert_eq!(
            k.call("vault_search", json!({"query": "needle", "limit": bad}))
                .await
                .code(),
            "invalid_parameter"
        );
    }
}

#[tokio::test]
async fn vault_search_loose_ignores_width_and_case() {
    let (_f, k) = kura().await;
    let r = k
        .call(
            "vault_search",
            json!({"query": "ＶＡＵＬＴ ＳＥＡＲＣＨ", "mode": "loose"}),
        )
        .await;
    let paths: Vec<&str> = r.ok()["results"]
        .as_array()
        .unwrap()
        .iter()
        .map(|x| x["path"].as_str().unwrap())
        .collect();
    assert!(paths.contains(&"notes/日本語メモ.md"), "{paths:?}");
}

#[tokio::test]
async fn vault_search_filters_by_glob_and_relative_dir() {
    let (_f, k) = kura().await;
    let r = k
        .call(
            "vault_search",
            json!({"query": "vault", "mode": "plain", "glob": "projects/**"}),
        )
        .await;
    assert!(
        r.ok()["results"]
            .as_array()
            .unwrap()
            .iter()
            .all(|x| x["path"].as_str().unwrap().starts_with("projects/"))
    );
    let r = k
        .call(
            "vault_search",
            json!({"query": "e", "mode": "plain", "relative_dir": "daily"}),
        )
        .await;
    let res = r.ok()["results"].as_array().unwrap().clone();
    assert!(
        !res.is_empty()
            && res
                .iter()
                .all(|x| x["path"].as_str().unwrap().starts_with("daily/"))
    );
    assert_eq!(
        k.call("vault_search", json!({"query": "x", "glob": "[oops"}))
            .await
            .code(),
        "invalid_parameter"
    );
}

#[tokio::test]
async fn vault_search_sees_a_write_at_once() {
    let (_f, k) = kura().await;
    k.call(
        "vault_create",
        json!({"path": "fresh.md", "content": "zebra-unicorn-42"}),
    )
    .await
    .ok();
    let r = k
        .call(
            "vault_search",
            json!({"query": "zebra-unicorn-42", "mode": "plain"}),
        )
        .await;
    assert_eq!(r.ok()["results"][0]["path"], "fresh.md");
}

#[tokio::test]
async fn vault_search_query_is_required_and_non_empty() {
    let (_f, k) = kura().await;
    assert_eq!(
        k.call("vault_search", json!({})).await.code(),
        "invalid_parameter"
    );
    assert_eq!(
        k.call("vault_search", json!({"query": ""})).await.code(),
        "invalid_parameter"
    );
    assert_eq!(
        k.call("vault_search", json!({"query": "x", "mode": "fuzzy"}))
            .await
            .code(),
        "invalid_parameter"
    );
}

#[tokio::test]
async fn a_path_through_a_file_is_not_found() {
    let (_f, k) = kura().await;
    let r = k
        .call(
            "vault_read",
            json!({"path": "notes/welcome.md/x.md", "full": true}),
        )
        .await;
    assert_eq!(r.code(), "not_found");
    let r = k
        .call("vault_scan", json!({"path": "notes/welcome.md/x.md"}))
        .await;
    assert_eq!(r.code(), "not_found");
}
