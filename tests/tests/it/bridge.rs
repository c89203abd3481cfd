//! bridge_copy_section and bridge_copy_file (seed 003) against the real binary
//! over stdio, with the manual fixtures and the demo vault: one test per
//! fixed rule, the write policy on the destination, and the copied text
//! compared with what manual_read returns for the same reference.

use kura_tests::{Fixture, Kura};
use serde_json::{Value, json};

const MANUAL: &str = "vue-docs-ja";
const COMPUTED: &str = "guide/essentials/computed.md";
const FUNDING: &str = "public/funding.json";
const APPLICATION: &str = "api/application.md";

async fn kura(extra: &[&str]) -> (Fixture, Kura) {
    let f = Fixture::new();
    let k = f.start_with_manuals(extra).await;
    (f, k)
}

fn section_ref(line: u64) -> Value {
    json!({"manual_id": MANUAL, "path": COMPUTED, "start_line": line})
}

#[tokio::test]
async fn bridge_tools_are_served_only_with_both_roots() {
    let f = Fixture::new();
    let k = f.start().await;
    let names: Vec<String> = k.tools().await.iter().map(|t| t.name.to_string()).collect();
    assert!(!names.iter().any(|n| n.starts_with("bridge_")));
    k.stop().await;
    let k = f.start_with_manuals(&[]).await;
    let tools = k.tools().await;
    for n in ["bridge_copy_section", "bridge_copy_file"] {
        let t = tools.iter().find(|t| t.name == n).unwrap();
        let a = t.annotations.as_ref().unwrap();
        assert_eq!(
            // MCP's default where a hint is left out: destructive.
            (a.read_only_hint, a.destructive_hint.unwrap_or(true)),
            (Some(false), true),
            "{n}"
        );
        assert!(t.output_schema.is_some());
    }
}

#[tokio::test]
async fn copy_section_writes_exactly_what_manual_read_returns_and_returns_no_text() {
    let (f, k) = kura(&[]).await;
    let read = k
        .call("manual_read", json!({"ref": section_ref(150)}))
        .await
        .ok()
        .clone();
    let r = k
        .call(
            "bridge_copy_section",
            json!({"from_ref": section_ref(150), "to_path": "notes/computed.md", "mode": "overwrite"}),
        )
        .await;
    let v = r.ok();
    let copied = f.read("notes/computed.md");
    assert_eq!(copied, read["text"].as_str().unwrap());
    assert_eq!(v["written_path"], "notes/computed.md");
    assert_eq!(v["written_bytes"], copied.len());
    assert_eq!(v["written_sections"], 1);
    assert_eq!(v["truncated"], false);
    assert_eq!(v["applied"]["source_start_line"], 141);
    assert_eq!(v["applied"]["created"], true);
    // Metadata only: no field carries the text.
    let keys: Vec<&String> = v.as_object().unwrap().keys().collect();
    assert_eq!(
        keys,
        [
            "applied",
            "truncated",
            "written_bytes",
            "written_path",
            "written_sections"
        ]
    );
    assert!(!r.text.contains("算出"), "{}", r.text);
}

#[tokio::test]
async fn append_adds_the_section_on_a_line_of_its_own() {
    let (f, k) = kura(&[]).await;
    f.write("notes/collect.md", "my notes");
    let v = k
        .call(
            "bridge_copy_section",
            json!({"from_ref": section_ref(1), "to_path": "notes/collect.md", "mode": "append"}),
        )
        .await
        .ok()
        .clone();
    let text = f.read("notes/collect.md");
    assert!(text.starts_with("my notes\n# 算出プロパティ"), "{text}");
    assert_eq!(v["written_bytes"], text.len() - "my notes".len());
    assert_eq!(v["applied"]["created"], false);
}

#[tokio::test]
async fn json_is_copied_as_a_whole_file() {
    let (f, k) = kura(&[]).await;
    let original = std::fs::read_to_string(f.manuals().join(MANUAL).join(FUNDING)).unwrap();
    let v = k
        .call(
            "bridge_copy_section",
            json!({"from_ref": {"manual_id": MANUAL, "path": FUNDING}, "to_path": "refs/funding.json", "mode": "overwrite"}),
        )
        .await
        .ok()
        .clone();
    assert_eq!(v["applied"]["scope"], "file");
    assert_eq!(v["written_sections"], 1);
    assert_eq!(f.read("refs/funding.json"), original);
    // bridge_copy_file: .json without allow_file.
    let v = k
        .call(
            "bridge_copy_file",
            json!({"from_path": FUNDING, "manual_id": MANUAL, "to_path": "refs/funding2.json", "mode": "overwrite"}),
        )
        .await
        .ok()
        .clone();
    assert_eq!(f.read("refs/funding2.json"), original);
    assert_eq!(v["written_bytes"], original.len());
    let keys: Vec<&String> = v.as_object().unwrap().keys().collect();
    assert_eq!(
        keys,
        ["applied", "truncated", "written_bytes", "written_path"]
    );
}

#[tokio::test]
async fn md_file_copy_needs_allow_file_scope_and_allow_file() {
    let copy = |allow: Option<bool>| {
        let mut a = json!({"from_path": APPLICATION, "manual_id": MANUAL, "to_path": "n/whole.md", "mode": "overwrite"});
        if let Some(b) = allow {
            a["limits"] = json!({"allow_file": b});
        }
        a
    };
    let (f, k) = kura(&[]).await;
    for allow in [None, Some(false), Some(true)] {
        let r = k.call("bridge_copy_file", copy(allow)).await;
        assert_eq!(
            r.code(),
            "forbidden",
            "ALLOW_FILE_SCOPE off, allow_file {allow:?}"
        );
    }
    assert!(!f.vault().join("n/whole.md").exists(), "nothing written");
    k.stop().await;
    let (f, k) = kura(&["--set", "allow_file_scope=true"]).await;
    for allow in [None, Some(false)] {
        let r = k.call("bridge_copy_file", copy(allow)).await;
        assert_eq!(r.code(), "forbidden", "allow_file {allow:?}");
    }
    let v = k
        .call("bridge_copy_file", copy(Some(true)))
        .await
        .ok()
        .clone();
    let read = k
        .call(
            "manual_read",
            json!({"ref": {"manual_id": MANUAL, "path": APPLICATION}, "scope": "file", "allow_file": true}),
        )
        .await
        .ok()
        .clone();
    assert_eq!(f.read("n/whole.md"), read["text"].as_str().unwrap());
    // 14018 characters are more than the 12000-character default: cut, and said so.
    assert_eq!(v["truncated"], true);
    assert_eq!(v["applied"]["max_chars"], 12000);
    // A larger limit copies it all.
    let mut a = copy(Some(true));
    a["limits"]["max_chars"] = json!(100000);
    a["to_path"] = json!("n/whole2.md");
    let v = k.call("bridge_copy_file", a).await.ok().clone();
    assert_eq!(v["truncated"], false);
    let original = std::fs::read_to_string(f.manuals().join(MANUAL).join(APPLICATION)).unwrap();
    assert_eq!(f.read("n/whole2.md"), original);
}

#[tokio::test]
async fn limits_have_safe_defaults_and_hard_caps() {
    let (f, k) = kura(&[]).await;
    let v = k
        .call(
            "bridge_copy_section",
            json!({"from_ref": section_ref(150), "to_path": "n/a.md", "mode": "overwrite",
                   "limits": {"max_chars": 40, "max_sections": 5}}),
        )
        .await
        .ok()
        .clone();
    assert_eq!(v["truncated"], true);
    assert_eq!(f.read("n/a.md").chars().count(), 40);
    assert_eq!(
        (&v["applied"]["max_sections"], &v["written_sections"]),
        (&json!(1), &json!(1))
    );
    let v = k
        .call(
            "bridge_copy_section",
            json!({"from_ref": section_ref(150), "to_path": "n/b.md", "mode": "overwrite",
                   "limits": {"max_chars": 99999999}}),
        )
        .await
        .ok()
        .clone();
    assert_eq!(v["applied"]["max_chars"], 200000);
    for bad in [
        json!({"max_chars": 0}),
        json!({"max_sections": 0}),
        json!({"max_chars": "10"}),
        json!({"allow_file": "yes"}),
        json!("big"),
    ] {
        let r = k
            .call(
                "bridge_copy_section",
                json!({"from_ref": section_ref(1), "to_path": "n/c.md", "mode": "overwrite", "limits": bad}),
            )
            .await;
        assert_eq!(r.code(), "invalid_parameter", "{bad}");
    }
}

#[tokio::test]
async fn destination_follows_the_vault_write_policy() {
    let (f, k) = kura(&[]).await;
    let copy =
        |to: &str, mode: &str| json!({"from_ref": section_ref(1), "to_path": to, "mode": mode});
    // .system/ is reserved.
    for mode in ["overwrite", "append"] {
        let r = k
            .call("bridge_copy_section", copy(".system/x.md", mode))
            .await;
        assert_eq!(r.code(), "forbidden");
    }
    // daily/: append only, to a note that exists, with a real date.
    let before = f.read("daily/2026-01-05.md");
    let r = k
        .call(
            "bridge_copy_section",
            copy("daily/2026-01-05.md", "overwrite"),
        )
        .await;
    assert_eq!(r.code(), "forbidden");
    assert_eq!(f.read("daily/2026-01-05.md"), before);
    let r = k
        .call("bridge_copy_section", copy("daily/2026-01-06.md", "append"))
        .await;
    assert_eq!(
        r.code(),
        "conflict",
        "the first write of a day is vault_create's"
    );
    let r = k
        .call("bridge_copy_section", copy("daily/notes.md", "append"))
        .await;
    assert_eq!(r.code(), "forbidden");
    k.call("bridge_copy_section", copy("daily/2026-01-05.md", "append"))
        .await
        .ok();
    assert!(f.read("daily/2026-01-05.md").starts_with(&before));
    assert!(!f.vault().join(".system/x.md").exists());
    assert!(!f.vault().join("daily/2026-01-06.md").exists());
}

#[tokio::test]
async fn paths_outside_either_root_are_refused() {
    let (f, k) = kura(&[]).await;
    let r = k
        .call(
            "bridge_copy_section",
            json!({"from_ref": {"manual_id": MANUAL, "path": "../../outside/canary.txt"}, "to_path": "n/x.md", "mode": "overwrite"}),
        )
        .await;
    assert!(
        ["out_of_scope", "invalid_parameter"].contains(&r.code()),
        "{}",
        r.code()
    );
    let r = k
        .call(
            "bridge_copy_file",
            json!({"from_path": "../../outside/canary.md", "manual_id": MANUAL, "to_path": "n/x.md", "mode": "overwrite"}),
        )
        .await;
    assert_eq!(r.code(), "out_of_scope");
    let r = k
        .call(
            "bridge_copy_section",
            json!({"from_ref": section_ref(1), "to_path": "../outside/stolen.md", "mode": "overwrite"}),
        )
        .await;
    assert_eq!(r.code(), "out_of_scope");
    let r = k
        .call(
            "bridge_copy_section",
            json!({"from_ref": section_ref(1), "to_path": "/etc/x.md", "mode": "overwrite"}),
        )
        .await;
    assert_eq!(r.code(), "invalid_path");
    f.assert_canary_untouched();
}

#[tokio::test]
async fn bad_input_gets_the_spec_codes() {
    let (_f, k) = kura(&[]).await;
    let base = json!({"from_ref": section_ref(1), "to_path": "n/x.md", "mode": "overwrite"});
    let with = |key: &str, v: Value| {
        let mut a = base.clone();
        if v.is_null() {
            a.as_object_mut().unwrap().remove(key);
        } else {
            a[key] = v;
        }
        a
    };
    for (args, code) in [
        (with("mode", json!("replace")), "invalid_parameter"),
        (with("mode", Value::Null), "invalid_parameter"),
        (with("from_ref", Value::Null), "invalid_parameter"),
        (with("from_ref", json!("computed.md")), "invalid_parameter"),
        (with("to_path", Value::Null), "invalid_parameter"),
        (
            with("from_ref", json!({"manual_id": "nope", "path": COMPUTED})),
            "not_found",
        ),
        (
            with(
                "from_ref",
                json!({"manual_id": MANUAL, "path": "guide/missing.md"}),
            ),
            "not_found",
        ),
        (
            with(
                "from_ref",
                json!({"manual_id": MANUAL, "path": COMPUTED, "start_line": 9999}),
            ),
            "invalid_parameter",
        ),
        (
            with(
                "from_ref",
                json!({"manual_id": MANUAL, "path": COMPUTED, "scope": "snippet"}),
            ),
            "invalid_scope",
        ),
        (
            with(
                "from_ref",
                json!({"manual_id": MANUAL, "path": FUNDING, "scope": "section"}),
            ),
            "invalid_scope",
        ),
        (
            with(
                "from_ref",
                json!({"manual_id": MANUAL, "path": COMPUTED, "scope": "file"}),
            ),
            "forbidden",
        ),
    ] {
        let r = k.call("bridge_copy_section", args.clone()).await;
        assert_eq!(r.code(), code, "{args}");
    }
    let r = k
        .call(
            "bridge_copy_file",
            json!({"from_path": COMPUTED, "to_path": "n/x.md", "mode": "overwrite"}),
        )
        .await;
    assert_eq!(r.code(), "invalid_parameter", "manual_id is required");
    let r = k
        .call(
            "bridge_copy_file",
            json!({"from_path": "guide/none.json", "manual_id": MANUAL, "to_path": "n/x.md", "mode": "overwrite"}),
        )
        .await;
    assert_eq!(r.code(), "not_found");
    let r = k
        .call(
            "bridge_copy_file",
            json!({"from_path": "LICENSE.txt", "manual_id": MANUAL, "to_path": "n/x.md", "mode": "overwrite"}),
        )
        .await;
    assert_eq!(r.code(), "invalid_parameter");
    assert_eq!(r.body["error"]["details"]["parameter"], "from_path");
}

#[tokio::test]
async fn a_copy_is_found_by_the_next_vault_find() {
    let (_f, k) = kura(&[]).await;
    k.call(
        "bridge_copy_section",
        json!({"from_ref": section_ref(262), "to_path": "notes/previous.md", "mode": "overwrite"}),
    )
    .await
    .ok();
    let v = k
        .call("vault_find", json!({"query": "前回の値を取得する"}))
        .await
        .ok()
        .clone();
    assert_eq!(
        v["next_actions"][0]["params"]["path"], "notes/previous.md",
        "{v:#}"
    );
}

#[tokio::test]
async fn copying_does_not_count_as_reading_the_section() {
    let (_f, k) = kura(&[]).await;
    k.call(
        "bridge_copy_section",
        json!({"from_ref": section_ref(150), "to_path": "n/a.md", "mode": "overwrite"}),
    )
    .await
    .ok();
    // The first manual_read of the section is a read, not 004's "asked again" scan.
    let v = k
        .call("manual_read", json!({"ref": section_ref(150)}))
        .await
        .ok()
        .clone();
    assert_eq!(v["applied"]["mode"], "read");
}
