//! The gate every tool call passes, shared by all sessions of one server:
//! at most `max_concurrent_calls` calls run at once and the others wait
//! their turn in arrival order, so fifty clients cost the memory of a few
//! calls (a search instantiates its components per call) and no more
//! blocking threads than that; and shutdown waits for the calls running.

use std::sync::Arc;
use std::time::Duration;

use tokio::sync::{OwnedRwLockReadGuard, OwnedSemaphorePermit, RwLock, Semaphore};

use crate::config::Config;

/// Calls running at once when `max_concurrent_calls` is 0 (automatic), per
/// core: a call is mostly CPU (a search, a scan) with some waiting (a
/// write's fsync, a lock, a component's start); `kura-bench http` measured
/// four per core as fast as no limit, with a shorter tail and less memory.
const PER_CORE: usize = 4;
/// The automatic limit is never below this (a one-core machine still
/// overlaps a write's fsync with a search).
const AUTO_MIN: usize = 4;

pub struct Calls {
    slots: Arc<Semaphore>,
    /// Held (shared) by every running call; taken whole at shutdown.
    running: Arc<RwLock<()>>,
    limit: usize,
}

/// A call's turn: it runs while this lives.
pub struct Turn {
    _slot: OwnedSemaphorePermit,
    _running: OwnedRwLockReadGuard<()>,
}

impl Calls {
    pub fn new(limit: usize) -> Arc<Calls> {
        let limit = limit.max(1);
        Arc::new(Calls {
            slots: Arc::new(Semaphore::new(limit)),
            running: Arc::default(),
            limit,
        })
    }

    /// The configured limit, or the automatic one for this machine.
    pub fn for_config(config: &Config) -> Arc<Calls> {
        Calls::new(match usize::try_from(config.max_concurrent_calls) {
            Ok(n) if n > 0 => n,
            _ => automatic(),
        })
    }

    /// One log line at start: the limit in force.
    pub fn announce(&self) {
        tracing::info!(
            "at most {} tool calls run at once (max_concurrent_calls); the others wait their turn",
            self.limit
        );
    }

    /// Wait for a turn (a slot first, so a queued call does not hold up
    /// shutdown).
    pub async fn enter(&self) -> Turn {
        let slot = self
            .slots
            .clone()
            .acquire_owned()
            .await
            .expect("the call semaphore is never closed");
        let running = self.running.clone().read_owned().await;
        Turn {
            _slot: slot,
            _running: running,
        }
    }

    /// Calls still running (a write, a reindex) finish before the process
    /// ends; one that takes longer than this is left to the exit.
    pub async fn drain(&self) {
        const CALLS_WAIT: Duration = Duration::from_secs(10);
        if tokio::time::timeout(CALLS_WAIT, self.running.write())
            .await
            .is_err()
        {
            tracing::warn!("a tool call was still running at exit");
        }
    }
}

fn automatic() -> usize {
    let cores = std::thread::available_parallelism().map_or(1, usize::from);
    (cores * PER_CORE).max(AUTO_MIN)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[tokio::test]
    async fn no_more_calls_run_at_once_than_the_limit_and_the_rest_wait_in_order() {
        let calls = Calls::new(2);
        let a = calls.enter().await;
        let _b = calls.enter().await;
        let order = Arc::new(std::sync::Mutex::new(Vec::new()));
        let mut waiting = Vec::new();
        for i in 0..3 {
            let (calls, order) = (calls.clone(), order.clone());
            waiting.push(tokio::spawn(async move {
                let _turn = calls.enter().await;
                order.lock().unwrap().push(i);
                tokio::time::sleep(Duration::from_millis(5)).await;
            }));
            // Queued in this order.
            tokio::time::sleep(Duration::from_millis(5)).await;
        }
        assert!(order.lock().unwrap().is_empty(), "two turns are taken");
        drop(a);
        for w in waiting {
            w.await.unwrap();
        }
        assert_eq!(*order.lock().unwrap(), vec![0, 1, 2]);
    }

    #[tokio::test]
    async fn drain_waits_for_a_running_call_but_not_for_a_queued_one() {
        let calls = Calls::new(1);
        let turn = calls.enter().await;
        let queued = {
            let calls = calls.clone();
            tokio::spawn(async move {
                let _turn = calls.enter().await;
            })
        };
        tokio::time::sleep(Duration::from_millis(5)).await;
        let draining = {
            let calls = calls.clone();
            tokio::spawn(async move { calls.drain().await })
        };
        tokio::time::sleep(Duration::from_millis(20)).await;
        assert!(!draining.is_finished(), "a call is running");
        drop(turn);
        tokio::time::timeout(Duration::from_secs(2), draining)
            .await
            .expect("drained once the running call ended")
            .unwrap();
        queued.abort();
    }

    #[test]
    fn zero_means_the_machines_own_limit() {
        let mut config = Config::default();
        assert_eq!(config.max_concurrent_calls, 0);
        assert!(Calls::for_config(&config).limit >= AUTO_MIN);
        config.max_concurrent_calls = 3;
        assert_eq!(Calls::for_config(&config).limit, 3);
    }
}
