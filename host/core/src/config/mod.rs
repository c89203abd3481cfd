//! Configuration: every root and seed setting, from defaults < TOML file <
//! environment (the seeds' upper-case names) < command-line flags.

use std::collections::BTreeMap;
use std::path::{Path, PathBuf};

use serde::{Deserialize, Serialize};

mod plugins;
mod reference;

pub use plugins::{PluginsConfig, Slot, SlotConfig, SlotLimits};
use plugins::{SLOT_FIELDS, normalize_plugins, slot_table};
pub use reference::{ComponentRef, Digest, OCI_SCHEME, OciRef};

/// The default of `max_file_bytes`: the largest file kura reads whole or
/// writes (the file system layer applies it to each root).
pub const MAX_FILE_BYTES: u64 = 16 << 20;

/// Which kind of value a setting holds, for parsing environment strings.
#[derive(Clone, Copy)]
enum Kind {
    Path,
    Str,
    Bool,
    Int,
    Float,
    /// Comma-separated in the environment and on the command line, an array
    /// (or the same string) in TOML.
    List,
}

/// Every setting: its key (the upper-case form is the environment variable),
/// its kind (the README's configuration table names each; a test checks).
const SETTINGS: &[(&str, Kind)] = &[
    ("vault_root", Kind::Path),
    ("manuals_root", Kind::Path),
    ("vibe_root", Kind::Path),
    ("state_dir", Kind::Path),
    ("allow_file_scope", Kind::Bool),
    ("default_manual_id", Kind::Str),
    ("late_rerank_enabled", Kind::Bool),
    ("claim_graph_enabled", Kind::Bool),
    ("corrective_enabled", Kind::Bool),
    ("dense_search_enabled", Kind::Bool),
    ("synonyms_enabled", Kind::Bool),
    ("translations_enabled", Kind::Bool),
    ("link_evidence_enabled", Kind::Bool),
    ("sem_cache_enabled", Kind::Bool),
    ("sem_cache_max_summary_gap", Kind::Int),
    ("sem_cache_max_summary_conflict", Kind::Int),
    ("sparse_query_coverage_weight", Kind::Float),
    ("scan_max_chars", Kind::Int),
    ("max_file_bytes", Kind::Int),
    ("coverage_min_ratio", Kind::Float),
    ("marginal_gain_min", Kind::Float),
    ("trace_ttl_sec", Kind::Int),
    ("trace_max_keep", Kind::Int),
    ("vault_scan_default_chunk_lines", Kind::Int),
    ("vault_scan_max_chunk_lines", Kind::Int),
    ("plugin_timeout_ms", Kind::Int),
    ("plugin_memory_mib", Kind::Int),
    ("plugin_instances", Kind::Int),
    ("plugin_trusted_keys", Kind::List),
    ("plugin_require_signature", Kind::Bool),
    ("read_only", Kind::Bool),
    ("tools", Kind::List),
    ("sandbox", Kind::Bool),
    ("max_concurrent_calls", Kind::Int),
    ("confirm", Kind::Str),
    ("lock_key", Kind::Str),
    ("locked_folders", Kind::List),
    ("history_days", Kind::Int),
    ("history_max_mb", Kind::Int),
    ("history_keep_changes", Kind::Int),
    ("history_keep_days", Kind::Int),
    ("query_budget_ms", Kind::Int),
];

/// Which tool calls kura asks the user to confirm first (through the
/// client, which must be able to ask: elicitation).
#[derive(Clone, Copy, Debug, Default, Deserialize, Serialize, PartialEq, Eq)]
#[serde(rename_all = "lowercase")]
pub enum Confirm {
    /// None: every call runs as asked.
    Never,
    /// The ones a user may regret: deleting or moving a folder, moving a
    /// note many others link to, a copy over an existing note.
    #[default]
    Destructive,
    /// Those, and every other call of a tool that may overwrite or remove.
    Always,
}

/// The resolved configuration.
#[derive(Clone, Debug, Deserialize, Serialize, PartialEq)]
#[serde(default, deny_unknown_fields)]
pub struct Config {
    pub vault_root: Option<PathBuf>,
    pub manuals_root: Option<PathBuf>,
    /// Default `~/.vibe`, served only when that folder exists.
    pub vibe_root: Option<PathBuf>,
    pub state_dir: Option<PathBuf>,
    pub allow_file_scope: bool,
    pub default_manual_id: Option<String>,
    pub late_rerank_enabled: bool,
    pub claim_graph_enabled: bool,
    pub corrective_enabled: bool,
    /// Meaning-aware search with the sentence encoder, when its model is
    /// installed.
    pub dense_search_enabled: bool,
    /// Query expansion from the installed synonym dictionary and the
    /// manuals' own `synonyms.txt`.
    pub synonyms_enabled: bool,
    /// A question's words translated into the language of the manual it
    /// searches, from the installed bilingual lexicon.
    pub translations_enabled: bool,
    /// vault_find ranks a note linked to or from its strongest hits higher.
    pub link_evidence_enabled: bool,
    pub sem_cache_enabled: bool,
    pub sem_cache_max_summary_gap: i64,
    pub sem_cache_max_summary_conflict: i64,
    pub sparse_query_coverage_weight: f64,
    pub scan_max_chars: i64,
    /// Files over this are streamed by the reads and scans, indexed and
    /// searched by their first bytes, and never read whole or rewritten.
    pub max_file_bytes: i64,
    pub coverage_min_ratio: f64,
    pub marginal_gain_min: f64,
    pub trace_ttl_sec: i64,
    pub trace_max_keep: i64,
    pub vault_scan_default_chunk_lines: i64,
    pub vault_scan_max_chunk_lines: i64,
    pub plugin_timeout_ms: i64,
    pub plugin_memory_mib: i64,
    /// Core instances, and as many memories and tables, one component may
    /// create (componentize-py needs 14).
    pub plugin_instances: i64,
    /// The minisign public keys (base64, the second line of a `.pub` file)
    /// whose signatures kura accepts on a component.
    #[serde(deserialize_with = "list")]
    pub plugin_trusted_keys: Vec<String>,
    /// Refuse a component without a valid signature by a trusted key (the
    /// embedded defaults are part of kura itself). Unset: required as soon
    /// as any key is trusted — a registry that drops a signature must not
    /// get an unsigned component loaded; `false` lets unsigned ones load
    /// beside the signed ones.
    pub plugin_require_signature: Option<bool>,
    /// Serve no tool that writes (a read-only vault and workspaces).
    pub read_only: bool,
    /// Serve only these tools: names (`vault_read`) or domains (`manual`,
    /// `vault`, `vibe`, `bridge`); unset serves every tool. Set but empty
    /// (`TOOLS=` from an unset variable) is refused, never "everything".
    #[serde(deserialize_with = "some_list")]
    pub tools: Option<Vec<String>>,
    /// Confine the serving process to its roots (Linux Landlock).
    pub sandbox: bool,
    /// Which calls ask the user first, when the client can ask.
    pub confirm: Confirm,
    /// The front-matter key whose `true` locks a note: no tool creates
    /// over, changes, moves or deletes it.
    pub lock_key: String,
    /// Folders (of the vault or the vibe workspace, from the root) whose
    /// files no tool creates, changes, moves or deletes.
    pub locked_folders: Vec<String>,
    /// Days of changes each root's history keeps (0: all of them).
    pub history_days: i64,
    /// Megabytes each root's history may take (0: any size); past it,
    /// its oldest changes go.
    pub history_max_mb: i64,
    /// The newest changes each root's history keeps whatever its size
    /// and their age (the floor retention never cuts into).
    pub history_keep_changes: i64,
    /// Days of changes each root's history keeps whatever its size.
    pub history_keep_days: i64,
    /// How long one vault filter or base may evaluate before it stops
    /// with `timeout`.
    pub query_budget_ms: i64,
    /// Tool calls run at once, over all sessions; the others wait their
    /// turn. 0: four per core.
    pub max_concurrent_calls: i64,
    pub plugins: PluginsConfig,
}

/// A list setting: a TOML array of strings or one comma-separated string.
fn some_list<'de, D: serde::Deserializer<'de>>(d: D) -> Result<Option<Vec<String>>, D::Error> {
    list(d).map(Some)
}

fn list<'de, D: serde::Deserializer<'de>>(d: D) -> Result<Vec<String>, D::Error> {
    #[derive(serde::Deserialize)]
    #[serde(untagged)]
    enum Either {
        Many(Vec<String>),
        One(String),
    }
    Ok(match Either::deserialize(d)? {
        Either::Many(v) => v,
        Either::One(s) => s
            .split(',')
            .map(str::trim)
            .filter(|s| !s.is_empty())
            .map(ToOwned::to_owned)
            .collect(),
    })
}

impl Default for Config {
    fn default() -> Self {
        Config {
            vault_root: None,
            manuals_root: None,
            vibe_root: None,
            state_dir: None,
            allow_file_scope: false,
            default_manual_id: None,
            late_rerank_enabled: true,
            claim_graph_enabled: true,
            corrective_enabled: true,
            dense_search_enabled: true,
            synonyms_enabled: true,
            translations_enabled: true,
            link_evidence_enabled: true,
            sem_cache_enabled: true,
            sem_cache_max_summary_gap: -1,
            sem_cache_max_summary_conflict: -1,
            sparse_query_coverage_weight: 0.35,
            scan_max_chars: 12_000,
            max_file_bytes: MAX_FILE_BYTES as i64,
            coverage_min_ratio: 0.90,
            marginal_gain_min: 0.02,
            trace_ttl_sec: 1800,
            trace_max_keep: 100,
            vault_scan_default_chunk_lines: 200,
            vault_scan_max_chunk_lines: 2000,
            plugin_timeout_ms: 2000,
            plugin_memory_mib: 256,
            plugin_instances: 64,
            plugin_trusted_keys: Vec::new(),
            plugin_require_signature: None,
            read_only: false,
            tools: None,
            sandbox: true,
            confirm: Confirm::Destructive,
            lock_key: "locked".into(),
            locked_folders: Vec::new(),
            history_days: 365,
            history_max_mb: 200,
            history_keep_changes: 100,
            history_keep_days: 7,
            query_budget_ms: 2000,
            max_concurrent_calls: 0,
            plugins: PluginsConfig::default(),
        }
    }
}

/// Values given on the command line, highest precedence.
#[derive(Clone, Debug, Default)]
pub struct Overrides {
    pub values: BTreeMap<String, String>,
}

#[derive(Debug, thiserror::Error)]
pub enum ConfigError {
    #[error("cannot read config file {path}: {source}")]
    Read {
        path: PathBuf,
        source: std::io::Error,
    },
    #[error("config file {path}: {message}")]
    Parse { path: PathBuf, message: String },
    #[error("{name}={value}: {message}")]
    Value {
        name: String,
        value: String,
        message: String,
    },
    #[error("{0}")]
    Roots(String),
}

fn parse_value(name: &str, kind: Kind, raw: &str) -> Result<toml::Value, ConfigError> {
    let bad = |message: &str| ConfigError::Value {
        name: name.to_owned(),
        value: raw.to_owned(),
        message: message.to_owned(),
    };
    Ok(match kind {
        Kind::Path | Kind::Str => toml::Value::String(raw.to_owned()),
        Kind::Bool => match raw.trim().to_ascii_lowercase().as_str() {
            "1" | "true" | "yes" | "on" => toml::Value::Boolean(true),
            "0" | "false" | "no" | "off" => toml::Value::Boolean(false),
            _ => return Err(bad("expected true or false")),
        },
        Kind::Int => {
            toml::Value::Integer(raw.trim().parse().map_err(|_| bad("expected an integer"))?)
        }
        Kind::Float => {
            toml::Value::Float(raw.trim().parse().map_err(|_| bad("expected a number"))?)
        }
        Kind::List => toml::Value::Array(
            raw.split(',')
                .map(str::trim)
                .filter(|s| !s.is_empty())
                .map(|s| toml::Value::String(s.to_owned()))
                .collect(),
        ),
    })
}

/// The default config file: `$XDG_CONFIG_HOME/kura/config.toml` or the
/// platform's equivalent.
pub fn default_config_path() -> Option<PathBuf> {
    dirs::config_dir().map(|d| d.join("kura").join("config.toml"))
}

/// Every environment variable kura reads as a setting (for a child process
/// that must see only the configuration it is given).
pub fn env_names() -> Vec<String> {
    SETTINGS
        .iter()
        .map(|(k, _)| k.to_ascii_uppercase())
        .chain(
            Slot::ALL
                .iter()
                .map(|s| format!("KURA_PLUGIN_{}", s.key().to_ascii_uppercase())),
        )
        .collect()
}

/// The config file's settings (names lower-cased) and its `plugins` table.
fn file_layer(file: Option<(&Path, &str)>) -> Result<(toml::Table, toml::Table), ConfigError> {
    let mut table = toml::Table::new();
    if let Some((path, text)) = file {
        let parsed: toml::Table = toml::from_str(text).map_err(|e| ConfigError::Parse {
            path: path.to_owned(),
            message: e.to_string(),
        })?;
        // Accept the seeds' upper-case names in the file too.
        for (k, v) in parsed {
            table.insert(k.to_ascii_lowercase(), v);
        }
    }
    let file_name = || file.map(|f| f.0.to_owned()).unwrap_or_default();
    let plugins = match table.remove("plugins") {
        Some(toml::Value::Table(t)) => {
            normalize_plugins(t).map_err(|message| ConfigError::Parse {
                path: file_name(),
                message,
            })?
        }
        Some(_) => {
            return Err(ConfigError::Parse {
                path: file_name(),
                message: "`plugins` must be a table".into(),
            });
        }
        None => toml::Table::new(),
    };
    Ok((table, plugins))
}

/// Settings from the environment: each one's upper-case name, and
/// `KURA_PLUGIN_<SLOT>` for a slot's component.
fn env_layer(
    table: &mut toml::Table,
    plugins: &mut toml::Table,
    env: impl Fn(&str) -> Option<String>,
) -> Result<(), ConfigError> {
    for (key, kind) in SETTINGS {
        let upper = key.to_ascii_uppercase();
        // An empty variable is unset, except the one that narrows what is
        // served: `TOOLS=` from an unset variable must not mean every tool.
        if *key == "tools" && env(&upper).is_some_and(|s| s.trim().is_empty()) {
            table.insert((*key).to_owned(), toml::Value::Array(Vec::new()));
            continue;
        }
        if let Some(raw) = env(&upper).filter(|s| !s.is_empty()) {
            table.insert((*key).to_owned(), parse_value(&upper, *kind, &raw)?);
        }
    }
    for slot in Slot::ALL {
        let upper = format!("KURA_PLUGIN_{}", slot.key().to_ascii_uppercase());
        if let Some(raw) = env(&upper).filter(|s| !s.is_empty()) {
            slot_table(plugins, slot).insert("path".into(), toml::Value::String(raw));
        }
    }
    Ok(())
}

/// Settings from `--set name=value` flags: a setting's name, or
/// `plugins.<slot>[.<field>]`.
fn cli_layer(
    table: &mut toml::Table,
    plugins: &mut toml::Table,
    cli: &Overrides,
) -> Result<(), ConfigError> {
    for (name, raw) in &cli.values {
        if let Some(rest) = name.strip_prefix("plugins.") {
            let (slot_name, field) = rest.split_once('.').unwrap_or((rest, "path"));
            let bad = |message: String| ConfigError::Value {
                name: name.clone(),
                value: raw.clone(),
                message,
            };
            let slot = Slot::parse(slot_name)
                .ok_or_else(|| bad(format!("unknown plugin slot (slots: {})", Slot::names())))?;
            let value = match field {
                "path" | "digest" | "folder" => toml::Value::String(raw.clone()),
                "memory_mib" | "timeout_ms" | "instances" => parse_value(name, Kind::Int, raw)?,
                "http_hosts" | "env" => parse_value(name, Kind::List, raw)?,
                _ => {
                    return Err(bad(format!("unknown plugin setting ({SLOT_FIELDS})")));
                }
            };
            slot_table(plugins, slot).insert(field.to_owned(), value);
            continue;
        }
        let Some((key, kind)) = SETTINGS.iter().find(|(k, _)| k == name) else {
            return Err(ConfigError::Value {
                name: name.clone(),
                value: raw.clone(),
                message: "unknown setting".into(),
            });
        };
        table.insert(
            (*key).to_owned(),
            parse_value(&name.to_ascii_uppercase(), *kind, raw)?,
        );
    }
    Ok(())
}

impl Config {
    /// Build the configuration. `file_text` is the TOML file's content (the
    /// caller reads it through `fs`), `env` looks up environment variables.
    pub fn resolve(
        file: Option<(&Path, &str)>,
        env: impl Fn(&str) -> Option<String>,
        cli: &Overrides,
    ) -> Result<Config, ConfigError> {
        // Layers in rising precedence: the file, the environment, the flags.
        let (mut table, mut plugins) = file_layer(file)?;
        env_layer(&mut table, &mut plugins, env)?;
        cli_layer(&mut table, &mut plugins, cli)?;
        table.insert("plugins".into(), toml::Value::Table(plugins));
        let where_ = file
            .map(|f| f.0.to_owned())
            .unwrap_or_else(|| PathBuf::from("(settings)"));
        let mut config: Config =
            toml::Value::Table(table)
                .try_into()
                .map_err(|e: toml::de::Error| ConfigError::Parse {
                    path: where_.clone(),
                    message: e.message().to_owned(),
                })?;
        if config.vibe_root.is_none()
            && let Some(home) = dirs::home_dir()
        {
            let default = home.join(".vibe");
            if default.is_dir() {
                config.vibe_root = Some(default);
            }
        }
        config.check_values()?;
        Ok(config)
    }

    fn check_values(&self) -> Result<(), ConfigError> {
        let bad = |name: &str, value: String, message: &str| ConfigError::Value {
            name: name.to_ascii_uppercase(),
            value,
            message: message.into(),
        };
        if self.scan_max_chars < 1 {
            return Err(bad(
                "scan_max_chars",
                self.scan_max_chars.to_string(),
                "must be >= 1",
            ));
        }
        if self.max_file_bytes < 4096 {
            return Err(bad(
                "max_file_bytes",
                self.max_file_bytes.to_string(),
                "must be >= 4096",
            ));
        }
        if self.tools.as_ref().is_some_and(Vec::is_empty) {
            return Err(bad(
                "tools",
                String::new(),
                "names no tool; name the tools or domains to serve, or leave it unset for all",
            ));
        }
        for (name, v) in [
            ("history_days", self.history_days),
            ("history_max_mb", self.history_max_mb),
        ] {
            if v < 0 {
                return Err(bad(name, v.to_string(), "must be >= 0 (0: no limit)"));
            }
        }
        for (name, v) in [
            ("history_keep_changes", self.history_keep_changes),
            ("history_keep_days", self.history_keep_days),
        ] {
            if v < 0 {
                return Err(bad(name, v.to_string(), "must be >= 0 (0: no floor)"));
            }
        }
        for (name, v) in [
            ("plugin_timeout_ms", self.plugin_timeout_ms),
            ("query_budget_ms", self.query_budget_ms),
        ] {
            if v < 1 {
                return Err(bad(name, v.to_string(), "must be >= 1"));
            }
        }
        for slot in Slot::ALL {
            let c = self.plugins.slot(slot);
            c.check().map_err(|message| ConfigError::Value {
                name: format!("plugins.{slot}"),
                value: c
                    .path
                    .as_deref()
                    .map(|p| p.display().to_string())
                    .unwrap_or_default(),
                message,
            })?;
            for (name, v) in [
                ("plugin_memory_mib", Some(self.plugin_memory_mib)),
                ("plugin_instances", Some(self.plugin_instances)),
                ("memory_mib", c.memory_mib),
                ("timeout_ms", c.timeout_ms),
                ("instances", c.instances),
            ] {
                if let Some(v) = v
                    && !(1..=u32::MAX as i64).contains(&v)
                {
                    let name = if name.starts_with("plugin_") {
                        name.to_ascii_uppercase()
                    } else {
                        format!("plugins.{slot}.{name}")
                    };
                    return Err(ConfigError::Value {
                        name,
                        value: v.to_string(),
                        message: "must be >= 1".into(),
                    });
                }
            }
        }
        for (name, v) in [
            ("coverage_min_ratio", self.coverage_min_ratio),
            ("marginal_gain_min", self.marginal_gain_min),
        ] {
            if !(0.0..=1.0).contains(&v) {
                return Err(bad(name, v.to_string(), "must be between 0 and 1"));
            }
        }
        Ok(())
    }

    /// A slot's limits: its own settings over the global ones.
    pub fn slot_limits(&self, slot: Slot) -> SlotLimits {
        let c = self.plugins.slot(slot);
        SlotLimits {
            memory_mib: c.memory_mib.unwrap_or(self.plugin_memory_mib) as u64,
            timeout_ms: c.timeout_ms.unwrap_or(self.plugin_timeout_ms) as u64,
            instances: c.instances.unwrap_or(self.plugin_instances) as u32,
        }
    }

    /// The state folder: configured, or the per-user cache folder.
    pub fn state_dir(&self) -> Option<PathBuf> {
        self.state_dir
            .clone()
            .or_else(|| dirs::cache_dir().map(|d| d.join("kura")))
    }

    /// The state folder holds kura's own files: it may neither lie inside a
    /// root (the tools would serve and edit them) nor contain one. Both
    /// paths are resolved (links followed) by the caller.
    pub fn check_state_dir(state: &Path, roots: &[(&str, &Path)]) -> Result<(), ConfigError> {
        for (name, root) in roots {
            let how = if state.starts_with(root) {
                "is inside"
            } else if root.starts_with(state) {
                "contains"
            } else {
                continue;
            };
            return Err(ConfigError::Roots(format!(
                "the state folder {} {how} {} ({}); set STATE_DIR (--state-dir) to a folder outside every root",
                state.display(),
                name.to_ascii_uppercase(),
                root.display()
            )));
        }
        Ok(())
    }

    /// Roots must exist, be folders and not overlap one another.
    pub fn check_roots(roots: &[(&str, &Path)]) -> Result<(), ConfigError> {
        for (i, (a, pa)) in roots.iter().enumerate() {
            for (b, pb) in &roots[i + 1..] {
                if pa.starts_with(pb) || pb.starts_with(pa) {
                    return Err(ConfigError::Roots(format!(
                        "{} ({}) and {} ({}) overlap; each root must be a separate folder",
                        a.to_ascii_uppercase(),
                        pa.display(),
                        b.to_ascii_uppercase(),
                        pb.display()
                    )));
                }
            }
        }
        Ok(())
    }
}

#[cfg(test)]
mod tests {
    #[allow(clippy::disallowed_methods)] // reads the repository's README
    #[test]
    fn the_readme_configuration_table_names_every_setting() {
        let readme = std::fs::read_to_string(
            std::path::Path::new(env!("CARGO_MANIFEST_DIR")).join("../../README.md"),
        )
        .unwrap();
        let rows: Vec<&str> = readme.lines().filter(|l| l.starts_with("| `")).collect();
        for (key, _) in SETTINGS {
            let var = format!("`{}`", key.to_ascii_uppercase());
            assert!(
                rows.iter()
                    .any(|r| r.split(" | ").next().is_some_and(|c| c.contains(&var))),
                "README's configuration table lacks {var}"
            );
        }
    }

    use super::*;

    #[test]
    fn state_dir_inside_or_around_a_root_is_refused() {
        let roots = [("vault_root", Path::new("/home/u"))];
        let e = Config::check_state_dir(Path::new("/home/u/.cache/kura"), &roots).unwrap_err();
        assert!(e.to_string().contains("is inside VAULT_ROOT"), "{e}");
        let e = Config::check_state_dir(Path::new("/home"), &roots).unwrap_err();
        assert!(e.to_string().contains("contains VAULT_ROOT"), "{e}");
        Config::check_state_dir(Path::new("/var/cache/kura"), &roots).unwrap();
        Config::check_state_dir(Path::new("/home/user2"), &roots).unwrap();
    }

    fn resolve(
        file: Option<&str>,
        env: &[(&str, &str)],
        cli: &[(&str, &str)],
    ) -> Result<Config, ConfigError> {
        let env: BTreeMap<String, String> = env
            .iter()
            .map(|(k, v)| (k.to_string(), v.to_string()))
            .collect();
        let cli = Overrides {
            values: cli
                .iter()
                .map(|(k, v)| (k.to_string(), v.to_string()))
                .collect(),
        };
        Config::resolve(
            file.map(|t| (Path::new("kura.toml"), t)),
            |k| env.get(k).cloned(),
            &cli,
        )
    }

    #[test]
    fn cli_beats_env_beats_file_beats_defaults() {
        let c = resolve(None, &[], &[]).unwrap();
        assert_eq!(c.scan_max_chars, 12_000);
        assert!(!c.allow_file_scope);
        let file = "scan_max_chars = 100\nALLOW_FILE_SCOPE = true\ncoverage_min_ratio = 0.5";
        let c = resolve(Some(file), &[], &[]).unwrap();
        assert_eq!((c.scan_max_chars, c.allow_file_scope), (100, true));
        let c = resolve(Some(file), &[("SCAN_MAX_CHARS", "200")], &[]).unwrap();
        assert_eq!(c.scan_max_chars, 200);
        assert_eq!(c.coverage_min_ratio, 0.5);
        let c = resolve(
            Some(file),
            &[("SCAN_MAX_CHARS", "200")],
            &[("scan_max_chars", "300")],
        )
        .unwrap();
        assert_eq!(c.scan_max_chars, 300);
    }

    #[test]
    fn a_tools_profile_is_a_list_in_toml_and_comma_separated_elsewhere() {
        assert_eq!(resolve(None, &[], &[]).unwrap().tools, None);
        for file in [
            "tools = [\"manual\", \"vault_read\"]",
            "tools = \"manual, vault_read\"",
        ] {
            let c = resolve(Some(file), &[], &[]).unwrap();
            assert_eq!(c.tools.unwrap(), ["manual", "vault_read"], "{file}");
        }
        let c = resolve(None, &[("TOOLS", "vibe,")], &[("read_only", "yes")]).unwrap();
        assert_eq!(c.tools.unwrap(), ["vibe"]);
        assert!(c.read_only);
    }

    #[test]
    fn a_tools_setting_that_names_nothing_is_refused_not_read_as_every_tool() {
        for (file, env, set) in [
            (Some("tools = []"), None, None),
            (Some("tools = \" , \""), None, None),
            (None, Some(("TOOLS", "")), None),
            (None, Some(("TOOLS", ",")), None),
            (None, None, Some(("tools", ""))),
        ] {
            let e = resolve(
                file,
                &env.into_iter().collect::<Vec<_>>(),
                &set.into_iter().collect::<Vec<_>>(),
            )
            .unwrap_err()
            .to_string();
            assert!(
                e.contains("TOOLS") && e.contains("names no tool"),
                "{file:?} {env:?} {set:?}: {e}"
            );
        }
    }

    #[test]
    fn plugin_paths_from_every_layer() {
        let c = resolve(
            Some("[plugins]\nreranker = \"a.wasm\""),
            &[("KURA_PLUGIN_AUDITOR", "b.wasm")],
            &[("plugins.write_policy", "c.wasm")],
        )
        .unwrap();
        assert_eq!(
            c.plugins.reranker.path.as_deref(),
            Some(Path::new("a.wasm"))
        );
        assert_eq!(c.plugins.auditor.path.as_deref(), Some(Path::new("b.wasm")));
        assert_eq!(
            c.plugins.write_policy.path.as_deref(),
            Some(Path::new("c.wasm"))
        );
    }

    #[test]
    fn slot_names_are_accepted_in_both_spellings_and_printed_in_one() {
        for (given, slot) in [
            ("write-policy", Slot::WritePolicy),
            ("write_policy", Slot::WritePolicy),
            ("Claim_Graph", Slot::ClaimGraph),
        ] {
            assert_eq!(Slot::parse(given), Some(slot));
        }
        assert_eq!(Slot::WritePolicy.to_string(), "write-policy");
        let c = resolve(
            Some("[plugins]\nwrite-policy = \"p.wasm\"\n[plugins.claim-graph]\npath = \"g.wasm\"\ntimeout_ms = 50"),
            &[],
            &[("plugins.claim-graph.memory_mib", "32")],
        )
        .unwrap();
        assert_eq!(
            c.plugins.write_policy.path.as_deref(),
            Some(Path::new("p.wasm"))
        );
        assert_eq!(
            c.slot_limits(Slot::ClaimGraph),
            SlotLimits {
                memory_mib: 32,
                timeout_ms: 50,
                instances: 64
            }
        );
        assert_eq!(c.slot_limits(Slot::Reranker).timeout_ms, 2000);
        let e = resolve(Some("[plugins]\nranker = \"x.wasm\""), &[], &[]).unwrap_err();
        assert!(e.to_string().contains("unknown plugin slot"), "{e}");
        let e = resolve(None, &[], &[("plugins.reranker.fuel", "1")]).unwrap_err();
        assert!(e.to_string().contains("unknown plugin setting"), "{e}");
        let e = resolve(None, &[], &[("plugins.reranker.instances", "0")]).unwrap_err();
        assert!(e.to_string().contains("plugins.reranker.instances"), "{e}");
    }

    #[test]
    fn a_slot_names_an_oci_reference_and_pins_a_digest() {
        let pin = "sha256:0123456789abcdef0123456789abcdef0123456789abcdef0123456789abcdef";
        let c = resolve(
            Some(&format!(
                "plugin_trusted_keys = [\"RWQkey\"]\n[plugins.reranker]\npath = \"oci://127.0.0.1:5000/kura/r:1\"\ndigest = \"{pin}\""
            )),
            &[("PLUGIN_REQUIRE_SIGNATURE", "true")],
            &[("plugins.auditor", "a.wasm")],
        )
        .unwrap();
        let ComponentRef::Oci(r) = c.plugins.reranker.component().unwrap() else {
            panic!("an oci reference")
        };
        assert_eq!(r.to_string(), "oci://127.0.0.1:5000/kura/r:1");
        assert_eq!(c.plugins.reranker.pin().unwrap().as_str(), pin);
        assert_eq!(
            c.plugins.auditor.component(),
            Some(ComponentRef::File(Path::new("a.wasm")))
        );
        assert_eq!(c.plugin_trusted_keys, ["RWQkey"]);
        assert_eq!(c.plugin_require_signature, Some(true));
        let e = resolve(None, &[], &[("plugins.reranker", "oci://nohost")]).unwrap_err();
        assert!(e.to_string().contains("plugins.reranker"), "{e}");
        let e = resolve(None, &[], &[("plugins.reranker.digest", "sha256:12")]).unwrap_err();
        assert!(e.to_string().contains("not a digest"), "{e}");
    }

    #[test]
    fn bad_values_are_named() {
        let e = resolve(None, &[("ALLOW_FILE_SCOPE", "maybe")], &[]).unwrap_err();
        assert!(e.to_string().contains("ALLOW_FILE_SCOPE"), "{e}");
        let e = resolve(Some("no_such_setting = 1"), &[], &[]).unwrap_err();
        assert!(e.to_string().contains("no_such_setting"), "{e}");
    }

    #[test]
    fn overlapping_roots_are_refused() {
        let e = Config::check_roots(&[
            ("vault_root", Path::new("/a/b")),
            ("manuals_root", Path::new("/a")),
        ]);
        assert!(e.is_err());
        assert!(
            Config::check_roots(&[
                ("vault_root", Path::new("/a/b")),
                ("manuals_root", Path::new("/a/c"))
            ])
            .is_ok()
        );
    }
}
