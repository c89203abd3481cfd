//! vault_create, vault_write (001) and vault_replace (000): each asks the
//! write-policy plugin inside the file's lock, then replaces the file
//! atomically.

use schemars::JsonSchema;
use serde::Serialize;

use super::Vault;
use crate::args::Args;
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

impl Vault {
    fn policy(&self, tool: &str, kind: WriteKind, path: &RelPath, exists: bool) -> Result<()> {
        self.plugins.check_write(&WriteRequest {
            tool,
            kind,
            path: &path.to_string(),
            exists,
        })
    }

    pub fn create(&self, args: Args) -> Result<WriteOutput> {
        let path = RelPath::parse(args.req_str("path")?, false)?;
        let content = args.req_nonempty("content")?;
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

    pub fn write(&self, args: Args) -> Result<WriteOutput> {
        let path = RelPath::parse(args.req_str("path")?, false)?;
        let content = args.req_str("content")?;
        let mode = args
            .choice("mode", &["overwrite", "append"])?
            .ok_or_else(|| args.missing("mode"))?;
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

    pub fn replace(&self, args: Args) -> Result<ReplaceOutput> {
        let path = RelPath::parse(args.req_str("path")?, false)?;
        let find = args.req_nonempty("find")?;
        let replace = args.req_str("replace")?;
        let max = args.int("max_replacements", 0)?.unwrap_or(1) as usize;
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
