//! A running tool call's line to its caller: progress reports out,
//! cancellation in. Long loops (an index sync walks every file) report after
//! each step and stop at the next one once the caller has cancelled, so a
//! cancelled call neither keeps a lock nor sends another report.

use crate::error::{Code, Error, Result};

/// Reports `(done, total)`.
pub type Progress<'a> = &'a (dyn Fn(u64, u64) + Sync);

/// Whether the caller has given up on the call.
pub type Cancelled<'a> = &'a (dyn Fn() -> bool + Sync);

#[derive(Clone, Copy, Default)]
pub struct Job<'a> {
    progress: Option<Progress<'a>>,
    cancelled: Option<Cancelled<'a>>,
}

impl<'a> Job<'a> {
    pub fn new(progress: Option<Progress<'a>>, cancelled: Option<Cancelled<'a>>) -> Self {
        Job {
            progress,
            cancelled,
        }
    }

    /// A job that only reports progress (the command line's bars).
    pub fn reporting(progress: Progress<'a>) -> Self {
        Job::new(Some(progress), None)
    }

    pub fn is_cancelled(&self) -> bool {
        self.cancelled.is_some_and(|c| c())
    }

    /// Report progress, unless the caller is no longer listening.
    pub fn report(&self, done: u64, total: u64) {
        if let Some(p) = self.progress
            && !self.is_cancelled()
        {
            p(done, total);
        }
    }

    /// `Err(cancelled)` once the caller has cancelled.
    pub fn check(&self, what: &str) -> Result<()> {
        if self.is_cancelled() {
            return Err(Error::new(
                Code::Cancelled,
                format!("{what} was cancelled by the client"),
            ));
        }
        Ok(())
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use std::sync::atomic::{AtomicBool, AtomicU64, Ordering};

    #[test]
    fn a_cancelled_job_reports_nothing_more_and_says_so() {
        let reports = AtomicU64::new(0);
        let cancel = AtomicBool::new(false);
        let progress = |_: u64, _: u64| {
            reports.fetch_add(1, Ordering::SeqCst);
        };
        let cancelled = || cancel.load(Ordering::SeqCst);
        let job = Job::new(Some(&progress), Some(&cancelled));
        job.report(1, 2);
        assert!(job.check("x").is_ok());
        cancel.store(true, Ordering::SeqCst);
        job.report(2, 2);
        assert_eq!(reports.load(Ordering::SeqCst), 1);
        assert_eq!(job.check("x").unwrap_err().code, Code::Cancelled);
        assert!(!Job::default().is_cancelled());
    }
}
