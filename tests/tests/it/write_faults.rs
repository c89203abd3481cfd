//! Every vault write (and the bridge's and vibe's) with a fault at each of
//! its file-system steps in turn, in process: the step fails (no space,
//! permission denied, an I/O error) or the call dies there (a panic that
//! skips kura's own clean-up, then a fresh start on the same folders, as
//! after a kill). After each run the folders hold, byte for byte and
//! folder for folder, what they held before the call or what the call
//! without a fault leaves — never a mix, never a file of someone else's
//! lost. Two differences are allowed, each an empty folder and both
//! documented (docs/decisions.md): an emptied folder whose removal failed
//! stays, and a write killed between making a folder and writing into it
//! leaves that folder.

#![allow(clippy::disallowed_methods)] // the harness reads the folders with std::fs

use std::collections::BTreeMap;
use std::panic::AssertUnwindSafe;
use std::path::PathBuf;

use kura::app::App;
use kura::config::Config;
use kura::fault::{self, Fault, Plan};
use serde_json::{Value, json};

/// One write, on a fresh copy of the fixtures (after `before`, a call
/// made without a fault, when it has one).
struct Case {
    tool: &'static str,
    args: Value,
    before: Option<(&'static str, Value)>,
}

fn cases() -> Vec<Case> {
    let c = |tool, args| Case {
        tool,
        args,
        before: None,
    };
    // An undo puts files back through the same steps a write takes: a
    // move with its link rewrites undone, and a vibe task's status.
    let undo = |tool, before: &'static str, args: Value| Case {
        tool,
        args: json!({"session": "current"}),
        before: Some((before, args)),
    };
    vec![
        undo(
            "vault_undo",
            "vault_move",
            json!({"from": "research/backup-guide.md", "to": "guides/Backup Guide.md"}),
        ),
        undo(
            "undo",
            "update_task_status",
            json!({"project": "webapp", "task": "001", "status": "done"}),
        ),
        c(
            "vault_create",
            json!({"path": "new/deep/idea.md", "content": "# Idea\n"}),
        ),
        c(
            "vault_write",
            json!({"path": "notes/welcome.md", "content": "over", "mode": "overwrite"}),
        ),
        c(
            "vault_write",
            json!({"path": "daily/2026-01-05.md", "content": "\n- more", "mode": "append"}),
        ),
        c(
            "vault_replace",
            json!({"path": "research/backup-guide.md", "find": "backup", "replace": "copy", "max_replacements": 0}),
        ),
        c(
            "vault_edit",
            json!({"path": "notes/links.md", "heading": "Links", "mode": "append", "content": "- x"}),
        ),
        c(
            "vault_move",
            json!({"from": "research/backup-guide.md", "to": "guides/Backup Guide.md"}),
        ),
        c(
            "vault_move",
            json!({"from": "research", "to": "archive/2025 research"}),
        ),
        c(
            "vault_move",
            json!({"from": "img/diagram.png", "to": "media/diagram.png"}),
        ),
        c("vault_delete", json!({"path": "research/backup-draft.md"})),
        c(
            "bridge_copy_section",
            json!({"from_ref": {"manual_id": "vue-docs-ja", "path": "guide/essentials/computed.md", "start_line": 1}, "to_path": "notes/computed.md", "mode": "overwrite"}),
        ),
        c(
            "create_task",
            json!({"project": "webapp", "title": "Fault drill", "objective": "o", "steps": [], "acceptance_criteria": []}),
        ),
        c(
            "update_task_status",
            json!({"project": "webapp", "task": "001", "status": "done"}),
        ),
    ]
}

/// The fixtures a case runs on: the demo vault with notes linking in every
/// form (so moves rewrite), an attachment, the manuals and vibe.
struct Folders {
    dir: tempfile::TempDir,
}

impl Folders {
    fn new() -> Folders {
        let dir = kura_tests::scratch::folder();
        let ws = kura_tests::workspace();
        kura_tests::copy_tree(&ws.join("fixtures/demo/vault"), &dir.path().join("vault"));
        kura_tests::copy_tree(&ws.join("fixtures/manuals"), &dir.path().join("manuals"));
        kura_tests::copy_tree(&ws.join("fixtures/demo/vibe"), &dir.path().join("vibe"));
        let f = Folders { dir };
        f.write(
            "notes/links.md",
            "# Links\n[[backup-guide]] and [[backup-guide#Restore|the drills]] and ![[diagram.png]].\n\
             [draft](../research/backup-draft.md \"research/backup-draft.md\") and [guide](<../research/backup-guide.md>).\n\
             [top](/research/backup-summary.md) [esc](../research/backup\\-guide.md)\n",
        );
        f.write(
            "daily/2026-01-06.md",
            "- read [[backup-guide]] and [[research/backup-draft|the draft]]\n",
        );
        f.write("img/diagram.png", "not really a picture");
        // An empty folder inside a folder that moves moves with it.
        std::fs::create_dir_all(f.vault().join("research/drafts/old")).unwrap();
        f
    }

    fn vault(&self) -> PathBuf {
        self.dir.path().join("vault")
    }

    fn write(&self, rel: &str, text: &str) {
        let p = self.vault().join(rel);
        std::fs::create_dir_all(p.parent().unwrap()).unwrap();
        std::fs::write(p, text).unwrap();
    }

    fn config(&self) -> Config {
        Config {
            vault_root: Some(self.vault()),
            manuals_root: Some(self.dir.path().join("manuals")),
            vibe_root: Some(self.dir.path().join("vibe")),
            state_dir: Some(self.state()),
            ..Config::default()
        }
    }

    /// Each run's own: one shared by the hundreds of runs of a sweep grew
    /// to thousands of entries that every start read again (a sweep's
    /// time grew with the square of its runs).
    fn state(&self) -> PathBuf {
        self.dir.path().join("state")
    }

    /// A start on this run's state folder, given the default components
    /// compiled once for the process.
    fn start(&self) -> App {
        if !self.state().join("components").exists() {
            kura_tests::give_compiled_defaults(&self.state());
        }
        App::start(self.config(), kura::CATALOG).expect("kura starts")
    }

    /// A start, and the case's call before, if it has one.
    fn ready(&self, case: &Case) -> App {
        let app = self.start();
        if let Some((tool, args)) = &case.before {
            app.call(tool, args.as_object())
                .expect("served")
                .unwrap_or_else(|e| panic!("{tool} before the case: {}", e.message));
        }
        app
    }

    /// Every file of the writable roots, byte for byte, and every folder
    /// (a key ending in `/`); kura's temporary files aside: a crash may
    /// leave one, and the next start sweeps it.
    fn snapshot(&self) -> BTreeMap<String, Vec<u8>> {
        let mut out = BTreeMap::new();
        for root in ["vault", "vibe"] {
            let base = self.dir.path().join(root);
            let mut stack = vec![base.clone()];
            while let Some(dir) = stack.pop() {
                for e in std::fs::read_dir(&dir).unwrap() {
                    let e = e.unwrap();
                    let name = e.file_name().into_string().unwrap();
                    let rel = e.path().strip_prefix(&base).unwrap().display().to_string();
                    if e.file_type().unwrap().is_dir() {
                        out.insert(format!("{root}/{rel}/"), Vec::new());
                        stack.push(e.path());
                    } else if !kura::fs::is_temp_name(&name) {
                        out.insert(format!("{root}/{rel}"), std::fs::read(e.path()).unwrap());
                    }
                }
            }
        }
        out
    }

    /// The move journals left in the state folder (locks aside).
    fn journals(&self) -> Vec<String> {
        let prefix = kura::vault::journal_prefix(&kura::fs::Root::open(&self.vault()).unwrap());
        std::fs::read_dir(self.state().join("moves"))
            .map(|d| {
                d.map(|e| e.unwrap().file_name().into_string().unwrap())
                    .filter(|n| n.starts_with(&prefix) && !n.ends_with(".lock"))
                    .collect()
            })
            .unwrap_or_default()
    }
}

fn call(app: &App, case: &Case) -> Result<Value, kura::error::Error> {
    app.call(case.tool, case.args.as_object())
        .expect("the tool is served")
}

/// What the case leaves without a fault, and how many steps it makes.
fn clean_run(case: &Case) -> (BTreeMap<String, Vec<u8>>, usize) {
    let f = Folders::new();
    let app = f.ready(case);
    let (r, steps) = fault::with(Plan::default(), || {
        (call(&app, case), fault::steps().unwrap())
    });
    r.unwrap_or_else(|e| panic!("{} without a fault: {}", case.tool, e.message));
    assert!(steps > 0, "{}: no step counted", case.tool);
    (f.snapshot(), steps)
}

/// Whether `now` is `like` but for empty folders that `from` held: the
/// folders an emptying move could not remove (from `before`), or those a
/// killed write made before it wrote into them (from `after`).
fn but_empty_folders(
    now: &BTreeMap<String, Vec<u8>>,
    like: &BTreeMap<String, Vec<u8>>,
    from: &BTreeMap<String, Vec<u8>>,
) -> bool {
    let extra: Vec<&String> = now.keys().filter(|k| !like.contains_key(*k)).collect();
    like.iter().all(|(k, v)| now.get(k) == Some(v))
        && extra.iter().all(|k| {
            k.ends_with('/')
                && from.contains_key(*k)
                && now
                    .keys()
                    .all(|n| !n.starts_with(k.as_str()) || n.ends_with('/'))
        })
}

/// Whether a refusal is a clear error of the SPEC's codes: the file
/// system's (with its reason), or the write's own.
fn clear(e: &kura::error::Error) -> bool {
    use kura::error::{Code, VibeCode};
    matches!(
        e.code,
        Code::FilesystemError
            | Code::Conflict
            | Code::Vibe(VibeCode::FilesystemError | VibeCode::Conflict | VibeCode::FileExists)
    )
}

#[test]
fn a_failed_step_leaves_every_write_undone() {
    let (mut faults, mut harmless) = (0, 0);
    // Every step of every write fails once per seed; which error it fails
    // with is the seed's draw. The error only names the reason in the
    // message (fs::Error's reason), the clean-up is the same for each, so
    // one seed reaches every state and `just soak` the other errors.
    let runs: Vec<_> = cases()
        .into_iter()
        .map(|case| (clean_run(&case), case))
        .collect();
    for mut seed in kura_tests::soak::each() {
        for ((after, steps), case) in &runs {
            let steps = *steps;
            for at in 1..=steps {
                let errno = *seed
                    .rng
                    .choice(&[libc::ENOSPC, libc::EACCES, libc::EIO])
                    .unwrap();
                // A fresh start each time: the call makes the very steps
                // the clean run counted (a server's first write to its
                // state folder among them), and step `at` is the one that
                // fails.
                let f = Folders::new();
                let app = f.ready(case);
                let before = f.snapshot();
                let plan = Plan {
                    at: Some((at, Fault::Fail(errno))),
                    ..Plan::default()
                };
                let r = fault::with(plan, || call(&app, case));
                let what = format!(
                    "{} {} failing step {at}/{steps} ({errno}), {}",
                    case.tool,
                    case.args,
                    seed.again()
                );
                match r {
                    Err(e) => {
                        assert!(clear(&e), "{what}: {e:?}");
                        assert!(
                            f.snapshot() == before,
                            "{what}: left half done: {}",
                            e.message
                        );
                    }
                    // A step whose failure costs nothing (an emptied folder
                    // that stays) lets the write through, whole.
                    Ok(_) => {
                        let now = f.snapshot();
                        assert!(
                            but_empty_folders(&now, after, &before),
                            "{what}: done, but not as without the fault"
                        );
                        harmless += 1;
                        // The failed step may be the journal's removal:
                        // the next start finds every step done, removes
                        // it and changes nothing.
                        drop(f.start());
                        assert!(f.snapshot() == now, "{what}: changed by the restart");
                    }
                }
                assert!(f.journals().is_empty(), "{what}: a journal stayed");
                faults += 1;
            }
        }
    }
    eprintln!(
        "{faults} failed steps injected, {harmless} of them harmless (the write went through whole)"
    );
}

#[test]
fn a_call_that_dies_at_any_step_is_whole_or_undone_after_a_restart() {
    let mut deaths = 0;
    for case in cases() {
        let (after, steps) = clean_run(&case);
        for at in 1..=steps {
            let f = Folders::new();
            let app = f.ready(&case);
            let before = f.snapshot();
            let plan = Plan {
                at: Some((at, Fault::Panic)),
                ..Plan::default()
            };
            let died = std::panic::catch_unwind(AssertUnwindSafe(|| {
                fault::with(plan, || call(&app, &case))
            }))
            .is_err();
            assert!(died, "{} step {at}/{steps}: no death", case.tool);
            // The next start (which finishes or undoes an interrupted
            // move before anything else) on the same folders.
            let again = f.start();
            let now = f.snapshot();
            let what = format!("{} {} dead at step {at}/{steps}", case.tool, case.args);
            assert!(
                now == after || but_empty_folders(&now, &before, &after),
                "{what}: left half done"
            );
            assert!(
                f.journals().is_empty(),
                "{what}: a journal stayed: {:?}",
                f.journals()
            );
            drop(again);
            deaths += 1;
        }
    }
    eprintln!("{deaths} deaths injected");
}

/// The files a case changes, creates or removes (folders aside).
fn touched(before: &BTreeMap<String, Vec<u8>>, after: &BTreeMap<String, Vec<u8>>) -> Vec<String> {
    let mut paths: Vec<String> = before
        .keys()
        .chain(after.keys())
        .filter(|k| !k.ends_with('/') && before.get(*k) != after.get(*k))
        .cloned()
        .collect();
    paths.sort();
    paths.dedup();
    paths
}

#[test]
fn another_program_writing_before_any_step_loses_nothing() {
    // Just before step N of a write, another program saves (atomically,
    // as editors do) every file the write is about to change, create or
    // remove, each with a line of its own. Whatever kura answers, each of
    // those lines is still in the folders — kura either wrote after
    // reading it, or refused and left it — before and after a restart.
    let mut races = 0;
    let mut refused = 0;
    for case in cases() {
        let (after, steps) = clean_run(&case);
        let ready = Folders::new();
        drop(ready.ready(&case));
        let files = touched(&ready.snapshot(), &after);
        for at in 1..=steps {
            let f = Folders::new();
            let app = f.ready(&case);
            let base = f.dir.path().to_path_buf();
            let lines: Vec<(PathBuf, String)> = files
                .iter()
                .map(|p| (base.join(p), format!("\nTHEIRS {p} before step {at}\n")))
                .collect();
            let outside = lines.clone();
            let meddler = fault::Meddler(std::sync::Arc::new(move || {
                for (path, line) in &outside {
                    let mut text = std::fs::read(path).unwrap_or_default();
                    text.extend_from_slice(line.as_bytes());
                    std::fs::create_dir_all(path.parent().unwrap()).unwrap();
                    let tmp = path.with_file_name(".theirs-save");
                    std::fs::write(&tmp, &text).unwrap();
                    std::fs::rename(&tmp, path).unwrap();
                }
            }));
            let plan = Plan {
                meddle: Some((at, meddler)),
                ..Plan::default()
            };
            let r = fault::with(plan, || call(&app, &case));
            let what = format!(
                "{} {} written over before step {at}/{steps}",
                case.tool, case.args
            );
            if let Err(e) = &r {
                assert!(clear(e), "{what}: {e:?}");
                refused += 1;
            }
            let all_kept = |moment: &str| {
                let all: Vec<Vec<u8>> = f.snapshot().into_values().collect();
                for (_, line) in &lines {
                    let kept = all
                        .iter()
                        .any(|text| text.windows(line.len()).any(|w| w == line.as_bytes()));
                    assert!(kept, "{what}: {moment}, their {line:?} is lost ({r:?})");
                }
            };
            all_kept("after the call");
            drop(app);
            drop(f.start());
            all_kept("after a restart");
            races += 1;
        }
    }
    eprintln!("{races} outside writes, one before each step; {refused} calls refused");
}

#[test]
fn a_finished_move_whose_journal_stayed_is_never_undone_later() {
    let case = Case {
        tool: "vault_move",
        args: json!({"from": "research/backup-guide.md", "to": "guides/Backup Guide.md"}),
        before: None,
    };
    let (after, steps) = clean_run(&case);
    // The journal's removal is the move's last step (the history's record
    // of the call follows it): failing, the move is whole and its journal
    // stays.
    let (f, app) = (1..=steps)
        .rev()
        .find_map(|at| {
            let f = Folders::new();
            let app = f.start();
            let plan = Plan {
                at: Some((at, Fault::Fail(libc::EIO))),
                ..Plan::default()
            };
            let whole = fault::with(plan, || call(&app, &case)).is_ok();
            (whole && f.journals().len() == 1).then_some((f, app))
        })
        .expect("a failed removal of the journal leaves the move whole");
    assert!(f.snapshot() == after);
    // Before the next start, the person edits a note the move relinked:
    // the journal can be neither finished nor undone as written, and the
    // start must not undo the rename and leave the links pointing at it.
    let links = f.vault().join("notes/links.md");
    let mut text = std::fs::read_to_string(&links).unwrap();
    text.push_str("\nmine, written after the move\n");
    std::fs::write(&links, &text).unwrap();
    let edited = f.snapshot();
    drop(app);
    drop(f.start());
    assert!(
        f.snapshot() == edited,
        "the restart undid part of a finished move"
    );
}

/// The move of the backup guide, which rewrites `notes/links.md`.
fn backup_guide_move() -> Case {
    Case {
        tool: "vault_move",
        args: json!({"from": "research/backup-guide.md", "to": "guides/Backup Guide.md"}),
        before: None,
    }
}

#[test]
fn an_undone_move_whose_journal_stayed_is_never_carried_out_later() {
    let case = backup_guide_move();
    let (_, steps) = clean_run(&case);
    let links = "notes/links.md";
    // Another program edits the note the move relinks, just before one of
    // its steps: the move stops and undoes what it did; and the removal of
    // its journal, the last step of that call, fails.
    let meddler = |f: &Folders| {
        let path = f.vault().join(links);
        fault::Meddler(std::sync::Arc::new(move || {
            let mut text = std::fs::read_to_string(&path).unwrap();
            text.push_str("\nan edit of another program\n");
            std::fs::write(&path, text).unwrap();
        }))
    };
    let undone = (1..=steps).find_map(|m| {
        let f = Folders::new();
        let app = f.start();
        let plan = Plan {
            meddle: Some((m, meddler(&f))),
            ..Plan::default()
        };
        let (r, n) = fault::with(plan, || (call(&app, &case), fault::steps().unwrap()));
        r.is_err().then_some((m, n))
    });
    let (m, n) = undone.expect("an outside edit before some step makes the move undo itself");
    let (f, app, original) = (1..=n)
        .rev()
        .find_map(|at| {
            let f = Folders::new();
            let original = std::fs::read_to_string(f.vault().join(links)).unwrap();
            let app = f.start();
            let plan = Plan {
                meddle: Some((m, meddler(&f))),
                at: Some((at, Fault::Fail(libc::EIO))),
                ..Plan::default()
            };
            let r = fault::with(plan, || call(&app, &case));
            (r.is_err() && f.journals().len() == 1).then_some((f, app, original))
        })
        .expect("a failed removal of an undone move's journal leaves it");
    assert!(f.vault().join("research/backup-guide.md").exists());
    // The person takes their edit back (as an editor's undo would): the
    // vault is as before the call, which said nothing was moved.
    std::fs::write(f.vault().join(links), original).unwrap();
    let told = f.snapshot();
    drop(app);
    drop(f.start());
    assert!(
        f.snapshot() == told,
        "the restart carried out a move the caller was told never happened"
    );
    assert!(f.journals().is_empty(), "{:?}", f.journals());
}

#[test]
fn a_journal_a_dead_kura_left_is_settled_by_the_next_move_of_one_still_running() {
    let case = backup_guide_move();
    let (after, steps) = clean_run(&case);
    // While one kura runs, a second on the same vault dies half-way
    // through the move.
    let (f, running) = (2..steps)
        .find_map(|at| {
            let f = Folders::new();
            let before = f.snapshot();
            let running = f.start();
            let other = f.start();
            let plan = Plan {
                at: Some((at, Fault::Panic)),
                ..Plan::default()
            };
            let died = std::panic::catch_unwind(AssertUnwindSafe(|| {
                fault::with(plan, || call(&other, &case))
            }))
            .is_err();
            let half = f.snapshot();
            (died && f.journals().len() == 1 && half != before && half != after)
                .then_some((f, running))
        })
        .expect("a death that leaves the move half done");
    // The kura still running moves another note: first it settles what
    // the dead one left.
    let other = json!({"from": "notes/long-journal.md", "to": "notes/journal.md"});
    running
        .call("vault_move", other.as_object())
        .expect("served")
        .unwrap_or_else(|e| panic!("the second move: {}", e.message));
    assert!(f.journals().is_empty(), "{:?}", f.journals());
    let settled = f.vault().join("research/backup-guide.md").exists()
        != f.vault().join("guides/Backup Guide.md").exists();
    assert!(settled, "the first move is neither whole nor undone");
}

#[test]
fn a_move_blocked_by_a_read_only_note_changes_nothing() {
    let f = Folders::new();
    let app = f.start();
    let ro = f.vault().join("daily/2026-01-06.md");
    let mut perm = std::fs::metadata(&ro).unwrap().permissions();
    std::os::unix::fs::PermissionsExt::set_mode(&mut perm, 0o444);
    std::fs::set_permissions(&ro, perm).unwrap();
    let before = f.snapshot();
    let case = Case {
        tool: "vault_move",
        args: json!({"from": "research/backup-guide.md", "to": "guides/Backup Guide.md"}),
        before: None,
    };
    let e = call(&app, &case).unwrap_err();
    assert!(e.message.contains("daily/2026-01-06.md"), "{}", e.message);
    assert!(
        f.snapshot() == before,
        "the other linking notes were rewritten"
    );
    assert!(f.journals().is_empty());
    // And a restart has nothing to retry.
    drop(f.start());
    assert!(f.snapshot() == before);
}

/// Run `case` with an EIO at each of its `steps` in turn; of each call
/// that fails, the step and what the folders hold beyond, or short of,
/// what they held before (empty when nothing is left behind).
fn failures_leave(case: &Case, steps: usize) -> Vec<(usize, Vec<String>)> {
    let mut out = Vec::new();
    for at in 1..=steps {
        let f = Folders::new();
        let app = f.start();
        let before = f.snapshot();
        let plan = Plan {
            at: Some((at, Fault::Fail(libc::EIO))),
            ..Plan::default()
        };
        if fault::with(plan, || call(&app, case)).is_err() {
            let now = f.snapshot();
            let diff = before
                .keys()
                .chain(now.keys())
                .filter(|k| before.get(*k) != now.get(*k))
                .cloned()
                .collect();
            out.push((at, diff));
        }
    }
    out
}

#[test]
fn a_failed_write_leaves_no_folder_it_made() {
    let case = Case {
        tool: "vault_create",
        args: json!({"path": "new/deep/idea.md", "content": "# Idea\n"}),
        before: None,
    };
    let (_, steps) = clean_run(&case);
    let failed = failures_leave(&case, steps);
    for (at, diff) in &failed {
        assert!(diff.is_empty(), "failing step {at}/{steps} left {diff:?}");
    }
    // Steps 1 and 2 make `new/` and `new/deep/`; a later failure finds
    // them made.
    assert!(
        failed.iter().any(|(at, _)| *at > 2),
        "no failure after the folders were made"
    );
}

#[test]
fn a_folder_move_carries_its_empty_folders_and_an_undone_one_leaves_no_destination() {
    let case = Case {
        tool: "vault_move",
        args: json!({"from": "research", "to": "archive/2025 research"}),
        before: None,
    };
    let (after, steps) = clean_run(&case);
    assert!(after.contains_key("vault/archive/2025 research/drafts/old/"));
    assert!(!after.keys().any(|k| k.starts_with("vault/research/")));
    // Every failure is undone, the folders it made taken away with it.
    let failed = failures_leave(&case, steps);
    for (at, diff) in &failed {
        assert!(diff.is_empty(), "failing step {at}/{steps} left {diff:?}");
    }
    assert!(!failed.is_empty());
    // And vault_undo of the whole move gives back the empty folders too.
    let f = Folders::new();
    let app = f.start();
    let before = f.snapshot();
    call(&app, &case).unwrap();
    app.call("vault_undo", json!({"session": "current"}).as_object())
        .expect("served")
        .unwrap_or_else(|e| panic!("vault_undo: {}", e.message));
    let now = f.snapshot();
    let diff: Vec<&String> = before
        .keys()
        .chain(now.keys())
        .filter(|k| before.get(*k) != now.get(*k))
        .collect();
    assert!(now == before, "vault_undo left {diff:?}");
}
