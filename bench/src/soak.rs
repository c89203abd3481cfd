//! `kura-bench http --abandon N` and `--soak SECONDS`: what a long-lived
//! HTTP server keeps. Abandoned sessions (an `initialize` and nothing after,
//! never ended) must cost nothing once they idle out; a steady mixed load,
//! writes included, must not grow the resident set, the open file
//! descriptors or the threads without bound. Both report the server's own
//! figures from /proc.

#![allow(clippy::disallowed_methods)] // a bench tool: reads /proc

use std::io::{Read, Write};
use std::sync::Arc;
use std::time::{Duration, Instant};

use serde_json::{Value, json};

/// The number on a line of `/proc/PID/status` (`RssAnon:`, `Threads:`).
fn status_field(pid: u32, name: &str) -> Option<f64> {
    std::fs::read_to_string(format!("/proc/{pid}/status"))
        .ok()?
        .lines()
        .find(|l| l.starts_with(name))
        .and_then(|l| l.split_whitespace().nth(1)?.parse::<f64>().ok())
}

/// A `kB` line of `/proc/PID/status` in MiB, to 0.1.
pub fn status_mib(pid: u32, name: &str) -> Option<f64> {
    status_field(pid, name).map(|kib| (kib / 1024.0 * 10.0).round() / 10.0)
}

/// What the server holds now: anonymous resident memory (MiB), open file
/// descriptors, threads.
pub fn sample(pid: u32) -> (f64, usize, usize) {
    let fds = std::fs::read_dir(format!("/proc/{pid}/fd")).map_or(0, |d| d.count());
    (
        status_mib(pid, "RssAnon:").unwrap_or(0.0),
        fds,
        status_field(pid, "Threads:").unwrap_or(0.0) as usize,
    )
}

/// Least-squares slope of `ys` over `xs`.
fn slope(xs: &[f64], ys: &[f64]) -> f64 {
    let n = xs.len() as f64;
    if xs.len() < 2 {
        return 0.0;
    }
    let (mx, my) = (xs.iter().sum::<f64>() / n, ys.iter().sum::<f64>() / n);
    let cov: f64 = xs.iter().zip(ys).map(|(x, y)| (x - mx) * (y - my)).sum();
    let var: f64 = xs.iter().map(|x| (x - mx).powi(2)).sum();
    if var == 0.0 { 0.0 } else { cov / var }
}

/// Open one session with a bare `initialize` and walk away.
fn abandon_one(addr: &str, token: &str) -> anyhow::Result<()> {
    let body = r#"{"jsonrpc":"2.0","id":1,"method":"initialize","params":{"protocolVersion":"2025-06-18","capabilities":{},"clientInfo":{"name":"abandoner","version":"1"}}}"#;
    let mut s = std::net::TcpStream::connect(addr)?;
    write!(
        s,
        "POST /mcp HTTP/1.1\r\nHost: {addr}\r\nAuthorization: Bearer {token}\r\n\
         Content-Type: application/json\r\nAccept: application/json, text/event-stream\r\n\
         Content-Length: {}\r\nConnection: close\r\n\r\n{body}",
        body.len()
    )?;
    let mut out = String::new();
    s.read_to_string(&mut out)?;
    anyhow::ensure!(
        out.starts_with("HTTP/1.1 200"),
        "initialize refused: {}",
        out.lines().next().unwrap_or_default()
    );
    Ok(())
}

/// `rounds` times: open `per_round` sessions and abandon them, then wait
/// for them to idle out (`idle`). The server's memory after each round
/// must not climb.
pub async fn abandoned(
    url: &str,
    token: &str,
    pid: u32,
    rounds: usize,
    per_round: usize,
    idle: Duration,
) -> anyhow::Result<Value> {
    let addr = url
        .trim_start_matches("http://")
        .trim_end_matches("/mcp")
        .to_owned();
    let mut out = Vec::new();
    let before = sample(pid);
    for round in 1..=rounds {
        let (addr, token) = (addr.clone(), token.to_owned());
        let t = Instant::now();
        tokio::task::spawn_blocking(move || {
            (0..per_round).try_for_each(|_| abandon_one(&addr, &token))
        })
        .await??;
        let open = sample(pid);
        let opened_s = t.elapsed().as_secs_f64();
        // The idle time, then the server's 30 s look at its sessions
        // (when it hands their memory back), and a margin.
        tokio::time::sleep(idle + Duration::from_secs(35)).await;
        let after = sample(pid);
        out.push(json!({
            "round": round,
            "opened_in_s": (opened_s * 100.0).round() / 100.0,
            "anon_mib_while_open": open.0,
            "anon_mib_after_idle": after.0,
            "fds_after_idle": after.1,
            "threads_after_idle": after.2,
        }));
    }
    Ok(json!({
        "sessions_per_round": per_round,
        "before": {"anon_mib": before.0, "fds": before.1, "threads": before.2},
        "rounds": out,
    }))
}

/// A steady load for `seconds`: `clients` sessions each calling `call` in
/// a loop (its client index and call number in), the server sampled every
/// `every`. Reported: the samples, and each quantity's slope per minute
/// over the second half (after the caches and pools have filled).
pub async fn soak<F, Fut>(
    clients: usize,
    seconds: u64,
    every: Duration,
    pid: u32,
    call: F,
) -> anyhow::Result<Value>
where
    F: Fn(usize, usize) -> Fut + Send + Sync + 'static,
    Fut: std::future::Future<Output = anyhow::Result<()>> + Send,
{
    let call = Arc::new(call);
    let end = Instant::now() + Duration::from_secs(seconds);
    let mut tasks = Vec::new();
    for c in 0..clients {
        let call = call.clone();
        tasks.push(tokio::spawn(async move {
            let mut i = 0;
            while Instant::now() < end {
                call(c, i).await?;
                i += 1;
            }
            anyhow::Ok(i)
        }));
    }
    let start = Instant::now();
    let mut samples = Vec::new();
    while Instant::now() < end {
        let (anon, fds, threads) = sample(pid);
        samples.push((start.elapsed().as_secs_f64(), anon, fds, threads));
        tokio::time::sleep(every.min(end.saturating_duration_since(Instant::now()))).await;
    }
    let mut calls = 0;
    for t in tasks {
        calls += t.await??;
    }
    let (anon, fds, threads) = sample(pid);
    samples.push((start.elapsed().as_secs_f64(), anon, fds, threads));
    let half: Vec<_> = samples
        .iter()
        .filter(|s| s.0 >= seconds as f64 / 2.0)
        .collect();
    let minutes: Vec<f64> = half.iter().map(|s| s.0 / 60.0).collect();
    let per_min = |ys: Vec<f64>| (slope(&minutes, &ys) * 1000.0).round() / 1000.0;
    Ok(json!({
        "seconds": seconds,
        "clients": clients,
        "calls": calls,
        "calls_per_s": (calls as f64 / seconds.max(1) as f64 * 10.0).round() / 10.0,
        "samples": samples.iter().map(|s| json!({
            "t_s": s.0.round(), "anon_mib": s.1, "fds": s.2, "threads": s.3,
        })).collect::<Vec<_>>(),
        "slope_second_half_per_min": {
            "anon_mib": per_min(half.iter().map(|s| s.1).collect()),
            "fds": per_min(half.iter().map(|s| s.2 as f64).collect()),
            "threads": per_min(half.iter().map(|s| s.3 as f64).collect()),
        },
    }))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_slope_of_a_line_is_its_gradient_and_of_a_flat_series_zero() {
        assert!((slope(&[0.0, 1.0, 2.0], &[1.0, 3.0, 5.0]) - 2.0).abs() < 1e-9);
        assert_eq!(slope(&[0.0, 1.0, 2.0], &[4.0, 4.0, 4.0]), 0.0);
        assert_eq!(slope(&[1.0], &[4.0]), 0.0);
    }
}
