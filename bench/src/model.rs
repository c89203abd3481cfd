//! `kura-bench model`: the sentence encoder on this machine. Loading the
//! installed model, embedding each gold query (the latency a search adds),
//! and embedding the bundled manuals' sections as kura does (title path and
//! first 400 characters, two threads): sections and megabytes per second.

use std::path::Path;
use std::time::Instant;

use kura::embed::Model;
use kura::eval::Gold;

use crate::{ms, percentile};

fn load(state: &Path) -> anyhow::Result<Model> {
    let folder = kura::fs::StateDir::open(state)?;
    kura::domain::search::encoder::load(&folder)?.ok_or_else(|| {
        anyhow::anyhow!(
            "no model in {}: run `kura models install --state-dir {0}`",
            state.display()
        )
    })
}

/// Every `.md` section of the manuals under `corpora`, as kura embeds it.
fn section_texts(corpora: &Path) -> anyhow::Result<Vec<String>> {
    let mut out = Vec::new();
    let mut stack = vec![corpora.to_path_buf()];
    while let Some(dir) = stack.pop() {
        for e in std::fs::read_dir(&dir)?.flatten() {
            let p = e.path();
            if e.file_type()?.is_dir() {
                stack.push(p);
            } else if p.extension().is_some_and(|x| x == "md") {
                let text = std::fs::read_to_string(&p).unwrap_or_default();
                let title = p
                    .file_stem()
                    .map(|s| s.to_string_lossy().into_owned())
                    .unwrap_or_default();
                for s in kura::text::markdown::sections(&text) {
                    let lines = kura::text::Lines::new(&text);
                    if s.start_line < 1 || s.end_line > lines.count() || s.start_line > s.end_line {
                        continue;
                    }
                    let body = &text[lines.start(s.start_line)..lines.end(s.end_line)];
                    let mut t = format!("{title} > {}\n", s.path.join(" > "));
                    t.extend(body.chars().take(400));
                    out.push(t);
                }
            }
        }
    }
    Ok(out)
}

pub fn run(state: &Path, corpora: &Path, gold: &[Gold]) -> anyhow::Result<()> {
    let t = Instant::now();
    let model = load(state)?;
    println!(
        "load                  {:.0} ms (the prepared weights mapped; the first load makes them from the package's arrays)",
        ms(t.elapsed())
    );
    for g in gold.iter().take(20) {
        model.embed(&g.query, 128);
    }
    let mut lat: Vec<f64> = gold
        .iter()
        .map(|g| {
            let t = Instant::now();
            model.embed(&g.query, 128);
            ms(t.elapsed())
        })
        .collect();
    lat.sort_by(f64::total_cmp);
    println!(
        "embed a query         p50 {:.2} ms, p95 {:.2} ms over {} gold queries",
        percentile(&lat, 0.5),
        percentile(&lat, 0.95),
        lat.len()
    );
    let texts = section_texts(corpora)?;
    let bytes: usize = texts.iter().map(String::len).sum();
    let t = Instant::now();
    let v = model.embed_all(&texts, 128, 2);
    let secs = t.elapsed().as_secs_f64();
    println!(
        "embed sections        {} sections ({:.1} MB embedded) in {:.1} s on 2 threads: {:.0} sections/s, {:.2} MB/s",
        v.len(),
        bytes as f64 / 1e6,
        secs,
        v.len() as f64 / secs,
        bytes as f64 / 1e6 / secs
    );
    Ok(())
}
