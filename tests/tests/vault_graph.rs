//! The vault as a graph, against the real binary over stdio: moves that
//! rewrite links (and survive a kill at every step), deletion to the trash
//! and its restore, the write policy on moves, and links answered from the
//! index after external edits.

use std::collections::BTreeMap;
use std::path::Path;

use kura_tests::{Fixture, Kura, command};
use rmcp::service::ClientLifecycleMode;
use serde_json::json;

/// Notes that link to the demo vault's research notes in every form.
fn add_linking_notes(f: &Fixture) {
    f.write(
        "notes/links.md",
        "# Links\n[[backup-guide]] and [[backup-guide#Restore|the drills]] and ![[backup-summary]].\n\
         [draft](../research/backup-draft.md) and [guide](<../research/backup-guide.md>).\n\
         `[[backup-guide]]` is code, [[nowhere]] is broken.\n",
    );
    f.write(
        "projects/kura/plan.md",
        "---\nrelated: \"[[backup-summary]]\"\ntags: [plan]\n---\nSee [[research/backup-draft]] and [[welcome]].\n",
    );
    f.write(
        "daily/2026-01-06.md",
        "# 2026-01-06\nRead [[backup-guide]] today.\n",
    );
    f.write(
        "research/index.md",
        "# Research\n[[backup-guide]], [summary](backup-summary.md), [[../notes/links|links]]\n",
    );
}

/// Every file of the vault (kura's temporary files aside), with its text.
fn snapshot(root: &Path) -> BTreeMap<String, String> {
    let mut out = BTreeMap::new();
    let mut stack = vec![root.to_path_buf()];
    while let Some(dir) = stack.pop() {
        for e in std::fs::read_dir(&dir).unwrap() {
            let e = e.unwrap();
            let p = e.path();
            let name = e.file_name().into_string().unwrap();
            if e.file_type().unwrap().is_dir() {
                stack.push(p);
            } else if !name.starts_with(".kura-tmp-") {
                let rel = p.strip_prefix(root).unwrap().to_string_lossy().into_owned();
                out.insert(rel, std::fs::read_to_string(&p).unwrap());
            }
        }
    }
    out
}

/// The folders of the vault, for checking that a move left none empty.
fn folders(root: &Path) -> Vec<String> {
    let mut out = Vec::new();
    let mut stack = vec![root.to_path_buf()];
    while let Some(dir) = stack.pop() {
        for e in std::fs::read_dir(&dir).unwrap() {
            let e = e.unwrap();
            if e.file_type().unwrap().is_dir() {
                out.push(
                    e.path()
                        .strip_prefix(root)
                        .unwrap()
                        .to_string_lossy()
                        .into_owned(),
                );
                stack.push(e.path());
            }
        }
    }
    out.sort();
    out
}

const FOLDER_MOVE: (&str, &str) = ("research", "archive/2025 research");

#[tokio::test]
async fn a_move_rewrites_every_link_to_what_moved_in_its_own_form() {
    let f = Fixture::new();
    add_linking_notes(&f);
    let k = f.start().await;
    let r = k
        .call(
            "vault_move",
            json!({"from": FOLDER_MOVE.0, "to": FOLDER_MOVE.1}),
        )
        .await;
    let out = r.ok();
    assert_eq!(out["moved"].as_array().unwrap().len(), 4);
    assert_eq!(
        f.read("notes/links.md"),
        "# Links\n[[backup-guide]] and [[backup-guide#Restore|the drills]] and ![[backup-summary]].\n\
         [draft](../archive/2025%20research/backup-draft.md) and [guide](<../archive/2025 research/backup-guide.md>).\n\
         `[[backup-guide]]` is code, [[nowhere]] is broken.\n",
        "names that stay unique are kept; relative paths follow"
    );
    assert_eq!(
        f.read("projects/kura/plan.md"),
        "---\nrelated: \"[[backup-summary]]\"\ntags: [plan]\n---\nSee [[archive/2025 research/backup-draft]] and [[welcome]].\n"
    );
    assert_eq!(
        f.read("daily/2026-01-06.md"),
        "# 2026-01-06\nRead [[backup-guide]] today.\n",
        "a daily note's link needed no change here"
    );
    assert_eq!(
        f.read("archive/2025 research/index.md"),
        "# Research\n[[backup-guide]], [summary](backup-summary.md), [[../../notes/links|links]]\n",
        "a moved note's own relative links follow it"
    );
    assert!(
        !f.vault().join("research").exists(),
        "the emptied folder is gone"
    );
    // The graph follows at once: backlinks of the moved note.
    let links = k
        .call(
            "vault_links",
            json!({"path": "archive/2025 research/backup-guide.md"}),
        )
        .await;
    let from: Vec<&str> = links.ok()["backlinks"]
        .as_array()
        .unwrap()
        .iter()
        .map(|b| b["path"].as_str().unwrap())
        .collect();
    assert_eq!(
        from,
        [
            "archive/2025 research/index.md",
            "daily/2026-01-06.md",
            "notes/links.md",
            "notes/links.md",
            "notes/links.md"
        ]
    );
    k.stop().await;
}

#[tokio::test]
async fn a_renamed_note_s_links_in_daily_notes_follow_it() {
    let f = Fixture::new();
    add_linking_notes(&f);
    let k = f.start().await;
    k.call(
        "vault_move",
        json!({"from": "research/backup-guide.md", "to": "research/Backup Guide v2.md"}),
    )
    .await
    .ok();
    assert_eq!(
        f.read("daily/2026-01-06.md"),
        "# 2026-01-06\nRead [[Backup Guide v2]] today.\n"
    );
    k.stop().await;
}

#[tokio::test]
async fn daily_notes_and_system_are_never_moved() {
    let f = Fixture::new();
    add_linking_notes(&f);
    let k = f.start().await;
    let before = snapshot(&f.vault());
    for (from, to) in [
        ("daily/2026-01-06.md", "notes/day.md"),
        ("notes/links.md", "daily/2026-02-01.md"),
        ("notes/links.md", ".system/links.md"),
        ("daily", "old-daily"),
    ] {
        let r = k.call("vault_move", json!({"from": from, "to": to})).await;
        assert_eq!(r.code(), "forbidden", "{from} -> {to}");
    }
    let r = k
        .call("vault_delete", json!({"path": "daily/2026-01-06.md"}))
        .await;
    assert_eq!(r.code(), "forbidden");
    let r = k
        .call(
            "vault_move",
            json!({"from": "notes/links.md", "to": "notes/welcome.md"}),
        )
        .await;
    assert_eq!(r.code(), "conflict");
    assert_eq!(snapshot(&f.vault()), before, "nothing changed");
    k.stop().await;
}

#[tokio::test]
async fn a_deleted_note_goes_to_the_trash_and_comes_back() {
    let f = Fixture::new();
    add_linking_notes(&f);
    let k = f.start().await;
    let before = snapshot(&f.vault());
    let r = k
        .call("vault_delete", json!({"path": "research/backup-guide.md"}))
        .await;
    let out = r.ok().clone();
    assert_eq!(out["trash_path"], ".trash/research/backup-guide.md");
    // Links to it: notes/links.md (2 wikilinks + 1 markdown), the daily
    // note and research/index.md.
    assert_eq!(out["broken_links"], 5);
    // Those three, and the two that pointed nowhere already: notes/links.md
    // (`[[nowhere]]`) and research/backup-draft.md (`[[^nope]]`).
    let broken = k.call("vault_notes", json!({"only": "unresolved"})).await;
    assert_eq!(broken.ok()["total"], 4);
    let found = k
        .call("vault_search", json!({"query": "Restore", "mode": "plain"}))
        .await;
    assert!(
        found.ok()["results"]
            .as_array()
            .unwrap()
            .iter()
            .all(|r| !r["path"].as_str().unwrap().starts_with(".trash")),
        "the trash is not searched"
    );
    k.call(
        "vault_move",
        json!({"from": out["trash_path"], "to": "research/backup-guide.md"}),
    )
    .await
    .ok();
    assert_eq!(snapshot(&f.vault()), before, "restored as it was");
    assert!(!f.vault().join(".trash/research").exists());
    k.stop().await;
}

/// The move, with the server killed once `crash_after` of its steps are
/// done (None: not killed); then a server started again.
async fn move_killed_after(crash_after: Option<usize>) -> (Fixture, serde_json::Value) {
    let f = Fixture::new();
    add_linking_notes(&f);
    let mut cmd = command(&f.args(&[]));
    if let Some(n) = crash_after {
        cmd.env("KURA_FAULT_MOVE_CRASH_AFTER", n.to_string());
    }
    let k = Kura::start_command(
        cmd,
        ClientLifecycleMode::Initialize,
        std::process::Stdio::null(),
    )
    .await;
    let answer = k
        .raw(
            "vault_move",
            json!({"from": FOLDER_MOVE.0, "to": FOLDER_MOVE.1}),
        )
        .await;
    let out = match (crash_after, answer) {
        (None, Ok(r)) => r.structured_content.unwrap(),
        (Some(_), Err(_)) => json!(null), // killed: no answer
        (c, a) => panic!("crash_after {c:?}: unexpected answer {a:?}"),
    };
    k.stop().await;
    // The next start finishes what the journal holds.
    let again = f.start().await;
    again
        .call("vault_links", json!({"path": "notes/links.md"}))
        .await
        .ok();
    again.stop().await;
    (f, out)
}

#[tokio::test]
async fn a_move_killed_between_any_two_files_is_finished_at_the_next_start() {
    let (done, out) = move_killed_after(None).await;
    let expected = snapshot(&done.vault());
    let expected_folders = folders(&done.vault());
    // Its steps: each rewritten note, each rename, the emptied folder.
    let steps =
        out["rewritten"].as_array().unwrap().len() + out["moved"].as_array().unwrap().len() + 1;
    assert!(steps >= 8, "{out}");
    for n in 0..=steps {
        let (f, _) = move_killed_after(Some(n)).await;
        assert_eq!(snapshot(&f.vault()), expected, "killed after step {n}");
        assert_eq!(
            folders(&f.vault()),
            expected_folders,
            "killed after step {n}"
        );
        let journals = f.dir.path().join("state/moves");
        let left: Vec<_> = std::fs::read_dir(&journals)
            .map(|d| d.map(|e| e.unwrap().file_name()).collect())
            .unwrap_or_default();
        assert!(
            left.is_empty(),
            "the journal is gone after step {n}: {left:?}"
        );
    }
}

#[tokio::test]
async fn an_edit_under_a_heading_checks_the_hash_it_was_read_with() {
    let f = Fixture::new();
    f.write("notes/plan.md", "# Plan\n## Todo\n- a\n\n## Done\n- z\n");
    let k = f.start().await;
    let read = k
        .call("vault_read", json!({"path": "notes/plan.md", "full": true}))
        .await;
    let hash = read.ok()["hash"].as_str().unwrap().to_owned();
    let r = k
        .call(
            "vault_edit",
            json!({"path": "notes/plan.md", "heading": "Plan > Todo", "mode": "append", "content": "- b", "expected_hash": hash}),
        )
        .await;
    assert_eq!(
        (r.ok()["start_line"].as_u64(), r.ok()["end_line"].as_u64()),
        (Some(2), Some(5))
    );
    assert_eq!(
        f.read("notes/plan.md"),
        "# Plan\n## Todo\n- a\n- b\n\n## Done\n- z\n"
    );
    // The hash it was read with is stale now.
    let r = k
        .call(
            "vault_edit",
            json!({"path": "notes/plan.md", "heading": "Done", "mode": "replace", "content": "- y", "expected_hash": hash}),
        )
        .await;
    assert_eq!(r.code(), "conflict");
    assert_eq!(
        f.read("notes/plan.md"),
        "# Plan\n## Todo\n- a\n- b\n\n## Done\n- z\n"
    );
    k.stop().await;
}

#[tokio::test]
async fn a_daily_note_takes_an_edit_only_at_its_end() {
    let f = Fixture::new();
    f.write(
        "daily/2026-01-07.md",
        "# 2026-01-07\n## Morning\nm\n## Evening\ne\n",
    );
    let k = f.start().await;
    let edit = |heading: &str, mode: &str| json!({"path": "daily/2026-01-07.md", "heading": heading, "mode": mode, "content": "more"});
    for (h, m) in [
        ("Morning", "append"),
        ("Evening", "prepend"),
        ("Evening", "replace"),
    ] {
        let r = k.call("vault_edit", edit(h, m)).await;
        assert_eq!(r.code(), "forbidden", "{h} {m}");
    }
    k.call("vault_edit", edit("Evening", "append")).await.ok();
    assert_eq!(
        f.read("daily/2026-01-07.md"),
        "# 2026-01-07\n## Morning\nm\n## Evening\ne\nmore\n"
    );
    k.stop().await;
}
