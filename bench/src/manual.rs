//! `kura-bench run`: manual search on a scaled corpus. The index build
//! and the no-change re-check in process, `initialize` while the server
//! indexes from scratch, manual_find over stdio with hit@5 on the gold set,
//! and the same gold queries on an SQLite FTS5 trigram index of the same
//! sections, as ratios.

use std::path::{Path, PathBuf};
use std::time::{Duration, Instant};

use serde_json::{Value, json};

use kura::app::App;
use kura::client::Session;
use kura::config::Config;
use kura::eval::{Gold, files_of, score};

use crate::{fts, ms, peak_rss_mib, percentile, structured};

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

/// Latencies (sorted) and hit@5 per gold query of one engine.
struct Engine {
    lat: Vec<f64>,
    hits: Vec<f64>,
}

/// What the server showed over stdio.
struct Served {
    kura: Engine,
    peak_rss: Option<f64>,
    /// Resident anonymous memory when the search was ready, MiB.
    anon_mib: Option<f64>,
    /// Spawn to the first search with every section's vector.
    vectors_ready: Option<Duration>,
}

impl Engine {
    fn p(&self, q: f64) -> f64 {
        percentile(&self.lat, q)
    }

    fn hit5(&self) -> f64 {
        self.hits.iter().sum::<f64>() / self.hits.len().max(1) as f64
    }
}

/// The in-process index build and its no-change re-checks.
struct Built {
    build: Duration,
    index_rss: Option<f64>,
    /// Sorted, in ms.
    rechecks: Vec<f64>,
}

/// Build the index of `corpus` in `state` and re-check it five times.
fn build(corpus: &Path, state: &Path) -> anyhow::Result<Built> {
    let config = Config {
        manuals_root: Some(corpus.to_owned()),
        state_dir: Some(state.to_owned()),
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
    Ok(Built {
        build,
        index_rss,
        rechecks,
    })
}

/// `kura`'s arguments to serve `corpus` from the state folder `state`.
fn serve_args(corpus: &Path, state: &Path) -> Vec<String> {
    vec![
        "--manuals-root".to_owned(),
        corpus.display().to_string(),
        "--state-dir".to_owned(),
        state.display().to_string(),
        "--config".to_owned(),
        state.join("none.toml").display().to_string(),
    ]
}

/// `initialize` while the server indexes the whole corpus from scratch
/// (the compiled components are copied over: their one-time compilation
/// is `kura bench`'s cold start, not indexing), in ms.
async fn cold_initialize(corpus: &Path, state: &Path, kura_bin: &Path) -> anyhow::Result<f64> {
    let fresh = tempfile::tempdir()?;
    std::fs::write(fresh.path().join("none.toml"), "")?;
    std::fs::create_dir_all(fresh.path().join("components"))?;
    for e in std::fs::read_dir(state.join("components"))?.flatten() {
        std::fs::copy(
            e.path(),
            fresh.path().join("components").join(e.file_name()),
        )?;
    }
    let t = Instant::now();
    let cold = Session::spawn(kura_bin, &serve_args(corpus, fresh.path())).await?;
    let init_ms = ms(t.elapsed());
    cold.close().await?;
    Ok(init_ms)
}

/// manual_find over stdio on the index built in `state`, `rounds` passes
/// over the gold queries; hit@5 from the first. Also the server's peak RSS.
async fn stdio_find(
    corpus: &Path,
    state: &Path,
    gold: &[Gold],
    rounds: usize,
    dense: bool,
    kura_bin: &Path,
) -> anyhow::Result<Served> {
    std::fs::write(state.join("none.toml"), "")?;
    let t = Instant::now();
    let s = Session::spawn(kura_bin, &serve_args(corpus, state)).await?;
    // The first call waits for the start-up re-check; it is not timed.
    s.call(
        "manual_find",
        json!({"query": "warm up", "use_cache": false}),
    )
    .await?;
    // With the encoder: until every section has its vector, spawn to then.
    // A search says in its warnings that it matched words only until the
    // vectors are built, from the first call after the start (the vectors
    // are kept file by file as they are made, so the cache file's presence
    // says nothing).
    let mut vectors_ready = None;
    if dense {
        loop {
            let r = s
                .call(
                    "manual_find",
                    json!({"query": "warm up", "use_cache": false}),
                )
                .await?;
            let embedding = structured(&r)?["warnings"].as_array().is_some_and(|w| {
                w.iter()
                    .any(|w| w.as_str().is_some_and(|w| w.contains("matched words only")))
            });
            if !embedding {
                break;
            }
            tokio::time::sleep(Duration::from_millis(500)).await;
        }
        vectors_ready = Some(t.elapsed());
    }
    // The resident heap once the search is ready (with the encoder: its
    // weights and every section's vector).
    let anon_mib = s.pid.and_then(|p| crate::soak::status_mib(p, "RssAnon:"));
    let mut kura = Engine {
        lat: Vec::new(),
        hits: Vec::new(),
    };
    for round in 0..rounds {
        for g in gold {
            let t = Instant::now();
            let r = s
                .call(
                    "manual_find",
                    json!({"query": g.query, "manual_id": g.manual, "use_cache": false}),
                )
                .await?;
            kura.lat.push(ms(t.elapsed()));
            if round == 0 {
                let found = structured(&r)?;
                let h = s
                    .call(
                        "manual_hits",
                        json!({"trace_id": found["trace_id"], "limit": 200}),
                    )
                    .await?;
                let files = files_of(&structured(&h)?, &g.manual);
                kura.hits
                    .push(score(&g.id, &files, &g.expected, &g.sides, 0.0).hit5);
            }
        }
    }
    kura.lat.sort_by(f64::total_cmp);
    let peak_rss = s.pid.and_then(|p| peak_rss_mib(&p.to_string()));
    s.close().await?;
    Ok(Served {
        kura,
        peak_rss,
        anon_mib,
        vectors_ready,
    })
}

/// The installed models (and dictionaries) of the state folder `from`,
/// copied into the state folder `to`.
fn copy_models(from: &Path, to: &Path) -> anyhow::Result<()> {
    let mut stack = vec![PathBuf::new()];
    while let Some(rel) = stack.pop() {
        for e in std::fs::read_dir(from.join(&rel))?.flatten() {
            let name = rel.join(e.file_name());
            if rel.as_os_str().is_empty()
                && !matches!(e.file_name().to_str(), Some("models" | "synonyms"))
            {
                continue;
            }
            if e.file_type()?.is_dir() {
                std::fs::create_dir_all(to.join(&name))?;
                stack.push(name);
            } else {
                std::fs::copy(e.path(), to.join(&name))?;
            }
        }
    }
    Ok(())
}

/// The FTS5 baseline on the same sections and queries, with its build time.
fn fts_baseline(
    listed: &[(String, PathBuf, u64)],
    gold: &[Gold],
    rounds: usize,
) -> anyhow::Result<(Engine, Duration)> {
    let files = read_corpus(listed);
    let t = Instant::now();
    let fts = fts::Fts::build(&files)?;
    let fts_build = t.elapsed();
    let mut base = Engine {
        lat: Vec::new(),
        hits: Vec::new(),
    };
    for round in 0..rounds {
        for g in gold {
            let t = Instant::now();
            let paths = fts.search(&g.manual, &g.query, 200)?;
            base.lat.push(ms(t.elapsed()));
            if round == 0 {
                let mut files: Vec<String> = Vec::new();
                for p in paths {
                    if !files.contains(&p) {
                        files.push(p);
                    }
                }
                base.hits
                    .push(score(&g.id, &files, &g.expected, &g.sides, 0.0).hit5);
            }
        }
    }
    base.lat.sort_by(f64::total_cmp);
    Ok((base, fts_build))
}

pub async fn run(
    corpus: &Path,
    gold: &[Gold],
    rounds: usize,
    model: Option<&Path>,
    kura_bin: &Path,
) -> anyhow::Result<Value> {
    let listed = list_corpus(corpus)?;
    let bytes: u64 = listed.iter().map(|(_, _, n)| n).sum();
    let mb = bytes as f64 / (1u64 << 20) as f64;
    eprintln!("corpus: {} files, {:.1} MB", listed.len(), mb);
    let state = tempfile::tempdir()?;
    let built = build(corpus, state.path())?;
    let init_ms = cold_initialize(corpus, state.path(), kura_bin).await?;
    if let Some(m) = model {
        copy_models(m, state.path())?;
    }
    let served = stdio_find(
        corpus,
        state.path(),
        gold,
        rounds,
        model.is_some(),
        kura_bin,
    )
    .await?;
    let kura = &served.kura;
    let (fts, fts_build) = fts_baseline(&listed, gold, rounds)?;
    let r3 = |x: f64| (x * 1000.0).round() / 1000.0;
    let (k50, k95, k99) = (kura.p(0.5), kura.p(0.95), kura.p(0.99));
    let (f50, f95, f99) = (fts.p(0.5), fts.p(0.95), fts.p(0.99));
    Ok(json!({
        "corpus": { "files": listed.len(), "megabytes": r3(mb) },
        "index": {
            "build_ms": r3(ms(built.build)),
            "mb_per_s": r3(mb / built.build.as_secs_f64()),
            "peak_rss_mib": built.index_rss.map(r3),
        },
        "initialize_while_indexing_ms": r3(init_ms),
        "recheck_ms": { "p50": r3(percentile(&built.rechecks, 0.5)), "max": r3(*built.rechecks.last().unwrap_or(&0.0)) },
        "manual_find_stdio_ms": { "p50": r3(k50), "p95": r3(k95), "p99": r3(k99), "n": kura.lat.len() },
        "serve_peak_rss_mib": served.peak_rss.map(r3),
        "serve_anon_mib_when_ready": served.anon_mib,
        "dense": model.is_some(),
        "vectors_ready_s": served.vectors_ready.map(|d| r3(d.as_secs_f64())),
        "hit_at_5": r3(kura.hit5()),
        "fts5": {
            "build_ms": r3(ms(fts_build)),
            "query_ms": { "p50": r3(f50), "p95": r3(f95), "p99": r3(f99) },
            "hit_at_5": r3(fts.hit5()),
        },
        "ratios": {
            "latency_p50_kura_over_fts5": r3(k50 / f50.max(1e-9)),
            "latency_p95_kura_over_fts5": r3(k95 / f95.max(1e-9)),
            "hit_at_5_kura_over_fts5": r3(kura.hit5() / fts.hit5().max(1e-9)),
        },
    }))
}

pub fn print(r: &Value) {
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
    println!(
        "server memory         peak RSS {} MiB; anonymous {} MiB once searches are ready",
        r["serve_peak_rss_mib"], r["serve_anon_mib_when_ready"]
    );
    if r["dense"] == true {
        println!(
            "dense signal          on: every section had a vector {} s after spawn",
            r["vectors_ready_s"]
        );
    }
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
