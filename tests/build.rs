//! Builds the hostile test component for wasm32-wasip2.

#![allow(clippy::disallowed_methods)]

include!("../build/guest.rs");

fn main() {
    let path = build_guest("kura-hostile-policy", &["fixtures/components/hostile"]);
    println!("cargo:rustc-env=KURA_TEST_HOSTILE_WASM={}", path.display());
}
