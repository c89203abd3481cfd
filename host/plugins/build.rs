//! Builds the default plugin components for wasm32-wasip2, embedded by this
//! crate (the write policy's baseline is native code, not among them).

#![allow(clippy::disallowed_methods)] // a build script reads the source tree

include!("../../build/guest.rs");

/// Default components: (package, environment variable naming the built wasm).
const GUESTS: &[(&str, &str)] = &[
    ("kura-reranker", "KURA_WASM_RERANKER"),
    ("kura-claim-graph", "KURA_WASM_CLAIM_GRAPH"),
    ("kura-auditor", "KURA_WASM_AUDITOR"),
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
}
