//! The history over a real root and state folder: recorded per call,
//! listed, diffed, undone all or nothing, recovered after a stop.
#![allow(clippy::disallowed_methods)] // the tests play the user's editor

use super::*;

struct Setup {
    _dirs: (tempfile::TempDir, tempfile::TempDir),
    root: Root,
    history: History,
    vault: std::path::PathBuf,
}

fn setup() -> Setup {
    let (v, s) = (tempfile::tempdir().unwrap(), tempfile::tempdir().unwrap());
    let state = StateDir::open(&s.path().join("state")).unwrap();
    let root = Root::open(v.path()).unwrap();
    let history = History::open(&state, "vault", &root, &[".system"]).unwrap();
    let root = root.with_recorder(history.recorder());
    Setup {
        vault: v.path().to_path_buf(),
        _dirs: (v, s),
        root,
        history,
    }
}

fn who(session: &str) -> Who {
    Who {
        client: "test-client".into(),
        session: session.into(),
    }
}

fn write(root: &Root, path: &str, text: &str) {
    let p = RelPath::parse(path, false).unwrap();
    root.update(&p, |_| Ok(Some((text.as_bytes().to_vec(), ()))))
        .unwrap();
}

fn all(h: &History) -> Vec<Entry> {
    h.list(&Filter::default(), 0, 100).unwrap().0
}

fn text_of(s: &Setup, path: &str) -> String {
    std::fs::read_to_string(s.vault.join(path)).unwrap()
}

fn rel(path: &str) -> RelPath {
    RelPath::parse(path, false).unwrap()
}

/// The process dies with `call` in progress: it is never finished, and its
/// pending file stays (unlocked once its handle is closed).
fn die(call: Call) {
    std::mem::forget(call);
    call::abandon();
}

/// Wait until no one holds a lock on the pending files: a dead process's
/// locks outlive it while a child forked meanwhile (another test's `git`,
/// between its fork and its exec) holds a copy of its descriptors, and a
/// start then takes the file for a call in progress (recorded at a later
/// commit, not at this open).
fn gone(state: &StateDir, root: &Root) {
    let pending = format!("{}/kura/pending", folder_of("vault", root));
    let deadline = std::time::Instant::now() + std::time::Duration::from_secs(5);
    while std::time::Instant::now() < deadline {
        let names = state.list(&pending).unwrap_or_default();
        if names
            .iter()
            .all(|(n, _, _)| matches!(state.try_lock(&format!("{pending}/{n}")), Ok(Some(_))))
        {
            return;
        }
        std::thread::sleep(std::time::Duration::from_millis(5));
    }
}

/// The history opened anew on the same folders, as the next start after a
/// kill does, and a root without a recorder to look through.
fn reopen(s: &Setup) -> (History, Root) {
    let state = StateDir::open(&s._dirs.1.path().join("state")).unwrap();
    let reader = Root::open(&s.vault).unwrap();
    gone(&state, &reader);
    (
        History::open(&state, "vault", &reader, &[]).unwrap(),
        reader,
    )
}

/// Carry out `plan` as a `vault_undo` call of `session`.
fn undo_as(h: &History, root: &Root, plan: &Plan, session: &str) {
    let _c = Call::begin("vault_undo", None, &who(session));
    h.apply_undo(root, plan).unwrap();
}

#[test]
fn one_call_is_one_change_with_its_tool_client_and_session() {
    let s = setup();
    {
        let _c = Call::begin("vault_create", None, &who("s1"));
        write(&s.root, "notes/a.md", "one\n");
        write(&s.root, "notes/b.md", "two\n");
    }
    let changes = all(&s.history);
    assert_eq!(changes.len(), 1, "{changes:?}");
    let c = &changes[0];
    assert_eq!(
        (c.tool.as_str(), c.client.as_str(), c.session.as_str()),
        ("vault_create", "test-client", "s1")
    );
    let paths: Vec<&str> = c.files.iter().map(|f| f.path.as_str()).collect();
    assert_eq!(paths, ["notes/a.md", "notes/b.md"]);
    assert!(
        c.files
            .iter()
            .all(|f| f.action == "created" && f.before.is_none())
    );
    assert_eq!(c.made, ["notes"]);
}

#[test]
fn an_overwrite_is_undone_byte_for_byte_and_the_undo_is_a_change() {
    let s = setup();
    {
        let _c = Call::begin("vault_create", None, &who("s1"));
        write(&s.root, "a.md", "years of notes\n");
    }
    {
        let _c = Call::begin("vault_write", None, &who("s1"));
        write(&s.root, "a.md", "oops\n");
    }
    let overwrite = all(&s.history)[0].clone();
    let (diff, cut) = s.history.diff(&overwrite, 10_000).unwrap();
    assert!(
        !cut && diff.contains("-years of notes") && diff.contains("+oops"),
        "{diff}"
    );
    {
        let _c = Call::begin("vault_undo", None, &who("s2"));
        let plan = s
            .history
            .plan_undo(&s.root, vec![overwrite.clone()])
            .unwrap();
        s.history.apply_undo(&s.root, &plan).unwrap();
    }
    assert_eq!(text_of(&s, "a.md"), "years of notes\n");
    let changes = all(&s.history);
    assert_eq!(changes[0].undoes, std::slice::from_ref(&overwrite.id));
    assert_eq!(
        changes[1].undone_by.as_deref(),
        Some(changes[0].id.as_str())
    );
}

#[test]
fn a_file_changed_since_is_a_conflict_and_nothing_is_undone() {
    let s = setup();
    {
        let _c = Call::begin("vault_create", None, &who("s1"));
        write(&s.root, "a.md", "a\n");
        write(&s.root, "b.md", "b\n");
    }
    {
        let _c = Call::begin("vault_write", None, &who("s1"));
        write(&s.root, "a.md", "a2\n");
        write(&s.root, "b.md", "b2\n");
    }
    // The user edits b.md in their editor.
    std::fs::write(s.vault.join("b.md"), "mine\n").unwrap();
    let change = all(&s.history)[0].clone();
    let plan = s.history.plan_undo(&s.root, vec![change]).unwrap();
    assert_eq!(plan.conflicts.len(), 1);
    assert_eq!(plan.conflicts[0].path, "b.md");
    let e = s.history.apply_undo(&s.root, &plan).unwrap_err();
    assert_eq!(e.code, Code::Conflict);
    assert!(e.message.contains("b.md"), "{}", e.message);
    assert_eq!(text_of(&s, "a.md"), "a2\n");
    assert_eq!(text_of(&s, "b.md"), "mine\n");
}

#[test]
fn a_session_undo_brings_back_every_file_and_folder_as_it_was() {
    let s = setup();
    write_outside(&s, "keep.md", "kept\n");
    {
        let _c = Call::begin("vault_create", None, &who("agent"));
        write(&s.root, "new/deep/x.md", "x\n");
    }
    {
        let _c = Call::begin("vault_write", None, &who("agent"));
        write(&s.root, "keep.md", "overwritten\n");
    }
    {
        let _c = Call::begin("vault_move", None, &who("agent"));
        let (from, to) = (rel("keep.md"), rel("moved/keep.md"));
        s.root.rename_file(&from, &to).unwrap();
    }
    let targets = s.history.session_changes("agent").unwrap();
    assert_eq!(targets.len(), 3);
    {
        let _c = Call::begin("vault_undo", None, &who("person"));
        let plan = s.history.plan_undo(&s.root, targets).unwrap();
        assert!(plan.conflicts.is_empty(), "{:?}", plan.conflicts);
        s.history.apply_undo(&s.root, &plan).unwrap();
    }
    assert_eq!(text_of(&s, "keep.md"), "kept\n");
    for gone in ["new", "moved"] {
        assert!(
            !s.vault.join(gone).exists(),
            "{gone} was made by the session"
        );
    }
    // Undoing the undo redoes the whole session.
    let undo = all(&s.history)[0].clone();
    {
        let _c = Call::begin("vault_undo", None, &who("person"));
        let plan = s.history.plan_undo(&s.root, vec![undo]).unwrap();
        s.history.apply_undo(&s.root, &plan).unwrap();
    }
    assert_eq!(text_of(&s, "moved/keep.md"), "overwritten\n");
    assert_eq!(text_of(&s, "new/deep/x.md"), "x\n");
}

fn write_outside(s: &Setup, path: &str, text: &str) {
    std::fs::write(s.vault.join(path), text).unwrap();
}

#[test]
fn what_a_killed_call_left_pending_is_recorded_at_the_next_open() {
    let s = setup();
    write_outside(&s, "a.md", "before\n");
    let call = Call::begin("vault_write", None, &who("s1"));
    write(&s.root, "a.md", "after\n");
    // The process dies here: the call is never finished.
    die(call);
    let (again, reader) = reopen(&s);
    let changes = all(&again);
    assert_eq!(changes.len(), 1, "{changes:?}");
    assert!(changes[0].recovered);
    assert_eq!(changes[0].tool, "vault_write");
    let plan = again
        .plan_undo(&reader.with_recorder(again.recorder()), changes)
        .unwrap();
    assert_eq!(plan.files.len(), 1);
}

/// Issue 67: the agent's write (b0 -> b1) answered, kura killed before its
/// commit, the person appends in their editor (b2), kura starts again. The
/// change is the agent's b0 -> b1, so its undo meets `conflict` and never
/// puts back b0 over the person's paragraph.
#[test]
fn an_undo_after_a_kill_never_erases_what_the_person_wrote_since() {
    let s = setup();
    write_outside(&s, "Plan.md", "b0\n");
    let call = Call::begin("vault_write", None, &who("s1"));
    write(&s.root, "Plan.md", "b1\n");
    die(call);
    write_outside(&s, "Plan.md", "b1\nthe person's paragraph\n");
    let (again, reader) = reopen(&s);
    let changes = all(&again);
    assert_eq!(changes.len(), 1, "{changes:?}");
    let id = |t: &str| store::Store::id_of(t.as_bytes()).to_string();
    assert_eq!(changes[0].files[0].before, Some(id("b0\n")));
    assert_eq!(
        changes[0].files[0].after,
        Some(id("b1\n")),
        "the call's own after-state"
    );
    let root = reader.with_recorder(again.recorder());
    let plan = again.plan_undo(&root, changes.clone()).unwrap();
    assert_eq!(plan.conflicts.len(), 1, "{plan:?}");
    assert_eq!(plan.conflicts[0].path, "Plan.md");
    // What the change wrote is readable: its diff shows b0 -> b1.
    let (diff, _) = again.diff(&changes[0], 10_000).unwrap();
    assert!(diff.contains("+b1"), "{diff}");
}

/// A kura killed after its call's line was synced but before the file was
/// written: the file still holds what the call found, and nothing is
/// recorded as changed.
#[test]
fn a_call_killed_before_its_write_records_no_change() {
    let s = setup();
    write_outside(&s, "a.md", "b0\n");
    let call = Call::begin("vault_write", None, &who("s1"));
    write(&s.root, "a.md", "b1\n");
    die(call);
    // As if the write had never reached the file: its `done` line never
    // written, the file as it was.
    let pending = s.history.path().join("kura/pending");
    for f in std::fs::read_dir(&pending).unwrap() {
        let f = f.unwrap().path();
        let text = std::fs::read_to_string(&f).unwrap();
        let kept: String = text
            .lines()
            .filter(|l| !l.contains("\"done\""))
            .map(|l| format!("{l}\n"))
            .collect();
        assert_ne!(kept, text, "the write was said done");
        std::fs::write(&f, kept).unwrap();
    }
    write_outside(&s, "a.md", "b0\n");
    let (again, _) = reopen(&s);
    assert_eq!(all(&again).len(), 0);
}

/// Found by the crash simulator: kura wrote b1, was killed before its
/// commit, and the person then put back what was there before (or removed
/// the file kura had created). The write was made, so it is recorded, and
/// what kura wrote is kept.
#[test]
fn a_write_made_then_reverted_by_the_person_after_a_kill_is_kept() {
    let s = setup();
    write_outside(&s, "a.md", "b0\n");
    let call = Call::begin("vault_write", None, &who("s1"));
    write(&s.root, "a.md", "the agent's b1\n");
    die(call);
    write_outside(&s, "a.md", "b0\n");
    let (again, _) = reopen(&s);
    let changes = all(&again);
    assert_eq!(changes.len(), 1, "{changes:?}");
    let (diff, _) = again.diff(&changes[0], 10_000).unwrap();
    assert!(diff.contains("+the agent's b1"), "{diff}");
}

/// Issue 67: a kura killed between its commit and its list line while
/// another kura goes on committing: the killed one's change is listed at
/// the other's next commit, not lost behind it.
#[test]
fn a_commit_whose_list_line_was_lost_is_listed_at_the_next_commit() {
    let s = setup();
    write_outside(&s, "a.md", "a0\n");
    {
        let _c = Call::begin("vault_write", None, &who("killed"));
        write(&s.root, "a.md", "a1\n");
    }
    s.history.settle();
    // The list as the killed kura left it: without its line.
    let list = s.history.path().join("kura/changes.jsonl");
    std::fs::write(&list, "").unwrap();
    {
        let _c = Call::begin("vault_write", None, &who("alive"));
        write(&s.root, "a.md", "a2\n");
    }
    let sessions: Vec<String> = all(&s.history).into_iter().map(|e| e.session).collect();
    assert_eq!(sessions, ["alive", "killed"]);
}

/// Issue 67: a call holding more than it keeps in memory writes its blobs
/// before its commit; a prune meanwhile must keep them, or the call's
/// change names blobs that are gone (its undo cannot be read, git fsck
/// fails, and every later prune too).
#[test]
fn a_prune_during_a_call_keeps_the_blobs_the_call_wrote_ahead() {
    let s = setup();
    for n in 0..4 {
        let _c = Call::begin("vault_write", None, &who("s1"));
        write(&s.root, "small.md", &format!("{n}\n"));
    }
    write_outside(&s, "big.md", "old\n");
    let big = "a line of a big note\n".repeat(2 * call::HELD_MAX / 20);
    let call = Call::begin("vault_write", None, &who("s2"));
    write(&s.root, "big.md", &big);
    s.history.settle();
    let pruned = s
        .history
        .inner
        .prune(Retention {
            days: 0,
            max_bytes: 1,
            floor: Floor {
                changes: 1,
                days: 0,
            },
        })
        .unwrap();
    assert!(pruned > 0);
    drop(call);
    s.history.settle();
    git(&s, &["fsck", "--strict", "--no-dangling"]);
    let newest = all(&s.history).remove(0);
    assert_eq!(newest.session, "s2");
    let plan = s.history.plan_undo(&s.root, vec![newest]).unwrap();
    undo_as(&s.history, &s.root, &plan, "s3");
    assert_eq!(text_of(&s, "big.md"), "old\n");
}

/// Issue 67: a write refused after the history heard of it (here a move
/// onto a name taken, `conflict`) is no change: recorded as one, the
/// session's undo met `conflict` on that file every time.
#[test]
fn a_write_refused_after_the_history_heard_of_it_is_no_change() {
    let s = setup();
    write_outside(&s, "a.md", "a\n");
    write_outside(&s, "b.md", "b\n");
    {
        let _c = Call::begin("vault_write", None, &who("s1"));
        write(&s.root, "a.md", "a1\n");
    }
    {
        let _c = Call::begin("vault_move", None, &who("s1"));
        let (a, b) = (rel("a.md"), rel("b.md"));
        let e = s.root.rename_file(&a, &b).unwrap_err();
        assert_eq!(e.code, Code::Conflict);
    }
    let changes = s.history.session_changes("s1").unwrap();
    assert_eq!(changes.len(), 1, "{changes:?}");
    assert_eq!(changes[0].tool, "vault_write");
    let plan = s.history.plan_undo(&s.root, changes).unwrap();
    assert!(plan.conflicts.is_empty(), "{:?}", plan.conflicts);
    // The same left by a kill: the pending file says the step was unmade.
    let call = Call::begin("vault_move", None, &who("s2"));
    let (a, b) = (rel("a.md"), rel("b.md"));
    s.root.rename_file(&a, &b).unwrap_err();
    die(call);
    let state = StateDir::open(&s._dirs.1.path().join("state")).unwrap();
    let again = History::open(&state, "vault", &Root::open(&s.vault).unwrap(), &[]).unwrap();
    assert!(again.session_changes("s2").unwrap().is_empty());
}

/// Found by the crash simulator: a kura killed while it moved the branch
/// left git's lock file of it, and every commit after failed — at the
/// next start the history could not be opened, and every change to the
/// vault was refused.
#[test]
fn a_branch_lock_left_by_a_killed_kura_stops_no_commit() {
    let s = setup();
    write_outside(&s, "a.md", "a0\n");
    {
        let _c = Call::begin("vault_write", None, &who("s1"));
        write(&s.root, "a.md", "a1\n");
    }
    s.history.settle();
    std::fs::write(s.history.path().join("refs/heads/main.lock"), "").unwrap();
    {
        let _c = Call::begin("vault_write", None, &who("s2"));
        write(&s.root, "a.md", "a2\n");
    }
    let sessions: Vec<String> = all(&s.history).into_iter().map(|e| e.session).collect();
    assert_eq!(sessions, ["s2", "s1"]);
    git(&s, &["fsck", "--strict"]);
}

/// Issue 67: a file over what kura reads whole (a 20 MB video in the
/// attachments) could no longer be moved or deleted once the history read
/// every moved file. A rename now keeps its bytes where they go: the
/// history hears of the file by its id, streamed, and its undo renames it
/// back; the undo of that undo moves it again.
#[test]
fn a_file_of_any_size_moves_and_comes_back_by_its_name() {
    let s = setup();
    let root = Root::open(&s.vault)
        .unwrap()
        .with_max_file_bytes(1 << 10)
        .with_recorder(s.history.recorder());
    let video: Vec<u8> = (0..(64u32 << 10)).map(|i| (i * 7 % 251) as u8).collect();
    std::fs::write(s.vault.join("talk.mp4"), &video).unwrap();
    let (from, to) = (rel("talk.mp4"), rel(".trash/talk.mp4"));
    assert_eq!(root.file_id(&from).unwrap(), Some(blob_id(&video)));
    {
        let _c = Call::begin("vault_delete", None, &who("s1"));
        root.rename_file(&from, &to).unwrap();
    }
    let changes = all(&s.history);
    assert_eq!(changes.len(), 1, "{changes:?}");
    let files: Vec<_> = changes[0]
        .files
        .iter()
        .map(|f| (f.path.as_str(), f.before.clone(), f.after.clone()))
        .collect();
    let id = Some(blob_id(&video));
    assert_eq!(
        files,
        [
            (".trash/talk.mp4", None, id.clone()),
            ("talk.mp4", id.clone(), None)
        ]
    );
    // No blob of it in the history: the bytes stayed in the vault.
    let (bytes, _, _) = packs_of(&s);
    assert!(bytes < 4 << 10, "{bytes} bytes of packs");
    let (diff, _) = s.history.diff(&changes[0], 10_000).unwrap();
    assert!(diff.contains("renamed"), "{diff}");
    let plan = s.history.plan_undo(&root, changes).unwrap();
    assert!(plan.conflicts.is_empty(), "{:?}", plan.conflicts);
    undo_as(&s.history, &root, &plan, "s2");
    assert_eq!(std::fs::read(s.vault.join("talk.mp4")).unwrap(), video);
    assert!(!s.vault.join(".trash/talk.mp4").exists());
    let undo = all(&s.history).remove(0);
    let plan = s.history.plan_undo(&root, vec![undo]).unwrap();
    undo_as(&s.history, &root, &plan, "s3");
    assert_eq!(
        std::fs::read(s.vault.join(".trash/talk.mp4")).unwrap(),
        video
    );
    git(&s, &["fsck", "--strict"]);
    // Changed since (the person replaced it): the undo refuses.
    std::fs::write(s.vault.join(".trash/talk.mp4"), b"another").unwrap();
    let first = all(&s.history).pop().unwrap();
    let plan = s.history.plan_undo(&root, vec![first]).unwrap();
    assert_eq!(plan.conflicts.len(), 1, "{plan:?}");
}

/// Found by the crash simulator: a delete (a rename into `.trash/`) of a
/// file the history never held, killed before its commit, was recorded
/// without its deletion (recovery compared the call's after-state with the
/// tree, which never held the file), so its undo could not put it back.
#[test]
fn a_killed_delete_of_a_file_never_recorded_is_recorded_whole() {
    let s = setup();
    write_outside(&s, "a.md", "mine\n");
    let call = Call::begin("vault_delete", None, &who("s1"));
    let (from, to) = (rel("a.md"), rel(".trash/a.md"));
    s.root.rename_file(&from, &to).unwrap();
    die(call);
    let (again, reader) = reopen(&s);
    let changes = all(&again);
    assert_eq!(changes.len(), 1, "{changes:?}");
    let paths: Vec<&str> = changes[0].files.iter().map(|f| f.path.as_str()).collect();
    assert_eq!(paths, [".trash/a.md", "a.md"]);
    let root = reader.with_recorder(again.recorder());
    let plan = again.plan_undo(&root, changes).unwrap();
    undo_as(&again, &root, &plan, "s2");
    assert_eq!(text_of(&s, "a.md"), "mine\n");
}

/// Found by the crash simulator: a move that rewrote the note's links in
/// place, then was killed before its rename, was recorded as the note's
/// deletion (the steps' net), losing the rewrite. Each step is recorded as
/// far as its `done` lines go.
#[test]
fn a_killed_call_is_recorded_up_to_its_last_step_done() {
    let s = setup();
    write_outside(&s, "b.md", "b0\n");
    let call = Call::begin("vault_move", None, &who("s1"));
    write(&s.root, "b.md", "b1 rewritten\n");
    let (from, to) = (rel("b.md"), rel("a.md"));
    s.root.rename_file(&from, &to).unwrap();
    die(call);
    // Killed before the rename: its two `done` lines never written, the
    // file where it was.
    let pending = s.history.path().join("kura/pending");
    for f in std::fs::read_dir(&pending).unwrap() {
        let f = f.unwrap().path();
        let text = std::fs::read_to_string(&f).unwrap();
        let lines: Vec<&str> = text.lines().collect();
        let kept = lines[..lines.len() - 2].join("\n") + "\n";
        assert!(
            lines[lines.len() - 2..]
                .iter()
                .all(|l| l.contains("\"done\""))
        );
        std::fs::write(&f, kept).unwrap();
    }
    std::fs::rename(s.vault.join("a.md"), s.vault.join("b.md")).unwrap();
    let state = StateDir::open(&s._dirs.1.path().join("state")).unwrap();
    let again = History::open(&state, "vault", &Root::open(&s.vault).unwrap(), &[]).unwrap();
    let changes = all(&again);
    assert_eq!(changes.len(), 1, "{changes:?}");
    let files: Vec<_> = changes[0]
        .files
        .iter()
        .map(|f| (f.path.as_str(), f.after.clone()))
        .collect();
    assert_eq!(files, [("b.md", Some(blob_id(b"b1 rewritten\n")))]);
}

/// Review of issue 67: a call holding more than it keeps in memory writes
/// its blobs in a pack ahead of its commit; the commit must see that pack,
/// or it took those blobs for a rename's and left the file out of the tree
/// (and the next prune removed what kura wrote).
#[test]
fn a_call_that_wrote_its_blobs_ahead_keeps_its_files_in_the_tree() {
    let s = setup();
    write_outside(&s, "big.md", "old\n");
    let big = "a line of a big note\n".repeat(2 * call::HELD_MAX / 20);
    {
        let _c = Call::begin("vault_write", None, &who("s1"));
        write(&s.root, "big.md", &big);
    }
    s.history.settle();
    let tree = git(&s, &["ls-tree", "HEAD", "big.md"]);
    assert!(tree.contains(&blob_id(big.as_bytes())), "{tree}");
    git(&s, &["fsck", "--strict"]);
}

/// Review of issue 67: a move of a file over what kura reads whole that
/// fails (its new name taken meanwhile) is no change either.
#[test]
fn a_failed_move_of_a_big_file_is_no_change() {
    let s = setup();
    // A root (and so a history) that reads at most 16 bytes whole.
    let small = Root::open(&s.vault).unwrap().with_max_file_bytes(16);
    let state = StateDir::open(&s._dirs.1.path().join("small")).unwrap();
    let history = History::open(&state, "vault", &small, &[]).unwrap();
    let root = small.with_recorder(history.recorder());
    write_outside(&s, "talk.mp4", "more than sixteen bytes of video");
    write_outside(&s, "taken.mp4", "someone else's");
    {
        let _c = Call::begin("vault_move", None, &who("s1"));
        let e = root
            .rename_file(&rel("talk.mp4"), &rel("taken.mp4"))
            .unwrap_err();
        assert_eq!(e.code, Code::Conflict);
    }
    assert!(all(&history).is_empty(), "{:?}", all(&history));
}

#[test]
fn the_repository_is_git_with_one_commit_per_change_and_the_list_is_rebuilt_from_it() {
    let s = setup();
    write_outside(&s, "a.md", "mine\n");
    {
        let _c = Call::begin("vault_write", None, &who("s1"));
        write(&s.root, "a.md", "kura's\n");
    }
    // The first sight of a.md is a commit of its own before the change.
    s.history.settle();
    let msgs = s.history.inner.store.messages_since(None).unwrap();
    assert_eq!(msgs.len(), 2);
    assert!(msgs[0].1.starts_with("found changed outside kura"));
    assert!(msgs[1].1.starts_with("vault_write: modified a.md"));
    // The list lost (a stop between the commit and its line): rebuilt.
    let list = s.history.path().join("kura/changes.jsonl");
    std::fs::remove_file(&list).unwrap();
    let state = StateDir::open(&s._dirs.1.path().join("state")).unwrap();
    let again = History::open(&state, "vault", &Root::open(&s.vault).unwrap(), &[]).unwrap();
    assert_eq!(all(&again).len(), 1);
}

/// The bytes of the history's packs, how many there are, and the
/// smallest's size.
fn packs_of(s: &Setup) -> (u64, usize, u64) {
    let dir = s.history.path().join("objects/pack");
    let packs: Vec<u64> = std::fs::read_dir(dir)
        .unwrap()
        .map(|e| e.unwrap())
        .filter(|e| e.file_name().to_string_lossy().ends_with(".pack"))
        .map(|e| e.metadata().unwrap().len())
        .collect();
    (
        packs.iter().sum(),
        packs.len(),
        packs.iter().copied().min().unwrap_or(0),
    )
}

fn git(s: &Setup, args: &[&str]) -> String {
    let out = std::process::Command::new("git")
        .arg("-C")
        .arg(s.history.path())
        .args(args)
        .output()
        .expect("git runs");
    assert!(
        out.status.success(),
        "git {args:?}: {}",
        String::from_utf8_lossy(&out.stderr)
    );
    String::from_utf8_lossy(&out.stdout).into_owned()
}

#[test]
fn each_call_is_one_pack_and_packs_merge_into_deltas_that_git_reads() {
    let s = setup();
    let text =
        |n: usize, round: usize| format!("{}round {round}\n", "a line of a note\n".repeat(40 + n));
    {
        let _c = Call::begin("vault_create", None, &who("s1"));
        for n in 0..200 {
            write(&s.root, &format!("notes/n{n:03}.md"), &text(n, 0));
        }
    }
    for round in 1..=60 {
        let _c = Call::begin("vault_write", None, &who("s1"));
        let n = round % 7;
        write(&s.root, &format!("notes/n{n:03}.md"), &text(n, round));
    }
    assert!(
        pack::loose(&s.history.inner.state, &s.history.inner.dir)
            .unwrap()
            .is_empty()
    );
    // Merges run beside the writes; the last one finishes, and one more
    // looks at what came meanwhile.
    s.history.inner.settle();
    s.history.inner.merge();
    let (bytes, count, one) = packs_of(&s);
    assert!(count < pack::MERGE_AT, "{count} packs");
    // One call's pack holds its note and its 200-entry folder whole; 61
    // of them whole would be over 61 times that. Merged, the folder's and
    // the notes' later versions are deltas of a few dozen bytes, and
    // fewer than MERGE_AT packs are whole.
    assert!(
        bytes < 20 * one,
        "{bytes} bytes in {count} packs, the smallest {one}"
    );
    let changes = all(&s.history);
    assert_eq!(changes.len(), 61);
    let (diff, _) = s.history.diff(&changes[0], 10_000).unwrap();
    assert!(diff.contains("+round 60"), "{diff}");
    // git itself reads every object, deltas resolved.
    git(&s, &["fsck", "--strict", "--no-dangling"]);
    let log = git(&s, &["log", "-p", "--format=%s"]);
    assert!(log.contains("+round 1\n") && log.contains("+round 60\n"));
    {
        let _c = Call::begin("vault_undo", None, &who("s2"));
        let plan = s
            .history
            .plan_undo(&s.root, vec![changes[0].clone()])
            .unwrap();
        s.history.apply_undo(&s.root, &plan).unwrap();
    }
    assert_eq!(text_of(&s, "notes/n004.md"), text(4, 53));
}

/// Two kuras (two handles on one history, each with its own lock file
/// handle, as two processes have) writing in turn: every change of both
/// is recorded once, in order, readable by git and undoable by either.
#[test]
fn a_second_kura_writing_into_the_same_history_loses_no_change() {
    let s = setup();
    let state = StateDir::open(&s._dirs.1.path().join("state")).unwrap();
    let plain = Root::open(&s.vault).unwrap();
    let other = History::open(&state, "vault", &plain, &[".system"]).unwrap();
    let other_root = Root::open(&s.vault)
        .unwrap()
        .with_recorder(other.recorder());
    for round in 0..30 {
        let (root, session, history) = if round % 2 == 0 {
            (&s.root, "first", &s.history)
        } else {
            (&other_root, "second", &other)
        };
        {
            let _c = Call::begin("vault_write", None, &who(session));
            write(
                root,
                &format!("n{}.md", round % 4),
                &format!("round {round}\n"),
            );
        }
        // Two processes' calls, each committed before the other's next.
        history.settle();
    }
    for h in [&s.history, &other] {
        h.inner.settle();
        let changes = all(h);
        assert_eq!(changes.len(), 30, "{changes:?}");
        assert!(changes.iter().all(|c| !c.recovered));
        assert_eq!(changes[0].session, "second");
    }
    git(&s, &["fsck", "--strict", "--no-dangling"]);
    // The first undoes the second's last change.
    let last = all(&s.history)[0].clone();
    {
        let _c = Call::begin("vault_undo", None, &who("first"));
        let plan = s.history.plan_undo(&s.root, vec![last]).unwrap();
        s.history.apply_undo(&s.root, &plan).unwrap();
    }
    assert_eq!(text_of(&s, "n1.md"), "round 25\n");
}

/// Pruned to a size: the oldest changes leave the list and git's log
/// (which stops at the boundary, `git fsck` content), the repository
/// shrinks, and every change still listed undoes, down to the files as
/// they were at the boundary.
#[test]
fn pruning_leaves_every_listed_change_undoable() {
    let s = setup();
    let mut after = Vec::new();
    for round in 0..30 {
        let _c = Call::begin("vault_write", None, &who("s1"));
        let n = round % 3;
        let text = format!(
            "{}round {round}\n",
            "a line of a note\n".repeat(200 + round)
        );
        write(&s.root, &format!("n{n}.md"), &text);
        after.push(
            (0..3)
                .map(|n| std::fs::read_to_string(s.vault.join(format!("n{n}.md"))).ok())
                .collect::<Vec<_>>(),
        );
    }
    s.history.inner.settle();
    let bytes = pack::packed_bytes(&s.history.inner.state, &s.history.inner.dir).unwrap();
    s.history.keep(Retention {
        days: 0,
        max_bytes: bytes / 2,
        floor: Floor {
            changes: 5,
            days: 0,
        },
    });
    s.history.inner.settle();
    let listed = all(&s.history);
    // Kept: 30 × 0.8 × the share of what a prune frees that fits.
    let kept = listed.len();
    assert!((5..=16).contains(&kept), "{listed:?}");
    assert!(pack::packed_bytes(&s.history.inner.state, &s.history.inner.dir).unwrap() < bytes);
    git(&s, &["fsck", "--strict", "--no-dangling"]);
    let log = git(&s, &["log", "--format=%s"]);
    assert_eq!(log.lines().count(), kept + 1, "{log}");
    // A list rebuilt from git stops at the boundary too.
    std::fs::remove_file(s.history.path().join("kura/changes.jsonl")).unwrap();
    let state = StateDir::open(&s._dirs.1.path().join("state")).unwrap();
    let again = History::open(&state, "vault", &Root::open(&s.vault).unwrap(), &[]).unwrap();
    assert_eq!(all(&again).len(), kept);
    {
        let _c = Call::begin("vault_undo", None, &who("s2"));
        let plan = s.history.plan_undo(&s.root, listed).unwrap();
        assert!(plan.conflicts.is_empty(), "{:?}", plan.conflicts);
        s.history.apply_undo(&s.root, &plan).unwrap();
    }
    let now: Vec<Option<String>> = (0..3)
        .map(|n| std::fs::read_to_string(s.vault.join(format!("n{n}.md"))).ok())
        .collect();
    assert_eq!(now, after[29 - kept]);
}

/// Merges run beside the writes and remove the packs they rewrote: no
/// commit may fail for a pack gone under it, nor for the object store's
/// slots (one per pack index it ever loaded; 64 in the tests, so that the
/// store running out shows within 1,500 changes, where 1,024 ran out at
/// ~2,700).
#[test]
fn packs_merged_under_running_writes_fail_no_commit() {
    let s = setup();
    for round in 0..1_500 {
        {
            let _c = Call::begin("vault_write", None, &who("s1"));
            write(
                &s.root,
                &format!("n{}.md", round % 9),
                &format!("round {round}\n"),
            );
        }
        let listed = s.history.list(&Filter::default(), 0, 1).unwrap().1;
        assert_eq!(listed, round + 1, "a commit failed at change {round}");
    }
    s.history.inner.settle();
    assert!(all(&s.history).iter().all(|c| !c.recovered));
    let pending = std::fs::read_dir(s.history.path().join("kura/pending"))
        .unwrap()
        .count();
    assert!(pending <= 1, "{pending} pending files");
    git(&s, &["fsck", "--strict", "--no-dangling"]);
}

#[test]
fn a_listing_right_after_the_calls_shows_every_one_of_them() {
    let s = setup();
    // Answered before their commits: a listing waits for those queued.
    for i in 0..40 {
        let _c = Call::begin("vault_write", None, &who("s1"));
        write(
            &s.root,
            &format!("n{}.md", i % 7),
            &format!("version {i}\n"),
        );
    }
    let (listed, total) = s.history.list(&Filter::default(), 0, 100).unwrap();
    assert_eq!(total, 40);
    assert_eq!(listed[0].args, "{}");
    assert!(listed.iter().all(|e| !e.recovered));
}

#[test]
fn calls_queued_when_kura_stops_are_recorded_at_the_next_open_and_undoable() {
    let s = setup();
    write_outside(&s, "a.md", "years of notes\n");
    s.history.inner.queue.pause(true);
    for text in ["first\n", "second\n", "third\n"] {
        let _c = Call::begin("vault_write", None, &who("s1"));
        write(&s.root, "a.md", text);
    }
    assert_eq!(s.history.inner.queue.len(), 3);
    // The process dies with the three calls answered, none committed.
    s.history.inner.queue.abandon();
    s.history.inner.queue.pause(false);
    let (again, reader) = reopen(&s);
    let changes = all(&again);
    assert!(changes.iter().all(|e| e.recovered));
    // Each call as it was, in order: the text between two calls is kept
    // by the later one's pending file.
    let afters: Vec<String> = changes
        .iter()
        .map(|e| e.files[0].after.clone().unwrap())
        .collect();
    let id = |t: &str| store::Store::id_of(t.as_bytes()).to_string();
    assert_eq!(afters, [id("third\n"), id("second\n"), id("first\n")]);
    // Undoing them all brings back what was there before the first.
    let root = reader.with_recorder(again.recorder());
    let plan = again.plan_undo(&root, changes).unwrap();
    assert!(plan.conflicts.is_empty(), "{:?}", plan.conflicts);
    undo_as(&again, &root, &plan, "s2");
    assert_eq!(text_of(&s, "a.md"), "years of notes\n");
}

#[test]
fn a_writer_faster_than_its_commits_waits_for_them() {
    let s = setup();
    s.history.inner.queue.pause(true);
    let done = std::sync::Arc::new(std::sync::atomic::AtomicUsize::new(0));
    let writer = {
        let root = s
            .root
            .try_clone()
            .unwrap()
            .with_recorder(s.history.recorder());
        let done = done.clone();
        std::thread::spawn(move || {
            for i in 0..super::queue::QUEUED_MAX + 2 {
                let _c = Call::begin("vault_write", None, &who("s1"));
                write(&root, &format!("n{i}.md"), "text\n");
                drop(_c);
                done.fetch_add(1, std::sync::atomic::Ordering::SeqCst);
            }
        })
    };
    // The queue fills, and the next call waits for a commit.
    while s.history.inner.queue.len() < super::queue::QUEUED_MAX {
        std::thread::sleep(std::time::Duration::from_millis(5));
    }
    std::thread::sleep(std::time::Duration::from_millis(100));
    assert_eq!(
        done.load(std::sync::atomic::Ordering::SeqCst),
        super::queue::QUEUED_MAX
    );
    s.history.inner.queue.pause(false);
    writer.join().unwrap();
    assert_eq!(all(&s.history).len(), super::queue::QUEUED_MAX + 2);
}

#[test]
fn a_reader_waits_for_the_calls_before_it_not_for_an_empty_queue() {
    let s = setup();
    s.history.inner.queue.pause(true);
    let call = |name: &str| {
        let _c = Call::begin("vault_write", None, &who("s1"));
        write(&s.root, name, "text\n");
    };
    call("a.md");
    call("b.md");
    let (told, settled) = std::sync::mpsc::channel();
    let inner = s.history.inner.clone();
    std::thread::spawn(move || {
        inner.queue.settle();
        let _ = told.send(());
    });
    // A busy writer: a call queued after the reader's, never committed
    // while the reader waits.
    std::thread::sleep(std::time::Duration::from_millis(50));
    call("c.md");
    s.history.inner.queue.pause_after(2);
    settled
        .recv_timeout(std::time::Duration::from_secs(20))
        .expect("the reader was kept waiting by a call queued after it");
    assert_eq!(s.history.inner.queue.len(), 1);
    s.history.inner.queue.pause(false);
    s.history.settle();
    assert_eq!(all(&s.history).len(), 3);
}

#[test]
fn the_unfiltered_listing_pages_as_a_filter_admitting_every_change_does() {
    let s = setup();
    for i in 0..12 {
        let _c = Call::begin("vault_write", None, &who("s1"));
        write(&s.root, &format!("n{}.md", i % 3), &format!("v{i}\n"));
    }
    let newest = all(&s.history)[0].clone();
    let plan = s.history.plan_undo(&s.root, vec![newest]).unwrap();
    undo_as(&s.history, &s.root, &plan, "s2");
    let every = Filter {
        client: Some("test-client".into()),
        ..Filter::default()
    };
    let seen = |(page, total): (Vec<Entry>, usize)| {
        let ids: Vec<_> = page.into_iter().map(|e| (e.id, e.undone_by)).collect();
        (ids, total)
    };
    for (offset, limit) in [(0, 5), (1, 4), (10, 10), (13, 5), (20, 5)] {
        let fast = seen(s.history.list(&Filter::default(), offset, limit).unwrap());
        let parsed = seen(s.history.list(&every, offset, limit).unwrap());
        assert_eq!(fast, parsed, "offset {offset}, limit {limit}");
    }
    assert_eq!(s.history.list(&Filter::default(), 0, 1).unwrap().1, 13);
    assert!(all(&s.history)[1].undone_by.is_some());
}

#[test]
fn a_note_s_history_is_listed_whatever_its_name_holds() {
    let s = setup();
    let odd = "ノート/a \"quoted\" name.md";
    for text in ["one\n", "two\n"] {
        let _c = Call::begin("vault_write", None, &who("s1"));
        write(&s.root, odd, text);
        write(&s.root, "other.md", text);
    }
    let by = |path: &str| {
        let filter = Filter {
            path: Some(RelPath::parse(path, false).unwrap()),
            ..Filter::default()
        };
        s.history.list(&filter, 0, 10).unwrap().1
    };
    assert_eq!(by(odd), 2);
    assert_eq!(by("ノート"), 2);
    assert_eq!(by("ノー"), 0, "a folder is a whole name");
    assert_eq!(by("other.md"), 2);
    let id = &all(&s.history)[0].id;
    assert_eq!(s.history.find(&id[..7]).unwrap().id, *id);
    assert_eq!(s.history.session_changes("s1").unwrap().len(), 2);
}

#[test]
fn kuras_starting_together_on_a_new_state_folder_all_open_its_history() {
    for _ in 0..5 {
        let (v, st) = (tempfile::tempdir().unwrap(), tempfile::tempdir().unwrap());
        let start = std::sync::Arc::new(std::sync::Barrier::new(6));
        let opened: Vec<_> = (0..6)
            .map(|_| {
                let (vault, state, start) = (
                    v.path().to_path_buf(),
                    st.path().join("state"),
                    start.clone(),
                );
                std::thread::spawn(move || {
                    let state = StateDir::open(&state).unwrap();
                    let root = Root::open(&vault).unwrap();
                    start.wait();
                    History::open(&state, "vault", &root, &[]).map(|_| ())
                })
            })
            .collect();
        for o in opened {
            assert!(o.join().unwrap().is_ok());
        }
    }
}

#[test]
fn a_diff_cut_short_by_its_deadline_still_turns_one_text_into_the_other() {
    // 400,000 lines drawn from four: 2.7 s to the shortest diff here, so
    // the deadline (0.5 s) cuts it short.
    let mut x: u64 = 7;
    let mut lines = |n: usize| -> String {
        (0..n)
            .map(|_| {
                x ^= x << 13;
                x ^= x >> 7;
                x ^= x << 17;
                format!("{}\n", x % 4)
            })
            .collect()
    };
    let (before, after) = (lines(400_000), lines(400_000));
    let diff = unified_diff(&before, &after, "a/n.md", "b/n.md");
    assert_eq!(patched(&before, &diff), after);
}

/// `before` with a unified diff's hunks applied.
fn patched(before: &str, diff: &str) -> String {
    let old: Vec<&str> = before.split_inclusive('\n').collect();
    let (mut out, mut at) = (String::new(), 0);
    for line in diff.split_inclusive('\n').skip(2) {
        if let Some(header) = line.strip_prefix("@@ -") {
            // `@@ -start,len +…`: the lines before the hunk are as they were.
            let start: usize = header
                .split([',', ' '])
                .next()
                .and_then(|n| n.parse().ok())
                .unwrap();
            let upto = start.saturating_sub(1).max(at);
            out.extend(old[at..upto].iter().copied());
            at = upto;
            continue;
        }
        let (mark, text) = line.split_at(1);
        match mark {
            "+" => out.push_str(text),
            "-" => at += 1,
            _ => {
                out.push_str(text);
                at += 1;
            }
        }
    }
    out.extend(old[at..].iter().copied());
    out
}

/// A call's pending file that comes back full after a power cut (its
/// emptying is not synced), once a later change of its file was listed:
/// the call is found committed by the key its commit carries, not listed
/// a second time (the newest listed change of the file is not its own).
#[test]
fn a_pending_file_back_after_a_power_cut_is_not_listed_twice() {
    let s = setup();
    let state = StateDir::open(&s._dirs.1.path().join("state")).unwrap();
    let pending = format!("{}/kura/pending", folder_of("vault", &s.root));
    let saved = {
        let _c = Call::begin("vault_write", None, &who("s1"));
        write(&s.root, "a.md", "one\n");
        let names = state.list(&pending).unwrap();
        assert_eq!(names.len(), 1, "{names:?}");
        let name = format!("{pending}/{}", names[0].0);
        let text = state.read(&name).unwrap().unwrap();
        (name, text)
    };
    s.history.settle();
    {
        let _c = Call::begin("vault_write", None, &who("s1"));
        write(&s.root, "a.md", "two\n");
    }
    s.history.settle();
    assert_eq!(all(&s.history).len(), 2);
    let Setup {
        _dirs,
        root,
        history,
        vault,
    } = s;
    drop((root, history));
    // The power cut: the first call's pending file as it was before its
    // emptying.
    state.write(&saved.0, &saved.1).unwrap();
    let reader = Root::open(&vault).unwrap();
    gone(&state, &reader);
    let again = History::open(&state, "vault", &reader, &[]).unwrap();
    assert!(
        state.list(&pending).unwrap().is_empty(),
        "the pending file was taken"
    );
    let changes = all(&again);
    assert_eq!(changes.len(), 2, "{changes:?}");
}

/// A change answered by a kura killed before its commit is in the next
/// listing of a kura still running (found by the crash simulator: a
/// session undo from a terminal, whose start recorded it, saw a change the
/// running kura's listing lacked).
#[test]
fn a_killed_kuras_change_is_in_a_live_kuras_next_listing() {
    let s = setup();
    {
        let (other, reader) = reopen(&s);
        let root = reader.with_recorder(other.recorder());
        let call = Call::begin("vault_write", None, &who("s2"));
        write(&root, "a.md", "theirs\n");
        die(call);
    }
    let state = StateDir::open(&s._dirs.1.path().join("state")).unwrap();
    gone(&state, &s.root);
    // Named as another process names its pending files (this test is one
    // process; a listing leaves its own process's files to its commits).
    let pending = format!("{}/kura/pending", folder_of("vault", &s.root));
    let names = state.list(&pending).unwrap();
    assert_eq!(names.len(), 1, "{names:?}");
    let name = format!("{pending}/{}", names[0].0);
    let text = state.read(&name).unwrap().unwrap();
    state
        .write(&format!("{pending}/1-00000000-0.jsonl"), &text)
        .unwrap();
    state.remove(&name).unwrap();
    let changes = all(&s.history);
    assert_eq!(changes.len(), 1, "{changes:?}");
    assert_eq!(changes[0].session, "s2");
    assert!(changes[0].recovered);
}

/// A stopped call whose last write was not said done is judged by what
/// came after it; when that is a call still running (another kura's, not
/// committed yet), by what that call found, not by what the file holds
/// now (found by a read-only review: a listing's or a start's recovery
/// dropped the stopped call's write).
#[test]
fn a_stopped_write_not_said_done_is_judged_by_the_running_call_after_it() {
    let s = setup();
    write_outside(&s, "a.md", "x\n");
    let state = StateDir::open(&s._dirs.1.path().join("state")).unwrap();
    let pending = format!("{}/kura/pending", folder_of("vault", &s.root));
    let call = Call::begin("vault_write", None, &who("s1"));
    write(&s.root, "a.md", "y\n");
    die(call);
    // Killed between its rename and its `done` line.
    let names = state.list(&pending).unwrap();
    assert_eq!(names.len(), 1, "{names:?}");
    let name = format!("{pending}/{}", names[0].0);
    let text = String::from_utf8(state.read(&name).unwrap().unwrap()).unwrap();
    let kept: String = text
        .lines()
        .filter(|l| !l.starts_with("{\"done\""))
        .map(|l| format!("{l}\n"))
        .collect();
    assert_ne!(kept, text, "a done line was there to drop");
    state.write(&name, kept.as_bytes()).unwrap();
    // Another call, still running, rewrites the file after it.
    // Begun after it: the clock has moved on since its pending file.
    let stopped = std::time::SystemTime::now();
    while std::time::SystemTime::now() <= stopped {
        std::hint::spin_loop();
    }
    let running = Call::begin("vault_write", None, &who("s2"));
    write(&s.root, "a.md", "z\n");
    let (again, _reader) = reopen(&s);
    let changes = all(&again);
    assert_eq!(changes.len(), 1, "{changes:?}");
    assert_eq!(changes[0].session, "s1");
    assert_eq!(
        changes[0].files[0].after.as_deref(),
        Some(store::Store::id_of(b"y\n").to_string().as_str())
    );
    drop(running);
}

/// The same edit made again by the same session after the person put the
/// file back, killed before its commit, is recorded: its call's key is in
/// no commit, so no resemblance to the first one hides it (found by a
/// read-only review: the fallback comparison took it for the first).
#[test]
fn the_same_edit_made_again_and_killed_is_recorded_again() {
    let s = setup();
    write_outside(&s, "a.md", "a\n");
    {
        let _c = Call::begin("vault_write", None, &who("s1"));
        write(&s.root, "a.md", "b\n");
    }
    s.history.settle();
    write_outside(&s, "a.md", "a\n"); // the person puts it back
    let call = Call::begin("vault_write", None, &who("s1"));
    write(&s.root, "a.md", "b\n");
    die(call);
    let (again, _reader) = reopen(&s);
    let changes = all(&again);
    assert_eq!(changes.len(), 2, "{changes:?}");
    assert!(changes[0].recovered, "{changes:?}");
}

/// A second kura that only reads (a terminal's `kura history`, a server
/// whose client only lists) sees the writer's merges remove the packs it
/// loaded and new ones take their slots: gix's store stayed blind to one of
/// them for good, and the diff said the change's bytes were never kept.
#[test]
fn a_second_kura_reads_every_change_across_the_writers_merges() {
    let s = setup();
    let (reader, _root) = reopen(&s);
    for round in 0..300 {
        {
            let _c = Call::begin("vault_write", None, &who("s1"));
            write(&s.root, "n.md", &format!("round {round}\n"));
        }
        s.history.inner.settle();
        let newest = reader.list(&Filter::default(), 0, 1).unwrap().0;
        let diff = reader.diff(&newest[0], 10_000);
        assert!(
            diff.as_ref()
                .is_ok_and(|(d, _)| d.contains(&format!("+round {round}"))),
            "round {round}: {diff:?}"
        );
    }
}
