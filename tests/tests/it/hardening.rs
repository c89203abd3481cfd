//! Faults, load and hostile input (see SECURITY.md): bounded memory on huge
//! files and queries, writes that cannot be redirected, keep permissions and
//! leave nothing behind, a watcher that stays inside the roots, clear
//! errors, and an answer to every JSON-RPC line. Each test is named after
//! the promise it defends.

use std::io::{BufRead, BufReader, Write};
use std::os::unix::fs::PermissionsExt;
use std::path::Path;
use std::process::Stdio;
use std::sync::Arc;
use std::sync::atomic::{AtomicBool, AtomicU64, Ordering};
use std::time::{Duration, Instant};

use kura_tests::{Fixture, command, kura_bin};
use serde_json::{Value, json};

/// A process's peak resident memory so far, in KiB (VmHWM).
fn peak_kib(pid: u32) -> u64 {
    let status = std::fs::read_to_string(format!("/proc/{pid}/status")).unwrap();
    status
        .lines()
        .find_map(|l| l.strip_prefix("VmHWM:"))
        .and_then(|v| v.trim().trim_end_matches("kB").trim().parse().ok())
        .expect("VmHWM in /proc/PID/status")
}

/// A sparse file of `len` NUL bytes: one line of valid UTF-8 text that
/// takes no disk space.
fn sparse(path: &Path, len: u64) {
    std::fs::create_dir_all(path.parent().unwrap()).unwrap();
    std::fs::File::create(path).unwrap().set_len(len).unwrap();
}

const GIB: u64 = 1 << 30;
/// What a call on a huge file may add to the server's peak memory.
const BOUND_KIB: u64 = 50 * 1024;

#[tokio::test]
async fn a_one_gib_line_is_read_scanned_and_searched_in_bounded_memory() {
    let f = Fixture::new();
    // `.log`: read and searched by the vault tools, not indexed.
    sparse(&f.vault().join("huge/one-line.log"), GIB);
    sparse(&f.manuals().join("huge/one-line.md"), GIB / 8);
    let k = f.start_with_manuals(&[]).await;
    // Let the start-up indexing settle so its peak is in the baseline.
    k.call("vault_find", json!({"query": "rate limit"}))
        .await
        .ok();
    k.call("manual_find", json!({"query": "設定"})).await;
    let pid = k.pid.unwrap();
    let before = peak_kib(pid);

    let r = k
        .call(
            "vault_read",
            json!({"path": "huge/one-line.log", "full": true}),
        )
        .await;
    let body = r.ok();
    assert_eq!(body["returned_chars"], 12_000);
    assert_eq!(body["truncated"], true);
    assert_eq!(body["next_cursor"]["char_offset"], 12_000);

    let far = GIB - 5;
    let r = k
        .call(
            "vault_scan",
            json!({"path": "huge/one-line.log", "cursor": {"char_offset": far}}),
        )
        .await;
    let body = r.ok();
    assert_eq!(body["text"].as_str().unwrap().chars().count(), 5);
    assert_eq!(body["eof"], true);

    let r = k
        .call(
            "vault_search",
            json!({"query": "needle", "mode": "plain", "relative_dir": "huge"}),
        )
        .await;
    assert_eq!(r.ok()["results"], json!([]));

    let r = k
        .call(
            "manual_scan",
            json!({"manual_id": "huge", "path": "one-line.md"}),
        )
        .await;
    assert_eq!(r.ok()["truncated"], true);

    let grew = peak_kib(pid).saturating_sub(before);
    eprintln!("peak RSS {before} KiB after start-up, grew by {grew} KiB");
    assert!(
        grew < BOUND_KIB,
        "reading a 1 GiB line raised the peak by {grew} KiB"
    );
}

#[tokio::test]
async fn whole_file_tools_refuse_files_over_max_file_bytes() {
    let f = Fixture::new();
    f.write("big.md", &"x".repeat(8192));
    let k = f
        .start_with_manuals(&["--set", "max_file_bytes=4096"])
        .await;
    for (tool, args) in [
        (
            "artifact_audit",
            json!({"artifact_path": "big.md", "source_path": "big.md"}),
        ),
        (
            "vault_write",
            json!({"path": "big.md", "content": "y", "mode": "append"}),
        ),
        (
            "vault_create",
            json!({"path": "new.md", "content": "z".repeat(5000)}),
        ),
    ] {
        let r = k.call(tool, args).await;
        assert_eq!(r.code(), "invalid_parameter", "{tool}: {}", r.body);
        assert!(
            r.text.contains("4096"),
            "{tool} names the limit: {}",
            r.text
        );
    }
    // Streamed reads still work on it.
    let r = k
        .call("vault_read", json!({"path": "big.md", "full": true}))
        .await;
    assert_eq!(r.ok()["returned_chars"], 8192);
}

#[tokio::test]
async fn a_ten_megabyte_query_is_refused_before_any_work() {
    let f = Fixture::new();
    let k = f.start_with_manuals(&[]).await;
    // 10 MB, under the 16 MiB line limit: it reaches the tools.
    let huge = "x".repeat(10 << 20);
    for (tool, args) in [
        ("vault_find", json!({"query": huge})),
        ("manual_find", json!({"query": huge})),
        ("vault_search", json!({"query": huge, "mode": "plain"})),
        ("vault_search", json!({"query": huge, "mode": "regex"})),
        ("vault_read", json!({"path": huge, "full": true})),
    ] {
        let t = Instant::now();
        let r = k.call(tool, args).await;
        assert!(r.is_error, "{tool}");
        assert!(
            ["invalid_parameter", "invalid_path"].contains(&r.code()),
            "{tool}: {}",
            r.body
        );
        // Nothing of the input comes back.
        assert!(r.body.to_string().len() < 1000, "{tool} echoed its input");
        eprintln!("{tool}: refused in {:?}", t.elapsed());
    }
    let r = k
        .call("vault_find", json!({"query": "x".repeat(1001)}))
        .await;
    assert_eq!(r.body["error"]["details"]["limit"], 1000);
}

/// Exchange two names atomically (renameat2 RENAME_EXCHANGE).
fn exchange(a: &Path, b: &Path) -> bool {
    use std::os::unix::ffi::OsStrExt;
    let a = std::ffi::CString::new(a.as_os_str().as_bytes()).unwrap();
    let b = std::ffi::CString::new(b.as_os_str().as_bytes()).unwrap();
    // SAFETY: two valid NUL-terminated paths.
    unsafe {
        libc::renameat2(
            libc::AT_FDCWD,
            a.as_ptr(),
            libc::AT_FDCWD,
            b.as_ptr(),
            libc::RENAME_EXCHANGE,
        ) == 0
    }
}

#[tokio::test]
async fn swap_race_cannot_redirect_a_write() {
    let f = Fixture::new();
    // At the vault's top, so the links need no `..`: `sw -> daily`.
    let notes = f.vault();
    std::fs::create_dir_all(notes.join("sw")).unwrap();
    std::os::unix::fs::symlink("daily", notes.join("sw-link")).unwrap();
    std::os::unix::fs::symlink(".system", notes.join("sys-link")).unwrap();
    std::fs::create_dir_all(f.vault().join(".system")).unwrap();
    let names = |dir: &str| -> Vec<std::ffi::OsString> {
        let mut v: Vec<_> = std::fs::read_dir(f.vault().join(dir))
            .unwrap()
            .map(|e| e.unwrap().file_name())
            .collect();
        v.sort();
        v
    };
    let (daily_before, system_before) = (names("daily"), names(".system"));
    let k = f.start().await;

    // The racer: `sw` is a folder, then a link to daily/, then to
    // .system/, as fast as the kernel allows.
    let stop = Arc::new(AtomicBool::new(false));
    let swaps = Arc::new(AtomicU64::new(0));
    let racer = {
        let (stop, swaps, notes) = (stop.clone(), swaps.clone(), notes.clone());
        std::thread::spawn(move || {
            let sw = notes.join("sw");
            while !stop.load(Ordering::Relaxed) {
                for link in ["sw-link", "sys-link"] {
                    if exchange(&sw, &notes.join(link)) {
                        swaps.fetch_add(1, Ordering::Relaxed);
                    }
                    if exchange(&sw, &notes.join(link)) {
                        swaps.fetch_add(1, Ordering::Relaxed);
                    }
                }
            }
        })
    };
    let (mut written, mut refused) = (0, 0);
    for i in 0..1500 {
        let name = format!("2026-01-{:02}.md", i % 28 + 1);
        let (tool, args) = match i % 3 {
            0 => (
                "vault_write",
                json!({"path": format!("sw/{name}"), "content": "redirected?", "mode": "overwrite"}),
            ),
            1 => (
                "vault_create",
                json!({"path": format!("sw/{i}-{name}"), "content": "redirected?"}),
            ),
            _ => (
                "vault_write",
                json!({"path": "sw/policy.md", "content": "redirected?\n", "mode": "append"}),
            ),
        };
        let r = k.call(tool, args).await;
        if r.is_error {
            assert!(
                ["forbidden", "not_found", "conflict"].contains(&r.code()),
                "{}",
                r.body
            );
            refused += 1;
        } else {
            written += 1;
        }
    }
    stop.store(true, Ordering::Relaxed);
    racer.join().unwrap();
    let swaps = swaps.load(Ordering::Relaxed);
    eprintln!("racer: {swaps} swaps; {written} writes landed, {refused} refused");
    assert!(swaps > 1000, "the racer ran ({swaps} swaps)");
    assert!(written > 0, "some writes landed in the real folder");

    // Nothing reached the protected folders through the links.
    assert_eq!(
        names("daily"),
        daily_before,
        "a write was redirected into daily/"
    );
    assert_eq!(
        names(".system"),
        system_before,
        "a write was redirected into .system/"
    );
    f.assert_canary_untouched();
}

#[tokio::test]
async fn writes_keep_the_file_mode() {
    let f = Fixture::new();
    f.write("private.md", "secret\n");
    let path = f.vault().join("private.md");
    std::fs::set_permissions(&path, std::fs::Permissions::from_mode(0o600)).unwrap();
    let k = f.start().await;
    for (tool, args) in [
        (
            "vault_write",
            json!({"path": "private.md", "content": "more\n", "mode": "append"}),
        ),
        (
            "vault_replace",
            json!({"path": "private.md", "find": "more", "replace": "less"}),
        ),
        (
            "vault_write",
            json!({"path": "private.md", "content": "new\n", "mode": "overwrite"}),
        ),
    ] {
        k.call(tool, args).await.ok();
        let mode = std::fs::metadata(&path).unwrap().permissions().mode() & 0o7777;
        assert_eq!(mode, 0o600, "{tool} changed the mode to {mode:o}");
    }
}

#[tokio::test]
async fn read_only_files_stay_read_only() {
    let f = Fixture::new();
    f.write("frozen.md", "keep\n");
    let path = f.vault().join("frozen.md");
    std::fs::set_permissions(&path, std::fs::Permissions::from_mode(0o444)).unwrap();
    let k = f.start().await;
    let r = k
        .call(
            "vault_write",
            json!({"path": "frozen.md", "content": "x", "mode": "append"}),
        )
        .await;
    assert_eq!(r.code(), "forbidden");
    assert!(r.text.contains("read-only"), "{}", r.text);
    assert_eq!(f.read("frozen.md"), "keep\n");
    let mode = std::fs::metadata(&path).unwrap().permissions().mode() & 0o7777;
    assert_eq!(mode, 0o444);
}

#[tokio::test]
async fn a_240_byte_name_can_be_created_and_appended() {
    let f = Fixture::new();
    let k = f.start().await;
    let name = format!("notes/{}.md", "a".repeat(237));
    k.call("vault_create", json!({"path": name, "content": "one\n"}))
        .await
        .ok();
    k.call(
        "vault_write",
        json!({"path": name, "content": "two\n", "mode": "append"}),
    )
    .await
    .ok();
    assert_eq!(f.read(&name), "one\ntwo\n");
}

#[tokio::test]
async fn a_name_too_long_is_a_filesystem_error_with_its_reason() {
    let f = Fixture::new();
    let k = f.start().await;
    let r = k
        .call(
            "vault_create",
            json!({"path": format!("notes/{}.md", "a".repeat(300)), "content": "x"}),
        )
        .await;
    assert_eq!(r.code(), "filesystem_error", "{}", r.body);
    assert_eq!(r.body["error"]["details"]["reason"], "name_too_long");
}

#[tokio::test]
async fn a_link_loop_is_a_filesystem_error_with_its_reason() {
    let f = Fixture::new();
    std::os::unix::fs::symlink("loop-b", f.vault().join("loop-a")).unwrap();
    std::os::unix::fs::symlink("loop-a", f.vault().join("loop-b")).unwrap();
    let k = f.start().await;
    let r = k
        .call("vault_read", json!({"path": "loop-a/x.md", "full": true}))
        .await;
    assert_eq!(r.code(), "filesystem_error", "{}", r.body);
    assert_eq!(r.body["error"]["details"]["reason"], "link_loop");
}

/// Temporary files as a killed writer leaves them: the current naming and
/// that of earlier versions, under a process id that no longer runs, and
/// under one that runs again (ids are reused: this test's own stands for
/// a new process that took a killed writer's id).
fn plant_debris(vault: &Path) -> Vec<std::path::PathBuf> {
    let mut dead = std::process::Command::new("true").spawn().unwrap();
    let pid = dead.id();
    dead.wait().unwrap();
    let reused = std::process::id();
    let files = vec![
        vault.join(format!("notes/.kura-tmp-{pid:x}-0")),
        vault.join(format!("daily/.2026-01-05.md.kura-tmp-{pid}-3")),
        vault.join(format!("notes/.kura-tmp-{reused:x}-7")),
    ];
    for p in &files {
        std::fs::write(p, "DEBRIS-TEXT half a write").unwrap();
    }
    files
}

#[tokio::test]
async fn kill_9_debris_is_never_listed_and_swept_on_restart() {
    let f = Fixture::new();
    f.write("notes/log.md", "");
    let debris = plant_debris(&f.vault());
    // A write in progress (this test's, holding its folder's lock as every
    // writer does) keeps its temporary file.
    let live = f.vault().join("projects/.kura-tmp-1-9");
    std::fs::write(&live, "in progress").unwrap();
    let writing = std::fs::File::open(f.vault().join("projects")).unwrap();
    writing.lock().unwrap();

    // A real crash mid-write: a server appending large blocks, killed.
    let k = f.start().await;
    let pid = k.pid.unwrap();
    let block = "x".repeat(1 << 20);
    // The writer says when an append has answered; the third is sent at once.
    let (landed, mut answers) = tokio::sync::mpsc::unbounded_channel();
    let writer = async {
        for _ in 0..50 {
            let _ = k
                .raw(
                    "vault_write",
                    json!({"path": "notes/log.md", "content": block, "mode": "append"}),
                )
                .await;
            let _ = landed.send(());
        }
    };
    let killer = async {
        // Once two appends have answered, the next one is under way.
        for _ in 0..2 {
            tokio::time::timeout(Duration::from_secs(30), answers.recv())
                .await
                .expect("no append answered");
        }
        // SAFETY: signalling the server this test started.
        unsafe { libc::kill(pid as i32, libc::SIGKILL) };
    };
    tokio::join!(writer, killer);
    drop(k);

    let k = f.start().await;
    // Never listed nor searched, whoever left them.
    let ls = k.call("vault_ls", json!({"path": "notes"})).await;
    assert!(!ls.ok().to_string().contains("kura-tmp"), "{}", ls.body);
    let found = k
        .call(
            "vault_search",
            json!({"query": "DEBRIS-TEXT", "mode": "plain"}),
        )
        .await;
    assert_eq!(found.ok()["results"], json!([]));
    // The start-up sweep removes the stale ones, and only those.
    let mut left = Vec::new();
    for _ in 0..100 {
        left = walk_temp_files(&f.vault());
        if left == [live.clone()] {
            break;
        }
        tokio::time::sleep(Duration::from_millis(50)).await;
    }
    assert_eq!(left, [live], "stale temporary files remain ({debris:?})");
    drop(writing);
    f.assert_canary_untouched();
}

fn walk_temp_files(dir: &Path) -> Vec<std::path::PathBuf> {
    let mut out = Vec::new();
    for e in std::fs::read_dir(dir).unwrap().flatten() {
        let ft = e.file_type().unwrap();
        if ft.is_dir() {
            out.extend(walk_temp_files(&e.path()));
        } else if e.file_name().to_string_lossy().contains("kura-tmp") {
            out.push(e.path());
        }
    }
    out.sort();
    out
}

/// Inotify watches a process holds, from /proc/PID/fdinfo.
fn inotify_watches(pid: u32) -> usize {
    let mut n = 0;
    for e in std::fs::read_dir(format!("/proc/{pid}/fdinfo"))
        .unwrap()
        .flatten()
    {
        if let Ok(text) = std::fs::read_to_string(e.path()) {
            n += text
                .lines()
                .filter(|l| l.starts_with("inotify wd:"))
                .count();
        }
    }
    n
}

#[tokio::test]
async fn the_watcher_does_not_follow_links_out_of_the_root() {
    let f = Fixture::new();
    let vault_dirs = walk_dirs(&f.vault());
    // A big tree outside the vault, reached through a link.
    let outside_tree = f.outside().join("tree");
    for i in 0..300 {
        std::fs::create_dir_all(outside_tree.join(format!("d{i}/e"))).unwrap();
    }
    std::os::unix::fs::symlink(&outside_tree, f.vault().join("tree-link")).unwrap();
    let k = f.start().await;
    k.call("vault_find", json!({"query": "rate limit"}))
        .await
        .ok();
    let pid = k.pid.unwrap();
    let mut watches = 0;
    for _ in 0..40 {
        watches = inotify_watches(pid);
        if watches >= vault_dirs {
            break;
        }
        tokio::time::sleep(Duration::from_millis(50)).await;
    }
    assert!(watches >= 1, "the vault is watched");
    assert!(
        watches < vault_dirs + 50,
        "{watches} watches for a vault of {vault_dirs} folders: the link was followed"
    );
    std::fs::remove_dir_all(&outside_tree).unwrap();
}

fn walk_dirs(dir: &Path) -> usize {
    1 + std::fs::read_dir(dir)
        .unwrap()
        .flatten()
        .filter(|e| e.file_type().unwrap().is_dir())
        .map(|e| walk_dirs(&e.path()))
        .sum::<usize>()
}

/// `kura serve` with these arguments must refuse to start: its one error line.
fn refused_start(args: &[String]) -> String {
    let out = std::process::Command::new(kura_bin())
        .args(args)
        .env("HOME", std::env::temp_dir().join("kura-e2e-no-home"))
        .stdin(Stdio::null())
        .output()
        .unwrap();
    assert!(!out.status.success(), "kura started");
    let err = String::from_utf8_lossy(&out.stderr).into_owned();
    let lines: Vec<&str> = err.lines().filter(|l| !l.trim().is_empty()).collect();
    assert_eq!(lines.len(), 1, "one line, got: {err}");
    lines[0].to_owned()
}

#[tokio::test]
async fn a_state_folder_inside_a_root_is_refused_at_start() {
    let f = Fixture::new();
    let inside = f.vault().join(".state").display().to_string();
    let mut args = f.args(&[]);
    let at = args.iter().position(|a| a == "--state-dir").unwrap();
    args[at + 1] = inside;
    let line = refused_start(&args);
    assert!(line.contains("inside VAULT_ROOT"), "{line}");
    assert!(!f.vault().join(".state").exists(), "nothing was created");

    // The usual case: the cache folder under a vault that is $HOME.
    let mut args = f.args(&[]);
    args.remove(at);
    args.remove(at);
    let out = command(&args)
        .env("XDG_CACHE_HOME", f.vault().join(".cache"))
        .stdin(Stdio::null())
        .output()
        .await
        .unwrap();
    assert!(!out.status.success());
    assert!(String::from_utf8_lossy(&out.stderr).contains("inside VAULT_ROOT"));
}

#[tokio::test]
async fn a_state_folder_others_can_write_is_refused_at_start() {
    use std::os::unix::fs::PermissionsExt as _;
    let f = Fixture::new();
    let state = f.dir.path().join("state");
    std::fs::create_dir_all(&state).unwrap();
    std::fs::set_permissions(&state, std::fs::Permissions::from_mode(0o777)).unwrap();
    // A journal planted there is never replayed: the start stops first.
    let line = refused_start(&f.args(&[]));
    assert!(line.contains("STATE_DIR"), "{line}");
    assert!(line.contains("writable by its group or others"), "{line}");
    assert!(line.contains("chmod go-w"), "{line}");
    std::fs::set_permissions(&state, std::fs::Permissions::from_mode(0o700)).unwrap();
    f.start().await.stop().await;
}

#[tokio::test]
async fn a_text_file_given_as_a_plugin_is_one_line_at_start() {
    let f = Fixture::new();
    let txt = f.dir.path().join("reranker.txt");
    std::fs::write(&txt, "this is not a component\n".repeat(50)).unwrap();
    let spec = format!("reranker={}", txt.display());
    let line = refused_start(&f.args(&["--plugin", &spec]));
    assert!(line.contains("reranker"), "{line}");
}

/// The server's replies to raw lines, in order, until `want` have come.
fn raw_session(lines: &[Vec<u8>], want: usize) -> Vec<Value> {
    let f = Fixture::new();
    let mut child = std::process::Command::new(kura_bin())
        .args(f.args(&[]))
        .env("HOME", std::env::temp_dir().join("kura-e2e-no-home"))
        .stdin(Stdio::piped())
        .stdout(Stdio::piped())
        .stderr(Stdio::null())
        .spawn()
        .unwrap();
    let mut stdin = child.stdin.take().unwrap();
    let out = BufReader::new(child.stdout.take().unwrap());
    let init = json!({"jsonrpc": "2.0", "id": 0, "method": "initialize", "params": {
        "protocolVersion": "2025-06-18", "capabilities": {},
        "clientInfo": {"name": "raw", "version": "1"}}});
    writeln!(stdin, "{init}").unwrap();
    writeln!(
        stdin,
        r#"{{"jsonrpc":"2.0","method":"notifications/initialized"}}"#
    )
    .unwrap();
    for l in lines {
        stdin.write_all(l).unwrap();
        stdin.write_all(b"\n").unwrap();
    }
    stdin.flush().unwrap();
    let mut replies = Vec::new();
    for line in out.lines() {
        let v: Value = serde_json::from_str(&line.unwrap()).unwrap();
        if v["id"] != 0 {
            replies.push(v);
        }
        if replies.len() == want {
            break;
        }
    }
    drop(stdin);
    child.kill().ok();
    child.wait().ok();
    replies
}

#[test]
fn every_json_rpc_line_gets_an_answer() {
    let deep = format!(
        r#"{{"jsonrpc":"2.0","id":1,"method":"tools/call","params":{{"name":"vault_ls","arguments":{}1{}}}}}"#,
        r#"{"a":"#.repeat(200),
        "}".repeat(200)
    );
    let mut oversized = br#"{"jsonrpc":"2.0","id":2,"method":"ping","params":{"x":""#.to_vec();
    oversized.extend(std::iter::repeat_n(b'x', 17 << 20));
    oversized.extend(br#""}}"#);
    let lines: Vec<Vec<u8>> = vec![
        deep.into_bytes(),
        oversized,
        br#"[{"jsonrpc":"2.0","id":3,"method":"ping"}]"#.to_vec(),
        br#"{"jsonrpc":"1.0","id":4,"method":"ping"}"#.to_vec(),
        br#"{"jsonrpc":"2.0","id":5,"method":"ping","params":"x"}"#.to_vec(),
        b"{not json".to_vec(),
        br#"{"jsonrpc":"2.0","id":6,"method":"ping"}"#.to_vec(),
    ];
    let replies = raw_session(&lines, 7);
    // The guard's answers and rmcp's may interleave: compare as a set.
    let mut got: Vec<String> = replies
        .iter()
        .map(|r| format!("{} {}", r["id"], r["error"]["code"]))
        .collect();
    got.sort();
    let mut want = vec![
        "1 -32600",
        "2 -32600",
        "null -32600",
        "4 -32600",
        "5 -32600",
        "null -32700",
        "6 null",
    ];
    want.sort();
    assert_eq!(got, want, "{replies:#?}");
}

#[tokio::test]
async fn a_panic_inside_a_tool_ends_that_call_only() {
    let f = Fixture::new();
    let cmd = kura_tests::faulty_command(
        &f.args(&[]),
        &[("KURA_FAULT_PANIC_IN", "vault_read".to_owned())],
    );
    let k = kura_tests::Kura::start_command(
        cmd,
        rmcp::service::ClientLifecycleMode::Initialize,
        Stdio::null(),
    )
    .await;
    for _ in 0..2 {
        let r = k.call("vault_read", json!({"path": "README.md"})).await;
        assert!(r.is_error, "{r:?}");
        assert_eq!(r.code(), "internal", "{r:?}");
        assert!(r.text.contains("vault_read"), "{r:?}");
        // The server lives on: other tools answer, and so does this session.
        let listed = k.call("vault_ls", json!({})).await;
        assert!(!listed.is_error, "{listed:?}");
    }
    k.stop().await;
}
