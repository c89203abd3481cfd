//! `kura-bench history`: what keeping every change costs. In process, on
//! the history's own types: a note rewritten through a root with no
//! journal (kura before issue 54) and through the same root with its
//! history (one call = one change), interleaved; then the history grown to
//! `--changes` changes and one note's changes listed among them, by the
//! process that wrote them and by a fresh one; and the history's size on
//! disk.

use std::path::Path;
use std::time::Instant;

use kura::fs::{RelPath, Root, StateDir};
use kura::history::{Call, Filter, History, Who};

use super::percentile;

/// Notes the writes go round.
const NOTES: usize = 1_000;

fn note(i: usize) -> RelPath {
    RelPath::parse(&format!("notes/n{:04}.md", i % NOTES), false).unwrap()
}

/// A note's text: about 2 KB, different each round.
fn text(round: usize) -> Vec<u8> {
    let mut t = format!("---\ntags: [bench]\n---\n# Note {round}\n\n");
    while t.len() < 2_000 {
        t.push_str(&format!("Line {round} of a note kept in the history; "));
    }
    t.into_bytes()
}

fn write(root: &Root, p: &RelPath, bytes: &[u8]) {
    root.update(p, |_| Ok(Some((bytes.to_vec(), ())))).unwrap();
}

fn ms(t: Instant) -> f64 {
    t.elapsed().as_secs_f64() * 1000.0
}

fn du(path: &Path) -> u64 {
    let mut total = 0;
    let mut stack = vec![path.to_path_buf()];
    while let Some(dir) = stack.pop() {
        for e in std::fs::read_dir(&dir).into_iter().flatten().flatten() {
            let m = e.metadata().unwrap();
            if m.is_dir() {
                stack.push(e.path());
            } else {
                total += m.len();
            }
        }
    }
    total
}

pub fn run(writes: usize, changes: usize, json: bool) -> anyhow::Result<()> {
    let dir = tempfile::tempdir()?;
    let (vault, state_path) = (dir.path().join("vault"), dir.path().join("state"));
    std::fs::create_dir_all(vault.join("notes"))?;
    for i in 0..NOTES {
        std::fs::write(vault.join(format!("notes/n{i:04}.md")), text(0))?;
    }
    let state = StateDir::open(&state_path)?;
    let plain = Root::open(&vault)?;
    let history =
        History::open(&state, "vault", &plain, &[]).map_err(|e| anyhow::anyhow!(e.message))?;
    let kept = Root::open(&vault)?.with_recorder(history.recorder());
    let who = Who {
        client: "kura-bench".into(),
        session: "bench".into(),
    };
    // The write: interleaved, so drift in the machine hits both alike.
    let (mut before, mut with, mut committed) = (Vec::new(), Vec::new(), Vec::new());
    for round in 1..=writes {
        let bytes = text(round);
        let t = Instant::now();
        write(&plain, &note(round), &bytes);
        before.push(ms(t));
        let bytes = text(round + writes);
        let t = Instant::now();
        {
            let _call = Call::begin("vault_write", None, &who);
            write(&kept, &note(round + NOTES / 2), &bytes);
        }
        with.push(ms(t));
        // The call is answered before its commit is made: the next plain
        // write starts once it is, so the two never overlap.
        history.settle();
        committed.push(ms(t));
    }
    before.sort_by(f64::total_cmp);
    with.sort_by(f64::total_cmp);
    committed.sort_by(f64::total_cmp);
    // Grow the history to `changes`.
    let t = Instant::now();
    let mut made = writes;
    while made < changes {
        let _call = Call::begin("vault_write", None, &who);
        write(&kept, &note(made), &text(made));
        made += 1;
    }
    history.settle();
    let grow_s = t.elapsed().as_secs_f64();
    let one = Filter {
        path: Some(note(42)),
        ..Filter::default()
    };
    let t = Instant::now();
    let (first, total) = history
        .list(&one, 0, 20)
        .map_err(|e| anyhow::anyhow!(e.message))?;
    let first_ms = ms(t);
    let mut warm = Vec::new();
    for _ in 0..20 {
        let t = Instant::now();
        history
            .list(&one, 0, 20)
            .map_err(|e| anyhow::anyhow!(e.message))?;
        warm.push(ms(t));
    }
    warm.sort_by(f64::total_cmp);
    // The newest page of every change, and the same page through a filter
    // that admits every change but must parse each line to know it (what
    // an unfiltered listing did before issue 67).
    let every = Filter {
        client: Some(who.client.clone()),
        ..Filter::default()
    };
    let (mut page, mut parsed) = (Vec::new(), Vec::new());
    for _ in 0..20 {
        for (filter, out) in [(&Filter::default(), &mut page), (&every, &mut parsed)] {
            let t = Instant::now();
            history
                .list(filter, 0, 20)
                .map_err(|e| anyhow::anyhow!(e.message))?;
            out.push(ms(t));
        }
    }
    page.sort_by(f64::total_cmp);
    parsed.sort_by(f64::total_cmp);
    // A fresh process: open, then the same listing.
    let t = Instant::now();
    let fresh = History::open(&state, "vault", &Root::open(&vault)?, &[])
        .map_err(|e| anyhow::anyhow!(e.message))?;
    let open_ms = ms(t);
    let t = Instant::now();
    fresh
        .list(&one, 0, 20)
        .map_err(|e| anyhow::anyhow!(e.message))?;
    let fresh_ms = ms(t);
    let bytes = du(&history.path());
    let r = serde_json::json!({
        "writes": writes,
        "write_ms_p50_without": percentile(&before, 0.5),
        "write_ms_p50_with": percentile(&with, 0.5),
        "write_ms_p95_without": percentile(&before, 0.95),
        "write_ms_p95_with": percentile(&with, 0.95),
        "committed_ms_p50": percentile(&committed, 0.5),
        "committed_ms_p95": percentile(&committed, 0.95),
        "changes": made,
        "grow_s": grow_s,
        "note_changes": total,
        "listed": first.len(),
        "list_first_ms": first_ms,
        "list_warm_ms_p50": percentile(&warm, 0.5),
        "list_all_ms_p50": percentile(&page, 0.5),
        "list_all_parsed_ms_p50": percentile(&parsed, 0.5),
        "fresh_open_ms": open_ms,
        "fresh_list_ms": fresh_ms,
        "history_bytes": bytes,
        "bytes_per_change": bytes / made.max(1) as u64,
    });
    if json {
        println!("{r}");
    } else {
        println!("history: {writes} writes of a 2 KB note, interleaved, without and with history");
        println!(
            "  write p50 {:.3} ms -> {:.3} ms (+{:.3}), p95 {:.3} -> {:.3}",
            r["write_ms_p50_without"].as_f64().unwrap_or(0.0),
            r["write_ms_p50_with"].as_f64().unwrap_or(0.0),
            r["write_ms_p50_with"].as_f64().unwrap_or(0.0)
                - r["write_ms_p50_without"].as_f64().unwrap_or(0.0),
            r["write_ms_p95_without"].as_f64().unwrap_or(0.0),
            r["write_ms_p95_with"].as_f64().unwrap_or(0.0),
        );
        println!(
            "  committed (answer + the commit made after it) p50 {:.3} ms, p95 {:.3}",
            r["committed_ms_p50"].as_f64().unwrap_or(0.0),
            r["committed_ms_p95"].as_f64().unwrap_or(0.0),
        );
        println!("  grown to {made} changes in {grow_s:.1} s");
        println!(
            "  one note's history ({total} changes) among {made}: {first_ms:.1} ms first, {:.2} ms after (p50); fresh process: open {open_ms:.1} ms + list {fresh_ms:.1} ms",
            percentile(&warm, 0.5)
        );
        println!(
            "  the newest 20 of all {made}: {:.2} ms (p50); parsing every line: {:.2} ms",
            percentile(&page, 0.5),
            percentile(&parsed, 0.5)
        );
        println!(
            "  on disk: {bytes} bytes ({} per change)",
            bytes / made.max(1) as u64
        );
    }
    Ok(())
}
