//! `kura eval`: retrieval quality of manual_find on a gold set, and of
//! vault_find and vibe search on theirs ([`notes`]).
//!
//! Each gold line names a manual, a query written as a user would ask it,
//! its facet and the files that answer it. The query runs through the real
//! tool (`App::call("manual_find")` with the gold manual as `manual_id`,
//! cache off), the ranked candidates are read back with manual_hits and
//! collapsed to files, and the usual measures are taken at the file level:
//! hit@5, recall@5, MRR@5 and nDCG@10 (binary relevance), with the tool's
//! latency (in process: the pipeline without the stdio transport). The same
//! set runs with the reranker, the claim graph and the corrective stage switched off in turn, so
//! each stage's effect is visible.

mod notes;

use std::collections::BTreeMap;
use std::path::PathBuf;
use std::time::Instant;

use serde::{Deserialize, Serialize};
use serde_json::{Value, json};

use crate::app::App;
use crate::config::Config;

mod admission;
pub use admission::{AdmissionArgs, admit};

/// The manuals of the gold sets, and the gold sets, from a checkout's root.
pub const ROOT: &str = "fixtures/corpora";
pub const GOLD: [&str; 5] = [
    "fixtures/eval/gold.jsonl",
    "fixtures/eval/cross-dev.jsonl",
    "fixtures/eval/en-ja-dev.jsonl",
    "fixtures/eval/blind.jsonl",
    "fixtures/eval/hard.jsonl",
];

#[derive(clap::Args, Debug, Clone)]
pub struct EvalArgs {
    /// Folder holding the manuals the gold set names.
    #[arg(long, default_value = ROOT)]
    pub root: PathBuf,
    /// The gold set (JSON lines; repeat for several files).
    #[arg(long, default_values = GOLD)]
    pub gold: Vec<PathBuf>,
    /// vault_find's gold set (over a vault put together from the corpora).
    #[arg(long, default_value = "fixtures/eval/vault.jsonl")]
    pub vault_gold: PathBuf,
    /// The vault `--vault-gold` is about, instead of the one put together
    /// from the corpora (a copy is searched; e.g. fixtures/vaults/debian-handbook
    /// with fixtures/eval/vault-hard.jsonl).
    #[arg(long)]
    pub vault_root: Option<PathBuf>,
    /// vibe search's gold set.
    #[arg(long, default_value = "fixtures/eval/vibe.jsonl")]
    pub vibe_gold: PathBuf,
    /// The workspaces vibe search's gold set is about.
    #[arg(long, default_value = "fixtures/demo/vibe")]
    pub vibe_root: PathBuf,
    /// Print the figures as one JSON object instead of tables.
    #[arg(long)]
    pub json: bool,
    /// Only the default configuration and the agent phrasings (no A/B runs).
    #[arg(long)]
    pub quick: bool,
    /// Only this configuration (repeat for several; the names the report
    /// prints), without the client's fusion and the dense-alone rows.
    #[arg(long = "configuration", value_name = "NAME", conflicts_with = "quick")]
    pub configurations: Vec<String>,
    /// Show each query's rank of the first expected file.
    #[arg(long)]
    pub verbose: bool,
    /// Keep the index here (default: a temporary folder, rebuilt each run).
    #[arg(long)]
    pub state_dir: Option<PathBuf>,
}

#[derive(Debug, Clone, Deserialize)]
pub struct Gold {
    pub id: String,
    pub lang: String,
    pub manual: String,
    pub query: String,
    pub facet: String,
    /// What the query tests: `topic`, `name` (it names the document),
    /// `chapter` (a chapter or section reference), `near_duplicate` (a
    /// name that other names contain), `compare`, `facet` (a leading facet
    /// word).
    #[serde(default = "topic")]
    pub kind: String,
    /// `dev` (tuned on), `test` (reported only) or `blind` (written before
    /// the work it measures, reported only).
    #[serde(default = "dev")]
    pub split: String,
    pub expected: Vec<String>,
    /// For a comparison: the files of each side; `both@5` counts a query
    /// whose every side has a file in the top 5.
    #[serde(default)]
    pub sides: Vec<Vec<String>>,
    /// The language the manual is written in (`ja`, `es`, `en`), read off
    /// its text by [`written_in`]; empty until then.
    #[serde(skip)]
    pub manual_lang: String,
    /// What an agent would pass as `queries` beside the question, from
    /// `phrasings/` beside the gold file ([`phrasings_of`]).
    #[serde(skip)]
    pub phrasings: Vec<String>,
    /// The gold file's name without `.jsonl` (`hard`, `blind`, ...).
    #[serde(skip)]
    pub set: String,
}

/// An agent's phrasings of a gold set's questions, by id: the file of the
/// same name in `phrasings/` beside it (fixtures/eval/README.md), if any.
pub fn phrasings_of(gold: &std::path::Path) -> Result<BTreeMap<String, Vec<String>>, String> {
    #[derive(Deserialize)]
    struct Line {
        id: String,
        queries: Vec<String>,
    }
    let (Some(dir), Some(name)) = (gold.parent(), gold.file_name()) else {
        return Ok(BTreeMap::new());
    };
    let path = dir.join("phrasings").join(name);
    let Ok(bytes) = crate::fs::read_operator_file(&path) else {
        return Ok(BTreeMap::new());
    };
    String::from_utf8_lossy(&bytes)
        .lines()
        .filter(|l| !l.trim().is_empty())
        .enumerate()
        .map(|(i, l)| {
            let line: Line = serde_json::from_str(l)
                .map_err(|e| format!("{} line {}: {e}", path.display(), i + 1))?;
            Ok((line.id, line.queries))
        })
        .collect()
}

/// The language most of a manual's text is in: `ja` when a fifth of its
/// letters are CJK, else `es` or `en` by which language's commonest words
/// it uses more (a look at its first 40 files).
fn written_in(root: &crate::fs::Root, manual: &str) -> Result<&'static str, String> {
    let dir = crate::fs::RelPath::parse(manual, false).map_err(|e| e.message)?;
    let (mut cjk, mut letters, mut es, mut en) = (0usize, 0usize, 0usize, 0usize);
    for (path, _) in root
        .walk_files(&dir)
        .map_err(|e| e.message)?
        .into_iter()
        .take(40)
    {
        let text = String::from_utf8_lossy(&root.read(&path).map_err(|e| e.message)?).into_owned();
        for c in text.chars().filter(|c| c.is_alphabetic()) {
            letters += 1;
            cjk += usize::from(crate::text::tokenize::is_cjk(c));
        }
        for w in text.split(|c: char| !c.is_alphabetic()) {
            let w = w.to_lowercase();
            es += usize::from(
                ["el", "la", "los", "las", "que", "para", "con", "una"].contains(&w.as_str()),
            );
            en += usize::from(
                ["the", "and", "of", "to", "is", "with", "that", "for"].contains(&w.as_str()),
            );
        }
    }
    Ok(if cjk * 5 >= letters.max(1) {
        "ja"
    } else if es > en {
        "es"
    } else {
        "en"
    })
}

/// Mark each question's manual with the language it is written in.
fn mark_languages(root: &std::path::Path, gold: &mut [Gold]) -> Result<(), String> {
    let root = crate::fs::Root::open(root).map_err(|e| format!("{}: {e}", root.display()))?;
    let mut known: BTreeMap<String, &'static str> = BTreeMap::new();
    for g in gold.iter_mut() {
        if !known.contains_key(&g.manual) {
            known.insert(g.manual.clone(), written_in(&root, &g.manual)?);
        }
        g.manual_lang = known[&g.manual].to_owned();
    }
    Ok(())
}

fn topic() -> String {
    "topic".to_owned()
}

fn dev() -> String {
    "dev".to_owned()
}

/// One query's outcome.
#[derive(Debug, Clone, Serialize)]
pub struct Outcome {
    pub id: String,
    /// 1-based rank of the first expected file (None: not in the top 10).
    pub rank: Option<usize>,
    pub hit5: f64,
    pub recall5: f64,
    pub rr5: f64,
    pub ndcg10: f64,
    /// Every side of a comparison in the top 5 (None: not a comparison).
    pub both5: Option<f64>,
    pub ms: f64,
    /// The first three files, as ranked.
    pub top: Vec<String>,
}

#[derive(Debug, Clone, Default, Serialize)]
pub struct Figures {
    pub queries: usize,
    pub hit_at_5: f64,
    pub recall_at_5: f64,
    pub mrr_at_5: f64,
    pub ndcg_at_10: f64,
    /// Over the comparisons with sides only (None: there are none).
    pub both_at_5: Option<f64>,
    pub p50_ms: f64,
    pub p95_ms: f64,
}

fn figures(o: &[&Outcome]) -> Figures {
    if o.is_empty() {
        return Figures::default();
    }
    let n = o.len() as f64;
    let mean = |f: fn(&Outcome) -> f64| o.iter().map(|x| f(x)).sum::<f64>() / n;
    let mut ms: Vec<f64> = o.iter().map(|x| x.ms).collect();
    ms.sort_by(f64::total_cmp);
    let at = |q: f64| ms[((ms.len() as f64 - 1.0) * q).round() as usize];
    let r = |x: f64| (x * 1000.0).round() / 1000.0;
    let both: Vec<f64> = o.iter().filter_map(|x| x.both5).collect();
    Figures {
        both_at_5: (!both.is_empty()).then(|| r(both.iter().sum::<f64>() / both.len() as f64)),
        queries: o.len(),
        hit_at_5: r(mean(|x| x.hit5)),
        recall_at_5: r(mean(|x| x.recall5)),
        mrr_at_5: r(mean(|x| x.rr5)),
        ndcg_at_10: r(mean(|x| x.ndcg10)),
        p50_ms: r(at(0.5)),
        p95_ms: r(at(0.95)),
    }
}

/// Measures for one ranked file list.
pub fn score(
    id: &str,
    files: &[String],
    expected: &[String],
    sides: &[Vec<String>],
    ms: f64,
) -> Outcome {
    let rel = |f: &String| expected.contains(f);
    let rank = files.iter().take(10).position(rel).map(|i| i + 1);
    let in5 = files.iter().take(5).filter(|f| rel(f)).count();
    let dcg: f64 = files
        .iter()
        .take(10)
        .enumerate()
        .filter(|(_, f)| rel(f))
        .map(|(i, _)| 1.0 / ((i + 2) as f64).log2())
        .sum();
    let idcg: f64 = (0..expected.len().min(10))
        .map(|i| 1.0 / ((i + 2) as f64).log2())
        .sum();
    Outcome {
        id: id.to_owned(),
        rank,
        hit5: f64::from(u8::from(in5 > 0)),
        recall5: in5 as f64 / expected.len().max(1) as f64,
        rr5: rank.filter(|r| *r <= 5).map_or(0.0, |r| 1.0 / r as f64),
        // `+ 0.0`: an empty sum is -0.0, printed as "-0.000".
        ndcg10: if idcg > 0.0 { dcg / idcg + 0.0 } else { 0.0 },
        both5: (!sides.is_empty()).then(|| {
            let top: Vec<&String> = files.iter().take(5).collect();
            let all = sides
                .iter()
                .all(|side| top.iter().any(|f| side.contains(f)));
            f64::from(u8::from(all))
        }),
        ms,
        top: files.iter().take(3).cloned().collect(),
    }
}

/// Run the gold set on one app.
fn run_set(app: &App, gold: &[Gold], phrasings: bool) -> Result<Vec<Outcome>, String> {
    Ok(run_answers(app, gold, phrasings)?.0)
}

/// Run the gold set on one app (with each question's agent `phrasings`
/// as `queries` when asked): the outcomes, and how many answers say a
/// component failed (`late_rerank: "failed"`, or a claim graph `blocked`).
fn run_answers(app: &App, gold: &[Gold], phrasings: bool) -> Result<(Vec<Outcome>, usize), String> {
    let mut out = Vec::new();
    let mut failed = 0;
    for g in gold {
        let mut args = json!({ "query": g.query, "manual_id": g.manual, "use_cache": false });
        if phrasings && !g.phrasings.is_empty() {
            args["queries"] = json!(g.phrasings);
        }
        let t = Instant::now();
        let found = call(app, "manual_find", &args)?;
        let ms = t.elapsed().as_secs_f64() * 1e3;
        if found["applied"]["late_rerank"] == "failed"
            || found["summary"]["integration_status"] == "blocked"
        {
            failed += 1;
        }
        let files = ranked_files(app, &found, &g.manual)?;
        out.push(score(&g.id, &files, &g.expected, &g.sides, ms));
    }
    Ok((out, failed))
}

/// The files of `manual` a manual_find answer ranked, best first (read back
/// with manual_hits).
fn ranked_files(app: &App, found: &Value, manual: &str) -> Result<Vec<String>, String> {
    let trace = found["trace_id"].as_str().unwrap_or_default().to_owned();
    let hits = call(
        app,
        "manual_hits",
        &json!({ "trace_id": trace, "kind": "candidates", "limit": 200 }),
    )?;
    Ok(files_of(&hits, manual))
}

/// The files of `manual` a manual_hits answer lists, in its order, each
/// once (another manual's file is never the expected one).
pub fn files_of(hits: &Value, manual: &str) -> Vec<String> {
    let shared = hits["manual_id"].as_str();
    let mut files: Vec<String> = Vec::new();
    for item in hits["items"].as_array().into_iter().flatten() {
        let r = &item["ref"];
        if r["manual_id"].as_str().or(shared) != Some(manual) {
            continue;
        }
        let path = r["path"].as_str().unwrap_or_default().to_owned();
        if !files.contains(&path) {
            files.push(path);
        }
    }
    files
}

/// The agent's phrasings asked as separate manual_find calls and their file
/// rankings fused by the client (reciprocal rank, k = 60): what an agent
/// had to do before `queries`, the figure kura's own fusion is held to.
/// The time is the calls' sum.
fn client_fused(app: &App, gold: &[Gold]) -> Result<Vec<Outcome>, String> {
    let mut out = Vec::new();
    for g in gold {
        let t = Instant::now();
        let mut fused: BTreeMap<String, f64> = BTreeMap::new();
        for q in std::iter::once(&g.query).chain(&g.phrasings) {
            let args = json!({ "query": q, "manual_id": g.manual, "use_cache": false });
            let found = call(app, "manual_find", &args)?;
            for (rank, f) in ranked_files(app, &found, &g.manual)?
                .into_iter()
                .enumerate()
            {
                *fused.entry(f).or_default() += 1.0 / (60.0 + rank as f64 + 1.0);
            }
        }
        let ms = t.elapsed().as_secs_f64() * 1e3;
        let mut files: Vec<(String, f64)> = fused.into_iter().collect();
        files.sort_by(|a, b| b.1.total_cmp(&a.1).then_with(|| a.0.cmp(&b.0)));
        let files: Vec<String> = files.into_iter().map(|(f, _)| f).collect();
        out.push(score(&g.id, &files, &g.expected, &g.sides, ms));
    }
    Ok(out)
}

fn call(app: &App, tool: &str, args: &Value) -> Result<Value, String> {
    match app.call(tool, args.as_object()) {
        Some(Ok(v)) => Ok(v),
        Some(Err(e)) => Err(format!("{tool}: {}", e.message)),
        None => Err(format!("{tool} is not served (is the manuals root set?)")),
    }
}

pub fn load_gold(path: &std::path::Path) -> Result<Vec<Gold>, String> {
    let bytes = crate::fs::read_operator_file(path)
        .map_err(|e| format!("cannot read {}: {e}", path.display()))?;
    let text = String::from_utf8_lossy(&bytes);
    let mut phrasings = phrasings_of(path)?;
    text.lines()
        .filter(|l| !l.trim().is_empty())
        .enumerate()
        .map(|(i, l)| {
            let mut g: Gold = serde_json::from_str(l)
                .map_err(|e| format!("{} line {}: {e}", path.display(), i + 1))?;
            g.phrasings = phrasings.remove(&g.id).unwrap_or_default();
            g.set = path
                .file_stem()
                .map_or(String::new(), |s| s.to_string_lossy().into_owned());
            Ok(g)
        })
        .collect()
}

/// A configuration of the A/B table: its name, then which stages run.
struct Switch {
    name: &'static str,
    rerank: bool,
    graph: bool,
    corrective: bool,
    dense: bool,
    synonyms: bool,
    translations: bool,
    /// The agent's phrasings go as `queries`.
    phrasings: bool,
}

const fn switch(
    name: &'static str,
    [rerank, graph, corrective, dense, synonyms, translations]: [bool; 6],
) -> Switch {
    Switch {
        name,
        rerank,
        graph,
        corrective,
        dense,
        synonyms,
        translations,
        phrasings: false,
    }
}

const SWITCHES: &[Switch] = &[
    switch("default (reranker + claim graph)", [true; 6]),
    Switch {
        phrasings: true,
        ..switch(AGENT_PHRASINGS, [true; 6])
    },
    switch("no reranker", [false, true, true, true, true, true]),
    switch("no claim graph", [true, false, true, true, true, true]),
    switch("neither", [false, false, true, true, true, true]),
    switch("no corrective stage", [true, true, false, true, true, true]),
    // The default without the model and the dictionaries in the state folder.
    switch(
        "lexical only (no dense signal, no synonyms)",
        [true, true, true, false, false, false],
    ),
    switch("lexical + synonyms", [true, true, true, false, true, false]),
    switch("fused, no synonyms", [true, true, true, true, false, true]),
    switch(
        "fused, no translations",
        [true, true, true, true, true, false],
    ),
];

pub fn run(args: EvalArgs) -> Result<(), String> {
    let mut gold = Vec::new();
    for path in &args.gold {
        gold.extend(load_gold(path)?);
    }
    mark_languages(&args.root, &mut gold)?;
    let tmp = tempfile::tempdir().map_err(|e| e.to_string())?;
    let state = args
        .state_dir
        .clone()
        .unwrap_or_else(|| tmp.path().to_owned());
    let mut report = serde_json::Map::new();
    let mut table = String::new();
    let mut ab: Vec<(String, Figures)> = Vec::new();
    // The default, the agent's phrasings and words alone (and the client's
    // fusion), by set, split and direction.
    let mut by_set: Vec<(String, Figures)> = Vec::new();
    let switches = chosen(&args)?;
    let every = !args.quick && args.configurations.is_empty();
    for (i, switch) in switches.into_iter().enumerate() {
        let (app, index_ms) = configure(&args, &state, switch)?;
        // One warm-up pass so that the figures are not the first-call costs.
        if i == 0 {
            run_set(&app, &gold[..gold.len().min(5)], false)?;
        }
        let outcomes = run_set(&app, &gold, switch.phrasings)?;
        let run = Measured::of(&gold, &outcomes);
        // The first configuration is shown in full, the others in the A/B table.
        if i == 0 && !args.json {
            table.push_str(&run.tables(&args, index_ms));
        }
        for (split, f) in run.splits.iter().filter(|(_, f)| f.total.queries > 0) {
            ab.push((format!("{} [{split}]", switch.name), f.total.clone()));
            // The default, the agent's phrasings and words alone.
            if switch.name == SWITCHES[0].name || switch.phrasings || !switch.dense {
                for (set, f) in &f.per_set {
                    by_set.push((format!("{set} [{split}], {}", switch.name), f.clone()));
                }
            }
        }
        report.insert(switch.name.to_owned(), run.json(index_ms));
    }
    if every {
        let (app, _) = configure(&args, &state, &SWITCHES[0])?;
        let outcomes = client_fused(&app, &gold)?;
        let run = Measured::of(&gold, &outcomes);
        for (split, f) in run.splits.iter().filter(|(_, f)| f.total.queries > 0) {
            ab.push((format!("{CLIENT_FUSED} [{split}]"), f.total.clone()));
            for (set, f) in &f.per_set {
                by_set.push((format!("{set} [{split}], client"), f.clone()));
            }
        }
        report.insert(CLIENT_FUSED.to_owned(), run.json(0.0));
    }
    if every && let Some(outcomes) = dense_alone(&args, &state, &gold)? {
        let run = Measured::of(&gold, &outcomes);
        for (split, f) in run.splits.iter().filter(|(_, f)| f.total.queries > 0) {
            ab.push((format!("{DENSE_ALONE} [{split}]"), f.total.clone()));
        }
        report.insert(DENSE_ALONE.to_owned(), run.json(0.0));
    }
    if !args.json {
        table.push_str(&header("configuration [split]"));
        for (name, f) in &ab {
            table.push_str(&row(name, f));
        }
        by_set.sort_by(|a, b| a.0.cmp(&b.0));
        table.push_str(&format!(
            "\n{}",
            header("set, direction [split], configuration")
        ));
        for (name, f) in &by_set {
            table.push_str(&row(name, f));
        }
        print!("{table}");
    }
    let notes = notes::run(&args, &state)?;
    if args.json {
        report.insert("vault and vibe".to_owned(), notes);
        println!("{}", Value::Object(report));
    }
    Ok(())
}

/// The configurations `args` asks for, in the report's order.
fn chosen(args: &EvalArgs) -> Result<Vec<&'static Switch>, String> {
    if let Some(unknown) = args
        .configurations
        .iter()
        .find(|name| !SWITCHES.iter().any(|s| s.name == name.as_str()))
    {
        let names: Vec<&str> = SWITCHES.iter().map(|s| s.name).collect();
        return Err(format!(
            "no configuration is named {unknown:?}; the configurations: {}",
            names.join("; ")
        ));
    }
    Ok(if !args.configurations.is_empty() {
        SWITCHES
            .iter()
            .filter(|s| args.configurations.iter().any(|n| n == s.name))
            .collect()
    } else if args.quick {
        SWITCHES[..2].iter().collect()
    } else {
        SWITCHES.iter().collect()
    })
}

const DENSE_ALONE: &str = "dense alone";
const AGENT_PHRASINGS: &str = "agent phrasings, fused by kura";
const CLIENT_FUSED: &str = "agent phrasings, separate calls fused by the client";

/// The gold set ranked by the dense signal alone: a manual's files in the
/// order of their sections' closeness to the question. None without a
/// model in the state folder.
fn dense_alone(
    args: &EvalArgs,
    state: &std::path::Path,
    gold: &[Gold],
) -> Result<Option<Vec<Outcome>>, String> {
    let (app, _) = configure(args, state, &SWITCHES[0])?;
    let manuals = app
        .domains
        .find::<crate::manual::Manuals>()
        .ok_or("no manuals")?;
    let Some(dense) = manuals.dense_now() else {
        return Ok(None);
    };
    let mut out = Vec::new();
    for g in gold {
        let t = Instant::now();
        let prefix = format!("{}/", g.manual);
        let Some(question) = dense.question(&g.query) else {
            continue;
        };
        let near = dense.nearest(&question, &prefix, |_, _| true, 200);
        let ms = t.elapsed().as_secs_f64() * 1e3;
        let mut files: Vec<String> = Vec::new();
        for hit in near {
            let path = hit.file[prefix.len()..].to_owned();
            if !files.contains(&path) {
                files.push(path);
            }
        }
        out.push(score(&g.id, &files, &g.expected, &g.sides, ms));
    }
    Ok(Some(out))
}

/// An app over the gold set's manuals with `switch`'s stages, its index
/// built; and how long that took (ms).
fn configure(
    args: &EvalArgs,
    state: &std::path::Path,
    switch: &Switch,
) -> Result<(App, f64), String> {
    let config = Config {
        manuals_root: Some(args.root.clone()),
        state_dir: Some(state.to_owned()),
        late_rerank_enabled: switch.rerank,
        claim_graph_enabled: switch.graph,
        corrective_enabled: switch.corrective,
        dense_search_enabled: switch.dense,
        synonyms_enabled: switch.synonyms,
        translations_enabled: switch.translations,
        ..Config::default()
    };
    let app = App::start(config, crate::CATALOG).map_err(|e| e.to_string())?;
    let t = Instant::now();
    let manuals = app
        .domains
        .find::<crate::manual::Manuals>()
        .ok_or("no manuals")?;
    manuals.refresh().map_err(|e| e.message)?;
    let index_ms = t.elapsed().as_secs_f64() * 1e3;
    // With a model in the state folder, the queries wait for the vectors.
    manuals.dense_now();
    Ok((app, index_ms))
}

/// The figures of one half of the gold set.
struct Split {
    total: Figures,
    per_manual: BTreeMap<String, Figures>,
    per_kind: BTreeMap<String, Figures>,
    /// By gold set and direction (`hard, ja → en`).
    per_set: BTreeMap<String, Figures>,
}

/// One configuration's run over the gold set, measured every way reported.
struct Measured<'a> {
    gold: &'a [Gold],
    pairs: Vec<(&'a Gold, &'a Outcome)>,
    total: Figures,
    per_facet: BTreeMap<String, Figures>,
    per_lang: BTreeMap<String, Figures>,
    /// By the question's language and the manual's (`ja → en`).
    per_direction: BTreeMap<String, Figures>,
    /// Each of [`SPLITS`], in order.
    splits: Vec<(&'static str, Split)>,
}

impl<'a> Measured<'a> {
    fn of(gold: &'a [Gold], outcomes: &'a [Outcome]) -> Measured<'a> {
        let all: Vec<&Outcome> = outcomes.iter().collect();
        let pairs: Vec<(&Gold, &Outcome)> = gold.iter().zip(outcomes).collect();
        let splits = SPLITS
            .iter()
            .map(|&split| {
                let part: Vec<(&Gold, &Outcome)> = pairs
                    .iter()
                    .filter(|(g, _)| g.split == split)
                    .copied()
                    .collect();
                let outs: Vec<&Outcome> = part.iter().map(|(_, o)| *o).collect();
                let figures = Split {
                    total: figures(&outs),
                    per_manual: group(&part, |g| g.manual.clone()),
                    per_kind: group(&part, |g| g.kind.clone()),
                    per_set: group(&part, |g| {
                        format!("{}, {} → {}", g.set, g.lang, g.manual_lang)
                    }),
                };
                (split, figures)
            })
            .collect();
        Measured {
            gold,
            total: figures(&all),
            per_facet: group(&pairs, |g| g.facet.clone()),
            per_lang: group(&pairs, |g| g.lang.clone()),
            per_direction: group(&pairs, |g| {
                let to = if g.manual_lang.is_empty() {
                    "?"
                } else {
                    &g.manual_lang
                };
                format!("{} → {to}", g.lang)
            }),
            pairs,
            splits,
        }
    }

    /// The `--json` entry of this configuration.
    fn json(&self, index_ms: f64) -> Value {
        let split = |name: &str| {
            self.splits.iter().find(|(s, _)| *s == name).map(|(_, f)| {
                json!({ "total": f.total, "per_manual": f.per_manual, "per_kind": f.per_kind, "per_set": f.per_set })
            })
        };
        let queries: Vec<&Outcome> = self.pairs.iter().map(|(_, o)| *o).collect();
        json!({
            "total": self.total,
            "per_facet": self.per_facet,
            "per_language": self.per_lang,
            "per_direction": self.per_direction,
            "dev": split("dev"),
            "test": split("test"),
            "blind": split("blind"),
            "index_ms": index_ms,
            "queries": queries,
        })
    }

    /// The tables printed for the default configuration.
    fn tables(&self, args: &EvalArgs, index_ms: f64) -> String {
        let n = |split: &str| self.gold.iter().filter(|g| g.split == split).count();
        let mut table = format!(
            "kura eval: {} queries ({} dev, {} test), manuals at {} (index built in {:.0} ms)\n\n",
            self.gold.len(),
            n("dev"),
            n("test"),
            args.root.display(),
            index_ms
        );
        for (split, f) in &self.splits {
            if n(split) == 0 {
                continue;
            }
            let corpus = format!("{split}: corpus");
            table.push_str(&section(&corpus, &f.per_manual, Some(&f.total)));
            table.push_str(&section(&format!("{split}: kind"), &f.per_kind, None));
        }
        table.push_str(&section("facet (every half)", &self.per_facet, None));
        table.push_str(&section(
            "language of the query (every half)",
            &self.per_lang,
            None,
        ));
        table.push_str(&section(
            "question → manual (every half)",
            &self.per_direction,
            None,
        ));
        if args.verbose {
            for (g, o) in &self.pairs {
                table.push_str(&format!(
                    "  {:<6} {:<4} rank {:<4} {:>7.2} ms  {}\n",
                    g.id,
                    g.split,
                    o.rank.map_or("-".to_owned(), |r| r.to_string()),
                    o.ms,
                    g.query
                ));
                if o.rank != Some(1) {
                    table.push_str(&format!("         top: {}\n", o.top.join(" | ")));
                }
            }
            table.push('\n');
        }
        table
    }
}

/// A titled table of figures, one row per group (then `all`, when given),
/// and a blank line.
fn section(title: &str, groups: &BTreeMap<String, Figures>, all: Option<&Figures>) -> String {
    let mut t = header(title);
    for (k, f) in groups {
        t.push_str(&row(k, f));
    }
    if let Some(f) = all {
        t.push_str(&row("all", f));
    }
    t.push('\n');
    t
}

/// The halves of the gold set: tuned on, and reported only.
const SPLITS: [&str; 3] = ["dev", "test", "blind"];

/// Figures per value of `key`.
fn group(pairs: &[(&Gold, &Outcome)], key: impl Fn(&Gold) -> String) -> BTreeMap<String, Figures> {
    let mut groups: BTreeMap<String, Vec<&Outcome>> = BTreeMap::new();
    for (g, o) in pairs {
        groups.entry(key(g)).or_default().push(o);
    }
    groups.into_iter().map(|(k, v)| (k, figures(&v))).collect()
}

fn header(first: &str) -> String {
    format!(
        "{first:<44} {:>5} {:>7} {:>9} {:>7} {:>8} {:>7} {:>8} {:>8}\n",
        "n", "hit@5", "recall@5", "MRR@5", "nDCG@10", "both@5", "p50 ms", "p95 ms"
    )
}

fn row(name: &str, f: &Figures) -> String {
    let both = f.both_at_5.map_or("-".to_owned(), |b| format!("{b:.3}"));
    format!(
        "{name:<44} {:>5} {:>7.3} {:>9.3} {:>7.3} {:>8.3} {both:>7} {:>8.2} {:>8.2}\n",
        f.queries, f.hit_at_5, f.recall_at_5, f.mrr_at_5, f.ndcg_at_10, f.p50_ms, f.p95_ms
    )
}

#[cfg(test)]
mod tests {
    use super::*;
    use clap::Parser;

    #[derive(Parser)]
    struct Cli {
        #[command(flatten)]
        eval: EvalArgs,
    }

    fn names(args: &[&str]) -> Result<Vec<&'static str>, String> {
        let cli = Cli::try_parse_from(std::iter::once("eval").chain(args.iter().copied()))
            .map_err(|e| e.to_string())?;
        Ok(chosen(&cli.eval)?.iter().map(|s| s.name).collect())
    }

    #[test]
    fn eval_runs_the_configurations_asked_for_in_the_reports_order() {
        assert_eq!(names(&[]).unwrap().len(), SWITCHES.len());
        assert_eq!(
            names(&["--quick"]).unwrap(),
            [SWITCHES[0].name, AGENT_PHRASINGS]
        );
        assert_eq!(
            names(&[
                "--configuration",
                "no reranker",
                "--configuration",
                "default (reranker + claim graph)"
            ])
            .unwrap(),
            ["default (reranker + claim graph)", "no reranker"]
        );
        assert!(names(&["--quick", "--configuration", "no reranker"]).is_err());
        let e = names(&["--configuration", "no such"]).unwrap_err();
        assert!(
            e.contains("\"no such\"") && e.contains("no claim graph"),
            "{e}"
        );
    }

    fn s(v: &[&str]) -> Vec<String> {
        v.iter().map(|x| (*x).to_owned()).collect()
    }

    #[test]
    fn measures_of_a_ranked_list() {
        let o = score("q", &s(&["a", "b", "c"]), &s(&["b", "x"]), &[], 1.0);
        assert_eq!(o.rank, Some(2));
        assert_eq!(o.hit5, 1.0);
        assert_eq!(o.recall5, 0.5);
        assert_eq!(o.rr5, 0.5);
        let ideal = 1.0 + 1.0 / 3f64.log2();
        assert!((o.ndcg10 - (1.0 / 3f64.log2()) / ideal).abs() < 1e-9);
        let miss = score(
            "q",
            &s(&["a", "b", "c", "d", "e", "f"]),
            &s(&["f"]),
            &[],
            1.0,
        );
        assert_eq!((miss.rank, miss.hit5, miss.rr5), (Some(6), 0.0, 0.0));
        assert_eq!(miss.both5, None);
    }

    #[test]
    fn a_comparison_counts_when_every_side_is_in_the_top_5() {
        let sides = vec![s(&["a1", "a2"]), s(&["b"])];
        let both = score(
            "q",
            &s(&["x", "a2", "y", "b"]),
            &s(&["a1", "a2", "b"]),
            &sides,
            1.0,
        );
        assert_eq!(both.both5, Some(1.0));
        let one = score(
            "q",
            &s(&["a1", "x", "y", "z", "w", "b"]),
            &s(&["a1", "b"]),
            &sides,
            1.0,
        );
        assert_eq!(one.both5, Some(0.0));
        assert_eq!(one.hit5, 1.0);
    }
}
