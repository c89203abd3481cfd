//! One test per fixed rule (固定ルール) of seed 004's browsing and reading
//! tools: manual_ls, manual_toc, manual_read, manual_scan.

use kura_tests::{Fixture, Kura};
use serde_json::{Value, json};

const MANUAL: &str = "vue-docs-ja";
const COMPUTED: &str = "guide/essentials/computed.md";

async fn kura() -> (Fixture, Kura) {
    let f = Fixture::new();
    let k = f.start_with_manuals(&[]).await;
    (f, k)
}

fn names(v: &Value) -> Vec<String> {
    v["items"]
        .as_array()
        .unwrap()
        .iter()
        .map(|i| i["name"].as_str().unwrap().to_owned())
        .collect()
}

fn read_ref(path: &str, line: u64) -> Value {
    json!({"manual_id": MANUAL, "path": path, "start_line": line})
}

// ---- manual_ls -------------------------------------------------------------

#[tokio::test]
async fn manual_ls_defaults_to_manuals() {
    let (_f, k) = kura().await;
    let r = k.call("manual_ls", json!({})).await;
    assert_eq!(r.ok()["id"], "manuals");
    assert_eq!(names(r.ok()), [MANUAL]);
}

#[tokio::test]
async fn manual_ls_manuals_lists_only_manual_folders() {
    let (f, k) = kura().await;
    std::fs::write(f.manuals().join("stray.md"), "# not a manual\n").unwrap();
    std::fs::create_dir_all(f.manuals().join("other/deep")).unwrap();
    let r = k.call("manual_ls", json!({"id": "manuals"})).await;
    assert_eq!(names(r.ok()), ["other", MANUAL]);
    assert!(
        r.ok()["items"]
            .as_array()
            .unwrap()
            .iter()
            .all(|i| i["kind"] == "dir")
    );
}

#[tokio::test]
async fn manual_ls_a_manual_lists_its_direct_children_only() {
    let (_f, k) = kura().await;
    let r = k.call("manual_ls", json!({"id": MANUAL})).await;
    // LICENSE.txt and SOURCE are not manual files; nothing below `guide/` is listed.
    assert_eq!(names(r.ok()), ["api", "guide", "public"]);
    let r = k
        .call("manual_ls", json!({"id": "vue-docs-ja/guide"}))
        .await;
    assert_eq!(
        r.ok()["items"],
        json!([{"id": "vue-docs-ja/guide/essentials", "name": "essentials", "kind": "dir", "path": "guide/essentials"}])
    );
}

#[tokio::test]
async fn manual_ls_dirs_are_dir_and_md_json_files_are_file() {
    let (_f, k) = kura().await;
    let r = k
        .call("manual_ls", json!({"id": "vue-docs-ja/public"}))
        .await;
    assert_eq!(
        r.ok()["items"],
        json!([{"id": "vue-docs-ja/public/funding.json", "name": "funding.json", "kind": "file", "path": "public/funding.json", "file_type": "json"}])
    );
    let r = k
        .call("manual_ls", json!({"id": "vue-docs-ja/guide/essentials"}))
        .await;
    let items = r.ok()["items"].as_array().unwrap();
    assert!(
        items
            .iter()
            .all(|i| i["kind"] == "file" && i["file_type"] == "md")
    );
}

#[tokio::test]
async fn manual_ls_file_id_is_invalid_parameter() {
    let (_f, k) = kura().await;
    let r = k
        .call(
            "manual_ls",
            json!({"id": "vue-docs-ja/guide/essentials/computed.md"}),
        )
        .await;
    assert_eq!(r.code(), "invalid_parameter");
    assert_eq!(
        k.call("manual_ls", json!({"id": "nope"})).await.code(),
        "not_found"
    );
    assert_eq!(
        k.call("manual_ls", json!({"id": "../vault"})).await.code(),
        "out_of_scope"
    );
}

// ---- manual_toc ------------------------------------------------------------

#[tokio::test]
async fn manual_toc_lists_headings_with_line_start() {
    let (_f, k) = kura().await;
    let r = k.call("manual_toc", json!({"manual_id": MANUAL})).await;
    let items = r.ok()["items"].as_array().unwrap();
    let paths: Vec<&str> = items.iter().map(|i| i["path"].as_str().unwrap()).collect();
    assert_eq!(
        paths,
        [
            "api/application.md",
            COMPUTED,
            "guide/essentials/template-syntax.md"
        ]
    );
    let computed = &items[1]["headings"];
    assert_eq!(
        computed[0],
        json!({"title": "算出プロパティ", "line_start": 1})
    );
    assert_eq!(
        computed[1],
        json!({"title": "基本的な例", "line_start": 11})
    );
    assert_eq!(
        k.call("manual_toc", json!({"manual_id": "nope"}))
            .await
            .code(),
        "not_found"
    );
    assert_eq!(
        k.call("manual_toc", json!({})).await.code(),
        "invalid_parameter"
    );
}

// ---- manual_read -----------------------------------------------------------

#[tokio::test]
async fn manual_read_md_defaults_to_section() {
    let (f, k) = kura().await;
    let r = k
        .call("manual_read", json!({"ref": read_ref(COMPUTED, 150)}))
        .await;
    let ok = r.ok();
    assert_eq!(ok["applied"]["scope"], "section");
    assert_eq!(ok["applied"]["mode"], "read");
    assert_eq!(
        ok["applied_range"],
        json!({"start_line": 141, "end_line": 200})
    );
    let text = std::fs::read_to_string(f.manuals().join(MANUAL).join(COMPUTED)).unwrap();
    let want: String = text.split_inclusive('\n').skip(140).take(60).collect();
    assert_eq!(ok["text"], want);
    assert_eq!(ok["truncated"], true);
    assert_eq!(ok["truncated_reason"], "scope_end");
}

#[tokio::test]
async fn manual_read_json_defaults_to_file() {
    let (f, k) = kura().await;
    let r = k
        .call(
            "manual_read",
            json!({"ref": {"manual_id": MANUAL, "path": "public/funding.json"}}),
        )
        .await;
    let ok = r.ok();
    assert_eq!(ok["applied"]["scope"], "file");
    assert_eq!(
        ok["text"],
        std::fs::read_to_string(f.manuals().join(MANUAL).join("public/funding.json")).unwrap()
    );
    assert_eq!(ok["truncated"], false);
}

#[tokio::test]
async fn manual_read_md_file_scope_needs_allow_file_scope_and_allow_file() {
    let f = Fixture::new();
    let args = json!({"ref": read_ref(COMPUTED, 1), "scope": "file", "allow_file": true});
    let off = f.start_with_manuals(&[]).await;
    assert_eq!(
        off.call("manual_read", args.clone()).await.code(),
        "forbidden"
    );
    let on = f
        .start_with_manuals(&["--set", "allow_file_scope=true"])
        .await;
    for refused in [
        json!({"ref": read_ref(COMPUTED, 1), "scope": "file"}),
        json!({"ref": read_ref(COMPUTED, 1), "scope": "file", "allow_file": false}),
    ] {
        assert_eq!(on.call("manual_read", refused).await.code(), "forbidden");
    }
    let r = on.call("manual_read", args).await;
    assert_eq!(r.ok()["applied"]["scope"], "file");
    assert_eq!(r.ok()["truncated"], false);
    // application.md holds 14018 characters: a whole-file read is still capped.
    let big =
        json!({"ref": read_ref("api/application.md", 1), "scope": "file", "allow_file": true});
    let r = on.call("manual_read", big).await;
    assert_eq!(r.ok()["truncated_reason"], "max_chars");
}

#[tokio::test]
async fn manual_read_allow_file_accepts_only_boolean() {
    let (_f, k) = kura().await;
    for bad in [json!("true"), json!(1)] {
        let r = k
            .call(
                "manual_read",
                json!({"ref": read_ref(COMPUTED, 1), "allow_file": bad}),
            )
            .await;
        assert_eq!(r.code(), "invalid_parameter");
    }
}

#[tokio::test]
async fn manual_read_json_section_scope_is_invalid_scope() {
    let (_f, k) = kura().await;
    for scope in ["section", "sections"] {
        let r = k.call("manual_read", json!({"ref": {"manual_id": MANUAL, "path": "public/funding.json"}, "scope": scope})).await;
        assert_eq!(r.code(), "invalid_scope");
    }
}

#[tokio::test]
async fn manual_read_max_sections_is_20_and_max_chars_is_12000() {
    let (_f, k) = kura().await;
    let r = k.call("manual_read", json!({"ref": read_ref(COMPUTED, 378), "scope": "sections", "max_sections": 1, "max_chars": 5})).await;
    let ok = r.ok();
    assert_eq!(ok["applied"]["max_sections"], 20);
    assert_eq!(ok["applied"]["max_chars"], 12000);
    // The best-practices section with its two subsections (378..end).
    assert_eq!(ok["applied_range"]["start_line"], 378);
    assert!(
        ok["text"]
            .as_str()
            .unwrap()
            .contains("### 算出した値の変更を避ける")
    );
    let r = k
        .call(
            "manual_read",
            json!({"ref": read_ref("api/application.md", 1), "scope": "sections"}),
        )
        .await;
    assert!(r.ok()["text"].as_str().unwrap().chars().count() <= 12000);
}

#[tokio::test]
async fn manual_read_expand_is_non_negative_integers() {
    let (_f, k) = kura().await;
    for bad in [
        json!({"before_chars": -1}),
        json!({"after_chars": true}),
        json!({"after_chars": "5"}),
    ] {
        let r = k
            .call(
                "manual_read",
                json!({"ref": read_ref(COMPUTED, 11), "scope": "snippet", "expand": bad}),
            )
            .await;
        assert_eq!(r.code(), "invalid_parameter", "{bad}");
    }
    let plain = k
        .call(
            "manual_read",
            json!({"ref": read_ref(COMPUTED, 11), "scope": "snippet"}),
        )
        .await;
    let wide = k.call("manual_read", json!({"ref": read_ref(COMPUTED, 11), "scope": "snippet", "expand": {"before_chars": 10, "after_chars": 10}})).await;
    let (p, w) = (
        plain.ok()["text"].as_str().unwrap(),
        wide.ok()["text"].as_str().unwrap(),
    );
    assert_eq!(w.chars().count(), p.chars().count() + 20);
    assert!(w.contains(p));
}

#[tokio::test]
async fn manual_read_repeated_section_falls_back_to_scan_from_the_next_line() {
    let (_f, k) = kura().await;
    let args = json!({"ref": read_ref(COMPUTED, 141)});
    let first = k.call("manual_read", args.clone()).await;
    assert_eq!(first.ok()["applied"]["mode"], "read");
    let again = k.call("manual_read", args).await;
    let ok = again.ok();
    assert_eq!(ok["applied"]["mode"], "scan_fallback");
    assert_eq!(ok["applied_range"]["start_line"], 201);
    assert!(
        ok["text"]
            .as_str()
            .unwrap()
            .starts_with("## 書き込み可能な 算出関数")
    );
}

#[tokio::test]
async fn manual_read_start_line_within_the_file() {
    let (_f, k) = kura().await;
    let r = k
        .call("manual_read", json!({"ref": read_ref(COMPUTED, 100000)}))
        .await;
    assert_eq!(r.code(), "invalid_parameter");
    let r = k
        .call(
            "manual_read",
            json!({"ref": {"manual_id": MANUAL, "path": "LICENSE.txt"}}),
        )
        .await;
    assert_eq!(r.code(), "invalid_parameter");
    let r = k
        .call(
            "manual_read",
            json!({"ref": {"manual_id": MANUAL, "path": "../../vault/notes/welcome.md"}}),
        )
        .await;
    assert_eq!(r.code(), "out_of_scope");
}

// ---- manual_scan -----------------------------------------------------------

#[tokio::test]
async fn manual_scan_start_line_wins_over_cursor() {
    let (_f, k) = kura().await;
    let r = k.call("manual_scan", json!({"manual_id": MANUAL, "path": COMPUTED, "start_line": 11, "cursor": {"start_line": 141}})).await;
    assert_eq!(r.ok()["applied_range"]["start_line"], 11);
    assert_eq!(r.ok()["manual_id"], MANUAL);
    assert_eq!(r.ok()["path"], COMPUTED);
    let r = k
        .call(
            "manual_scan",
            json!({"manual_id": MANUAL, "path": COMPUTED, "cursor": {"start_line": 141}}),
        )
        .await;
    assert_eq!(r.ok()["applied_range"]["start_line"], 141);
    let r = k
        .call(
            "manual_scan",
            json!({"manual_id": MANUAL, "path": COMPUTED}),
        )
        .await;
    assert_eq!(r.ok()["applied_range"]["start_line"], 1);
}

#[tokio::test]
async fn manual_scan_cursor_accepts_a_number_or_string_char_offset() {
    let (f, k) = kura().await;
    let off = 5000;
    let object = k
        .call(
            "manual_scan",
            json!({"manual_id": MANUAL, "path": COMPUTED, "cursor": {"char_offset": off}}),
        )
        .await;
    let number = k
        .call(
            "manual_scan",
            json!({"manual_id": MANUAL, "path": COMPUTED, "cursor": off}),
        )
        .await;
    let string = k
        .call(
            "manual_scan",
            json!({"manual_id": MANUAL, "path": COMPUTED, "cursor": off.to_string()}),
        )
        .await;
    let head: String = std::fs::read_to_string(f.manuals().join(MANUAL).join(COMPUTED))
        .unwrap()
        .chars()
        .skip(off)
        .collect();
    assert_eq!(object.ok()["text"], head);
    assert_eq!(object.ok()["text"], number.ok()["text"]);
    assert_eq!(object.ok()["text"], string.ok()["text"]);
    assert_eq!(
        k.call(
            "manual_scan",
            json!({"manual_id": MANUAL, "path": COMPUTED, "cursor": "abc"})
        )
        .await
        .code(),
        "invalid_parameter"
    );
}

#[tokio::test]
async fn manual_scan_start_line_within_the_file() {
    let (_f, k) = kura().await;
    for args in [
        json!({"start_line": 0}),
        json!({"start_line": 100000}),
        json!({"cursor": {"start_line": 100000}}),
        json!({"start_line": true}),
    ] {
        let mut a = args.clone();
        a["manual_id"] = json!(MANUAL);
        a["path"] = json!(COMPUTED);
        assert_eq!(
            k.call("manual_scan", a).await.code(),
            "invalid_parameter",
            "{args}"
        );
    }
}

#[tokio::test]
async fn manual_scan_max_chars_is_fixed_at_12000_and_resumes_exactly() {
    let (f, k) = kura().await;
    let want =
        std::fs::read_to_string(f.manuals().join(MANUAL).join("api/application.md")).unwrap();
    let mut got = String::new();
    let mut args = json!({"manual_id": MANUAL, "path": "api/application.md", "max_chars": 100});
    loop {
        let r = k.call("manual_scan", args.clone()).await;
        let ok = r.ok().clone();
        assert_eq!(ok["applied"]["max_chars"], 12000);
        got.push_str(ok["text"].as_str().unwrap());
        if ok["eof"] == true {
            break;
        }
        args = json!({"manual_id": MANUAL, "path": "api/application.md", "cursor": ok["next_cursor"]["char_offset"]});
    }
    assert_eq!(got, want);
}

#[tokio::test]
async fn manual_tools_are_listed_only_with_a_manuals_root() {
    let f = Fixture::new();
    let without = f.start().await;
    assert!(
        without
            .tools()
            .await
            .iter()
            .all(|t| !t.name.starts_with("manual_"))
    );
    let with = f.start_with_manuals(&[]).await;
    let names: Vec<String> = with
        .tools()
        .await
        .iter()
        .map(|t| t.name.to_string())
        .collect();
    for t in ["manual_ls", "manual_toc", "manual_read", "manual_scan"] {
        assert!(names.contains(&t.to_string()), "{t}");
    }
}
