//! `kura-bench plugins`: the same reranker (token overlap) in Rust, Python
//! and JavaScript over the same 200 candidates — called natively, and as
//! components (compile, cached load, instantiate, instantiate + call).
//! The components are the repository's examples as the tests build them
//! (`cargo test --release -p kura-tests --test examples` writes
//! `target/examples/`).

use std::path::{Path, PathBuf};
use std::time::{Duration, Instant};

use kura::plugins::check::{measure_reranker, sample_candidates};

const QUERY: &str = "算出プロパティ キャッシュ computed cache";

fn ms(d: Duration) -> String {
    format!("{:.3}", d.as_secs_f64() * 1e3)
}

pub fn run(target: &Path, rounds: usize) -> anyhow::Result<()> {
    let candidates = sample_candidates();
    let mut native = Vec::with_capacity(rounds);
    let mut native_scores = Vec::new();
    for _ in 0..rounds {
        let t = Instant::now();
        native_scores = kura_example_reranker::rerank(
            QUERY,
            candidates.iter().map(|(_, h, t)| (h.as_str(), t.as_str())),
        );
        native.push(t.elapsed());
    }
    native.sort();
    println!(
        "same reranker, {} candidates of ~{} bytes, median of {rounds} rounds (ms)",
        candidates.len(),
        candidates[0].2.len()
    );
    println!(
        "{:<14} {:>9} {:>11} {:>12} {:>12} {:>16} {:>10}",
        "build",
        "size MiB",
        "compile",
        "cached load",
        "instantiate",
        "instantiate+call",
        "vs native"
    );
    let n = native[native.len() / 2];
    println!(
        "{:<14} {:>9} {:>11} {:>12} {:>12} {:>16} {:>10}",
        "native Rust",
        "-",
        "-",
        "-",
        "-",
        ms(n),
        "1.0×"
    );
    let builds: [(&str, PathBuf); 3] = [
        (
            "Rust wasm",
            target.join("guests/wasm32-wasip2/release/kura_example_reranker.wasm"),
        ),
        ("Python wasm", target.join("examples/python-reranker.wasm")),
        ("JS wasm", target.join("examples/js-reranker.wasm")),
    ];
    for (name, path) in builds {
        if !path.exists() {
            println!("{name:<14} (not built: {})", path.display());
            continue;
        }
        let c = measure_reranker(&path, QUERY, &candidates, rounds).map_err(anyhow::Error::msg)?;
        anyhow::ensure!(
            c.scores == native_scores,
            "{name} scores differ from the native ones"
        );
        println!(
            "{:<14} {:>9.1} {:>11} {:>12} {:>12} {:>16} {:>9.1}×",
            name,
            c.size as f64 / 1048576.0,
            ms(c.compile),
            ms(c.cached_load),
            ms(c.instantiate),
            ms(c.per_call),
            c.per_call.as_secs_f64() / n.as_secs_f64()
        );
    }
    Ok(())
}
