//! Attacks on the roots: every test checks the refusal code and that the
//! canary folder beside the vault was never read, changed or added to.

use kura_tests::{CANARY, Fixture, Kura};
use serde_json::{Value, json};

async fn kura() -> (Fixture, Kura) {
    let f = Fixture::new();
    let k = f.start().await;
    (f, k)
}

/// Try every read and write tool on `path`; none may succeed or leak.
async fn hammer(f: &Fixture, k: &Kura, path: &str, code: &str) {
    let calls: Vec<(&str, Value)> = vec![
        ("vault_read", json!({"path": path, "full": true})),
        ("vault_scan", json!({"path": path})),
        ("vault_ls", json!({"path": path})),
        ("vault_create", json!({"path": path, "content": "pwned"})),
        (
            "vault_write",
            json!({"path": path, "content": "pwned", "mode": "overwrite"}),
        ),
        (
            "vault_write",
            json!({"path": path, "content": "pwned", "mode": "append"}),
        ),
        (
            "vault_replace",
            json!({"path": path, "find": "CANARY", "replace": "pwned"}),
        ),
    ];
    for (tool, args) in calls {
        let r = k.call(tool, args).await;
        assert!(r.is_error, "{tool} {path} succeeded: {}", r.body);
        assert_eq!(r.code(), code, "{tool} {path}");
        assert!(
            !r.body.to_string().contains("CANARY-SECRET"),
            "{tool} leaked the canary"
        );
        assert!(!r.text.contains("CANARY-SECRET"));
    }
    f.assert_canary_untouched();
}

#[tokio::test]
async fn dotdot_traversal_is_out_of_scope() {
    let (f, k) = kura().await;
    for p in [
        "../outside/canary.txt",
        "notes/../../outside/canary.txt",
        "./../outside/canary.txt",
    ] {
        hammer(&f, &k, p, "out_of_scope").await;
    }
}

#[tokio::test]
async fn absolute_path_is_invalid_path() {
    let (f, k) = kura().await;
    let abs = f.outside().join("canary.txt").display().to_string();
    hammer(&f, &k, &abs, "invalid_path").await;
    hammer(&f, &k, "/etc/passwd", "invalid_path").await;
}

#[tokio::test]
async fn backslash_traversal_is_invalid_path() {
    let (f, k) = kura().await;
    hammer(&f, &k, "..\\outside\\canary.txt", "invalid_path").await;
    hammer(&f, &k, "notes\\..\\..\\outside\\canary.txt", "invalid_path").await;
}

#[tokio::test]
async fn nul_and_control_characters_are_invalid_path() {
    let (f, k) = kura().await;
    hammer(
        &f,
        &k,
        "notes/welcome.md\u{0}../../outside/canary.txt",
        "invalid_path",
    )
    .await;
    hammer(&f, &k, "notes/\u{1b}[2J.md", "invalid_path").await;
}

#[tokio::test]
async fn drive_letter_is_invalid_path() {
    let (f, k) = kura().await;
    hammer(&f, &k, "C:/outside/canary.txt", "invalid_path").await;
}

#[tokio::test]
async fn fullwidth_and_percent_encoded_dots_are_plain_names() {
    let (f, k) = kura().await;
    // No NFKC and no percent-decoding of paths: these name (missing) files
    // inside the vault, so reads are not_found and nothing leaves the root.
    for p in [
        "．．/outside/canary.txt",
        "%2e%2e/outside/canary.txt",
        "..%2foutside%2fcanary.txt",
    ] {
        let r = k.call("vault_read", json!({"path": p, "full": true})).await;
        assert_eq!(r.code(), "not_found", "{p}");
    }
    f.assert_canary_untouched();
}

#[tokio::test]
async fn symlink_escape_cve_2025_53109() {
    // An absolute symlink inside the vault pointing at the canary.
    let (f, k) = kura().await;
    std::os::unix::fs::symlink(
        f.outside().join("canary.txt"),
        f.vault().join("notes/leak.md"),
    )
    .unwrap();
    hammer(&f, &k, "notes/leak.md", "out_of_scope").await;
    let r = k
        .call("vault_search", json!({"query": "CANARY", "mode": "plain"}))
        .await;
    assert_eq!(r.ok()["results"], json!([]));
}

#[tokio::test]
async fn relative_symlink_escape() {
    let (f, k) = kura().await;
    std::os::unix::fs::symlink(
        "../../outside/canary.txt",
        f.vault().join("notes/rel-leak.md"),
    )
    .unwrap();
    hammer(&f, &k, "notes/rel-leak.md", "out_of_scope").await;
}

#[tokio::test]
async fn symlinked_parent_folder_escape_cve_2025_53110() {
    let (f, k) = kura().await;
    std::os::unix::fs::symlink(f.outside(), f.vault().join("notes/out")).unwrap();
    hammer(&f, &k, "notes/out/canary.txt", "out_of_scope").await;
    hammer(&f, &k, "notes/out/new-file.md", "out_of_scope").await;
    let r = k
        .call(
            "vault_search",
            json!({"query": "CANARY", "mode": "plain", "relative_dir": "notes"}),
        )
        .await;
    assert_eq!(r.ok()["results"], json!([]));
}

#[tokio::test]
async fn dangling_symlink_on_create_is_refused() {
    let (f, k) = kura().await;
    std::os::unix::fs::symlink(
        f.outside().join("created.md"),
        f.vault().join("notes/dangling.md"),
    )
    .unwrap();
    let r = k
        .call(
            "vault_create",
            json!({"path": "notes/dangling.md", "content": "pwned"}),
        )
        .await;
    assert_eq!(r.code(), "out_of_scope");
    std::os::unix::fs::symlink(
        "nowhere-inside.md",
        f.vault().join("notes/dangling-inside.md"),
    )
    .unwrap();
    let r = k
        .call(
            "vault_create",
            json!({"path": "notes/dangling-inside.md", "content": "x"}),
        )
        .await;
    assert_eq!(r.code(), "forbidden");
    assert!(!f.vault().join("notes/nowhere-inside.md").exists());
    f.assert_canary_untouched();
}

#[tokio::test]
async fn write_through_in_root_symlink_is_refused() {
    let (f, k) = kura().await;
    std::os::unix::fs::symlink("welcome.md", f.vault().join("notes/alias.md")).unwrap();
    let before = f.read("notes/welcome.md");
    // Reading through a link that stays inside the root is allowed...
    let r = k
        .call(
            "vault_read",
            json!({"path": "notes/alias.md", "full": true}),
        )
        .await;
    assert_eq!(r.ok()["text"], before);
    // ...writing through it is not.
    for (tool, args) in [
        (
            "vault_write",
            json!({"path": "notes/alias.md", "content": "x", "mode": "overwrite"}),
        ),
        (
            "vault_write",
            json!({"path": "notes/alias.md", "content": "x", "mode": "append"}),
        ),
        (
            "vault_replace",
            json!({"path": "notes/alias.md", "find": "Welcome", "replace": "x"}),
        ),
        (
            "vault_create",
            json!({"path": "notes/alias.md", "content": "x"}),
        ),
    ] {
        assert_eq!(k.call(tool, args).await.code(), "forbidden", "{tool}");
    }
    assert_eq!(f.read("notes/welcome.md"), before);
    assert!(
        std::fs::symlink_metadata(f.vault().join("notes/alias.md"))
            .unwrap()
            .file_type()
            .is_symlink()
    );
}

#[tokio::test]
async fn writes_leave_no_temporary_files() {
    let (f, k) = kura().await;
    k.call("vault_create", json!({"path": "t/a.md", "content": "1"}))
        .await
        .ok();
    k.call(
        "vault_write",
        json!({"path": "t/a.md", "content": "2", "mode": "append"}),
    )
    .await
    .ok();
    k.call(
        "vault_replace",
        json!({"path": "t/a.md", "find": "1", "replace": "3"}),
    )
    .await
    .ok();
    let names: Vec<_> = std::fs::read_dir(f.vault().join("t"))
        .unwrap()
        .map(|e| e.unwrap().file_name())
        .collect();
    assert_eq!(names, ["a.md"]);
    assert_eq!(f.read("t/a.md"), "32");
    assert_eq!(
        CANARY.len(),
        std::fs::read(f.outside().join("canary.txt")).unwrap().len()
    );
}
