//! The assembled server state: configuration, open roots, loaded plugins,
//! and the one dispatch from a tool name to its domain function.

use std::path::Path;
use std::sync::Arc;

use serde_json::{Map, Value};

use crate::args::Args;
use crate::config::{Config, ConfigError};
use crate::error::Result;
use crate::fs::{Root, StateDir};
use crate::job::Job;
use crate::manual::{FindSettings, Manuals, ManualsConfig};
use crate::plugins::{LoadError, Plugins};
use crate::tools::{Domains, Profile, TOOLS, ToolDef};
use crate::vault::Vault;
use crate::vibe::Vibe;

pub struct App {
    pub config: Config,
    pub domains: Domains,
    pub plugins: Arc<Plugins>,
    /// The configuration's `read_only` and `tools`, checked at start.
    pub profile: Profile,
}

/// Why the server cannot start: one readable line.
#[derive(Debug, thiserror::Error)]
pub enum StartError {
    #[error(transparent)]
    Config(#[from] ConfigError),
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

fn open_root(name: &'static str, path: &Path, max_file_bytes: u64) -> Result<Root, StartError> {
    Root::open(path)
        .map(|r| r.with_max_file_bytes(max_file_bytes))
        .map_err(|e| StartError::Root {
            name: name.to_ascii_uppercase(),
            path: path.display().to_string(),
            message: match e.kind() {
                std::io::ErrorKind::NotFound => "does not exist".to_owned(),
                std::io::ErrorKind::NotADirectory => "is not a folder".to_owned(),
                _ => e.to_string(),
            },
        })
}

/// Run an index's first sync on a thread of its own, logging the outcome.
fn spawn_sync(
    what: &'static str,
    sync: impl FnOnce() -> Result<Option<crate::index::SyncStats>> + Send + 'static,
) {
    let spawned = std::thread::Builder::new()
        .name(format!("kura-{what}-index"))
        .spawn(move || {
            let t = std::time::Instant::now();
            match sync() {
                Ok(Some(s)) => tracing::info!(
                    added = s.added,
                    updated = s.updated,
                    deleted = s.deleted,
                    unchanged = s.unchanged,
                    ms = t.elapsed().as_millis() as u64,
                    "{what} index ready"
                ),
                Ok(None) => {}
                Err(e) => tracing::warn!("{what} index: {}", e.message),
            }
        });
    if let Err(e) = spawned {
        tracing::warn!("cannot index the {what}s in the background ({e}); the first search will");
    }
}

/// The roots and the state folder opened and checked, before any thread
/// starts: the point where the process can confine itself
/// ([`Opened::sandbox`]) and still start everything after.
pub struct Opened {
    config: Config,
    roots: Vec<(&'static str, Root)>,
    state: Option<StateDir>,
}

impl App {
    /// Open the roots, check them, load the plugins.
    pub fn start(config: Config) -> Result<App, StartError> {
        Self::open(config)?.start()
    }

    /// Open and check the roots and the state folder; no thread is started.
    pub fn open(config: Config) -> Result<Opened, StartError> {
        if let Some(p) = Profile::of(&config).unknown_entry() {
            return Err(StartError::Profile(p.to_owned()));
        }
        let mut roots: Vec<(&'static str, Root)> = Vec::new();
        for (name, path) in [
            ("vault_root", &config.vault_root),
            ("manuals_root", &config.manuals_root),
            ("vibe_root", &config.vibe_root),
        ] {
            if let Some(p) = path {
                roots.push((name, open_root(name, p, config.max_file_bytes as u64)?));
            }
        }
        let named: Vec<(&str, &Path)> = roots.iter().map(|(n, r)| (*n, r.path())).collect();
        Config::check_roots(&named)?;
        if let Some(p) = config.state_dir() {
            Config::check_state_dir(&crate::fs::resolve_path(&p), &named)?;
        }
        let state = config.state_dir().and_then(|p| match StateDir::open(&p) {
            Ok(s) => Some(s),
            Err(e) => {
                tracing::warn!(
                    "state folder {} is not usable ({e}); running without a cache",
                    p.display()
                );
                None
            }
        });
        Ok(Opened {
            config,
            roots,
            state,
        })
    }
}

impl Opened {
    /// What the process may reach once confined: the opened roots (the
    /// manuals read-only), the state folder, the components' folders.
    pub fn sandbox(&self) -> crate::fs::sandbox::Plan {
        let mut plan = crate::fs::sandbox::Plan::default();
        for (name, root) in &self.roots {
            match *name {
                "manuals_root" => plan.read.push(root.path().to_path_buf()),
                _ => plan.write.push(root.path().to_path_buf()),
            }
        }
        plan.write
            .extend(self.state.as_ref().map(|s| s.path().to_path_buf()));
        plan.with_components(&self.config)
    }

    /// Load the plugins and open the domains (their indexes and watchers).
    pub fn start(self) -> Result<App, StartError> {
        let Opened {
            config,
            roots,
            state,
        } = self;
        let plugins = Arc::new(Plugins::load(&config, state.as_ref())?);
        let mut vault = None;
        let mut manuals = None;
        let mut vibe = None;
        let max_chars = config.scan_max_chars as usize;
        for (name, root) in roots {
            match name {
                "vault_root" => {
                    let index = crate::vault::index::open(&root, state.as_ref().map(|s| s.path()));
                    vault = Some(Arc::new(Vault {
                        index,
                        root,
                        plugins: plugins.clone(),
                        max_chars,
                        coverage_min_ratio: config.coverage_min_ratio,
                        marginal_gain_min: config.marginal_gain_min,
                    }))
                }
                "manuals_root" => {
                    let m = Manuals::new(
                        root,
                        plugins.clone(),
                        ManualsConfig {
                            allow_file_scope: config.allow_file_scope,
                            max_chars,
                            state_dir: state.as_ref().map(|s| s.path().to_owned()),
                            find: FindSettings {
                                default_manual_id: config.default_manual_id.clone(),
                                late_rerank: config.late_rerank_enabled
                                    || config.plugins.reranker.path.is_some(),
                                claim_graph: config.claim_graph_enabled,
                                corrective: config.corrective_enabled,
                                cache_default: config.sem_cache_enabled,
                                cache_max_gap: config.sem_cache_max_summary_gap,
                                cache_max_conflict: config.sem_cache_max_summary_conflict,
                                coverage_weight: config.sparse_query_coverage_weight,
                            },
                            trace_ttl: std::time::Duration::from_secs(
                                config.trace_ttl_sec.max(1) as u64
                            ),
                            trace_max_keep: config.trace_max_keep.max(1) as usize,
                        },
                    )
                    .map_err(|e| StartError::Root {
                        name: "MANUALS_ROOT".into(),
                        path: config
                            .manuals_root
                            .as_ref()
                            .map(|p| p.display().to_string())
                            .unwrap_or_default(),
                        message: e.message,
                    })?;
                    manuals = Some(Arc::new(m))
                }
                _ => {
                    vibe = Some(Arc::new(Vibe::new(root, state.as_ref().map(|s| s.path()))));
                }
            }
        }
        Ok(App {
            profile: Profile::of(&config),
            config,
            domains: Domains {
                vault,
                manuals,
                vibe,
            },
            plugins,
        })
    }
}

impl App {
    /// Start indexing in the background: `initialize` never waits for it, and
    /// the first search waits only for what is left.
    pub fn index_in_background(&self) {
        if let Some(v) = &self.domains.vault {
            let v = v.clone();
            spawn_sync("vault", move || {
                v.root.sweep_temp_files();
                v.index.refresh(&v.root)
            });
        }
        if let Some(m) = &self.domains.manuals {
            let m = m.clone();
            spawn_sync("manual", move || Ok(m.refresh_stats()?.1));
        }
        if let Some(v) = &self.domains.vibe {
            let v = v.clone();
            spawn_sync("vibe", move || {
                v.root.sweep_temp_files();
                v.index.refresh(&v.root)
            });
        }
    }

    /// Bring every configured index up to date now (`kura index`): the vibe
    /// workspace as its reindex tool does (`full`, `project`), the vault
    /// (`full`), the manuals (a re-check). `progress` gets (domain, files
    /// done, files in all). Returns one line of figures per domain.
    pub fn index_now(
        &self,
        full: bool,
        project: Option<&str>,
        progress: &(dyn Fn(&'static str, u64, u64) + Sync),
    ) -> Result<Vec<String>> {
        let mut out = Vec::new();
        let line = |what: &str, s: crate::index::SyncStats, ms: u128| {
            format!(
                "{what}: {} files scanned, {} added, {} updated, {} deleted, {} unchanged in {ms} ms",
                s.scanned, s.added, s.updated, s.deleted, s.unchanged
            )
        };
        if let Some(v) = &self.domains.vibe {
            let input = crate::vibe::ReindexInput {
                project: project.map(str::to_owned),
                full: Some(full),
            };
            let report = |done, total| progress("vibe", done, total);
            let r = v.reindex(input, Job::reporting(&report))?;
            out.push(line("vibe", r.stats.files, r.stats.duration_ms as u128));
        }
        if let Some(v) = &self.domains.vault {
            let t = std::time::Instant::now();
            let report = |done, total| progress("vault", done, total);
            let options = crate::index::SyncOptions {
                full,
                job: Job::reporting(&report),
                ..Default::default()
            };
            let s = v.index.sync(&v.root, &options)?;
            out.push(line("vault", s, t.elapsed().as_millis()));
        }
        if let Some(m) = &self.domains.manuals {
            let t = std::time::Instant::now();
            let s = m.recheck()?;
            out.push(line("manuals", s, t.elapsed().as_millis()));
        }
        Ok(out)
    }

    /// The names of the tools this configuration serves: those of the
    /// configured roots, only the read-only ones with `read_only`, only the
    /// named ones (or those of the named domains) with `tools`.
    pub fn tool_names(&self) -> Vec<&'static str> {
        TOOLS
            .iter()
            .filter(|t| self.serves(t))
            .map(|t| t.name)
            .collect()
    }

    fn serves(&self, t: &ToolDef) -> bool {
        self.domains.serves(t.domain) && self.profile.admits(t)
    }

    /// Run one tool. Unknown tools are the caller's (a JSON-RPC error).
    pub fn call(&self, tool: &str, args: Option<&Map<String, Value>>) -> Option<Result<Value>> {
        self.call_with(tool, args, Job::default())
    }

    /// [`App::call`] as a job: progress reports out (reindex), cancellation
    /// in (reindex, manual_find). A tool not served is unknown.
    pub fn call_with(
        &self,
        tool: &str,
        args: Option<&Map<String, Value>>,
        job: Job,
    ) -> Option<Result<Value>> {
        let def = crate::tools::find(tool).filter(|t| self.serves(t))?;
        #[cfg(feature = "fault-injection")]
        crate::fault::panic_in(tool);
        Some(def.call(&self.domains, Args::new(args), job))
    }

    /// A served tool's error for a call cancelled before it ran.
    pub fn cancelled(&self, tool: &str) -> Option<crate::error::Error> {
        let def = crate::tools::find(tool).filter(|t| self.serves(t))?;
        Some(def.cancelled())
    }
}
