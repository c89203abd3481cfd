//! The `[plugins]` settings: one slot per `kura:plugins` world, each a
//! component path and its own limits, and how the TOML forms of a slot
//! are read.

use std::path::PathBuf;

use serde::{Deserialize, Serialize};

use super::reference::{ComponentRef, Digest, OCI_SCHEME, OciRef};

/// A plugin slot: one `kura:plugins` world. Printed as the world's name
/// (`write-policy`); `write_policy` is accepted everywhere too, and is the
/// spelling of the environment variables (`KURA_PLUGIN_WRITE_POLICY`).
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash, PartialOrd, Ord)]
pub enum Slot {
    Reranker,
    ClaimGraph,
    Auditor,
    WritePolicy,
    Embedder,
}

impl Slot {
    pub const ALL: [Slot; 5] = [
        Slot::Reranker,
        Slot::ClaimGraph,
        Slot::Auditor,
        Slot::WritePolicy,
        Slot::Embedder,
    ];

    /// The one printed spelling: the WIT world's name.
    pub fn name(self) -> &'static str {
        match self {
            Slot::Reranker => "reranker",
            Slot::ClaimGraph => "claim-graph",
            Slot::Auditor => "auditor",
            Slot::WritePolicy => "write-policy",
            Slot::Embedder => "embedder",
        }
    }

    /// The snake-case spelling (TOML keys of old, environment variables).
    pub fn key(self) -> &'static str {
        match self {
            Slot::Reranker => "reranker",
            Slot::ClaimGraph => "claim_graph",
            Slot::Auditor => "auditor",
            Slot::WritePolicy => "write_policy",
            Slot::Embedder => "embedder",
        }
    }

    /// Either spelling, any case.
    pub fn parse(s: &str) -> Option<Slot> {
        let s = s.trim().to_ascii_lowercase().replace('_', "-");
        Slot::ALL.into_iter().find(|slot| slot.name() == s)
    }

    pub fn names() -> String {
        Slot::ALL.map(Slot::name).join(", ")
    }
}

impl std::fmt::Display for Slot {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str(self.name())
    }
}

/// One slot's configuration: its component (unset: the embedded default, or
/// none for the write policy, whose baseline is built in), the digest it is
/// pinned to, and its limits (unset: the global `plugin_*` settings).
#[derive(Clone, Debug, Default, Deserialize, Serialize, PartialEq)]
#[serde(deny_unknown_fields)]
pub struct SlotConfig {
    /// A `.wasm` file, or an `oci://` reference (pulled beforehand).
    pub path: Option<PathBuf>,
    /// `sha256:...`: the component's bytes must have this digest.
    pub digest: Option<String>,
    pub memory_mib: Option<i64>,
    pub timeout_ms: Option<i64>,
    pub instances: Option<i64>,
    /// Grants: outbound HTTP to these hosts (`host` or `host:port`).
    pub http_hosts: Option<Vec<String>>,
    /// Grants: this folder, read-only (the component sees it as `/data`).
    pub folder: Option<PathBuf>,
    /// Grants: these environment variables, copied from kura's.
    pub env: Option<Vec<String>>,
}

/// A slot's fields, as the errors name them.
pub(super) const SLOT_FIELDS: &str =
    "path, digest, memory_mib, timeout_ms, instances, http_hosts, folder, env";

impl SlotConfig {
    /// Where the component comes from (checked by `Config::resolve`).
    pub fn component(&self) -> Option<ComponentRef<'_>> {
        let path = self.path.as_deref()?;
        match path.to_str().filter(|s| s.starts_with(OCI_SCHEME)) {
            Some(s) => OciRef::parse(s).ok().map(ComponentRef::Oci),
            None => Some(ComponentRef::File(path)),
        }
    }

    /// The pinned digest (checked by `Config::resolve`).
    pub fn pin(&self) -> Option<Digest> {
        self.digest.as_deref().and_then(|d| Digest::parse(d).ok())
    }

    /// Why the component's reference or pin cannot be read.
    pub(super) fn check(&self) -> Result<(), String> {
        if let Some(s) = self.path.as_deref().and_then(|p| p.to_str())
            && s.starts_with(OCI_SCHEME)
        {
            OciRef::parse(s)?;
        }
        if let Some(d) = &self.digest {
            Digest::parse(d)?;
        }
        for host in self.http_hosts.iter().flatten() {
            let ok = !host.is_empty()
                && !host.contains(['/', '*', ' ', '@'])
                && host.rsplit_once(':').is_none_or(|(h, port)| {
                    !h.is_empty()
                        && (h.ends_with(']') || !h.contains(':'))
                        && port.parse::<u16>().is_ok()
                });
            if !ok {
                return Err(format!(
                    "http_hosts: `{host}` is not a host or host:port (no scheme, path or wildcard)"
                ));
            }
        }
        if let Some(f) = &self.folder
            && !f.is_absolute()
        {
            return Err(format!(
                "folder: `{}` must be an absolute path",
                f.display()
            ));
        }
        for name in self.env.iter().flatten() {
            if name.is_empty() || name.contains(['=', '\0']) {
                return Err(format!("env: `{name}` is not a variable name"));
            }
        }
        Ok(())
    }
}

/// The `[plugins]` table. In TOML a slot is a path or reference
/// (`reranker = "r.wasm"`, `reranker = "oci://host/repo:tag"`) or a table
/// (`[plugins.reranker]` with `path`, `digest`, `memory_mib`, `timeout_ms`,
/// `instances`).
#[derive(Clone, Debug, Default, Deserialize, Serialize, PartialEq)]
#[serde(deny_unknown_fields)]
pub struct PluginsConfig {
    #[serde(default)]
    pub reranker: SlotConfig,
    #[serde(default)]
    pub claim_graph: SlotConfig,
    #[serde(default)]
    pub auditor: SlotConfig,
    #[serde(default)]
    pub write_policy: SlotConfig,
    #[serde(default)]
    pub embedder: SlotConfig,
}

impl PluginsConfig {
    pub fn slot(&self, slot: Slot) -> &SlotConfig {
        match slot {
            Slot::Reranker => &self.reranker,
            Slot::ClaimGraph => &self.claim_graph,
            Slot::Auditor => &self.auditor,
            Slot::WritePolicy => &self.write_policy,
            Slot::Embedder => &self.embedder,
        }
    }

    pub fn slot_mut(&mut self, slot: Slot) -> &mut SlotConfig {
        match slot {
            Slot::Reranker => &mut self.reranker,
            Slot::ClaimGraph => &mut self.claim_graph,
            Slot::Auditor => &mut self.auditor,
            Slot::WritePolicy => &mut self.write_policy,
            Slot::Embedder => &mut self.embedder,
        }
    }
}

/// A slot's limits, resolved: its own setting, else the global one.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct SlotLimits {
    pub memory_mib: u64,
    pub timeout_ms: u64,
    pub instances: u32,
}

/// The `[plugins]` table with every slot under its snake-case key and as a
/// table (`reranker = "r.wasm"` becomes `reranker = { path = "r.wasm" }`).
pub(super) fn normalize_plugins(t: toml::Table) -> Result<toml::Table, String> {
    let mut out = toml::Table::new();
    for (k, v) in t {
        let slot = Slot::parse(&k).ok_or_else(|| {
            format!(
                "[plugins] {k}: unknown plugin slot (slots: {})",
                Slot::names()
            )
        })?;
        let v = match v {
            toml::Value::String(path) => {
                toml::Value::Table(toml::Table::from_iter([("path".into(), path.into())]))
            }
            t @ toml::Value::Table(_) => t,
            _ => {
                return Err(format!(
                    "[plugins] {k}: expected a component path or a table ({SLOT_FIELDS})"
                ));
            }
        };
        out.insert(slot.key().to_owned(), v);
    }
    Ok(out)
}

/// A slot's table inside the normalized `[plugins]` table.
pub(super) fn slot_table(plugins: &mut toml::Table, slot: Slot) -> &mut toml::Table {
    let entry = plugins
        .entry(slot.key())
        .or_insert_with(|| toml::Value::Table(toml::Table::new()));
    if !entry.is_table() {
        *entry = toml::Value::Table(toml::Table::new());
    }
    match entry {
        toml::Value::Table(t) => t,
        _ => unreachable!("made a table above"),
    }
}
