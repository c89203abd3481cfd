//! One plugin slot at run time: the component it serves, which is loading
//! (compiling in the background), ready, or failed — and, on a reload, the
//! old one serving until the new one is proven.

use std::sync::{Arc, Condvar, Mutex};
use std::time::{Duration, Instant};

use wasmtime::component::{HasSelf, InstancePre, Linker};

use super::State;
use super::bindings;
use super::cache::Origin;
use super::grants::Grants;
use super::limits::Limits;
use super::trust::{Signer, Trust};
use crate::config::{ComponentRef, Config, Digest, OciRef, Slot};

/// Where a slot's component came from.
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum Source {
    /// Built into kura.
    Embedded,
    File(std::path::PathBuf),
    /// Pulled from a registry: served from the lock file and the store.
    Oci(OciRef),
}

impl Source {
    /// A slot's source under `config`: its configured component, else the
    /// embedded default when the slot is `wanted` and has one.
    pub fn of(config: &Config, slot: Slot, wanted: bool) -> Option<Source> {
        match config.plugins.slot(slot).component() {
            Some(ComponentRef::File(p)) => Some(Source::File(p.to_owned())),
            Some(ComponentRef::Oci(r)) => Some(Source::Oci(r)),
            None if wanted && super::embedded(slot).is_some() => Some(Source::Embedded),
            None => None,
        }
    }
}

impl std::fmt::Display for Source {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        match self {
            Source::Embedded => f.write_str("the embedded default"),
            Source::File(p) => write!(f, "{}", p.display()),
            Source::Oci(r) => write!(f, "{r}"),
        }
    }
}

/// What a slot's component must prove before it is compiled (the digest
/// it is pinned to, the signature the operator's trust asks for) and what
/// it is granted once it runs.
#[derive(Clone, Debug, Default)]
pub struct Admission {
    pub trust: Arc<Trust>,
    pub pin: Option<Digest>,
    pub grants: Arc<Grants>,
}

impl Admission {
    pub fn of(config: &Config, slot: Slot, trust: &Arc<Trust>) -> Admission {
        Admission {
            trust: trust.clone(),
            pin: config.plugins.slot(slot).pin(),
            grants: Arc::new(Grants::of(config, slot, |k| {
                std::env::var(k).ok().filter(|v| !v.is_empty())
            })),
        }
    }
}

/// A component linked against its world and proven to instantiate under
/// the slot's limits.
pub struct Loaded<P> {
    pub pre: P,
    pub source: Source,
    /// BLAKE3 of the wasm, hex (the compile cache's key).
    pub hash: String,
    /// SHA-256 of the wasm: what a pin, a lock and a registry name.
    pub digest: Digest,
    pub signer: Signer,
    pub grants: Arc<Grants>,
    pub size: usize,
    pub origin: Origin,
    pub load_time: Duration,
}

enum Phase<P> {
    Loading,
    Ready(Arc<Loaded<P>>),
    Failed(String),
}

/// Why a slot cannot serve a call now.
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum NotReady {
    /// Still compiling.
    Loading,
    /// Loading failed: the one-line reason.
    Failed(String),
}

/// A slot's state, shared by the calls and the loader.
pub struct Cell<P> {
    pub slot: Slot,
    pub limits: Limits,
    pub source: Source,
    pub admission: Admission,
    phase: Mutex<Phase<P>>,
    changed: Condvar,
}

impl<P> Cell<P> {
    pub fn new(slot: Slot, limits: Limits, source: Source, admission: Admission) -> Cell<P> {
        Cell {
            slot,
            limits,
            source,
            admission,
            phase: Mutex::new(Phase::Loading),
            changed: Condvar::new(),
        }
    }

    /// The component, waiting up to `wait` while it loads.
    pub fn get(&self, wait: Duration) -> Result<Arc<Loaded<P>>, NotReady> {
        let until = Instant::now() + wait;
        let mut phase = self.phase.lock().unwrap_or_else(|e| e.into_inner());
        loop {
            match &*phase {
                Phase::Ready(l) => return Ok(l.clone()),
                Phase::Failed(why) => return Err(NotReady::Failed(why.clone())),
                Phase::Loading => {
                    let left = until.saturating_duration_since(Instant::now());
                    if left.is_zero() {
                        return Err(NotReady::Loading);
                    }
                    phase = self
                        .changed
                        .wait_timeout(phase, left)
                        .unwrap_or_else(|e| e.into_inner())
                        .0;
                }
            }
        }
    }

    /// The loader's outcome. A failed reload leaves the component that
    /// serves in place; a first load that fails makes the slot failed.
    /// Returns whether the outcome took effect.
    pub fn settle(&self, outcome: Result<Loaded<P>, String>) -> bool {
        let mut phase = self.phase.lock().unwrap_or_else(|e| e.into_inner());
        let took = match (outcome, &*phase) {
            (Ok(l), _) => {
                *phase = Phase::Ready(Arc::new(l));
                true
            }
            (Err(_), Phase::Ready(_)) => false,
            (Err(why), _) => {
                *phase = Phase::Failed(why);
                true
            }
        };
        self.changed.notify_all();
        took
    }
}

/// What the runtime needs to know of a world's generated bindings.
pub trait World: Sized + Send + Sync + 'static {
    /// Add the world's imports (beyond WASI) to a linker.
    fn link(l: &mut Linker<State>) -> wasmtime::Result<()>;
    /// Resolve the world's exports once, for every later call.
    fn typed(pre: InstancePre<State>) -> wasmtime::Result<Self>;
    fn instance_pre(&self) -> &InstancePre<State>;
}

macro_rules! world {
    ($pre:ty, $world:ty) => {
        impl World for $pre {
            fn link(l: &mut Linker<State>) -> wasmtime::Result<()> {
                <$world>::add_to_linker::<State, HasSelf<State>>(l, |s| s)
            }
            fn typed(pre: InstancePre<State>) -> wasmtime::Result<Self> {
                <$pre>::new(pre)
            }
            fn instance_pre(&self) -> &InstancePre<State> {
                self.instance_pre()
            }
        }
    };
}

world!(
    bindings::write_policy::WritePolicyPre<State>,
    bindings::write_policy::WritePolicy
);
world!(
    bindings::reranker::RerankerPre<State>,
    bindings::reranker::Reranker
);
world!(
    bindings::claim_graph::ClaimGraphPre<State>,
    bindings::claim_graph::ClaimGraph
);
world!(
    bindings::auditor::AuditorPre<State>,
    bindings::auditor::Auditor
);
world!(
    bindings::embedder::EmbedderPre<State>,
    bindings::embedder::Embedder
);

#[cfg(test)]
mod tests {
    use super::*;
    use crate::config::SlotLimits;

    fn cell() -> Cell<u32> {
        let l = SlotLimits {
            memory_mib: 1,
            timeout_ms: 1,
            instances: 1,
        };
        Cell::new(
            Slot::Reranker,
            Limits::new(Slot::Reranker, l),
            Source::Embedded,
            Admission::default(),
        )
    }

    fn loaded(n: u32) -> Loaded<u32> {
        Loaded {
            pre: n,
            source: Source::Embedded,
            hash: String::new(),
            digest: Digest::of(b""),
            signer: Signer::BuiltIn,
            grants: Arc::default(),
            size: 0,
            origin: Origin::Compiled,
            load_time: Duration::ZERO,
        }
    }

    #[test]
    fn a_loading_slot_answers_loading_after_the_wait() {
        let c = cell();
        assert_eq!(
            c.get(Duration::from_millis(5)).err(),
            Some(NotReady::Loading)
        );
    }

    #[test]
    fn a_waiting_call_gets_the_component_when_it_is_ready() {
        let c = Arc::new(cell());
        let c2 = c.clone();
        let t = std::thread::spawn(move || c2.get(Duration::from_secs(10)).map(|l| l.pre));
        std::thread::sleep(Duration::from_millis(20));
        c.settle(Ok(loaded(7)));
        assert_eq!(t.join().unwrap(), Ok(7));
    }

    #[test]
    fn a_failed_reload_keeps_the_old_component_serving() {
        let c = cell();
        assert!(c.settle(Ok(loaded(1))));
        assert!(!c.settle(Err("bad".into())));
        assert_eq!(c.get(Duration::ZERO).map(|l| l.pre), Ok(1));
        let d = cell();
        assert!(d.settle(Err("bad".into())));
        assert_eq!(
            d.get(Duration::ZERO).err(),
            Some(NotReady::Failed("bad".into()))
        );
    }
}
