//! One search's run through its stages: the time budget (an optional stage
//! is skipped once it is spent, and why the search was cut short is kept
//! for the summary: the latest reason, as a later stage knows better), the
//! caller's cancellation (checked
//! between stages, so a cancelled search leaves nothing behind) and each
//! stage's time for the debug log.

use std::time::{Duration, Instant};

use crate::error::Result;
use crate::job::Job;

pub struct Run<'j, R> {
    tool: &'static str,
    job: Job<'j>,
    deadline: Instant,
    cutoff: Option<R>,
    last: Instant,
    laps: Vec<(&'static str, Duration)>,
}

impl<'j, R: Copy> Run<'j, R> {
    /// A run of `tool` that may take until `deadline`.
    pub fn new(tool: &'static str, deadline: Instant, job: Job<'j>) -> Self {
        Run {
            tool,
            job,
            deadline,
            cutoff: None,
            last: Instant::now(),
            laps: Vec::new(),
        }
    }

    /// Run one stage: stop first if the caller has cancelled, time it.
    pub fn stage<T>(
        &mut self,
        name: &'static str,
        f: impl FnOnce(&mut Self) -> Result<T>,
    ) -> Result<T> {
        self.job.check(self.tool)?;
        let out = f(self)?;
        let now = Instant::now();
        self.laps.push((name, now - self.last));
        self.last = now;
        Ok(out)
    }

    /// The debug log line of a finished search: each stage's time.
    pub fn log(&self, query: &str) {
        tracing::debug!(target: "kura::timing", query = %query, "{} {}", self.tool, self.report());
    }

    /// Whether the time is up; if so, `reason` is recorded.
    pub fn spent(&mut self, reason: R) -> bool {
        let late = Instant::now() >= self.deadline;
        if late {
            self.cut(reason);
        }
        late
    }

    /// Record why the search was cut short, over any earlier reason.
    pub fn cut(&mut self, reason: R) {
        self.cutoff = Some(reason);
    }

    /// Forget the reason: the stage that recorded it was replaced (a
    /// widened search's figures stand for the whole search).
    pub fn uncut(&mut self) {
        self.cutoff = None;
    }

    pub fn cutoff(&self) -> Option<R> {
        self.cutoff
    }

    /// Each stage's time, `name=1.23ms`, in order.
    pub fn report(&self) -> String {
        self.laps
            .iter()
            .map(|(n, d)| format!("{n}={:.2}ms", d.as_secs_f64() * 1e3))
            .collect::<Vec<_>>()
            .join(" ")
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::error::Code;

    #[test]
    fn a_cancelled_run_stops_before_the_next_stage() {
        let cancelled = || true;
        let mut run: Run<'_, ()> = Run::new("t", Instant::now(), Job::new(None, Some(&cancelled)));
        let mut ran = false;
        let err = run
            .stage("one", |_| {
                ran = true;
                Ok(())
            })
            .unwrap_err();
        assert_eq!(err.code, Code::Cancelled);
        assert!(!ran);
    }

    #[test]
    fn the_latest_cutoff_reason_is_kept() {
        let past = Instant::now();
        let mut run = Run::new("t", past, Job::default());
        run.cut("cap");
        assert!(run.spent("time"));
        assert_eq!(run.cutoff(), Some("time"));
        run.uncut();
        assert_eq!(run.cutoff(), None);
    }

    #[test]
    fn every_stage_is_timed_in_order() {
        let mut run: Run<'_, ()> = Run::new("t", Instant::now(), Job::default());
        run.stage("a", |_| Ok(())).unwrap();
        run.stage("b", |_| Ok(())).unwrap();
        let r = run.report();
        assert!(r.starts_with("a=") && r.contains(" b="), "{r}");
    }
}
