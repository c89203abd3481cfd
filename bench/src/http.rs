//! `kura-bench http`: many clients at once over Streamable HTTP.
//!
//! One `kura serve --http` on the three bench corpora (the scaled manuals,
//! a generated vault, a generated vibe workspace), its manual index built
//! beforehand by `kura index` as a deployment would ship it. Each client
//! is rmcp's own Streamable HTTP client with a bearer token, in a session
//! of its own, calling manual_find, vault_read and search in turn. The
//! same mix is run first by one client alone, as the baseline of the same
//! session; then by `clients` at once, released together. Reported:
//! throughput, p50/p95/p99 per tool and overall, the server's CPU time per
//! call (so calls per core-second), its peak RSS during the load, and the
//! index's size per GB of text.

#![allow(clippy::disallowed_methods)] // a bench tool: writes its own corpora

use std::path::{Path, PathBuf};
use std::process::{Child, Command, Stdio};
use std::sync::Arc;
use std::time::{Duration, Instant};

use rmcp::ServiceExt;
use rmcp::model::{CallToolRequestParams, CallToolResult};
use rmcp::service::{RoleClient, RunningService};
use rmcp::transport::StreamableHttpClientTransport;
use rmcp::transport::streamable_http_client::StreamableHttpClientTransportConfig;
use serde_json::{Value, json};

use kura::eval::Gold;

use crate::corpus::{self, Rng};
use crate::{ms, percentile, vibe};

const TOKEN: &str = "kura-bench-http-token-0123456789";

/// The three tools of the mix, in the order each client calls them.
pub const MIX: [&str; 3] = ["manual_find", "vault_read", "search"];

/// `--mix`'s tool names as indices into [`MIX`].
pub fn mix(names: &[String]) -> anyhow::Result<Vec<usize>> {
    names
        .iter()
        .map(|t| {
            MIX.iter()
                .position(|m| m == t)
                .ok_or_else(|| anyhow::anyhow!("--mix: {t} is not one of {}", MIX.join(", ")))
        })
        .collect()
}

/// What the clients ask: gold queries for the manuals, note paths for
/// vault_read, words of the workspace's prose for search.
struct Work {
    /// The tools called, as indexes into `MIX`, in turn.
    mix: Vec<usize>,
    gold: Vec<Gold>,
    notes: Vec<String>,
    queries: Vec<String>,
}

impl Work {
    /// Which of `MIX` call `i` makes.
    fn tool(&self, i: usize) -> usize {
        self.mix[i % self.mix.len()]
    }

    /// The arguments of call `i` of client `c`.
    fn args(&self, c: usize, i: usize) -> (&'static str, Value) {
        let k = c * 7919 + i / self.mix.len();
        match self.tool(i) {
            0 => {
                let g = &self.gold[k % self.gold.len()];
                (
                    MIX[0],
                    json!({"query": g.query, "manual_id": g.manual, "use_cache": false}),
                )
            }
            1 => (
                MIX[1],
                json!({"path": self.notes[k % self.notes.len()], "full": true}),
            ),
            _ => (
                MIX[2],
                json!({"query": self.queries[k % self.queries.len()], "limit": 20}),
            ),
        }
    }
}

type Client = RunningService<RoleClient, ()>;

async fn connect(url: &str) -> anyhow::Result<Client> {
    kura::registry::install_crypto_provider();
    let config = StreamableHttpClientTransportConfig::with_uri(url.to_owned()).auth_header(TOKEN);
    let transport = StreamableHttpClientTransport::from_config(config);
    Ok(().serve(transport).await?)
}

async fn call(client: &Client, tool: &str, args: Value) -> anyhow::Result<CallToolResult> {
    let mut params = CallToolRequestParams::new(tool.to_owned());
    if let Value::Object(map) = args {
        params = params.with_arguments(map);
    }
    let r = client.call_tool(params).await?;
    anyhow::ensure!(
        r.is_error != Some(true),
        "{tool}: {:?}",
        r.structured_content
    );
    Ok(r)
}

/// One phase's latencies, per tool, in milliseconds.
#[derive(Default)]
struct Phase {
    per_tool: [Vec<f64>; 3],
    wall: Duration,
    server_cpu_s: f64,
}

impl Phase {
    fn report(&mut self) -> Value {
        let r3 = |x: f64| (x * 1000.0).round() / 1000.0;
        let summary = |v: &mut Vec<f64>| {
            v.sort_by(f64::total_cmp);
            json!({
                "n": v.len(),
                "p50": r3(percentile(v, 0.5)),
                "p95": r3(percentile(v, 0.95)),
                "p99": r3(percentile(v, 0.99)),
            })
        };
        let mut all: Vec<f64> = self.per_tool.iter().flatten().copied().collect();
        let calls = all.len() as f64;
        let mut out = json!({
            "calls": all.len(),
            "seconds": r3(self.wall.as_secs_f64()),
            "calls_per_s": r3(calls / self.wall.as_secs_f64().max(1e-9)),
            "server_cpu_s": r3(self.server_cpu_s),
            "calls_per_server_core_s": r3(calls / self.server_cpu_s.max(1e-9)),
            "all_ms": summary(&mut all),
        });
        for (tool, lat) in MIX.iter().zip(self.per_tool.iter_mut()) {
            if !lat.is_empty() {
                out[format!("{tool}_ms")] = summary(lat);
            }
        }
        out
    }
}

/// `clients` sessions, each making `calls` calls of the mix, released at
/// once after every session is open.
async fn load(
    url: &str,
    work: &Arc<Work>,
    clients: usize,
    calls: usize,
    pid: u32,
) -> anyhow::Result<Phase> {
    let mut sessions = Vec::new();
    for _ in 0..clients {
        sessions.push(connect(url).await?);
    }
    let start = Arc::new(tokio::sync::Barrier::new(clients + 1));
    let mut tasks = Vec::new();
    for (c, client) in sessions.into_iter().enumerate() {
        let (work, start) = (work.clone(), start.clone());
        tasks.push(tokio::spawn(async move {
            let mut lat: [Vec<f64>; 3] = Default::default();
            start.wait().await;
            for i in 0..calls {
                let (tool, args) = work.args(c, i);
                let t = Instant::now();
                call(&client, tool, args).await?;
                lat[work.tool(i)].push(ms(t.elapsed()));
            }
            client.cancel().await?;
            anyhow::Ok(lat)
        }));
    }
    let cpu = cpu_seconds(pid)?;
    start.wait().await;
    let t = Instant::now();
    let mut phase = Phase::default();
    for task in tasks {
        let lat = task.await??;
        for (all, mine) in phase.per_tool.iter_mut().zip(lat) {
            all.extend(mine);
        }
    }
    phase.wall = t.elapsed();
    phase.server_cpu_s = cpu_seconds(pid)? - cpu;
    Ok(phase)
}

/// User + system CPU time of a process, in seconds.
fn cpu_seconds(pid: u32) -> anyhow::Result<f64> {
    let stat = std::fs::read_to_string(format!("/proc/{pid}/stat"))?;
    // Fields after the command name (which may hold spaces) start at ')'.
    let rest = stat.rsplit_once(')').map(|(_, r)| r).unwrap_or_default();
    let fields: Vec<&str> = rest.split_whitespace().collect();
    // utime and stime are fields 14 and 15 of the line; 12 and 13 here.
    let ticks: f64 = fields[11].parse::<f64>()? + fields[12].parse::<f64>()?;
    Ok(ticks / 100.0)
}

/// The resident set of `pid` now, split into anonymous memory (the heap,
/// stacks, component memories) and file pages (mostly the memory-mapped
/// index, which the kernel can drop and read again), in MiB.
fn rss_split(pid: u32) -> Value {
    let field = |name| crate::soak::status_mib(pid, name);
    json!({ "anon_mib": field("RssAnon:"), "file_mib": field("RssFile:") })
}

/// Start counting the peak resident set of `pid` again (Linux clear_refs 5).
fn reset_peak_rss(pid: u32) -> bool {
    std::fs::write(format!("/proc/{pid}/clear_refs"), "5").is_ok()
}

fn dir_bytes(root: &Path) -> u64 {
    let mut total = 0;
    let mut stack = vec![root.to_path_buf()];
    while let Some(dir) = stack.pop() {
        for e in std::fs::read_dir(&dir).into_iter().flatten().flatten() {
            match e.metadata() {
                Ok(m) if m.is_dir() => stack.push(e.path()),
                Ok(m) => total += m.len(),
                Err(_) => {}
            }
        }
    }
    total
}

/// `kura serve --http 127.0.0.1:0` on the corpora; its URL from the log.
fn serve(
    kura_bin: &Path,
    roots: &[String],
    settings: &[String],
    idle: Option<u64>,
    dir: &Path,
) -> anyhow::Result<(Child, String)> {
    std::fs::write(dir.join("tokens"), format!("{TOKEN}\n"))?;
    let mut cmd = Command::new(kura_bin);
    cmd.arg("serve").args(roots);
    for kv in settings {
        cmd.args(["--set", kv]);
    }
    cmd.args(["--http", "127.0.0.1:0", "--token-file"])
        .arg(dir.join("tokens"));
    if let Some(idle) = idle {
        cmd.args(["--session-idle-secs", &idle.to_string()]);
    }
    for var in kura::config::env_names() {
        cmd.env_remove(var);
    }
    let mut child = cmd
        .env_remove("KURA_HTTP_TOKENS")
        .env("RUST_LOG", "info")
        .stdin(Stdio::null())
        .stdout(Stdio::null())
        .stderr(Stdio::piped())
        .spawn()?;
    let url = kura::client::http_url(&mut child)
        .ok_or_else(|| anyhow::anyhow!("kura did not log the URL it serves"))?;
    Ok((child, url))
}

pub struct Options {
    pub corpus: Option<PathBuf>,
    pub source: PathBuf,
    pub files: u64,
    pub megabytes: u64,
    pub seed: u64,
    pub clients: usize,
    pub calls: usize,
    pub projects: usize,
    /// The tools each client calls in turn (indexes into `MIX`).
    pub mix: Vec<usize>,
    /// `--set KEY=VALUE` for the server.
    pub settings: Vec<String>,
    /// Sessions to open and abandon, three rounds of them (0: none).
    pub abandon: usize,
    /// The server's `--session-idle-secs` (default: its own).
    pub session_idle_secs: Option<u64>,
    /// Seconds of the soak (20 clients, every kind of tool, writes
    /// included), after the other phases.
    pub soak: Option<u64>,
    /// The soak without its writes.
    pub soak_reads_only: bool,
}

/// The soak's mix: reads and searches of each domain, and a vault append
/// and a vibe session note per round.
async fn soak_call(
    client: &Client,
    work: &Work,
    c: usize,
    i: usize,
    reads_only: bool,
) -> anyhow::Result<()> {
    let k = c * 7919 + i / 8;
    // Without writes, a read stands in for each of them.
    let i = if reads_only && matches!(i % 8, 4 | 7) {
        i - 1
    } else {
        i
    };
    let note = format!("soak/client-{c}.md");
    let gold = &work.gold[k % work.gold.len()];
    let (tool, args) = match i % 8 {
        0 => (
            "manual_find",
            json!({"query": gold.query, "manual_id": gold.manual, "use_cache": false}),
        ),
        1 => ("manual_ls", json!({})),
        2 => (
            "vault_read",
            json!({"path": work.notes[k % work.notes.len()], "full": true}),
        ),
        3 => ("vault_find", json!({"query": gold.query})),
        4 => (
            "vault_write",
            json!({"path": note, "content": format!("line {i}\n"), "mode": "append"}),
        ),
        5 => (
            "search",
            json!({"query": work.queries[k % work.queries.len()], "limit": 20}),
        ),
        6 => ("list_tasks", json!({"project": "project-00"})),
        _ => (
            "log_session",
            json!({"project": format!("project-{:02}", c % 2), "content": format!("soak {c} {i}"),
                   "append": true, "suffix": format!("soak-{c}")}),
        ),
    };
    call(client, tool, args).await.map(|_| ())
}

pub async fn run(o: &Options, gold: Vec<Gold>, kura_bin: &Path) -> anyhow::Result<Value> {
    let dir = tempfile::tempdir()?;
    let manuals = match &o.corpus {
        Some(c) => c.clone(),
        None => {
            let out = dir.path().join("manuals");
            corpus::generate(&o.source, &out, o.files, o.megabytes, o.seed)?;
            out
        }
    };
    let text_bytes = dir_bytes(&manuals);
    let vault = dir.path().join("vault");
    corpus::generate(&o.source, &vault, 5_000, 10, 7)?;
    let notes: Vec<String> = corpus::markdown_files(&vault)?
        .iter()
        .filter_map(|p| Some(p.strip_prefix(&vault).ok()?.to_string_lossy().into_owned()))
        .collect();
    let lines = vibe::prose(&o.source)?;
    let (vibe_files, _) = vibe::generate(&o.source, &dir.path().join("vibe"), o.projects, 5)?;
    let queries = vibe::queries(&lines, 100, &mut Rng::new(9));
    eprintln!(
        "corpora: manuals {:.1} MB, vault {} notes, vibe {vibe_files} files",
        text_bytes as f64 / 1048576.0,
        notes.len()
    );

    let state = dir.path().join("state");
    std::fs::write(dir.path().join("none.toml"), "")?;
    let roots: Vec<String> = [
        ("--manuals-root", manuals.as_path()),
        ("--vault-root", vault.as_path()),
        ("--vibe-root", &dir.path().join("vibe")),
        ("--state-dir", state.as_path()),
        ("--config", &dir.path().join("none.toml")),
    ]
    .iter()
    .flat_map(|(flag, p)| [flag.to_string(), p.display().to_string()])
    .collect();

    // The manual index, built once as a deployment would ship it.
    let t = Instant::now();
    let ok = Command::new(kura_bin)
        .arg("index")
        .args(&roots)
        .stdout(Stdio::null())
        .stderr(Stdio::null())
        .status()?;
    anyhow::ensure!(ok.success(), "kura index failed");
    let index_s = t.elapsed().as_secs_f64();
    // The manuals' index alone (`index/manuals-*`), against the manuals' text.
    let index_bytes: u64 = std::fs::read_dir(state.join("index"))?
        .flatten()
        .filter(|e| e.file_name().to_string_lossy().starts_with("manuals-"))
        .map(|e| dir_bytes(&e.path()))
        .sum();

    let (mut child, url) = serve(
        kura_bin,
        &roots,
        &o.settings,
        o.session_idle_secs,
        dir.path(),
    )?;
    let pid = child.id();
    let result = async {
        // Every index ready before timing: one call of each tool.
        let warm = connect(&url).await?;
        let work = Arc::new(Work {
            mix: o.mix.clone(),
            gold,
            notes,
            queries,
        });
        for i in 0..work.mix.len() {
            let (tool, args) = work.args(0, i);
            call(&warm, tool, args).await?;
        }
        warm.cancel().await?;
        let rss_reset = reset_peak_rss(pid);
        let mut alone = load(&url, &work, 1, o.calls * 3, pid).await?;
        let peak_alone = crate::peak_rss_mib(&pid.to_string());
        let after_alone = rss_split(pid);
        reset_peak_rss(pid);
        let mut many = load(&url, &work, o.clients, o.calls, pid).await?;
        let peak = crate::peak_rss_mib(&pid.to_string());
        let after_many = rss_split(pid);
        let abandoned = match o.abandon {
            0 => Value::Null,
            n => {
                let idle = Duration::from_secs(o.session_idle_secs.unwrap_or(1800));
                crate::soak::abandoned(&url, TOKEN, pid, 3, n, idle).await?
            }
        };
        let soaked = match o.soak {
            None => Value::Null,
            Some(seconds) => {
                const CLIENTS: usize = 20;
                let mut clients = Vec::new();
                for c in 0..CLIENTS {
                    let client = connect(&url).await?;
                    call(
                        &client,
                        "vault_create",
                        json!({"path": format!("soak/client-{c}.md"), "content": "# soak\n"}),
                    )
                    .await?;
                    clients.push(Arc::new(client));
                }
                let (clients, work) = (Arc::new(clients), work.clone());
                let reads_only = o.soak_reads_only;
                crate::soak::soak(CLIENTS, seconds, Duration::from_secs(10), pid, move |c, i| {
                    let (clients, work) = (clients.clone(), work.clone());
                    async move { soak_call(&clients[c], &work, c, i, reads_only).await }
                })
                .await?
            }
        };
        let r3 = |x: f64| (x * 1000.0).round() / 1000.0;
        let (alone, many) = (alone.report(), many.report());
        anyhow::Ok(json!({
            "corpora": {
                "manuals_mb": r3(text_bytes as f64 / 1048576.0),
                "vault_notes": work.notes.len(),
                "vibe_files": vibe_files,
            },
            "index": {
                "kura_index_s": r3(index_s),
                "manuals_bytes": index_bytes,
                "manuals_gb_per_gb_of_text": r3(index_bytes as f64 / text_bytes.max(1) as f64),
            },
            "one_client": alone,
            "clients": o.clients,
            "mix": o.mix.iter().map(|&t| MIX[t]).collect::<Vec<_>>(),
            "many_clients": many.clone(),
            "throughput_ratio": r3(many["calls_per_s"].as_f64().unwrap_or(0.0)
                / alone["calls_per_s"].as_f64().unwrap_or(1.0).max(1e-9)),
            "server_peak_rss_mib": { "one_client": peak_alone.map(r3), "many_clients": peak.map(r3) },
            "server_rss_after": { "one_client": after_alone, "many_clients": after_many },
            "peak_rss_counts_from": if rss_reset { "each phase's start" } else { "the server's start" },
            "abandoned_sessions": abandoned,
            "soak": soaked,
        }))
    }
    .await;
    // SIGTERM, as a service manager ends it; it finishes what runs.
    let _ = Command::new("kill")
        .args(["-TERM", &pid.to_string()])
        .status();
    let _ = child.wait();
    result
}

pub fn print(r: &Value) {
    println!(
        "corpora               manuals {} MB, vault {} notes, vibe {} files",
        r["corpora"]["manuals_mb"], r["corpora"]["vault_notes"], r["corpora"]["vibe_files"]
    );
    println!(
        "kura index            {} s (all three roots); manuals index {} bytes = {} GB per GB of text",
        r["index"]["kura_index_s"],
        r["index"]["manuals_bytes"],
        r["index"]["manuals_gb_per_gb_of_text"]
    );
    for (label, key) in [
        ("1 client".to_owned(), "one_client"),
        (format!("{} clients", r["clients"]), "many_clients"),
    ] {
        let p = &r[key];
        println!(
            "{label:<22}{} calls in {} s = {} calls/s; server CPU {} s = {} calls per core-second",
            p["calls"],
            p["seconds"],
            p["calls_per_s"],
            p["server_cpu_s"],
            p["calls_per_server_core_s"]
        );
        for tool in ["all"].iter().chain(MIX.iter()) {
            let l = &p[format!("{tool}_ms")];
            if l.is_null() {
                continue;
            }
            println!(
                "  {tool:<20}p50 {} ms, p95 {} ms, p99 {} ms (n {})",
                l["p50"], l["p95"], l["p99"], l["n"]
            );
        }
    }
    println!(
        "throughput ratio      {}x one client",
        r["throughput_ratio"]
    );
    println!(
        "server peak RSS       {} MiB with one client, {} MiB with {} (counted from {})",
        r["server_peak_rss_mib"]["one_client"],
        r["server_peak_rss_mib"]["many_clients"],
        r["clients"],
        r["peak_rss_counts_from"]
    );
    for (label, key) in [
        ("one client", "one_client"),
        ("many clients", "many_clients"),
    ] {
        let now = &r["server_rss_after"][key];
        println!(
            "  after {label:<14}anonymous {} MiB, file pages (the mapped index) {} MiB",
            now["anon_mib"], now["file_mib"]
        );
    }
    let a = &r["abandoned_sessions"];
    if !a.is_null() {
        println!(
            "abandoned sessions    {} per round; before: anonymous {} MiB, {} fds, {} threads",
            a["sessions_per_round"],
            a["before"]["anon_mib"],
            a["before"]["fds"],
            a["before"]["threads"]
        );
        for round in a["rounds"].as_array().into_iter().flatten() {
            println!(
                "  round {}             opened in {} s, {} MiB while open; idled out: {} MiB, {} fds, {} threads",
                round["round"],
                round["opened_in_s"],
                round["anon_mib_while_open"],
                round["anon_mib_after_idle"],
                round["fds_after_idle"],
                round["threads_after_idle"]
            );
        }
    }
    let s = &r["soak"];
    if !s.is_null() {
        let slope = &s["slope_second_half_per_min"];
        println!(
            "soak                  {} s, {} clients, {} calls ({} calls/s); second-half slope per minute: \
             anonymous {} MiB, fds {}, threads {}",
            s["seconds"],
            s["clients"],
            s["calls"],
            s["calls_per_s"],
            slope["anon_mib"],
            slope["fds"],
            slope["threads"]
        );
        for sample in s["samples"].as_array().into_iter().flatten() {
            println!(
                "  t {:>5} s           anonymous {} MiB, {} fds, {} threads",
                sample["t_s"], sample["anon_mib"], sample["fds"], sample["threads"]
            );
        }
    }
}
