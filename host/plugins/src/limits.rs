//! A slot's limits (memory, deadline, instances) and the store limiter that
//! enforces them. The limiter also keeps what a component used, so that
//! `kura plugins check` can say what it needs.

use std::time::Duration;

use wasmtime::ResourceLimiter;

use crate::config::{Slot, SlotLimits};

/// How often the epoch ticks; deadlines are counted in ticks.
pub const TICK: Duration = Duration::from_millis(5);

/// One slot's limits, ready for a store.
#[derive(Clone, Copy, Debug)]
pub struct Limits {
    pub slot: Slot,
    /// The largest one linear memory may grow to.
    pub memory_bytes: usize,
    pub timeout: Duration,
    /// Core instances, and as many memories and as many tables.
    pub instances: usize,
}

impl Limits {
    pub fn new(slot: Slot, l: SlotLimits) -> Limits {
        Limits {
            slot,
            memory_bytes: usize::try_from(l.memory_mib.saturating_mul(1 << 20))
                .unwrap_or(usize::MAX),
            timeout: Duration::from_millis(l.timeout_ms),
            instances: l.instances as usize,
        }
    }

    /// The deadline in epoch ticks (at least one full tick).
    pub fn deadline_ticks(&self) -> u64 {
        (self.timeout.as_millis() / TICK.as_millis()) as u64 + 1
    }

    /// A limiter for one store.
    pub fn limiter(&self) -> Limiter {
        Limiter {
            limits: *self,
            used: Used::default(),
        }
    }

    /// A limit error of wasmtime's ("instance count too high at 5") in words
    /// that say which setting to raise; `None` for other errors.
    pub fn explain(&self, message: &str) -> Option<String> {
        let (what, setting) = if message.contains("instance count too high") {
            ("core instances", "instances")
        } else if message.contains("memory count too high") {
            ("linear memories", "instances")
        } else if message.contains("table count too high") {
            ("tables", "instances")
        } else {
            return None;
        };
        Some(format!(
            "the component creates more {what} than the {} allowed; raise plugins.{}.{setting} (or plugin_instances)",
            self.instances, self.slot
        ))
    }
}

/// What one store used: for `kura plugins check`.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub struct Used {
    /// The largest size one linear memory reached.
    pub peak_memory: usize,
    pub memories: usize,
    pub tables: usize,
}

/// The store's [`ResourceLimiter`]: a memory that would grow past the cap is
/// a trap with a message that names the setting (never a silent `-1`, which
/// guest allocators turn into an abort with no reason).
pub struct Limiter {
    limits: Limits,
    pub used: Used,
}

/// The trap raised when a memory would pass its cap.
#[derive(Debug, thiserror::Error)]
#[error(
    "memory limit reached: a linear memory of the {slot} component would grow to {desired_mib} MiB, past the {limit_mib} MiB allowed (raise plugins.{slot}.memory_mib or plugin_memory_mib)"
)]
pub struct MemoryLimit {
    pub slot: Slot,
    pub desired_mib: usize,
    pub limit_mib: usize,
}

impl ResourceLimiter for Limiter {
    fn memory_growing(
        &mut self,
        current: usize,
        desired: usize,
        _maximum: Option<usize>,
    ) -> wasmtime::Result<bool> {
        if current == 0 {
            self.used.memories += 1;
        }
        if desired > self.limits.memory_bytes {
            return Err(MemoryLimit {
                slot: self.limits.slot,
                desired_mib: desired.div_ceil(1 << 20),
                limit_mib: self.limits.memory_bytes >> 20,
            }
            .into());
        }
        self.used.peak_memory = self.used.peak_memory.max(desired);
        Ok(true)
    }

    fn table_growing(
        &mut self,
        current: usize,
        _desired: usize,
        _maximum: Option<usize>,
    ) -> wasmtime::Result<bool> {
        if current == 0 {
            self.used.tables += 1;
        }
        Ok(true)
    }

    fn instances(&self) -> usize {
        self.limits.instances
    }

    fn tables(&self) -> usize {
        self.limits.instances
    }

    fn memories(&self) -> usize {
        self.limits.instances
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn limit_errors_name_the_setting_to_raise() {
        let l = Limits::new(
            Slot::Reranker,
            SlotLimits {
                memory_mib: 64,
                timeout_ms: 100,
                instances: 4,
            },
        );
        let m = l
            .explain("resource limit exceeded: instance count too high at 5")
            .unwrap();
        assert!(
            m.contains("plugins.reranker.instances") && m.contains('4'),
            "{m}"
        );
        assert_eq!(l.explain("wasm trap: unreachable"), None);
        assert_eq!(l.deadline_ticks(), 21);
    }

    #[test]
    fn a_memory_past_its_cap_is_a_trap_that_names_the_setting() {
        let l = Limits::new(
            Slot::Auditor,
            SlotLimits {
                memory_mib: 1,
                timeout_ms: 100,
                instances: 4,
            },
        );
        let mut limiter = l.limiter();
        assert!(limiter.memory_growing(0, 1 << 16, None).unwrap());
        let e = limiter.memory_growing(1 << 16, 2 << 20, None).unwrap_err();
        assert!(e.to_string().contains("plugins.auditor.memory_mib"), "{e}");
        assert_eq!(limiter.used.memories, 1);
        assert_eq!(limiter.used.peak_memory, 1 << 16);
    }
}
