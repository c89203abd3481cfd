//! `kura models install`'s second part: the Sudachi synonym dictionary,
//! fetched as the pinned npm package (`npm pack`), checked against its
//! pinned digest, turned into kura's plain form (one group a line) and kept
//! in the state folder. Nothing here runs while serving.

use std::io::Read;
use std::path::Path;
use std::process::Command;

use serde::Deserialize;

use crate::fs::StateDir;
use crate::manual::synonyms::{INSTALLED, INSTALLED_LICENSE, INSTALLED_MANIFEST, PACKAGE, VERSION};

/// The SHA-256 of the pinned package's tarball.
const SHA256: &str = "f59fdcfdffac935a5ae6c73baa112f2d22f3220c958f6327e8fa304e1f5e6dec";
const TARBALL: &str = "sudachi-synonyms-dictionary-18.0.0.tgz";
const DICTIONARY: &str = "package/sudachi-synonyms-dictionary.json";
const LICENSE: &str = "package/LICENSE";

/// One group of the package's dictionary (the fields kura uses).
#[derive(Deserialize)]
struct Group {
    items: Vec<Item>,
}

#[derive(Deserialize)]
#[serde(rename_all = "camelCase")]
struct Item {
    /// 0: expands and is expanded to; 1: only expanded to; 2: never used.
    expand_control: u8,
    midashi: String,
}

/// The package's dictionary in kura's form: a line per group, a word that
/// must not start an expansion written `>word`, words never to be used
/// (flag 2) left out.
fn plain(groups: &[Group]) -> String {
    let mut out = String::from("# Sudachi synonym dictionary (Apache-2.0), in kura's form\n");
    for g in groups {
        let words: Vec<String> = g
            .items
            .iter()
            .filter(|i| i.expand_control != 2 && !i.midashi.contains(','))
            .map(|i| match i.expand_control {
                1 => format!(">{}", i.midashi.trim()),
                _ => i.midashi.trim().to_owned(),
            })
            .collect();
        if words.len() >= 2 {
            out.push_str(&words.join(","));
            out.push('\n');
        }
    }
    out
}

/// The tarball, from `from` or fetched with `npm pack` into a temporary
/// folder.
fn fetch(from: Option<&Path>, npm: &Path) -> Result<Vec<u8>, String> {
    if let Some(path) = from {
        return crate::fs::read_operator_file(path)
            .map_err(|e| format!("cannot read {}: {e}", path.display()));
    }
    let tmp = tempfile::tempdir().map_err(|e| e.to_string())?;
    eprintln!("kura: fetching {PACKAGE}@{VERSION} with npm");
    let status = Command::new(npm)
        .args(["pack", "--silent", "--pack-destination"])
        .arg(tmp.path())
        .arg(format!("{PACKAGE}@{VERSION}"))
        .stdout(std::process::Stdio::null())
        .status()
        .map_err(|e| format!("cannot run {}: {e}", npm.display()))?;
    if !status.success() {
        return Err(format!(
            "npm could not fetch {PACKAGE}@{VERSION} ({status}); with the tarball at hand, use --synonyms-from FILE"
        ));
    }
    crate::fs::read_operator_file(&tmp.path().join(TARBALL))
        .map_err(|e| format!("npm left no {TARBALL}: {e}"))
}

/// The dictionary and license of `tarball`, once its digest is the pinned one.
fn unpack(tarball: &[u8]) -> Result<(Vec<u8>, Vec<u8>), String> {
    let got = kura_embed::wheel::sha256_hex(tarball);
    if got != SHA256 {
        return Err(format!(
            "{TARBALL} has SHA-256 {got}, not the pinned {SHA256}: not the package kura was built for"
        ));
    }
    let (mut dictionary, mut license) = (None, None);
    let mut archive = tar::Archive::new(flate2::read::GzDecoder::new(tarball));
    for entry in archive.entries().map_err(|e| e.to_string())? {
        let mut entry = entry.map_err(|e| e.to_string())?;
        let path = entry.path().map_err(|e| e.to_string())?.into_owned();
        let slot = match path.to_str() {
            Some(DICTIONARY) => &mut dictionary,
            Some(LICENSE) => &mut license,
            _ => continue,
        };
        let mut bytes = Vec::new();
        entry.read_to_end(&mut bytes).map_err(|e| e.to_string())?;
        *slot = Some(bytes);
    }
    match (dictionary, license) {
        (Some(d), Some(l)) => Ok((d, l)),
        _ => Err(format!("{TARBALL} lacks {DICTIONARY} or {LICENSE}")),
    }
}

pub(super) const KEPT: super::package::Kept = super::package::Kept {
    label: "synonyms",
    package: PACKAGE,
    version: VERSION,
    sha256: SHA256,
    fetcher: "npm",
    without: "queries are not expanded",
    file: INSTALLED,
    license: INSTALLED_LICENSE,
    manifest: INSTALLED_MANIFEST,
};

/// Fetch, check, convert and keep the dictionary (its manifest last, so a
/// folder without it is an install that did not finish).
pub(super) fn install(state: &StateDir, from: Option<&Path>, npm: &Path) -> Result<(), String> {
    let tarball = fetch(from, npm)?;
    let (dictionary, license) = unpack(&tarball)?;
    let groups: Vec<Group> = serde_json::from_slice(&dictionary)
        .map_err(|e| format!("{DICTIONARY} is not the dictionary kura expects: {e}"))?;
    let text = plain(&groups);
    let parsed = kura_text::synonyms::Synonyms::parse(&text);
    let dir = KEPT.keep(state, text.as_bytes(), &license)?;
    println!(
        "installed {PACKAGE} {VERSION} (SHA-256 {SHA256}): {} groups at {}",
        parsed.groups(),
        dir.display()
    );
    Ok(())
}

#[cfg(test)]
mod tests {
    use super::*;

    fn item(flag: u8, word: &str) -> Item {
        Item {
            expand_control: flag,
            midashi: word.into(),
        }
    }

    #[test]
    fn the_packages_flags_become_kuras_form() {
        let groups = vec![
            Group {
                items: vec![
                    item(0, "一覧表"),
                    item(1, "一覧"),
                    item(1, "リスト"),
                    item(2, "一欄"),
                ],
            },
            Group {
                items: vec![item(0, "孤立"), item(2, "弧立")],
            },
        ];
        let text = plain(&groups);
        assert!(text.contains("\n一覧表,>一覧,>リスト\n"), "{text}");
        assert!(!text.contains("孤立"), "a group of one word is left out");
    }

    #[test]
    fn a_forged_tarball_is_refused() {
        let err = unpack(b"not the package").unwrap_err();
        assert!(err.contains("not the pinned"), "{err}");
    }
}
