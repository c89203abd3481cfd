//! kura: one MCP server over manuals, a markdown vault and vibe project
//! workspaces. This crate is the `kura` command (CLI, demo, eval, bench,
//! client) on top of the layers, each a crate of its own, re-exported here
//! under the names the tests and the tools use:
//!
//! - `kura-core`: [`config`], [`error`], [`fs`] (the only module that touches
//!   files), [`args`], [`job`], [`heap`], [`text`], [`scan`], [`policy`];
//! - `kura-index`: [`index`]; `kura-plugins`: [`plugins`];
//! - `kura-domain`: [`domain`] (what a domain and a tool are);
//! - the domains: [`manual`], [`vault`], [`vibe`], [`bridge`];
//! - `kura-server`: [`server`], with [`app`].
//!
//! The domains kura serves are named once, in [`CATALOG`]; [`tools`] lists
//! their tools.

pub use kura_bridge as bridge;
pub use kura_core::fault;
pub use kura_core::{args, config, error, fs, heap, job, lock, policy, scan, text};
pub use kura_domain as domain;
pub use kura_embed as embed;
pub use kura_history as history;
pub use kura_index as index;
pub use kura_manual as manual;
pub use kura_plugins as plugins;
pub use kura_registry as registry;
pub use kura_server as server;
pub use kura_server::app;
pub use kura_vault as vault;
pub use kura_vibe as vibe;

pub mod bench;
pub mod cli;
pub mod client;
pub mod demo;
pub mod eval;
pub mod tools;

/// Every domain kura serves, in the order they are opened, listed in
/// docs/tools.md and indexed by `kura index`: adding a domain is its crate
/// and one line here.
static DOMAINS: &[&domain::Spec] = &[
    &vault::DOMAIN,
    &manual::DOMAIN,
    &bridge::DOMAIN,
    &vibe::DOMAIN,
];

/// [`DOMAINS`] and their tools, what the server is started with.
pub static CATALOG: domain::Catalog = domain::Catalog::new(DOMAINS);
