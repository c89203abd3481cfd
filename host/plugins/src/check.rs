//! `kura plugins`: what a plugin author and an operator ask of a component
//! before trusting it — `check` (world, imports, compile, what it needs,
//! a sample call), `list` (what each slot serves) and `precompile` (fill
//! the cache, so the next start loads in milliseconds).

use std::path::Path;
use std::sync::Arc;
use std::time::{Duration, Instant};

mod bench;
mod sample;

use super::slot::{Cell, World};
use super::{
    Admission, Limits, Plugins, Runtime, Source, State, Trust, Wasm, bindings, cache, inspect,
};
use crate::config::{Config, Digest, Slot};
use crate::fs::StateDir;
pub use bench::{RerankBench, RerankRound};
use sample::Sample;
pub use sample::{rerank_candidates, sample_candidates};
use wasmtime::component::InstancePre;

/// One line of a report: a label and what was found; `ok` false marks a
/// problem.
#[derive(Clone, Debug)]
pub struct Line {
    pub label: &'static str,
    pub text: String,
    pub ok: bool,
}

/// What `check` found, line by line, and whether the component passes.
#[derive(Clone, Debug, Default)]
pub struct Report {
    pub lines: Vec<Line>,
    /// The slot the component was checked for, once known.
    pub slot: Option<Slot>,
}

impl Report {
    fn push(&mut self, label: &'static str, text: impl Into<String>) {
        self.lines.push(Line {
            label,
            text: text.into(),
            ok: true,
        });
    }

    fn fail(&mut self, label: &'static str, text: impl Into<String>) {
        self.lines.push(Line {
            label,
            text: text.into(),
            ok: false,
        });
    }

    pub fn ok(&self) -> bool {
        self.lines.iter().all(|l| l.ok)
    }
}

impl std::fmt::Display for Report {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        for l in &self.lines {
            let mark = if l.ok { "" } else { "error: " };
            writeln!(f, "{:<12} {mark}{}", l.label, l.text)?;
        }
        Ok(())
    }
}

fn mib(bytes: usize) -> String {
    format!("{:.1} MiB", bytes as f64 / (1 << 20) as f64)
}

fn ms(d: Duration) -> String {
    format!("{:.2} ms", d.as_secs_f64() * 1e3)
}

/// Check a component file for a slot (found from its exports when `slot`
/// is `None`), under the limits `config` gives that slot.
pub fn check(path: &Path, slot: Option<Slot>, config: &Config, state: Option<StateDir>) -> Report {
    let mut r = Report::default();
    let bytes = match crate::fs::read_operator_file(path) {
        Ok(b) => b,
        Err(e) => {
            r.fail("component", format!("{}: {e}", path.display()));
            return r;
        }
    };
    let digest = Digest::of(&bytes);
    r.push(
        "component",
        format!("{} ({}, {digest})", path.display(), mib(bytes.len())),
    );
    let trust = match Trust::new(config) {
        Ok(t) => Arc::new(t),
        Err(e) => {
            r.fail("signer", e);
            return r;
        }
    };
    let signer = match super::signature_beside(path)
        .and_then(|signature| trust.judge(&bytes, signature.as_deref()))
    {
        Ok(signer) => {
            r.push("signer", signer.to_string());
            signer
        }
        Err(e) => {
            r.fail("signer", e);
            return r;
        }
    };
    let outline = match inspect::outline(&bytes) {
        Ok(o) => o,
        Err(e) => {
            r.fail("outline", e);
            return r;
        }
    };
    let Some(slot) = slot.or_else(|| outline.slot()) else {
        r.fail(
            "world",
            format!(
                "exports none of the slots' functions (reranker: rerank, claim-graph: build, auditor: audit, write-policy: check, embedder: embed); it exports: {}",
                outline.exports.join(", ")
            ),
        );
        return r;
    };
    r.slot = Some(slot);
    r.push(
        "world",
        format!("{slot} (exports: {})", outline.exports.join(", ")),
    );
    let admission = Admission::of(config, slot, &trust);
    r.push("grants", admission.grants.describe());
    if !imports_provided(&mut r, &outline, slot, &admission) {
        return r;
    }
    let limits = Limits::new(slot, config.slot_limits(slot));
    let wasm = Wasm {
        slot,
        source: Source::File(path.to_owned()),
        bytes,
        digest,
        signer,
        grants: admission.grants.clone(),
        outline,
    };
    run_slot(&mut r, &wasm, limits, state);
    r
}

/// Whether every interface the component imports is provided for `slot`
/// with its grants (said on the `imports` line).
fn imports_provided(
    r: &mut Report,
    outline: &inspect::Outline,
    slot: Slot,
    admission: &Admission,
) -> bool {
    let interfaces: Vec<&str> = outline
        .imports
        .iter()
        .map(String::as_str)
        .filter(|i| i.contains(':'))
        .collect();
    match outline.check(slot, admission.grants.http()) {
        Ok(()) => {
            r.push(
                "imports",
                format!(
                    "{} interfaces, all provided ({})",
                    interfaces.len(),
                    interfaces.join(", ")
                ),
            );
            true
        }
        Err(e) => {
            r.fail("imports", e);
            false
        }
    }
}

/// Compile, load and call the component through its slot's bindings.
fn run_slot(r: &mut Report, wasm: &Wasm, limits: Limits, state: Option<StateDir>) {
    match wasm.slot {
        Slot::Reranker => {
            run::<bindings::reranker::RerankerPre<super::State>>(r, wasm, limits, state)
        }
        Slot::ClaimGraph => {
            run::<bindings::claim_graph::ClaimGraphPre<super::State>>(r, wasm, limits, state)
        }
        Slot::Auditor => run::<bindings::auditor::AuditorPre<super::State>>(r, wasm, limits, state),
        Slot::WritePolicy => {
            run::<bindings::write_policy::WritePolicyPre<super::State>>(r, wasm, limits, state)
        }
        Slot::Embedder => {
            run::<bindings::embedder::EmbedderPre<super::State>>(r, wasm, limits, state)
        }
    }
}

/// A component compiled now, with what it cost: Cranelift from the wasm,
/// and loading the artifact (what a start with a warm cache pays).
struct Compiled {
    component: wasmtime::component::Component,
    compile: Duration,
    cached_load: Duration,
    artifact_size: usize,
    /// What the compile took from the compile cache.
    reuse: Option<crate::function_cache::Reuse>,
}

impl Compiled {
    fn new(runtime: &Runtime, wasm: &[u8]) -> Result<Compiled, String> {
        let t = Instant::now();
        let (artifact, reuse) = runtime
            .precompile(wasm)
            .map_err(|e| format!("not a loadable component: {}", e.root_cause()))?;
        let compile = t.elapsed();
        let t = Instant::now();
        // SAFETY: these bytes were produced just now by this engine.
        let component =
            unsafe { wasmtime::component::Component::deserialize(&runtime.engine, &artifact) }
                .map_err(|e| e.to_string())?;
        Ok(Compiled {
            component,
            compile,
            cached_load: t.elapsed(),
            artifact_size: artifact.len(),
            reuse,
        })
    }
}

/// How a world's sample call is made (through the same code as kura's
/// own calls).
fn run<P: Sample>(r: &mut Report, wasm: &Wasm, limits: Limits, state: Option<StateDir>) {
    let runtime = match Runtime::new(state) {
        Ok(rt) => rt,
        Err(e) => {
            r.fail("engine", e.message);
            return;
        }
    };
    let c = match Compiled::new(&runtime, &wasm.bytes) {
        Ok(c) => c,
        Err(e) => {
            r.fail("compile", e);
            return;
        }
    };
    r.push(
        "compile",
        format!(
            "{}{} (artifact {}; loading it from the cache takes {})",
            ms(c.compile),
            c.reuse.map(|r| format!(", {r}")).unwrap_or_default(),
            mib(c.artifact_size),
            ms(c.cached_load)
        ),
    );
    let (component, compile) = (c.component, c.compile);
    let pre = match runtime.link::<P>(&component, &wasm.grants) {
        Ok(p) => p,
        Err(e) => {
            r.fail("link", e);
            return;
        }
    };
    if !instantiate(r, &runtime, wasm, limits, pre.instance_pre()) {
        return;
    }
    let cell = Arc::new(Cell::new(
        wasm.slot,
        limits,
        wasm.source.clone(),
        super::Admission::default(),
    ));
    cell.settle(Ok(super::Loaded {
        pre,
        source: wasm.source.clone(),
        hash: blake3::hash(&wasm.bytes).to_hex().to_string(),
        digest: wasm.digest.clone(),
        signer: wasm.signer.clone(),
        grants: wasm.grants.clone(),
        size: wasm.bytes.len(),
        origin: cache::Origin::Compiled,
        load_time: compile,
    }));
    let mut plugins = Plugins {
        runtime,
        write_policy: None,
        reranker: None,
        claim_graph: None,
        auditor: None,
        embedder: None,
    };
    P::put(&mut plugins, cell);
    sample::<P>(r, &plugins, limits);
}

/// Instantiate once to measure the cost and the resources the component
/// takes; false (with the failure reported) when it cannot be.
fn instantiate(
    r: &mut Report,
    runtime: &Runtime,
    wasm: &Wasm,
    limits: Limits,
    pre: &InstancePre<State>,
) -> bool {
    let t = Instant::now();
    let used = match runtime.probe(wasm.slot, &limits, &wasm.grants, pre) {
        Ok(u) => u,
        Err(e) => {
            r.fail("instantiate", e);
            return false;
        }
    };
    let instantiate = t.elapsed();
    let needed = (1..=limits.instances).find(|n| {
        let mut l = limits;
        l.instances = *n;
        runtime.probe(wasm.slot, &l, &wasm.grants, pre).is_ok()
    });
    r.push(
        "instantiate",
        format!(
            "{} per call; needs {} core instances (limit {}), {} memories, {} tables; memory at start {} (limit {} per memory)",
            ms(instantiate),
            needed.map_or("?".into(), |n| n.to_string()),
            limits.instances,
            used.memories,
            used.tables,
            mib(used.peak_memory),
            mib(limits.memory_bytes),
        ),
    );
    true
}

/// Twenty sample calls (fewer if one fails), reported with their median.
fn sample<P: Sample>(r: &mut Report, plugins: &Plugins, limits: Limits) {
    let mut times = Vec::new();
    let mut last = Ok(String::new());
    for _ in 0..20 {
        let t = Instant::now();
        last = P::sample(plugins);
        times.push(t.elapsed());
        if last.is_err() {
            break;
        }
    }
    times.sort();
    match last {
        Ok(what) => r.push(
            "sample call",
            format!(
                "ok: {what}; median {} per call including instantiation (n={}, deadline {} ms)",
                ms(times[times.len() / 2]),
                times.len(),
                limits.timeout.as_millis()
            ),
        ),
        Err(e) => r.fail("sample call", e),
    }
}

/// One slot as `kura plugins list` shows it.
pub struct Listed {
    pub slot: Slot,
    pub source: String,
    pub size: Option<usize>,
    pub digest: Option<Digest>,
    pub signer: Option<String>,
    /// What the slot is granted (`none`: nothing beyond kura's default).
    pub grants: String,
    /// Loaded from the cache or compiled, and how long it took; or why the
    /// slot cannot load.
    pub loaded: Result<Option<(cache::Origin, Duration)>, String>,
    pub limits: Limits,
}

/// What each slot would serve with this configuration: each component
/// read, verified and loaded as a start would (compiled into the cache
/// when it is not there yet).
pub fn list(config: &Config, state: Option<&StateDir>) -> Result<Vec<Listed>, String> {
    let runtime =
        Runtime::new(state.and_then(|s| s.try_clone().ok())).map_err(|e| e.to_string())?;
    let trust = Arc::new(Trust::new(config)?);
    let mut out = Vec::new();
    for slot in Slot::ALL {
        let limits = Limits::new(slot, config.slot_limits(slot));
        let Some(source) = Source::of(config, slot, true) else {
            out.push(Listed {
                slot,
                source: match slot {
                    Slot::Embedder => "the installed model (built in), if any".into(),
                    _ => "baseline rules only (built in)".into(),
                },
                size: None,
                digest: None,
                signer: None,
                grants: "none".into(),
                loaded: Ok(None),
                limits,
            });
            continue;
        };
        let name = source.to_string();
        let admission = Admission::of(config, slot, &trust);
        let grants = admission.grants.describe();
        let listed = match Wasm::read(slot, source, &admission, runtime.state()) {
            Ok(wasm) => Listed {
                slot,
                source: name,
                size: Some(wasm.bytes.len()),
                digest: Some(wasm.digest.clone()),
                signer: Some(wasm.signer.to_string()),
                grants,
                loaded: prepare_any(&runtime, &wasm, &limits)
                    .map(|l| Some((l.origin, l.load_time))),
                limits,
            },
            Err(e) => Listed {
                slot,
                source: name,
                size: None,
                digest: None,
                signer: None,
                grants,
                loaded: Err(e.message),
                limits,
            },
        };
        out.push(listed);
    }
    Ok(out)
}

/// Compile every component this configuration uses into the cache (and
/// prove each instantiates): one line per slot.
pub fn precompile(
    config: &Config,
    state: Option<&StateDir>,
) -> Vec<(Slot, Result<String, String>)> {
    let runtime = match Runtime::new(state.and_then(|s| s.try_clone().ok())) {
        Ok(rt) => rt,
        Err(e) => return vec![(Slot::Reranker, Err(e.to_string()))],
    };
    let trust = match Trust::new(config) {
        Ok(t) => Arc::new(t),
        Err(e) => return vec![(Slot::Reranker, Err(e))],
    };
    let mut out = Vec::new();
    for slot in Slot::ALL {
        let Some(source) = Source::of(config, slot, true) else {
            continue;
        };
        let limits = Limits::new(slot, config.slot_limits(slot));
        let admission = Admission::of(config, slot, &trust);
        let outcome = Wasm::read(slot, source, &admission, runtime.state())
            .map_err(|e| e.message)
            .and_then(|wasm| {
                prepare_any(&runtime, &wasm, &limits)
                    .map(|l| format!("{} in {} ({})", l.origin, ms(l.load_time), mib(l.size)))
            });
        out.push((slot, outcome));
    }
    out
}

/// Prepare a component for whichever world its slot has.
fn prepare_any(rt: &Runtime, wasm: &Wasm, limits: &Limits) -> Result<super::Summary, String> {
    match wasm.slot {
        Slot::Reranker => prepared::<bindings::reranker::RerankerPre<State>>(rt, wasm, limits),
        Slot::ClaimGraph => {
            prepared::<bindings::claim_graph::ClaimGraphPre<State>>(rt, wasm, limits)
        }
        Slot::Auditor => prepared::<bindings::auditor::AuditorPre<State>>(rt, wasm, limits),
        Slot::WritePolicy => {
            prepared::<bindings::write_policy::WritePolicyPre<State>>(rt, wasm, limits)
        }
        Slot::Embedder => prepared::<bindings::embedder::EmbedderPre<State>>(rt, wasm, limits),
    }
}

fn prepared<P: World>(
    rt: &Runtime,
    wasm: &Wasm,
    limits: &Limits,
) -> Result<super::Summary, String> {
    rt.prepare::<P>(wasm, limits).map(|l| super::Summary {
        hash: l.hash,
        size: l.size,
        origin: l.origin,
        load_time: l.load_time,
    })
}
