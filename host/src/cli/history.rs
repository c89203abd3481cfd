//! `kura history` and `kura undo`: the history tools from a terminal, for
//! the person who finds the damage after the agent is gone. They run the
//! same tools an agent calls (vault_history/vault_undo, or vibe's
//! history/undo with --vibe), as the client `kura history` / `kura undo`.

use std::sync::Arc;

use serde_json::{Map, Value, json};

use super::settings::Settings;
use crate::app::App;
use crate::domain::history::Who;
use crate::job::Job;

#[derive(clap::Args)]
pub struct HistoryArgs {
    #[command(flatten)]
    pub settings: Settings,
    /// A note or folder (default: everything).
    pub path: Option<String>,
    /// Only this session's changes.
    #[arg(long)]
    pub session: Option<String>,
    /// Only this client's changes.
    #[arg(long)]
    pub client: Option<String>,
    /// One change, with its diff.
    #[arg(long)]
    pub change: Option<String>,
    /// How many changes.
    #[arg(long, default_value_t = 20)]
    pub limit: u32,
    /// The vibe workspace's history instead of the vault's.
    #[arg(long)]
    pub vibe: bool,
    /// Print the tool's JSON.
    #[arg(long)]
    pub json: bool,
}

#[derive(clap::Args)]
pub struct UndoArgs {
    #[command(flatten)]
    pub settings: Settings,
    /// The change to undo (its id, or the first 7+ characters of it).
    pub change: Option<String>,
    /// Undo every change of this session instead, newest first.
    #[arg(long)]
    pub session: Option<String>,
    /// Say what would be done; change nothing.
    #[arg(long)]
    pub dry_run: bool,
    /// The vibe workspace instead of the vault.
    #[arg(long)]
    pub vibe: bool,
}

/// Run `tool` with `args` as `who`, on the blocking pool.
async fn call(
    app: Arc<App>,
    tool: &'static str,
    args: Map<String, Value>,
    who: Who,
) -> Result<Value, String> {
    let outcome =
        tokio::task::spawn_blocking(move || app.call_with(tool, Some(&args), Job::default(), &who))
            .await
            .map_err(|e| e.to_string())?;
    match outcome {
        None => Err(format!("{tool} is not served: is the root configured?")),
        Some(Ok(v)) => Ok(v),
        Some(Err(e)) => {
            let mut message = e.to_text();
            if let Some(files) = e.details.get("files").and_then(Value::as_array) {
                for f in files {
                    message.push_str(&format!(
                        "\n  changed since: {}",
                        f["path"].as_str().unwrap_or("?")
                    ));
                }
            }
            Err(message)
        }
    }
}

fn object(pairs: Vec<(&str, Value)>) -> Map<String, Value> {
    pairs
        .into_iter()
        .filter(|(_, v)| !v.is_null())
        .map(|(k, v)| (k.to_owned(), v))
        .collect()
}

/// Where the root's history repository is, for `git -C`.
fn repository(app: &App, vibe: bool) -> Option<std::path::PathBuf> {
    let history = if vibe {
        app.domains
            .get::<crate::vibe::Vibe>()
            .ok()?
            .history
            .as_ref()
    } else {
        app.domains
            .get::<crate::vault::Vault>()
            .ok()?
            .history
            .as_ref()
    };
    history.map(|h| h.path())
}

pub async fn history(app: Arc<App>, a: HistoryArgs) -> Result<(), String> {
    let tool = if a.vibe { "history" } else { "vault_history" };
    let repo = repository(&app, a.vibe);
    let args = object(vec![
        ("path", json!(a.path)),
        ("session", json!(a.session)),
        ("client", json!(a.client)),
        ("change", json!(a.change)),
        ("limit", json!(a.limit.clamp(1, 100))),
    ]);
    let out = call(app, tool, args, Who::terminal("history")).await?;
    if a.json {
        println!("{}", serde_json::to_string_pretty(&out).unwrap_or_default());
        return Ok(());
    }
    let changes = out["changes"].as_array().cloned().unwrap_or_default();
    if changes.is_empty() {
        println!("no changes");
    }
    for c in &changes {
        let id = c["id"].as_str().unwrap_or("");
        let undone = c["undone_by"]
            .as_str()
            .map(|u| format!("  (undone by {})", &u[..12.min(u.len())]))
            .unwrap_or_default();
        println!(
            "{}  {}  {}  {} / {}{undone}",
            &id[..12.min(id.len())],
            c["time"].as_str().unwrap_or(""),
            c["tool"].as_str().unwrap_or(""),
            c["client"].as_str().unwrap_or(""),
            c["session"].as_str().unwrap_or("")
        );
        for f in c["files"].as_array().into_iter().flatten() {
            let mark = match f["action"].as_str() {
                Some("created") => "A",
                Some("deleted") => "D",
                _ => "M",
            };
            println!("    {mark} {}", f["path"].as_str().unwrap_or(""));
        }
    }
    if let Some(diff) = out["diff"].as_str() {
        println!("\n{diff}");
    }
    if let Some(total) = out["total"].as_u64()
        && total > changes.len() as u64
    {
        println!("({} of {total} shown; --limit for more)", changes.len());
    }
    if let Some(repo) = repo {
        println!("(the repository: git -C {} log -p)", repo.display());
    }
    Ok(())
}

pub async fn undo(app: Arc<App>, a: UndoArgs) -> Result<(), String> {
    let tool = if a.vibe { "undo" } else { "vault_undo" };
    let args = object(vec![
        ("change", json!(a.change)),
        ("session", json!(a.session)),
        ("dry_run", json!(a.dry_run)),
    ]);
    let out = call(app, tool, args, Who::terminal("undo")).await?;
    let verb = if a.dry_run { "would undo" } else { "undid" };
    let undone: Vec<&str> = out["undone"]
        .as_array()
        .into_iter()
        .flatten()
        .filter_map(Value::as_str)
        .map(|id| &id[..12.min(id.len())])
        .collect();
    println!("{verb} {} change(s): {}", undone.len(), undone.join(" "));
    for f in out["files"].as_array().into_iter().flatten() {
        println!(
            "    {} {}",
            f["action"].as_str().unwrap_or(""),
            f["path"].as_str().unwrap_or("")
        );
    }
    Ok(())
}
