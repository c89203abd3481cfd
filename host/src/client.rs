//! A small MCP client over rmcp, used by `kura demo`, `kura bench` and
//! `kura call`: it drives kura exactly as any stdio client would.

use std::path::Path;
use std::sync::Arc;

use rmcp::ServiceExt;
use rmcp::model::{CallToolRequestParams, CallToolResult};
use rmcp::service::{RoleClient, RunningService};
use rmcp::transport::TokioChildProcess;
use serde_json::Value;

use crate::app::App;
use crate::server::KuraServer;

pub struct Session {
    pub client: RunningService<RoleClient, ()>,
    /// The server's process id.
    pub pid: Option<u32>,
}

impl Session {
    /// Start `exe serve ARGS...` and complete the `initialize` handshake.
    pub async fn spawn(exe: &Path, args: &[String]) -> anyhow::Result<Session> {
        let mut cmd = tokio::process::Command::new(exe);
        cmd.arg("serve").args(args);
        for var in crate::config::env_names() {
            cmd.env_remove(var);
        }
        // The server's log is dropped unless RUST_LOG asks for it.
        let stderr = if std::env::var_os("RUST_LOG").is_some() {
            std::process::Stdio::inherit()
        } else {
            std::process::Stdio::null()
        };
        let (transport, _) = TokioChildProcess::builder(cmd).stderr(stderr).spawn()?;
        let pid = transport.id();
        let client = ().serve(transport).await?;
        Ok(Session { client, pid })
    }

    pub async fn call(&self, tool: &str, args: Value) -> anyhow::Result<CallToolResult> {
        let mut params = CallToolRequestParams::new(tool.to_owned());
        if let Value::Object(map) = args {
            params = params.with_arguments(map);
        }
        Ok(self.client.call_tool(params).await?)
    }

    pub async fn close(self) -> anyhow::Result<()> {
        self.client.cancel().await?;
        Ok(())
    }
}

/// The URL a `kura serve --http` child logs (`serving MCP at URL`), read
/// from its piped stderr; the rest of the log is drained on a thread of its
/// own so the server never blocks on a full pipe. None if it ended first.
pub fn http_url(child: &mut std::process::Child) -> Option<String> {
    use std::io::BufRead;
    let mut log = std::io::BufReader::new(child.stderr.take()?).lines();
    let url = log.by_ref().map_while(Result::ok).find_map(|l| {
        l.split_once(crate::server::SERVING_AT)
            .map(|(_, u)| u.trim().to_owned())
    })?;
    std::thread::spawn(move || log.for_each(drop));
    Some(url)
}

/// `kura call`: run one tool in-process through the same path as MCP and
/// print its structured result.
pub async fn call_once(app: Arc<App>, tool: &str, arguments: &str) -> Result<(), String> {
    let args: Value =
        serde_json::from_str(arguments).map_err(|e| format!("arguments are not JSON: {e}"))?;
    let Value::Object(map) = args else {
        return Err("arguments must be a JSON object".into());
    };
    let server = KuraServer::new(app);
    let result = server
        .run(tool.to_owned(), Some(map))
        .await
        .ok_or_else(|| format!("unknown tool `{tool}` (or its root is not configured)"))?;
    let body = result.structured_content.unwrap_or(Value::Null);
    println!(
        "{}",
        serde_json::to_string_pretty(&body).unwrap_or_default()
    );
    if result.is_error == Some(true) {
        return Err(format!("{tool} returned an error"));
    }
    Ok(())
}
