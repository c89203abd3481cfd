//! Harness for kura's end-to-end tests: a temporary vault (a copy of
//! `fixtures/demo/vault`), a canary folder beside it that must never be read
//! or changed, and the real `kura` binary driven over stdio by rmcp's client.
//! Every successful tool result is validated against the tool's
//! `outputSchema`, as real clients do.

#![allow(clippy::disallowed_methods)] // tests build their fixtures with std::fs

use std::collections::HashMap;
use std::path::{Path, PathBuf};

use rmcp::ClientServiceExt;
use rmcp::model::{CallToolRequestParams, CallToolResult, Tool};
use rmcp::service::{ClientLifecycleMode, RoleClient, RunningService, ServiceError};
use rmcp::transport::TokioChildProcess;
use serde_json::Value;

pub mod graph_vault;
pub mod scratch;
pub mod soak;
pub mod toolchain;

/// The path of the built `kura` binary (same profile as these tests).
pub fn kura_bin() -> PathBuf {
    built_bin("kura")
}

/// The warning of a search's `answer` that tells the caller what to pass
/// as `queries` (issue 55), if it has one.
pub fn queries_hint(answer: &Value) -> Option<&str> {
    answer["warnings"]
        .as_array()?
        .iter()
        .filter_map(Value::as_str)
        .find(|w| w.contains("`queries`"))
}

/// The test-only `kura-faulty` (this crate's binary): `kura` with the
/// faults of its `KURA_FAULT_*` variables armed.
pub fn kura_faulty_bin() -> PathBuf {
    built_bin("kura-faulty")
}

fn built_bin(name: &str) -> PathBuf {
    let exe = std::env::current_exe().expect("test exe");
    let dir = exe
        .parent()
        .and_then(|d| d.parent())
        .expect("target profile folder");
    let bin = dir.join(name);
    assert!(
        bin.exists(),
        "{} is missing: build it first (`cargo test --workspace` does)",
        bin.display()
    );
    if name == "kura" {
        static FRESH: std::sync::OnceLock<Result<(), String>> = std::sync::OnceLock::new();
        // The first test to ask for the binary also starts the run's
        // installs (`toolchain::prefetch`).
        let fresh = FRESH.get_or_init(|| fresh(&bin).inspect(|()| toolchain::prefetch()));
        if let Err(e) = fresh {
            panic!("{e}");
        }
    }
    bin
}

/// `cargo test -p kura-tests` (or `-p` any library) rebuilds the libraries
/// these tests link but not the `kura` binary they drive: a run after a
/// change would test the binary as it was. Its dep-info file (written
/// beside it by cargo) lists the sources it was built from; a source
/// changed since it was built makes it stale. What lies in the target
/// folder (guest components, generated code) is an output of builds that
/// may run after it without changing it, and is not compared.
fn fresh(bin: &Path) -> Result<(), String> {
    let target = bin.parent().and_then(Path::parent).unwrap_or(bin);
    let mtime = |p: &Path| std::fs::metadata(p).and_then(|m| m.modified()).ok();
    let (Some(built), Ok(info)) = (mtime(bin), std::fs::read_to_string(bin.with_extension("d")))
    else {
        return Ok(()); // no dep-info: nothing to compare with
    };
    for source in dep_info_sources(&info) {
        let source = Path::new(&source);
        let newer = !source.starts_with(target) && mtime(source).is_some_and(|t| t > built);
        if newer && source.is_file() {
            return Err(format!(
                "{} is older than {}: build it first (`cargo build --release -p kura`; `cargo test --workspace` does)",
                bin.display(),
                source.display()
            ));
        }
    }
    Ok(())
}

/// The sources a cargo dep-info file's first rule names (a space in a
/// path is escaped with a backslash).
fn dep_info_sources(info: &str) -> Vec<String> {
    let Some((_, deps)) = info.lines().next().and_then(|l| l.split_once(": ")) else {
        return Vec::new();
    };
    let mut out = Vec::new();
    let mut cur = String::new();
    let mut chars = deps.chars();
    while let Some(c) = chars.next() {
        match c {
            '\\' => cur.extend(chars.next()),
            ' ' => out.extend((!cur.is_empty()).then(|| std::mem::take(&mut cur))),
            c => cur.push(c),
        }
    }
    out.extend((!cur.is_empty()).then_some(cur));
    out
}

/// A copy of the default reranker component, built for the tests.
pub fn reranker_wasm() -> PathBuf {
    PathBuf::from(env!("KURA_TEST_RERANKER_WASM"))
}

/// A reranker that uses its slot's grants (`fixtures/components/granted`).
pub fn granted_wasm() -> PathBuf {
    PathBuf::from(env!("KURA_TEST_GRANTED_WASM"))
}

/// A copy of the default auditor component, built for the tests.
pub fn auditor_wasm() -> PathBuf {
    PathBuf::from(env!("KURA_TEST_AUDITOR_WASM"))
}

/// The Rust example reranker (`components/examples/rust-reranker`).
pub fn rust_reranker_wasm() -> PathBuf {
    PathBuf::from(env!("KURA_TEST_EXAMPLE_RERANKER_WASM"))
}

/// The Rust example embedder (`components/examples/rust-embedder`).
pub fn rust_embedder_wasm() -> PathBuf {
    PathBuf::from(env!("KURA_TEST_EXAMPLE_EMBEDDER_WASM"))
}

/// Where the hostile write-policy component was built.
pub fn hostile_wasm() -> PathBuf {
    PathBuf::from(env!("KURA_TEST_HOSTILE_WASM"))
}

/// A write-policy component whose `check` export has the wrong signature.
pub fn mistyped_wasm() -> PathBuf {
    PathBuf::from(env!("KURA_TEST_MISTYPED_WASM"))
}

/// A `kura` that must refuse to start, spawned with its standard error
/// piped: its status and standard error once it exits. The exit is the
/// event waited for, with a deadline; one that serves instead is killed and
/// the test fails.
pub fn refusal(child: std::process::Child) -> (std::process::ExitStatus, String) {
    let pid = child.id();
    let (tx, rx) = std::sync::mpsc::channel();
    std::thread::spawn(move || tx.send(child.wait_with_output()));
    match rx.recv_timeout(std::time::Duration::from_secs(20)) {
        Ok(out) => {
            let out = out.unwrap();
            (
                out.status,
                String::from_utf8_lossy(&out.stderr).into_owned(),
            )
        }
        Err(_) => {
            let _ = std::process::Command::new("kill")
                .arg(pid.to_string())
                .status();
            panic!("kura did not refuse to start");
        }
    }
}

/// The text of the log file `log` once it holds `needle`; panics after
/// `wait` (a deadline for an event, not a pause).
pub fn wait_for_log(log: &Path, needle: &str, wait: std::time::Duration) -> String {
    let deadline = std::time::Instant::now() + wait;
    loop {
        let text = std::fs::read_to_string(log).unwrap_or_default();
        if text.contains(needle) {
            return text;
        }
        assert!(
            std::time::Instant::now() < deadline,
            "`{needle}` never appeared in {}:\n{text}",
            log.display()
        );
        std::thread::sleep(std::time::Duration::from_millis(20));
    }
}

/// Run `cmd` to its end and return its standard output; a failure fails
/// the test with its standard error.
pub fn succeeded(cmd: &mut std::process::Command) -> Vec<u8> {
    let out = cmd.output().unwrap();
    assert!(
        out.status.success(),
        "{cmd:?}\n{}\n{}",
        String::from_utf8_lossy(&out.stdout),
        String::from_utf8_lossy(&out.stderr)
    );
    out.stdout
}

pub fn workspace() -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR"))
        .parent()
        .unwrap()
        .to_path_buf()
}

pub fn copy_tree(from: &Path, to: &Path) {
    std::fs::create_dir_all(to).unwrap();
    for e in std::fs::read_dir(from).unwrap() {
        let e = e.unwrap();
        let dest = to.join(e.file_name());
        if e.file_type().unwrap().is_dir() {
            copy_tree(&e.path(), &dest);
        } else {
            std::fs::copy(e.path(), dest).unwrap();
        }
    }
}

/// A temporary world: `vault/` (the demo vault), `outside/canary.txt`,
/// `state/` and an empty config file.
pub struct Fixture {
    pub dir: tempfile::TempDir,
}

/// A state folder filled once for this test process per `cell` by
/// `fill` (given the folder around it, where [`kura_filling`] runs kura),
/// in a scratch folder removed when the process exits.
fn filled_once(
    cell: &'static std::sync::OnceLock<PathBuf>,
    prefix: &str,
    fill: impl FnOnce(&Path),
) -> PathBuf {
    static MADE: std::sync::Mutex<Vec<PathBuf>> = std::sync::Mutex::new(Vec::new());
    extern "C" fn remove() {
        for dir in MADE.lock().unwrap_or_else(|e| e.into_inner()).iter() {
            let _ = std::fs::remove_dir_all(dir);
        }
    }
    cell.get_or_init(|| {
        let dir = scratch::named(prefix).keep();
        let mut made = MADE.lock().unwrap();
        if made.is_empty() {
            // SAFETY: `remove` touches only the static above.
            unsafe { libc::atexit(remove) };
        }
        made.push(dir.clone());
        drop(made);
        std::fs::write(dir.join("empty.toml"), "").unwrap();
        fill(&dir);
        dir.join("state")
    })
    .clone()
}

/// Run `kura ARGS` with no configuration but the state folder of `dir`
/// (a [`filled_once`] folder); it must succeed.
fn kura_filling(dir: &Path, args: &[&std::ffi::OsStr]) {
    succeeded(
        std::process::Command::new(kura_bin())
            .args(args)
            .arg("--config")
            .arg(dir.join("empty.toml"))
            .arg("--state-dir")
            .arg(dir.join("state")),
    );
}

/// The default components compiled once for this test process by `kura
/// plugins precompile` (a vault and the fixture manuals: every default
/// slot).
fn compiled_defaults() -> PathBuf {
    static STATE: std::sync::OnceLock<PathBuf> = std::sync::OnceLock::new();
    filled_once(&STATE, "kura-e2e-compiled-", |dir| {
        std::fs::create_dir_all(dir.join("vault")).unwrap();
        let (vault, manuals) = (dir.join("vault"), workspace().join("fixtures/manuals"));
        kura_filling(
            dir,
            &[
                "plugins".as_ref(),
                "precompile".as_ref(),
                "--vault-root".as_ref(),
                vault.as_os_str(),
                "--manuals-root".as_ref(),
                manuals.as_os_str(),
            ],
        );
    })
    .join("components")
}

/// Put the default components, compiled once for this process, into the
/// cache of `state`, a state folder no kura has used yet: a start then
/// loads them instead of running Cranelift again (about 0.4 s of CPU).
pub fn give_compiled_defaults(state: &Path) {
    let cwasm: Vec<PathBuf> = std::fs::read_dir(compiled_defaults())
        .unwrap()
        .map(|e| e.unwrap().path())
        .filter(|p| p.to_string_lossy().ends_with(".cwasm"))
        .collect();
    link_into_cache(state, &cwasm);
}

/// A compile cache (`components/functions.bin`) holding Cranelift's
/// compiled functions of CPython and StarlingMonkey as componentize-py
/// and componentize-js build them into every component, filled once for
/// this test process by `kura plugins check` of the Python and the
/// JavaScript reranker examples.
fn compiled_runtimes() -> PathBuf {
    static STATE: std::sync::OnceLock<PathBuf> = std::sync::OnceLock::new();
    filled_once(&STATE, "kura-e2e-runtimes-", |dir| {
        for example in ["python-reranker", "js-reranker"] {
            let wasm = toolchain::example(example);
            kura_filling(
                dir,
                &["plugins".as_ref(), "check".as_ref(), wasm.as_os_str()],
            );
        }
    })
    .join("components/functions.bin")
}

/// Put CPython's and StarlingMonkey's compiled functions into the compile
/// cache of `state`, a state folder no kura has used yet: a Python or
/// JavaScript component then compiles in a third of the CPU (what a
/// plugin author's second build costs). A test of the compile itself
/// leaves them out.
pub fn give_compiled_runtimes(state: &Path) {
    link_into_cache(state, &[compiled_runtimes()]);
}

/// Hard-link `files` into `state/components/`: kura replaces a cache file
/// by renaming a new one over it, never writes into one.
fn link_into_cache(state: &Path, files: &[PathBuf]) {
    let into = state.join("components");
    std::fs::create_dir_all(&into).unwrap();
    // As kura makes them: a state folder others can write is refused,
    // whatever the umask the tests run under.
    for d in [state, into.as_path()] {
        use std::os::unix::fs::PermissionsExt as _;
        std::fs::set_permissions(d, std::fs::Permissions::from_mode(0o700)).unwrap();
    }
    for file in files {
        let to = into.join(file.file_name().unwrap());
        std::fs::hard_link(file, &to)
            .or_else(|_| std::fs::copy(file, &to).map(drop))
            .unwrap();
    }
}

pub const CANARY: &str = "CANARY-SECRET-7f3a: if you can read this, a root leaked\n";

impl Fixture {
    /// A fixture whose state folder already holds the default components
    /// compiled (as after a first start): a start loads them from its
    /// cache instead of running Cranelift again, about 0.4 s of CPU for
    /// each of the suite's hundreds of starts. A test of the compile or of
    /// the cache itself takes [`Fixture::uncompiled`].
    pub fn new() -> Fixture {
        let f = Fixture::uncompiled();
        give_compiled_defaults(&f.dir.path().join("state"));
        f
    }

    /// A fixture like [`Fixture::new`] whose compile cache also holds
    /// CPython's and StarlingMonkey's functions ([`give_compiled_runtimes`]),
    /// for a test that loads a Python or JavaScript component.
    pub fn with_runtimes() -> Fixture {
        let f = Fixture::new();
        give_compiled_runtimes(&f.dir.path().join("state"));
        f
    }

    /// A fixture with an empty state folder, as on a first start.
    pub fn uncompiled() -> Fixture {
        let dir = scratch::folder();
        copy_tree(
            &workspace().join("fixtures/demo/vault"),
            &dir.path().join("vault"),
        );
        std::fs::create_dir_all(dir.path().join("outside")).unwrap();
        std::fs::write(dir.path().join("outside/canary.txt"), CANARY).unwrap();
        std::fs::write(dir.path().join("empty.toml"), "").unwrap();
        copy_tree(
            &workspace().join("fixtures/manuals"),
            &dir.path().join("manuals"),
        );
        copy_tree(
            &workspace().join("fixtures/demo/vibe"),
            &dir.path().join("vibe"),
        );
        Fixture { dir }
    }

    pub fn manuals(&self) -> PathBuf {
        self.dir.path().join("manuals")
    }

    /// Start with the manuals root too, plus `extra` arguments.
    pub async fn start_with_manuals(&self, extra: &[&str]) -> Kura {
        let manuals = self.manuals().display().to_string();
        let mut args = vec!["--manuals-root", manuals.as_str()];
        args.extend_from_slice(extra);
        Kura::start(self.args(&args), ClientLifecycleMode::Initialize).await
    }

    /// The vibe workspace (a copy of `fixtures/demo/vibe`).
    pub fn vibe(&self) -> PathBuf {
        self.dir.path().join("vibe")
    }

    /// Arguments that serve the vibe workspace too, plus `extra`.
    pub fn vibe_args(&self, extra: &[&str]) -> Vec<String> {
        let vibe = self.vibe().display().to_string();
        let mut args = vec!["--vibe-root", vibe.as_str()];
        args.extend_from_slice(extra);
        self.args(&args)
    }

    /// Start with the vibe workspace too, plus `extra` arguments.
    pub async fn start_vibe(&self, extra: &[&str]) -> Kura {
        Kura::start(self.vibe_args(extra), ClientLifecycleMode::Initialize).await
    }

    pub fn vault(&self) -> PathBuf {
        self.dir.path().join("vault")
    }

    pub fn outside(&self) -> PathBuf {
        self.dir.path().join("outside")
    }

    pub fn read(&self, rel: &str) -> String {
        std::fs::read_to_string(self.vault().join(rel)).unwrap()
    }

    pub fn write(&self, rel: &str, text: &str) {
        let p = self.vault().join(rel);
        std::fs::create_dir_all(p.parent().unwrap()).unwrap();
        std::fs::write(p, text).unwrap();
    }

    /// Write `text` at `rel` under the manuals root.
    pub fn write_manual(&self, rel: &str, text: &str) {
        let p = self.manuals().join(rel);
        std::fs::create_dir_all(p.parent().unwrap()).unwrap();
        std::fs::write(p, text).unwrap();
    }

    /// The outside folder is exactly as created: one file, canary intact.
    pub fn assert_canary_untouched(&self) {
        let names: Vec<_> = std::fs::read_dir(self.outside())
            .unwrap()
            .map(|e| e.unwrap().file_name().into_string().unwrap())
            .collect();
        assert_eq!(
            names,
            ["canary.txt"],
            "something was created outside the root"
        );
        assert_eq!(
            std::fs::read_to_string(self.outside().join("canary.txt")).unwrap(),
            CANARY
        );
    }

    /// Arguments for `kura serve` on this fixture, plus `extra`.
    pub fn args(&self, extra: &[&str]) -> Vec<String> {
        let mut v: Vec<String> = vec![
            "serve".into(),
            "--config".into(),
            self.dir.path().join("empty.toml").display().to_string(),
            "--vault-root".into(),
            self.vault().display().to_string(),
            "--state-dir".into(),
            self.dir.path().join("state").display().to_string(),
        ];
        v.extend(extra.iter().map(|s| s.to_string()));
        v
    }

    pub async fn start(&self) -> Kura {
        Kura::start(self.args(&[]), ClientLifecycleMode::Initialize).await
    }

    /// A fixture whose vault is `fixtures/vaults/<name>`, served with
    /// `extra`, and its expected answers (`fixtures/vaults/<name>.expected.json`).
    pub async fn fixture_vault(name: &str, extra: &[&str]) -> (Fixture, Kura, Value) {
        let f = Fixture::new();
        std::fs::remove_dir_all(f.vault()).unwrap();
        let vaults = workspace().join("fixtures/vaults");
        copy_tree(&vaults.join(name), &f.vault());
        let k = Kura::start(f.args(extra), ClientLifecycleMode::Initialize).await;
        let expected =
            std::fs::read_to_string(vaults.join(format!("{name}.expected.json"))).unwrap();
        (f, k, serde_json::from_str(&expected).unwrap())
    }
}

impl Default for Fixture {
    fn default() -> Self {
        Self::new()
    }
}

/// A running server and the rmcp client talking to it.
pub struct Kura {
    pub client: RunningService<RoleClient, ()>,
    schemas: HashMap<String, Value>,
    /// The server's process id (to send it a signal).
    pub pid: Option<u32>,
    /// The server process, which dies with this handle.
    _process: Option<Process>,
}

/// A server process, opened by a process file descriptor at its start: a
/// signal through it reaches that process or none, never one that took
/// its id later (Linux 5.3 and later).
struct Process(std::os::fd::OwnedFd);

impl Process {
    fn open(pid: u32) -> Option<Process> {
        use std::os::fd::FromRawFd;
        // SAFETY: pidfd_open takes a pid and flags and returns a new
        // descriptor or -1.
        let fd = unsafe { libc::syscall(libc::SYS_pidfd_open, pid as libc::pid_t, 0) };
        // SAFETY: a descriptor pidfd_open just returned, owned by nobody else.
        (fd >= 0).then(|| Process(unsafe { std::os::fd::OwnedFd::from_raw_fd(fd as i32) }))
    }
}

impl Drop for Process {
    /// Kill the server, and return once it has exited. Left to notice its
    /// closed input on its own, it could still be writing (an index build,
    /// say) into the fixture's folder while that folder was removed, which
    /// then stayed behind in the temporary folder (hundreds a run).
    fn drop(&mut self) {
        use std::os::fd::AsRawFd;
        let fd = self.0.as_raw_fd();
        // SAFETY: a signal sent through the descriptor of the server this
        // handle started (ESRCH when it has exited already).
        unsafe {
            libc::syscall(
                libc::SYS_pidfd_send_signal,
                fd,
                libc::SIGKILL,
                std::ptr::null::<libc::siginfo_t>(),
                0,
            )
        };
        // The descriptor becomes readable when the process has exited.
        let mut poll = libc::pollfd {
            fd,
            events: libc::POLLIN,
            revents: 0,
        };
        // SAFETY: one pollfd, valid for the call.
        unsafe { libc::poll(&mut poll, 1, 10_000) };
    }
}

/// A tool result, split for assertions.
#[derive(Debug)]
pub struct Reply {
    pub is_error: bool,
    pub body: Value,
    pub text: String,
}

impl Reply {
    /// The error code of an error result (panics on success).
    pub fn code(&self) -> &str {
        assert!(self.is_error, "expected an error, got {}", self.body);
        self.body["error"]["code"].as_str().expect("error.code")
    }

    pub fn ok(&self) -> &Value {
        assert!(!self.is_error, "expected success, got {}", self.body);
        &self.body
    }
}

pub fn command(args: &[String]) -> tokio::process::Command {
    command_of(kura_bin(), args)
}

/// [`command`] of `kura-faulty`, with the faults `vars` name armed.
pub fn faulty_command(args: &[String], vars: &[(&str, String)]) -> tokio::process::Command {
    let mut cmd = command_of(kura_faulty_bin(), args);
    for (k, v) in vars {
        cmd.env(k, v);
    }
    cmd
}

fn command_of(bin: PathBuf, args: &[String]) -> tokio::process::Command {
    let mut cmd = tokio::process::Command::new(bin);
    cmd.args(args);
    // Only the configuration the test gives: none of kura's settings from the
    // environment of whoever runs the tests.
    for var in kura::config::env_names() {
        cmd.env_remove(var);
    }
    // A HOME without ~/.vibe, so no domain appears that the test did not ask for.
    cmd.env("HOME", std::env::temp_dir().join("kura-e2e-no-home"));
    cmd
}

impl Kura {
    pub async fn start(args: Vec<String>, mode: ClientLifecycleMode) -> Kura {
        Kura::start_logging(args, mode, std::process::Stdio::null()).await
    }

    /// Start with kura's stderr (its log) going to `stderr`.
    pub async fn start_logging(
        args: Vec<String>,
        mode: ClientLifecycleMode,
        stderr: std::process::Stdio,
    ) -> Kura {
        Kura::start_command(command(&args), mode, stderr).await
    }

    /// Start `cmd` (a [`command`], perhaps with more environment).
    pub async fn start_command(
        cmd: tokio::process::Command,
        mode: ClientLifecycleMode,
        stderr: std::process::Stdio,
    ) -> Kura {
        Kura::try_start_command(cmd, mode, stderr)
            .await
            .unwrap_or_else(|e| panic!("{e}"))
    }

    /// [`Kura::start_command`] of a process that may die as it starts (a
    /// fault plan's kill point in its start-up work): why, if it did.
    pub async fn try_start_command(
        cmd: tokio::process::Command,
        mode: ClientLifecycleMode,
        stderr: std::process::Stdio,
    ) -> Result<Kura, String> {
        let (transport, _) = TokioChildProcess::builder(cmd)
            .stderr(stderr)
            .spawn()
            .expect("spawn kura");
        let pid = transport.id();
        let process = pid.and_then(Process::open);
        let client =
            ().serve_with_lifecycle(transport, mode)
                .await
                .map_err(|e| format!("MCP handshake: {e:?}"))?;
        let tools = client
            .list_all_tools()
            .await
            .map_err(|e| format!("tools/list: {e:?}"))?;
        let schemas = tools
            .iter()
            .filter_map(|t| {
                Some((
                    t.name.to_string(),
                    Value::Object((*t.output_schema.clone()?).clone()),
                ))
            })
            .collect();
        Ok(Kura {
            client,
            schemas,
            pid,
            _process: process,
        })
    }

    pub async fn tools(&self) -> Vec<Tool> {
        self.client.list_all_tools().await.unwrap()
    }

    pub async fn raw(&self, tool: &str, args: Value) -> Result<CallToolResult, ServiceError> {
        let mut params = CallToolRequestParams::new(tool.to_owned());
        if let Value::Object(map) = args {
            params = params.with_arguments(map);
        }
        self.client.call_tool(params).await
    }

    /// Call a tool; a success is checked against its output schema.
    pub async fn call(&self, tool: &str, args: Value) -> Reply {
        let r = self.raw(tool, args).await.expect("tools/call answered");
        let is_error = r.is_error == Some(true);
        let body = r.structured_content.clone().expect("structuredContent");
        let text = r
            .content
            .first()
            .and_then(|c| c.as_text())
            .map(|t| t.text.clone())
            .unwrap_or_default();
        if !is_error {
            // The listed schema (top-level fields and their types), and the
            // full one: every field a success carries, nested ones too.
            let listed = self.schemas.get(tool).expect("tool has an outputSchema");
            let full = kura::tools::find(tool)
                .map(|t| Value::Object((*t.output()).clone()))
                .expect("a tool of the catalog");
            for (which, schema) in [("outputSchema", listed), ("the full schema", &full)] {
                let validator = jsonschema::validator_for(schema).expect("the schema compiles");
                let errors: Vec<String> = validator
                    .iter_errors(&body)
                    .map(|e| e.to_string())
                    .collect();
                assert!(
                    errors.is_empty(),
                    "{tool}: structuredContent does not match {which}: {errors:?}\n{body}"
                );
            }
        } else {
            assert!(body["error"]["code"].is_string(), "error shape: {body}");
            assert!(body["error"]["message"].is_string(), "error shape: {body}");
            assert!(body["error"]["details"].is_object(), "error shape: {body}");
            assert!(!text.is_empty(), "an error says itself in text");
        }
        Reply {
            is_error,
            body,
            text,
        }
    }

    /// Call `tool` until its answer satisfies `holds` (an event such as a
    /// watcher's report, awaited with a deadline rather than a fixed pause);
    /// the last answer, for the caller's assertions.
    pub async fn until(&self, tool: &str, args: Value, holds: impl Fn(&Value) -> bool) -> Value {
        let deadline = std::time::Instant::now() + std::time::Duration::from_secs(30);
        loop {
            let r = self.call(tool, args.clone()).await.ok().clone();
            if holds(&r) || std::time::Instant::now() >= deadline {
                return r;
            }
            tokio::time::sleep(std::time::Duration::from_millis(25)).await;
        }
    }

    /// manual_find (no cache) once the reranker has loaded: a first start
    /// compiles it in the background, and until then the answer says
    /// `late_rerank: "pending"`.
    pub async fn find_reranked(&self, query: &str) -> Value {
        for _ in 0..480 {
            let r = self
                .call(
                    "manual_find",
                    serde_json::json!({"query": query, "use_cache": false}),
                )
                .await
                .ok()
                .clone();
            if r["applied"]["late_rerank"] != "pending" {
                return r;
            }
            tokio::time::sleep(std::time::Duration::from_millis(250)).await;
        }
        panic!("the reranker never loaded");
    }

    /// The ranked candidates of a manual_find answer: (path, start line,
    /// score to six places).
    pub async fn ranking(&self, found: &Value) -> Vec<(String, u64, String)> {
        let r = self
            .call(
                "manual_hits",
                serde_json::json!({"trace_id": found["trace_id"], "kind": "candidates", "limit": 1000}),
            )
            .await;
        r.ok()["items"]
            .as_array()
            .unwrap()
            .iter()
            .map(|i| {
                (
                    i["ref"]["path"].as_str().unwrap().to_owned(),
                    i["ref"]["start_line"].as_u64().unwrap(),
                    format!("{:.6}", i["score"].as_f64().unwrap()),
                )
            })
            .collect()
    }

    /// Whether manual_find's ranking of `query` comes to differ from
    /// `first` (a reloaded component) within 20 s. The reload is seen only
    /// through the answers, so it is asked again every 200 ms until then.
    pub async fn ranking_changes(&self, query: &str, first: &[(String, u64, String)]) -> bool {
        let deadline = std::time::Instant::now() + std::time::Duration::from_secs(20);
        loop {
            let r = self.find_reranked(query).await;
            if self.ranking(&r).await != first {
                return true;
            }
            if std::time::Instant::now() >= deadline {
                return false;
            }
            tokio::time::sleep(std::time::Duration::from_millis(200)).await;
        }
    }

    pub async fn stop(self) {
        let _ = self.client.cancel().await;
    }
}

/// The URL a `kura serve --http` child logs, read from its piped stderr.
pub fn http_url(child: &mut std::process::Child) -> String {
    kura::client::http_url(child).expect("kura logs the URL it serves")
}

#[cfg(test)]
mod tests {
    #[test]
    fn a_dep_info_rule_lists_its_sources_with_escaped_spaces() {
        let info = "/t/kura: /w/a.rs /w/my\\ notes/b.md  /w/c.rs\n\n/w/a.rs:\n";
        assert_eq!(
            super::dep_info_sources(info),
            ["/w/a.rs", "/w/my notes/b.md", "/w/c.rs"]
        );
    }
}
