//! `kura-bench plugins`: the same reranker (token overlap) in Rust, Python
//! and JavaScript over the same 200 candidates — called natively, and as
//! components (compile, cached load, instantiate, an empty call,
//! instantiate + call). The components are the repository's examples as the
//! tests build them (`cargo test --release -p kura-tests --test examples`
//! writes `target/examples/`); the JavaScript one compiled ahead of time is
//! measured when `just bench-plugins-aot` has built it.

use std::path::{Path, PathBuf};
use std::time::{Duration, Instant};

use kura::plugins::check::{RerankBench, rerank_candidates, sample_candidates};

const QUERY: &str = "算出プロパティ キャッシュ computed cache";

fn ms(d: Duration) -> String {
    format!("{:.3}", d.as_secs_f64() * 1e3)
}

fn median(mut v: Vec<Duration>) -> Duration {
    v.sort();
    v[v.len() / 2]
}

/// A component's timings over the rounds.
struct Timings {
    bench: RerankBench,
    instantiate: Vec<Duration>,
    empty_call: Vec<Duration>,
    call: Vec<Duration>,
}

pub fn run(target: &Path, rounds: usize) -> anyhow::Result<()> {
    let rounds = rounds.max(1);
    let candidates = sample_candidates();
    let list = rerank_candidates(&candidates);
    let builds: [(&str, PathBuf); 4] = [
        (
            "Rust wasm",
            target.join("guests/wasm32-wasip2/release/kura_example_reranker.wasm"),
        ),
        ("Python wasm", target.join("examples/python-reranker.wasm")),
        ("JS wasm", target.join("examples/js-reranker.wasm")),
        ("JS wasm AOT", target.join("examples/js-reranker-aot.wasm")),
    ];
    let mut measured = Vec::new();
    let mut missing = Vec::new();
    for (name, path) in builds {
        if !path.exists() {
            missing.push(format!("{name:<14} (not built: {})", path.display()));
            continue;
        }
        let bench = RerankBench::new(&path).map_err(anyhow::Error::msg)?;
        measured.push((
            name,
            Timings {
                bench,
                instantiate: Vec::with_capacity(rounds),
                empty_call: Vec::with_capacity(rounds),
                call: Vec::with_capacity(rounds),
            },
        ));
    }
    // Round after round, every build once: the machine's slower stretches
    // weigh on all of them alike, so their ratios hold.
    let mut native = Vec::with_capacity(rounds);
    for _ in 0..rounds {
        let t = Instant::now();
        let native_scores = kura_example_reranker::rerank(
            QUERY,
            candidates.iter().map(|(_, h, t)| (h.as_str(), t.as_str())),
        );
        native.push(t.elapsed());
        for (name, m) in &mut measured {
            let r = m.bench.round(QUERY, &list).map_err(anyhow::Error::msg)?;
            anyhow::ensure!(
                r.scores == native_scores,
                "{name} scores differ from the native ones"
            );
            m.instantiate.push(r.instantiate);
            m.empty_call.push(r.empty_call);
            m.call.push(r.call);
        }
    }
    println!(
        "same reranker, {} candidates of ~{} bytes, median of {rounds} interleaved rounds (ms)",
        candidates.len(),
        candidates[0].2.len()
    );
    println!(
        "{:<14} {:>9} {:>11} {:>12} {:>12} {:>11} {:>16} {:>10}",
        "build",
        "size MiB",
        "compile",
        "cached load",
        "instantiate",
        "empty call",
        "instantiate+call",
        "vs native"
    );
    let n = median(native);
    println!(
        "{:<14} {:>9} {:>11} {:>12} {:>12} {:>11} {:>16} {:>10}",
        "native Rust",
        "-",
        "-",
        "-",
        "-",
        "-",
        ms(n),
        "1.0×"
    );
    for (name, m) in measured {
        let call = median(m.call);
        println!(
            "{:<14} {:>9.1} {:>11} {:>12} {:>12} {:>11} {:>16} {:>9.1}×",
            name,
            m.bench.size as f64 / 1048576.0,
            ms(m.bench.compile),
            ms(m.bench.cached_load),
            ms(median(m.instantiate)),
            ms(median(m.empty_call)),
            ms(call),
            call.as_secs_f64() / n.as_secs_f64()
        );
    }
    for line in missing {
        println!("{line}");
    }
    Ok(())
}
