//! Lists the demo's files (vault, manuals, vibe workspace) for `demo` to embed.

#![allow(clippy::disallowed_methods)] // a build script reads the source tree

fn main() {
    embed_demo();
}

fn embed_demo() {
    let mut out = String::new();
    embed_tree(
        &mut out,
        "fixtures/demo/vault",
        "DEMO_FILES",
        "The demo vault, embedded at build time.",
    );
    embed_tree(
        &mut out,
        "fixtures/manuals",
        "DEMO_MANUALS",
        "The demo manuals (a CC BY 4.0 subset of vue-docs-ja), embedded at build time.",
    );
    embed_tree(
        &mut out,
        "fixtures/demo/vibe",
        "DEMO_VIBE",
        "The demo vibe workspace (two projects), embedded at build time.",
    );
    let dest = std::path::Path::new(&std::env::var("OUT_DIR").unwrap()).join("demo_files.rs");
    std::fs::write(dest, out).unwrap();
}

/// Append `pub const NAME: &[(&str, &[u8])]` listing every file under `tree`.
fn embed_tree(out: &mut String, tree: &str, name: &str, doc: &str) {
    let root = std::path::Path::new(env!("CARGO_MANIFEST_DIR"))
        .join("..")
        .join(tree);
    println!("cargo:rerun-if-changed={}", root.display());
    let mut files = Vec::new();
    let mut stack = vec![root.clone()];
    while let Some(dir) = stack.pop() {
        for entry in std::fs::read_dir(&dir).expect(tree) {
            let entry = entry.unwrap();
            let path = entry.path();
            println!("cargo:rerun-if-changed={}", path.display());
            if entry.file_type().unwrap().is_dir() {
                stack.push(path);
            } else {
                let rel = path
                    .strip_prefix(&root)
                    .unwrap()
                    .to_string_lossy()
                    .replace('\\', "/");
                files.push((rel, path.canonicalize().unwrap()));
            }
        }
    }
    files.sort();
    out.push_str(&format!(
        "/// {doc}\npub const {name}: &[(&str, &[u8])] = &[\n"
    ));
    for (rel, abs) in files {
        out.push_str(&format!(
            "    ({rel:?}, include_bytes!({:?})),\n",
            abs.display().to_string()
        ));
    }
    out.push_str("];\n");
}
