//! Faults a test build injects on request (feature `fault-injection`, which
//! the end-to-end tests turn on; `cargo build -p kura` leaves it out), so
//! that what kura does when a tool panics or a stage is slow is proved on
//! the real binary rather than assumed.

use std::time::Duration;

/// `KURA_FAULT_PANIC_IN=TOOL`: that tool panics when called.
pub fn panic_in(tool: &str) {
    if std::env::var("KURA_FAULT_PANIC_IN").is_ok_and(|t| t == tool) {
        panic!("fault injected in {tool}");
    }
}

/// `KURA_FAULT_SLOW_SEARCH_MS=N`: manual_find's first stage takes N ms
/// longer (a time budget is then spent before the late stages, and a
/// cancel arrives while the search runs).
pub fn slow_search() {
    if let Some(ms) = std::env::var("KURA_FAULT_SLOW_SEARCH_MS")
        .ok()
        .and_then(|v| v.parse().ok())
    {
        std::thread::sleep(Duration::from_millis(ms));
    }
}

/// `KURA_FAULT_MOVE_CRASH_AFTER=N`: a vault move's process dies (abort: no
/// unwinding, no clean-up, as a kill would leave it) once N of its file
/// operations are done; 0 is right after its journal is saved.
pub fn move_step(done: usize) {
    if std::env::var("KURA_FAULT_MOVE_CRASH_AFTER")
        .ok()
        .and_then(|v| v.parse::<usize>().ok())
        == Some(done)
    {
        std::process::abort();
    }
}
