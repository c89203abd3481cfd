//! The plugin runtime: wasmtime's component model, one engine, one slot per
//! `kura:plugins` world.
//!
//! A slot holds a compiled component (embedded default or a configured
//! `.wasm`) and a cached `InstancePre`. Every call gets a fresh `Store` with a
//! memory cap and an epoch deadline, so a trap, an endless loop or runaway
//! allocation ends that call only. Components get a WASI context with no
//! preopened folders, no environment, no network and discarded output: they
//! can compute and log through `kura:plugins/log`, nothing else. Compiled
//! artifacts are cached in the state folder, keyed by the wasm's hash and the
//! engine's compatibility hash.

mod auditor;
pub mod bindings;
pub mod claim_graph;
mod reranker;
mod write_policy;

use std::hash::{Hash, Hasher};
use std::path::Path;
use std::sync::{Arc, Condvar, Mutex};
use std::time::Duration;

use wasmtime::component::{Component, HasSelf, InstancePre, Linker, ResourceTable};
use wasmtime::{Config as EngineConfig, Engine, Store, StoreLimits, StoreLimitsBuilder, Trap};
use wasmtime_wasi::{WasiCtx, WasiCtxView, WasiView};

use crate::config::Config;
use crate::error::{Code, Error};
use crate::fs::StateDir;

pub use auditor::{AuditFinding, AuditReport, AuditRequest, FindingKind};
pub use reranker::RerankCandidate;
pub use write_policy::{WriteKind, WriteRequest};

/// The default components, built by `build.rs` and embedded in the binary.
const DEFAULT_WRITE_POLICY: &[u8] = include_bytes!(env!("KURA_WASM_WRITE_POLICY"));
const DEFAULT_RERANKER: &[u8] = include_bytes!(env!("KURA_WASM_RERANKER"));
const DEFAULT_CLAIM_GRAPH: &[u8] = include_bytes!(env!("KURA_WASM_CLAIM_GRAPH"));
const DEFAULT_AUDITOR: &[u8] = include_bytes!(env!("KURA_WASM_AUDITOR"));

/// How often the epoch ticks; deadlines are counted in ticks.
const TICK: Duration = Duration::from_millis(5);

/// What a component's store holds.
pub struct State {
    wasi: WasiCtx,
    table: ResourceTable,
    limits: StoreLimits,
    slot: &'static str,
}

impl WasiView for State {
    fn ctx(&mut self) -> WasiCtxView<'_> {
        WasiCtxView {
            ctx: &mut self.wasi,
            table: &mut self.table,
        }
    }
}

impl bindings::log::Host for State {
    fn log(&mut self, level: bindings::log::Level, message: String) {
        use bindings::log::Level;
        let slot = self.slot;
        match level {
            Level::Error => tracing::error!(target: "kura::plugin", slot, "{message}"),
            Level::Warn => tracing::warn!(target: "kura::plugin", slot, "{message}"),
            Level::Info => tracing::info!(target: "kura::plugin", slot, "{message}"),
            Level::Debug => tracing::debug!(target: "kura::plugin", slot, "{message}"),
        }
    }
}

impl bindings::types::Host for State {}

/// Where a slot's component came from, for messages.
#[derive(Clone, Debug)]
pub enum Source {
    Default,
    File(std::path::PathBuf),
}

impl std::fmt::Display for Source {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        match self {
            Source::Default => f.write_str("the embedded default"),
            Source::File(p) => write!(f, "{}", p.display()),
        }
    }
}

/// A loaded component ready to instantiate; `P` is the world's typed
/// `...Pre` (exports looked up once, at load).
pub struct Slot<P> {
    pub name: &'static str,
    pub source: Source,
    pre: P,
}

#[derive(Debug, thiserror::Error)]
#[error("plugin slot `{slot}` ({source_name}): {message}")]
pub struct LoadError {
    pub slot: &'static str,
    pub source_name: String,
    pub message: String,
}

/// The runtime: engine, limits and the loaded slots.
pub struct Plugins {
    engine: Engine,
    memory_bytes: usize,
    deadline_ticks: u64,
    timeout: Duration,
    ticker: Arc<Ticker>,
    pub write_policy: Option<Slot<bindings::write_policy::WritePolicyPre<State>>>,
    pub reranker: Option<Slot<bindings::reranker::RerankerPre<State>>>,
    pub claim_graph: Option<Slot<bindings::claim_graph::ClaimGraphPre<State>>>,
    pub auditor: Option<Slot<bindings::auditor::AuditorPre<State>>>,
}

/// Advances the engine's epoch every [`TICK`] while a plugin call runs, and
/// sleeps otherwise: an idle server does not wake up 200 times a second.
#[derive(Default)]
struct Ticker {
    active: Mutex<usize>,
    wake: Condvar,
}

/// Marks a plugin call in progress for as long as it lives.
pub(crate) struct Busy<'a>(&'a Ticker);

impl Ticker {
    fn run(&self, engine: &Engine) {
        loop {
            {
                let mut n = self.active.lock().unwrap_or_else(|e| e.into_inner());
                while *n == 0 {
                    n = self.wake.wait(n).unwrap_or_else(|e| e.into_inner());
                }
            }
            std::thread::sleep(TICK);
            engine.increment_epoch();
        }
    }

    fn busy(&self) -> Busy<'_> {
        let mut n = self.active.lock().unwrap_or_else(|e| e.into_inner());
        *n += 1;
        if *n == 1 {
            self.wake.notify_one();
        }
        Busy(self)
    }
}

impl Drop for Busy<'_> {
    fn drop(&mut self) {
        let mut n = self.0.active.lock().unwrap_or_else(|e| e.into_inner());
        *n -= 1;
    }
}

fn engine() -> wasmtime::Result<Engine> {
    let mut config = EngineConfig::new();
    config.epoch_interruption(true);
    config.wasm_component_model(true);
    Engine::new(&config)
}

/// The exports each world requires, for the start-up check.
fn required_exports(slot: &str) -> &'static [&'static str] {
    match slot {
        "reranker" => &["rerank"],
        "claim_graph" => &["build"],
        "auditor" => &["audit"],
        "write_policy" => &["check"],
        _ => &[],
    }
}

impl Plugins {
    /// Load every slot: the configured `.wasm` where there is one, else the
    /// embedded default. The manual slots (reranker, claim graph) are loaded
    /// when the manual domain is served, the auditor when the vault is, or
    /// when a component is configured for them. A component that cannot be loaded or does not implement its
    /// world is an error naming the slot and what is missing.
    pub fn load(
        config: &Config,
        state: Option<&StateDir>,
        read: impl Fn(&Path) -> std::io::Result<Vec<u8>>,
    ) -> Result<Plugins, LoadError> {
        let engine = engine().map_err(|e| LoadError {
            slot: "engine",
            source_name: "wasmtime".into(),
            message: e.to_string(),
        })?;
        let ticker = Arc::new(Ticker::default());
        let (t, e) = (ticker.clone(), engine.clone());
        std::thread::Builder::new()
            .name("kura-epoch".into())
            .spawn(move || t.run(&e))
            .map_err(|e| LoadError {
                slot: "engine",
                source_name: "epoch thread".into(),
                message: e.to_string(),
            })?;
        let timeout = Duration::from_millis(config.plugin_timeout_ms as u64);
        let mut plugins = Plugins {
            engine,
            memory_bytes: (config.plugin_memory_mib as usize) << 20,
            deadline_ticks: (timeout.as_millis() / TICK.as_millis()) as u64 + 1,
            timeout,
            ticker,
            write_policy: None,
            reranker: None,
            claim_graph: None,
            auditor: None,
        };
        let source = |p: &Option<std::path::PathBuf>| match p {
            Some(p) => Source::File(p.clone()),
            None => Source::Default,
        };
        let src = source(&config.plugins.write_policy);
        let wasm = plugins.wasm_of(&src, DEFAULT_WRITE_POLICY, "write_policy", &read)?;
        let slot = plugins.load_slot("write_policy", src, &wasm, state, |l| {
            bindings::write_policy::WritePolicy::add_to_linker::<State, HasSelf<State>>(l, |s| s)
        })?;
        plugins.write_policy = Some(slot.typed(bindings::write_policy::WritePolicyPre::new)?);
        let manual = config.manuals_root.is_some();
        if manual || config.plugins.reranker.is_some() {
            let src = source(&config.plugins.reranker);
            let wasm = plugins.wasm_of(&src, DEFAULT_RERANKER, "reranker", &read)?;
            let slot = plugins.load_slot("reranker", src, &wasm, state, |l| {
                bindings::reranker::Reranker::add_to_linker::<State, HasSelf<State>>(l, |s| s)
            })?;
            plugins.reranker = Some(slot.typed(bindings::reranker::RerankerPre::new)?);
        }
        if manual || config.plugins.claim_graph.is_some() {
            let src = source(&config.plugins.claim_graph);
            let wasm = plugins.wasm_of(&src, DEFAULT_CLAIM_GRAPH, "claim_graph", &read)?;
            let slot = plugins.load_slot("claim_graph", src, &wasm, state, |l| {
                bindings::claim_graph::ClaimGraph::add_to_linker::<State, HasSelf<State>>(l, |s| s)
            })?;
            plugins.claim_graph = Some(slot.typed(bindings::claim_graph::ClaimGraphPre::new)?);
        }
        if config.vault_root.is_some() || config.plugins.auditor.is_some() {
            let src = source(&config.plugins.auditor);
            let wasm = plugins.wasm_of(&src, DEFAULT_AUDITOR, "auditor", &read)?;
            let slot = plugins.load_slot("auditor", src, &wasm, state, |l| {
                bindings::auditor::Auditor::add_to_linker::<State, HasSelf<State>>(l, |s| s)
            })?;
            plugins.auditor = Some(slot.typed(bindings::auditor::AuditorPre::new)?);
        }
        Ok(plugins)
    }

    fn wasm_of(
        &self,
        source: &Source,
        default: &[u8],
        slot: &'static str,
        read: &impl Fn(&Path) -> std::io::Result<Vec<u8>>,
    ) -> Result<Vec<u8>, LoadError> {
        match source {
            Source::Default => Ok(default.to_vec()),
            Source::File(p) => read(p).map_err(|e| LoadError {
                slot,
                source_name: p.display().to_string(),
                message: format!("cannot read the component: {e}"),
            }),
        }
    }

    /// Compile (or load from the cache), check the world's exports, link and
    /// pre-instantiate.
    fn load_slot(
        &self,
        slot: &'static str,
        source: Source,
        wasm: &[u8],
        state: Option<&StateDir>,
        add_world: impl FnOnce(&mut Linker<State>) -> wasmtime::Result<()>,
    ) -> Result<Slot<InstancePre<State>>, LoadError> {
        let fail = |message: String| LoadError {
            slot,
            source_name: source.to_string(),
            message,
        };
        let component = self
            .compile_cached(wasm, state)
            .map_err(|e| fail(format!("not a loadable component: {e:#}")))?;
        let ty = component.component_type();
        let exports: Vec<String> = ty
            .exports(&self.engine)
            .map(|(name, _)| name.to_owned())
            .collect();
        let missing: Vec<&str> = required_exports(slot)
            .iter()
            .copied()
            .filter(|want| !exports.iter().any(|e| e == want))
            .collect();
        if !missing.is_empty() {
            return Err(fail(format!(
                "does not implement the `{}` world: missing export{} {} (it exports: {})",
                slot.replace('_', "-"),
                if missing.len() > 1 { "s" } else { "" },
                missing
                    .iter()
                    .map(|m| format!("`{m}`"))
                    .collect::<Vec<_>>()
                    .join(", "),
                if exports.is_empty() {
                    "nothing".to_owned()
                } else {
                    exports.join(", ")
                }
            )));
        }
        let mut linker = Linker::<State>::new(&self.engine);
        wasmtime_wasi::p2::add_to_linker_sync(&mut linker).map_err(|e| fail(e.to_string()))?;
        add_world(&mut linker).map_err(|e| fail(e.to_string()))?;
        let pre = linker
            .instantiate_pre(&component)
            .map_err(|e| fail(format!("cannot be linked: {e:#}")))?;
        tracing::debug!(slot, source = %source, "plugin loaded");
        Ok(Slot {
            name: slot,
            source,
            pre,
        })
    }

    fn compile_cached(&self, wasm: &[u8], state: Option<&StateDir>) -> wasmtime::Result<Component> {
        let mut h = std::collections::hash_map::DefaultHasher::new();
        self.engine.precompile_compatibility_hash().hash(&mut h);
        let key = format!(
            "components/{}-{:016x}.cwasm",
            blake3::hash(wasm).to_hex(),
            h.finish()
        );
        if let Some(state) = state
            && let Ok(Some(bytes)) = state.read(&key)
        {
            // SAFETY: the artifact was produced by `precompile_component` of an
            // engine with the same compatibility hash (part of the key) and lives
            // in the user's own state folder; a stale or damaged one fails to
            // deserialize and is recompiled below.
            match unsafe { Component::deserialize(&self.engine, &bytes) } {
                Ok(c) => return Ok(c),
                Err(e) => tracing::warn!("recompiling cached component {key}: {e}"),
            }
        }
        let bytes = self.engine.precompile_component(wasm)?;
        // SAFETY: these bytes were produced just now by this engine.
        let component = unsafe { Component::deserialize(&self.engine, &bytes)? };
        if let Some(state) = state
            && let Err(e) = state.write(&key, &bytes)
        {
            tracing::warn!(
                "cannot cache compiled component in {}: {e}",
                state.path().display()
            );
        }
        Ok(component)
    }

    /// Keep the deadline clock running for the duration of one call.
    pub(crate) fn busy(&self) -> Busy<'_> {
        self.ticker.busy()
    }

    /// A fresh store for one call: no files, no env, no network, output discarded.
    fn store(&self, slot: &'static str) -> Store<State> {
        let limits = StoreLimitsBuilder::new()
            .memory_size(self.memory_bytes)
            .trap_on_grow_failure(true)
            .instances(4)
            .build();
        let mut store = Store::new(
            &self.engine,
            State {
                wasi: WasiCtx::builder().build(),
                table: ResourceTable::new(),
                limits,
                slot,
            },
        );
        store.limiter(|s| &mut s.limits);
        store.set_epoch_deadline(self.deadline_ticks);
        store.epoch_deadline_trap();
        store
    }

    /// Map a failed call to `timeout` or `plugin_failed`.
    fn call_error<P>(&self, slot: &Slot<P>, e: wasmtime::Error) -> Error {
        if let Some(Trap::Interrupt) = e.downcast_ref::<Trap>() {
            return Error::new(
                Code::Timeout,
                format!(
                    "the {} plugin did not answer within {} ms",
                    slot.name,
                    self.timeout.as_millis()
                ),
            )
            .with("plugin", slot.name);
        }
        Error::new(
            Code::PluginFailed,
            format!("the {} plugin failed: {e:#}", slot.name),
        )
        .with("plugin", slot.name)
        .with("source", slot.source.to_string())
    }
}

impl Slot<InstancePre<State>> {
    /// Resolve the world's exports once, for every later call.
    fn typed<P>(
        self,
        f: impl FnOnce(InstancePre<State>) -> wasmtime::Result<P>,
    ) -> Result<Slot<P>, LoadError> {
        let Slot { name, source, pre } = self;
        let pre = f(pre).map_err(|e| LoadError {
            slot: name,
            source_name: source.to_string(),
            message: format!("does not match its world: {e:#}"),
        })?;
        Ok(Slot { name, source, pre })
    }
}
