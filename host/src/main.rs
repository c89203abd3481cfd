//! The `kura` command line: parse, set up logging (stderr only), run.

use std::path::PathBuf;
use std::process::ExitCode;

use clap::{Args as ClapArgs, Parser, Subcommand};

use kura::config::{Config, Overrides, default_config_path};

#[derive(Parser)]
#[command(
    name = "kura",
    version,
    about = "An MCP server for manuals, a markdown vault and vibe workspaces"
)]
struct Cli {
    #[command(subcommand)]
    command: Command,
}

#[derive(Subcommand)]
enum Command {
    /// Serve MCP over stdio, or over Streamable HTTP with --http.
    Serve {
        #[command(flatten)]
        settings: Settings,
        /// Serve a temporary copy of the bundled demo data instead of configured roots.
        #[arg(long)]
        demo: bool,
        #[command(flatten)]
        http: HttpFlags,
    },
    /// Tour the bundled demo data as an MCP client would, printing each exchange.
    Demo,
    /// Run one tool with the current configuration and print its result as JSON.
    Call {
        #[command(flatten)]
        settings: Settings,
        /// Tool name, e.g. vault_read.
        tool: String,
        /// Arguments as a JSON object.
        #[arg(default_value = "{}")]
        arguments: String,
    },
    /// Bring the search indexes of the configured roots up to date now, with a progress bar.
    Index {
        #[command(flatten)]
        settings: Settings,
        /// Re-read every file, whatever its size, mtime and hash.
        #[arg(long)]
        full: bool,
        /// Only this vibe project.
        #[arg(long)]
        project: Option<String>,
    },
    /// Inspect, check and precompile plugin components, or start a new one.
    Plugins {
        #[command(subcommand)]
        command: PluginsCommand,
    },
    /// Measure start-up, read/scan latency over stdio and a plugin call.
    Bench(kura::bench::BenchArgs),
    /// Retrieval quality of manual_find on the gold set (hit@5, MRR@5, nDCG@10, ...).
    Eval(kura::eval::EvalArgs),
}

#[derive(Subcommand)]
enum PluginsCommand {
    /// What each slot serves with the current configuration: source, size,
    /// hash, world, compiled or not, limits.
    List {
        #[command(flatten)]
        settings: Settings,
    },
    /// Check a component: its world, its imports, compile time, what it
    /// needs to instantiate, and a call on sample input.
    Check {
        /// The component (.wasm).
        file: PathBuf,
        /// The slot to check it for (default: found from its exports).
        #[arg(long)]
        slot: Option<String>,
        #[command(flatten)]
        settings: Settings,
    },
    /// Compile the configured components into the cache now, so the next
    /// start loads them in milliseconds.
    Precompile {
        #[command(flatten)]
        settings: Settings,
    },
    /// Write a ready-to-build component for a slot in a language.
    New {
        /// rust, python or js.
        #[arg(long)]
        lang: String,
        /// reranker, claim-graph, auditor or write-policy.
        slot: String,
        /// The folder to create (must not exist, or be empty).
        dir: PathBuf,
    },
}

/// `kura serve --http`: where, and who may connect.
#[derive(ClapArgs, Clone, Default)]
pub struct HttpFlags {
    /// Serve Streamable HTTP at this address (e.g. 127.0.0.1:8080; port 0
    /// picks one) on the path /mcp, instead of stdio.
    #[arg(long, value_name = "ADDR")]
    http: Option<std::net::SocketAddr>,
    /// Bearer tokens, one per line, each optionally followed by its profile
    /// (`read_only`, `tools=manual,vault_read`); or KURA_HTTP_TOKENS,
    /// comma-separated.
    #[arg(long, value_name = "FILE", requires = "http")]
    token_file: Option<PathBuf>,
    /// Serve without tokens: only on a loopback address (local clients, tests).
    #[arg(long, requires = "http")]
    no_auth: bool,
    /// A `Host` name (or host:port) to accept besides localhost, 127.0.0.1
    /// and ::1 (repeatable): the names a client reaches this server by.
    #[arg(long = "allow-host", value_name = "NAME", requires = "http")]
    allow_host: Vec<String>,
    /// A browser `Origin` to accept besides the loopback ones, with scheme
    /// (repeatable); requests from any other origin are refused.
    #[arg(long = "allow-origin", value_name = "ORIGIN", requires = "http")]
    allow_origin: Vec<String>,
    /// Close a session after this many seconds without a request.
    #[arg(
        long,
        value_name = "SECONDS",
        default_value_t = 1800,
        requires = "http"
    )]
    session_idle_secs: u64,
    /// Sessions open at once; a client's `initialize` beyond is refused
    /// with 503 until one ends or idles out.
    #[arg(long, value_name = "N", default_value_t = 1000, requires = "http")]
    max_sessions: usize,
}

impl HttpFlags {
    /// The listening socket (bound now, before the process confines
    /// itself) and the options, or why they cannot be.
    fn open(
        &self,
        addr: std::net::SocketAddr,
    ) -> Result<(std::net::TcpListener, kura::server::HttpOptions), String> {
        let tokens = match (&self.token_file, std::env::var("KURA_HTTP_TOKENS").ok()) {
            _ if self.no_auth => {
                if !addr.ip().is_loopback() {
                    return Err(format!(
                        "--no-auth serves anyone who can reach {addr}: it is accepted on a loopback address only"
                    ));
                }
                kura::server::Tokens::default()
            }
            (Some(file), _) => {
                let text = kura::fs::read_operator_file(file)
                    .map_err(|e| format!("cannot read the token file {}: {e}", file.display()))?;
                kura::server::Tokens::parse(&String::from_utf8_lossy(&text), kura::CATALOG)
                    .map_err(|e| format!("token file {}: {e}", file.display()))?
            }
            (None, Some(env)) => {
                kura::server::Tokens::list(&env).map_err(|e| format!("KURA_HTTP_TOKENS: {e}"))?
            }
            (None, None) => {
                return Err(
                    "--http needs bearer tokens: --token-file FILE or KURA_HTTP_TOKENS (or --no-auth on a loopback address)"
                        .into(),
                );
            }
        };
        let listener = std::net::TcpListener::bind(addr)
            .map_err(|e| format!("cannot listen on {addr}: {e}"))?;
        Ok((
            listener,
            kura::server::HttpOptions {
                tokens,
                extra_hosts: self.allow_host.clone(),
                extra_origins: self.allow_origin.clone(),
                idle: std::time::Duration::from_secs(self.session_idle_secs.max(1)),
                max_sessions: self.max_sessions.max(1),
                // Far above any tool's arguments; what a write may carry is
                // bounded again by max_file_bytes.
                max_body_bytes: 32 << 20,
            },
        ))
    }
}

#[derive(ClapArgs, Clone, Default)]
pub struct Settings {
    /// TOML config file (default: the per-user config file, if it exists).
    #[arg(long, value_name = "FILE")]
    config: Option<PathBuf>,
    #[arg(long, value_name = "DIR")]
    vault_root: Option<PathBuf>,
    #[arg(long, value_name = "DIR")]
    manuals_root: Option<PathBuf>,
    #[arg(long, value_name = "DIR")]
    vibe_root: Option<PathBuf>,
    /// Where indexes and compiled components are cached.
    #[arg(long, value_name = "DIR")]
    state_dir: Option<PathBuf>,
    /// Any setting, e.g. --set allow_file_scope=true (repeatable).
    #[arg(long = "set", value_name = "KEY=VALUE")]
    set: Vec<String>,
    /// A component for a plugin slot, e.g. --plugin write_policy=my.wasm (repeatable).
    #[arg(long = "plugin", value_name = "SLOT=WASM")]
    plugin: Vec<String>,
    /// Serve no tool that writes (same as --set read_only=true).
    #[arg(long)]
    read_only: bool,
    /// Serve only these tools or domains, e.g. --tools manual,vault_read (same as --set tools=...).
    #[arg(long, value_name = "LIST")]
    tools: Option<String>,
    /// Do not confine the process with Landlock (same as --set sandbox=false).
    #[arg(long)]
    no_sandbox: bool,
}

fn load_config(s: &Settings) -> Result<Config, String> {
    let mut o = Overrides::default();
    for (k, v) in [
        ("vault_root", &s.vault_root),
        ("manuals_root", &s.manuals_root),
        ("vibe_root", &s.vibe_root),
        ("state_dir", &s.state_dir),
    ] {
        if let Some(v) = v {
            o.values.insert(k.into(), v.display().to_string());
        }
    }
    if s.read_only {
        o.values.insert("read_only".into(), "true".into());
    }
    if let Some(t) = &s.tools {
        o.values.insert("tools".into(), t.clone());
    }
    if s.no_sandbox {
        o.values.insert("sandbox".into(), "false".into());
    }
    for kv in &s.set {
        let (k, v) = kv
            .split_once('=')
            .ok_or_else(|| format!("--set {kv}: expected KEY=VALUE"))?;
        o.values.insert(k.trim().to_ascii_lowercase(), v.to_owned());
    }
    for kv in &s.plugin {
        let (k, v) = kv
            .split_once('=')
            .ok_or_else(|| format!("--plugin {kv}: expected SLOT=WASM"))?;
        let slot = kura::config::Slot::parse(k).ok_or_else(|| {
            format!(
                "--plugin {kv}: unknown slot `{k}` (slots: {})",
                kura::config::Slot::names()
            )
        })?;
        o.values
            .insert(format!("plugins.{}", slot.key()), v.to_owned());
    }
    let file_path = s
        .config
        .clone()
        .or_else(|| default_config_path().filter(|p| p.is_file()));
    let text = match &file_path {
        Some(p) => Some(
            kura::fs::read_operator_file(p)
                .map_err(|e| format!("cannot read config file {}: {e}", p.display()))
                .and_then(|b| {
                    String::from_utf8(b)
                        .map_err(|_| format!("config file {} is not UTF-8", p.display()))
                })?,
        ),
        None => None,
    };
    let file = file_path.as_deref().zip(text.as_deref());
    Config::resolve(file, |k| std::env::var(k).ok(), &o).map_err(|e| e.to_string())
}

/// What `serve` and `call` set up before the async runtime starts a thread:
/// the roots and state folder opened, the demo's copy, and the sandbox
/// around them (Landlock confines the calling thread and the threads it
/// creates later). The sandbox's line is logged once the start succeeded.
struct Prepared {
    opened: kura::app::Opened,
    demo: Option<kura::demo::DemoData>,
    sandbox: (tracing::Level, String),
    http: Option<(std::net::TcpListener, kura::server::HttpOptions)>,
}

impl Prepared {
    fn start(self) -> Result<Started, String> {
        let app = self.opened.start().map_err(|e| e.to_string())?;
        match self.sandbox {
            (tracing::Level::WARN, line) => tracing::warn!("{line}"),
            (_, line) => tracing::info!("{line}"),
        }
        Ok(Started {
            app: std::sync::Arc::new(app),
            demo: self.demo,
            http: self.http,
        })
    }
}

struct Started {
    app: std::sync::Arc<kura::app::App>,
    /// Removed when dropped: kept until the server ends.
    demo: Option<kura::demo::DemoData>,
    http: Option<(std::net::TcpListener, kura::server::HttpOptions)>,
}

fn prepare(command: &Command) -> Result<Option<Prepared>, String> {
    let (settings, demo, http) = match command {
        Command::Serve {
            settings,
            demo,
            http,
        } => (settings, *demo, http.http.map(|addr| (http, addr))),
        Command::Call { settings, .. } => (settings, false, None),
        _ => return Ok(None),
    };
    let http = match http {
        Some((flags, addr)) => Some(flags.open(addr)?),
        None => None,
    };
    let mut config = load_config(settings)?;
    let demo = match demo {
        true => Some(kura::demo::DemoData::create().map_err(|e| e.to_string())?),
        false => None,
    };
    if let Some(d) = &demo {
        config = d.configure(config);
    }
    let confine = config.sandbox;
    let opened = kura::app::App::open(config, kura::CATALOG).map_err(|e| e.to_string())?;
    let sandbox = if confine {
        let mut plan = opened.sandbox();
        if let Some(d) = &demo {
            plan = d.sandbox(plan);
        }
        let outcome = kura::fs::sandbox::confine(&plan);
        let level = match outcome {
            kura::fs::sandbox::Outcome::Not(_) => tracing::Level::WARN,
            _ => tracing::Level::INFO,
        };
        (level, outcome.describe(&plan))
    } else {
        (
            tracing::Level::INFO,
            "sandbox: off (sandbox = false)".to_owned(),
        )
    };
    Ok(Some(Prepared {
        opened,
        demo,
        sandbox,
        http,
    }))
}

fn parse_slot(s: &str) -> Result<kura::config::Slot, String> {
    kura::config::Slot::parse(s).ok_or_else(|| {
        format!(
            "unknown slot `{s}` (slots: {})",
            kura::config::Slot::names()
        )
    })
}

/// The state folder of a configuration, when it can be opened.
fn state_of(config: &Config) -> Option<kura::fs::StateDir> {
    config
        .state_dir()
        .and_then(|p| kura::fs::StateDir::open(&p).ok())
}

/// `kura plugins ...`: reports on stdout; a failed check exits non-zero.
fn plugins(command: PluginsCommand) -> Result<(), String> {
    use kura::plugins::check;
    match command {
        PluginsCommand::List { settings } => {
            let config = load_config(&settings)?;
            let state = state_of(&config);
            println!(
                "{:<13} {:>9}  {:<16}  {:<15}  {:<28}  source",
                "slot (world)", "size", "blake3", "compiled", "memory / deadline / instances"
            );
            for l in check::list(&config, state.as_ref())? {
                let limits = format!(
                    "{} MiB / {} ms / {}",
                    l.limits.memory_bytes >> 20,
                    l.limits.timeout.as_millis(),
                    l.limits.instances
                );
                println!(
                    "{:<13} {:>9}  {:<16}  {:<15}  {:<28}  {}",
                    l.slot.name(),
                    l.size
                        .map(|s| format!("{:.1} MiB", s as f64 / (1 << 20) as f64))
                        .unwrap_or_else(|| "-".into()),
                    l.hash.unwrap_or_else(|| "-".into()),
                    l.compiled,
                    limits,
                    l.source
                );
            }
            Ok(())
        }
        PluginsCommand::Check {
            file,
            slot,
            settings,
        } => {
            let config = load_config(&settings)?;
            let slot = slot.as_deref().map(parse_slot).transpose()?;
            let report = check::check(&file, slot, &config);
            print!("{report}");
            if report.ok() {
                Ok(())
            } else {
                Err(format!("{} did not pass the check", file.display()))
            }
        }
        PluginsCommand::Precompile { settings } => {
            let config = load_config(&settings)?;
            let state = state_of(&config);
            if state.is_none() {
                return Err("no usable state folder: set STATE_DIR or --state-dir".into());
            }
            let mut failed = false;
            for (slot, outcome) in check::precompile(&config, state.as_ref()) {
                match outcome {
                    Ok(said) => println!("{:<13} {said}", slot.name()),
                    Err(e) => {
                        failed = true;
                        println!("{:<13} error: {e}", slot.name());
                    }
                }
            }
            if failed {
                Err("some components could not be loaded".into())
            } else {
                Ok(())
            }
        }
        PluginsCommand::New { lang, slot, dir } => {
            let slot = parse_slot(&slot)?;
            let written = kura::plugins::template::write(&lang, slot, &dir)?;
            for f in &written {
                println!("wrote {}", f.display());
            }
            println!(
                "{}",
                kura::plugins::template::next_steps(&lang, slot, &dir)?
            );
            Ok(())
        }
    }
}

/// `kura index`: one progress bar per domain on stderr, figures on stdout.
fn index(app: &kura::app::App, full: bool, project: Option<&str>) -> Result<(), String> {
    use indicatif::{ProgressBar, ProgressStyle};
    let bar = std::sync::Mutex::new(None::<(&'static str, ProgressBar)>);
    let style =
        ProgressStyle::with_template("{prefix:>6} [{bar:40}] {pos}/{len} files ({elapsed})")
            .map_err(|e| e.to_string())?
            .progress_chars("=> ");
    let progress = |domain: &'static str, done: u64, total: u64| {
        let mut bar = bar.lock().unwrap_or_else(|e| e.into_inner());
        if bar.as_ref().is_none_or(|(d, _)| *d != domain) {
            if let Some((_, old)) = bar.take() {
                old.finish();
            }
            let b = ProgressBar::new(total).with_style(style.clone());
            b.set_prefix(domain);
            *bar = Some((domain, b));
        }
        if let Some((_, b)) = bar.as_ref() {
            b.set_length(total);
            b.set_position(done);
        }
    };
    let lines = app
        .index_now(full, project, &progress)
        .map_err(|e| format!("{}: {}", e.code.as_str(), e.message))?;
    if let Some((_, b)) = bar.lock().unwrap_or_else(|e| e.into_inner()).take() {
        b.finish();
    }
    if lines.is_empty() {
        return Err(
            "nothing to index: no root is configured (--vibe-root, --vault-root, --manuals-root)"
                .into(),
        );
    }
    for l in lines {
        println!("{l}");
    }
    Ok(())
}

fn main() -> ExitCode {
    let cli = Cli::parse();
    // `kura plugins` reports on stdout; what the components log during its
    // sample calls is noise there unless asked for with RUST_LOG.
    let default_filter = match cli.command {
        Command::Plugins { .. } => "kura=warn",
        _ => "kura=info",
    };
    tracing_subscriber::fmt()
        .with_writer(std::io::stderr)
        .with_ansi(false)
        .with_env_filter(
            tracing_subscriber::EnvFilter::try_from_default_env()
                .unwrap_or_else(|_| default_filter.into()),
        )
        .init();
    let prepared = match prepare(&cli.command) {
        Ok(p) => p,
        Err(message) => {
            eprintln!("kura: {message}");
            return ExitCode::from(2);
        }
    };
    let runtime = match tokio::runtime::Builder::new_multi_thread()
        .enable_all()
        .build()
    {
        Ok(r) => r,
        Err(e) => {
            eprintln!("kura: cannot start the async runtime: {e}");
            return ExitCode::FAILURE;
        }
    };
    let result = runtime.block_on(async {
        match cli.command {
            Command::Serve { .. } => {
                let Started { app, demo, http } = prepared.expect("serve is prepared").start()?;
                if let Some(data) = &demo {
                    eprintln!("kura: serving the demo vault at {}", data.vault().display());
                }
                let served = match http {
                    Some((listener, options)) => {
                        kura::server::serve_http(app, listener, options).await
                    }
                    None => kura::server::serve_stdio(app).await,
                };
                drop(demo);
                served.map_err(|e| e.to_string())
            }
            Command::Demo => kura::demo::run().await.map_err(|e| e.to_string()),
            Command::Call {
                tool, arguments, ..
            } => {
                let app = prepared.expect("call is prepared").start()?.app;
                // One call, so no reason to answer before the components load.
                let plugins = app.plugins.clone();
                tokio::task::spawn_blocking(move || plugins.settle(kura::plugins::LOAD_WAIT * 4))
                    .await
                    .map_err(|e| e.to_string())?;
                kura::client::call_once(app, &tool, &arguments).await
            }
            Command::Index {
                settings,
                full,
                project,
            } => {
                let config = load_config(&settings)?;
                let app =
                    kura::app::App::start(config, kura::CATALOG).map_err(|e| e.to_string())?;
                tokio::task::spawn_blocking(move || index(&app, full, project.as_deref()))
                    .await
                    .map_err(|e| e.to_string())?
            }
            Command::Plugins { command } => tokio::task::spawn_blocking(move || plugins(command))
                .await
                .map_err(|e| e.to_string())?,
            Command::Bench(args) => kura::bench::run(args).await.map_err(|e| e.to_string()),
            Command::Eval(args) => tokio::task::spawn_blocking(move || kura::eval::run(args))
                .await
                .map_err(|e| e.to_string())?,
        }
    });
    // Whatever still runs on the blocking pool is done with (the server
    // waits for its tool calls): typically a read of stdin that will never
    // return, which must not hold the exit.
    runtime.shutdown_timeout(std::time::Duration::from_millis(100));
    match result {
        Ok(()) => ExitCode::SUCCESS,
        Err(message) => {
            // One line, whatever a library's message holds.
            let message = message.split_whitespace().collect::<Vec<_>>().join(" ");
            eprintln!("kura: {message}");
            ExitCode::from(2)
        }
    }
}
