//! Change notification for a root (inotify and friends, through `notify`),
//! so that a search re-checks the files only when something may have
//! changed. Where no watcher can be set up, every check reports "maybe
//! changed" and the caller re-checks each time: slower, never stale.

use std::sync::Arc;
use std::sync::atomic::{AtomicBool, Ordering};

use notify::{EventKind, RecursiveMode, Watcher};

pub struct Watch {
    dirty: Arc<AtomicBool>,
    /// Kept alive for as long as the watch; `None` when it could not start.
    watcher: Option<notify::RecommendedWatcher>,
}

impl Watch {
    /// Watch `path` and everything below it.
    pub fn start(path: &std::path::Path) -> Watch {
        let dirty = Arc::new(AtomicBool::new(true));
        let flag = dirty.clone();
        let made = notify::recommended_watcher(move |ev: notify::Result<notify::Event>| {
            // Reads do not change anything; everything else (and any error,
            // such as a queue overflow) may have.
            if !matches!(ev, Ok(ref e) if matches!(e.kind, EventKind::Access(_))) {
                flag.store(true, Ordering::Release);
            }
        });
        let watcher = match made {
            Ok(mut w) => match w.watch(path, RecursiveMode::Recursive) {
                Ok(()) => Some(w),
                Err(e) => {
                    tracing::warn!(
                        "cannot watch {}: {e}; re-checking before each search",
                        path.display()
                    );
                    None
                }
            },
            Err(e) => {
                tracing::warn!("no file watcher ({e}); re-checking before each search");
                None
            }
        };
        Watch { dirty, watcher }
    }

    /// Whether anything may have changed since the last call (always true
    /// without a watcher). Clears the flag: call it before re-checking, so a
    /// change during the re-check is seen by the next call.
    pub fn take_changed(&self) -> bool {
        let was = self.dirty.swap(false, Ordering::AcqRel);
        was || self.watcher.is_none()
    }
}
