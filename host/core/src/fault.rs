//! Faults that tests inject, so that what kura does when a write step
//! fails, the process dies half-way, a tool panics or a stage is slow is
//! proved rather than assumed.
//!
//! Nothing here reads the environment: a plan is armed only by a call to
//! [`arm`] (the test-only `kura-faulty` binary makes it from its `KURA_FAULT_*`
//! variables) or to [`with`] (unit tests, on their own thread). The `kura`
//! binary people run never arms one, so no variable can make it fail on
//! purpose; what it keeps of this module is a check of an empty
//! thread-local at each write step.
//!
//! Steps are counted per tool call: every file-system change the call
//! makes (a temporary file written and renamed into place, a rename, a
//! removal, a folder made or removed, a move's journal) is one step,
//! counted from 1 before it is made. The history's background tasks count
//! theirs the same way, under the names `history_prune` and
//! `history_merge` in place of a tool's.

use std::cell::RefCell;
use std::io;
use std::sync::OnceLock;
use std::time::Duration;

/// What to do when the `at`-th step is reached.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Fault {
    /// The step fails with this OS error (`libc::ENOSPC`, `EACCES`, `EIO`)
    /// and is not made.
    Fail(i32),
    /// The process dies before the step (abort: no unwinding, no clean-up,
    /// as a kill would leave it).
    Crash,
    /// The call panics before the step: within one process, a crash that
    /// the test survives to look at what was left (nothing of kura's
    /// clean-up runs but destructors).
    Panic,
}

/// What another program does just before a step (a test's closure: it
/// rewrites or creates the files the call is working on), so that a race
/// with an outside writer lands at each step in turn instead of by chance.
#[derive(Clone)]
pub struct Meddler(pub std::sync::Arc<dyn Fn() + Send + Sync>);

impl std::fmt::Debug for Meddler {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str("Meddler")
    }
}

/// One armed plan.
#[derive(Clone, Debug, Default)]
pub struct Plan {
    /// The tool whose calls count steps (any tool when None), or a
    /// background task's name (`history_prune`, `history_merge`).
    pub tool: Option<String>,
    /// The step that faults, and how.
    pub at: Option<(usize, Fault)>,
    /// The step before which another program writes.
    pub meddle: Option<(usize, Meddler)>,
    /// This tool panics when called.
    pub panic_in: Option<String>,
    /// manual_find's first stage takes this much longer.
    pub slow_search: Option<Duration>,
}

impl Plan {
    /// The plan the `KURA_FAULT_*` variables describe (for a test binary):
    /// `KURA_FAULT_TOOL`, `KURA_FAULT_STEP=N`, `KURA_FAULT_KIND=crash|panic|
    /// enospc|eacces|eio`, `KURA_FAULT_PANIC_IN`, `KURA_FAULT_SLOW_SEARCH_MS`;
    /// `KURA_FAULT_MOVE_CRASH_AFTER=N` is `TOOL=vault_move`, crash at step N+1.
    pub fn from_vars(var: impl Fn(&str) -> Option<String>) -> Plan {
        let mut plan = Plan {
            tool: var("KURA_FAULT_TOOL"),
            panic_in: var("KURA_FAULT_PANIC_IN"),
            slow_search: var("KURA_FAULT_SLOW_SEARCH_MS")
                .and_then(|v| v.parse().ok())
                .map(Duration::from_millis),
            ..Plan::default()
        };
        let kind = match var("KURA_FAULT_KIND").as_deref() {
            Some("panic") => Fault::Panic,
            Some("enospc") => Fault::Fail(libc::ENOSPC),
            Some("eacces") => Fault::Fail(libc::EACCES),
            Some("eio") => Fault::Fail(libc::EIO),
            _ => Fault::Crash,
        };
        if let Some(n) = var("KURA_FAULT_STEP").and_then(|v| v.parse().ok()) {
            plan.at = Some((n, kind));
        }
        if let Some(n) = var("KURA_FAULT_MOVE_CRASH_AFTER").and_then(|v| v.parse::<usize>().ok()) {
            plan.tool = Some("vault_move".to_owned());
            plan.at = Some((n + 1, Fault::Crash));
        }
        plan
    }
}

static ARMED: OnceLock<Plan> = OnceLock::new();

thread_local! {
    /// The plan of the call this thread runs, and its steps so far.
    static ACTIVE: RefCell<Option<(Plan, usize)>> = const { RefCell::new(None) };
}

/// Arm `plan` for the whole process (once; later calls change nothing).
pub fn arm(plan: Plan) {
    let _ = ARMED.set(plan);
}

/// Run `f` with `plan` counting the steps it makes on this thread.
pub fn with<T>(plan: Plan, f: impl FnOnce() -> T) -> T {
    struct Reset(Option<(Plan, usize)>);
    impl Drop for Reset {
        fn drop(&mut self) {
            let prev = self.0.take();
            ACTIVE.with(|a| *a.borrow_mut() = prev);
        }
    }
    let prev = ACTIVE.with(|a| a.borrow_mut().replace((plan, 0)));
    let _reset = Reset(prev);
    f()
}

/// Run tool call `tool` under the armed plan, if it has one for it.
pub fn call<T>(tool: &str, f: impl FnOnce() -> T) -> T {
    let Some(plan) = ARMED.get() else {
        return f();
    };
    if plan.panic_in.as_deref() == Some(tool) {
        panic!("fault injected in {tool}");
    }
    if plan.tool.as_deref().is_none_or(|t| t == tool) && plan.at.is_some() {
        with(plan.clone(), f)
    } else {
        f()
    }
}

/// Run background task `name` (`history_prune`, `history_merge`) under
/// the armed plan only when the plan names it: a plan for any tool leaves
/// the background alone.
pub fn task<T>(name: &str, f: impl FnOnce() -> T) -> T {
    match ARMED.get() {
        Some(plan) if plan.tool.as_deref() == Some(name) && plan.at.is_some() => {
            with(plan.clone(), f)
        }
        _ => f(),
    }
}

/// One file-system step of the current call: counted, and faulted when
/// the plan says so.
pub fn step() -> io::Result<()> {
    let (fault, meddler) = ACTIVE.with(|a| {
        let mut a = a.borrow_mut();
        let Some((plan, n)) = a.as_mut() else {
            return (None, None);
        };
        *n += 1;
        let fault = plan.at.and_then(|(at, f)| (at == *n).then_some(f));
        let meddler = plan
            .meddle
            .as_ref()
            .and_then(|(at, m)| (*at == *n).then(|| m.clone()));
        (fault, meddler)
    });
    if let Some(Meddler(m)) = meddler {
        m();
    }
    match fault {
        None => Ok(()),
        Some(Fault::Fail(errno)) => Err(io::Error::from_raw_os_error(errno)),
        Some(Fault::Crash) => std::process::abort(),
        Some(Fault::Panic) => panic!("fault injected at a write step"),
    }
}

/// How many steps the current call has made (None outside a plan).
pub fn steps() -> Option<usize> {
    ACTIVE.with(|a| a.borrow().as_ref().map(|(_, n)| *n))
}

/// manual_find's first stage, slowed when the armed plan says so (a time
/// budget is then spent before the late stages, and a cancel arrives
/// while the search runs).
pub fn slow_search() {
    if let Some(d) = ARMED.get().and_then(|p| p.slow_search) {
        std::thread::sleep(d);
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn steps_are_counted_per_call_and_the_chosen_one_fails() {
        let plan = Plan {
            at: Some((2, Fault::Fail(libc::ENOSPC))),
            ..Plan::default()
        };
        with(plan, || {
            assert!(step().is_ok());
            let e = step().unwrap_err();
            assert_eq!(e.raw_os_error(), Some(libc::ENOSPC));
            assert!(step().is_ok());
            assert_eq!(steps(), Some(3));
        });
        assert_eq!(steps(), None, "outside the call nothing counts");
        assert!(step().is_ok());
    }

    #[test]
    fn another_program_writes_just_before_the_chosen_step() {
        use std::sync::atomic::{AtomicUsize, Ordering};
        let seen = std::sync::Arc::new(AtomicUsize::new(0));
        let at_meddle = seen.clone();
        let plan = Plan {
            meddle: Some((
                2,
                Meddler(std::sync::Arc::new(move || {
                    at_meddle.fetch_add(1, Ordering::SeqCst);
                })),
            )),
            ..Plan::default()
        };
        with(plan, || {
            step().unwrap();
            assert_eq!(seen.load(Ordering::SeqCst), 0);
            step().unwrap();
            assert_eq!(seen.load(Ordering::SeqCst), 1);
            step().unwrap();
            assert_eq!(seen.load(Ordering::SeqCst), 1, "once");
        });
    }

    #[test]
    fn the_variables_name_the_plan() {
        let vars = |k: &str| match k {
            "KURA_FAULT_TOOL" => Some("vault_edit".to_owned()),
            "KURA_FAULT_STEP" => Some("3".to_owned()),
            "KURA_FAULT_KIND" => Some("eio".to_owned()),
            _ => None,
        };
        let p = Plan::from_vars(vars);
        assert_eq!(p.tool.as_deref(), Some("vault_edit"));
        assert_eq!(p.at, Some((3, Fault::Fail(libc::EIO))));
        let p = Plan::from_vars(|k| (k == "KURA_FAULT_MOVE_CRASH_AFTER").then(|| "0".to_owned()));
        assert_eq!(p.at, Some((1, Fault::Crash)));
    }
}
