//! `kura doctor`: what a person would otherwise debug by hand, one line
//! each, with the fix — the configuration in force, the roots, the state
//! folder, the model and dictionaries, the plugin slots, the sandbox the
//! kernel allows, OAuth's issuer, each root's history against its
//! retention, and the clients that have kura. Exits
//! non-zero when something would stop kura from serving.

use std::path::{Path, PathBuf};

use clap::Args as ClapArgs;
use serde::Serialize;

use super::settings::{Settings, config_file, load_config};
use crate::config::Config;
use crate::fs::{Root, StateDir};

#[derive(ClapArgs, Clone)]
pub struct DoctorArgs {
    #[command(flatten)]
    pub settings: Settings,
    /// Also check this OAuth file: its issuer's metadata and keys reachable.
    #[arg(long, value_name = "FILE")]
    pub oauth: Option<PathBuf>,
    /// Also check this bearer-token file (`serve --http --token-file`).
    #[arg(long, value_name = "FILE")]
    pub token_file: Option<PathBuf>,
    /// Also check that `serve --http ADDR` could listen there now.
    #[arg(long, value_name = "ADDR")]
    pub http: Option<std::net::SocketAddr>,
    /// One JSON object (the findings and whether any failed) instead of lines.
    #[arg(long)]
    pub json: bool,
}

#[derive(Clone, Copy, Debug, PartialEq, Eq, Serialize)]
#[serde(rename_all = "snake_case")]
enum Status {
    Ok,
    /// Works, but less than it could (no model, no sandbox, ...).
    Warn,
    /// kura cannot serve this way.
    Fail,
}

#[derive(Debug, Serialize)]
struct Finding {
    area: &'static str,
    status: Status,
    says: String,
    #[serde(skip_serializing_if = "Option::is_none")]
    fix: Option<String>,
}

#[derive(Default)]
struct Report(Vec<Finding>);

impl Report {
    fn add(&mut self, area: &'static str, status: Status, says: impl Into<String>) -> &mut Finding {
        self.0.push(Finding {
            area,
            status,
            says: says.into(),
            fix: None,
        });
        self.0.last_mut().expect("just pushed")
    }

    fn failed(&self) -> bool {
        self.0.iter().any(|f| f.status == Status::Fail)
    }
}

impl Finding {
    fn fix(&mut self, fix: impl Into<String>) -> &mut Finding {
        self.fix = Some(fix.into());
        self
    }
}

pub fn run(a: &DoctorArgs) -> Result<(), String> {
    let mut r = Report::default();
    match config_file(&a.settings) {
        Some(p) => r.add("config", Status::Ok, format!("file {}", p.display())),
        None => r.add(
            "config",
            Status::Ok,
            "no file: defaults, the environment and flags",
        ),
    };
    let set: Vec<String> = crate::config::env_names()
        .into_iter()
        .filter(|v| std::env::var_os(v).is_some())
        .collect();
    if !set.is_empty() {
        r.add(
            "config",
            Status::Ok,
            format!("from the environment: {}", set.join(", ")),
        );
    }
    match load_config(&a.settings) {
        Ok(config) => checks(&mut r, &config, a),
        Err(e) => {
            r.add("config", Status::Fail, e)
                .fix("correct the setting named, or run with --config pointing at another file");
        }
    }
    clients(&mut r);
    if a.json {
        let out = serde_json::json!({ "failed": r.failed(), "findings": r.0 });
        println!("{out:#}");
    } else {
        for f in &r.0 {
            let mark = match f.status {
                Status::Ok => "ok  ",
                Status::Warn => "warn",
                Status::Fail => "FAIL",
            };
            println!("{mark} {:<8} {}", f.area, f.says);
            if let Some(fix) = &f.fix {
                println!("              → {fix}");
            }
        }
    }
    if r.failed() {
        Err("kura cannot serve as configured (FAIL above)".into())
    } else {
        Ok(())
    }
}

fn checks(r: &mut Report, config: &Config, a: &DoctorArgs) {
    roots(r, config);
    locks(r, config);
    let state = state(r, config);
    if let Some(state) = &state {
        models(r, state);
        history(r, config, state);
    }
    plugins(r, config, state.as_ref());
    sandbox(r, config);
    zone(r);
    if let Some(file) = &a.oauth {
        oauth(r, file);
    }
    if let Some(file) = &a.token_file {
        tokens(r, file);
    }
    if let Some(addr) = a.http {
        match std::net::TcpListener::bind(addr) {
            Ok(_) => r.add("http", Status::Ok, format!("{addr} is free to listen on")),
            Err(e) => r
                .add(
                    "http",
                    Status::Fail,
                    format!("cannot listen on {addr}: {e}"),
                )
                .fix("another program holds it (another kura?): pick another port"),
        };
    }
}

/// The time zone dates are read and shown in (Bases' `date()`, `today()`,
/// `"1d"` added on its calendar), and where it comes from.
fn zone(r: &mut Report) {
    let from = |var: &str| std::env::var(var).ok().filter(|v| !v.is_empty());
    let (name, source) = match (from("KURA_TZ"), from("TZ")) {
        // KURA_TZ was made TZ as kura started.
        (Some(z), _) => (z, "KURA_TZ"),
        (None, Some(z)) => (z, "TZ"),
        (None, None) => (
            iana_time_zone::get_timezone().unwrap_or_else(|_| "unknown".into()),
            "the machine's; KURA_TZ sets another",
        ),
    };
    let offset = chrono::Local::now().format("%:z");
    r.add(
        "time zone",
        Status::Ok,
        format!("dates in {name} ({source}), UTC{offset} now"),
    );
}

/// The token file parses: how many tokens, and each profile's shape.
fn tokens(r: &mut Report, file: &Path) {
    let parsed = crate::fs::read_operator_file(file)
        .map_err(|e| e.to_string())
        .and_then(|b| crate::server::Tokens::parse(&String::from_utf8_lossy(&b), crate::CATALOG));
    match parsed {
        Ok(t) => r.add("http", Status::Ok, format!("{}: {} token(s)", file.display(), t.len())),
        Err(e) => r
            .add("http", Status::Fail, format!("token file {}: {e}", file.display()))
            .fix("one token (16+ characters) per line, optionally followed by `read_only` or `tools=...`"),
    };
}

/// Each root: configured, there, readable, writable where kura writes,
/// and whether its file system folds case.
fn roots(r: &mut Report, config: &Config) {
    let roots: [(&str, &Option<PathBuf>, bool, &str); 3] = [
        (
            "manuals",
            &config.manuals_root,
            false,
            "MANUALS_ROOT or --manuals-root",
        ),
        (
            "vault",
            &config.vault_root,
            true,
            "VAULT_ROOT or --vault-root",
        ),
        ("vibe", &config.vibe_root, true, "VIBE_ROOT or --vibe-root"),
    ];
    if roots.iter().all(|(_, p, _, _)| p.is_none()) {
        r.add(
            "roots",
            Status::Fail,
            "no root is configured: kura would serve nothing",
        )
        .fix("set VAULT_ROOT, MANUALS_ROOT or VIBE_ROOT (or try `kura serve --demo`)");
        return;
    }
    for (name, path, writes, how) in roots {
        let Some(path) = path else {
            r.add(
                "roots",
                Status::Ok,
                format!("{name}: not configured ({how})"),
            );
            continue;
        };
        let shown = path.display();
        match Root::open(path) {
            Err(e) => {
                r.add("roots", Status::Fail, format!("{name}: {shown}: {e}"))
                    .fix(format!(
                        "create the folder or point {how} at an existing one"
                    ));
            }
            Ok(root) => {
                let case = if root.folds_case() {
                    " (case-insensitive file system: `Note.md` and `note.md` are one file)"
                } else {
                    ""
                };
                if writes && !crate::fs::writable(path) {
                    r.add(
                        "roots",
                        Status::Fail,
                        format!("{name}: {shown} is not writable{case}"),
                    )
                    .fix(format!(
                        "give this user write permission on {shown}, or serve with --read-only"
                    ));
                } else if writes {
                    new_names(r, name, &shown.to_string(), &root, case);
                } else {
                    r.add(
                        "roots",
                        Status::Ok,
                        format!("{name}: {shown}, read-only{case}"),
                    );
                }
            }
        }
    }
}

/// A writable root, and how its file system lets kura give a file a new
/// name only while that name is free (creates and moves take one): a
/// mount without RENAME_NOREPLACE or hard links (`rclone mount`) works
/// with a weaker guarantee, said here.
fn new_names(r: &mut Report, name: &str, shown: &str, root: &Root, case: &str) {
    use crate::fs::NoReplace;
    match root.probe_no_replace() {
        Ok(way) => {
            let status = if way == NoReplace::Checked {
                Status::Warn
            } else {
                Status::Ok
            };
            r.add(
                "roots",
                status,
                format!(
                    "{name}: {shown}, read-write{case}; new names by {}",
                    way.describe()
                ),
            );
        }
        Err(e) => {
            r.add(
                "roots",
                Status::Fail,
                format!("{name}: {shown}: a file cannot be given a new name there ({e}): creates and moves would fail"),
            )
            .fix("serve this root from a file system that can rename files, or with --read-only");
        }
    }
}

/// The locks in force in each writable root: the locked folders, and the
/// notes whose front matter locks them.
fn locks(r: &mut Report, config: &Config) {
    for (name, path) in [("vault", &config.vault_root), ("vibe", &config.vibe_root)] {
        let Some(root) = path.as_ref().and_then(|p| Root::open(p).ok()) else {
            continue;
        };
        let locks = crate::lock::Locks::of(config);
        let mut locked = Vec::new();
        for (p, _) in root
            .walk_files(&crate::fs::RelPath::root())
            .unwrap_or_default()
        {
            let note = matches!(p.extension(), Some("md" | "markdown"));
            if note
                && let Ok((head, _)) = root.read_prefix(&p)
                && locks.check(&p, Some(&head)).is_err()
            {
                locked.push(p.to_string());
            }
        }
        let mut says = format!("{name}: {}", locks.describe().join("; "));
        if !locked.is_empty() {
            let shown: Vec<&str> = locked.iter().take(10).map(String::as_str).collect();
            let more = locked.len().saturating_sub(shown.len());
            let more = if more > 0 {
                format!(" and {more} more")
            } else {
                String::new()
            };
            says.push_str(&format!(
                " — {} locked: {}{more}",
                locked.len(),
                shown.join(", ")
            ));
        }
        r.add("locks", Status::Ok, says);
    }
}

/// The state folder: where, writable, free space, what is in it.
fn state(r: &mut Report, config: &Config) -> Option<StateDir> {
    let Some(path) = config.state_dir() else {
        r.add(
            "state",
            Status::Warn,
            "no state folder: indexes are rebuilt at every start",
        )
        .fix("set STATE_DIR (or --state-dir)");
        return None;
    };
    let shown = path.display().to_string();
    let state = match StateDir::open(&path) {
        Ok(s) => s,
        Err(e) => {
            r.add("state", Status::Fail, format!("{shown}: {e}"))
                .fix("make it writable by this user, or point STATE_DIR elsewhere");
            return None;
        }
    };
    let free = crate::fs::free_bytes(&path).unwrap_or(0);
    let has = |p: &str| state.list(p).map_or(0, |n| n.len());
    let says = format!(
        "{shown}: {:.1} GiB free; {} index(es), {} vector file(s), {} compiled component(s)",
        free as f64 / (1u64 << 30) as f64,
        has("index"),
        has("vectors"),
        has("components")
    );
    if free < 256 << 20 {
        r.add("state", Status::Warn, says)
            .fix("free some space: index updates need room for a copy of what they change");
    } else {
        r.add("state", Status::Ok, says);
    }
    Some(state)
}

/// Each root's history: its size against the settings, and whether the
/// floor holds it over them (its oldest changes then stay past the size).
/// Read only: nothing is recorded or pruned, and no running kura waited for.
fn history(r: &mut Report, config: &Config, state: &StateDir) {
    let retention = crate::domain::history::retention(config);
    for (name, path) in [("vault", &config.vault_root), ("vibe", &config.vibe_root)] {
        let Some(root) = path.as_ref().and_then(|p| Root::open(p).ok()) else {
            continue;
        };
        let m = match crate::history::measure(state, name, &root, retention) {
            Ok(Some(m)) => m,
            Ok(None) => continue, // none yet: made at the first start
            Err(e) => {
                r.add("history", Status::Fail, format!("{name}: {}", e.message))
                    .fix("see the state folder's history/ (git fsck there); until then changes to this root are refused");
                continue;
            }
        };
        let limit = match config.history_max_mb {
            0 => "no size limit".to_owned(),
            mb => format!("limit {mb} MB"),
        };
        let says = format!(
            "{name}: {} change(s), {:.1} MB of packs ({limit}; at least the last {} changes and {} days kept)",
            m.changes,
            m.bytes as f64 / f64::from(1 << 20),
            retention.floor.changes,
            retention.floor.days
        );
        if m.held_by_floor {
            r.add(
                "history",
                Status::Warn,
                format!("{says}: over its size, held there by the floor"),
            )
            .fix("raise HISTORY_MAX_MB, or lower HISTORY_KEEP_CHANGES / HISTORY_KEEP_DAYS to let retention cut deeper");
        } else {
            r.add("history", Status::Ok, says);
        }
    }
}

fn models(r: &mut Report, state: &StateDir) {
    match super::models::encoder(state) {
        Ok(Ok(line)) => {
            r.add("model", Status::Ok, format!("sentence encoder: {line}"));
        }
        Ok(Err(missing)) => {
            r.add("model", Status::Warn, format!("sentence encoder {missing}"))
                .fix("kura models install");
        }
        Err(e) => {
            r.add("model", Status::Fail, format!("sentence encoder: {e}"))
                .fix("kura models install (it writes the model again)");
        }
    }
    for kept in [&super::synonyms::KEPT, &super::lexicon::KEPT] {
        match kept.installed(state) {
            Some(line) => r.add("model", Status::Ok, format!("{}: {line}", kept.label)),
            None => r
                .add(
                    "model",
                    Status::Warn,
                    format!("{} {}", kept.label, kept.missing()),
                )
                .fix("kura models install"),
        };
    }
}

fn plugins(r: &mut Report, config: &Config, state: Option<&StateDir>) {
    let listed = match crate::plugins::check::list(config, state) {
        Ok(l) => l,
        Err(e) => {
            r.add("plugins", Status::Fail, e);
            return;
        }
    };
    for l in listed {
        let who = l.signer.as_deref().unwrap_or("unsigned");
        let digest = l.digest.as_ref().map_or("-", |d| d.short());
        match &l.loaded {
            Ok(Some((origin, _))) => {
                let grants = if l.grants == "none" {
                    String::new()
                } else {
                    format!("; grants: {}", l.grants)
                };
                r.add(
                    "plugins",
                    Status::Ok,
                    format!(
                        "{}: {} ({digest}, {who}, {origin}){grants}",
                        l.slot.name(),
                        l.source
                    ),
                );
            }
            Ok(None) => {
                r.add(
                    "plugins",
                    Status::Ok,
                    format!("{}: {}", l.slot.name(), l.source),
                );
            }
            Err(why) => {
                r.add("plugins", Status::Fail, format!("{}: {}: {why}", l.slot.name(), l.source))
                    .fix(format!(
                        "`kura plugins check FILE` says why; or remove plugins.{} to use the built-in one",
                        l.slot.key()
                    ));
            }
        }
    }
}

/// What the kernel lets kura confine itself to, tried on a thread of its
/// own (Landlock restricts the calling thread only).
fn sandbox(r: &mut Report, config: &Config) {
    if !config.sandbox {
        r.add(
            "sandbox",
            Status::Warn,
            "off (sandbox = false): a bug could reach any file this user can",
        )
        .fix("remove `sandbox = false` / --no-sandbox");
        return;
    }
    let outcome =
        std::thread::spawn(|| crate::fs::sandbox::confine(&crate::fs::sandbox::Plan::default()))
            .join();
    use crate::fs::sandbox::Outcome;
    match outcome {
        Ok(Outcome::Full) => {
            r.add(
                "sandbox",
                Status::Ok,
                "Landlock is fully enforced by this kernel",
            );
        }
        Ok(Outcome::Partial) => {
            r.add(
                "sandbox",
                Status::Warn,
                "Landlock is partly enforced (this kernel's ABI lacks some rights, e.g. TCP rules before Linux 6.7)",
            )
            .fix("a newer kernel enforces every rule");
        }
        Ok(Outcome::Not(why)) => {
            r.add("sandbox", Status::Warn, format!("not available: {why}"))
                .fix("Linux 5.13 or later with Landlock enabled (lsm=landlock,...)");
        }
        Err(_) => {
            r.add("sandbox", Status::Warn, "the probe failed");
        }
    }
}

/// The OAuth file parses, and its issuer's metadata and keys are reachable.
fn oauth(r: &mut Report, file: &Path) {
    use crate::server::oauth::{Http, OAuth, OAuthConfig};
    let config = crate::fs::read_operator_file(file)
        .map_err(|e| e.to_string())
        .and_then(|b| {
            OAuthConfig::parse(&String::from_utf8_lossy(&b), crate::CATALOG, &|k| {
                std::env::var(k).ok()
            })
        });
    let config = match config {
        Ok(c) => c,
        Err(e) => {
            r.add("oauth", Status::Fail, format!("{}: {e}", file.display()))
                .fix("docs/oauth.md describes the file");
            return;
        }
    };
    r.add(
        "oauth",
        Status::Ok,
        format!(
            "tokens from {} for {}; metadata at {}",
            config.issuer(),
            config.resource(),
            config.metadata_url()
        ),
    );
    let probe = Http::new(Http::system_roots()).map(|http| OAuth::new(config, Box::new(http)));
    let result = match probe {
        Ok(o) => tokio::runtime::Builder::new_current_thread()
            .enable_all()
            .build()
            .map_err(|e| e.to_string())
            .and_then(|rt| rt.block_on(o.probe())),
        Err(e) => Err(e),
    };
    match result {
        Ok(line) => r.add("oauth", Status::Ok, line),
        Err(e) => r
            .add(
                "oauth",
                Status::Fail,
                format!("the issuer cannot be reached: {e}"),
            )
            .fix("check the issuer URL and that this machine reaches it"),
    };
}

fn clients(r: &mut Report) {
    let Ok(found) = super::setup::found("kura") else {
        return;
    };
    use super::setup::ClientState;
    for (c, state, path) in found {
        match state {
            ClientState::Configured => {
                r.add(
                    "clients",
                    Status::Ok,
                    format!("{}: kura is configured ({})", c.title, path.display()),
                );
            }
            ClientState::Without | ClientState::NoFileYet => {
                r.add(
                    "clients",
                    Status::Ok,
                    format!("{}: found, without kura", c.title),
                )
                .fix(format!("kura setup {}", c.id));
            }
            ClientState::NotFound => {}
        }
    }
}
