# Developer shortcuts; every recipe is plain cargo underneath.

default: test

fmt:
    cargo fmt --all

lint:
    cargo fmt --all -- --check
    cargo clippy --release --workspace --all-targets -- -D warnings

# The default components are built (for wasm32-wasip2) by kura-plugins' build script.
components:
    cargo build --release -p kura

test:
    rustup target add wasm32-wasip2 && cargo test --release --workspace

# Seeds are `7`, a list `1,5,9` or a range `1..200` / `1..=200`; a failure names its seed, and
# `KURA_SOAK_SEEDS=<seed>` with the same cargo command runs exactly it again.
# the seeded sweeps (write faults, races) over many seeds, not CI's one: just soak SEEDS=1..200
soak *ARGS:
    #!/usr/bin/env bash
    set -euo pipefail
    seeds=1..=20
    for a in {{ARGS}}; do
        case $a in SEEDS=*) seeds=${a#SEEDS=} ;; *) echo "just soak SEEDS=...: what is $a?" >&2; exit 2 ;; esac
    done
    cargo build --release -p kura
    KURA_SOAK_SEEDS=$seeds cargo test --release -p kura-tests --test it -- write_faults:: write_races:: crashes::

# the crash simulator alone over many seeds (six sequences each): just soak-history SEEDS=1..500
soak-history *ARGS:
    #!/usr/bin/env bash
    set -euo pipefail
    seeds=1..=200
    for a in {{ARGS}}; do
        case $a in SEEDS=*) seeds=${a#SEEDS=} ;; *) echo "just soak-history SEEDS=...: what is $a?" >&2; exit 2 ;; esac
    done
    cargo build --release -p kura -p kura-tests
    KURA_SOAK_SEEDS=$seeds cargo test --release -p kura-tests --test it -- crashes::

# The inner loop while changing one crate: its unit tests, then one subject
# of the end-to-end tests (a module of tests/tests/it/; empty: all of them),
# which drive the kura binary: it is built first (`-p` alone would not).
test-fast crate subject="":
    cargo test --release -p {{crate}}
    cargo build --release -p kura
    cargo test --release -p kura-tests --test it {{subject}}

bench:
    cargo run --release -p kura -- bench

# manual search at scale: 10,000 files / ~100 MB, with the SQLite FTS5 baseline
bench-manual:
    cargo build --release -p kura -p kura-bench
    target/release/kura-bench run --rounds 8

# vault_find and artifact_audit at scale: a generated 5,000-note vault
bench-vault:
    cargo build --release -p kura -p kura-bench
    target/release/kura-bench vault --rounds 5

# vibe workspaces at scale: 11,500 generated documents
bench-vibe:
    cargo build --release -p kura -p kura-bench
    target/release/kura-bench vibe --rounds 5

bench-http:
    cargo build --release -p kura -p kura-bench
    target/release/kura-bench http

# retrieval quality on the gold set, with A/B switches
eval:
    cargo run --release -p kura -- eval

demo:
    cargo run --release -p kura -- demo

inspector:
    cargo build --release -p kura
    npx @modelcontextprotocol/inspector ./target/release/kura serve --demo

# the same reranker natively and in Rust, Python and JS components (the tests build the examples)
bench-plugins:
    cargo test --release -p kura-tests --test it -- examples::reranker_example
    target/release/kura-bench plugins --rounds 50

# the same, with the JavaScript example also compiled ahead of time (componentize-js --aot). Its
# partial evaluator, weval, is built from source the first time (about 10 minutes): its own
# installer downloads a binary from outside the package registries.
bench-plugins-aot:
    cargo install weval --version 0.5.0 --locked --root target/toolchains/weval
    cargo test --release -p kura-tests --test it -- examples::reranker_example
    cd components/examples/js-reranker && ../../../target/toolchains/componentize-js/node_modules/.bin/componentize-js reranker.js --wit ../../../wit -n reranker -d http fetch-event --aot --weval-bin ../../../target/toolchains/weval/bin/weval -o ../../../target/examples/js-reranker-aot.wasm
    target/release/kura-bench plugins --rounds 50

# cargo-fuzz targets (path, args, markdown, scan, framing, http, model), a minute each. cargo-fuzz wants
# nightly's -Z flags; RUSTC_BOOTSTRAP lets the pinned stable toolchain take them. (CI builds,
# lints and runs the targets' bodies, fuzz/src, on sample inputs; `libfuzzer` adds the entries.)
fuzz seconds="60":
    cargo install cargo-fuzz --locked
    for t in path args markdown scan framing http model; do RUSTC_BOOTSTRAP=1 cargo fuzz run -O --features libfuzzer --target-dir target/fuzz $t -- -max_total_time={{seconds}} || exit 1; done

# An MCP Bundle for Claude Desktop with this platform's binary: target/kura.mcpb
# (validated and packed by the official mcpb CLI, the version the tests use).
bundle:
    cargo build --release -p kura
    rm -rf target/mcpb target/kura.mcpb
    target/release/kura bundle target/mcpb
    npx --yes @anthropic-ai/mcpb@2.1.2 validate target/mcpb/manifest.json
    npx --yes @anthropic-ai/mcpb@2.1.2 pack target/mcpb target/kura.mcpb
