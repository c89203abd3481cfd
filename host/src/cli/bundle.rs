//! `kura bundle DIR`: the folder of an MCP Bundle (`.mcpb`) for Claude
//! Desktop — this binary as `server/kura` and a manifest whose user
//! settings are the three roots, whose tools are the catalog's — for the
//! official `mcpb` CLI to validate and pack (`just bundle`).

use std::path::Path;

use serde_json::{Value, json};

/// The manifest format written.
const MANIFEST_VERSION: &str = "0.3";

/// The manifest of a bundle holding this kura for the running platform.
pub fn manifest() -> Value {
    let platform = match std::env::consts::OS {
        "macos" => "darwin",
        "windows" => "win32",
        other => other,
    };
    let root = |title: &str, what: &str| {
        json!({
            "type": "directory",
            "title": title,
            "description": what,
            "required": false,
        })
    };
    let tools: Vec<Value> = crate::CATALOG
        .tools()
        .map(|t| json!({ "name": t.name, "description": t.description }))
        .collect();
    json!({
        "manifest_version": MANIFEST_VERSION,
        "name": "kura",
        "display_name": "kura",
        "version": env!("CARGO_PKG_VERSION"),
        "description": "Manuals, a markdown vault and vibe workspaces for agents: search with evidence, read and write notes safely.",
        "author": { "name": "the kura developers" },
        "license": env!("CARGO_PKG_LICENSE"),
        "server": {
            "type": "binary",
            "entry_point": "server/kura",
            "mcp_config": {
                "command": "${__dirname}/server/kura",
                "args": ["serve"],
                // An empty value (a folder left unset) counts as unset.
                "env": {
                    "VAULT_ROOT": "${user_config.vault_root}",
                    "MANUALS_ROOT": "${user_config.manuals_root}",
                    "VIBE_ROOT": "${user_config.vibe_root}",
                },
            },
        },
        "user_config": {
            "vault_root": root("Vault folder", "Your markdown notes: kura reads, searches and writes them (daily/ notes, links)."),
            "manuals_root": root("Manuals folder", "Reference documents (markdown, JSON) kura searches and never writes."),
            "vibe_root": root("Vibe workspaces folder", "Project workspaces (tasks, plans, session logs); ~/.vibe when left empty and it exists."),
        },
        "tools": tools,
        "compatibility": { "platforms": [platform] },
    })
}

/// Write the bundle's folder at `dir` (new or empty).
pub fn run(dir: &Path) -> Result<(), String> {
    let exe = std::env::current_exe().map_err(|e| format!("where is kura? {e}"))?;
    let binary = crate::fs::read_operator_file(&exe)
        .map_err(|e| format!("cannot read {}: {e}", exe.display()))?;
    let mut text = serde_json::to_string_pretty(&manifest()).map_err(|e| e.to_string())?;
    text.push('\n');
    crate::fs::write_bundle(
        dir,
        &[("manifest.json", text.as_bytes()), ("server/kura", &binary)],
        &["server/kura"],
    )
    .map_err(|e| format!("{}: {e}", dir.display()))?;
    println!(
        "{}: manifest.json and server/kura; pack it with `mcpb pack {} kura.mcpb`",
        dir.display(),
        dir.display()
    );
    Ok(())
}
