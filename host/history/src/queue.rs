//! Calls waiting for their commit.
//!
//! A call's answer does not wait for its commit: by then the bytes each
//! change replaced are kept (in the store, or in the call's pending file,
//! synced before the file was touched), so what the commit adds — the
//! trees, the commit, the pack and its fsyncs, the branch — is made by a
//! worker thread in call order while the agent reads the answer. Whatever
//! reads the history (a listing, an undo) waits for the calls queued
//! before it, so no one sees a change missing that its own process made;
//! a kura stopped with calls queued leaves their pending files, which the
//! next start records. Calls pile up to [`QUEUED_MAX`] (or
//! [`BYTES_MAX`] of held file bytes): a writer faster than its commits
//! then waits for them.

use std::collections::VecDeque;
use std::sync::{Arc, Condvar, Mutex, Weak};
use std::time::Duration;

use crate::Inner;
use crate::call::{Meta, Touched};

/// Calls queued at most before a new one waits.
pub(crate) const QUEUED_MAX: usize = 32;
/// File bytes the queued calls hold at most before a new one waits.
const BYTES_MAX: usize = 64 << 20;
/// How long an idle worker waits for the next call before it ends.
const LINGER: Duration = Duration::from_millis(500);

#[derive(Default)]
pub(crate) struct Queue {
    state: Mutex<State>,
    /// A call queued or committed.
    moved: Condvar,
}

#[derive(Default)]
struct State {
    calls: VecDeque<(Meta, Touched)>,
    bytes: usize,
    /// The worker thread runs.
    worker: bool,
    /// Calls queued since the history opened, and how many of them are
    /// committed (or given up): a reader waits for those queued before
    /// it, not for a queue that a busy writer may never let empty.
    queued: u64,
    finished: u64,
    /// A test holds the worker back, now or after so many commits.
    #[cfg(test)]
    paused: bool,
    #[cfg(test)]
    pause_after: Option<usize>,
}

impl State {
    fn paused(&self) -> bool {
        #[cfg(test)]
        return self.paused;
        #[cfg(not(test))]
        false
    }
}

fn held(t: &Touched) -> usize {
    t.blobs.values().map(Vec::len).sum()
}

/// Every history this process opened, for [`settle_all`].
static OPENED: Mutex<Vec<Weak<Inner>>> = Mutex::new(Vec::new());

pub(crate) fn opened(inner: &Arc<Inner>) {
    let mut all = OPENED.lock().unwrap_or_else(|e| e.into_inner());
    all.retain(|w| w.strong_count() > 0);
    all.push(Arc::downgrade(inner));
}

/// Wait until every call queued in this process is committed (before the
/// process exits).
pub fn settle_all() {
    let all: Vec<_> = OPENED
        .lock()
        .unwrap_or_else(|e| e.into_inner())
        .iter()
        .filter_map(Weak::upgrade)
        .collect();
    for inner in all {
        inner.queue.settle();
    }
}

impl Queue {
    /// Wait until the calls queued so far are committed.
    pub(crate) fn settle(&self) {
        let mut s = self.state.lock().unwrap_or_else(|e| e.into_inner());
        let mine = s.queued;
        while s.finished < mine {
            s = self.moved.wait(s).unwrap_or_else(|e| e.into_inner());
        }
    }

    /// The call just committed (or given up) is finished.
    fn finished(&self, bytes: usize) {
        let mut s = self.state.lock().unwrap_or_else(|e| e.into_inner());
        s.bytes -= bytes;
        s.finished += 1;
        self.moved.notify_all();
    }
}

#[cfg(test)]
impl Queue {
    /// Hold the worker back (`true`) or let it go on.
    pub(crate) fn pause(&self, paused: bool) {
        let mut s = self.state.lock().unwrap();
        s.paused = paused;
        s.pause_after = None;
        self.moved.notify_all();
    }

    /// Let the worker commit `n` more calls, then hold it back again.
    pub(crate) fn pause_after(&self, n: usize) {
        let mut s = self.state.lock().unwrap();
        s.pause_after = Some(n);
        s.paused = n == 0;
        self.moved.notify_all();
    }

    /// How many calls wait.
    pub(crate) fn len(&self) -> usize {
        self.state.lock().unwrap().calls.len()
    }

    /// Forget the queued calls, as a process that dies would: their
    /// pending files are closed, unlocked, and left.
    pub(crate) fn abandon(&self) {
        let calls = std::mem::take(&mut self.state.lock().unwrap().calls);
        let mut s = self.state.lock().unwrap();
        s.bytes = 0;
        s.finished += calls.len() as u64;
        drop(s);
        drop(calls);
        self.moved.notify_all();
    }
}

impl Inner {
    /// Queue the call's part in this root for its commit (waiting while
    /// too many are queued).
    pub(crate) fn enqueue(self: &Arc<Self>, meta: Meta, t: Touched) {
        let q = &self.queue;
        let mut s = q.state.lock().unwrap_or_else(|e| e.into_inner());
        while s.calls.len() >= QUEUED_MAX || (s.bytes > BYTES_MAX && !s.calls.is_empty()) {
            s = q.moved.wait(s).unwrap_or_else(|e| e.into_inner());
        }
        s.bytes += held(&t);
        s.queued += 1;
        s.calls.push_back((meta, t));
        if !s.worker {
            let me = self.clone();
            let spawned = std::thread::Builder::new()
                .name("kura-commit".into())
                .spawn(move || me.work());
            match spawned {
                Ok(_) => s.worker = true,
                Err(e) => {
                    // No thread to be had: commit here.
                    let (meta, t) = s.calls.pop_back().expect("just queued");
                    drop(s);
                    tracing::warn!("{} history: committing in the call ({e})", self.name);
                    let bytes = held(&t);
                    self.commit_logged(&meta, t);
                    q.finished(bytes);
                    return;
                }
            }
        }
        q.moved.notify_all();
    }

    /// The worker: commit the queued calls in order; end once idle.
    fn work(self: Arc<Self>) {
        let q = &self.queue;
        loop {
            let mut s = q.state.lock().unwrap_or_else(|e| e.into_inner());
            if s.calls.is_empty() {
                s = q
                    .moved
                    .wait_timeout(s, LINGER)
                    .unwrap_or_else(|e| e.into_inner())
                    .0;
            }
            while s.paused() {
                s = q.moved.wait(s).unwrap_or_else(|e| e.into_inner());
            }
            let Some((meta, t)) = s.calls.pop_front() else {
                s.worker = false;
                return;
            };
            #[cfg(test)]
            if let Some(n) = s.pause_after.as_mut() {
                *n = n.saturating_sub(1);
                s.paused = *n == 0;
            }
            let bytes = held(&t);
            drop(s);
            // A panic in the commit must not leave readers waiting: the
            // pending file stays and the next commit records it.
            let me = &self;
            if std::panic::catch_unwind(std::panic::AssertUnwindSafe(|| me.commit_logged(&meta, t)))
                .is_err()
            {
                tracing::error!("{} history: a commit panicked", self.name);
            }
            q.finished(bytes);
        }
    }

    /// Commit the call's part, a failure logged: the files are written
    /// and their old bytes kept; the pending file stays and the next
    /// commit or start records the change.
    pub(crate) fn commit_logged(self: &Arc<Self>, meta: &Meta, t: Touched) {
        if let Err(e) = self.commit(meta, t) {
            tracing::warn!("{} history: {}", self.name, e.message);
        }
    }
}
