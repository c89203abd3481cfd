//! Components from an OCI registry, as an operator gets them: pushed to a
//! real registry (Debian's `docker-registry`, the distribution protocol's
//! reference implementation) started on loopback, signed with the real
//! `minisign`, pulled into the state folder, pinned, verified and served by
//! a config line — and refused, in one line, when a digest or a signature
//! is not what the operator asked for.

use std::path::{Path, PathBuf};
use std::process::{Child, Command, Stdio};
use std::time::{Duration, Instant};

use kura::config::Digest;
use kura_tests::toolchain::{docker_registry, minisign, oras_python};
use kura_tests::{Fixture, Kura, kura_bin, reranker_wasm, rust_reranker_wasm, wait_for_log};
use rmcp::service::ClientLifecycleMode;

const QUERY: &str = "算出プロパティとは";

/// A registry on a loopback port of its own, stopped when dropped.
struct Registry {
    child: Child,
    host: String,
    dir: tempfile::TempDir,
}

impl Registry {
    fn start() -> Registry {
        let dir = kura_tests::scratch::folder();
        let port = std::net::TcpListener::bind("127.0.0.1:0")
            .unwrap()
            .local_addr()
            .unwrap()
            .port();
        let host = format!("127.0.0.1:{port}");
        let config = dir.path().join("config.yml");
        std::fs::write(
            &config,
            format!(
                "version: 0.1\nlog:\n  level: warn\nstorage:\n  filesystem:\n    rootdirectory: {}\nhttp:\n  addr: {host}\n",
                dir.path().join("data").display()
            ),
        )
        .unwrap();
        let log = std::fs::File::create(dir.path().join("registry.log")).unwrap();
        let child = Command::new(docker_registry())
            .arg("serve")
            .arg(&config)
            .stdin(Stdio::null())
            .stdout(log.try_clone().unwrap())
            .stderr(log)
            .spawn()
            .unwrap();
        let until = Instant::now() + Duration::from_secs(20);
        while std::net::TcpStream::connect(&host).is_err() {
            assert!(Instant::now() < until, "the registry did not start");
            std::thread::sleep(Duration::from_millis(50));
        }
        Registry { child, host, dir }
    }

    fn reference(&self, name: &str) -> String {
        format!("oci://{}/{name}", self.host)
    }

    /// Where the registry keeps a blob (its filesystem storage driver's
    /// layout), to alter it behind the registry's back.
    fn blob_file(&self, digest: &str) -> PathBuf {
        let hex = digest.trim_start_matches("sha256:");
        self.dir
            .path()
            .join("data/docker/registry/v2/blobs/sha256")
            .join(&hex[..2])
            .join(hex)
            .join("data")
    }
}

impl Drop for Registry {
    fn drop(&mut self) {
        let _ = self.child.kill();
        let _ = self.child.wait();
    }
}

/// A minisign key pair (no password), made by `minisign -G`.
struct Key {
    secret: PathBuf,
    /// The public key's base64 line (what PLUGIN_TRUSTED_KEYS takes).
    public: String,
    /// Its id, as minisign prints it.
    id: String,
}

fn key(dir: &Path, name: &str) -> Key {
    let (public, secret) = (
        dir.join(format!("{name}.pub")),
        dir.join(format!("{name}.sec")),
    );
    run(Command::new(minisign())
        .args(["-G", "-W", "-p"])
        .arg(&public)
        .arg("-s")
        .arg(&secret));
    let text = std::fs::read_to_string(&public).unwrap();
    let mut lines = text.lines();
    let id = lines.next().unwrap().rsplit(' ').next().unwrap().to_owned();
    Key {
        secret,
        public: lines.next().unwrap().to_owned(),
        id,
    }
}

/// `minisign -Sm FILE`: FILE.minisig beside it.
fn sign(key: &Key, file: &Path) {
    run(Command::new(minisign())
        .arg("-S")
        .arg("-s")
        .arg(&key.secret)
        .arg("-m")
        .arg(file)
        .args(["-t", "a kura component"]));
}

fn run(cmd: &mut Command) -> String {
    let out = cmd.output().unwrap();
    assert!(
        out.status.success(),
        "{cmd:?}:\n{}{}",
        String::from_utf8_lossy(&out.stdout),
        String::from_utf8_lossy(&out.stderr)
    );
    String::from_utf8_lossy(&out.stdout).into_owned()
}

/// `kura ARGS`: whether it succeeded, its stdout and its stderr.
fn kura(args: &[&str]) -> (bool, String, String) {
    let out = Command::new(kura_bin())
        .args(args)
        .env("RUST_LOG", "warn")
        .output()
        .unwrap();
    (
        out.status.success(),
        String::from_utf8_lossy(&out.stdout).into_owned(),
        String::from_utf8_lossy(&out.stderr).into_owned(),
    )
}

fn push(file: &Path, reference: &str) -> String {
    let (ok, out, err) = kura(&["plugins", "push", &file.display().to_string(), reference]);
    assert!(ok, "{out}{err}");
    out
}

/// The fixture's settings for a `kura plugins` command, plus `extra`.
fn settings<'a>(f: &'a Fixture, extra: &[&'a str]) -> Vec<String> {
    f.args(extra).into_iter().skip(1).collect()
}

fn pull(f: &Fixture, reference: &str, extra: &[&str]) -> (bool, String, String) {
    let mut args = vec!["plugins".to_owned(), "pull".into(), reference.into()];
    args.extend(settings(f, extra));
    kura(&args.iter().map(String::as_str).collect::<Vec<_>>())
}

fn value_of<'a>(said: &'a str, label: &str) -> &'a str {
    said.lines()
        .find_map(|l| l.strip_prefix(label))
        .unwrap_or_else(|| panic!("no `{label}` in\n{said}"))
        .trim()
}

/// `kura serve ARGS` must refuse to start: its standard error.
fn refused_start(f: &Fixture, extra: &[&str]) -> String {
    let child = Command::new(kura_bin())
        .args(f.args(extra))
        .stdin(Stdio::piped())
        .stdout(Stdio::null())
        .stderr(Stdio::piped())
        .spawn()
        .unwrap();
    let (status, err) = kura_tests::refusal(child);
    assert!(!status.success(), "{err}");
    err
}

fn copy(from: &Path, dir: &Path, name: &str) -> PathBuf {
    let to = dir.join(name);
    std::fs::copy(from, &to).unwrap();
    to
}

fn digest_of(file: &Path) -> String {
    Digest::of(&std::fs::read(file).unwrap()).to_string()
}

#[tokio::test]
async fn a_signed_component_from_a_registry_is_pulled_pinned_verified_and_served_offline() {
    let f = Fixture::new();
    let dir = f.dir.path();
    let registry = Registry::start();
    let author = key(dir, "author");
    let wasm = copy(&rust_reranker_wasm(), dir, "reranker.wasm");
    sign(&author, &wasm);
    let reference = registry.reference("kura/reranker:1.0");
    let said = push(&wasm, &reference);
    assert!(said.contains("signature pushed beside it"), "{said}");
    let trust = format!("plugin_trusted_keys={}", author.public);
    let strict = [
        "--set",
        trust.as_str(),
        "--set",
        "plugin_require_signature=true",
    ];
    let (ok, said, err) = pull(&f, &reference, &strict);
    assert!(ok, "{said}{err}");
    assert_eq!(
        value_of(&said, "digest"),
        format!("{} (0.1 MiB, world reranker)", digest_of(&wasm))
    );
    assert_eq!(value_of(&said, "signer"), format!("key {}", author.id));
    let lock = std::fs::read_to_string(dir.join("state/components/lock.toml")).unwrap();
    assert!(
        lock.contains(&format!("reference = \"{reference}\"")),
        "{lock}"
    );
    assert!(lock.contains(&digest_of(&wasm)), "{lock}");
    // Serving never reaches the registry: it is gone.
    drop(registry);
    let plugin = format!("reranker={reference}");
    let pin = format!("plugins.reranker.digest={}", digest_of(&wasm));
    let mut args = vec!["--plugin", plugin.as_str(), "--set", pin.as_str()];
    args.extend_from_slice(&strict);
    let k = f.start_with_manuals(&args).await;
    let found = k.find_reranked(QUERY).await;
    assert_eq!(found["applied"]["late_rerank"], "applied", "{found}");
    let from_registry = k.ranking(&found).await;
    k.stop().await;
    // The same component from its file (signed beside it) ranks the same.
    let plugin = format!("reranker={}", wasm.display());
    let k = f
        .start_with_manuals(&["--plugin", plugin.as_str(), "--set", trust.as_str()])
        .await;
    let found = k.find_reranked(QUERY).await;
    assert_eq!(k.ranking(&found).await, from_registry);
    k.stop().await;
    // `kura plugins list` says where it came from, what it is and who signed it.
    let plugin = format!("reranker={reference}");
    let mut list = vec!["plugins".to_owned(), "list".into()];
    list.extend(settings(
        &f,
        &[&["--plugin", plugin.as_str()], &args[2..]].concat(),
    ));
    let (ok, said, err) = kura(&list.iter().map(String::as_str).collect::<Vec<_>>());
    assert!(ok, "{said}{err}");
    let row = said.lines().find(|l| l.starts_with("reranker")).unwrap();
    let short = &digest_of(&wasm)[..19];
    assert!(
        row.contains(short)
            && row.contains(&format!("key {}", author.id))
            && row.ends_with(&reference),
        "{row}"
    );
}

#[tokio::test]
async fn a_tag_that_moves_changes_nothing_until_it_is_pulled_again() {
    let f = Fixture::new();
    let dir = f.dir.path();
    let registry = Registry::start();
    let first = copy(&rust_reranker_wasm(), dir, "first.wasm");
    let second = copy(&reranker_wasm(), dir, "second.wasm");
    let reference = registry.reference("kura/reranker:stable");
    let pushed = push(&first, &reference);
    let first_manifest = value_of(&pushed, "manifest").to_owned();
    let (ok, said, err) = pull(&f, &reference, &[]);
    assert!(ok, "{said}{err}");
    assert_eq!(value_of(&said, "signer"), "unsigned");
    let log = dir.join("kura.log");
    let manuals = f.manuals().display().to_string();
    let plugin = format!("reranker={reference}");
    let k = Kura::start_logging(
        f.args(&["--manuals-root", &manuals, "--plugin", &plugin]),
        ClientLifecycleMode::Initialize,
        std::fs::File::create(&log).unwrap().into(),
    )
    .await;
    let found = k.find_reranked(QUERY).await;
    let before = k.ranking(&found).await;
    // The tag moves in the registry: what is served does not (nothing
    // kura watches changed, so no wait can make it).
    push(&second, &reference);
    let r = k.find_reranked(QUERY).await;
    assert_eq!(
        k.ranking(&r).await,
        before,
        "served from the lock, not the registry"
    );
    // A pull follows it, says so, and the serving server swaps it in.
    let (ok, said, err) = pull(&f, &reference, &[]);
    assert!(ok, "{said}{err}");
    assert!(
        said.contains(&format!(
            "the reference moved: it was {}",
            digest_of(&first)
        )),
        "{said}"
    );
    assert!(
        value_of(&said, "digest").starts_with(&digest_of(&second)),
        "{said}"
    );
    wait_for_log(&log, "reloaded", Duration::from_secs(20));
    assert!(
        k.ranking_changes(QUERY, &before).await,
        "the new pull was never served"
    );
    k.stop().await;
    // A digest does not move: the first manifest is still what it was.
    let pinned = format!("{reference}@{first_manifest}");
    let (ok, said, err) = pull(&f, &pinned, &[]);
    assert!(ok, "{said}{err}");
    assert!(
        value_of(&said, "digest").starts_with(&digest_of(&first)),
        "{said}"
    );
}

#[tokio::test]
async fn a_digest_that_does_not_match_is_refused() {
    let f = Fixture::new();
    let dir = f.dir.path();
    let registry = Registry::start();
    let wasm = copy(&rust_reranker_wasm(), dir, "reranker.wasm");
    let reference = registry.reference("kura/reranker:1.0");
    push(&wasm, &reference);
    // A registry that serves other bytes than the digest its manifest
    // names (its storage altered): refused, nothing kept.
    let altered = registry.blob_file(&digest_of(&wasm));
    let original = std::fs::read(&altered).unwrap();
    let mut changed = original.clone();
    let last = changed.len() - 1;
    changed[last] ^= 1;
    std::fs::write(&altered, &changed).unwrap();
    let (ok, said, err) = pull(&f, &reference, &[]);
    assert!(!ok, "{said}");
    // Caught as the bytes arrive (oci-client's check) or once they are
    // all there (kura's): either way the line names the expected digest.
    assert!(
        err.contains(&digest_of(&wasm))
            && (err.contains("Invalid digest") || err.contains("hashing to")),
        "{err}"
    );
    assert!(!dir.join("state/components/lock.toml").exists());
    std::fs::write(&altered, &original).unwrap();
    // A manifest digest the registry does not have.
    let wrong = Digest::of(b"no such manifest");
    let (ok, said, err) = pull(
        &f,
        &registry.reference(&format!("kura/reranker@{wrong}")),
        &[],
    );
    assert!(!ok, "{said}");
    assert!(err.contains("manifest unknown"), "{err}");
    assert!(!dir.join("state/components/lock.toml").exists());
    // A slot pinned to other bytes refuses the start, naming both digests.
    let (ok, said, err) = pull(&f, &reference, &[]);
    assert!(ok, "{said}{err}");
    let manuals = f.manuals().display().to_string();
    let plugin = format!("reranker={reference}");
    let pin = format!("plugins.reranker.digest={wrong}");
    let err = refused_start(
        &f,
        &[
            "--manuals-root",
            &manuals,
            "--plugin",
            &plugin,
            "--set",
            &pin,
        ],
    );
    let line = err.lines().find(|l| l.contains("pinned")).unwrap_or(&err);
    assert!(
        line.contains(&format!(
            "is pinned to {wrong} but its bytes are {}",
            digest_of(&wasm)
        )),
        "{err}"
    );
    // A store altered behind kura's back is refused, not served.
    let stored = dir
        .join("state/components/sha256")
        .join(&digest_of(&wasm)["sha256:".len()..]);
    std::fs::write(&stored, std::fs::read(reranker_wasm()).unwrap()).unwrap();
    let err = refused_start(&f, &["--manuals-root", &manuals, "--plugin", &plugin]);
    assert!(
        err.contains("the store was altered; pull it again"),
        "{err}"
    );
    // A reference never pulled says what to run.
    let other = registry.reference("kura/other:1");
    let plugin = format!("reranker={other}");
    let err = refused_start(&f, &["--manuals-root", &manuals, "--plugin", &plugin]);
    assert!(
        err.contains(&format!("run `kura plugins pull {other}`")),
        "{err}"
    );
}

#[tokio::test]
async fn unsigned_or_badly_signed_components_are_refused_when_the_operator_asks() {
    let f = Fixture::new();
    let dir = f.dir.path();
    let registry = Registry::start();
    let (trusted, stranger) = (key(dir, "trusted"), key(dir, "stranger"));
    let trust = format!("plugin_trusted_keys={}", trusted.public);
    let strict = [
        "--set",
        trust.as_str(),
        "--set",
        "plugin_require_signature=true",
    ];
    // Unsigned: refused by a pull that requires signatures; nothing kept.
    let wasm = copy(&rust_reranker_wasm(), dir, "reranker.wasm");
    let unsigned = registry.reference("kura/unsigned:1");
    push(&wasm, &unsigned);
    let (ok, said, err) = pull(&f, &unsigned, &strict);
    assert!(!ok, "{said}");
    assert!(
        err.contains("is not signed") && err.contains("nothing was kept"),
        "{err}"
    );
    assert!(!dir.join("state/components/lock.toml").exists());
    // Pulled without that, it is refused by a start that requires it.
    let (ok, said, err) = pull(&f, &unsigned, &[]);
    assert!(ok, "{said}{err}");
    let manuals = f.manuals().display().to_string();
    let plugin = format!("reranker={unsigned}");
    let mut args = vec![
        "--manuals-root",
        manuals.as_str(),
        "--plugin",
        plugin.as_str(),
    ];
    args.extend_from_slice(&strict);
    let err = refused_start(&f, &args);
    assert!(
        err.contains("is not signed, and PLUGIN_REQUIRE_SIGNATURE refuses"),
        "{err}"
    );
    // Keys trusted and nothing said of unsigned components: refused as
    // well — a registry that drops a signature does not get around them.
    let mut keys_only = args[..4].to_vec();
    keys_only.extend_from_slice(&strict[..2]);
    let err = refused_start(&f, &keys_only);
    assert!(
        err.contains("is not signed, and PLUGIN_TRUSTED_KEYS is set"),
        "{err}"
    );
    // The operator may say unsigned ones load beside signed ones.
    keys_only.extend(["--set", "plugin_require_signature=false"]);
    let k = Kura::start(f.args(&keys_only), ClientLifecycleMode::Initialize).await;
    let found = k.find_reranked(QUERY).await;
    assert_eq!(found["applied"]["late_rerank"], "applied", "{found}");
    k.stop().await;
    // Signed by a key the operator does not trust.
    let theirs = copy(&rust_reranker_wasm(), dir, "theirs.wasm");
    sign(&stranger, &theirs);
    let signed = registry.reference("kura/stranger:1");
    push(&theirs, &signed);
    let (ok, said, err) = pull(&f, &signed, &[strict[0], strict[1]]);
    assert!(!ok, "{said}");
    assert!(
        err.contains(&format!(
            "is signed by key {}, which is not one of PLUGIN_TRUSTED_KEYS",
            stranger.id
        )),
        "{err}"
    );
    // A file whose bytes changed after it was signed.
    let changed = copy(&rust_reranker_wasm(), dir, "changed.wasm");
    sign(&trusted, &changed);
    std::fs::copy(reranker_wasm(), &changed).unwrap();
    let plugin = format!("reranker={}", changed.display());
    let err = refused_start(
        &f,
        &[
            "--manuals-root",
            &manuals,
            "--plugin",
            &plugin,
            "--set",
            &trust,
        ],
    );
    assert!(
        err.contains(&format!(
            "its signature by key {} does not hold",
            trusted.id
        )),
        "{err}"
    );
    f.assert_canary_untouched();
}

#[tokio::test]
async fn components_move_between_kura_and_another_oci_tool() {
    // ORAS's Python client pushes a component in the Wasm artifact layout;
    // kura pulls it. kura pushes one; ORAS pulls the same bytes.
    let f = Fixture::new();
    let dir = f.dir.path();
    let registry = Registry::start();
    let wasm = copy(&rust_reranker_wasm(), dir, "reranker.wasm");
    let script = dir.join("oras_tool.py");
    std::fs::write(
        &script,
        r#"import json, sys
import oras.client
verb, host, target, path = sys.argv[1:5]
client = oras.client.OrasClient(hostname=host, insecure=True)
if verb == "push":
    with open("config.json", "w") as f:
        json.dump({"architecture": "wasm", "os": "wasip2", "layerDigests": [], "component": {"exports": [], "imports": []}}, f)
    client.push(target=target, files=[path + ":application/wasm"],
                manifest_config="config.json:application/vnd.wasm.config.v0+json",
                disable_path_validation=True)
else:
    manifest = client.get_manifest(target)
    print(manifest["config"]["mediaType"], *[l["mediaType"] for l in manifest["layers"]])
    print(*client.pull(target=target, outdir=path))
"#,
    )
    .unwrap();
    let oras = |verb: &str, target: &str, path: &Path| {
        run(Command::new(oras_python())
            .current_dir(dir)
            .arg(&script)
            .args([verb, &registry.host, target])
            .arg(path))
    };
    oras(
        "push",
        &format!("{}/theirs/reranker:1", registry.host),
        &wasm,
    );
    let (ok, said, err) = pull(&f, &registry.reference("theirs/reranker:1"), &[]);
    assert!(ok, "{said}{err}");
    assert!(
        value_of(&said, "digest").starts_with(&digest_of(&wasm)),
        "{said}"
    );
    assert!(said.contains("world reranker"), "{said}");
    push(&wasm, &registry.reference("ours/reranker:1"));
    let out = dir.join("pulled");
    let said = oras("pull", &format!("{}/ours/reranker:1", registry.host), &out);
    let mut lines = said.lines();
    assert_eq!(
        lines.next(),
        Some("application/vnd.wasm.config.v0+json application/wasm")
    );
    let file = PathBuf::from(lines.next().unwrap().trim());
    assert_eq!(
        file,
        out.join("reranker.wasm"),
        "named by the layer's title"
    );
    assert_eq!(std::fs::read(file).unwrap(), std::fs::read(&wasm).unwrap());
}
