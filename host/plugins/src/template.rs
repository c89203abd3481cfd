//! `kura plugins new --lang rust|python|js SLOT DIR`: a ready-to-build
//! component. The folder gets the source, kura's WIT (so it builds without
//! this repository) and a README with the exact build and check commands.
//! The sources live in `components/templates/` and `components/examples/`
//! (the tests build every one of them).

use std::path::{Path, PathBuf};

use crate::config::Slot;

const TYPES_WIT: &str = include_str!("../../../wit/types.wit");
const WORLDS_WIT: &str = include_str!("../../../wit/worlds.wit");

/// The versions the guide documents and the tests use.
pub const COMPONENTIZE_PY: &str = "componentize-py==0.25.1";
pub const COMPONENTIZE_JS: &str = "@bytecodealliance/componentize-js@0.23.0";

/// The source of a slot in a language: (file name, text).
fn source(lang: &str, slot: Slot) -> Result<(&'static str, String), String> {
    // The examples build against the repository's `wit/`; a new folder
    // has its own copy.
    let own_wit = |s: &str| s.replace("../../../wit", "wit");
    Ok(match (lang, slot) {
        ("python", Slot::Reranker) => (
            "app.py",
            own_wit(include_str!(
                "../../../components/examples/python-reranker/app.py"
            )),
        ),
        ("python", Slot::ClaimGraph) => (
            "app.py",
            include_str!("../../../components/templates/python/claim_graph.py").into(),
        ),
        ("python", Slot::Auditor) => (
            "app.py",
            include_str!("../../../components/templates/python/auditor.py").into(),
        ),
        ("python", Slot::WritePolicy) => (
            "app.py",
            include_str!("../../../components/templates/python/write_policy.py").into(),
        ),
        ("python", Slot::Embedder) => (
            "app.py",
            include_str!("../../../components/templates/python/embedder.py").into(),
        ),
        ("js", Slot::Reranker) => (
            "component.js",
            own_wit(include_str!(
                "../../../components/examples/js-reranker/reranker.js"
            )),
        ),
        ("js", Slot::ClaimGraph) => (
            "component.js",
            include_str!("../../../components/templates/js/claim_graph.js").into(),
        ),
        ("js", Slot::Auditor) => (
            "component.js",
            include_str!("../../../components/templates/js/auditor.js").into(),
        ),
        ("js", Slot::WritePolicy) => (
            "component.js",
            own_wit(include_str!(
                "../../../components/examples/js-write-policy/policy.js"
            )),
        ),
        ("js", Slot::Embedder) => (
            "component.js",
            include_str!("../../../components/templates/js/embedder.js").into(),
        ),
        ("rust", Slot::Reranker) => (
            "src/lib.rs",
            include_str!("../../../components/templates/rust/reranker.rs").into(),
        ),
        ("rust", Slot::ClaimGraph) => (
            "src/lib.rs",
            include_str!("../../../components/templates/rust/claim_graph.rs").into(),
        ),
        ("rust", Slot::Auditor) => (
            "src/lib.rs",
            include_str!("../../../components/templates/rust/auditor.rs").into(),
        ),
        ("rust", Slot::WritePolicy) => (
            "src/lib.rs",
            include_str!("../../../components/templates/rust/write_policy.rs").into(),
        ),
        ("rust", Slot::Embedder) => (
            "src/lib.rs",
            own_wit(include_str!(
                "../../../components/examples/rust-embedder/src/lib.rs"
            )),
        ),
        _ => return Err(format!("unknown language `{lang}` (rust, python or js)")),
    })
}

/// The command that builds the component, run in its folder.
pub fn build_command(lang: &str, slot: Slot) -> Result<String, String> {
    Ok(match lang {
        "python" => format!("componentize-py -d wit -w {slot} componentize app -o {slot}.wasm"),
        "js" => format!(
            "componentize-js component.js --wit wit -n {slot} -d http fetch-event -o {slot}.wasm"
        ),
        "rust" => format!(
            "cargo build --release --target wasm32-wasip2 && cp target/wasm32-wasip2/release/{}.wasm {slot}.wasm",
            crate_name(slot).replace('-', "_")
        ),
        _ => return Err(format!("unknown language `{lang}` (rust, python or js)")),
    })
}

fn crate_name(slot: Slot) -> String {
    format!("kura-{slot}-plugin")
}

fn install(lang: &str) -> String {
    match lang {
        "python" => format!("python3 -m venv .venv && .venv/bin/pip install '{COMPONENTIZE_PY}'"),
        "js" => format!("npm install {COMPONENTIZE_JS}   (then run it as npx componentize-js)"),
        _ => "rustup target add wasm32-wasip2".into(),
    }
}

/// What to do next, for the terminal and the README.
pub fn next_steps(lang: &str, slot: Slot, dir: &Path) -> Result<String, String> {
    Ok(format!(
        "Next, in {dir}:\n  1. install the toolchain: {install}\n  2. build:   {build}\n  3. check:   kura plugins check {slot}.wasm\n  4. use it:  [plugins] {slot} = \"{abs}/{slot}.wasm\"  (or --plugin {slot}={slot}.wasm)\n",
        dir = dir.display(),
        install = install(lang),
        build = build_command(lang, slot)?,
        abs = dir.display(),
    ))
}

/// Write the template into `dir` (created; it must be empty if it exists).
pub fn write(lang: &str, slot: Slot, dir: &Path) -> Result<Vec<PathBuf>, String> {
    let (name, text) = source(lang, slot)?;
    let mut files: Vec<(String, String)> = vec![
        (name.to_owned(), text),
        ("wit/types.wit".into(), TYPES_WIT.into()),
        ("wit/worlds.wit".into(), WORLDS_WIT.into()),
        (
            "README.md".into(),
            format!(
                "# A kura {slot} component ({lang})\n\nThe world it implements is `{slot}` in `wit/worlds.wit`; \
                 the records are in `wit/types.wit`, each documented with what kura does with it.\n\n{}\n\
                 The guide: docs/plugins.md in kura's repository.\n",
                next_steps(lang, slot, Path::new("."))?
            ),
        ),
    ];
    if lang == "rust" {
        files.push((
            "Cargo.toml".into(),
            include_str!("../../../components/templates/rust/Cargo.toml.in")
                .replace("{name}", &crate_name(slot)),
        ));
    }
    crate::fs::write_new_tree(dir, &files).map_err(|e| format!("{}: {e}", dir.display()))
}
