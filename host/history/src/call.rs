//! The tool call in progress on this thread: the changes its writes make,
//! gathered per root and committed as one change when the call ends.

use std::cell::RefCell;
use std::collections::BTreeMap;
use std::io::Write as _;
use std::sync::Arc;
use std::sync::atomic::{AtomicU64, Ordering};

use serde::{Deserialize, Serialize};

use crate::Inner;
use crate::error::Result;
use crate::store::Blobs;

/// Who made a call: the client's name (`clientInfo`) and its session (a
/// stdio process, an HTTP session).
#[derive(Clone, Debug, Default, Serialize, Deserialize, PartialEq, Eq)]
pub struct Who {
    pub client: String,
    pub session: String,
}

impl Who {
    /// The command line (`kura call`, `kura undo`): this process.
    pub fn terminal(what: &str) -> Who {
        Who {
            client: format!("kura {what}"),
            session: process_session("cli"),
        }
    }
}

/// A session id for this process: unique across restarts and containers
/// (the start time and the process's tag, see [`crate::fs::process_tag`]).
pub fn process_session(kind: &str) -> String {
    static STARTED: std::sync::OnceLock<String> = std::sync::OnceLock::new();
    let started = STARTED.get_or_init(|| chrono::Utc::now().format("%Y%m%dT%H%M%S").to_string());
    format!("{kind}-{started}-{}", crate::fs::process_tag())
}

/// What a change records of its call.
#[derive(Clone, Debug, Default, Serialize, Deserialize)]
pub(crate) struct Meta {
    pub tool: String,
    /// The arguments, as JSON, cut to [`ARGS_KEPT`] characters.
    pub args: String,
    pub who: Who,
    /// The changes this call undid (an undo).
    #[serde(default)]
    pub undoes: Vec<String>,
    /// When its pending file was first written (nanoseconds since the
    /// epoch): calls left pending are recorded in this order.
    #[serde(default, skip_serializing_if = "is_zero")]
    pub at: u64,
}

fn is_zero(n: &u64) -> bool {
    *n == 0
}

/// How much of a call's arguments a change keeps: enough to tell what it
/// was asked (a path, a mode, the start of a text), never a whole note.
pub const ARGS_KEPT: usize = 300;

/// One file's change by one write: its blobs (hex ids) before and after.
#[derive(Clone, Debug, Serialize, Deserialize)]
pub(crate) struct Step {
    pub path: String,
    pub before: Option<String>,
    pub after: Option<String>,
    /// The bytes before (base64), when the store does not hold them yet:
    /// a kura killed before its commit leaves them here, and the files
    /// hold what came after.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub kept: Option<String>,
    /// The bytes after (base64), when the store does not hold them yet: a
    /// kura killed before its commit is recorded with what its call wrote,
    /// whatever the file holds by the next start (a person may have typed
    /// since; that is their change, not the call's).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub wrote: Option<String>,
    /// A step of a rename: the bytes went with the name, and the store
    /// holds them only if it did before.
    #[serde(default, skip_serializing_if = "is_false")]
    pub moved: bool,
    /// Read back from a pending file: a `done` line followed it.
    #[serde(skip)]
    pub done: bool,
}

fn is_false(b: &bool) -> bool {
    !*b
}

/// The bytes of a file as a pending line keeps them.
pub(crate) fn keep(bytes: &[u8]) -> String {
    use base64::Engine as _;
    base64::engine::general_purpose::STANDARD.encode(bytes)
}

/// Bytes kept by [`keep`].
pub(crate) fn kept(text: &str) -> Option<Vec<u8>> {
    use base64::Engine as _;
    base64::engine::general_purpose::STANDARD.decode(text).ok()
}

/// A pending file line: a step, or a folder made or removed.
#[derive(Serialize, Deserialize)]
#[serde(untagged)]
pub(crate) enum Line {
    Step(Step),
    Folder {
        folder: String,
        made: bool,
    },
    Meta {
        meta: Meta,
    },
    /// The last step of this path failed and was not made.
    Unmade {
        unmade: String,
    },
    /// The last step of this path was made.
    Done {
        done: String,
    },
}

/// One root's part of the call.
pub(crate) struct Touched {
    pub history: Arc<Inner>,
    pub steps: Vec<Step>,
    pub made: Vec<String>,
    pub removed: Vec<String>,
    /// The pending file (locked while the call runs) and its name.
    pub pending: Option<(std::fs::File, String)>,
    /// The call's identity ([`key`]), once its pending file names it.
    pub key: String,
    /// The bytes of the blobs its steps name, written at the commit.
    pub blobs: Blobs,
}

/// A call's identity, which its commit carries (`Kura-Call:`): its pending
/// file's name (unique to the process) and when the call first wrote it
/// (the file is reused by the process's next calls).
pub(crate) fn key(name: &str, at: u64) -> String {
    format!("{name}@{at}")
}

/// Bytes a call holds in memory for its commit before they are written
/// as a pack of their own (a call that rewrites many large files).
#[cfg(not(test))]
const HELD_MAX: usize = 64 << 20;
#[cfg(test)]
pub(crate) const HELD_MAX: usize = 1 << 20;

struct Open {
    meta: Meta,
    touched: Vec<Touched>,
}

thread_local! {
    static OPEN: RefCell<Option<Open>> = const { RefCell::new(None) };
}

static PENDING: AtomicU64 = AtomicU64::new(0);

/// A tool call in progress on this thread: every change its writes make is
/// one change in each root's history, committed when it is dropped. A call
/// begun inside another (a dead kura's half-done move settled before the
/// caller's move plans anything) is a change of its own, and the outer
/// call goes on when it ends.
pub struct Call {
    outer: Option<Open>,
}

impl Call {
    /// Start recording a call of `tool` with `args` by `who`.
    pub fn begin(
        tool: &str,
        args: Option<&serde_json::Map<String, serde_json::Value>>,
        who: &Who,
    ) -> Call {
        let args = args
            .map(|a| serde_json::Value::Object(a.clone()).to_string())
            .unwrap_or_else(|| "{}".into());
        let meta = Meta {
            tool: tool.to_owned(),
            args: cut(&args, ARGS_KEPT),
            who: who.clone(),
            undoes: Vec::new(),
            at: 0,
        };
        let outer = OPEN.with(|o| {
            o.borrow_mut().replace(Open {
                meta,
                touched: Vec::new(),
            })
        });
        Call { outer }
    }
}

impl Drop for Call {
    fn drop(&mut self) {
        let outer = self.outer.take();
        if let Some(open) = OPEN.with(|o| std::mem::replace(&mut *o.borrow_mut(), outer)) {
            finish(open);
        }
    }
}

/// Mark the call in progress as the undo of `ids`.
pub(crate) fn set_undoes(ids: Vec<String>) {
    OPEN.with(|o| {
        if let Some(open) = o.borrow_mut().as_mut() {
            open.meta.undoes = ids;
        }
    });
}

/// The first `max` characters of `s`, `…` when cut.
pub(crate) fn cut(s: &str, max: usize) -> String {
    match s.char_indices().nth(max) {
        Some((i, _)) => format!("{}…", &s[..i]),
        None => s.to_owned(),
    }
}

fn finish(open: Open) {
    // Under a test's fault plan the commit's steps are the call's: made
    // in it, so that each is faulted in turn.
    let inline = kura_core::fault::steps().is_some();
    for t in open.touched {
        let history = t.history.clone();
        if inline {
            history.commit_logged(&open.meta, t);
        } else {
            history.enqueue(open.meta.clone(), t);
        }
    }
}

/// Record `step` (the file's bytes before and after, if any) in the call
/// in progress; outside a call (a journal replayed at start-up), in a
/// pending file of its own that the next commit or start records.
pub(crate) fn record(
    history: &Arc<Inner>,
    mut step: Step,
    before: Option<&[u8]>,
    after: Option<&[u8]>,
) -> Result<()> {
    let inside = OPEN.with(|o| -> Option<Result<()>> {
        let mut o = o.borrow_mut();
        let open = o.as_mut()?;
        let meta = open.meta.clone();
        let t = touched(open, history);
        Some(add(history, t, &meta, &mut step, before, after))
    });
    match inside {
        Some(r) => r,
        None => {
            let meta = Meta {
                tool: "kura".into(),
                args: "{}".into(),
                who: Who {
                    client: "kura".into(),
                    session: process_session("start"),
                },
                undoes: Vec::new(),
                at: 0,
            };
            let mut t = Touched::new(history);
            // Written, then let go: a pending file nobody holds is recorded
            // by the next commit.
            add(history, &mut t, &meta, &mut step, before, after)
        }
    }
}

/// Add `step` to the root's part of the call: its line to the pending
/// file (with the bytes before when nothing else keeps them), its bytes to
/// those the commit writes.
fn add(
    history: &Arc<Inner>,
    t: &mut Touched,
    meta: &Meta,
    step: &mut Step,
    before: Option<&[u8]>,
    after: Option<&[u8]>,
) -> Result<()> {
    let id = |s: &Option<String>| {
        s.as_deref()
            .and_then(|h| gix::ObjectId::from_hex(h.as_bytes()).ok())
    };
    let unheld = |bytes: Option<&[u8]>, id: Option<gix::ObjectId>| match (bytes, id) {
        (Some(bytes), Some(id)) if !t.blobs.contains_key(&id) && !history.store.knows(id) => {
            Some(keep(bytes))
        }
        _ => None,
    };
    step.kept = unheld(before, id(&step.before));
    if step.after != step.before {
        step.wrote = unheld(after, id(&step.after));
    }
    append(history, t, meta, &Line::Step(step.clone()))?;
    step.kept = None;
    step.wrote = None;
    for (bytes, id) in [(before, id(&step.before)), (after, id(&step.after))] {
        if let (Some(bytes), Some(id)) = (bytes, id) {
            t.blobs.entry(id).or_insert_with(|| bytes.to_vec());
        }
    }
    let held: usize = t.blobs.values().map(Vec::len).sum();
    if held > HELD_MAX {
        // Refused here, the write is not made: the step is not the call's
        // (its pending line, never said done, is not recorded either).
        history
            .store
            .write_blobs(&history.state, &history.dir, &t.blobs)
            .map_err(|e| history.fault("cannot keep the call's files", e))?;
        t.blobs.clear();
    }
    t.steps.push(step.clone());
    Ok(())
}

impl Touched {
    pub(crate) fn new(history: &Arc<Inner>) -> Touched {
        Touched {
            history: history.clone(),
            steps: Vec::new(),
            made: Vec::new(),
            removed: Vec::new(),
            pending: None,
            key: String::new(),
            blobs: Blobs::new(),
        }
    }
}

/// Record that a folder was made or removed by the call in progress.
pub(crate) fn record_folder(history: &Arc<Inner>, folder: String, made: bool) {
    OPEN.with(|o| {
        let mut o = o.borrow_mut();
        let Some(open) = o.as_mut() else { return };
        let meta = open.meta.clone();
        let t = touched(open, history);
        let line = Line::Folder {
            folder: folder.clone(),
            made,
        };
        if let Err(e) = append(history, t, &meta, &line) {
            tracing::warn!("{} history: {}", history.name, e.message);
        }
        if made {
            t.made.push(folder);
        } else if let Some(i) = t.made.iter().position(|m| *m == folder) {
            // Made and removed by the same call: it never was.
            t.made.remove(i);
        } else {
            t.removed.push(folder);
        }
    });
}

/// The write of `p` the call in progress just recorded failed: unless the
/// file holds what the step wrote (a failure after the write, such as its
/// folder's sync), the step is taken out of the call, in its pending file
/// too. A refused write is no change: recorded as one, its undo would meet
/// `conflict` there for ever.
pub(crate) fn unmade(history: &Arc<Inner>, p: &crate::fs::RelPath) {
    let path = p.to_string();
    OPEN.with(|o| {
        let mut o = o.borrow_mut();
        let Some(open) = o.as_mut() else { return };
        let meta = open.meta.clone();
        let Some(t) = part(open, history) else { return };
        let Some(i) = t.steps.iter().rposition(|s| s.path == path) else {
            return;
        };
        // Hashed as it streams by: a failed move of a big file is told
        // apart too.
        let Ok(now) = history.reader.file_id(p) else {
            return; // cannot tell: the step stays
        };
        if now == t.steps[i].after {
            return;
        }
        let line = Line::Unmade {
            unmade: path.clone(),
        };
        match append(history, t, &meta, &line) {
            Ok(()) => {
                t.steps.remove(i);
            }
            Err(e) => tracing::warn!("{} history: {}", history.name, e.message),
        }
    });
}

/// The write of `p` the call in progress just recorded was made: said in
/// its pending file (not synced: a kill loses no written line, and a power
/// cut that loses it leaves the file's state to judge by), so that the
/// next start records it whatever the file holds by then.
pub(crate) fn made(history: &Arc<Inner>, p: &crate::fs::RelPath) {
    let path = p.to_string();
    OPEN.with(|o| {
        let mut o = o.borrow_mut();
        let Some(t) = o.as_mut().and_then(|open| part(open, history)) else {
            return;
        };
        if !t.steps.iter().any(|s| s.path == path) {
            return;
        }
        if let Err(e) = write_lines(history, t, &[&Line::Done { done: path }], false) {
            tracing::warn!("{} history: {}", history.name, e.message);
        }
    });
}

/// This root's part of the call, if its writes made one.
fn part<'a>(open: &'a mut Open, history: &Arc<Inner>) -> Option<&'a mut Touched> {
    open.touched
        .iter_mut()
        .find(|t| Arc::ptr_eq(&t.history, history))
}

fn touched<'a>(open: &'a mut Open, history: &Arc<Inner>) -> &'a mut Touched {
    if part(open, history).is_none() {
        open.touched.push(Touched::new(history));
    }
    part(open, history).expect("just made")
}

/// Append `line` to the call's pending file (made, with the call's meta,
/// and locked on first use), durably.
fn append(history: &Arc<Inner>, t: &mut Touched, meta: &Meta, line: &Line) -> Result<()> {
    if t.pending.is_none() {
        let spare = history
            .spare
            .lock()
            .unwrap_or_else(|e| e.into_inner())
            .pop();
        let (file, name) = match spare {
            Some(kept) => kept,
            None => {
                let n = PENDING.fetch_add(1, Ordering::Relaxed);
                let name = format!("pending/{}-{n}.jsonl", crate::fs::process_tag());
                let file = history
                    .kura
                    .lock(&name)
                    .map_err(|e| history.fault("cannot record the call", e))?;
                (file, name)
            }
        };
        // The call's meta and its first step in one durable write.
        let mut meta = meta.clone();
        meta.at = std::time::SystemTime::now()
            .duration_since(std::time::UNIX_EPOCH)
            .map_or(0, |d| d.as_nanos() as u64);
        t.key = key(&name, meta.at);
        t.pending = Some((file, name));
        let head = Line::Meta { meta };
        return write_lines(history, t, &[&head, line], true);
    }
    write_lines(history, t, &[line], true)
}

/// `lines` appended to the call's pending file, synced when `sync`.
fn write_lines(history: &Inner, t: &mut Touched, lines: &[&Line], sync: bool) -> Result<()> {
    let Some((file, _)) = t.pending.as_mut() else {
        return Ok(());
    };
    let mut text = String::new();
    for line in lines {
        text.push_str(&serde_json::to_string(line).unwrap_or_default());
        text.push('\n');
    }
    file.write_all(text.as_bytes())
        .and_then(|()| if sync { file.sync_data() } else { Ok(()) })
        .map_err(|e| history.fault("cannot record the call", e))
}

/// The net change of a call's steps per path: the state before its first
/// step and after its last, paths that end as they began left out.
pub(crate) fn net(steps: &[Step]) -> BTreeMap<String, (Option<String>, Option<String>)> {
    tracks(steps)
        .into_iter()
        .filter(|(_, t)| t.before != t.last)
        .map(|(path, t)| (path, (t.before, t.last)))
        .collect()
}

/// A path's steps in one call, as a pending file tells them.
#[derive(Clone, Debug)]
pub(crate) struct Track {
    /// What its first step found.
    pub before: Option<String>,
    /// What its last step was to leave, whether that step is said done,
    /// and whether it was a rename (the bytes went with the name).
    pub last: Option<String>,
    pub last_done: bool,
    pub last_moved: bool,
    /// What the last step said done left (None: no step is said done).
    pub done: Option<Option<String>>,
}

/// Each path's [`Track`] in `steps`.
pub(crate) fn tracks(steps: &[Step]) -> BTreeMap<String, Track> {
    let mut out: BTreeMap<String, Track> = BTreeMap::new();
    for s in steps {
        let t = out.entry(s.path.clone()).or_insert_with(|| Track {
            before: s.before.clone(),
            last: None,
            last_done: false,
            last_moved: false,
            done: None,
        });
        t.last = s.after.clone();
        t.last_done = s.done;
        t.last_moved = s.moved;
        if s.done {
            t.done = Some(s.after.clone());
        }
    }
    out
}

/// A pending file read back.
pub(crate) struct Pending {
    pub meta: Meta,
    pub steps: Vec<Step>,
    pub made: Vec<String>,
    pub removed: Vec<String>,
}

/// A pending file read back: its meta, steps and folders.
pub(crate) fn parse_pending(text: &str) -> Pending {
    let mut meta = Meta::default();
    let (mut steps, mut made, mut removed) = (Vec::new(), Vec::new(), Vec::new());
    // A line cut by a crash is the last one and is skipped.
    for line in text
        .lines()
        .filter_map(|l| serde_json::from_str::<Line>(l).ok())
    {
        match line {
            Line::Meta { meta: m } => meta = m,
            Line::Step(s) => steps.push(s),
            Line::Unmade { unmade } => {
                if let Some(i) = steps.iter().rposition(|s| s.path == unmade) {
                    steps.remove(i);
                }
            }
            Line::Done { done } => {
                if let Some(s) = steps.iter_mut().rev().find(|s| s.path == done) {
                    s.done = true;
                }
            }
            Line::Folder { folder, made: true } => made.push(folder),
            Line::Folder {
                folder,
                made: false,
            } => match made.iter().position(|m| *m == folder) {
                Some(i) => {
                    made.remove(i);
                }
                None => removed.push(folder),
            },
        }
    }
    Pending {
        meta,
        steps,
        made,
        removed,
    }
}

/// Who made the call in progress on this thread.
pub(crate) fn current_who() -> Option<Who> {
    OPEN.with(|o| o.borrow().as_ref().map(|open| open.meta.who.clone()))
}

/// Forget the call in progress without recording it (a test's stand-in
/// for a process that died mid-call: its pending file stays, unlocked once
/// its handle is closed).
#[cfg(test)]
pub(crate) fn abandon() {
    OPEN.with(|o| o.borrow_mut().take());
}
