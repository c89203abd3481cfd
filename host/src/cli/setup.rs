//! `kura setup CLIENT`: write kura into an MCP client's own configuration
//! file, in the place and format the client documents, merged with what is
//! there. Other servers' entries are kept byte for byte (JSON values are
//! carried as raw text, TOML through a format-preserving editor); the
//! previous file is kept beside it with its mode and owner
//! (`NAME.kura-backup`, then `.2`, `.3`, … — the first is never replaced); a second run with
//! the same roots changes nothing; the file is replaced atomically and only
//! if no other program changed it since it was read (the vault's own
//! read-modify-write); a file with comments (JSONC) is not rewritten: the
//! entry to add is printed instead.

use std::path::PathBuf;

use clap::Args as ClapArgs;
use indexmap::IndexMap;
use serde_json::value::RawValue;
use serde_json::{Value, json};

use crate::fs::{RelPath, Root};

/// `kura setup`'s flags.
#[derive(ClapArgs, Clone)]
pub struct SetupArgs {
    /// The client to configure (`--list` names them).
    pub client: Option<String>,
    /// Show each known client, its configuration file, and whether kura is in it.
    #[arg(long, conflicts_with = "client")]
    pub list: bool,
    /// Print the change as a diff and write nothing.
    #[arg(long)]
    pub dry_run: bool,
    /// The server's name in the client's list.
    #[arg(long, default_value = "kura")]
    pub name: String,
    #[arg(long, value_name = "DIR")]
    pub vault_root: Option<PathBuf>,
    #[arg(long, value_name = "DIR")]
    pub manuals_root: Option<PathBuf>,
    #[arg(long, value_name = "DIR")]
    pub vibe_root: Option<PathBuf>,
}

/// How a client lists its servers.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
enum Format {
    /// A JSON object under this top-level key; each entry `{command, args,
    /// env}`, with `"type": "stdio"` when `typed`.
    Json { key: &'static str, typed: bool },
    /// Zed's `context_servers`: `{source: "custom", command, args, env}`.
    Zed,
    /// Codex's TOML: `[mcp_servers.NAME]` with `command`, `args`, `env`.
    CodexToml,
}

/// Where a file lives: beneath the home folder, or beneath the platform's
/// configuration folder (`~/.config`, `~/Library/Application Support`,
/// `%APPDATA%`).
#[derive(Clone, Copy, Debug)]
enum Base {
    Home,
    Config,
}

/// A client kura knows how to configure.
pub(super) struct Client {
    pub(super) id: &'static str,
    pub(super) title: &'static str,
    base: Base,
    /// Below `base`.
    file: &'static str,
    format: Format,
}

/// The clients and their documented configuration files.
const CLIENTS: &[Client] = &[
    Client {
        id: "claude-desktop",
        title: "Claude Desktop",
        base: Base::Config,
        file: "Claude/claude_desktop_config.json",
        format: Format::Json {
            key: "mcpServers",
            typed: false,
        },
    },
    Client {
        id: "claude-code",
        title: "Claude Code (user scope)",
        base: Base::Home,
        file: ".claude.json",
        format: Format::Json {
            key: "mcpServers",
            typed: true,
        },
    },
    Client {
        id: "cursor",
        title: "Cursor",
        base: Base::Home,
        file: ".cursor/mcp.json",
        format: Format::Json {
            key: "mcpServers",
            typed: false,
        },
    },
    Client {
        id: "vscode",
        title: "VS Code (user profile)",
        base: Base::Config,
        file: "Code/User/mcp.json",
        format: Format::Json {
            key: "servers",
            typed: true,
        },
    },
    Client {
        id: "windsurf",
        title: "Windsurf",
        base: Base::Home,
        file: ".codeium/windsurf/mcp_config.json",
        format: Format::Json {
            key: "mcpServers",
            typed: false,
        },
    },
    Client {
        id: "zed",
        title: "Zed",
        base: Base::Config,
        file: "zed/settings.json",
        format: Format::Zed,
    },
    Client {
        id: "codex",
        title: "Codex CLI",
        base: Base::Home,
        file: ".codex/config.toml",
        format: Format::CodexToml,
    },
    Client {
        id: "gemini",
        title: "Gemini CLI",
        base: Base::Home,
        file: ".gemini/settings.json",
        format: Format::Json {
            key: "mcpServers",
            typed: false,
        },
    },
];

impl Client {
    fn find(id: &str) -> Result<&'static Client, String> {
        CLIENTS.iter().find(|c| c.id == id).ok_or_else(|| {
            let ids: Vec<&str> = CLIENTS.iter().map(|c| c.id).collect();
            format!("unknown client `{id}` (known: {})", ids.join(", "))
        })
    }

    fn path(&self) -> Result<PathBuf, String> {
        let base = match self.base {
            Base::Home => dirs::home_dir(),
            Base::Config => dirs::config_dir(),
        };
        let base = base.ok_or("no home folder is known (HOME is unset)")?;
        // Codex reads CODEX_HOME instead of ~/.codex when it is set.
        if self.format == Format::CodexToml
            && let Some(home) = std::env::var_os("CODEX_HOME").filter(|h| !h.is_empty())
        {
            return Ok(PathBuf::from(home).join("config.toml"));
        }
        Ok(base.join(self.file))
    }
}

/// What kura's entry runs: this binary, `serve`, and the roots given.
struct Entry {
    command: String,
    args: Vec<String>,
}

impl Entry {
    fn new(a: &SetupArgs) -> Result<Entry, String> {
        let exe = std::env::current_exe().map_err(|e| format!("where is kura? {e}"))?;
        let mut args = vec!["serve".to_owned()];
        for (flag, dir) in [
            ("--vault-root", &a.vault_root),
            ("--manuals-root", &a.manuals_root),
            ("--vibe-root", &a.vibe_root),
        ] {
            if let Some(d) = dir {
                let abs = crate::fs::resolve_path(d);
                args.push(flag.to_owned());
                args.push(abs.display().to_string());
            }
        }
        Ok(Entry {
            command: crate::fs::resolve_path(&exe).display().to_string(),
            args,
        })
    }

    /// The entry as the client's JSON writes it.
    fn json(&self, format: Format) -> Value {
        match format {
            Format::Json { typed: true, .. } => json!({
                "type": "stdio", "command": self.command, "args": self.args, "env": {}
            }),
            Format::Zed => json!({
                "source": "custom", "command": self.command, "args": self.args, "env": {}
            }),
            _ => json!({ "command": self.command, "args": self.args, "env": {} }),
        }
    }
}

/// The file's new text with kura's entry `name` set, or None when it is
/// already exactly that.
fn merged(
    format: Format,
    current: Option<&str>,
    name: &str,
    entry: &Entry,
) -> Result<Option<String>, String> {
    match format {
        Format::CodexToml => merged_toml(current, name, entry),
        Format::Json { key, .. } => merged_json(current, key, name, &entry.json(format)),
        Format::Zed => merged_json(current, "context_servers", name, &entry.json(format)),
    }
}

fn merged_json(
    current: Option<&str>,
    key: &str,
    name: &str,
    entry: &Value,
) -> Result<Option<String>, String> {
    let text = current.unwrap_or("").trim();
    let mut doc: IndexMap<String, Box<RawValue>> = if text.is_empty() {
        IndexMap::new()
    } else {
        serde_json::from_str(text).map_err(|e| {
            format!(
                "it is not plain JSON ({e}; comments or trailing commas?), and kura does not rewrite it: add under \"{key}\":\n\"{name}\": {}",
                serde_json::to_string_pretty(entry).unwrap_or_default()
            )
        })?
    };
    let mut servers: IndexMap<String, Box<RawValue>> = match doc.get(key) {
        Some(raw) => serde_json::from_str(raw.get())
            .map_err(|_| format!("its \"{key}\" is not an object; fix it by hand"))?,
        None => IndexMap::new(),
    };
    if let Some(old) = servers.get(name)
        && serde_json::from_str::<Value>(old.get()).ok().as_ref() == Some(entry)
    {
        return Ok(None);
    }
    let entry = indented(
        &serde_json::to_string_pretty(entry).map_err(|e| e.to_string())?,
        2,
    );
    servers.insert(name.to_owned(), raw(entry)?);
    doc.insert(key.to_owned(), raw(object(&servers, 1))?);
    let mut out = object(&doc, 0);
    out.push('\n');
    Ok(Some(out))
}

fn raw(text: String) -> Result<Box<RawValue>, String> {
    RawValue::from_string(text).map_err(|e| e.to_string())
}

/// `text`'s lines after the first moved right by `depth` levels of two
/// spaces (a value pretty-printed alone, put at that depth).
fn indented(text: &str, depth: usize) -> String {
    text.replace('\n', &format!("\n{}", "  ".repeat(depth)))
}

/// A JSON object at nesting `depth`, two spaces a level, each value as its
/// raw text: a value read from the file keeps its own layout, which was
/// made at this same depth.
fn object(entries: &IndexMap<String, Box<RawValue>>, depth: usize) -> String {
    if entries.is_empty() {
        return "{}".to_owned();
    }
    let pad = "  ".repeat(depth + 1);
    let body: Vec<String> = entries
        .iter()
        .map(|(k, v)| format!("{pad}{}: {}", Value::from(k.as_str()), v.get()))
        .collect();
    format!("{{\n{}\n{}}}", body.join(",\n"), "  ".repeat(depth))
}

fn merged_toml(current: Option<&str>, name: &str, entry: &Entry) -> Result<Option<String>, String> {
    let mut doc: toml_edit::DocumentMut = current
        .unwrap_or("")
        .parse()
        .map_err(|e| format!("it is not valid TOML: {e}"))?;
    let servers = doc
        .entry("mcp_servers")
        .or_insert_with(|| {
            let mut t = toml_edit::Table::new();
            t.set_implicit(true);
            toml_edit::Item::Table(t)
        })
        .as_table_mut()
        .ok_or("its `mcp_servers` is not a table; fix it by hand")?;
    let args: toml_edit::Array = entry.args.iter().map(String::as_str).collect();
    let same = servers
        .get(name)
        .and_then(|t| t.as_table())
        .is_some_and(|t| {
            t.get("command").and_then(|c| c.as_str()) == Some(entry.command.as_str())
                && t.get("args").and_then(|a| a.as_array()).is_some_and(|a| {
                    a.iter()
                        .map(|v| v.as_str())
                        .eq(entry.args.iter().map(|s| Some(s.as_str())))
                })
        });
    if same {
        return Ok(None);
    }
    let mut table = toml_edit::Table::new();
    table.insert("command", toml_edit::value(entry.command.as_str()));
    table.insert("args", toml_edit::value(args));
    servers.insert(name, toml_edit::Item::Table(table));
    Ok(Some(doc.to_string()))
}

/// Whether the file names a server `name` (for `--list`).
fn has_entry(format: Format, text: &str, name: &str) -> bool {
    match format {
        Format::CodexToml => text
            .parse::<toml_edit::DocumentMut>()
            .ok()
            .is_some_and(|d| d.get("mcp_servers").and_then(|s| s.get(name)).is_some()),
        Format::Json { key, .. } => json_has(text, key, name),
        Format::Zed => json_has(text, "context_servers", name),
    }
}

fn json_has(text: &str, key: &str, name: &str) -> bool {
    serde_json::from_str::<Value>(text)
        .ok()
        .is_some_and(|v| v[key].get(name).is_some())
}

fn list(name: &str) -> Result<(), String> {
    for (c, state, path) in found(name)? {
        println!(
            "{:<15} {:<26} {:<22} {}",
            c.id,
            c.title,
            state.says(),
            path.display()
        );
    }
    Ok(())
}

/// Where a client stands with kura.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(super) enum ClientState {
    /// Its file names kura.
    Configured,
    /// Its file is there, without kura.
    Without,
    /// Its own folder is there, its file not yet.
    NoFileYet,
    NotFound,
}

impl ClientState {
    /// How `kura setup --list` says it.
    pub(super) fn says(self) -> &'static str {
        match self {
            ClientState::Configured => "kura is configured",
            ClientState::Without => "found, without kura",
            ClientState::NoFileYet => "installed, no file yet",
            ClientState::NotFound => "not found",
        }
    }
}

/// Each known client, whether kura (as `name`) is in its file, and the file.
pub(super) fn found(name: &str) -> Result<Vec<(&'static Client, ClientState, PathBuf)>, String> {
    let mut out = Vec::new();
    for c in CLIENTS {
        let path = c.path()?;
        let state = match crate::fs::read_operator_file(&path) {
            Ok(bytes) if has_entry(c.format, &String::from_utf8_lossy(&bytes), name) => {
                ClientState::Configured
            }
            Ok(_) => ClientState::Without,
            // A folder of the client's own (not the home itself) says it
            // is installed.
            Err(_)
                if path.parent().is_some_and(|d| {
                    Some(d) != dirs::home_dir().as_deref() && Root::open(d).is_ok()
                }) =>
            {
                ClientState::NoFileYet
            }
            Err(_) => ClientState::NotFound,
        };
        out.push((c, state, path));
    }
    Ok(out)
}

/// `kura setup`.
pub fn run(a: &SetupArgs) -> Result<(), String> {
    if a.list {
        return list(&a.name);
    }
    let Some(id) = &a.client else {
        return Err("name a client (`kura setup --list` shows them)".into());
    };
    let client = Client::find(id)?;
    let entry = Entry::new(a)?;
    let path = client.path()?;
    let (folder, file) = match (path.parent(), path.file_name()) {
        (Some(d), Some(f)) => (d.to_owned(), f.to_string_lossy().into_owned()),
        _ => return Err(format!("{}: not a file path", path.display())),
    };
    let shown = path.display().to_string();
    let fail = |e: String| format!("{} ({shown}): {e}", client.title);
    if a.dry_run {
        let current = crate::fs::read_operator_file(&path)
            .ok()
            .map(|b| String::from_utf8_lossy(&b).into_owned());
        match merged(client.format, current.as_deref(), &a.name, &entry).map_err(fail)? {
            None => println!("{shown}: kura is already set up this way; nothing to change"),
            Some(new) => print!("{}", diff(current.as_deref().unwrap_or(""), &new, &shown)),
        }
        return Ok(());
    }
    let wrote = write_entry(&folder, &file, |current| {
        merged(client.format, current, &a.name, &entry)
    })
    .map_err(fail)?;
    match wrote {
        Wrote::Unchanged => {
            println!("{shown}: kura is already set up this way; nothing changed");
            return Ok(());
        }
        Wrote::Replaced(backup) => println!(
            "{shown}: kura added as \"{}\" (the previous file is kept as {})",
            a.name,
            path.with_file_name(backup).display()
        ),
        Wrote::Created => println!("{shown}: created with kura as \"{}\"", a.name),
    }
    println!("Restart {} to load it.", client.title);
    Ok(())
}

/// What [`write_entry`] did.
#[derive(Debug, PartialEq, Eq)]
enum Wrote {
    Unchanged,
    Created,
    /// The previous file is kept under this name, beside it.
    Replaced(String),
}

/// Set `file` in `folder` to what `make` turns its current text into (None:
/// leave it). The bytes about to be replaced are kept first as
/// `FILE.kura-backup`; then the file is replaced atomically, and only if
/// it still holds those bytes — a client that rewrote it meanwhile keeps
/// its version and the call says to run again. A fault at any step leaves
/// the old file or the new one, whole.
fn write_entry(
    folder: &std::path::Path,
    file: &str,
    make: impl Fn(Option<&str>) -> Result<Option<String>, String>,
) -> Result<Wrote, String> {
    use crate::error::{Code, Error};
    crate::fs::create_operator_dir(folder).map_err(|e| e.to_string())?;
    let root = Root::open(folder).map_err(|e| e.to_string())?;
    let rel = RelPath::parse(file, false).map_err(|e| e.message)?;
    let current = match root.read(&rel) {
        Ok(bytes) => Some(bytes),
        Err(e) if e.code == Code::NotFound => None,
        Err(e) => return Err(e.message),
    };
    let text = current.as_deref().map(String::from_utf8_lossy);
    let Some(new) = make(text.as_deref())? else {
        return Ok(Wrote::Unchanged);
    };
    let backup = match &current {
        Some(old) => Some(keep_backup(&root, file, &rel, old).map_err(|e| {
            format!(
                "the backup could not be written, nothing changed: {}",
                e.message
            )
        })?),
        None => None,
    };
    root.update(&rel, |now| {
        if now != current.as_deref() {
            return Err(Error::new(
                Code::Conflict,
                "another program changed the file while kura was writing it; nothing changed, run kura setup again",
            ));
        }
        Ok(Some((new.clone().into_bytes(), ())))
    })
    .map_err(|e| e.message)?;
    Ok(match backup {
        Some(b) => Wrote::Replaced(b),
        None => Wrote::Created,
    })
}

/// Keep `old`, the bytes of `file` about to be replaced, in a new file
/// beside it with its mode and owner: `FILE.kura-backup`, or when that is
/// taken `FILE.kura-backup.2`, `.3`, …, so that the first backup (the file
/// as it was before kura ever touched it) is never replaced. When the
/// newest backup already holds these bytes, it is the backup. Its name.
fn keep_backup(
    root: &Root,
    file: &str,
    rel: &RelPath,
    old: &[u8],
) -> Result<String, crate::error::Error> {
    let base = format!("{file}.kura-backup");
    let number = |name: &str| match name.strip_prefix(base.as_str())? {
        "" => Some(1),
        n => n.strip_prefix('.')?.parse::<u32>().ok().filter(|&n| n >= 2),
    };
    let named = |n: u32| match n {
        1 => base.clone(),
        n => format!("{base}.{n}"),
    };
    let newest = root
        .list(&RelPath::root())?
        .iter()
        .filter_map(|e| number(&e.name))
        .max();
    if let Some(n) = newest {
        let path = RelPath::parse(&named(n), false)?;
        if root.read(&path).is_ok_and(|b| b == old) {
            return Ok(named(n));
        }
    }
    let (path, ()) = root.create_like(&RelPath::root(), rel, |names| {
        let next = names
            .iter()
            .filter_map(|n| number(n))
            .max()
            .map_or(1, |n| n + 1);
        Ok((named(next), old.to_vec(), ()))
    })?;
    Ok(path.to_string())
}

/// A unified diff of `old` → `new`.
fn diff(old: &str, new: &str, name: &str) -> String {
    kura_history::unified_diff(old, new, name, name)
}

#[cfg(test)]
mod tests {
    use super::*;

    fn entry() -> Entry {
        Entry {
            command: "/opt/kura".into(),
            args: vec!["serve".into(), "--vault-root".into(), "/notes".into()],
        }
    }

    const CURSOR: Format = Format::Json {
        key: "mcpServers",
        typed: false,
    };

    #[test]
    fn another_servers_entry_is_kept_byte_for_byte_and_a_second_run_changes_nothing() {
        let before = "{\n  \"theme\": \"dark\",\n  \"mcpServers\": {\n    \"other\": {\"command\": \"x\",   \"args\": [\"--odd\"]}\n  }\n}\n";
        let after = merged(CURSOR, Some(before), "kura", &entry())
            .unwrap()
            .unwrap();
        assert!(
            after.contains("{\"command\": \"x\",   \"args\": [\"--odd\"]}"),
            "{after}"
        );
        assert!(
            after.find("\"theme\"") < after.find("\"mcpServers\""),
            "order kept: {after}"
        );
        let v: Value = serde_json::from_str(&after).unwrap();
        assert_eq!(v["mcpServers"]["kura"]["command"], "/opt/kura");
        assert_eq!(v["mcpServers"]["kura"]["args"][2], "/notes");
        assert!(
            merged(CURSOR, Some(&after), "kura", &entry())
                .unwrap()
                .is_none()
        );
    }

    #[test]
    fn a_file_with_comments_is_not_rewritten_and_the_entry_is_shown() {
        let jsonc = "{\n  // my settings\n  \"theme\": \"dark\",\n}\n";
        let e = merged(Format::Zed, Some(jsonc), "kura", &entry()).unwrap_err();
        assert!(e.contains("\"kura\": {"), "{e}");
        assert!(e.contains("context_servers"), "{e}");
    }

    #[test]
    fn codex_toml_keeps_its_comments_and_other_servers() {
        let before = "# my codex\nmodel = \"o3\"\n\n[mcp_servers.other]\ncommand = \"x\" # mine\n";
        let after = merged(Format::CodexToml, Some(before), "kura", &entry())
            .unwrap()
            .unwrap();
        assert!(after.starts_with(before), "{after}");
        let t: toml::Table = after.parse().unwrap();
        assert_eq!(
            t["mcp_servers"]["kura"]["command"].as_str(),
            Some("/opt/kura")
        );
        assert!(
            merged(Format::CodexToml, Some(&after), "kura", &entry())
                .unwrap()
                .is_none()
        );
    }

    /// `write_entry` on a folder holding `OLD`, turning it into `…+kura`,
    /// under fault plan `plan`: what it returned, the file, the backup.
    #[allow(clippy::disallowed_methods)] // the test looks at the folder as any program would
    fn written_under(plan: crate::fault::Plan) -> (Result<Wrote, String>, String, Option<String>) {
        let dir = tempfile::tempdir().unwrap();
        std::fs::write(dir.path().join("mcp.json"), "OLD").unwrap();
        let result = crate::fault::with(plan, || {
            write_entry(dir.path(), "mcp.json", |cur| {
                Ok(Some(format!("{}+kura", cur.unwrap_or(""))))
            })
        });
        let file = std::fs::read_to_string(dir.path().join("mcp.json")).unwrap();
        let backup = std::fs::read_to_string(dir.path().join("mcp.json.kura-backup")).ok();
        (result, file, backup)
    }

    #[test]
    #[allow(clippy::disallowed_methods)] // the test looks at the folder as any program would
    fn a_backup_is_no_more_readable_than_its_original_and_never_replaced() {
        use std::os::unix::fs::PermissionsExt;
        let dir = tempfile::tempdir().unwrap();
        let path = dir.path().join("claude.json");
        // Another server's token in the person's own, private file.
        std::fs::write(&path, "{\"token\": \"SECRET\"}").unwrap();
        std::fs::set_permissions(&path, std::fs::Permissions::from_mode(0o600)).unwrap();
        let add = |tag: &'static str| {
            write_entry(dir.path(), "claude.json", move |cur| {
                Ok(Some(format!("{}{tag}", cur.unwrap_or(""))))
            })
            .unwrap()
        };
        let mode = |name: &str| {
            let m = std::fs::metadata(dir.path().join(name)).unwrap();
            m.permissions().mode() & 0o777
        };
        let read = |name: &str| std::fs::read_to_string(dir.path().join(name)).unwrap();
        let first = add("+kura");
        assert_eq!(first, Wrote::Replaced("claude.json.kura-backup".into()));
        assert_eq!(read("claude.json.kura-backup"), "{\"token\": \"SECRET\"}");
        assert_eq!(mode("claude.json.kura-backup"), 0o600);
        assert_eq!(mode("claude.json"), 0o600);
        // A second run that changes the file keeps the first backup whole.
        let second = add("+again");
        assert_eq!(second, Wrote::Replaced("claude.json.kura-backup.2".into()));
        assert_eq!(read("claude.json.kura-backup"), "{\"token\": \"SECRET\"}");
        assert_eq!(
            read("claude.json.kura-backup.2"),
            "{\"token\": \"SECRET\"}+kura"
        );
        assert_eq!(mode("claude.json.kura-backup.2"), 0o600);
    }

    #[test]
    fn a_fault_at_any_step_leaves_the_old_file_or_the_new_one_whole() {
        use crate::fault::{Fault, Plan};
        let mut faulted = 0;
        for n in 1..=40 {
            let plan = Plan {
                at: Some((n, Fault::Fail(5))), // EIO
                ..Plan::default()
            };
            let (result, file, backup) = written_under(plan);
            match result {
                Ok(Wrote::Replaced(_)) => {
                    assert_eq!(file, "OLD+kura", "step {n}");
                    assert_eq!(backup.as_deref(), Some("OLD"), "step {n}");
                }
                Ok(other) => panic!("step {n}: {other:?}"),
                Err(_) => {
                    faulted += 1;
                    assert_eq!(file, "OLD", "step {n}: a failed write changes nothing");
                }
            }
        }
        assert!(
            faulted >= 2,
            "the backup's and the file's writes both fault somewhere"
        );
    }

    #[test]
    #[allow(clippy::disallowed_methods)] // the other program writes as any program would
    fn another_program_writing_meanwhile_is_never_overwritten() {
        use crate::fault::{Meddler, Plan};
        use std::sync::atomic::{AtomicBool, Ordering};
        let mut raced = 0;
        for n in 1..=40 {
            let dir = tempfile::tempdir().unwrap();
            let path = dir.path().join("mcp.json");
            std::fs::write(&path, "OLD").unwrap();
            let ran = std::sync::Arc::new(AtomicBool::new(false));
            let (theirs, seen) = (path.clone(), ran.clone());
            let plan = Plan {
                meddle: Some((
                    n,
                    Meddler(std::sync::Arc::new(move || {
                        // The client rewrites its own file just before
                        // kura's step `n`.
                        std::fs::write(&theirs, "THEIRS").unwrap();
                        seen.store(true, Ordering::SeqCst);
                    })),
                )),
                ..Plan::default()
            };
            let result = crate::fault::with(plan, || {
                write_entry(dir.path(), "mcp.json", |cur| {
                    Ok(Some(format!("{}+kura", cur.unwrap_or(""))))
                })
            });
            let file = std::fs::read_to_string(&path).unwrap();
            if !ran.load(Ordering::SeqCst) {
                assert_eq!(file, "OLD+kura", "step {n}: no race");
                continue;
            }
            raced += 1;
            match result {
                // Their text was read and kura's entry added to it.
                Ok(_) => assert_eq!(file, "THEIRS+kura", "step {n}"),
                Err(e) => assert_eq!(file, "THEIRS", "step {n}: refused ({e}) and theirs kept"),
            }
        }
        assert!(raced >= 2, "the other program wrote at several steps");
    }

    #[test]
    fn every_client_gets_an_entry_it_reads_back() {
        for c in CLIENTS {
            let text = merged(c.format, None, "kura", &entry()).unwrap().unwrap();
            assert!(has_entry(c.format, &text, "kura"), "{}: {text}", c.id);
            assert!(!has_entry(c.format, &text, "other"), "{}", c.id);
        }
    }
}
