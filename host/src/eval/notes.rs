//! `kura eval`'s other search tools: vault_find and vibe `search`, each on
//! a gold set of its own, with the dense signal off (lexical) and on
//! (fused).
//!
//! The vault is put together from the corpora so that its notes are in
//! three languages on different topics: `en/` holds the English Debian
//! Reference's chapters 1–6, `es/` the Spanish one's chapters 7–12, `ja/`
//! the Japanese Vue documentation. vault_find returns no hit list: what
//! counts is the note its first `vault_read` action names (so its hit@5 and
//! MRR@5 are the share of questions whose first read is an expected note).
//! vibe `search` runs over the demo workspaces and is measured on the files
//! of its results, like manual_find.

use std::collections::BTreeMap;
use std::path::Path;
use std::time::Instant;

use serde::Deserialize;
use serde_json::{Value, json};

use super::{EvalArgs, Figures, Outcome, call, figures, header, row, score};
use crate::app::App;
use crate::config::Config;
use crate::fs::{RelPath, Root};

/// One question of a vault or vibe gold set.
#[derive(Debug, Clone, Deserialize)]
pub struct NoteGold {
    pub id: String,
    pub lang: String,
    pub query: String,
    /// `cross` (asked in another language than the answer's), `synonym`
    /// (in other words), `same` (a lexical control).
    pub kind: String,
    /// `dev` (tuned on) or `test` (reported only).
    pub split: String,
    /// Vault- or workspace-relative paths of the files that answer it.
    pub expected: Vec<String>,
    /// What an agent would pass as `queries` beside it ([`super::phrasings_of`]).
    #[serde(skip)]
    pub phrasings: Vec<String>,
}

/// Where the vault's notes come from: (folder in the vault, manual in the
/// corpora, the manual's chapters taken; empty: all).
const VAULT: &[(&str, &str, &[&str])] = &[
    (
        "en",
        "debian-reference-en",
        &["ch01", "ch02", "ch03", "ch04", "ch05", "ch06"],
    ),
    (
        "es",
        "debian-reference-es",
        &["ch07", "ch08", "ch09", "ch10", "ch11", "ch12"],
    ),
    ("ja", "vue-docs-ja", &[]),
];

/// Copy the notes of the vault at `from` into `dest`.
fn copy_vault(from: &Path, dest: &Path) -> Result<usize, String> {
    let root = Root::open(from).map_err(|e| format!("{}: {e}", from.display()))?;
    let mut files: Vec<(String, Vec<u8>)> = Vec::new();
    for (path, _) in root.walk_files(&RelPath::root()).map_err(|e| e.message)? {
        if path.to_string().ends_with(".md") {
            files.push((path.to_string(), root.read(&path).map_err(|e| e.message)?));
        }
    }
    materialize(dest, &files)
}

fn materialize(dest: &Path, files: &[(String, Vec<u8>)]) -> Result<usize, String> {
    let refs: Vec<(&str, &[u8])> = files
        .iter()
        .map(|(p, b)| (p.as_str(), b.as_slice()))
        .collect();
    crate::fs::materialize(dest, &refs).map_err(|e| e.to_string())?;
    Ok(files.len())
}

/// Copy the vault's notes from the corpora at `corpora` into `dest`.
fn build_vault(corpora: &Path, dest: &Path) -> Result<usize, String> {
    let root = Root::open(corpora).map_err(|e| format!("{}: {e}", corpora.display()))?;
    let mut files: Vec<(String, Vec<u8>)> = Vec::new();
    for (folder, manual, chapters) in VAULT {
        let from = RelPath::parse(manual, false).map_err(|e| e.message)?;
        for (path, _) in root.walk_files(&from).map_err(|e| e.message)? {
            let rel = path.to_string();
            let inside = &rel[manual.len() + 1..];
            let chapter = inside.split('/').next().unwrap_or("");
            let note = inside.ends_with(".md");
            if note && (chapters.is_empty() || chapters.contains(&chapter)) {
                let bytes = root.read(&path).map_err(|e| e.message)?;
                files.push((format!("{folder}/{inside}"), bytes));
            }
        }
    }
    materialize(dest, &files)
}

fn load(path: &Path) -> Result<Vec<NoteGold>, String> {
    let bytes = crate::fs::read_operator_file(path)
        .map_err(|e| format!("cannot read {}: {e}", path.display()))?;
    let mut phrasings = super::phrasings_of(path)?;
    String::from_utf8_lossy(&bytes)
        .lines()
        .filter(|l| !l.trim().is_empty())
        .enumerate()
        .map(|(i, l)| {
            let mut g: NoteGold = serde_json::from_str(l)
                .map_err(|e| format!("{} line {}: {e}", path.display(), i + 1))?;
            g.phrasings = phrasings.remove(&g.id).unwrap_or_default();
            Ok(g)
        })
        .collect()
}

/// `{query}` with the agent's phrasings as `queries` when `phrasings`.
fn asked(g: &NoteGold, phrasings: bool) -> Value {
    let mut args = json!({ "query": g.query });
    if phrasings && !g.phrasings.is_empty() {
        args["queries"] = json!(g.phrasings);
    }
    args
}

/// An app over `vault` and the demo workspaces, its indexes built and,
/// with `dense` and a model in `state`, their vectors.
fn start(args: &EvalArgs, vault: &Path, state: &Path, dense: bool) -> Result<App, String> {
    let config = Config {
        vault_root: Some(vault.to_owned()),
        vibe_root: Some(args.vibe_root.clone()),
        state_dir: Some(state.to_owned()),
        dense_search_enabled: dense,
        ..Config::default()
    };
    let app = App::start(config, crate::CATALOG).map_err(|e| e.to_string())?;
    let v = app
        .domains
        .find::<crate::vault::Vault>()
        .ok_or("no vault")?;
    v.index.refresh(&v.root).map_err(|e| e.message)?;
    v.meaning.build(&v.index, &v.root);
    let w = app.domains.find::<crate::vibe::Vibe>().ok_or("no vibe")?;
    w.index.refresh(&w.root).map_err(|e| e.message)?;
    w.meaning.build(&w.index, &w.root);
    Ok(app)
}

/// The notes vault_find's `vault_read` actions name, in their order.
fn reads(found: &Value) -> Vec<String> {
    let mut notes: Vec<String> = Vec::new();
    for a in found["next_actions"].as_array().into_iter().flatten() {
        if a["type"] == "vault_read"
            && let Some(path) = a["params"]["path"].as_str()
            && !notes.iter().any(|n| n == path)
        {
            notes.push(path.to_owned());
        }
    }
    notes
}

/// vault_find on each question: judged by its first `vault_read` alone
/// (hit@5 is then "the first read is right"), and by all its reads (hit@5:
/// one of the first five is).
fn vault_set(
    app: &App,
    gold: &[NoteGold],
    phrasings: bool,
) -> Result<(Vec<Outcome>, Vec<Outcome>), String> {
    let mut first = Vec::new();
    let mut any = Vec::new();
    for g in gold {
        let t = Instant::now();
        let found = call(app, "vault_find", &asked(g, phrasings))?;
        let ms = t.elapsed().as_secs_f64() * 1e3;
        let (one, all) = judged(g, &reads(&found), ms);
        first.push(one);
        any.push(all);
    }
    Ok((first, any))
}

/// The agent's phrasings asked as separate vault_find calls, the notes
/// each one's reads name fused by the client (reciprocal rank, k = 60):
/// what an agent had to do before `queries`. The time is the calls' sum.
fn vault_client_fused(
    app: &App,
    gold: &[NoteGold],
) -> Result<(Vec<Outcome>, Vec<Outcome>), String> {
    let (mut first, mut any) = (Vec::new(), Vec::new());
    for g in gold {
        let t = Instant::now();
        let mut lists = Vec::new();
        for q in std::iter::once(&g.query).chain(&g.phrasings) {
            lists.push(reads(&call(app, "vault_find", &json!({ "query": q }))?));
        }
        let notes: Vec<String> = crate::domain::search::phrasings::fuse(
            lists,
            crate::domain::search::phrasings::K,
            String::clone,
        )
        .into_iter()
        .map(|(n, _)| n)
        .collect();
        let (one, all) = judged(g, &notes, t.elapsed().as_secs_f64() * 1e3);
        first.push(one);
        any.push(all);
    }
    Ok((first, any))
}

/// `notes` (best first) judged on their first note alone, and all of them.
fn judged(g: &NoteGold, notes: &[String], ms: f64) -> (Outcome, Outcome) {
    (
        score(&g.id, &notes[..notes.len().min(1)], &g.expected, &[], ms),
        score(&g.id, notes, &g.expected, &[], ms),
    )
}

/// The files in the order of their nearest section's closeness to each
/// question, the sentence encoder alone: what a search could know by
/// meaning; and the same judged on its first file only (vault_find's first
/// read is compared with it).
fn dense_alone(
    dense: &crate::domain::search::dense::Dense,
    gold: &[NoteGold],
) -> Option<(Vec<Outcome>, Vec<Outcome>)> {
    let (mut all, mut first) = (Vec::new(), Vec::new());
    for g in gold {
        let t = Instant::now();
        let question = dense.question(&g.query)?;
        let mut files: Vec<String> = Vec::new();
        for hit in dense.nearest(&question, "", |_, _| true, 100) {
            if !files.contains(&hit.file) {
                files.push(hit.file);
            }
        }
        let (one, every) = judged(g, &files, t.elapsed().as_secs_f64() * 1e3);
        first.push(one);
        all.push(every);
    }
    Some((all, first))
}

fn vibe_set(app: &App, gold: &[NoteGold], phrasings: bool) -> Result<Vec<Outcome>, String> {
    gold.iter()
        .map(|g| {
            let t = Instant::now();
            let mut args = asked(g, phrasings);
            args["limit"] = json!(10);
            let found = call(app, "search", &args)?;
            let ms = t.elapsed().as_secs_f64() * 1e3;
            let mut files: Vec<String> = Vec::new();
            for r in found["results"].as_array().into_iter().flatten() {
                let path = r["path"].as_str().unwrap_or_default().to_owned();
                if !files.contains(&path) {
                    files.push(path);
                }
            }
            Ok(score(&g.id, &files, &g.expected, &[], ms))
        })
        .collect()
}

/// The rows of one tool and configuration: each split, then each kind of
/// the test half.
fn rows(
    name: &str,
    gold: &[NoteGold],
    outcomes: &[Outcome],
    verbose: bool,
) -> Vec<(String, Figures)> {
    let mut out = Vec::new();
    let pairs: Vec<(&NoteGold, &Outcome)> = gold.iter().zip(outcomes).collect();
    for split in ["dev", "test"] {
        let part: Vec<&(&NoteGold, &Outcome)> =
            pairs.iter().filter(|(g, _)| g.split == split).collect();
        let all: Vec<&Outcome> = part.iter().map(|(_, o)| *o).collect();
        out.push((format!("{name} [{split}]"), figures(&all)));
        let mut kinds: BTreeMap<&str, Vec<&Outcome>> = BTreeMap::new();
        for (g, o) in &part {
            kinds.entry(g.kind.as_str()).or_default().push(o);
        }
        if kinds.len() > 1 {
            for (kind, os) in kinds {
                out.push((format!("{name} [{split}, {kind}]"), figures(&os)));
            }
        }
    }
    if verbose {
        for (g, o) in &pairs {
            eprintln!(
                "{name} {} [{}, {}] rank {:?} top {:?}: {}",
                g.id, g.split, g.lang, o.rank, o.top, g.query
            );
        }
    }
    out
}

/// Run both gold sets, lexical then fused (fused only with `--quick`), and
/// print their table; `state` holds the model, if installed.
pub fn run(args: &EvalArgs, state: &Path) -> Result<Value, String> {
    let vault_gold = load(&args.vault_gold)?;
    let vibe_gold = load(&args.vibe_gold)?;
    let tmp = tempfile::tempdir().map_err(|e| e.to_string())?;
    let vault = tmp.path().join("vault");
    let notes = match &args.vault_root {
        Some(from) => copy_vault(from, &vault)?,
        None => build_vault(&args.root, &vault)?,
    };
    let mut table: Vec<(String, Figures)> = Vec::new();
    let mut report = serde_json::Map::new();
    // (name, the encoder, the agent's phrasings)
    let configurations: &[(&str, bool, bool)] = if args.quick {
        &[("fused", true, false), ("agent phrasings", true, true)]
    } else {
        &[
            ("lexical", false, false),
            ("fused", true, false),
            ("agent phrasings", true, true),
        ]
    };
    for &(name, dense, phrasings) in configurations {
        let app = start(args, &vault, state, dense)?;
        let fused = dense
            && app
                .domains
                .find::<crate::vault::Vault>()
                .is_some_and(|v| v.meaning.built().is_some());
        if dense && !fused {
            continue; // no model installed: fused would be lexical again
        }
        let (first, any) = vault_set(&app, &vault_gold, phrasings)?;
        let w = vibe_set(&app, &vibe_gold, phrasings)?;
        let mut vault_rows = rows(
            &format!("vault_find, {name}"),
            &vault_gold,
            &first,
            args.verbose,
        );
        vault_rows.extend(rows(
            &format!("vault_find, {name}, any read"),
            &vault_gold,
            &any,
            args.verbose,
        ));
        let vault_dense = app
            .domains
            .find::<crate::vault::Vault>()
            .and_then(|v| v.meaning.built())
            .filter(|_| !phrasings);
        if let Some((alone, first)) = vault_dense.and_then(|d| dense_alone(d, &vault_gold)) {
            vault_rows.extend(rows(
                "notes by the encoder alone",
                &vault_gold,
                &alone,
                args.verbose,
            ));
            vault_rows.extend(rows("the encoder's first note", &vault_gold, &first, false));
        }
        if phrasings && !args.quick {
            let (first, any) = vault_client_fused(&app, &vault_gold)?;
            let name = "vault_find, separate calls fused by the client";
            vault_rows.extend(rows(name, &vault_gold, &first, false));
            vault_rows.extend(rows(&format!("{name}, any read"), &vault_gold, &any, false));
        }
        let mut vibe_rows = rows(
            &format!("vibe search, {name}"),
            &vibe_gold,
            &w,
            args.verbose,
        );
        let vibe_dense = app
            .domains
            .find::<crate::vibe::Vibe>()
            .and_then(|v| v.meaning.built())
            .filter(|_| !phrasings);
        if let Some((alone, _)) = vibe_dense.and_then(|d| dense_alone(d, &vibe_gold)) {
            vibe_rows.extend(rows(
                "vibe files by the encoder alone",
                &vibe_gold,
                &alone,
                args.verbose,
            ));
        }
        report.insert(
            name.to_owned(),
            json!({ "vault_find": vault_rows, "vibe_search": vibe_rows }),
        );
        table.extend(vault_rows);
        table.extend(vibe_rows);
    }
    if !args.json {
        println!(
            "\nvault_find ({} questions, {notes} notes in en/es/ja; hit@5 = its first vault_read names an expected note, or with \"any read\" one of its first five) and vibe search ({} questions over {}):\n",
            vault_gold.len(),
            vibe_gold.len(),
            args.vibe_root.display()
        );
        let mut text = header("tool, configuration [split, kind]");
        for (name, f) in &table {
            text.push_str(&row(name, f));
        }
        print!("{text}");
    }
    Ok(Value::Object(report))
}
