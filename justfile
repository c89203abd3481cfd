# Developer shortcuts; every recipe is plain cargo underneath.

default: test

fmt:
    cargo fmt --all

lint:
    cargo fmt --all -- --check
    cargo clippy --release --workspace --all-targets -- -D warnings

# The default components are built (for wasm32-wasip2) by the host's build script.
components:
    cargo build --release -p kura

test:
    rustup target add wasm32-wasip2 && cargo test --release --workspace

bench:
    cargo run --release -p kura -- bench

demo:
    cargo run --release -p kura -- demo

inspector:
    cargo build --release -p kura
    npx @modelcontextprotocol/inspector ./target/release/kura serve --demo
