//! A domain: one kind of knowledge kura serves — the manuals, the vault, the
//! bridge between them, the vibe workspaces. Each is declared once by a
//! [`Spec`] (its name, the root it is served from and how, the domains it
//! needs, how it opens, how its errors read) and, once open, is a
//! [`Domain`]: what it starts at start-up, what `kura index` does for it, and
//! the MCP surfaces beyond its tools. The server's `App` opens the domains
//! of its `DOMAINS` list in order and asks each open one; adding a domain is
//! a crate with its `Spec` and one line in that list.
//!
//! A tool is declared here too ([`tool::ToolDef`]): each domain lists its
//! own, and the server lists them all.

// The layers below, under the names this crate's modules use.
use kura_core::{args, config, error, fs, heap, job, text};
use kura_index as index;
use kura_plugins as plugins;

use std::any::Any;
use std::path::Path;
use std::sync::Arc;

use crate::config::Config;
use crate::error::{Error, Result};
use crate::fs::{Root, StateDir};
use crate::index::SyncStats;
use crate::plugins::{LoadError, Plugins};
pub use tool::{Effect, Handler, ToolDef, Typed};

pub mod catalog;
pub mod history;
pub mod search;
pub mod surface;
pub mod tool;

pub use catalog::{Catalog, Profile};

/// Why the server cannot start: one readable line.
#[derive(Debug, thiserror::Error)]
pub enum StartError {
    #[error(transparent)]
    Config(#[from] crate::config::ConfigError),
    #[error("{name} ({path}): {message}")]
    Root {
        name: String,
        path: String,
        message: String,
    },
    #[error(transparent)]
    Plugin(#[from] LoadError),
    #[error("tools: `{0}` is neither a tool nor a domain (manual, vault, vibe, bridge)")]
    Profile(String),
}

/// A domain's declaration.
pub struct Spec {
    /// What a `tools` profile names for the whole domain ("vault").
    pub name: &'static str,
    /// The root it is served from (None: it works on other domains).
    pub root: Option<RootSpec>,
    /// How `initialize`'s instructions name what it serves, `{tools}`
    /// standing for its tools served (None: it goes unnamed).
    pub offer: Option<&'static str>,
    /// Its tools, in the order tools/list gives them.
    pub tools: &'static [ToolDef],
    /// The domains that must be open for this one to be.
    pub needs: &'static [&'static Spec],
    /// Open it on its root (or on the domains it needs).
    pub open: fn(Opening<'_>) -> Result<Arc<dyn Domain>, StartError>,
    /// Its tools' errors as its clients read them (vibe: seed 002's codes).
    pub errors: fn(Error) -> Error,
}

impl PartialEq for Spec {
    fn eq(&self, other: &Spec) -> bool {
        self.name == other.name
    }
}

impl Eq for Spec {}

impl std::fmt::Debug for Spec {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str(self.name)
    }
}

/// The errors of a domain whose clients read kura's own codes.
pub fn as_is(e: Error) -> Error {
    e
}

/// Where a domain's root is configured and how kura uses it.
pub struct RootSpec {
    /// The setting that names it (`vault_root`).
    pub setting: &'static str,
    pub path: fn(&Config) -> Option<&Path>,
    /// Whether kura writes there (else the sandbox allows only reading).
    pub writable: bool,
}

/// What a domain is opened with.
pub struct Opening<'a> {
    /// Its root, opened and checked (None for a domain without one).
    pub root: Option<Root>,
    pub config: &'a Config,
    pub plugins: &'a Arc<Plugins>,
    pub state: Option<&'a StateDir>,
    /// The domains opened before it.
    pub open: &'a Domains,
}

impl Opening<'_> {
    /// The root of a domain that has one.
    pub fn root(&mut self) -> Root {
        self.root
            .take()
            .expect("a domain with a root is opened with it")
    }

    /// The state folder's path, where indexes are kept.
    pub fn state_path(&self) -> Option<&Path> {
        self.state.map(StateDir::path)
    }

    /// Where its sentence encoder comes from.
    pub fn encoder(&self) -> search::encoder::Source {
        search::encoder::Source {
            state_dir: self.state_path().map(Path::to_owned),
            plugins: Some(self.plugins.clone()),
            enabled: self.config.dense_search_enabled,
        }
    }
}

/// An open domain.
pub trait Domain: Any + Send + Sync {
    fn spec(&self) -> &'static Spec;

    /// Work to run on a thread of its own from start-up (the first index
    /// sync), so that `initialize` never waits for it.
    fn start_up(self: Arc<Self>) -> Option<StartUp> {
        None
    }

    /// What it serves beyond tools (resources, prompts, completions), if
    /// anything.
    fn surfaces(self: Arc<Self>) -> Option<Arc<dyn surface::Surfaces>> {
        None
    }

    /// Bring its index up to date now (`kura index`): one line of figures,
    /// or None when it keeps no index.
    fn index_now(&self, _: &IndexNow<'_>) -> Result<Option<String>> {
        Ok(None)
    }

    /// What a call of `tool` with `args` would do that its user may
    /// regret (a folder deleted or moved, many notes' links rewritten, a
    /// note replaced), in one line to ask them about; None when the call
    /// needs no confirmation (or its arguments are wrong: the call itself
    /// then says so).
    fn confirmation(
        &self,
        _tool: &str,
        _args: &serde_json::Map<String, serde_json::Value>,
    ) -> Option<String> {
        None
    }
}

/// A domain's start-up work: what a sync did, if it ran.
pub type StartUp = Box<dyn FnOnce() -> Result<Option<SyncStats>> + Send>;

/// What `kura index` asks of each domain.
pub struct IndexNow<'a> {
    /// Rebuild every file, not only the changed ones.
    pub full: bool,
    /// Only this vibe project.
    pub project: Option<&'a str>,
    /// (domain, files done, files in all).
    pub progress: &'a (dyn Fn(&'static str, u64, u64) + Sync),
}

impl IndexNow<'_> {
    /// One line of `kura index`'s figures.
    pub fn line(what: &str, s: SyncStats, ms: u128) -> String {
        format!(
            "{what}: {} files scanned, {} added, {} updated, {} deleted, {} unchanged in {ms} ms",
            s.scanned, s.added, s.updated, s.deleted, s.unchanged
        )
    }
}

/// The open domains, in the order they were opened.
#[derive(Default)]
pub struct Domains(Vec<Arc<dyn Domain>>);

impl Domains {
    pub fn push(&mut self, d: Arc<dyn Domain>) {
        self.0.push(d);
    }

    pub fn iter(&self) -> impl Iterator<Item = &Arc<dyn Domain>> {
        self.0.iter()
    }

    pub fn is_empty(&self) -> bool {
        self.0.is_empty()
    }

    /// Whether `spec`'s domain is open.
    pub fn serves(&self, spec: &Spec) -> bool {
        self.0.iter().any(|d| d.spec() == spec)
    }

    /// The open domain of type `T`, if it is open.
    pub fn find<T: Domain>(&self) -> Option<&T> {
        self.0.iter().find_map(|d| {
            let any: &dyn Any = &**d;
            any.downcast_ref::<T>()
        })
    }

    /// [`Domains::find`], shared.
    pub fn shared<T: Domain>(&self) -> Option<Arc<T>> {
        self.0.iter().find_map(|d| {
            let any: Arc<dyn Any + Send + Sync> = d.clone();
            any.downcast::<T>().ok()
        })
    }

    /// The open domain of type `T` (a tool of a domain that is not open is
    /// never served, so this fails only on a bug).
    pub fn get<T: Domain>(&self) -> Result<&T> {
        self.find::<T>()
            .ok_or_else(|| Error::internal(format!("{} is not open", std::any::type_name::<T>())))
    }
}
