//! `kura-bench graph`: the vault's links, tags and properties at scale.
//! The vault is generated like `kura-bench vault`'s (5,000 notes of the
//! bundled manuals' sections), and every note is given front matter (tags,
//! a status, a due date) and links to other notes in the three forms; one
//! hub note is linked 500 times from 200 notes. Measured:
//! - in process, what building the graph from files costs: reading every
//!   note and extracting its facts, then resolving every link;
//! - over stdio against the real binary: the first answer (the whole index
//!   built from files in the background), how long after an external edit
//!   a backlink appears, vault_links and vault_notes (a tag and property
//!   filter) latencies, property queries in the Bases expression language
//!   (two properties and a date, over every note) against the same query as
//!   clauses, a Bases view grouped by status, the server's memory before and
//!   after them, and the move of the hub (500 links in 200 files rewritten,
//!   durable when the call returns).

#![allow(clippy::disallowed_methods)] // a bench tool: writes its own vault

use std::path::Path;
use std::time::{Duration, Instant};

use serde_json::{Value, json};

use kura::vault::graph::{Graph, facts::Facts};

use crate::corpus::{self, Rng};
use crate::{ms, peak_rss_mib, percentile, structured};

/// Notes that link to the hub, and links to it in all.
const HUB_FILES: usize = 200;
const HUB_LINKS: usize = 500;

/// Give every note front matter and links; returns the notes' paths.
fn weave(vault: &Path, rng: &mut Rng) -> anyhow::Result<Vec<String>> {
    let mut files: Vec<String> = corpus::markdown_files(vault)?
        .into_iter()
        .map(|p| {
            p.strip_prefix(vault)
                .unwrap()
                .to_string_lossy()
                .into_owned()
        })
        .collect();
    files.sort();
    let n = files.len();
    for (i, f) in files.iter().enumerate() {
        let path = vault.join(f);
        let body = std::fs::read_to_string(&path)?;
        let mut text = format!(
            "---\ntags: [bench, bench/t{}]\nstatus: {}\npriority: {}\ndue: 2026-{}-{:02}\n---\n{body}\n## Links\n",
            i % 20,
            ["draft", "review", "done"][i % 3],
            i % 5,
            10 + i % 3,
            1 + i % 28
        );
        for k in 0..8 {
            let to = &files[rng.below(n)];
            let bare = to.trim_end_matches(".md");
            match k % 3 {
                0 => text.push_str(&format!("- [[{bare}]]\n")),
                1 => text.push_str(&format!("- ![[{bare}#Links]]\n")),
                _ => text.push_str(&format!("- [link](/{})\n", to.replace(' ', "%20"))),
            }
        }
        // Six tasks a note, in both formats, one a sub-task, one
        // recurring: about 60,000 in a 10,000-note vault.
        let d = 1 + i % 28;
        text.push_str(&format!(
            "## Tasks\n- [ ] Call {i} 📅 2026-12-{d:02} ⏫ #errand\n- [x] Filed {i} ✅ 2026-11-{d:02}\n\
             - [ ] Write {i} [due:: 2026-12-{:02}] [owner:: Ana]\n  - [ ] Check {i} ⏳ 2026-12-{d:02}\n\
             - [/] Water {i} 🔁 every week 📅 2026-12-{:02}\n- [-] Dropped {i} ❌ 2026-11-{d:02}\n",
            1 + (i * 7) % 28,
            1 + (i * 3) % 28
        ));
        if i < HUB_FILES {
            // 500 links in 200 notes: three in the first hundred, two after.
            let three = i < HUB_LINKS - 2 * HUB_FILES;
            text.push_str("- [[hub]] and [[hub#Top|the hub]]");
            if three {
                text.push_str(" and [h](/bench/hub.md)");
            }
            text.push('\n');
        }
        std::fs::write(&path, text)?;
    }
    std::fs::create_dir_all(vault.join("bench"))?;
    std::fs::write(vault.join("bench/hub.md"), "# Top\nThe hub.\n")?;
    files.push("bench/hub.md".to_owned());
    // A person's Dataview query: the open tasks due by mid-month, soonest
    // first, grouped by folder.
    std::fs::write(
        vault.join("bench/dataview.md"),
        "```dataview\nTASK\nWHERE !completed AND due AND due <= date(2026-12-14)\nSORT due\nGROUP BY file.folder\n```\n",
    )?;
    files.push("bench/dataview.md".to_owned());
    files.sort();
    Ok(files)
}

/// Read every note and build the graph in process, as the index does at
/// its first start: (extract ms, resolve ms, links).
fn in_process(vault: &Path, files: &[String]) -> anyhow::Result<(f64, f64, usize)> {
    let t = Instant::now();
    let mut kept = Vec::with_capacity(files.len());
    for f in files {
        let text = std::fs::read_to_string(vault.join(f))?;
        let facts = serde_json::value::to_raw_value(&Facts::of(&text))?;
        kept.push((
            f.clone(),
            blake3::hash(text.as_bytes()).to_hex().to_string(),
            facts,
        ));
    }
    let extract = ms(t.elapsed());
    let t = Instant::now();
    let g = Graph::build(
        1,
        kept.iter().map(|(p, h, m)| {
            let info = kura::index::FileInfo {
                size: 0,
                mtime_ns: 0,
                ctime_ns: 0,
                hash: h.as_str(),
                meta: Some(m),
            };
            (p.as_str(), info)
        }),
        None,
    );
    let resolve = ms(t.elapsed());
    let links = g.notes.iter().map(|n| n.facts.links.len()).sum();
    Ok((extract, resolve, links))
}

pub async fn run(size: &crate::VaultSize, rounds: usize, kura_bin: &Path) -> anyhow::Result<Value> {
    let dir = tempfile::tempdir()?;
    let vault = dir.path().join("vault");
    let g = crate::vault::generate(size, dir.path())?;
    let mut rng = Rng::new(28);
    let files = weave(&vault, &mut rng)?;
    let (extract, resolve, links) = in_process(&vault, &files)?;
    eprintln!(
        "vault: {} notes, {} links; facts {extract:.0} ms, graph {resolve:.0} ms",
        files.len(),
        links
    );
    let s = crate::vault::serve(kura_bin, dir.path()).await?;
    // The first answer waits for the background index of the whole vault.
    let t = Instant::now();
    structured(&s.call("vault_notes", json!({"limit": 1})).await?)?;
    let first = ms(t.elapsed());
    // An external edit: how long until the new backlink is answered.
    let mut catch_up = Vec::new();
    for k in 0..rounds * 4 {
        let (from, to) = (
            &files[rng.below(files.len())],
            &files[rng.below(files.len())],
        );
        if from == to {
            continue;
        }
        let path = vault.join(from);
        let mut text = std::fs::read_to_string(&path)?;
        text.push_str(&format!("- edit {k}: [[{}]]\n", to.trim_end_matches(".md")));
        let t = Instant::now();
        std::fs::write(&path, text)?;
        loop {
            let r = structured(
                &s.call("vault_links", json!({"path": to, "limit": 1000}))
                    .await?,
            )?;
            let seen = r["backlinks"].as_array().is_some_and(|b| {
                b.iter().any(|x| {
                    x["path"] == from.as_str()
                        && x["context"]
                            .as_str()
                            .is_some_and(|c| c.contains(&format!("edit {k}:")))
                })
            });
            if seen {
                break;
            }
            anyhow::ensure!(
                t.elapsed() < Duration::from_secs(10),
                "the edit of {from} was never seen"
            );
            tokio::time::sleep(Duration::from_millis(1)).await;
        }
        catch_up.push(ms(t.elapsed()));
    }
    catch_up.sort_by(f64::total_cmp);
    let mut back = Vec::new();
    for _ in 0..rounds * 200 {
        let note = &files[rng.below(files.len())];
        let t = Instant::now();
        structured(&s.call("vault_links", json!({"path": note})).await?)?;
        back.push(ms(t.elapsed()));
    }
    back.sort_by(f64::total_cmp);
    let mut query = Vec::new();
    let mut kept = 0;
    for i in 0..rounds * 100 {
        let filter = format!("#bench/t{} and status = done and due < 2026-12-01", i % 20);
        let t = Instant::now();
        let r = structured(
            &s.call("vault_notes", json!({"filter": filter, "limit": 1000}))
                .await?,
        )?;
        query.push(ms(t.elapsed()));
        kept = r["total"].as_u64().unwrap_or(0);
    }
    query.sort_by(f64::total_cmp);
    let props = properties(&s, &vault, rounds).await?;
    // A build without vault_tasks (a baseline) still gives the rest.
    let tasks = match tasks(&s, rounds).await {
        Ok(t) => t,
        Err(e) => json!({"error": e.to_string()}),
    };
    let t = Instant::now();
    let moved = structured(
        &s.call(
            "vault_move",
            json!({"from": "bench/hub.md", "to": "bench/moved/Hub Note.md"}),
        )
        .await?,
    )?;
    let move_ms = ms(t.elapsed());
    let rss = s.pid.and_then(|p| peak_rss_mib(&p.to_string()));
    s.close().await?;
    let r3 = |x: f64| (x * 1000.0).round() / 1000.0;
    let lat = |v: &[f64]| json!({"p50": r3(percentile(v, 0.5)), "p95": r3(percentile(v, 0.95)), "n": v.len()});
    Ok(json!({
        "vault": { "notes": files.len(), "links": links, "megabytes": r3(g.bytes as f64 / 1048576.0) },
        "in_process_ms": { "read_and_extract": r3(extract), "resolve": r3(resolve) },
        "first_answer_ms": r3(first),
        "catch_up_after_edit_ms": lat(&catch_up),
        "vault_links_stdio_ms": lat(&back),
        "vault_notes_filter_stdio_ms": lat(&query),
        "filter_kept": kept,
        "properties": props,
        "tasks": tasks,
        "move_hub": {
            "ms": r3(move_ms),
            "links_rewritten": moved["links_rewritten"],
            "notes_rewritten": moved["rewritten"].as_array().map_or(0, Vec::len),
        },
        "serve_peak_rss_mib": rss.map(r3),
    }))
}

/// A view of the bench notes grouped by status, with a formula and a sort.
const TASKS_BASE: &str = "filters:\n  and:\n    - file.hasTag(\"bench\")\n    - 'priority >= 1'\nformulas:\n  days: '((due - today()) / 86400000).round()'\nviews:\n  - type: table\n    name: By status\n    groupBy:\n      property: status\n      direction: ASC\n    sort:\n      - property: due\n        direction: DESC\n    order: [file.basename, status, due, formula.days]\n    summaries:\n      priority: Average\n";

/// Property queries over every note: two properties and a date as clauses
/// (the baseline) and as a Bases expression, then a Bases view grouped by
/// status; latencies over stdio, and the server's memory around them.
async fn properties(
    s: &kura::client::Session,
    vault: &Path,
    rounds: usize,
) -> anyhow::Result<Value> {
    std::fs::write(vault.join("bench/Tasks.base"), TASKS_BASE)?;
    let rss_before = s
        .pid
        .and_then(|p| crate::proc_status_mib(&p.to_string(), "VmRSS:"));
    let timed = |n: usize| Vec::with_capacity(n);
    let (mut clauses, mut expr, mut base) = (
        timed(rounds * 100),
        timed(rounds * 100),
        timed(rounds * 100),
    );
    let (mut kept, mut rows, mut groups) = (0, 0, 0);
    for i in 0..rounds * 100 {
        let p = 1 + i % 3;
        let t = Instant::now();
        let r = structured(
            &s.call(
                "vault_notes",
                json!({"filter": format!("status = done and priority >= {p} and due < 2026-12-15")}),
            )
            .await?,
        )?;
        clauses.push(ms(t.elapsed()));
        let old = r["total"].as_u64().unwrap_or(0);
        let t = Instant::now();
        let r = structured(
            &s.call(
                "vault_notes",
                json!({"filter": format!("status == \"done\" && priority >= {p} && due < date(\"2026-12-15\")")}),
            )
            .await?,
        )?;
        expr.push(ms(t.elapsed()));
        kept = r["total"].as_u64().unwrap_or(0);
        anyhow::ensure!(
            kept == old,
            "the expression kept {kept} notes, the clauses {old}"
        );
        let t = Instant::now();
        let r = structured(
            &s.call("vault_base", json!({"path": "bench/Tasks.base"}))
                .await?,
        )?;
        base.push(ms(t.elapsed()));
        rows = r["total"].as_u64().unwrap_or(0);
        groups = r["groups"].as_array().map_or(0, Vec::len);
    }
    let rss_after = s
        .pid
        .and_then(|p| crate::proc_status_mib(&p.to_string(), "VmRSS:"));
    for v in [&mut clauses, &mut expr, &mut base] {
        v.sort_by(f64::total_cmp);
    }
    let r3 = |x: f64| (x * 1000.0).round() / 1000.0;
    let lat = |v: &[f64]| json!({"p50": r3(percentile(v, 0.5)), "p95": r3(percentile(v, 0.95)), "n": v.len()});
    Ok(json!({
        "clauses_stdio_ms": lat(&clauses),
        "expression_stdio_ms": lat(&expr),
        "expression_kept": kept,
        "base_group_by_stdio_ms": lat(&base),
        "base_rows": rows,
        "base_groups": groups,
        "rss_mib_before": rss_before.map(r3),
        "rss_mib_after": rss_after.map(r3),
    }))
}

/// vault_tasks over every note's tasks: a filter on status and a date,
/// sorted (this week's list), and the same grouped by folder; latencies
/// over stdio, and the server's memory after them.
async fn tasks(s: &kura::client::Session, rounds: usize) -> anyhow::Result<Value> {
    let (mut filtered, mut grouped, mut dql) = (Vec::new(), Vec::new(), Vec::new());
    let (mut kept, mut groups, mut dql_kept) = (0, 0, 0);
    let all = structured(&s.call("vault_tasks", json!({"limit": 1})).await?)?;
    let total = all["total"].as_u64().unwrap_or(0);
    for i in 0..rounds * 100 {
        let day = 1 + i % 28;
        let filter = format!("!completed && due && due <= date(\"2026-12-{day:02}\")");
        let t = Instant::now();
        let r = structured(
            &s.call("vault_tasks", json!({"filter": filter, "sort": ["due"]}))
                .await?,
        )?;
        filtered.push(ms(t.elapsed()));
        kept = r["total"].as_u64().unwrap_or(0);
        let t = Instant::now();
        let r = structured(
            &s.call(
                "vault_tasks",
                json!({"filter": "!completed && tags.contains(\"#errand\")", "group_by": "file.folder", "sort": ["due"]}),
            )
            .await?,
        )?;
        grouped.push(ms(t.elapsed()));
        groups = r["groups"].as_array().map_or(0, Vec::len);
    }
    // The dataview block in a loop of its own, after the filters: its
    // allocations do not land between theirs. A build without DQL (a
    // baseline) refuses the block; its other figures stand.
    for _ in 0..rounds * 100 {
        let t = Instant::now();
        let answer = s
            .call(
                "vault_tasks",
                json!({"path": "bench/dataview.md", "limit": 50}),
            )
            .await
            .ok()
            .and_then(|r| structured(&r).ok());
        if let Some(r) = answer {
            dql.push(ms(t.elapsed()));
            dql_kept = r["total"].as_u64().unwrap_or(0);
        }
    }
    dql.sort_by(f64::total_cmp);
    let rss_after = s
        .pid
        .and_then(|p| crate::proc_status_mib(&p.to_string(), "VmRSS:"));
    filtered.sort_by(f64::total_cmp);
    grouped.sort_by(f64::total_cmp);
    let r3 = |x: f64| (x * 1000.0).round() / 1000.0;
    let lat = |v: &[f64]| json!({"p50": r3(percentile(v, 0.5)), "p95": r3(percentile(v, 0.95)), "n": v.len()});
    Ok(json!({
        "tasks": total,
        "filter_sorted_stdio_ms": lat(&filtered),
        "filter_kept": kept,
        "grouped_stdio_ms": lat(&grouped),
        "groups": groups,
        "dataview_task_grouped_stdio_ms": lat(&dql),
        "dataview_kept": dql_kept,
        "rss_mib_after": rss_after.map(r3),
    }))
}

pub fn print(r: &Value) {
    println!(
        "vault                 {} notes, {} links, {} MB",
        r["vault"]["notes"], r["vault"]["links"], r["vault"]["megabytes"]
    );
    println!(
        "graph from files      read+extract {} ms, resolve {} ms (in process)",
        r["in_process_ms"]["read_and_extract"], r["in_process_ms"]["resolve"]
    );
    println!(
        "first answer          {} ms (the whole index, in the background)",
        r["first_answer_ms"]
    );
    for (name, key) in [
        ("catch-up after edit", "catch_up_after_edit_ms"),
        ("vault_links (stdio)", "vault_links_stdio_ms"),
        ("vault_notes filter", "vault_notes_filter_stdio_ms"),
    ] {
        let v = &r[key];
        println!(
            "{name:<21} p50 {} ms, p95 {} ms over {}",
            v["p50"], v["p95"], v["n"]
        );
    }
    let p = &r["properties"];
    for (name, key) in [
        ("clauses, 2 props+date", "clauses_stdio_ms"),
        ("expression, same", "expression_stdio_ms"),
        ("vault_base group-by", "base_group_by_stdio_ms"),
    ] {
        let v = &p[key];
        println!(
            "{name:<21} p50 {} ms, p95 {} ms over {}",
            v["p50"], v["p95"], v["n"]
        );
    }
    println!(
        "property queries      {} notes kept; base {} rows in {} groups; RSS {} → {} MiB",
        p["expression_kept"],
        p["base_rows"],
        p["base_groups"],
        p["rss_mib_before"],
        p["rss_mib_after"]
    );
    let t = &r["tasks"];
    for (name, key) in [
        ("vault_tasks filter", "filter_sorted_stdio_ms"),
        ("vault_tasks grouped", "grouped_stdio_ms"),
        ("dataview TASK grouped", "dataview_task_grouped_stdio_ms"),
    ] {
        let v = &t[key];
        println!(
            "{name:<21} p50 {} ms, p95 {} ms over {}",
            v["p50"], v["p95"], v["n"]
        );
    }
    println!(
        "tasks                 {} in all, {} kept, {} groups, {} by the dataview query; RSS {} MiB",
        t["tasks"], t["filter_kept"], t["groups"], t["dataview_kept"], t["rss_mib_after"]
    );
    let m = &r["move_hub"];
    println!(
        "move of the hub       {} ms: {} links in {} notes rewritten",
        m["ms"], m["links_rewritten"], m["notes_rewritten"]
    );
}
