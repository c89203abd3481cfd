//! `kura bench`: the foundation's performance figures, measured the way a
//! client sees them. Start-up is process spawn → `initialize` answered, cold
//! (empty component cache) and warm; reads and scans are round trips over
//! stdio; the plugin figure is one write-policy call including a fresh store
//! and instantiation.

use std::time::{Duration, Instant};

use serde_json::json;

use crate::client::Session;
use crate::config::Config;
use crate::demo::DemoData;
use crate::plugins::{WriteKind, WriteRequest};

#[derive(clap::Args, Debug, Clone)]
pub struct BenchArgs {
    /// Process starts to time, for each of cold and warm.
    #[arg(long, default_value_t = 20)]
    pub starts: usize,
    /// Round trips per tool.
    #[arg(long, default_value_t = 1000)]
    pub calls: usize,
    /// In-process write-policy calls.
    #[arg(long, default_value_t = 5000)]
    pub plugin_calls: usize,
}

struct Stats {
    p50: Duration,
    p99: Duration,
    n: usize,
}

fn stats(mut v: Vec<Duration>) -> Stats {
    v.sort();
    let at = |q: f64| v[((v.len() as f64 - 1.0) * q).round() as usize];
    Stats {
        p50: at(0.50),
        p99: at(0.99),
        n: v.len(),
    }
}

fn ms(d: Duration) -> String {
    format!("{:.3} ms", d.as_secs_f64() * 1e3)
}

pub async fn run(args: BenchArgs) -> anyhow::Result<()> {
    let data = DemoData::create()?;
    let empty = data.path().join("empty.toml");
    crate::fs::materialize(data.path(), &[("empty.toml", b"")])?;
    let b = Bench {
        exe: std::env::current_exe()?,
        warm_state: data.path().join("state-warm"),
        empty,
        data,
    };
    println!(
        "kura bench ({} cores)",
        std::thread::available_parallelism()
            .map(|n| n.get())
            .unwrap_or(1)
    );
    start_up(&b, &args).await?;
    tool_calls(&b, &args).await?;
    write_decision(&b, &args)
}

/// What every part of the bench runs on: the binary, the demo data.
struct Bench {
    exe: std::path::PathBuf,
    data: DemoData,
    empty: std::path::PathBuf,
    /// The state folder whose cache the first start filled.
    warm_state: std::path::PathBuf,
}

impl Bench {
    /// `kura serve`'s arguments: the demo vault, `state` as the state folder.
    fn args(&self, state: &std::path::Path) -> Vec<String> {
        vec![
            "--config".to_owned(),
            self.empty.display().to_string(),
            "--vault-root".to_owned(),
            self.data.vault().display().to_string(),
            "--state-dir".to_owned(),
            state.display().to_string(),
        ]
    }
}

/// Start-up: cold = a fresh state folder each time (components compiled);
/// warm = one state folder whose cache the first start filled.
async fn start_up(b: &Bench, args: &BenchArgs) -> anyhow::Result<()> {
    let mut cold = Vec::new();
    for i in 0..args.starts {
        let state = b.data.path().join(format!("state-cold-{i}"));
        let t = Instant::now();
        let s = Session::spawn(&b.exe, &b.args(&state)).await?;
        cold.push(t.elapsed());
        s.close().await?;
    }
    Session::spawn(&b.exe, &b.args(&b.warm_state))
        .await?
        .close()
        .await?;
    let mut warm = Vec::new();
    for _ in 0..args.starts {
        let t = Instant::now();
        let s = Session::spawn(&b.exe, &b.args(&b.warm_state)).await?;
        warm.push(t.elapsed());
        s.close().await?;
    }
    let (c, w) = (stats(cold), stats(warm));
    println!(
        "start → initialize answered, cold cache : p50 {}  p99 {}  (n={})",
        ms(c.p50),
        ms(c.p99),
        c.n
    );
    println!(
        "start → initialize answered, warm cache : p50 {}  p99 {}  (n={})",
        ms(w.p50),
        ms(w.p99),
        w.n
    );

    Ok(())
}

/// Tool calls over stdio through the rmcp client.
async fn tool_calls(b: &Bench, args: &BenchArgs) -> anyhow::Result<()> {
    let session = Session::spawn(&b.exe, &b.args(&b.warm_state)).await?;
    for (tool, call) in [
        (
            "vault_read",
            json!({"path": "notes/welcome.md", "range": {"start_line": 1, "end_line": 8}}),
        ),
        (
            "vault_scan",
            json!({"path": "notes/long-journal.md", "cursor": {"char_offset": 4000}}),
        ),
    ] {
        for _ in 0..20 {
            session.call(tool, call.clone()).await?; // warm-up
        }
        let mut times = Vec::with_capacity(args.calls);
        for _ in 0..args.calls {
            let t = Instant::now();
            let r = session.call(tool, call.clone()).await?;
            times.push(t.elapsed());
            anyhow::ensure!(r.is_error != Some(true), "{tool} failed during the bench");
        }
        let s = stats(times);
        println!(
            "{tool:<10} over stdio (rmcp client)   : p50 {}  p99 {}  (n={})",
            ms(s.p50),
            ms(s.p99),
            s.n
        );
    }
    session.close().await?;

    Ok(())
}

/// One write decision: the baseline rules (no component is configured).
fn write_decision(b: &Bench, args: &BenchArgs) -> anyhow::Result<()> {
    let config = Config {
        vault_root: Some(b.data.vault()),
        state_dir: Some(b.warm_state.clone()),
        ..Config::default()
    };
    let app = crate::app::App::start(config, crate::CATALOG)?;
    let req = WriteRequest {
        tool: "bench",
        kind: WriteKind::Append,
        path: "daily/2026-01-05.md",
        exists: true,
    };
    for _ in 0..100 {
        app.plugins.check_write(&req)?;
    }
    let mut times = Vec::with_capacity(args.plugin_calls);
    for _ in 0..args.plugin_calls {
        let t = Instant::now();
        app.plugins.check_write(&req)?;
        times.push(t.elapsed());
    }
    let s = stats(times);
    println!(
        "write decision (baseline rules)         : p50 {:.2} µs  p99 {:.2} µs  (n={})",
        s.p50.as_secs_f64() * 1e6,
        s.p99.as_secs_f64() * 1e6,
        s.n
    );
    Ok(())
}
