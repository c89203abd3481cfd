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
mod graph;
mod history;
mod http;
mod manual;
mod model;
mod plugins;
mod soak;
mod vault;
mod vibe;

use std::path::PathBuf;
use std::time::{Duration, Instant};

use clap::{Parser, Subcommand};
use serde_json::Value;

use kura::eval::load_gold;

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
    /// The sentence encoder: load, a query's embedding, sections per second.
    Model {
        /// A state folder holding the installed model (`kura models install`).
        #[arg(long)]
        state_dir: PathBuf,
        #[arg(long, default_value = "fixtures/corpora")]
        corpora: PathBuf,
        #[arg(long, default_value = "fixtures/eval/gold.jsonl")]
        gold: PathBuf,
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
        #[command(flatten)]
        size: VaultSize,
        /// Queries: the gold set's text.
        #[arg(long, default_value = "fixtures/eval/gold.jsonl")]
        gold: PathBuf,
        #[arg(long, default_value_t = 5)]
        rounds: usize,
        #[command(flatten)]
        measure: Measure,
    },
    /// The vault's links, tags and properties on a generated linked vault:
    /// the graph built from files, catch-up after an edit, backlinks, a
    /// tag and property query, and a move that rewrites 500 links.
    Graph {
        #[command(flatten)]
        size: VaultSize,
        #[arg(long, default_value_t = 5)]
        rounds: usize,
        #[command(flatten)]
        measure: Measure,
    },
    /// What keeping every change costs: a write without and with history,
    /// one note's history listed among `--changes` changes, size on disk.
    History {
        #[arg(long, default_value_t = 300)]
        writes: usize,
        #[arg(long, default_value_t = 100_000)]
        changes: usize,
        #[arg(long)]
        json: bool,
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
        /// A state folder with the sentence encoder installed (`kura models
        /// install --state-dir DIR`): serve with the dense signal, and
        /// measure its build and memory too.
        #[arg(long)]
        model: Option<PathBuf>,
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

/// A generated vault's size (`kura-bench vault` and `graph`).
#[derive(clap::Args, Clone)]
struct VaultSize {
    /// Where the original manuals are (the notes are made of their sections).
    #[arg(long, default_value = "fixtures/corpora")]
    source: PathBuf,
    #[arg(long, default_value_t = 5_000)]
    notes: u64,
    #[arg(long, default_value_t = 10)]
    megabytes: u64,
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
    proc_status_mib(pid, "VmHWM:")
}

/// A memory field of `/proc/PID/status` (`VmHWM:`, `VmRSS:`), in MiB.
fn proc_status_mib(pid: &str, field: &str) -> Option<f64> {
    let status = std::fs::read_to_string(format!("/proc/{pid}/status")).ok()?;
    let line = status.lines().find(|l| l.starts_with(field))?;
    let kib: f64 = line.split_whitespace().nth(1)?.parse().ok()?;
    Some(kib / 1024.0)
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

/// A result as one JSON object, or printed for a person.
fn emit(r: &Value, json: bool, print: fn(&Value)) {
    if json {
        println!("{r}");
    } else {
        print(r);
    }
}

/// Generate a scaled corpus of `size` in `out`, saying how long it took.
fn generate_into(size: &Size, out: &std::path::Path) -> anyhow::Result<()> {
    let t = Instant::now();
    let g = corpus::generate(&size.source, out, size.files, size.megabytes, size.seed)?;
    eprintln!(
        "generated {} files, {:.1} MB in {:.1} s",
        g.files,
        g.bytes as f64 / 1048576.0,
        t.elapsed().as_secs_f64()
    );
    Ok(())
}

#[tokio::main(flavor = "multi_thread", worker_threads = 2)]
async fn main() -> anyhow::Result<()> {
    match Cli::parse().command {
        Command::Plugins { target, rounds } => plugins::run(&target, rounds)?,
        Command::Model {
            state_dir,
            corpora,
            gold,
        } => {
            let gold = load_gold(&gold).map_err(|e| anyhow::anyhow!(e))?;
            model::run(&state_dir, &corpora, &gold)?;
        }
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
            size,
            gold,
            rounds,
            measure,
        } => {
            let gold = load_gold(&gold).map_err(|e| anyhow::anyhow!(e))?;
            let kura_bin = kura_binary(measure.kura)?;
            let r = vault::run(&size, &gold, rounds, &kura_bin).await?;
            emit(&r, measure.json, vault::print);
        }
        Command::History {
            writes,
            changes,
            json,
        } => history::run(writes, changes, json)?,
        Command::Graph {
            size,
            rounds,
            measure,
        } => {
            let kura_bin = kura_binary(measure.kura)?;
            let r = graph::run(&size, rounds, &kura_bin).await?;
            emit(&r, measure.json, graph::print);
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
            emit(&r, measure.json, vibe::print);
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
                mix: http::mix(&mix)?,
                settings,
            };
            let r = http::run(&options, gold, &kura_bin).await?;
            emit(&r, measure.json, http::print);
        }
        Command::Run {
            corpus,
            size,
            gold,
            rounds,
            model,
            measure,
        } => {
            let gold = load_gold(&gold).map_err(|e| anyhow::anyhow!(e))?;
            let kura_bin = kura_binary(measure.kura)?;
            let tmp;
            let corpus = match corpus {
                Some(c) => c,
                None => {
                    tmp = tempfile::tempdir()?;
                    generate_into(&size, tmp.path())?;
                    tmp.path().to_owned()
                }
            };
            let r = manual::run(&corpus, &gold, rounds, model.as_deref(), &kura_bin).await?;
            emit(&r, measure.json, manual::print);
        }
    }
    Ok(())
}
