// Shared by the build scripts of `kura-plugins` and `tests` (included with `include!`):
// builds a guest crate of this workspace for wasm32-wasip2, the way wasmtime's
// own test-programs are built, into a target folder of its own so that the
// outer cargo's lock is never waited on.

fn build_guest(package: &str, watch: &[&str]) -> std::path::PathBuf {
    use std::path::PathBuf;
    use std::process::Command;

    let manifest_dir = PathBuf::from(std::env::var("CARGO_MANIFEST_DIR").unwrap());
    // The workspace root: the nearest folder above that holds `wit/`.
    let workspace = manifest_dir
        .ancestors()
        .find(|d| d.join("wit").is_dir())
        .expect("the crate lies inside the kura workspace")
        .to_path_buf();
    for w in watch {
        println!("cargo:rerun-if-changed={}", workspace.join(w).display());
    }
    println!("cargo:rerun-if-changed={}", workspace.join("wit").display());
    let target_dir = std::env::var_os("CARGO_TARGET_DIR")
        .map(PathBuf::from)
        .unwrap_or_else(|| workspace.join("target"))
        .join("guests");
    let cargo = std::env::var("CARGO").unwrap_or_else(|_| "cargo".into());
    let mut cmd = Command::new(cargo);
    cmd.current_dir(&workspace)
        .args(["build", "--release", "--target", "wasm32-wasip2", "-p", package])
        .arg("--target-dir")
        .arg(&target_dir);
    for var in [
        "CARGO_ENCODED_RUSTFLAGS",
        "RUSTFLAGS",
        "CARGO_BUILD_TARGET",
        "CARGO_TARGET_DIR",
        "RUSTC_WORKSPACE_WRAPPER",
        "CARGO_MAKEFLAGS",
        "MAKEFLAGS",
        "MFLAGS",
    ] {
        cmd.env_remove(var);
    }
    let status = cmd.status().expect("run cargo to build a wasm guest");
    if !status.success() {
        panic!(
            "building the wasm component `{package}` failed. If the message above says the \
             wasm32-wasip2 target is missing, run `rustup target add wasm32-wasip2`."
        );
    }
    let file = format!("{}.wasm", package.replace('-', "_"));
    target_dir.join("wasm32-wasip2").join("release").join(file)
}
