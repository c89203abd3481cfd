//! What an operator grants one slot beyond kura's deny-everything default,
//! explicitly and narrowly: outbound HTTP to named hosts (wasi:http), one
//! folder read-only (seen by the component as `/data`), named environment
//! variables. The host enforces each: a request to another host fails
//! inside the component with `HTTP-request-denied`, only the granted folder
//! is opened for it, only the named variables are copied in. The process
//! sandbox follows the same grants (see kura-core's `fs::sandbox`).

use std::path::PathBuf;
use std::time::Duration;

use wasmtime_wasi_http::p2::bindings::http::types::ErrorCode;
use wasmtime_wasi_http::{RequestOptions, WasiHttpHooks};

use crate::config::{Config, Slot};

/// Where the granted folder appears inside the component.
pub const FOLDER_IN_GUEST: &str = "/data";

/// A slot's grants, resolved at start.
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub struct Grants {
    /// `host` (its scheme's default port) or `host:port`, lower case.
    pub http_hosts: Vec<String>,
    pub folder: Option<PathBuf>,
    /// The granted variables that are set, with their values.
    pub env: Vec<(String, String)>,
    /// Granted but not set in kura's environment (said at start).
    pub env_unset: Vec<String>,
}

impl Grants {
    /// From a slot's configuration; variables are read from `env`.
    pub fn of(config: &Config, slot: Slot, env: impl Fn(&str) -> Option<String>) -> Grants {
        let c = config.plugins.slot(slot);
        let mut env_set = Vec::new();
        let mut env_unset = Vec::new();
        for name in c.env.iter().flatten() {
            match env(name) {
                Some(v) => env_set.push((name.clone(), v)),
                None => env_unset.push(name.clone()),
            }
        }
        Grants {
            http_hosts: c
                .http_hosts
                .iter()
                .flatten()
                .map(|h| h.trim().to_ascii_lowercase())
                .collect(),
            folder: c.folder.clone(),
            env: env_set,
            env_unset,
        }
    }

    pub fn is_empty(&self) -> bool {
        self.http_hosts.is_empty()
            && self.folder.is_none()
            && self.env.is_empty()
            && self.env_unset.is_empty()
    }

    pub fn http(&self) -> bool {
        !self.http_hosts.is_empty()
    }

    /// Whether a request to `host` on `port` (the URI's, or its scheme's
    /// default) is granted.
    pub fn allows(&self, host: &str, port: u16, default_port: u16) -> bool {
        let host = host.to_ascii_lowercase();
        self.http_hosts.iter().any(|g| match g.rsplit_once(':') {
            Some((h, p)) if !h.ends_with(']') || g.starts_with('[') => {
                h == host && p.parse() == Ok(port)
            }
            _ => *g == host && port == default_port,
        })
    }

    /// One line: what the slot may reach.
    pub fn describe(&self) -> String {
        if self.is_empty() {
            return "none".into();
        }
        let mut parts = Vec::new();
        if self.http() {
            parts.push(format!("http to {}", self.http_hosts.join(", ")));
        }
        if let Some(f) = &self.folder {
            parts.push(format!("{} read-only as {FOLDER_IN_GUEST}", f.display()));
        }
        if !self.env.is_empty() || !self.env_unset.is_empty() {
            let names: Vec<String> = self
                .env
                .iter()
                .map(|(n, _)| n.clone())
                .chain(self.env_unset.iter().map(|n| format!("{n} (unset)")))
                .collect();
            parts.push(format!("env {}", names.join(", ")));
        }
        parts.join("; ")
    }
}

/// The wasi:http hooks of one call: requests to granted hosts only, each
/// bounded by the call's deadline (the epoch deadline cannot interrupt the
/// host while it waits on the network).
pub struct HttpGate {
    grants: std::sync::Arc<Grants>,
    deadline: Duration,
}

impl HttpGate {
    pub fn new(grants: std::sync::Arc<Grants>, deadline: Duration) -> HttpGate {
        HttpGate { grants, deadline }
    }
}

type Sent = Box<
    dyn Future<
            Output = wasmtime_wasi_http::Result<(
                http::Response<wasmtime_wasi_http::WasiBody>,
                Box<dyn Future<Output = Result<(), wasmtime_wasi_http::Error>> + Send>,
            )>,
        > + Send,
>;

impl WasiHttpHooks for HttpGate {
    fn send_request(
        &mut self,
        request: http::Request<wasmtime_wasi_http::WasiBody>,
        options: Option<RequestOptions>,
        fut: Box<dyn Future<Output = Result<(), wasmtime_wasi_http::Error>> + Send>,
    ) -> Sent {
        let uri = request.uri();
        let tls = uri.scheme() == Some(&http::uri::Scheme::HTTPS);
        let default_port = if tls { 443 } else { 80 };
        let host = uri.host().unwrap_or("");
        let port = uri.port_u16().unwrap_or(default_port);
        if !self.grants.allows(host, port, default_port) {
            tracing::warn!(
                target: "kura::plugin",
                "HTTP request to {host}:{port} refused: not among the slot's http_hosts ({})",
                self.grants.http_hosts.join(", ")
            );
            return Box::new(async { Err(ErrorCode::HttpRequestDenied.into()) });
        }
        let cap = |t: Option<Duration>| Some(t.map_or(self.deadline, |t| t.min(self.deadline)));
        let options = RequestOptions {
            connect_timeout: cap(options.and_then(|o| o.connect_timeout)),
            first_byte_timeout: cap(options.and_then(|o| o.first_byte_timeout)),
            between_bytes_timeout: cap(options.and_then(|o| o.between_bytes_timeout)),
        };
        let _ = fut;
        Box::new(async move {
            use http_body_util::BodyExt;
            let (response, io) =
                wasmtime_wasi_http::default_send_request(request, Some(options)).await?;
            Ok((
                response.map(BodyExt::boxed_unsync),
                Box::new(io) as Box<dyn Future<Output = _> + Send>,
            ))
        })
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn grants(hosts: &[&str]) -> Grants {
        Grants {
            http_hosts: hosts.iter().map(|h| h.to_string()).collect(),
            ..Grants::default()
        }
    }

    #[test]
    fn only_named_hosts_and_ports_are_granted() {
        let g = grants(&["api.example.org", "127.0.0.1:8080", "[::1]:9000"]);
        assert!(g.allows("api.example.org", 443, 443));
        assert!(g.allows("API.example.org", 80, 80));
        assert!(!g.allows("api.example.org", 8443, 443), "another port");
        assert!(!g.allows("example.org", 443, 443));
        assert!(g.allows("127.0.0.1", 8080, 80));
        assert!(!g.allows("127.0.0.1", 8081, 80));
        assert!(!g.allows("127.0.0.1", 80, 80));
        assert!(g.allows("[::1]", 9000, 80));
        assert!(!grants(&[]).allows("127.0.0.1", 80, 80));
    }

    #[test]
    fn grants_are_described_in_one_line() {
        let config: Config = Config::resolve(
            Some((
                std::path::Path::new("k.toml"),
                "[plugins.reranker]\nhttp_hosts = [\"127.0.0.1:8080\"]\nfolder = \"/opt/w\"\nenv = [\"A\", \"B\"]",
            )),
            |_| None,
            &crate::config::Overrides::default(),
        )
        .unwrap();
        let g = Grants::of(&config, Slot::Reranker, |k| (k == "A").then(|| "1".into()));
        assert_eq!(
            g.describe(),
            "http to 127.0.0.1:8080; /opt/w read-only as /data; env A, B (unset)"
        );
        assert_eq!(g.env, [("A".to_owned(), "1".to_owned())]);
        assert_eq!(
            Grants::of(&config, Slot::Auditor, |_| None).describe(),
            "none"
        );
    }
}
