//! The plugin runtime: wasmtime's component model, one engine, one slot per
//! `kura:plugins` world.
//!
//! Start-up reads each component and checks its outline (world, imports)
//! at once, then compiles it on a thread of its own (or loads it from the
//! cache), links it and instantiates it once under the slot's limits, so
//! `initialize` never waits for Cranelift and a limit or import problem is
//! reported as soon as it is known. Every call gets a fresh `Store` with
//! the slot's memory cap, instance count and epoch deadline, so a trap, an
//! endless loop or runaway allocation ends that call only. Components get
//! a WASI context with no preopened folders, no environment, no network;
//! what they print goes to kura's log (bounded), never to stdout.
//!
//! What a call does while its component is still loading: the reranker
//! waits [`RERANK_WAIT`] and is then skipped (`late_rerank: "pending"`);
//! the other slots wait up to [`LOAD_WAIT`], after which the write policy
//! refuses the write (fail closed) and the others fail as a component
//! would.

// The layers below, under the names this crate's modules use.
use kura_core::{config, error, fs, policy};

mod auditor;
pub mod bindings;
pub mod cache;
pub mod check;
pub mod claim_graph;
mod embedder;
pub mod function_cache;
pub mod grants;
pub mod inspect;
pub mod limits;
mod load;
mod output;
mod reranker;
mod signature;
mod slot;
pub mod store;
pub mod template;
pub mod trust;
mod write_policy;

use std::sync::{Arc, Condvar, Mutex};
use std::time::{Duration, Instant};

use wasmtime::component::{Component, InstancePre, Linker, ResourceTable};
use wasmtime::{Config as EngineConfig, Engine, Store, Trap};
use wasmtime_wasi::{WasiCtx, WasiCtxView, WasiView};

use crate::config::{Config, Slot};
use crate::error::{Code, Error};
use crate::fs::StateDir;

pub use auditor::{AuditFinding, AuditReport, AuditRequest, FindingKind};
pub use cache::Origin;
pub use embedder::{EMBED_BATCH, Embedder, VECTOR_MAX};
pub use limits::Limits;
pub use reranker::{RerankCandidate, Reranked};
pub use slot::{Admission, Loaded, NotReady, Source};
pub use trust::{Signer, Trust};
pub use write_policy::{WriteKind, WriteRequest};

use limits::{Limiter, TICK};
use load::{ready, reload_slot, start_slot};
use output::Captured;
use slot::{Cell, World};

/// The default components, built by `build.rs` and embedded in the binary.
/// The write policy has none: its baseline rules are built into the host.
const DEFAULT_RERANKER: &[u8] = include_bytes!(env!("KURA_WASM_RERANKER"));
const DEFAULT_CLAIM_GRAPH: &[u8] = include_bytes!(env!("KURA_WASM_CLAIM_GRAPH"));
const DEFAULT_AUDITOR: &[u8] = include_bytes!(env!("KURA_WASM_AUDITOR"));

/// How long a reranker call waits for its component to load.
pub const RERANK_WAIT: Duration = Duration::from_secs(1);
/// How long a reload waits after a component file changes, for the writer
/// to finish.
pub const RELOAD_SETTLE: Duration = Duration::from_millis(300);
/// How long other calls wait for their component to load.
pub const LOAD_WAIT: Duration = Duration::from_secs(30);

/// What a component's store holds.
pub struct State {
    wasi: WasiCtx,
    table: ResourceTable,
    limiter: Limiter,
    slot: Slot,
    /// wasi:http, linked only for a slot granted HTTP hosts.
    http: wasmtime_wasi_http::WasiHttpCtx,
    gate: grants::HttpGate,
}

impl WasiView for State {
    fn ctx(&mut self) -> WasiCtxView<'_> {
        WasiCtxView {
            ctx: &mut self.wasi,
            table: &mut self.table,
        }
    }
}

impl wasmtime_wasi_http::WasiHttpView for State {
    fn http(&mut self) -> wasmtime_wasi_http::WasiHttpCtxView<'_> {
        wasmtime_wasi_http::WasiHttpCtxView {
            ctx: &mut self.http,
            table: &mut self.table,
            hooks: &mut self.gate,
        }
    }
}

impl bindings::log::Host for State {
    fn log(&mut self, level: bindings::log::Level, message: String) {
        use bindings::log::Level;
        let slot = self.slot.name();
        let message = message.chars().take(output::KEEP).collect::<String>();
        match level {
            Level::Error => tracing::error!(target: "kura::plugin", slot, "{message}"),
            Level::Warn => tracing::warn!(target: "kura::plugin", slot, "{message}"),
            Level::Info => tracing::info!(target: "kura::plugin", slot, "{message}"),
            Level::Debug => tracing::debug!(target: "kura::plugin", slot, "{message}"),
        }
    }
}

impl bindings::types::Host for State {}

#[derive(Debug, thiserror::Error)]
#[error("plugin slot {slot} ({source_name}): {message}")]
pub struct LoadError {
    pub slot: Slot,
    pub source_name: String,
    pub message: String,
}

/// The engine and what every slot shares; loader threads hold it too.
pub struct Runtime {
    pub engine: Engine,
    ticker: Arc<Ticker>,
    /// The ticker's thread, joined when the runtime drops.
    ticking: Option<std::thread::JoinHandle<()>>,
    state: Option<StateDir>,
    /// The engine's incremental cache (in the state folder, when there is one).
    functions: Option<Arc<function_cache::FunctionCache>>,
}

/// The runtime and its slots (a slot is `None` when nothing is loaded for
/// it: no write-policy component configured, or a domain not served).
pub struct Plugins {
    pub runtime: Arc<Runtime>,
    write_policy: Option<Arc<Cell<bindings::write_policy::WritePolicyPre<State>>>>,
    reranker: Option<Arc<Cell<bindings::reranker::RerankerPre<State>>>>,
    claim_graph: Option<Arc<Cell<bindings::claim_graph::ClaimGraphPre<State>>>>,
    auditor: Option<Arc<Cell<bindings::auditor::AuditorPre<State>>>>,
    embedder: Option<Arc<Cell<bindings::embedder::EmbedderPre<State>>>>,
}

/// Advances the engine's epoch every [`TICK`] while a plugin call runs, and
/// sleeps otherwise: an idle server does not wake up 200 times a second.
/// Its thread ends with the runtime (a process that starts and drops many,
/// as `kura eval` and the tests do, kept one thread and one engine each).
#[derive(Default)]
struct Ticker {
    state: Mutex<Ticks>,
    wake: Condvar,
}

#[derive(Default)]
struct Ticks {
    /// Plugin calls in progress.
    active: usize,
    /// The runtime is gone: the thread returns.
    stopped: bool,
}

/// Marks a plugin call in progress for as long as it lives.
pub(crate) struct Busy<'a>(&'a Ticker);

impl Ticker {
    /// The thread's loop; the engine is held weakly, so the thread never
    /// keeps it alive.
    fn run(&self, engine: &wasmtime::EngineWeak) {
        loop {
            {
                let mut t = self.ticks();
                while t.active == 0 && !t.stopped {
                    t = self.wake.wait(t).unwrap_or_else(|e| e.into_inner());
                }
                if t.stopped {
                    return;
                }
            }
            std::thread::sleep(TICK);
            match engine.upgrade() {
                Some(engine) => engine.increment_epoch(),
                None => return,
            }
        }
    }

    fn ticks(&self) -> std::sync::MutexGuard<'_, Ticks> {
        self.state.lock().unwrap_or_else(|e| e.into_inner())
    }

    fn busy(&self) -> Busy<'_> {
        let mut t = self.ticks();
        t.active += 1;
        if t.active == 1 {
            self.wake.notify_one();
        }
        Busy(self)
    }

    fn stop(&self) {
        self.ticks().stopped = true;
        self.wake.notify_one();
    }
}

impl Drop for Busy<'_> {
    fn drop(&mut self) {
        self.0.ticks().active -= 1;
    }
}

impl Drop for Runtime {
    fn drop(&mut self) {
        self.ticker.stop();
        if let Some(thread) = self.ticking.take() {
            let _ = thread.join(); // within one TICK: it waits or sleeps
        }
    }
}

fn engine(functions: Option<Arc<function_cache::FunctionCache>>) -> wasmtime::Result<Engine> {
    let mut config = EngineConfig::new();
    config.epoch_interruption(true);
    config.wasm_component_model(true);
    if let Some(functions) = functions {
        config.enable_incremental_compilation(functions)?;
    }
    Engine::new(&config)
}

/// A slot's component before it is compiled: its bytes, where they came
/// from and who vouches for them, its outline checked.
pub struct Wasm {
    pub slot: Slot,
    pub source: Source,
    pub bytes: Vec<u8>,
    pub digest: config::Digest,
    pub signer: Signer,
    pub grants: Arc<grants::Grants>,
    pub outline: inspect::Outline,
}

impl Wasm {
    /// Read (a file, a pulled reference from the store, or the embedded
    /// default), prove its digest and signature as `admission` asks, and
    /// check the outline and the export's type against the slot's world:
    /// milliseconds, no compile.
    pub fn read(
        slot: Slot,
        source: Source,
        admission: &Admission,
        state: Option<&StateDir>,
    ) -> Result<Wasm, LoadError> {
        let fail = |message: String| LoadError {
            slot,
            source_name: source.to_string(),
            message,
        };
        let (bytes, signature) = match &source {
            Source::Embedded => (
                embedded(slot)
                    .ok_or_else(|| fail("has no embedded default".into()))?
                    .to_vec(),
                None,
            ),
            Source::File(p) => {
                let bytes = crate::fs::read_operator_file(p)
                    .map_err(|e| fail(format!("cannot read the component: {e}")))?;
                (bytes, signature_beside(p).map_err(&fail)?)
            }
            Source::Oci(r) => {
                let stored = store::resolve(state, r).map_err(&fail)?;
                (stored.bytes, stored.signature)
            }
        };
        let digest = config::Digest::of(&bytes);
        trust::check_pin(admission.pin.as_ref(), &digest).map_err(&fail)?;
        let signer = match source {
            Source::Embedded => Signer::BuiltIn,
            _ => admission
                .trust
                .judge(&bytes, signature.as_deref())
                .map_err(&fail)?,
        };
        let outline = inspect::outline(&bytes).map_err(&fail)?;
        outline
            .check(slot, admission.grants.http())
            .map_err(&fail)?;
        signature::check(slot, &bytes).map_err(&fail)?;
        Ok(Wasm {
            slot,
            source,
            bytes,
            digest,
            signer,
            grants: admission.grants.clone(),
            outline,
        })
    }
}

/// The detached signature beside a component file: `FILE.minisig`,
/// minisign's own name for it.
pub fn signature_beside(path: &std::path::Path) -> Result<Option<Vec<u8>>, String> {
    let mut sig = path.as_os_str().to_owned();
    sig.push(".minisig");
    match crate::fs::read_operator_file(std::path::Path::new(&sig)) {
        Ok(s) => Ok(Some(s)),
        Err(e) if e.kind() == std::io::ErrorKind::NotFound => Ok(None),
        Err(e) => Err(format!("cannot read its signature: {e}")),
    }
}

/// The embedded default of a slot.
pub fn embedded(slot: Slot) -> Option<&'static [u8]> {
    match slot {
        Slot::Reranker => Some(DEFAULT_RERANKER),
        Slot::ClaimGraph => Some(DEFAULT_CLAIM_GRAPH),
        Slot::Auditor => Some(DEFAULT_AUDITOR),
        Slot::WritePolicy | Slot::Embedder => None,
    }
}

impl Runtime {
    pub fn new(state: Option<StateDir>) -> Result<Arc<Runtime>, LoadError> {
        let fail = |what: &str, message: String| LoadError {
            slot: Slot::Reranker,
            source_name: what.into(),
            message,
        };
        let functions = match state.as_ref().map(StateDir::try_clone).transpose() {
            Ok(state) => state.map(function_cache::FunctionCache::new),
            Err(e) => {
                tracing::warn!("no compile cache: {e}");
                None
            }
        };
        let engine = engine(functions.clone()).map_err(|e| fail("wasmtime", e.to_string()))?;
        let ticker = Arc::new(Ticker::default());
        let (t, e) = (ticker.clone(), engine.weak());
        let ticking = std::thread::Builder::new()
            .name("kura-epoch".into())
            .spawn(move || t.run(&e))
            .map_err(|e| fail("epoch thread", e.to_string()))?;
        Ok(Arc::new(Runtime {
            engine,
            ticker,
            ticking: Some(ticking),
            state,
            functions,
        }))
    }

    /// Compile `wasm` to an artifact (on the compile pool), taking what
    /// functions it can from the compile cache; what it took, when there
    /// is one.
    pub fn precompile(
        &self,
        wasm: &[u8],
    ) -> wasmtime::Result<(Vec<u8>, Option<function_cache::Reuse>)> {
        let compile = self.functions.as_ref().map(|f| f.compile());
        let artifact = cache::precompile(&self.engine, wasm)?;
        let reuse = compile.map(function_cache::Compile::end);
        if let Some(reuse) = reuse {
            tracing::info!("compiled with {reuse}");
        }
        Ok((artifact, reuse))
    }

    pub fn state(&self) -> Option<&StateDir> {
        self.state.as_ref()
    }

    /// Keep the deadline clock running for the duration of one call.
    pub(crate) fn busy(&self) -> Busy<'_> {
        self.ticker.busy()
    }

    /// A fresh store for one call: no files, no env, no network but what
    /// the slot is granted; what the component prints is captured in `out`.
    pub(crate) fn store(
        &self,
        slot: Slot,
        limits: &Limits,
        grants: &Arc<grants::Grants>,
        out: &Captured,
    ) -> Result<Store<State>, String> {
        let mut wasi = WasiCtx::builder();
        wasi.stdout(out.clone()).stderr(out.clone());
        for (k, v) in &grants.env {
            wasi.env(k, v);
        }
        if let Some(folder) = &grants.folder {
            wasi.preopened_dir(
                folder,
                grants::FOLDER_IN_GUEST,
                wasmtime_wasi::FsPerms::ReadOnly,
            )
            .map_err(|e| format!("cannot open its granted folder {}: {e}", folder.display()))?;
        }
        let mut store = Store::new(
            &self.engine,
            State {
                wasi: wasi.build(),
                table: ResourceTable::new(),
                limiter: limits.limiter(),
                slot,
                http: wasmtime_wasi_http::WasiHttpCtx::new(),
                gate: grants::HttpGate::new(grants.clone(), limits.timeout),
            },
        );
        store.limiter(|s| &mut s.limiter);
        store.set_epoch_deadline(limits.deadline_ticks());
        store.epoch_deadline_trap();
        Ok(store)
    }

    /// Compile (or load from the cache), link against the world and
    /// instantiate once under the slot's limits. The error is one line.
    pub fn prepare<P: World>(&self, wasm: &Wasm, limits: &Limits) -> Result<Loaded<P>, String> {
        let t = Instant::now();
        let hash = blake3::hash(&wasm.bytes);
        let (component, origin) = cache::compile(self, &wasm.bytes, &hash)
            .map_err(|e| format!("not a loadable component: {}", e.root_cause()))?;
        let pre = self.link::<P>(&component, &wasm.grants)?;
        self.probe(wasm.slot, limits, &wasm.grants, pre.instance_pre())?;
        Ok(Loaded {
            pre,
            source: wasm.source.clone(),
            hash: hash.to_hex().to_string(),
            digest: wasm.digest.clone(),
            signer: wasm.signer.clone(),
            grants: wasm.grants.clone(),
            size: wasm.bytes.len(),
            origin,
            load_time: t.elapsed(),
        })
    }

    fn link<P: World>(&self, component: &Component, grants: &grants::Grants) -> Result<P, String> {
        let mut linker = Linker::<State>::new(&self.engine);
        wasmtime_wasi::p2::add_to_linker_sync(&mut linker).map_err(|e| e.to_string())?;
        if grants.http() {
            wasmtime_wasi_http::p2::add_only_http_to_linker_sync(&mut linker)
                .map_err(|e| e.to_string())?;
        }
        P::link(&mut linker).map_err(|e| e.to_string())?;
        let pre = linker
            .instantiate_pre(component)
            .map_err(|e| format!("cannot be linked: {}", one_line(&e)))?;
        P::typed(pre).map_err(|e| format!("does not match its world: {}", one_line(&e)))
    }

    /// Instantiate once, as every call will: an instance, memory or table
    /// limit, or a start function that traps, is reported now.
    pub(crate) fn probe(
        &self,
        slot: Slot,
        limits: &Limits,
        grants: &Arc<grants::Grants>,
        pre: &InstancePre<State>,
    ) -> Result<limits::Used, String> {
        let _busy = self.busy();
        let out = Captured::default();
        let mut store = self.store(slot, limits, grants, &out)?;
        let outcome = pre.instantiate(&mut store);
        out.log(slot.name());
        match outcome {
            Ok(_) => Ok(store.data().limiter.used),
            Err(e) => Err(format!(
                "cannot be instantiated: {}",
                self.reason(slot, limits, &e, &out)
            )),
        }
    }

    /// The one-line reason of a failed call or instantiation.
    fn reason(&self, slot: Slot, limits: &Limits, e: &wasmtime::Error, out: &Captured) -> String {
        if let Some(Trap::Interrupt) = e.downcast_ref::<Trap>() {
            return format!(
                "did not answer within {} ms (plugins.{slot}.timeout_ms)",
                limits.timeout.as_millis()
            );
        }
        let root = e.root_cause().to_string();
        limits
            .explain(&root)
            .unwrap_or_else(|| output::reason(&root, &out.text().0))
    }

    /// Run one call in a fresh store; a failure becomes `timeout` or
    /// `plugin_failed` with one line, and the full text goes to the log.
    pub(crate) fn call<P, R>(
        &self,
        cell: &Cell<P>,
        loaded: &Loaded<P>,
        f: impl FnOnce(&mut Store<State>, &P) -> wasmtime::Result<R>,
    ) -> Result<R, Error> {
        let _busy = self.busy();
        let out = Captured::default();
        let mut store = self
            .store(cell.slot, &cell.limits, &loaded.grants, &out)
            .map_err(|why| {
                Error::new(
                    Code::PluginFailed,
                    format!("the {} plugin failed: {why}", cell.slot),
                )
                .with("plugin", cell.slot.name())
            })?;
        let outcome = f(&mut store, &loaded.pre);
        out.log(cell.slot.name());
        outcome.map_err(|e| {
            let slot = cell.slot;
            tracing::warn!(target: "kura::plugin", slot = slot.name(), source = %loaded.source, "call failed: {e:?}");
            let code = match e.downcast_ref::<Trap>() {
                Some(Trap::Interrupt) => Code::Timeout,
                _ => Code::PluginFailed,
            };
            Error::new(
                code,
                format!(
                    "the {slot} plugin failed: {}",
                    self.reason(slot, &cell.limits, &e, &out)
                ),
            )
            .with("plugin", slot.name())
            .with("source", loaded.source.to_string())
        })
    }
}

/// The first line of an error chain, without wasm backtraces.
fn one_line(e: &wasmtime::Error) -> String {
    let text = format!("{e:#}");
    text.lines().next().unwrap_or("").trim().to_owned()
}

/// Compiling is background work: on a 2-core machine Cranelift would
/// otherwise take both cores from the thread answering `initialize`. On
/// Linux a thread's nice value is its own and is inherited by the threads
/// it starts (Cranelift's worker pool is started by this thread).
fn lower_priority() {
    #[cfg(target_os = "linux")]
    {
        // SAFETY: nice(2) only changes the scheduling priority of the
        // calling thread; it touches no memory.
        let _ = unsafe { libc::nice(10) };
    }
}

impl Plugins {
    /// Start every slot: the configured `.wasm` where there is one, else the
    /// embedded default (the write policy has none: its baseline is built
    /// in). The manual slots (reranker, claim graph) are loaded when the
    /// manual domain is served, the auditor when the vault is, or when a
    /// component is configured for them. A component that cannot be read,
    /// is not a component, implements another world or imports what kura
    /// does not provide stops the start with one line; compiling happens in
    /// the background.
    pub fn load(config: &Config, state: Option<&StateDir>) -> Result<Plugins, LoadError> {
        let state = state.and_then(|s| s.try_clone().ok());
        let runtime = Runtime::new(state)?;
        let trust = Arc::new(Trust::new(config).map_err(|message| LoadError {
            slot: Slot::Reranker,
            source_name: "the configuration".into(),
            message,
        })?);
        let manual = config.manuals_root.is_some();
        let vault = config.vault_root.is_some();
        let mut jobs = Vec::new();
        let (rt, t, j) = (&runtime, &trust, &mut jobs);
        let plugins = Plugins {
            write_policy: start_slot(rt, config, t, Slot::WritePolicy, vault, j)?,
            reranker: start_slot(rt, config, t, Slot::Reranker, manual, j)?,
            claim_graph: start_slot(rt, config, t, Slot::ClaimGraph, manual, j)?,
            auditor: start_slot(rt, config, t, Slot::Auditor, vault, j)?,
            // No default: without one configured, the installed model.
            embedder: start_slot(rt, config, t, Slot::Embedder, false, j)?,
            runtime,
        };
        // One loader, smallest component first: Cranelift already compiles
        // one component on every core, and the small defaults are ready in
        // milliseconds instead of waiting behind an 18 MB one.
        jobs.sort_by_key(|(size, _)| *size);
        std::thread::Builder::new()
            .name("kura-plugin-loader".into())
            .spawn(move || {
                lower_priority();
                for (_, job) in jobs {
                    job();
                }
            })
            .map_err(|e| LoadError {
                slot: Slot::Reranker,
                source_name: "loader thread".into(),
                message: e.to_string(),
            })?;
        Ok(plugins)
    }

    /// Re-read every component that comes from a file and swap in those
    /// that load; a bad one leaves the old one serving (and says why in the
    /// log). Returns how many were swapped and how many refused.
    pub fn reload(&self) -> (usize, usize) {
        let rt = &self.runtime;
        let outcomes = [
            reload_slot(rt, &self.write_policy),
            reload_slot(rt, &self.reranker),
            reload_slot(rt, &self.claim_graph),
            reload_slot(rt, &self.auditor),
            reload_slot(rt, &self.embedder),
        ];
        if outcomes[4] == Some(true) {
            tracing::info!(
                target: "kura::plugin",
                "the embedder changed: the search's vectors are made by the new one from the next start"
            );
        }
        let done = outcomes.iter().flatten().filter(|ok| **ok).count();
        let refused = outcomes.iter().flatten().filter(|ok| !**ok).count();
        (done, refused)
    }

    /// Reload on a change of a component file (debounced: a build writes
    /// in several steps; a half-written file fails validation and the next
    /// event tries again). Keep the returned watcher alive.
    pub fn watch(self: &Arc<Self>) -> Option<notify::RecommendedWatcher> {
        let files = self.files();
        if files.is_empty() {
            return None;
        }
        let pending = Arc::new(std::sync::atomic::AtomicBool::new(false));
        let plugins = Arc::downgrade(self);
        crate::fs::watch_files(&files, move || {
            use std::sync::atomic::Ordering;
            if pending.swap(true, Ordering::SeqCst) {
                return;
            }
            let (pending, plugins) = (pending.clone(), plugins.clone());
            let spawned = std::thread::Builder::new()
                .name("kura-plugin-reload".into())
                .spawn(move || {
                    std::thread::sleep(RELOAD_SETTLE);
                    pending.store(false, Ordering::SeqCst);
                    if let Some(p) = plugins.upgrade() {
                        p.reload();
                    }
                });
            if let Err(e) = spawned {
                tracing::warn!("cannot reload the plugins: {e}");
            }
        })
    }

    /// The component files in use, for a watcher (a pulled component's is
    /// the lock file: a new pull swaps it in).
    pub fn files(&self) -> Vec<std::path::PathBuf> {
        let sources = [
            self.write_policy.as_ref().map(|c| &c.source),
            self.reranker.as_ref().map(|c| &c.source),
            self.claim_graph.as_ref().map(|c| &c.source),
            self.auditor.as_ref().map(|c| &c.source),
            self.embedder.as_ref().map(|c| &c.source),
        ];
        sources
            .into_iter()
            .flatten()
            .filter_map(|s| match s {
                Source::File(p) => Some(p.clone()),
                Source::Oci(_) => Some(self.runtime.state()?.path().join(store::LOCK)),
                Source::Embedded => None,
            })
            .collect::<std::collections::BTreeSet<_>>()
            .into_iter()
            .collect()
    }

    /// Wait until every slot has loaded or failed (for `kura plugins`,
    /// benches and one-shot calls that want a settled state).
    pub fn settle(&self, wait: Duration) {
        if let Some(c) = &self.write_policy {
            let _ = c.get(wait);
        }
        if let Some(c) = &self.reranker {
            let _ = c.get(wait);
        }
        if let Some(c) = &self.claim_graph {
            let _ = c.get(wait);
        }
        if let Some(c) = &self.auditor {
            let _ = c.get(wait);
        }
        if let Some(c) = &self.embedder {
            let _ = c.get(wait);
        }
    }
}

/// What `kura plugins precompile` tells of a loaded component.
#[derive(Clone, Debug)]
pub struct Summary {
    pub hash: String,
    pub size: usize,
    pub origin: Origin,
    pub load_time: Duration,
}

#[cfg(test)]
mod tests {
    use super::*;

    /// A process that starts and drops runtimes (the eval, the write-fault
    /// harness: hundreds of starts) must not keep a thread for each.
    #[test]
    fn a_dropped_runtime_ends_its_epoch_thread() {
        let runtime = Runtime::new(None).unwrap();
        let ticker = Arc::downgrade(&runtime.ticker);
        drop(runtime.busy());
        drop(runtime);
        assert_eq!(
            ticker.strong_count(),
            0,
            "the epoch thread outlived its runtime"
        );
    }
}
