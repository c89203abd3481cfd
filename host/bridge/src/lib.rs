//! The bridge (seed 003): copy from a manual into the vault inside the
//! server, so the text never passes through the model. The source is read
//! exactly as manual_read reads it (same guards, same text for the same
//! reference); the destination is written like vault_write (the write-policy
//! plugin decides, the write is atomic, the vault index sees it before the
//! call returns). Only metadata comes back.

mod tools;

// The layers below, under the names this crate's modules use.
use kura_core::{args, error, fs};
use kura_domain as domain;
use kura_manual as manual;
use kura_vault as vault;

use std::sync::Arc;

use schemars::JsonSchema;
use serde::Serialize;
use serde_json::{Value, json};

use crate::args::Input;
use crate::domain::{Domain, Opening, Spec, StartError};
use crate::error::{Code, Error, Result};
use crate::fs::RelPath;
use crate::manual::{ManualRef, Manuals, ReadInput, ReadOutput, RefRead};
use crate::vault::{Copied, MODES, Vault};

/// `limits.max_chars` above this is lowered to it.
pub const HARD_MAX_CHARS: u64 = 200_000;

#[derive(Debug, Serialize, JsonSchema)]
pub struct CopyApplied {
    /// `overwrite` or `append`.
    pub mode: String,
    /// Always 1: one section per call (003's MVP).
    pub max_sections: u64,
    /// Characters copied at most (default SCAN_MAX_CHARS, as manual_read).
    pub max_chars: u64,
    pub allow_file: bool,
    /// The unit copied: `section` (.md) or `file`.
    pub scope: String,
    /// Source lines copied.
    pub source_start_line: u64,
    pub source_end_line: u64,
    /// The destination did not exist and was created.
    pub created: bool,
}

#[derive(Debug, Serialize, JsonSchema)]
pub struct CopySectionOutput {
    pub written_path: String,
    /// Bytes added to (append) or written as (overwrite) the destination.
    pub written_bytes: u64,
    pub written_sections: u64,
    /// The copy was cut at `max_chars`.
    pub truncated: bool,
    pub applied: CopyApplied,
}

#[derive(Debug, Serialize, JsonSchema)]
pub struct CopyFileOutput {
    pub written_path: String,
    pub written_bytes: u64,
    pub truncated: bool,
    pub applied: CopyApplied,
}

#[derive(Input)]
pub struct CopySectionInput {
    /// manual_read's ref
    pub from_ref: FromRef,
    /// Destination note, vault-relative
    pub to_path: String,
    /// Replace note content, or add after it
    #[arg(one_of = MODES)]
    pub mode: &'static str,
    /// Per-call caps
    pub limits: Option<CopyLimits>,
}

#[derive(Input)]
pub struct FromRef {
    /// Manual id (folder name)
    pub manual_id: String,
    /// File in the manual
    pub path: String,
    /// A line of the section (default 1)
    #[arg(min = 1)]
    pub start_line: Option<i64>,
    /// `section` (.md default) or `file` (.json); others: invalid_scope
    #[arg(one_of = ["section", "file", "snippet", "sections"])]
    pub scope: Option<&'static str>,
}

#[derive(Input)]
pub struct CopyFileInput {
    /// File in the manual
    pub from_path: String,
    /// Manual id (folder name)
    pub manual_id: String,
    /// Destination note, vault-relative
    pub to_path: String,
    /// Replace note content, or add after it
    #[arg(one_of = MODES)]
    pub mode: &'static str,
    /// Per-call caps
    pub limits: Option<CopyLimits>,
}

#[derive(Input, Default)]
pub struct CopyLimits {
    /// Sections per call (1 only)
    #[arg(min = 1)]
    pub max_sections: Option<i64>,
    /// Max characters (default SCAN_MAX_CHARS; ≤200000)
    #[arg(min = 1)]
    pub max_chars: Option<i64>,
    /// Allow a whole .md file (needs ALLOW_FILE_SCOPE)
    pub allow_file: Option<bool>,
}

/// Where a copy goes, and how.
struct Target<'a> {
    to_path: &'a str,
    mode: &'static str,
    limits: Option<CopyLimits>,
}

struct Limits {
    max_chars: u64,
    allow_file: bool,
}

impl From<Option<CopyLimits>> for Limits {
    fn from(l: Option<CopyLimits>) -> Limits {
        let l = l.unwrap_or_default();
        Limits {
            max_chars: l.max_chars.map_or(0, |n| (n as u64).min(HARD_MAX_CHARS)),
            allow_file: l.allow_file.unwrap_or(false),
        }
    }
}

/// An error about an argument of the synthetic manual_read call, renamed to
/// the bridge's own argument.
fn rename(mut e: Error, from: &str, to: &str) -> Error {
    if e.details.get("parameter").and_then(Value::as_str) == Some(from) {
        e.details["parameter"] = json!(to);
        e.message = e.message.replace(&format!("`{from}`"), &format!("`{to}`"));
    }
    e
}

fn applied(
    mode: &str,
    l: &Limits,
    max_chars: usize,
    read: &ReadOutput,
    created: bool,
) -> CopyApplied {
    CopyApplied {
        mode: mode.into(),
        max_sections: 1,
        max_chars: max_chars as u64,
        allow_file: l.allow_file,
        scope: read.applied.scope.clone(),
        source_start_line: read.applied_range.start_line,
        source_end_line: read.applied_range.end_line,
        created,
    }
}

/// `truncated` of a copy: cut by the character cap (a section ending before
/// the end of its file is not truncated).
fn cut(read: &ReadOutput) -> bool {
    read.truncated_reason == "max_chars"
}

/// What a copy did.
struct Done {
    read: ReadOutput,
    copied: Copied,
    applied: CopyApplied,
}

/// Read `from` as manual_read would (under `scope`) and write it to the
/// target; `rename_as` maps the names of manual_read's reference
/// (`from_ref.*`) to the tool's own arguments in errors.
fn copy(
    tool: &str,
    manuals: &Manuals,
    vault: &Vault,
    target: Target,
    from: ManualRef,
    scope: &'static str,
    rename_as: &[(&str, &str)],
) -> Result<Done> {
    let to = RelPath::parse(target.to_path, false)?;
    let mode = target.mode;
    let l = Limits::from(target.limits);
    let max_chars = if l.max_chars == 0 {
        manuals.max_chars
    } else {
        l.max_chars as usize
    };
    let read = manuals
        .read_ref(
            ReadInput {
                r#ref: from,
                scope: Some(scope),
                allow_file: Some(l.allow_file),
                expand: None,
            },
            &RefRead {
                key: "from_ref",
                max_chars,
                session: false,
            },
        )
        .map_err(|e| {
            rename_as
                .iter()
                .fold(e, |e, (from, to)| rename(e, from, to))
        })?;
    let copied = vault.copy_in(tool, &to, &read.text, mode == "append")?;
    tracing::info!(
        tool,
        written_path = %copied.path,
        mode,
        written_bytes = copied.bytes,
        written_sections = 1,
        truncated = cut(&read),
        "copy"
    );
    let applied = applied(mode, &l, max_chars, &read, copied.created);
    Ok(Done {
        read,
        copied,
        applied,
    })
}

/// The bridge: the manuals and the vault, both open.
pub struct Bridge {
    manuals: Arc<Manuals>,
    vault: Arc<Vault>,
}

pub static DOMAIN: Spec = Spec {
    name: "bridge",
    root: None,
    offer: None,
    tools: tools::TOOLS,
    needs: &[&crate::vault::DOMAIN, &crate::manual::DOMAIN],
    open,
    errors: domain::as_is,
};

fn open(o: Opening<'_>) -> std::result::Result<Arc<dyn Domain>, StartError> {
    let (Some(manuals), Some(vault)) = (o.open.shared::<Manuals>(), o.open.shared::<Vault>())
    else {
        unreachable!("the bridge is opened only once the manuals and the vault are");
    };
    Ok(Arc::new(Bridge { manuals, vault }))
}

impl Domain for Bridge {
    fn spec(&self) -> &'static Spec {
        &DOMAIN
    }

    /// A copy that replaces a note that has content asks first.
    fn confirmation(
        &self,
        _tool: &str,
        args: &serde_json::Map<String, serde_json::Value>,
    ) -> Option<String> {
        if args.get("mode").and_then(serde_json::Value::as_str) != Some("overwrite") {
            return None;
        }
        let to = args.get("to_path").and_then(serde_json::Value::as_str)?;
        let rel = RelPath::parse(to, false).ok()?;
        let stat = self.vault.root.stat(&rel).ok()??;
        (!stat.is_dir && stat.size > 0).then(|| {
            format!(
                "Replace the {} bytes of vault note `{rel}` with text from a manual?",
                stat.size
            )
        })
    }
}

impl Bridge {
    pub fn copy_section(&self, input: CopySectionInput) -> Result<CopySectionOutput> {
        copy_section(&self.manuals, &self.vault, input)
    }

    pub fn copy_file(&self, input: CopyFileInput) -> Result<CopyFileOutput> {
        copy_file(&self.manuals, &self.vault, input)
    }
}

fn copy_section(
    manuals: &Manuals,
    vault: &Vault,
    input: CopySectionInput,
) -> Result<CopySectionOutput> {
    let from = input.from_ref;
    // The unit: a section of a .md file (a whole .md file only under the
    // file-scope rules), the whole of a .json file.
    let is_json = from.path.to_ascii_lowercase().ends_with(".json");
    let scope = match from.scope {
        Some(s @ ("snippet" | "sections")) => {
            return Err(Error::new(
                Code::InvalidScope,
                format!("the bridge copies a section (.md) or a file (.json), not `{s}`"),
            )
            .with("scope", s));
        }
        Some(s) => s,
        None if is_json => "file",
        None => "section",
    };
    let target = Target {
        to_path: &input.to_path,
        mode: input.mode,
        limits: input.limits,
    };
    let from = ManualRef {
        manual_id: from.manual_id,
        path: from.path,
        start_line: from.start_line,
    };
    let d = copy(
        "bridge_copy_section",
        manuals,
        vault,
        target,
        from,
        scope,
        &[],
    )?;
    Ok(CopySectionOutput {
        written_path: d.copied.path.to_string(),
        written_bytes: d.copied.bytes,
        written_sections: 1,
        truncated: cut(&d.read),
        applied: d.applied,
    })
}

fn copy_file(manuals: &Manuals, vault: &Vault, input: CopyFileInput) -> Result<CopyFileOutput> {
    let from = ManualRef {
        manual_id: input.manual_id,
        path: input.from_path,
        start_line: None,
    };
    let target = Target {
        to_path: &input.to_path,
        mode: input.mode,
        limits: input.limits,
    };
    let renames = [
        ("from_ref.path", "from_path"),
        ("from_ref.manual_id", "manual_id"),
    ];
    let d = copy(
        "bridge_copy_file",
        manuals,
        vault,
        target,
        from,
        "file",
        &renames,
    )?;
    Ok(CopyFileOutput {
        written_path: d.copied.path.to_string(),
        written_bytes: d.copied.bytes,
        truncated: cut(&d.read),
        applied: d.applied,
    })
}
