//! The flags `serve`, `call`, `index` and `plugins` share: the settings
//! (a config file, roots, `--set`, `--plugin`), read into a `Config`; and
//! `serve --http`'s.

use std::path::PathBuf;

use clap::Args as ClapArgs;

use crate::config::{Config, Overrides, default_config_path};

/// `kura serve --http`: where, and who may connect.
#[derive(ClapArgs, Clone, Default)]
pub struct HttpFlags {
    /// Serve Streamable HTTP at this address (e.g. 127.0.0.1:8080; port 0
    /// picks one) on the path /mcp, instead of stdio.
    #[arg(long, value_name = "ADDR")]
    pub(super) http: Option<std::net::SocketAddr>,
    /// Bearer tokens, one per line, each optionally followed by its profile
    /// (`read_only`, `tools=manual,vault_read`); or KURA_HTTP_TOKENS,
    /// comma-separated.
    #[arg(long, value_name = "FILE", requires = "http")]
    token_file: Option<PathBuf>,
    /// Accept OAuth access tokens from an authorization server: a TOML
    /// file naming the `issuer`, this server's `resource` URI and the
    /// `[[scope]]`s it grants (docs/oauth.md). Static tokens keep working
    /// beside it.
    #[arg(long, value_name = "FILE", requires = "http")]
    oauth: Option<PathBuf>,
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
    pub(super) fn open(
        &self,
        addr: std::net::SocketAddr,
    ) -> Result<(std::net::TcpListener, crate::server::HttpOptions), String> {
        let oauth = match &self.oauth {
            Some(file) => {
                let text = crate::fs::read_operator_file(file)
                    .map_err(|e| format!("cannot read the OAuth file {}: {e}", file.display()))?;
                let config = crate::server::oauth::OAuthConfig::parse(
                    &String::from_utf8_lossy(&text),
                    crate::CATALOG,
                    &|k| std::env::var(k).ok(),
                )
                .map_err(|e| format!("OAuth file {}: {e}", file.display()))?;
                // The certificates are read now: once confined, kura cannot.
                let http =
                    crate::server::oauth::Http::new(crate::server::oauth::Http::system_roots())?;
                Some(std::sync::Arc::new(crate::server::oauth::OAuth::new(
                    config,
                    Box::new(http),
                )))
            }
            None => None,
        };
        let tokens = match (&self.token_file, std::env::var("KURA_HTTP_TOKENS").ok()) {
            _ if self.no_auth && oauth.is_some() => {
                return Err("--no-auth and --oauth contradict each other".into());
            }
            _ if self.no_auth => {
                if !addr.ip().is_loopback() {
                    return Err(format!(
                        "--no-auth serves anyone who can reach {addr}: it is accepted on a loopback address only"
                    ));
                }
                crate::server::Tokens::default()
            }
            (Some(file), _) => {
                let text = crate::fs::read_operator_file(file)
                    .map_err(|e| format!("cannot read the token file {}: {e}", file.display()))?;
                crate::server::Tokens::parse(&String::from_utf8_lossy(&text), crate::CATALOG)
                    .map_err(|e| format!("token file {}: {e}", file.display()))?
            }
            (None, Some(env)) => {
                crate::server::Tokens::list(&env).map_err(|e| format!("KURA_HTTP_TOKENS: {e}"))?
            }
            (None, None) if oauth.is_some() => crate::server::Tokens::default(),
            (None, None) => {
                return Err(
                    "--http needs bearer tokens: --token-file FILE, KURA_HTTP_TOKENS or --oauth FILE (or --no-auth on a loopback address)"
                        .into(),
                );
            }
        };
        let listener = std::net::TcpListener::bind(addr)
            .map_err(|e| format!("cannot listen on {addr}: {e}"))?;
        Ok((
            listener,
            crate::server::HttpOptions {
                tokens,
                oauth,
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

/// The configuration file in force: `--config`, or the per-user one if
/// it exists.
pub(super) fn config_file(s: &Settings) -> Option<PathBuf> {
    s.config
        .clone()
        .or_else(|| default_config_path().filter(|p| p.is_file()))
}

pub(super) fn load_config(s: &Settings) -> Result<Config, String> {
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
        let slot = crate::config::Slot::parse(k).ok_or_else(|| {
            format!(
                "--plugin {kv}: unknown slot `{k}` (slots: {})",
                crate::config::Slot::names()
            )
        })?;
        o.values
            .insert(format!("plugins.{}", slot.key()), v.to_owned());
    }
    let file_path = config_file(s);
    let text = match &file_path {
        Some(p) => Some(
            crate::fs::read_operator_file(p)
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
