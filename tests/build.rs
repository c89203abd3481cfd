//! Builds the test components for wasm32-wasip2: the hostile policy and
//! copies of the default reranker and auditor.

#![allow(clippy::disallowed_methods)]

include!("../build/guest.rs");

fn main() {
    let path = build_guest("kura-hostile-policy", &["fixtures/components/hostile"]);
    println!("cargo:rustc-env=KURA_TEST_HOSTILE_WASM={}", path.display());
    // A write policy whose `check` has another signature.
    let path = build_guest("kura-mistyped-policy", &["fixtures/components/mistyped"]);
    println!("cargo:rustc-env=KURA_TEST_MISTYPED_WASM={}", path.display());
    // A reranker that uses its slot's grants (HTTP, a folder, variables).
    let path = build_guest("kura-granted-reranker", &["fixtures/components/granted"]);
    println!("cargo:rustc-env=KURA_TEST_GRANTED_WASM={}", path.display());
    // The default reranker as a file, to configure it like a user's own.
    let path = build_guest("kura-reranker", &["components/reranker", "text"]);
    println!("cargo:rustc-env=KURA_TEST_RERANKER_WASM={}", path.display());
    // The Rust twin of the Python and JavaScript example rerankers.
    let path = build_guest(
        "kura-example-reranker",
        &["components/examples/rust-reranker"],
    );
    println!(
        "cargo:rustc-env=KURA_TEST_EXAMPLE_RERANKER_WASM={}",
        path.display()
    );
    // The Rust embedder example (also the Rust embedder template).
    let path = build_guest(
        "kura-example-embedder",
        &["components/examples/rust-embedder"],
    );
    println!(
        "cargo:rustc-env=KURA_TEST_EXAMPLE_EMBEDDER_WASM={}",
        path.display()
    );
    // The default auditor as a file, to swap it in by configuration.
    let path = build_guest("kura-auditor", &["components/auditor", "text"]);
    println!("cargo:rustc-env=KURA_TEST_AUDITOR_WASM={}", path.display());
}
