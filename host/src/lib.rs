//! kura: one stdio MCP server over manuals, a markdown vault and vibe project
//! workspaces.
//!
//! The host owns the transport ([`server`]), the filesystem ([`fs`], the only
//! module that touches files) and the plugin runtime ([`plugins`]). Domain
//! modules ([`vault`], [`manual`], [`bridge`], [`vibe`]) hold each tool's logic and return typed results or an
//! [`error::Error`] carrying a SPEC code; [`server`] maps both to MCP results.

pub mod app;
pub mod args;
pub mod bench;
pub mod bridge;
pub mod client;
pub mod config;
pub mod demo;
pub mod domain;
pub mod error;
pub mod eval;
#[cfg(feature = "fault-injection")]
pub mod fault;
pub mod fs;
pub mod index;
pub mod job;
pub mod manual;
pub mod plugins;
pub mod policy;
pub mod scan;
pub mod server;
pub mod text;
pub mod tools;
pub mod vault;
pub mod vibe;
