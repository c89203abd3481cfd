//! `kura-bench vibe`: the vibe workspace at the size issue 5 names (11,500
//! files, ~9 MB), over stdio against the real `kura` binary. The workspace
//! is generated: 50 projects of 230 documents each (tasks with statuses,
//! plans, dated sessions, references, reports, changelog, scratch), their
//! prose drawn from the bundled manuals' lines (English, Spanish, Japanese).
//! Measured: the first index (a fresh state folder, waited for by the first
//! search), `reindex full=true`, `reindex` with nothing changed, search
//! latency for queries made of the corpus' own words, a write's latency
//! (create_task, indexed before it returns) and the server's peak RSS. The
//! write is also measured on a 20-document workspace and against a bare
//! durable write (temporary file, fsync, rename, fsync of the folder) in the
//! same run, so the cost a write adds and whether it grows with the
//! workspace are ratios, not figures from different days.

#![allow(clippy::disallowed_methods)] // a bench tool: writes its own workspace

use std::path::Path;
use std::time::Instant;

use serde_json::{Value, json};

use kura::client::Session;

use crate::corpus::Rng;
use crate::{ms, peak_rss_mib, percentile, structured};

/// Per project: (folder, documents).
const LAYOUT: [(&str, usize); 8] = [
    ("tasks", 80),
    ("sessions", 60),
    ("references", 30),
    ("reports", 20),
    ("changelog", 15),
    ("scratch", 15),
    ("plans", 2),
    ("assets", 8),
];

/// A small workspace for the write comparison: one project, 20 documents.
const SMALL_LAYOUT: [(&str, usize); 5] = [
    ("tasks", 8),
    ("sessions", 6),
    ("references", 3),
    ("reports", 2),
    ("plans", 1),
];

const STATUSES: [&str; 4] = ["pending", "in-progress", "done", "blocked"];

/// Prose lines of the bundled manuals (headings, code and markup left out).
pub fn prose(source: &Path) -> anyhow::Result<Vec<String>> {
    let mut out = Vec::new();
    for p in crate::corpus::markdown_files(source)? {
        let text = std::fs::read_to_string(&p)?;
        let mut fence = false;
        for l in text.lines() {
            let t = l.trim();
            if t.starts_with("```") {
                fence = !fence;
                continue;
            }
            let plain = !fence
                && t.chars().count() >= 30
                && !t.starts_with(['#', '<', '|', '!', '[', '-', '*', '>', '{', ':']);
            if plain {
                out.push(t.to_owned());
            }
        }
    }
    anyhow::ensure!(
        out.len() > 1000,
        "too little prose under {}",
        source.display()
    );
    Ok(out)
}

/// About `bytes` of prose, as paragraphs.
fn paragraphs(lines: &[String], bytes: usize, rng: &mut Rng) -> String {
    let mut out = String::new();
    while out.len() < bytes {
        out.push_str(&lines[rng.below(lines.len())]);
        out.push_str(if rng.chance(0.3) { "\n\n" } else { " " });
    }
    out.trim_end().to_owned()
}

fn title(lines: &[String], rng: &mut Rng) -> String {
    let words: Vec<&str> = lines[rng.below(lines.len())]
        .split_whitespace()
        .take(6)
        .collect();
    words.join(" ")
}

fn document(folder: &str, n: usize, lines: &[String], rng: &mut Rng) -> (String, String) {
    let size = 250 + rng.below(380);
    match folder {
        "tasks" => {
            let status = STATUSES[rng.below(4)];
            let t = title(lines, rng);
            let steps: String = (1..=4)
                .map(|i| {
                    let mark = if status == "done" || rng.chance(0.3) {
                        "x"
                    } else {
                        " "
                    };
                    format!("{i}. [{mark}] {}\n", title(lines, rng))
                })
                .collect();
            let text = format!(
                "# Task: {t}\n\nStatus: {status}\n\n## Objective\n{}\n\n## Steps\n{steps}\n## Acceptance Criteria\n- [ ] {}\n",
                paragraphs(lines, size / 2, rng),
                title(lines, rng)
            );
            let slug: String = kura::vibe::slug(&t).chars().take(40).collect();
            (format!("{:03}-{slug}.md", n + 1), text)
        }
        "sessions" => {
            let day = 1 + n % 28;
            let month = 1 + (n / 28) % 12;
            let text = format!(
                "## Lo que hice\n\n- {}\n- {}\n\n## Next steps\n\n{}\n",
                title(lines, rng),
                title(lines, rng),
                paragraphs(lines, size / 2, rng)
            );
            (format!("2025-{month:02}-{day:02}-s{n}.md"), text)
        }
        "plans" => {
            let text = format!(
                "# Execution Plan\n\n## Overview\n{}\n\n## Current Status\n- Total tasks: 80\n- Pending: 20\n- Done: 40\n\n## Decisions\n- {}\n",
                paragraphs(lines, size, rng),
                title(lines, rng)
            );
            (
                if n == 0 {
                    "execution-plan.md".to_owned()
                } else {
                    format!("plan-{n}.md")
                },
                text,
            )
        }
        _ => {
            let text = format!(
                "# {}\n\n{}\n\n## {}\n\n{}\n",
                title(lines, rng),
                paragraphs(lines, size / 2, rng),
                title(lines, rng),
                paragraphs(lines, size / 2, rng)
            );
            (format!("{folder}-{n}.md"), text)
        }
    }
}

/// Write the workspace; returns (files, bytes).
pub fn generate(
    source: &Path,
    out: &Path,
    projects: usize,
    seed: u64,
) -> anyhow::Result<(u64, u64)> {
    generate_with(&prose(source)?, out, projects, &LAYOUT, seed)
}

fn generate_with(
    lines: &[String],
    out: &Path,
    projects: usize,
    layout: &[(&str, usize)],
    seed: u64,
) -> anyhow::Result<(u64, u64)> {
    let mut rng = Rng::new(seed);
    let (mut files, mut bytes) = (0u64, 0u64);
    for p in 0..projects {
        for &(folder, count) in layout {
            let dir = out.join(format!("project-{p:02}")).join(folder);
            std::fs::create_dir_all(&dir)?;
            for n in 0..count {
                let (name, text) = document(folder, n, lines, &mut rng);
                std::fs::write(dir.join(name), &text)?;
                files += 1;
                bytes += text.len() as u64;
            }
        }
    }
    Ok((files, bytes))
}

/// Queries of one to three words taken from the prose.
pub fn queries(lines: &[String], n: usize, rng: &mut Rng) -> Vec<String> {
    let mut out = Vec::new();
    while out.len() < n {
        let words: Vec<&str> = lines[rng.below(lines.len())]
            .split(|c: char| !c.is_alphanumeric())
            .filter(|w| w.chars().count() >= 4)
            .collect();
        if words.is_empty() {
            continue;
        }
        let k = 1 + rng.below(3.min(words.len()));
        let start = rng.below(words.len() + 1 - k);
        out.push(words[start..start + k].join(" "));
    }
    out
}

pub async fn run(
    source: &Path,
    projects: usize,
    rounds: usize,
    kura_bin: &Path,
) -> anyhow::Result<Value> {
    let dir = tempfile::tempdir()?;
    let lines = prose(source)?;
    let root = dir.path().join("vibe");
    let (files, bytes) = generate_with(&lines, &root, projects, &LAYOUT, 5)?;
    eprintln!("vibe: {files} files, {:.1} MB", bytes as f64 / 1048576.0);
    let t = Instant::now();
    let s = spawn(kura_bin, dir.path(), "vibe").await?;
    let started = ms(t.elapsed());
    // The first search waits for the background index of the whole workspace.
    let t = Instant::now();
    structured(&s.call("search", json!({"query": "warm up"})).await?)?;
    let first = ms(t.elapsed());
    let full = structured(&s.call("reindex", json!({"full": true})).await?)?;
    let mut unchanged = Vec::new();
    for _ in 0..rounds.max(3) * 2 {
        let r = structured(&s.call("reindex", json!({})).await?)?;
        anyhow::ensure!(
            r["stats"]["updated"] == 0 && r["stats"]["added"] == 0,
            "{r}"
        );
        unchanged.push(r["stats"]["duration_ms"].as_f64().unwrap_or(0.0));
    }
    unchanged.sort_by(f64::total_cmp);
    let mut rng = Rng::new(9);
    let qs = queries(&lines, 100, &mut rng);
    let mut lat = Vec::new();
    let mut empty = 0;
    for _ in 0..rounds {
        for q in &qs {
            let t = Instant::now();
            let r = s.call("search", json!({"query": q, "limit": 20})).await?;
            lat.push(ms(t.elapsed()));
            if structured(&r)?["results"]
                .as_array()
                .is_none_or(Vec::is_empty)
            {
                empty += 1;
            }
        }
    }
    lat.sort_by(f64::total_cmp);
    let mut writes = Vec::new();
    let mut after = Vec::new();
    for i in 0..rounds * 4 {
        writes.push(create_task(&s, i).await?);
        // The watcher reports the write too: the search re-checks that file only.
        let t = Instant::now();
        structured(
            &s.call("search", json!({"query": qs[i % qs.len()], "limit": 20}))
                .await?,
        )?;
        after.push(ms(t.elapsed()));
    }
    writes.sort_by(f64::total_cmp);
    after.sort_by(f64::total_cmp);
    let rss = s.pid.and_then(|p| peak_rss_mib(&p.to_string()));
    s.close().await?;
    // The same writes on a 20-document workspace, and bare durable writes,
    // interleaved round by round so that disk weather touches all three.
    let (small_files, _) = generate_with(&lines, &dir.path().join("small"), 1, &SMALL_LAYOUT, 6)?;
    let small = spawn(kura_bin, dir.path(), "small").await?;
    structured(&small.call("search", json!({"query": "warm up"})).await?)?;
    let s = spawn(kura_bin, dir.path(), "vibe").await?;
    structured(&s.call("search", json!({"query": "warm up"})).await?)?;
    let bare_dir = dir.path().join("bare");
    std::fs::create_dir_all(&bare_dir)?;
    let (mut big, mut tiny, mut bare) = (Vec::new(), Vec::new(), Vec::new());
    for i in 0..rounds * 8 {
        let n = 1000 + i;
        big.push(create_task(&s, n).await?);
        tiny.push(create_task(&small, n).await?);
        bare.push(durable_write(&bare_dir, n)?);
    }
    small.close().await?;
    s.close().await?;
    for v in [&mut big, &mut tiny, &mut bare] {
        v.sort_by(f64::total_cmp);
    }
    let r3 = |x: f64| (x * 1000.0).round() / 1000.0;
    Ok(json!({
        "workspace": { "projects": projects, "files": files, "megabytes": r3(bytes as f64 / 1048576.0) },
        "spawn_and_initialize_ms": r3(started),
        "first_index_ms": r3(first),
        "reindex_full_ms": full["stats"]["duration_ms"],
        "reindex_unchanged_ms": { "p50": r3(percentile(&unchanged, 0.5)), "max": r3(*unchanged.last().unwrap_or(&0.0)), "n": unchanged.len() },
        "search_stdio_ms": {
            "p50": r3(percentile(&lat, 0.5)),
            "p95": r3(percentile(&lat, 0.95)),
            "p99": r3(percentile(&lat, 0.99)),
            "n": lat.len(),
            "empty": empty,
        },
        "create_task_stdio_ms": { "p50": r3(percentile(&writes, 0.5)), "p95": r3(percentile(&writes, 0.95)), "n": writes.len() },
        "write_comparison_ms": {
            "create_task_large": { "files": files, "p50": r3(percentile(&big, 0.5)), "p95": r3(percentile(&big, 0.95)) },
            "create_task_small": { "files": small_files, "p50": r3(percentile(&tiny, 0.5)), "p95": r3(percentile(&tiny, 0.95)) },
            "bare_durable_write": { "p50": r3(percentile(&bare, 0.5)), "p95": r3(percentile(&bare, 0.95)) },
            "n": big.len(),
        },
        "search_after_write_stdio_ms": { "p50": r3(percentile(&after, 0.5)), "p95": r3(percentile(&after, 0.95)), "n": after.len() },
        "serve_peak_rss_mib": rss.map(r3),
    }))
}

/// A kura serving the vibe root `dir/name` with its own state folder.
async fn spawn(kura_bin: &Path, dir: &Path, name: &str) -> anyhow::Result<Session> {
    std::fs::write(dir.join("none.toml"), "")?;
    let args = vec![
        "--vibe-root".to_owned(),
        dir.join(name).display().to_string(),
        "--state-dir".to_owned(),
        dir.join(format!("state-{name}")).display().to_string(),
        "--config".to_owned(),
        dir.join("none.toml").display().to_string(),
    ];
    Session::spawn(kura_bin, &args).await
}

/// One create_task in the first project, in milliseconds.
async fn create_task(s: &Session, i: usize) -> anyhow::Result<f64> {
    let t = Instant::now();
    structured(
        &s.call(
            "create_task",
            json!({"project": "project-00", "title": format!("bench task {i}"), "objective": "measure",
                   "steps": ["one"], "acceptance_criteria": ["two"]}),
        )
        .await?,
    )?;
    Ok(ms(t.elapsed()))
}

/// What a durable write costs without kura: a task-sized file written to a
/// temporary name, fsynced, renamed over its name and the folder fsynced.
fn durable_write(dir: &Path, i: usize) -> anyhow::Result<f64> {
    use std::io::Write;
    let t = Instant::now();
    let tmp = dir.join(format!(".tmp-{i}"));
    let mut f = std::fs::File::create(&tmp)?;
    f.write_all(
        format!("# Task: bench task {i}\n\nStatus: pending\n\n## Objective\nmeasure\n").as_bytes(),
    )?;
    f.sync_all()?;
    std::fs::rename(&tmp, dir.join(format!("{i:04}-bench-task.md")))?;
    std::fs::File::open(dir)?.sync_all()?;
    Ok(ms(t.elapsed()))
}

pub fn print(r: &Value) {
    let w = &r["workspace"];
    println!(
        "workspace             {} projects, {} files, {} MB",
        w["projects"], w["files"], w["megabytes"]
    );
    println!(
        "first index           {} ms (fresh state; the first search waits for it)",
        r["first_index_ms"]
    );
    println!("reindex full=true     {} ms", r["reindex_full_ms"]);
    let u = &r["reindex_unchanged_ms"];
    println!(
        "reindex, no change    p50 {} ms, max {} ms over {} calls",
        u["p50"], u["max"], u["n"]
    );
    let s = &r["search_stdio_ms"];
    println!(
        "search (stdio)        p50 {} ms, p95 {} ms, p99 {} ms over {} calls ({} without results)",
        s["p50"], s["p95"], s["p99"], s["n"], s["empty"]
    );
    let c = &r["create_task_stdio_ms"];
    println!(
        "create_task (stdio)   p50 {} ms, p95 {} ms over {} calls",
        c["p50"], c["p95"], c["n"]
    );
    let a = &r["search_after_write_stdio_ms"];
    println!(
        "search after a write  p50 {} ms, p95 {} ms over {} calls",
        a["p50"], a["p95"], a["n"]
    );
    let w = &r["write_comparison_ms"];
    let (large, small, bare) = (
        &w["create_task_large"],
        &w["create_task_small"],
        &w["bare_durable_write"],
    );
    println!(
        "writes, interleaved   create_task at {} files p50 {} ms; at {} files p50 {} ms; bare durable write p50 {} ms ({} each)",
        large["files"], large["p50"], small["files"], small["p50"], bare["p50"], w["n"]
    );
    println!("server peak RSS       {} MiB", r["serve_peak_rss_mib"]);
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_project_has_230_documents_and_tasks_have_statuses() {
        assert_eq!(LAYOUT.iter().map(|(_, n)| n).sum::<usize>(), 230);
        let lines: Vec<String> = (0..50)
            .map(|i| format!("line number {i} with some words in it"))
            .collect();
        let (name, text) = document("tasks", 6, &lines, &mut Rng::new(1));
        assert!(name.starts_with("007-"), "{name}");
        assert!(text.contains("\nStatus: "), "{text}");
    }
}
