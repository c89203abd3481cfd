//! How a slot gets its component: at start-up, read and outline-checked
//! at once, compiled by a job in the background; on a reload, re-read and
//! proven before it replaces the one serving; for a call, waited for.

use std::sync::Arc;
use std::time::{Duration, Instant};

use super::slot::{Admission, Cell, Loaded, NotReady, Source, World};
use super::{LoadError, Runtime, Trust, Wasm};
use crate::config::{Config, Slot};
use crate::error::{Code, Error};
use crate::limits::Limits;

/// A slot's component for a call, waiting up to `wait` while it loads; a
/// slot that is still loading or failed to load is `plugin_failed`.
pub(super) fn ready<P>(cell: &Cell<P>, wait: Duration) -> Result<Arc<Loaded<P>>, Error> {
    cell.get(wait).map_err(|why| {
        let message = match why {
            NotReady::Loading => format!(
                "the {} component ({}) is still compiling; try again in a moment",
                cell.slot, cell.source
            ),
            NotReady::Failed(why) => format!(
                "the {} component ({}) could not be loaded: {why}",
                cell.slot, cell.source
            ),
        };
        Error::new(Code::PluginFailed, message).with("plugin", cell.slot.name())
    })
}

/// A slot's cell (loading) and the job that loads it, or `None` when the
/// slot is not wanted. Reading and the outline check happen now (a bad file
/// stops the start); the compile is the job's.
pub(super) type Job = (usize, Box<dyn FnOnce() + Send>);

pub(super) fn start_slot<P: World>(
    runtime: &Arc<Runtime>,
    config: &Config,
    trust: &Arc<Trust>,
    slot: Slot,
    wanted: bool,
    jobs: &mut Vec<Job>,
) -> Result<Option<Arc<Cell<P>>>, LoadError> {
    let Some(source) = Source::of(config, slot, wanted) else {
        return Ok(None);
    };
    let t = Instant::now();
    let admission = Admission::of(config, slot, trust);
    let wasm = Wasm::read(slot, source.clone(), &admission, runtime.state())?;
    tracing::debug!(
        target: "kura::plugin",
        slot = slot.name(),
        bytes = wasm.bytes.len(),
        us = t.elapsed().as_micros() as u64,
        "read, verified and outline checked"
    );
    let limits = Limits::new(slot, config.slot_limits(slot));
    let cell = Arc::new(Cell::new(slot, limits, source, admission));
    let (rt, c) = (runtime.clone(), cell.clone());
    jobs.push((
        wasm.bytes.len(),
        Box::new(move || {
            settle_load(&rt, &c, &wasm, false);
        }),
    ));
    Ok(Some(cell))
}

/// Prepare a component and put it in its cell, logging the outcome.
pub(super) fn settle_load<P: World>(
    runtime: &Runtime,
    cell: &Cell<P>,
    wasm: &Wasm,
    reload: bool,
) -> bool {
    let outcome = runtime.prepare::<P>(wasm, &cell.limits);
    let slot = cell.slot.name();
    match &outcome {
        Ok(l) => tracing::info!(
            target: "kura::plugin",
            slot,
            source = %l.source,
            digest = %l.digest,
            signer = %l.signer,
            grants = %l.grants.describe(),
            size = l.size,
            origin = %l.origin,
            ms = l.load_time.as_millis() as u64,
            "{}",
            if reload { "reloaded" } else { "ready" }
        ),
        Err(why) if reload => tracing::error!(
            target: "kura::plugin",
            slot,
            source = %cell.source,
            "reload refused, the previous component keeps serving: {why}"
        ),
        Err(why) => tracing::error!(
            target: "kura::plugin",
            slot,
            source = %cell.source,
            "cannot be loaded; calls that need it fail: {why}"
        ),
    }
    let ok = outcome.is_ok();
    cell.settle(outcome);
    ok
}

/// Re-read and re-prepare a file-backed slot; the old component serves
/// until the new one is proven.
pub(super) fn reload_slot<P: World>(
    runtime: &Runtime,
    cell: &Option<Arc<Cell<P>>>,
) -> Option<bool> {
    let cell = cell.as_ref()?;
    if cell.source == Source::Embedded {
        return None;
    }
    let read = Wasm::read(
        cell.slot,
        cell.source.clone(),
        &cell.admission,
        runtime.state(),
    );
    Some(match read {
        Ok(wasm) => settle_load(runtime, cell, &wasm, true),
        Err(e) => {
            tracing::error!(
                target: "kura::plugin",
                slot = cell.slot.name(),
                "reload refused, the previous component keeps serving: {}",
                e.message
            );
            false
        }
    })
}
