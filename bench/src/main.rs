//! `kura-bench`: manual search and vault discovery at scale.
//!
//! `kura-bench gen` writes a scaled corpus (10,000 files / ~100 MB by
//! default) from the bundled manuals; `kura-bench run` measures on it: the
//! index build (MB/s, one indexing thread), the no-change re-check, manual_find
//! over stdio against the real `kura` binary with reranker and claim graph on
//! (p50/p95/p99, hit@5 on the gold set), the server's peak RSS, and the same
//! gold queries on an SQLite FTS5 trigram index of the same sections, as
//! ratios. `kura-bench vault` measures vault_find and artifact_audit on a
//! generated vault (see `vault.rs`); `kura-bench vibe` the vibe workspace
//! tools on 11,500 generated documents (see `vibe.rs`); `kura-bench http`
//! many clients at once over Streamable HTTP (see `http.rs`).

#![allow(clippy::disallowed_methods)] // a bench tool: reads its corpus, not the server

mod corpus;
mod fts;
mod http;
mod plugins;
mod soak;
mod vault;
mod vibe;

use std::path::{Path, PathBuf};
use std::time::{Duration, Instant};

use clap::{Parser, Subcommand};
use serde_json::{Value, json};

use kura::app::App;
use kura::client::Session;
use kura::config::Config;
use kura::eval::{Gold, load_gold, score};

#[derive(Parser)]
#[command(
    name = "kura-bench",
    about = "Scaled-corpus benchmark of kura's manual search"
)]
struct Cli {
    #[command(subcommand)]
    command: Command,
}

#[derive(Subcommand)]
enum Command {
    /// The same reranker natively and as Rust, Python and JS components:
    /// compile, cached load, instantiate, per call.
    Plugins {
        /// The target folder holding guests/ and examples/.
        #[arg(long, default_value = "target")]
        target: PathBuf,
        #[arg(long, default_value_t = 50)]
        rounds: usize,
    },
    /// Write a scaled corpus.
    Gen {
        #[arg(long)]
        out: PathBuf,
        #[command(flatten)]
        size: Size,
    },
    /// vault_find and artifact_audit over stdio on a generated vault.
    Vault {
        /// Where the original manuals are (the notes are made of their sections).
        #[arg(long, default_value = "fixtures/corpora")]
        source: PathBuf,
        #[arg(long, default_value_t = 5_000)]
        notes: u64,
        #[arg(long, default_value_t = 10)]
        megabytes: u64,
        /// Queries: the gold set's text.
        #[arg(long, default_value = "fixtures/eval/gold.jsonl")]
        gold: PathBuf,
        #[arg(long, default_value_t = 5)]
        rounds: usize,
        #[command(flatten)]
        measure: Measure,
    },
    /// Write a generated vibe workspace (230 documents per project).
    VibeGen {
        #[arg(long)]
        out: PathBuf,
        #[arg(long, default_value = "fixtures/corpora")]
        source: PathBuf,
        #[arg(long, default_value_t = 50)]
        projects: usize,
    },
    /// reindex and search over stdio on a generated vibe workspace (230 documents per project).
    Vibe {
        /// Where the original manuals are (the prose is made of their lines).
        #[arg(long, default_value = "fixtures/corpora")]
        source: PathBuf,
        #[arg(long, default_value_t = 50)]
        projects: usize,
        #[arg(long, default_value_t = 5)]
        rounds: usize,
        #[command(flatten)]
        measure: Measure,
    },
    /// Many clients at once over Streamable HTTP: manual_find, vault_read
    /// and search on the bench corpora, against one client alone.
    Http {
        /// A generated manual corpus (default: generate one in a temporary folder).
        #[arg(long)]
        corpus: Option<PathBuf>,
        #[command(flatten)]
        size: Size,
        #[arg(long, default_value = "fixtures/eval/gold.jsonl")]
        gold: PathBuf,
        /// Concurrent clients, each in its own session.
        #[arg(long, default_value_t = 50)]
        clients: usize,
        /// Calls per client (the lone client makes three times as many).
        #[arg(long, default_value_t = 60)]
        calls: usize,
        /// Vibe projects (230 documents each).
        #[arg(long, default_value_t = 20)]
        projects: usize,
        /// The tools each client calls in turn.
        #[arg(
            long,
            value_delimiter = ',',
            default_value = "manual_find,vault_read,search"
        )]
        mix: Vec<String>,
        /// A setting for the server, e.g. --set max_concurrent_calls=8 (repeatable).
        #[arg(long = "set")]
        settings: Vec<String>,
        /// Afterwards, open this many sessions and abandon them, three
        /// times, and show the server's memory once they idled out.
        #[arg(long, default_value_t = 0)]
        abandon: usize,
        /// The server's --session-idle-secs.
        #[arg(long)]
        session_idle_secs: Option<u64>,
        /// Afterwards, SECONDS of 20 clients calling every kind of tool,
        /// writes included, with the server's memory, file descriptors and
        /// threads sampled every 10 s, and their slopes.
        #[arg(long, value_name = "SECONDS")]
        soak: Option<u64>,
        /// In the soak, only read and search (no vault append, no session
        /// log): tells what the writes' growing data costs from the rest.
        #[arg(long)]
        soak_reads_only: bool,
        #[command(flatten)]
        measure: Measure,
    },
    /// Measure (generating a corpus in a temporary folder unless --corpus is given).
    Run {
        #[arg(long)]
        corpus: Option<PathBuf>,
        #[command(flatten)]
        size: Size,
        #[arg(long, default_value = "fixtures/eval/gold.jsonl")]
        gold: PathBuf,
        /// Passes over the gold queries for the latency figures.
        #[arg(long, default_value_t = 5)]
        rounds: usize,
        /// The kura binary (default: next to this one).
        #[command(flatten)]
        measure: Measure,
    },
}

/// What every measuring subcommand takes: the server to measure and how
/// to print.
#[derive(clap::Args, Clone)]
struct Measure {
    /// The kura binary (default: next to this one).
    #[arg(long)]
    kura: Option<PathBuf>,
    /// Print one JSON object.
    #[arg(long)]
    json: bool,
}

#[derive(clap::Args, Clone)]
struct Size {
    /// Where the original manuals are.
    #[arg(long, default_value = "fixtures/corpora")]
    source: PathBuf,
    #[arg(long, default_value_t = 10_000)]
    files: u64,
    #[arg(long, default_value_t = 100)]
    megabytes: u64,
    #[arg(long, default_value_t = 42)]
    seed: u64,
}

fn percentile(sorted: &[f64], q: f64) -> f64 {
    if sorted.is_empty() {
        return 0.0;
    }
    sorted[((sorted.len() as f64 - 1.0) * q).round() as usize]
}

fn ms(d: Duration) -> f64 {
    d.as_secs_f64() * 1e3
}

fn peak_rss_mib(pid: &str) -> Option<f64> {
    let status = std::fs::read_to_string(format!("/proc/{pid}/status")).ok()?;
    let line = status.lines().find(|l| l.starts_with("VmHWM:"))?;
    let kib: f64 = line.split_whitespace().nth(1)?.parse().ok()?;
    Some(kib / 1024.0)
}

/// Every manual file under `root` (inside a manual folder), as (relative
/// path, absolute path, size), sorted.
fn list_corpus(root: &Path) -> anyhow::Result<Vec<(String, PathBuf, u64)>> {
    let mut out = Vec::new();
    let mut stack = vec![root.to_path_buf()];
    while let Some(dir) = stack.pop() {
        for e in std::fs::read_dir(&dir)?.flatten() {
            let p = e.path();
            if e.file_type()?.is_dir() {
                stack.push(p);
            } else if matches!(p.extension().and_then(|x| x.to_str()), Some("md" | "json")) {
                let rel = p.strip_prefix(root)?.to_string_lossy().replace('\\', "/");
                if rel.contains('/') {
                    let size = e.metadata()?.len();
                    out.push((rel, p, size));
                }
            }
        }
    }
    out.sort();
    Ok(out)
}

/// The texts of the listed files, as (relative path, text).
fn read_corpus(listed: &[(String, PathBuf, u64)]) -> Vec<(String, String)> {
    listed
        .iter()
        .map(|(rel, p, _)| (rel.clone(), std::fs::read_to_string(p).unwrap_or_default()))
        .collect()
}

fn files_of(hits: &Value, manual: &str) -> Vec<String> {
    let shared = hits["manual_id"].as_str();
    let mut files: Vec<String> = Vec::new();
    for item in hits["items"].as_array().into_iter().flatten() {
        let r = &item["ref"];
        if r["manual_id"].as_str().or(shared) != Some(manual) {
            continue;
        }
        let p = r["path"].as_str().unwrap_or_default().to_owned();
        if !files.contains(&p) {
            files.push(p);
        }
    }
    files
}

fn structured(r: &rmcp::model::CallToolResult) -> anyhow::Result<Value> {
    anyhow::ensure!(
        r.is_error != Some(true),
        "tool error: {:?}",
        r.structured_content
    );
    r.structured_content
        .clone()
        .ok_or_else(|| anyhow::anyhow!("no structuredContent"))
}

async fn run(
    corpus: &Path,
    gold: &[Gold],
    rounds: usize,
    kura_bin: &Path,
) -> anyhow::Result<Value> {
    let listed = list_corpus(corpus)?;
    let bytes: u64 = listed.iter().map(|(_, _, n)| n).sum();
    let mb = bytes as f64 / (1u64 << 20) as f64;
    eprintln!("corpus: {} files, {:.1} MB", listed.len(), mb);

    // 1. Index build and re-check, in process.
    let state = tempfile::tempdir()?;
    let config = Config {
        manuals_root: Some(corpus.to_owned()),
        state_dir: Some(state.path().to_owned()),
        ..Config::default()
    };
    let app = App::start(config, kura::CATALOG).map_err(|e| anyhow::anyhow!(e.to_string()))?;
    let manuals = app
        .domains
        .shared::<kura::manual::Manuals>()
        .ok_or_else(|| anyhow::anyhow!("no manuals"))?;
    let t = Instant::now();
    let stats = manuals.recheck().map_err(|e| anyhow::anyhow!(e.message))?;
    let build = t.elapsed();
    eprintln!("index: {} files in {:.0} ms", stats.added, ms(build));
    let index_rss = peak_rss_mib("self");
    let mut rechecks = Vec::new();
    for _ in 0..5 {
        let t = Instant::now();
        let s = manuals.recheck().map_err(|e| anyhow::anyhow!(e.message))?;
        anyhow::ensure!(
            s.added + s.updated + s.deleted == 0,
            "corpus changed during re-check"
        );
        rechecks.push(ms(t.elapsed()));
    }
    rechecks.sort_by(f64::total_cmp);
    drop(app);
    drop(manuals);

    // 2. `initialize` while the server indexes the whole corpus from scratch
    // (the compiled components are copied over: their one-time compilation
    // is `kura bench`'s cold start, not indexing).
    let fresh = tempfile::tempdir()?;
    std::fs::write(fresh.path().join("none.toml"), "")?;
    std::fs::create_dir_all(fresh.path().join("components"))?;
    for e in std::fs::read_dir(state.path().join("components"))?.flatten() {
        std::fs::copy(
            e.path(),
            fresh.path().join("components").join(e.file_name()),
        )?;
    }
    let t = Instant::now();
    let cold = Session::spawn(
        kura_bin,
        &[
            "--manuals-root".to_owned(),
            corpus.display().to_string(),
            "--state-dir".to_owned(),
            fresh.path().display().to_string(),
            "--config".to_owned(),
            fresh.path().join("none.toml").display().to_string(),
        ],
    )
    .await?;
    let init_ms = ms(t.elapsed());
    cold.close().await?;

    // 3. manual_find over stdio, on the index just built.
    let args = vec![
        "--manuals-root".to_owned(),
        corpus.display().to_string(),
        "--state-dir".to_owned(),
        state.path().display().to_string(),
        "--config".to_owned(),
        state.path().join("none.toml").display().to_string(),
    ];
    std::fs::write(state.path().join("none.toml"), "")?;
    let s = Session::spawn(kura_bin, &args).await?;
    // The first call waits for the start-up re-check; it is not timed.
    s.call(
        "manual_find",
        json!({"query": "warm up", "use_cache": false}),
    )
    .await?;
    let mut lat = Vec::new();
    let mut kura_hits = Vec::new();
    for round in 0..rounds {
        for g in gold {
            let t = Instant::now();
            let r = s
                .call(
                    "manual_find",
                    json!({"query": g.query, "manual_id": g.manual, "use_cache": false}),
                )
                .await?;
            lat.push(ms(t.elapsed()));
            if round == 0 {
                let found = structured(&r)?;
                let h = s
                    .call(
                        "manual_hits",
                        json!({"trace_id": found["trace_id"], "limit": 200}),
                    )
                    .await?;
                let files = files_of(&structured(&h)?, &g.manual);
                kura_hits.push(score(&g.id, &files, &g.expected, &g.sides, 0.0).hit5);
            }
        }
    }
    lat.sort_by(f64::total_cmp);
    let serve_rss = s.pid.and_then(|p| peak_rss_mib(&p.to_string()));
    s.close().await?;

    // 4. The FTS5 baseline on the same sections and queries.
    let files = read_corpus(&listed);
    let t = Instant::now();
    let fts = fts::Fts::build(&files)?;
    let fts_build = t.elapsed();
    let mut fts_lat = Vec::new();
    let mut fts_hits = Vec::new();
    for round in 0..rounds {
        for g in gold {
            let t = Instant::now();
            let paths = fts.search(&g.manual, &g.query, 200)?;
            fts_lat.push(ms(t.elapsed()));
            if round == 0 {
                let mut files: Vec<String> = Vec::new();
                for p in paths {
                    if !files.contains(&p) {
                        files.push(p);
                    }
                }
                fts_hits.push(score(&g.id, &files, &g.expected, &g.sides, 0.0).hit5);
            }
        }
    }
    fts_lat.sort_by(f64::total_cmp);
    let mean = |v: &[f64]| v.iter().sum::<f64>() / v.len().max(1) as f64;
    let r3 = |x: f64| (x * 1000.0).round() / 1000.0;
    let (k50, k95, k99) = (
        percentile(&lat, 0.5),
        percentile(&lat, 0.95),
        percentile(&lat, 0.99),
    );
    let (f50, f95, f99) = (
        percentile(&fts_lat, 0.5),
        percentile(&fts_lat, 0.95),
        percentile(&fts_lat, 0.99),
    );
    Ok(json!({
        "corpus": { "files": listed.len(), "megabytes": r3(mb) },
        "index": {
            "build_ms": r3(ms(build)),
            "mb_per_s": r3(mb / build.as_secs_f64()),
            "peak_rss_mib": index_rss.map(r3),
        },
        "initialize_while_indexing_ms": r3(init_ms),
        "recheck_ms": { "p50": r3(percentile(&rechecks, 0.5)), "max": r3(*rechecks.last().unwrap_or(&0.0)) },
        "manual_find_stdio_ms": { "p50": r3(k50), "p95": r3(k95), "p99": r3(k99), "n": lat.len() },
        "serve_peak_rss_mib": serve_rss.map(r3),
        "hit_at_5": r3(mean(&kura_hits)),
        "fts5": {
            "build_ms": r3(ms(fts_build)),
            "query_ms": { "p50": r3(f50), "p95": r3(f95), "p99": r3(f99) },
            "hit_at_5": r3(mean(&fts_hits)),
        },
        "ratios": {
            "latency_p50_kura_over_fts5": r3(k50 / f50.max(1e-9)),
            "latency_p95_kura_over_fts5": r3(k95 / f95.max(1e-9)),
            "hit_at_5_kura_over_fts5": r3(mean(&kura_hits) / mean(&fts_hits).max(1e-9)),
        },
    }))
}

fn print(r: &Value) {
    println!(
        "corpus                {} files, {} MB",
        r["corpus"]["files"], r["corpus"]["megabytes"]
    );
    println!(
        "index build           {} ms, {} MB/s (one indexing thread), peak RSS {} MiB",
        r["index"]["build_ms"], r["index"]["mb_per_s"], r["index"]["peak_rss_mib"]
    );
    println!(
        "initialize            {} ms after spawn, while the server indexes the corpus from scratch",
        r["initialize_while_indexing_ms"]
    );
    println!(
        "no-change re-check    p50 {} ms, max {} ms",
        r["recheck_ms"]["p50"], r["recheck_ms"]["max"]
    );
    println!(
        "manual_find (stdio)   p50 {} ms, p95 {} ms, p99 {} ms over {} calls; hit@5 {}",
        r["manual_find_stdio_ms"]["p50"],
        r["manual_find_stdio_ms"]["p95"],
        r["manual_find_stdio_ms"]["p99"],
        r["manual_find_stdio_ms"]["n"],
        r["hit_at_5"]
    );
    println!("server peak RSS       {} MiB", r["serve_peak_rss_mib"]);
    println!(
        "FTS5 trigram          build {} ms; query p50 {} ms, p95 {} ms, p99 {} ms; hit@5 {}",
        r["fts5"]["build_ms"],
        r["fts5"]["query_ms"]["p50"],
        r["fts5"]["query_ms"]["p95"],
        r["fts5"]["query_ms"]["p99"],
        r["fts5"]["hit_at_5"]
    );
    println!(
        "ratios kura/FTS5      latency p50 {}x, p95 {}x; hit@5 {}x",
        r["ratios"]["latency_p50_kura_over_fts5"],
        r["ratios"]["latency_p95_kura_over_fts5"],
        r["ratios"]["hit_at_5_kura_over_fts5"]
    );
}

/// The kura binary: as given, or next to this one.
fn kura_binary(given: Option<PathBuf>) -> anyhow::Result<PathBuf> {
    let kura_bin = match given {
        Some(k) => k,
        None => std::env::current_exe()?
            .parent()
            .map(|d| d.join("kura"))
            .ok_or_else(|| anyhow::anyhow!("no kura binary beside kura-bench"))?,
    };
    anyhow::ensure!(
        kura_bin.is_file(),
        "{} not found: build it first (cargo build --release -p kura)",
        kura_bin.display()
    );
    Ok(kura_bin)
}

#[tokio::main(flavor = "multi_thread", worker_threads = 2)]
async fn main() -> anyhow::Result<()> {
    match Cli::parse().command {
        Command::Plugins { target, rounds } => plugins::run(&target, rounds)?,
        Command::Gen { out, size } => {
            let g = corpus::generate(&size.source, &out, size.files, size.megabytes, size.seed)?;
            println!(
                "{} files, {:.1} MB in {}",
                g.files,
                g.bytes as f64 / 1048576.0,
                out.display()
            );
        }
        Command::Vault {
            source,
            notes,
            megabytes,
            gold,
            rounds,
            measure,
        } => {
            let gold = load_gold(&gold).map_err(|e| anyhow::anyhow!(e))?;
            let kura_bin = kura_binary(measure.kura)?;
            let r = vault::run(&source, notes, megabytes, &gold, rounds, &kura_bin).await?;
            if measure.json {
                println!("{r}");
            } else {
                vault::print(&r);
            }
        }
        Command::VibeGen {
            out,
            source,
            projects,
        } => {
            let (files, bytes) = vibe::generate(&source, &out, projects, 5)?;
            println!(
                "{files} files, {:.1} MB in {}",
                bytes as f64 / 1048576.0,
                out.display()
            );
        }
        Command::Vibe {
            source,
            projects,
            rounds,
            measure,
        } => {
            let kura_bin = kura_binary(measure.kura)?;
            let r = vibe::run(&source, projects, rounds, &kura_bin).await?;
            if measure.json {
                println!("{r}");
            } else {
                vibe::print(&r);
            }
        }
        Command::Http {
            corpus,
            size,
            gold,
            clients,
            calls,
            projects,
            mix,
            settings,
            abandon,
            session_idle_secs,
            soak,
            soak_reads_only,
            measure,
        } => {
            let gold = load_gold(&gold).map_err(|e| anyhow::anyhow!(e))?;
            let kura_bin = kura_binary(measure.kura)?;
            let options = http::Options {
                abandon,
                session_idle_secs,
                soak,
                soak_reads_only,
                corpus,
                source: size.source,
                files: size.files,
                megabytes: size.megabytes,
                seed: size.seed,
                clients,
                calls,
                projects,
                mix: mix
                    .iter()
                    .map(|t| {
                        http::MIX.iter().position(|m| m == t).ok_or_else(|| {
                            anyhow::anyhow!("--mix: {t} is not one of {}", http::MIX.join(", "))
                        })
                    })
                    .collect::<anyhow::Result<_>>()?,
                settings,
            };
            let r = http::run(&options, gold, &kura_bin).await?;
            if measure.json {
                println!("{r}");
            } else {
                http::print(&r);
            }
        }
        Command::Run {
            corpus,
            size,
            gold,
            rounds,
            measure,
        } => {
            let gold = load_gold(&gold).map_err(|e| anyhow::anyhow!(e))?;
            let kura_bin = kura_binary(measure.kura)?;
            let tmp;
            let corpus = match corpus {
                Some(c) => c,
                None => {
                    tmp = tempfile::tempdir()?;
                    let t = Instant::now();
                    let g = corpus::generate(
                        &size.source,
                        tmp.path(),
                        size.files,
                        size.megabytes,
                        size.seed,
                    )?;
                    eprintln!(
                        "generated {} files, {:.1} MB in {:.1} s",
                        g.files,
                        g.bytes as f64 / 1048576.0,
                        t.elapsed().as_secs_f64()
                    );
                    tmp.path().to_owned()
                }
            };
            let r = run(&corpus, &gold, rounds, &kura_bin).await?;
            if measure.json {
                println!("{r}");
            } else {
                print(&r);
            }
        }
    }
    Ok(())
}
