//! `kura plugins check FILE --eval`: what a candidate reranker or claim
//! graph does to manual search before it serves anyone. The manual gold set
//! runs twice over one index — with the component the configuration serves
//! now, then with the candidate in its place (same grants and limits) — and
//! hit@5, MRR@5 and latency are printed side by side, per split. The
//! candidate runs with the slot's limits but none of its grants (hosts,
//! folder, variables) unless `--with-grants` lends them: a component under
//! trial is not handed production credentials by default. A candidate
//! whose calls fail in any answer is refused (the reranker's silent
//! fallback would otherwise score as the current one), and with
//! `--max-mrr-drop` so is one whose MRR@5 over the whole set falls by more
//! than that; a refusal exits non-zero.

use std::path::{Path, PathBuf};

use super::{Figures, GOLD, Gold, Measured, ROOT, header, load_gold, row, run_answers, run_set};
use crate::app::App;
use crate::config::{Config, Slot};

/// The admission eval's own flags (beside `kura plugins check`'s).
#[derive(clap::Args, Debug, Clone)]
pub struct AdmissionArgs {
    /// Run the manual gold set with the component in place and compare it
    /// with the one the configuration serves now (reranker, claim graph).
    #[arg(long)]
    pub eval: bool,
    /// Refuse the component when MRR@5 over the whole gold set falls by
    /// more than this (e.g. 0.01).
    #[arg(long, requires = "eval")]
    pub max_mrr_drop: Option<f64>,
    /// Folder holding the manuals the gold set names.
    #[arg(long, default_value = ROOT, requires = "eval")]
    pub root: PathBuf,
    /// The gold set (JSON lines; repeat for several files).
    #[arg(long, default_values = GOLD, requires = "eval")]
    pub gold: Vec<PathBuf>,
    /// Lend the candidate the slot's grants (HTTP hosts, folder,
    /// variables) as configured; without it the candidate runs with none.
    #[arg(long, requires = "eval")]
    pub with_grants: bool,
}

/// One side of the comparison.
struct Side {
    name: String,
    figures: Vec<(&'static str, Figures)>,
    total: Figures,
    failed: usize,
}

/// Run the comparison and print it; `Ok(false)` when the margin refuses
/// the candidate.
pub fn admit(
    file: &Path,
    slot: Slot,
    operator: &Config,
    args: &AdmissionArgs,
) -> Result<bool, String> {
    if !matches!(slot, Slot::Reranker | Slot::ClaimGraph) {
        return Err(format!(
            "the admission eval runs manual search's gold set: it judges a reranker or a claim graph, not a {slot}"
        ));
    }
    let mut gold = Vec::new();
    for path in &args.gold {
        gold.extend(load_gold(path)?);
    }
    let tmp = tempfile::tempdir().map_err(|e| e.to_string())?;
    let current = operator.plugins.slot(slot).clone();
    let current_name = match &current.path {
        Some(p) => p.display().to_string(),
        None => "the embedded default".to_owned(),
    };
    let mut candidate = current.clone();
    candidate.path = Some(file.to_owned());
    // The pin names the current component's bytes, not the candidate's.
    candidate.digest = None;
    if !args.with_grants {
        candidate.http_hosts = None;
        candidate.folder = None;
        candidate.env = None;
    }
    let mut sides = Vec::new();
    let mut unloaded = None;
    for (name, slot_config) in [("current", current), ("candidate", candidate)] {
        let mut config = trial_config(operator, args, tmp.path());
        *config.plugins.slot_mut(slot) = slot_config;
        match measure(name.to_owned(), config, &gold) {
            Ok(side) => sides.push(side),
            // A candidate that cannot even load is refused, not an error
            // of the eval (one that needs grants it was not lent, say).
            Err(e) if name == "candidate" => unloaded = Some(e),
            Err(e) => return Err(e),
        }
    }
    let sets: Vec<String> = args.gold.iter().map(|p| p.display().to_string()).collect();
    println!(
        "admission eval of a {slot}: {} questions ({}) over {}",
        gold.len(),
        sets.join(", "),
        args.root.display()
    );
    println!("current      {current_name}");
    println!("candidate    {}", file.display());
    println!(
        "grants       {}",
        if args.with_grants {
            "the candidate has the slot's (--with-grants)"
        } else {
            "the candidate has none (--with-grants lends it the slot's)"
        }
    );
    if let Some(why) = unloaded {
        println!("verdict      refused: the candidate did not load: {why}");
        return Ok(false);
    }
    let [current, candidate] = [&sides[0], &sides[1]];
    let mrr = compare(current, candidate, gold.len());
    Ok(verdict(args.max_mrr_drop, candidate, mrr, gold.len()))
}

/// The configuration one side runs with: the gold set's manuals, a state
/// folder of its own, the operator's plugin trust and limits.
fn trial_config(operator: &Config, args: &AdmissionArgs, state: &Path) -> Config {
    Config {
        manuals_root: Some(args.root.clone()),
        state_dir: Some(state.to_owned()),
        plugin_trusted_keys: operator.plugin_trusted_keys.clone(),
        plugin_require_signature: operator.plugin_require_signature,
        plugin_timeout_ms: operator.plugin_timeout_ms,
        plugin_memory_mib: operator.plugin_memory_mib,
        plugin_instances: operator.plugin_instances,
        ..Config::default()
    }
}

/// Print both sides' figures, per split and whole, and the change; the
/// change in MRR@5.
fn compare(current: &Side, candidate: &Side, questions: usize) -> f64 {
    print!("{}", header("[split] component"));
    for (i, (split, _)) in current.figures.iter().enumerate() {
        for side in [current, candidate] {
            print!(
                "{}",
                row(&format!("[{split}] {}", side.name), &side.figures[i].1)
            );
        }
    }
    for side in [current, candidate] {
        print!("{}", row(&format!("[all] {}", side.name), &side.total));
    }
    let mrr = candidate.total.mrr_at_5 - current.total.mrr_at_5;
    let hit = candidate.total.hit_at_5 - current.total.hit_at_5;
    println!(
        "change       hit@5 {hit:+.3}, MRR@5 {mrr:+.3}, p50 {:+.2} ms, p95 {:+.2} ms",
        candidate.total.p50_ms - current.total.p50_ms,
        candidate.total.p95_ms - current.total.p95_ms
    );
    for side in [current, candidate] {
        if side.failed > 0 {
            println!(
                "warning      {}: the component failed (or the claim graph was blocked) in {} of {questions} answers",
                side.name, side.failed,
            );
        }
    }
    mrr
}

/// Whether the candidate is admitted (said on the verdict line): it failed
/// in no answer, and its MRR@5 fell by no more than the margin, if any.
fn verdict(margin: Option<f64>, candidate: &Side, mrr: f64, questions: usize) -> bool {
    match margin {
        _ if candidate.failed > 0 => {
            println!(
                "verdict      refused: the candidate failed in {} of {questions} answers",
                candidate.failed,
            );
            false
        }
        Some(margin) if -mrr > margin + 1e-9 => {
            println!(
                "verdict      refused: MRR@5 falls by {:.3}, more than the margin {margin:.3}",
                -mrr
            );
            false
        }
        Some(margin) => {
            println!("verdict      admitted: MRR@5 falls by no more than {margin:.3}");
            true
        }
        None => true,
    }
}

/// The gold set on one configuration, its component loaded first.
fn measure(name: String, config: Config, gold: &[Gold]) -> Result<Side, String> {
    let app = App::start(config, crate::CATALOG).map_err(|e| e.to_string())?;
    let manuals = app
        .domains
        .find::<crate::manual::Manuals>()
        .ok_or("no manuals")?;
    manuals.refresh().map_err(|e| e.message)?;
    // Compiled and instantiated before the first question, so that no
    // answer goes without it.
    app.plugins.settle(crate::plugins::LOAD_WAIT);
    manuals.dense_now();
    // One warm-up pass: the figures are not the first calls' costs.
    run_set(&app, &gold[..gold.len().min(5)], false)?;
    let (outcomes, failed) = run_answers(&app, gold, false)?;
    let run = Measured::of(gold, &outcomes);
    Ok(Side {
        name,
        figures: run
            .splits
            .iter()
            .filter(|(_, s)| s.total.queries > 0)
            .map(|(split, s)| (*split, s.total.clone()))
            .collect(),
        total: run.total.clone(),
        failed,
    })
}
