//! Vault writes racing another program on the same files, in process and
//! bounded: an editor saving (atomically and in place) while vault_read
//! hashes, a program creating the very file a move is about to take. What
//! either side wrote is never lost; a refusal is a clear `conflict`.

#![allow(clippy::disallowed_methods)] // "the other program" writes with std::fs

use std::io::Write;
use std::sync::Arc;
use std::sync::atomic::{AtomicBool, Ordering};

use kura::app::App;
use kura::config::Config;
use serde_json::json;

fn start(dir: &tempfile::TempDir) -> App {
    kura_tests::copy_tree(
        &kura_tests::workspace().join("fixtures/demo/vault"),
        &dir.path().join("vault"),
    );
    let config = Config {
        vault_root: Some(dir.path().join("vault")),
        state_dir: Some(dir.path().join("state")),
        ..Config::default()
    };
    App::start(config, kura::CATALOG).expect("kura starts")
}

fn sha256(b: &[u8]) -> String {
    kura::text::sha256(b)
}

#[test]
fn vault_read_s_hash_is_of_the_text_it_returned() {
    let dir = kura_tests::scratch::folder();
    let app = start(&dir);
    let note = dir.path().join("vault/notes/race.md");
    // Each version fits vault_read's window (12,000 characters), so a
    // read is whole unless it met a half-written file.
    let versions: Vec<String> = (0..2)
        .map(|v| {
            format!(
                "# Version {v}\n{}\n",
                format!("line of version {v}\n").repeat(500)
            )
        })
        .collect();
    assert!(versions.iter().all(|v| v.len() < 12_000));
    std::fs::write(&note, &versions[0]).unwrap();
    let stop = Arc::new(AtomicBool::new(false));
    let editor = {
        let (stop, note, versions) = (stop.clone(), note.clone(), versions.clone());
        std::thread::spawn(move || {
            let mut i = 0usize;
            while !stop.load(Ordering::Relaxed) {
                let text = &versions[i % 2];
                if i.is_multiple_of(3) {
                    // An atomic save: a new file renamed over the note.
                    let tmp = note.with_extension("tmp");
                    std::fs::write(&tmp, text).unwrap();
                    std::fs::rename(&tmp, &note)
                        .unwrap_or_else(|e| panic!("the editor's save failed: {e}"));
                } else {
                    // In place, as some editors and sync clients write.
                    let mut f = std::fs::File::create(&note).unwrap();
                    f.write_all(text.as_bytes()).unwrap();
                }
                i += 1;
            }
        })
    };
    let (mut checked, mut whole) = (0, 0);
    let mut seen = std::collections::HashSet::new();
    let both = |seen: &std::collections::HashSet<String>| {
        versions
            .iter()
            .all(|v| seen.contains(&sha256(v.as_bytes())))
    };
    // 300 reads at least, and on until the editor's saves were seen.
    let started = std::time::Instant::now();
    for n in 0.. {
        if (n >= 300 && both(&seen)) || started.elapsed() > std::time::Duration::from_secs(20) {
            break;
        }
        let r = app
            .call(
                "vault_read",
                json!({"path": "notes/race.md", "full": true}).as_object(),
            )
            .unwrap();
        let Ok(v) = r else { continue };
        let text = v["text"].as_str().unwrap();
        let Some(hash) = v["hash"].as_str() else {
            continue;
        };
        checked += 1;
        seen.insert(hash.to_owned());
        // The window is capped; where it is the whole note, its hash is
        // the hash of exactly that text.
        if v["truncated"] == false {
            whole += 1;
            assert_eq!(hash, sha256(text.as_bytes()), "a hash of another version");
        }
        // Capped or not, the hash is of one of the versions (or of the
        // half-written file an in-place writer left at that moment),
        // never of a version the text does not begin.
        if let Some(v) = versions.iter().find(|v| sha256(v.as_bytes()) == hash) {
            assert!(v.starts_with(text), "the text is not of the hashed version");
        }
    }
    stop.store(true, Ordering::Relaxed);
    editor.join().unwrap();
    assert!(checked > 200, "{checked} reads hashed");
    // The exact check above ran on most reads, not only on the few that
    // met a file cut short by the in-place writer.
    assert!(whole > 150, "{whole} of {checked} reads were whole");
    // And the editor was saving while kura read: both versions were read.
    assert!(both(&seen), "a version was never read");
    eprintln!(
        "{checked} reads hashed, {whole} whole, {} texts",
        seen.len()
    );
}

#[test]
fn a_move_never_replaces_a_file_another_program_creates_at_its_target() {
    // 60 rounds a seed, the other program's head start each round the
    // seed's draw (0 to 12,000 spins: before, during and after the move's
    // steps); `just soak` tries many more.
    for mut seed in kura_tests::soak::each() {
        moves_racing_a_creator(&mut seed);
    }
}

fn moves_racing_a_creator(seed: &mut kura_tests::soak::Seed) {
    let dir = kura_tests::scratch::folder();
    let app = start(&dir);
    let vault = dir.path().join("vault");
    let (mut moved, mut refused) = (0, 0);
    let again = seed.again();
    for i in 0..60 {
        let spins = seed.rng.u32(0..12_000);
        let from = find_note(&vault);
        let target = vault.join(format!("guides/g{i}.md"));
        std::fs::create_dir_all(target.parent().unwrap()).unwrap();
        let other = std::thread::spawn({
            let target = target.clone();
            move || {
                for _ in 0..spins {
                    std::hint::spin_loop();
                }
                std::fs::OpenOptions::new()
                    .write(true)
                    .create_new(true)
                    .open(&target)
                    .map(|mut f| f.write_all(b"theirs").unwrap())
                    .is_ok()
            }
        });
        let r = app
            .call(
                "vault_move",
                json!({"from": from, "to": format!("guides/g{i}.md")}).as_object(),
            )
            .unwrap();
        let created = other.join().unwrap();
        let at_target = std::fs::read(&target).unwrap();
        match r {
            Ok(_) => {
                assert!(!created, "round {i}: both took the name, {again}");
                assert_ne!(at_target, b"theirs");
                moved += 1;
            }
            Err(e) => {
                assert_eq!(
                    e.code,
                    kura::error::Code::Conflict,
                    "round {i}: {}, {again}",
                    e.message
                );
                assert!(created);
                assert_eq!(
                    at_target, b"theirs",
                    "round {i}: their file was replaced, {again}"
                );
                assert!(
                    vault.join(&from).exists(),
                    "round {i}: the note is gone, {again}"
                );
                refused += 1;
            }
        }
    }
    assert_eq!(moved + refused, 60);
    // The guide is in one place, whole; their files all kept.
    let guide = find_note(&vault);
    assert!(
        std::fs::read_to_string(vault.join(&guide))
            .unwrap()
            .contains("backup")
    );
    eprintln!("{moved} moves, {refused} refused for a file created meanwhile");
}

/// Where the moved guide is now (the one `guides/` file that is not theirs).
fn find_note(vault: &std::path::Path) -> String {
    let research = vault.join("research/backup-guide.md");
    if research.exists() {
        return "research/backup-guide.md".to_owned();
    }
    let mine: Vec<String> = std::fs::read_dir(vault.join("guides"))
        .unwrap()
        .map(|e| e.unwrap())
        .filter(|e| std::fs::read(e.path()).unwrap() != b"theirs")
        .map(|e| format!("guides/{}", e.file_name().into_string().unwrap()))
        .collect();
    assert_eq!(mine.len(), 1, "{mine:?}");
    mine[0].clone()
}

/// Where the moved note is now, and that it is in one place only.
fn where_is(vault: &std::path::Path) -> &'static str {
    let at: Vec<&'static str> = ["notes/target.md", "archive/target.md"]
        .into_iter()
        .filter(|p| vault.join(p).exists())
        .collect();
    assert_eq!(at.len(), 1, "the note is in {at:?}");
    at[0]
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_second_kura_on_the_same_vault_loses_nothing_either_wrote() {
    // One kura moves a note back and forth (rewriting the link in the log
    // each time); a second, on the same vault and state folder, appends to
    // the log and to the moving note meanwhile. Every append it was told
    // succeeded is there once; every move finished or was refused as a
    // conflict and undone; the log's link leads to wherever the note is.
    let f = kura_tests::Fixture::new();
    f.write("notes/target.md", "# Target\n");
    f.write("notes/log.md", "# Log\nsee [the target](target.md)\n");
    let vault = f.vault();
    let (mover, writer) = tokio::join!(f.start(), f.start());
    const ROUNDS: usize = 30;
    let moves = async {
        let (mut moved, mut refused) = (0, 0);
        for _ in 0..ROUNDS {
            let from = where_is(&vault);
            let to = if from.starts_with("notes/") {
                "archive/target.md"
            } else {
                "notes/target.md"
            };
            let r = mover
                .call("vault_move", json!({"from": from, "to": to}))
                .await;
            if r.is_error {
                assert_eq!(r.body["error"]["code"], "conflict", "{}", r.body);
                refused += 1;
            } else {
                moved += 1;
            }
        }
        (moved, refused)
    };
    let appends = async {
        let (mut logged, mut edited, mut missed) = (Vec::new(), Vec::new(), 0);
        for i in 0..ROUNDS * 2 {
            let line = format!("b-{i}\n");
            let r = writer
                .call(
                    "vault_write",
                    json!({"path": "notes/log.md", "mode": "append", "content": line}),
                )
                .await;
            if r.is_error {
                assert_eq!(r.body["error"]["code"], "conflict", "{}", r.body);
            } else {
                logged.push(line);
            }
            // The note may have moved since we looked: not found is fine.
            let at = ["notes/target.md", "archive/target.md"][i % 2];
            let line = format!("edit-{i}\n");
            let r = writer
                .call(
                    "vault_write",
                    json!({"path": at, "mode": "append", "content": line}),
                )
                .await;
            if r.is_error {
                let code = r.body["error"]["code"].as_str().unwrap_or_default();
                assert!(["conflict", "not_found"].contains(&code), "{}", r.body);
                missed += 1;
            } else {
                edited.push(line);
            }
        }
        (logged, edited, missed)
    };
    let ((moved, refused), (logged, edited, missed)) = tokio::join!(moves, appends);
    mover.stop().await;
    writer.stop().await;
    let log = f.read("notes/log.md");
    for line in &logged {
        assert_eq!(log.matches(line.as_str()).count(), 1, "{line:?} in\n{log}");
    }
    let at = where_is(&vault);
    let note = f.read(at);
    for line in &edited {
        assert_eq!(
            note.matches(line.as_str()).count(),
            1,
            "{line:?} in\n{note}"
        );
    }
    let link = if at.starts_with("notes/") {
        "(target.md)"
    } else {
        "(../archive/target.md)"
    };
    assert!(
        log.contains(link),
        "the log's link does not lead to {at}:\n{log}"
    );
    let journals: Vec<_> = std::fs::read_dir(f.dir.path().join("state/moves"))
        .map(|d| d.flatten().map(|e| e.file_name()).collect())
        .unwrap_or_default();
    assert!(
        journals
            .iter()
            .all(|n| n.to_string_lossy().ends_with(".lock")),
        "journals left: {journals:?}"
    );
    eprintln!(
        "{moved} moves, {refused} refused; {} log appends, {} note appends, {missed} missed the note",
        logged.len(),
        edited.len()
    );
    assert_eq!(moved + refused, ROUNDS);
    assert!(moved > 0, "no move succeeded");
}
