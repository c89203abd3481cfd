//! `kura-bench vault`: vault_find and artifact_audit at scale, over stdio
//! against the real `kura` binary. The vault is generated like the manual
//! corpus (`corpus::generate`: 5,000 notes by default, sections of the
//! bundled manuals, varied), and searched with the gold queries' text; the
//! audit runs on a 2,000-line source note and a 300-node artifact citing it.

#![allow(clippy::disallowed_methods)] // a bench tool: writes its own vault

use std::path::Path;
use std::time::Instant;

use serde_json::{Value, json};

use kura::client::Session;
use kura::eval::Gold;

use crate::corpus::{self, Rng};
use crate::{ms, peak_rss_mib, percentile, structured};

/// A source of `lines` lines taken from the vault's own notes.
fn source_note(vault: &Path, lines: usize) -> anyhow::Result<String> {
    let mut out = String::new();
    let mut n = 0;
    for p in corpus::markdown_files(vault)? {
        for l in std::fs::read_to_string(&p)?.lines() {
            out.push_str(l);
            out.push('\n');
            n += 1;
            if n == lines {
                return Ok(out);
            }
        }
    }
    anyhow::bail!("the vault has fewer than {lines} lines")
}

/// An artifact of `sections` headings with `per` cited items each
/// (`sections * (per + 1)` nodes), every section linking to the next and
/// back, citing a source of `source_lines` lines.
fn artifact(sections: usize, per: usize, source_lines: usize, rng: &mut Rng) -> String {
    let mut out = String::from("# Bench artifact\n\n");
    let span = source_lines / (sections * per);
    for s in 0..sections {
        out.push_str(&format!("## Part {s}\n"));
        for i in 0..per {
            let start = (s * per + i) * span + 1;
            let end = start + rng.below(span.max(1));
            let link = match i {
                0 if s + 1 < sections => format!(" See [[#Part {}]].", s + 1),
                1 if s > 0 => format!(" Back to [[#Part {}]].", s - 1),
                _ => String::new(),
            };
            out.push_str(&format!("- point {s}.{i} (L{start}-L{end}).{link}\n"));
        }
        out.push('\n');
    }
    out
}

/// `kura serve` over the vault in `dir/vault`, its state in `dir/state`,
/// with no configuration file.
pub async fn serve(kura_bin: &Path, dir: &Path) -> anyhow::Result<Session> {
    std::fs::write(dir.join("none.toml"), "")?;
    let args = vec![
        "--vault-root".to_owned(),
        dir.join("vault").display().to_string(),
        "--state-dir".to_owned(),
        dir.join("state").display().to_string(),
        "--config".to_owned(),
        dir.join("none.toml").display().to_string(),
    ];
    Session::spawn(kura_bin, &args).await
}

/// A vault of `size` generated in `dir/vault`.
pub fn generate(size: &crate::VaultSize, dir: &Path) -> anyhow::Result<corpus::Generated> {
    corpus::generate(
        &size.source,
        &dir.join("vault"),
        size.notes,
        size.megabytes,
        7,
    )
}

pub async fn run(
    size: &crate::VaultSize,
    gold: &[Gold],
    rounds: usize,
    kura_bin: &Path,
) -> anyhow::Result<Value> {
    let dir = tempfile::tempdir()?;
    let vault = dir.path().join("vault");
    let g = generate(size, dir.path())?;
    eprintln!(
        "vault: {} notes, {:.1} MB",
        g.files,
        g.bytes as f64 / 1048576.0
    );
    let mut rng = Rng::new(11);
    std::fs::create_dir_all(vault.join("bench"))?;
    std::fs::write(vault.join("bench/source.md"), source_note(&vault, 2000)?)?;
    std::fs::write(
        vault.join("bench/artifact.md"),
        artifact(30, 9, 2000, &mut rng),
    )?;
    let s = serve(kura_bin, dir.path()).await?;
    // The first call waits for the background index of the whole vault.
    let t = Instant::now();
    structured(&s.call("vault_find", json!({"query": "warm up"})).await?)?;
    let first = ms(t.elapsed());
    let mut lat = Vec::new();
    let mut statuses = std::collections::BTreeMap::<String, u64>::new();
    for round in 0..rounds {
        for q in gold {
            let t = Instant::now();
            let r = s.call("vault_find", json!({"query": q.query})).await?;
            lat.push(ms(t.elapsed()));
            if round == 0 {
                let v = structured(&r)?;
                let st = v["summary"]["integration_status"].as_str().unwrap_or("?");
                *statuses.entry(st.to_owned()).or_default() += 1;
            }
        }
    }
    lat.sort_by(f64::total_cmp);
    let mut audit = Vec::new();
    let mut findings = 0;
    let mut nodes = 0;
    for _ in 0..rounds * 10 {
        let t = Instant::now();
        let r = s
            .call(
                "artifact_audit",
                json!({"artifact_path": "bench/artifact.md", "source_path": "bench/source.md"}),
            )
            .await?;
        audit.push(ms(t.elapsed()));
        let v = structured(&r)?;
        findings = v["findings"].as_array().map_or(0, Vec::len);
        nodes = v["applied"]["node_count"].as_u64().unwrap_or(0);
    }
    audit.sort_by(f64::total_cmp);
    let rss = s.pid.and_then(|p| peak_rss_mib(&p.to_string()));
    s.close().await?;
    let r3 = |x: f64| (x * 1000.0).round() / 1000.0;
    Ok(json!({
        "vault": { "notes": g.files, "megabytes": r3(g.bytes as f64 / 1048576.0) },
        "first_find_ms": r3(first),
        "vault_find_stdio_ms": {
            "p50": r3(percentile(&lat, 0.5)),
            "p95": r3(percentile(&lat, 0.95)),
            "p99": r3(percentile(&lat, 0.99)),
            "n": lat.len(),
        },
        "integration_status": statuses,
        "artifact_audit_stdio_ms": {
            "p50": r3(percentile(&audit, 0.5)),
            "p95": r3(percentile(&audit, 0.95)),
            "n": audit.len(),
            "source_lines": 2000,
            "artifact_nodes": nodes,
            "findings": findings,
        },
        "serve_peak_rss_mib": rss.map(r3),
    }))
}

pub fn print(r: &Value) {
    println!(
        "vault                 {} notes, {} MB",
        r["vault"]["notes"], r["vault"]["megabytes"]
    );
    println!(
        "first vault_find      {} ms (waits for the background index of the whole vault)",
        r["first_find_ms"]
    );
    let f = &r["vault_find_stdio_ms"];
    println!(
        "vault_find (stdio)    p50 {} ms, p95 {} ms, p99 {} ms over {} calls; status {}",
        f["p50"], f["p95"], f["p99"], f["n"], r["integration_status"]
    );
    let a = &r["artifact_audit_stdio_ms"];
    println!(
        "artifact_audit        p50 {} ms, p95 {} ms over {} calls ({}-line source, {}-node artifact, {} findings)",
        a["p50"], a["p95"], a["n"], a["source_lines"], a["artifact_nodes"], a["findings"]
    );
    println!("server peak RSS       {} MiB", r["serve_peak_rss_mib"]);
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_bench_artifact_has_the_nodes_asked() {
        let a = artifact(30, 9, 2000, &mut Rng::new(1));
        let items = a.lines().filter(|l| l.starts_with("- ")).count();
        let headings = a.lines().filter(|l| l.starts_with("## ")).count();
        assert_eq!(items + headings, 300);
        assert!(a.contains("(L1-L"));
    }
}
