//! The build itself: what one command builds, the next one reuses.

use std::collections::{BTreeMap, BTreeSet};
use std::process::Command;

/// Each package of a `cargo tree` selection with the feature sets it is
/// built with (a package built for build scripts and for the target
/// appears with two).
fn resolved(args: &[&str]) -> BTreeMap<String, BTreeSet<String>> {
    let cargo = std::env::var("CARGO").unwrap_or_else(|_| "cargo".into());
    let out = kura_tests::succeeded(
        Command::new(cargo)
            .current_dir(kura_tests::workspace())
            .args(["tree", "--locked", "--prefix", "none"])
            .args(["--format", "{p}|{f}"])
            .args(args),
    );
    let mut packages: BTreeMap<String, BTreeSet<String>> = BTreeMap::new();
    for line in String::from_utf8_lossy(&out).lines() {
        let line = line.trim_end_matches(" (*)");
        if let Some((package, features)) = line.split_once('|') {
            packages
                .entry(package.to_owned())
                .or_default()
                .insert(features.to_owned());
        }
    }
    packages
}

/// Cargo turns a dependency's features on by what the command selects:
/// `cargo build -p kura` (the main job) would build differently from
/// `cargo test --workspace` every crate below a feature only the tests or
/// the benches turn on (51 crates, 277 s), unless kura turns it on too. It
/// does, in its manifest; this keeps the two resolutions the same.
#[test]
fn the_main_job_reuses_the_test_build() {
    let main_job = resolved(&["-p", "kura", "-e", "normal,build"]);
    let tests = resolved(&["--workspace", "-e", "normal,build,dev"]);
    let differ: Vec<String> = main_job
        .iter()
        .filter_map(|(package, features)| {
            let other = tests.get(package)?;
            (features != other).then(|| format!("{package}: {features:?} / {other:?}"))
        })
        .collect();
    assert!(
        differ.is_empty(),
        "built with other features by `cargo build -p kura` than by `cargo test --workspace` \
         (turn them on in host/Cargo.toml):\n{}",
        differ.join("\n")
    );
}
