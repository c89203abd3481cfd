//! kura's end-to-end tests, one module per subject, in one test binary:
//! kura, tokio and the MCP client are compiled into it and linked once,
//! where one binary per subject spent 715 s of a cold build's 2,043 s of
//! compile time doing it 29 times. One subject: `cargo test --release -p
//! kura-tests --test it SUBJECT::`.

mod bases;
mod bridge;
mod build;
mod bundle;
mod concurrency;
mod confirm;
mod conformance;
mod crashes;
mod demo;
mod doctor;
mod embed;
mod eval;
mod examples;
mod fuse;
mod grants;
mod hardening;
mod http;
mod index_upgrade;
mod inspector;
mod locks;
mod manual_find;
mod manual_rules;
mod oauth;
mod plugins;
mod protocol;
mod python_sdk;
mod registry;
mod sandbox;
mod security;
mod setup;
mod synonyms;
mod tasks;
mod undo;
mod vault_audit;
mod vault_find;
mod vault_graph;
mod vault_rules;
mod vibe_context;
mod vibe_tools;
mod write_faults;
mod write_races;
