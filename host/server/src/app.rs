//! The assembled server state: configuration, open roots, loaded plugins,
//! and the one dispatch from a tool name to its domain function.

use std::path::Path;
use std::sync::Arc;

use serde_json::{Map, Value};

use crate::args::Args;
use crate::config::Config;
use crate::domain::history::{Call, Who};
use crate::domain::{Catalog, Profile, ToolDef};
use crate::domain::{Domains, IndexNow, Opening, Spec, StartError};
use crate::error::Result;
use crate::fs::{Root, StateDir};
use crate::job::Job;
use crate::plugins::Plugins;

pub struct App {
    pub config: Config,
    /// The domains and tools kura knows (those open are in `domains`).
    pub catalog: Catalog,
    pub domains: Domains,
    pub plugins: Arc<Plugins>,
    /// The configuration's `read_only` and `tools`, checked at start.
    pub profile: Profile,
}

fn open_root(name: &str, path: &Path, max_file_bytes: u64) -> Result<Root, StartError> {
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
                Ok(Some(s)) => {
                    tracing::info!(
                        added = s.added,
                        updated = s.updated,
                        deleted = s.deleted,
                        unchanged = s.unchanged,
                        ms = t.elapsed().as_millis() as u64,
                        "{what} index ready"
                    );
                    // A first build's buffers are freed now; keep none of
                    // their pages.
                    crate::heap::give_back();
                }
                // A search got there first: the start-up had nothing to do.
                Ok(None) => tracing::info!("{what} index ready (already up to date)"),
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
    catalog: Catalog,
    /// The roots opened, with the domain each is for.
    roots: Vec<(&'static Spec, Root)>,
    state: Option<StateDir>,
}

impl App {
    /// Open the roots, check them, load the plugins.
    pub fn start(config: Config, catalog: Catalog) -> Result<App, StartError> {
        Self::open(config, catalog)?.start()
    }

    /// Open and check the roots and the state folder; no thread is started.
    pub fn open(config: Config, catalog: Catalog) -> Result<Opened, StartError> {
        if let Some(p) = Profile::of(&config).unknown_entry(catalog) {
            return Err(StartError::Profile(p.to_owned()));
        }
        let mut roots: Vec<(&'static Spec, Root)> = Vec::new();
        for spec in catalog.domains() {
            let Some(r) = &spec.root else { continue };
            if let Some(p) = (r.path)(&config) {
                let root = open_root(r.setting, p, config.max_file_bytes as u64)?;
                roots.push((spec, root));
            }
        }
        let named: Vec<(&str, &Path)> = roots
            .iter()
            .filter_map(|(s, r)| Some((s.root.as_ref()?.setting, r.path())))
            .collect();
        Config::check_roots(&named)?;
        if let Some(p) = config.state_dir() {
            Config::check_state_dir(&crate::fs::resolve_path(&p), &named)?;
        }
        let state = match config.state_dir().map(|p| (StateDir::open(&p), p)) {
            None => None,
            Some((Ok(s), _)) => {
                // What a killed kura was writing there (a journal, the
                // cache, the lock), from folders no live write holds.
                let swept = s.sweep_temp();
                if swept > 0 {
                    tracing::info!("removed {swept} stale temporary files from the state folder");
                }
                Some(s)
            }
            // Another user could plant code or journals there: no start.
            Some((Err(e), p)) if crate::fs::Exposed::is(&e) => {
                return Err(StartError::Root {
                    name: "STATE_DIR".into(),
                    path: p.display().to_string(),
                    message: e.to_string(),
                });
            }
            Some((Err(e), p)) => {
                tracing::warn!(
                    "state folder {} is not usable ({e}); running without a cache",
                    p.display()
                );
                None
            }
        };
        Ok(Opened {
            config,
            catalog,
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
        for (spec, root) in &self.roots {
            let writable = spec.root.as_ref().is_some_and(|r| r.writable);
            let rule = if writable {
                &mut plan.write
            } else {
                &mut plan.read
            };
            rule.push(root.path().to_path_buf());
        }
        plan.write
            .extend(self.state.as_ref().map(|s| s.path().to_path_buf()));
        plan.with_components(&self.config)
    }

    /// Load the plugins and open the domains (their indexes and watchers).
    pub fn start(self) -> Result<App, StartError> {
        let Opened {
            config,
            catalog,
            roots,
            state,
        } = self;
        let plugins = Arc::new(Plugins::load(&config, state.as_ref())?);
        // The roots were opened in the catalog's order.
        let mut roots = roots.into_iter().peekable();
        let mut domains = Domains::default();
        for spec in catalog.domains() {
            let root = roots.next_if(|(s, _)| *s == spec).map(|(_, r)| r);
            if spec.root.is_some() && root.is_none() {
                continue;
            }
            if !spec.needs.iter().all(|n| domains.serves(n)) {
                continue;
            }
            let opening = Opening {
                root,
                config: &config,
                plugins: &plugins,
                state: state.as_ref(),
                open: &domains,
            };
            let domain = (spec.open)(opening)?;
            domains.push(domain);
        }
        Ok(App {
            profile: Profile::of(&config),
            config,
            catalog,
            domains,
            plugins,
        })
    }
}

impl App {
    /// Start indexing in the background: `initialize` never waits for it, and
    /// the first search waits only for what is left.
    pub fn index_in_background(&self) {
        for d in self.domains.iter() {
            if let Some(work) = d.clone().start_up() {
                spawn_sync(d.spec().name, work);
            }
        }
    }

    /// Bring every open domain's index up to date now (`kura index`), in the
    /// domains' order: the vault (`full`), the manuals (a re-check), the
    /// vibe workspace as its reindex tool does (`full`, `project`).
    /// `progress` gets (domain, files done, files in all). Returns one line
    /// of figures per domain.
    pub fn index_now(
        &self,
        full: bool,
        project: Option<&str>,
        progress: &(dyn Fn(&'static str, u64, u64) + Sync),
    ) -> Result<Vec<String>> {
        let now = IndexNow {
            full,
            project,
            progress,
        };
        let mut out = Vec::new();
        for d in self.domains.iter() {
            out.extend(d.index_now(&now)?);
        }
        Ok(out)
    }

    /// The names of the tools this configuration serves: those of the
    /// configured roots, only the read-only ones with `read_only`, only the
    /// named ones (or those of the named domains) with `tools`.
    pub fn tool_names(&self) -> Vec<&'static str> {
        self.catalog
            .tools()
            .filter(|t| self.serves(t))
            .map(|t| t.name)
            .collect()
    }

    fn serves(&self, t: &ToolDef) -> bool {
        self.domains.serves(t.domain) && self.profile.admits(t)
    }

    /// Run one tool. Unknown tools are the caller's (a JSON-RPC error).
    pub fn call(&self, tool: &str, args: Option<&Map<String, Value>>) -> Option<Result<Value>> {
        self.call_with(tool, args, Job::default(), &Who::terminal("call"))
    }

    /// [`App::call`] as a job: progress reports out (reindex), cancellation
    /// in (reindex, manual_find), made by `who`. A tool not served is
    /// unknown. What a call changes is one change in each root's history,
    /// recorded before the result goes back.
    pub fn call_with(
        &self,
        tool: &str,
        args: Option<&Map<String, Value>>,
        job: Job,
        who: &Who,
    ) -> Option<Result<Value>> {
        let def = self.catalog.find(tool).filter(|t| self.serves(t))?;
        // Reads record nothing (their arguments are not even kept), but
        // learn who calls (`session: "current"`).
        let kept = if def.effect.read_only() { None } else { args };
        let _change = Call::begin(tool, kept, who);
        Some(kura_core::fault::call(tool, || {
            def.call(&self.domains, Args::new(args), job)
        }))
    }

    /// The question to ask before running `tool` with `args` (the
    /// `confirm` setting, the tool's domain's judgement), if any.
    pub fn confirmation(&self, tool: &str, args: Option<&Map<String, Value>>) -> Option<String> {
        use crate::config::Confirm;
        // Only a tool that may overwrite or remove is ever asked about: the
        // calls of every other tool pass without a look at their arguments.
        let def = self
            .catalog
            .find(tool)
            .filter(|t| matches!(t.effect, crate::domain::Effect::Destructive { .. }))
            .filter(|t| self.serves(t))?;
        let none = Map::new();
        let judged = || {
            self.domains
                .iter()
                .find(|d| d.spec() == def.domain)
                .and_then(|d| d.confirmation(tool, args.unwrap_or(&none)))
        };
        match self.config.confirm {
            Confirm::Never => None,
            Confirm::Destructive => judged(),
            Confirm::Always => judged().or_else(|| {
                Some(format!(
                    "Run {tool}? It may overwrite or remove what is there."
                ))
            }),
        }
    }

    /// The error of a call its user declined to confirm.
    pub fn declined(&self, tool: &str, asked: &str) -> Option<crate::error::Error> {
        Some(self.catalog.find(tool)?.declined(asked))
    }

    /// The error of a call whose question failed (`why`): not run.
    pub fn unconfirmed(&self, tool: &str, asked: &str, why: &str) -> Option<crate::error::Error> {
        Some(self.catalog.find(tool)?.unconfirmed(asked, why))
    }

    /// A served tool's error for a call cancelled before it ran.
    pub fn cancelled(&self, tool: &str) -> Option<crate::error::Error> {
        let def = self.catalog.find(tool).filter(|t| self.serves(t))?;
        Some(def.cancelled())
    }
}
