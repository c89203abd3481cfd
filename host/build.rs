//! Builds the default plugin components for wasm32-wasip2 (embedded by
//! `plugins`), and lists the demo vault's files for `demo` to embed.

#![allow(clippy::disallowed_methods)] // a build script reads the source tree

include!("../build/guest.rs");

/// Default components: (package, environment variable naming the built wasm).
const GUESTS: &[(&str, &str)] = &[
    ("kura-write-policy", "KURA_WASM_WRITE_POLICY"),
    ("kura-reranker", "KURA_WASM_RERANKER"),
    ("kura-claim-graph", "KURA_WASM_CLAIM_GRAPH"),
];

fn main() {
    for (package, var) in GUESTS {
        let path = build_guest(
            package,
            &[
                &format!("components/{}", package.trim_start_matches("kura-")),
                "text",
            ],
        );
        println!("cargo:rustc-env={var}={}", path.display());
    }
    embed_demo();
}

fn embed_demo() {
    let root = std::path::Path::new(env!("CARGO_MANIFEST_DIR")).join("../fixtures/demo/vault");
    println!("cargo:rerun-if-changed={}", root.display());
    let mut files = Vec::new();
    let mut stack = vec![root.clone()];
    while let Some(dir) = stack.pop() {
        for entry in std::fs::read_dir(&dir).expect("fixtures/demo/vault") {
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
    let mut out = String::from(
        "/// The demo vault, embedded at build time.\npub const DEMO_FILES: &[(&str, &[u8])] = &[\n",
    );
    for (rel, abs) in files {
        out.push_str(&format!(
            "    ({rel:?}, include_bytes!({:?})),\n",
            abs.display().to_string()
        ));
    }
    out.push_str("];\n");
    let dest = std::path::Path::new(&std::env::var("OUT_DIR").unwrap()).join("demo_files.rs");
    std::fs::write(dest, out).unwrap();
}
