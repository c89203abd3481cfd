//! Change notification for a root (inotify and friends, through `notify`),
//! so that a search re-checks the files only when something may have
//! changed, and only the paths that did when the watcher can say which.
//! Where no watcher can be set up, every check reports "maybe everything
//! changed" and the caller re-checks each time: slower, never stale.

use std::collections::BTreeSet;
use std::path::PathBuf;
use std::sync::{Arc, Mutex};

use notify::{EventKind, RecursiveMode, Watcher};

/// Past this many distinct paths, a re-check of everything is cheaper.
const MAX_PATHS: usize = 256;

/// What may have changed since the last look.
#[derive(Debug, PartialEq, Eq)]
pub enum Changes {
    Nothing,
    /// These paths (absolute, under the watched folder), and nothing else.
    Paths(Vec<PathBuf>),
    /// Anything: re-check every file.
    Everything,
}

#[derive(Default)]
struct Seen {
    everything: bool,
    paths: BTreeSet<PathBuf>,
}

/// Told the paths of each change the watcher sees (none: anything may have
/// changed), on the watcher's thread, so quickly; `false` once it no longer
/// listens (its client has gone), and it is dropped.
pub type Listener = Box<dyn Fn(&[PathBuf]) -> bool + Send + Sync>;

/// Who else hears of changes besides the next re-check (the server's
/// resource notifications). Shared before the watch starts, so a listener
/// can be added early.
#[derive(Clone, Default)]
pub struct Listeners(Arc<Mutex<Vec<Listener>>>);

impl Listeners {
    pub fn add(&self, listener: Listener) {
        self.0
            .lock()
            .unwrap_or_else(|e| e.into_inner())
            .push(listener);
    }

    fn tell(&self, paths: &[PathBuf]) {
        self.0
            .lock()
            .unwrap_or_else(|e| e.into_inner())
            .retain(|l| l(paths));
    }
}

pub struct Watch {
    seen: Arc<Mutex<Seen>>,
    /// Kept alive for as long as the watch; `None` when it could not start.
    watcher: Option<notify::RecommendedWatcher>,
}

fn record(seen: &Mutex<Seen>, ev: notify::Result<notify::Event>) {
    let mut s = seen.lock().unwrap_or_else(|e| e.into_inner());
    match ev {
        // Reads do not change anything.
        Ok(e) if matches!(e.kind, EventKind::Access(_)) => {}
        // Everything is to be re-checked already: no need to remember more.
        Ok(_) if s.everything => {}
        Ok(e) if !e.need_rescan() && !e.paths.is_empty() => {
            s.paths.extend(e.paths);
            if s.paths.len() > MAX_PATHS {
                s.everything = true;
                s.paths.clear();
            }
        }
        // A queue overflow, an event without paths, an error: anything.
        _ => {
            s.everything = true;
            s.paths.clear();
        }
    }
}

impl Watch {
    /// Watch `path` and everything below it; `listeners` hear of each change.
    pub fn start(path: &std::path::Path, listeners: Listeners) -> Watch {
        let seen = Arc::new(Mutex::new(Seen {
            everything: true,
            ..Seen::default()
        }));
        let sink = seen.clone();
        let on_event = move |ev: notify::Result<notify::Event>| {
            match &ev {
                Ok(e) if matches!(e.kind, EventKind::Access(_)) => {}
                Ok(e) if !e.need_rescan() => listeners.tell(&e.paths),
                _ => listeners.tell(&[]),
            }
            record(&sink, ev);
        };
        // Links are never followed: a root holding `usr -> /usr` must not
        // put watches on /usr (notify follows them by default).
        let config = notify::Config::default().with_follow_symlinks(false);
        let made = notify::RecommendedWatcher::new(on_event, config);
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
        Watch { seen, watcher }
    }

    /// What may have changed since the last call (everything, without a
    /// watcher). Clears the record: call it before re-checking, so a change
    /// during the re-check is seen by the next call.
    pub fn take_changes(&self) -> Changes {
        let mut s = self.seen.lock().unwrap_or_else(|e| e.into_inner());
        let taken = std::mem::take(&mut *s);
        if taken.everything || self.watcher.is_none() {
            Changes::Everything
        } else if taken.paths.is_empty() {
            Changes::Nothing
        } else {
            Changes::Paths(taken.paths.into_iter().collect())
        }
    }

    /// Whether anything may have changed since the last call.
    pub fn take_changed(&self) -> bool {
        self.take_changes() != Changes::Nothing
    }
}

/// Call `on_change` when one of `files` is written, created, renamed or
/// removed. Each file's folder is watched (not recursively): a compiler or
/// editor that replaces the file by a rename is seen too. `None` when no
/// watcher can be set up.
pub fn watch_files(
    files: &[PathBuf],
    on_change: impl Fn() + Send + 'static,
) -> Option<notify::RecommendedWatcher> {
    let wanted: BTreeSet<PathBuf> = files
        .iter()
        .map(|f| std::path::absolute(f).unwrap_or_else(|_| f.clone()))
        .collect();
    let names = wanted.clone();
    let made = notify::recommended_watcher(move |ev: notify::Result<notify::Event>| {
        if let Ok(e) = ev
            && !matches!(e.kind, EventKind::Access(_))
            && e.paths.iter().any(|p| names.contains(p))
        {
            on_change();
        }
    });
    let mut watcher = match made {
        Ok(w) => w,
        Err(e) => {
            tracing::warn!("no file watcher for the plugin components ({e}); reload with SIGHUP");
            return None;
        }
    };
    let folders: BTreeSet<PathBuf> = wanted
        .iter()
        .filter_map(|f| f.parent().map(PathBuf::from))
        .collect();
    for folder in folders {
        if let Err(e) = watcher.watch(&folder, RecursiveMode::NonRecursive) {
            tracing::warn!(
                "cannot watch {} ({e}); reload with SIGHUP",
                folder.display()
            );
        }
    }
    Some(watcher)
}

#[cfg(test)]
mod tests {
    use super::*;

    fn event(kind: EventKind, paths: &[&str]) -> notify::Result<notify::Event> {
        let mut e = notify::Event::new(kind);
        for p in paths {
            e = e.add_path(PathBuf::from(p));
        }
        Ok(e)
    }

    #[test]
    fn paths_are_collected_until_there_are_too_many() {
        let seen = Mutex::new(Seen::default());
        record(
            &seen,
            event(
                EventKind::Modify(notify::event::ModifyKind::Any),
                &["/r/a.md", "/r/b.md"],
            ),
        );
        record(
            &seen,
            event(
                EventKind::Access(notify::event::AccessKind::Any),
                &["/r/c.md"],
            ),
        );
        {
            let s = seen.lock().unwrap();
            assert!(!s.everything);
            assert_eq!(s.paths.len(), 2, "reads are not changes");
        }
        for i in 0..=MAX_PATHS {
            record(
                &seen,
                event(
                    EventKind::Create(notify::event::CreateKind::Any),
                    &[&format!("/r/{i}.md")],
                ),
            );
        }
        let s = seen.lock().unwrap();
        assert!(s.everything && s.paths.is_empty());
    }

    #[test]
    fn errors_and_rescans_mean_everything() {
        let seen = Mutex::new(Seen::default());
        record(&seen, Err(notify::Error::generic("overflow")));
        assert!(seen.lock().unwrap().everything);
        let seen = Mutex::new(Seen::default());
        let e = notify::Event::new(EventKind::Other).set_flag(notify::event::Flag::Rescan);
        record(&seen, Ok(e));
        assert!(seen.lock().unwrap().everything);
    }
}
