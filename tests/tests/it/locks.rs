//! Locked notes (issue 54): a note whose front matter says `locked: true`,
//! or any file under `locked_folders`, is never created over, changed,
//! moved or deleted by any tool — vault, bridge, vibe and undo alike — and
//! a move whose link rewrites reach a locked note is refused whole.

use kura_tests::{Fixture, Kura};
use rmcp::service::ClientLifecycleMode;
use serde_json::json;

const LOCKED: &str = "---\nlocked: true\n---\n# Mine\nSee [[backup-guide]].\n";

async fn start(f: &Fixture) -> Kura {
    f.write("notes/mine.md", LOCKED);
    f.write("journal/2024.md", "# A year\n");
    let manuals = f.manuals().display().to_string();
    let args = f.vibe_args(&[
        "--manuals-root",
        &manuals,
        "--set",
        "locked_folders=journal,webapp/references",
    ]);
    Kura::start(args, ClientLifecycleMode::Initialize).await
}

fn assert_locked(r: &kura_tests::Reply, what: &str) {
    assert!(r.is_error, "{what}: {}", r.body);
    assert_eq!(
        r.body["error"]["details"]["reason"], "locked",
        "{what}: {}",
        r.body
    );
}

#[tokio::test]
async fn a_locked_note_is_never_changed_moved_or_deleted() {
    let f = Fixture::new();
    let k = start(&f).await;
    let calls = [
        (
            "vault_write",
            json!({"path": "notes/mine.md", "content": "x", "mode": "overwrite"}),
        ),
        (
            "vault_write",
            json!({"path": "notes/mine.md", "content": "x", "mode": "append"}),
        ),
        (
            "vault_replace",
            json!({"path": "notes/mine.md", "find": "Mine", "replace": "Yours"}),
        ),
        (
            "vault_edit",
            json!({"path": "notes/mine.md", "heading": "Mine", "mode": "append", "content": "x"}),
        ),
        (
            "vault_move",
            json!({"from": "notes/mine.md", "to": "notes/yours.md"}),
        ),
        ("vault_delete", json!({"path": "notes/mine.md"})),
        ("vault_delete", json!({"path": "notes"})),
        (
            "bridge_copy_section",
            json!({"from_ref": {"manual_id": "vue-docs-ja", "path": "guide/essentials/computed.md", "start_line": 1}, "to_path": "notes/mine.md", "mode": "overwrite"}),
        ),
    ];
    for (tool, args) in calls {
        let r = k.call(tool, args.clone()).await;
        assert_locked(&r, &format!("{tool} {args}"));
        assert!(r.text.contains("locked: true"), "{tool}: {}", r.text);
        assert_eq!(f.read("notes/mine.md"), LOCKED, "{tool} {args}");
    }
    // The folder delete was refused whole: its other notes are there.
    assert!(f.vault().join("notes/welcome.md").exists());
    k.stop().await;
}

#[tokio::test]
async fn a_move_that_would_rewrite_a_link_in_a_locked_note_is_refused_whole() {
    let f = Fixture::new();
    f.write("notes/other.md", "[[backup-guide]]\n");
    let k = start(&f).await;
    let r = k
        .call(
            "vault_move",
            json!({"from": "research/backup-guide.md", "to": "guides/backup-guide-2.md"}),
        )
        .await;
    assert_locked(&r, "move");
    assert!(
        f.vault().join("research/backup-guide.md").exists(),
        "not moved"
    );
    assert!(!f.vault().join("guides").exists());
    assert_eq!(
        f.read("notes/other.md"),
        "[[backup-guide]]\n",
        "no link rewritten"
    );
    assert_eq!(f.read("notes/mine.md"), LOCKED);
    k.stop().await;
}

#[tokio::test]
async fn nothing_is_created_changed_or_removed_under_a_locked_folder() {
    let f = Fixture::new();
    let k = start(&f).await;
    let r = k
        .call(
            "vault_create",
            json!({"path": "journal/new.md", "content": "x"}),
        )
        .await;
    assert_locked(&r, "create under a locked folder");
    assert!(r.text.contains("locked_folders"), "{}", r.text);
    let r = k
        .call(
            "vault_move",
            json!({"from": "notes/welcome.md", "to": "journal/welcome.md"}),
        )
        .await;
    assert_locked(&r, "move into a locked folder");
    assert!(f.vault().join("notes/welcome.md").exists());
    let r = k
        .call(
            "vault_write",
            json!({"path": "journal/2024.md", "content": "x", "mode": "overwrite"}),
        )
        .await;
    assert_locked(&r, "write in a locked folder");
    // vibe: the same rule, in seed 002's codes.
    let before = std::fs::read(f.vibe().join("webapp/references/auth-notes.md")).unwrap();
    let r = k
        .call(
            "update_doc",
            json!({"project": "webapp", "folder": "references", "filename": "auth-notes.md", "content": "x"}),
        )
        .await;
    assert!(r.is_error, "{}", r.body);
    assert!(r.text.contains("locked"), "{}", r.text);
    assert_eq!(
        std::fs::read(f.vibe().join("webapp/references/auth-notes.md")).unwrap(),
        before
    );
    // A new note may be created locked, and is then locked.
    let r = k
        .call(
            "vault_create",
            json!({"path": "notes/new.md", "content": LOCKED}),
        )
        .await;
    assert!(!r.is_error, "{}", r.body);
    let r = k
        .call(
            "vault_write",
            json!({"path": "notes/new.md", "content": "x", "mode": "overwrite"}),
        )
        .await;
    assert_locked(&r, "the new locked note");
    k.stop().await;
}

#[tokio::test]
async fn a_locked_folder_is_never_removed_or_moved_even_when_empty() {
    let f = Fixture::new();
    f.write("notes/inbox/today.md", "# Today\n");
    std::fs::create_dir_all(f.vault().join("notes/keep/2025")).unwrap();
    let args = f.vibe_args(&["--set", "locked_folders=notes/keep"]);
    let k = Kura::start(args, ClientLifecycleMode::Initialize).await;
    let calls = [
        ("vault_delete", json!({"path": "notes"})),
        ("vault_move", json!({"from": "notes", "to": "archive"})),
    ];
    for (tool, args) in calls {
        let r = k.call(tool, args.clone()).await;
        assert_locked(&r, &format!("{tool} {args}"));
        assert!(r.text.contains("notes/keep"), "{tool}: {}", r.text);
        // Refused whole: the locked folder, and everything else, stays.
        assert!(f.vault().join("notes/keep/2025").is_dir(), "{tool}");
        assert_eq!(f.read("notes/inbox/today.md"), "# Today\n", "{tool}");
        assert!(f.vault().join("notes/welcome.md").exists(), "{tool}");
        assert!(!f.vault().join("archive").exists(), "{tool}");
    }
    // Nor is one made under it, even empty (an undo or a move making a
    // folder): the move of a folder holding an empty one into it.
    std::fs::create_dir_all(f.vault().join("drafts/empty")).unwrap();
    f.write("drafts/a.md", "a\n");
    let r = k
        .call(
            "vault_move",
            json!({"from": "drafts", "to": "notes/keep/drafts"}),
        )
        .await;
    assert_locked(&r, "a move into a locked folder");
    assert!(!f.vault().join("notes/keep/drafts").exists());
    assert!(f.vault().join("drafts/empty").is_dir());
    k.stop().await;
}
