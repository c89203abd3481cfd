//! vault_create, vault_write (001) and vault_replace (000): each asks the
//! write-policy plugin inside the file's lock, then replaces the file
//! atomically.

use schemars::JsonSchema;
use serde::Serialize;

use super::Vault;
use crate::args::Input;
use crate::error::{Code, Error, Result};
use crate::fs::RelPath;
use crate::plugins::{WriteKind, WriteRequest};

#[derive(Debug, Serialize, JsonSchema)]
pub struct WriteOutput {
    pub written_path: String,
    pub written_bytes: u64,
}

#[derive(Debug, Serialize, JsonSchema)]
pub struct ReplaceOutput {
    pub written_path: String,
    pub replacements: u64,
}

fn conflict(path: &RelPath, message: String) -> Error {
    Error::new(Code::Conflict, message).with("path", path.to_string())
}

/// The two ways to write a whole note (vault_write, the bridge's copies).
pub const MODES: [&str; 2] = ["overwrite", "append"];

#[derive(Input)]
pub struct CreateInput {
    /// New file, vault-relative
    pub path: String,
    /// Whole content
    #[arg(nonempty)]
    pub content: String,
}

#[derive(Input)]
pub struct WriteInput {
    /// Existing file, vault-relative
    pub path: String,
    /// Text to write
    #[arg(text)]
    pub content: String,
    /// Replace the content, or add after it
    #[arg(one_of = MODES)]
    pub mode: &'static str,
}

#[derive(Input)]
pub struct ReplaceInput {
    /// Existing file, vault-relative
    pub path: String,
    /// Exact text to find (must occur once)
    #[arg(nonempty)]
    pub find: String,
    /// Replacement text
    #[arg(text)]
    pub replace: String,
    /// Occurrences to replace (default 1; 0 = all)
    #[arg(min = 0)]
    pub max_replacements: Option<i64>,
}

impl Vault {
    /// The write policy's verdict on `path`. Where the file system folds
    /// case, the policy judges the folded path: `Daily/…` and `.SYSTEM/…`
    /// are the protected folders there.
    pub(crate) fn policy(
        &self,
        tool: &str,
        kind: WriteKind,
        path: &RelPath,
        exists: bool,
    ) -> Result<()> {
        self.plugins.check_write(&WriteRequest {
            tool,
            kind,
            path: &judged_path(path, self.root.folds_case()),
            exists,
        })
    }

    pub fn create(&self, input: CreateInput) -> Result<WriteOutput> {
        let path = RelPath::parse(&input.path, false)?;
        let content = &input.content;
        self.root.update(&path, |current| {
            // Policy first: a reserved path is `forbidden` whether or not it exists.
            self.policy("vault_create", WriteKind::Create, &path, current.is_some())?;
            if current.is_some() {
                return Err(conflict(
                    &path,
                    format!("`{path}` already exists; vault_create never overwrites"),
                ));
            }
            Ok(Some((content.as_bytes().to_vec(), ())))
        })?;
        self.index.written(&self.root, &path);
        tracing::info!(tool = "vault_create", path = %path, written_bytes = content.len(), "write");
        Ok(WriteOutput {
            written_path: path.to_string(),
            written_bytes: content.len() as u64,
        })
    }

    pub fn write(&self, input: WriteInput) -> Result<WriteOutput> {
        let path = RelPath::parse(&input.path, false)?;
        let content = &input.content;
        let mode = input.mode;
        let kind = if mode == "append" {
            WriteKind::Append
        } else {
            WriteKind::Overwrite
        };
        self.root.update(&path, |current| {
            self.policy("vault_write", kind, &path, current.is_some())?;
            let Some(current) = current else {
                return Err(conflict(
                    &path,
                    format!("`{path}` does not exist; vault_write changes existing files only (use vault_create)"),
                ));
            };
            let bytes = match kind {
                WriteKind::Append => [current, content.as_bytes()].concat(),
                _ => content.as_bytes().to_vec(),
            };
            Ok(Some((bytes, ())))
        })?;
        self.index.written(&self.root, &path);
        tracing::info!(tool = "vault_write", path = %path, mode, written_bytes = content.len(), "write");
        Ok(WriteOutput {
            written_path: path.to_string(),
            written_bytes: content.len() as u64,
        })
    }

    pub fn replace(&self, input: ReplaceInput) -> Result<ReplaceOutput> {
        let path = RelPath::parse(&input.path, false)?;
        let (find, replace) = (input.find.as_str(), input.replace.as_str());
        let max = input.max_replacements.unwrap_or(1) as usize;
        let done = self.root.update(&path, |current| {
            // The policy decides before anything else, so a forbidden path is
            // refused even when the file is missing or `find` does not occur.
            self.policy(
                "vault_replace",
                WriteKind::Replace,
                &path,
                current.is_some(),
            )?;
            let Some(current) = current else {
                return Err(
                    Error::new(Code::NotFound, format!("`{path}` does not exist"))
                        .with("path", path.to_string()),
                );
            };
            let text = std::str::from_utf8(current).map_err(|_| {
                Error::invalid_parameter("path", format!("`{path}` is not a UTF-8 text file"))
                    .with("path", path.to_string())
            })?;
            let found = text.matches(find).count();
            let n = if max == 0 { found } else { found.min(max) };
            if n == 0 {
                return Ok(None);
            }
            Ok(Some((text.replacen(find, replace, n).into_bytes(), n)))
        })?;
        let n = done.unwrap_or(0);
        if n > 0 {
            self.index.written(&self.root, &path);
        }
        tracing::info!(tool = "vault_replace", path = %path, replacements = n, "write");
        Ok(ReplaceOutput {
            written_path: path.to_string(),
            replacements: n as u64,
        })
    }
}

/// The path as the write policy sees it.
pub(crate) fn judged_path(path: &RelPath, folds_case: bool) -> String {
    if folds_case {
        path.to_string().to_lowercase()
    } else {
        path.to_string()
    }
}

/// What a bridge copy wrote.
pub struct Copied {
    pub path: RelPath,
    pub bytes: u64,
    pub created: bool,
}

impl Vault {
    /// Write `text` to `path` for a bridge tool (a copy from a manual),
    /// under the write policy: the vault owns every write to itself.
    pub fn copy_in(&self, tool: &str, path: &RelPath, text: &str, append: bool) -> Result<Copied> {
        let kind = if append {
            WriteKind::CopyAppend
        } else {
            WriteKind::CopyOverwrite
        };
        let done = self.root.update(path, |current| {
            self.policy(tool, kind, path, current.is_some())?;
            let mut bytes = Vec::new();
            let mut added = text.len() as u64;
            if let (true, Some(cur)) = (append, current) {
                bytes.extend_from_slice(cur);
                // The copy starts on a line of its own.
                if !cur.is_empty() && !cur.ends_with(b"\n") {
                    bytes.push(b'\n');
                    added += 1;
                }
            }
            bytes.extend_from_slice(text.as_bytes());
            Ok(Some((bytes, (added, current.is_none()))))
        })?;
        let (bytes, created) = done.unwrap_or((0, false));
        self.index.written(&self.root, path);
        Ok(Copied {
            path: path.clone(),
            bytes,
            created,
        })
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use kura_core::policy;

    /// Whether the baseline policy allows an overwrite of `path`.
    fn verdict(path: &str, folds_case: bool) -> bool {
        let judged = judged_path(&RelPath::parse(path, false).unwrap(), folds_case);
        policy::check(policy::Kind::Overwrite, &judged, true).is_ok()
    }

    #[test]
    fn no_spelling_reaches_a_protected_folder_whether_or_not_case_folds() {
        for path in [
            ".SYSTEM/x.md",
            ".System/audit/a.json",
            ".ſystem/x.md",
            "Daily/2026-01-05.md",
        ] {
            // Where case matters too: a vault synced to a file system that
            // folds case merges these folders there.
            for folds in [true, false] {
                assert!(!verdict(path, folds), "{path} reached a protected folder");
            }
        }
        assert!(verdict("Notes/x.md", true));
    }

    #[test]
    #[allow(clippy::disallowed_methods)] // the fixture folder is made with std::fs
    fn a_case_sensitive_temp_folder_does_not_fold() {
        let t = tempfile::tempdir().unwrap();
        std::fs::create_dir(t.path().join("daily")).unwrap();
        assert!(!crate::fs::Root::open(t.path()).unwrap().folds_case());
    }
}
