//! Configuration: every root and seed setting, from defaults < TOML file <
//! environment (the seeds' upper-case names) < command-line flags.

use std::collections::BTreeMap;
use std::path::{Path, PathBuf};

use serde::{Deserialize, Serialize};

/// Which kind of value a setting holds, for parsing environment strings.
#[derive(Clone, Copy)]
enum Kind {
    Path,
    Str,
    Bool,
    Int,
    Float,
}

/// Every setting: its key (the upper-case form is the environment variable),
/// its kind, and what the README says about it.
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
    ("sem_cache_enabled", Kind::Bool),
    ("sem_cache_max_summary_gap", Kind::Int),
    ("sem_cache_max_summary_conflict", Kind::Int),
    ("sparse_query_coverage_weight", Kind::Float),
    ("scan_max_chars", Kind::Int),
    ("coverage_min_ratio", Kind::Float),
    ("marginal_gain_min", Kind::Float),
    ("trace_ttl_sec", Kind::Int),
    ("trace_max_keep", Kind::Int),
    ("vault_scan_default_chunk_lines", Kind::Int),
    ("vault_scan_max_chunk_lines", Kind::Int),
    ("plugin_timeout_ms", Kind::Int),
    ("plugin_memory_mib", Kind::Int),
];

/// Component paths, one per plugin slot; unset means the embedded default.
#[derive(Clone, Debug, Default, Deserialize, Serialize, PartialEq)]
#[serde(deny_unknown_fields)]
pub struct PluginPaths {
    pub reranker: Option<PathBuf>,
    pub claim_graph: Option<PathBuf>,
    pub auditor: Option<PathBuf>,
    pub write_policy: Option<PathBuf>,
}

pub const PLUGIN_SLOTS: [&str; 4] = ["reranker", "claim_graph", "auditor", "write_policy"];

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
    pub sem_cache_enabled: bool,
    pub sem_cache_max_summary_gap: i64,
    pub sem_cache_max_summary_conflict: i64,
    pub sparse_query_coverage_weight: f64,
    pub scan_max_chars: i64,
    pub coverage_min_ratio: f64,
    pub marginal_gain_min: f64,
    pub trace_ttl_sec: i64,
    pub trace_max_keep: i64,
    pub vault_scan_default_chunk_lines: i64,
    pub vault_scan_max_chunk_lines: i64,
    pub plugin_timeout_ms: i64,
    pub plugin_memory_mib: i64,
    pub plugins: PluginPaths,
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
            sem_cache_enabled: true,
            sem_cache_max_summary_gap: -1,
            sem_cache_max_summary_conflict: -1,
            sparse_query_coverage_weight: 0.35,
            scan_max_chars: 12_000,
            coverage_min_ratio: 0.90,
            marginal_gain_min: 0.02,
            trace_ttl_sec: 1800,
            trace_max_keep: 100,
            vault_scan_default_chunk_lines: 200,
            vault_scan_max_chunk_lines: 2000,
            plugin_timeout_ms: 2000,
            plugin_memory_mib: 64,
            plugins: PluginPaths::default(),
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
    })
}

/// The default config file: `$XDG_CONFIG_HOME/kura/config.toml` or the
/// platform's equivalent.
pub fn default_config_path() -> Option<PathBuf> {
    dirs::config_dir().map(|d| d.join("kura").join("config.toml"))
}

impl Config {
    /// Build the configuration. `file_text` is the TOML file's content (the
    /// caller reads it through `fs`), `env` looks up environment variables.
    pub fn resolve(
        file: Option<(&Path, &str)>,
        env: impl Fn(&str) -> Option<String>,
        cli: &Overrides,
    ) -> Result<Config, ConfigError> {
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
        let mut plugins = match table.remove("plugins") {
            Some(toml::Value::Table(t)) => t,
            Some(_) => {
                return Err(ConfigError::Parse {
                    path: file.map(|f| f.0.to_owned()).unwrap_or_default(),
                    message: "`plugins` must be a table".into(),
                });
            }
            None => toml::Table::new(),
        };
        for (key, kind) in SETTINGS {
            let upper = key.to_ascii_uppercase();
            if let Some(raw) = env(&upper).filter(|s| !s.is_empty()) {
                table.insert((*key).to_owned(), parse_value(&upper, *kind, &raw)?);
            }
        }
        for slot in PLUGIN_SLOTS {
            let upper = format!("KURA_PLUGIN_{}", slot.to_ascii_uppercase());
            if let Some(raw) = env(&upper).filter(|s| !s.is_empty()) {
                plugins.insert(slot.to_owned(), toml::Value::String(raw));
            }
        }
        for (name, raw) in &cli.values {
            if let Some(slot) = name.strip_prefix("plugins.") {
                plugins.insert(slot.to_owned(), toml::Value::String(raw.clone()));
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
        if self.plugin_timeout_ms < 1 {
            return Err(bad(
                "plugin_timeout_ms",
                self.plugin_timeout_ms.to_string(),
                "must be >= 1",
            ));
        }
        if self.plugin_memory_mib < 1 {
            return Err(bad(
                "plugin_memory_mib",
                self.plugin_memory_mib.to_string(),
                "must be >= 1",
            ));
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

    /// The state folder: configured, or the per-user cache folder.
    pub fn state_dir(&self) -> Option<PathBuf> {
        self.state_dir
            .clone()
            .or_else(|| dirs::cache_dir().map(|d| d.join("kura")))
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
    use super::*;

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
    fn plugin_paths_from_every_layer() {
        let c = resolve(
            Some("[plugins]\nreranker = \"a.wasm\""),
            &[("KURA_PLUGIN_AUDITOR", "b.wasm")],
            &[("plugins.write_policy", "c.wasm")],
        )
        .unwrap();
        assert_eq!(c.plugins.reranker.as_deref(), Some(Path::new("a.wasm")));
        assert_eq!(c.plugins.auditor.as_deref(), Some(Path::new("b.wasm")));
        assert_eq!(c.plugins.write_policy.as_deref(), Some(Path::new("c.wasm")));
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
