//! The write-policy slot: every vault write asks it first, and the write is
//! refused when it denies, traps, times out or is missing (fail closed).

use super::Plugins;
use super::bindings::types::{DenyCode, WriteKind as WitKind, WriteRequest as WitRequest};
use crate::error::{Code, Error, Result};

#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum WriteKind {
    Create,
    Overwrite,
    Append,
    Replace,
    CopyOverwrite,
    CopyAppend,
}

#[derive(Clone, Debug)]
pub struct WriteRequest<'a> {
    pub tool: &'a str,
    pub kind: WriteKind,
    pub path: &'a str,
    pub exists: bool,
}

impl Plugins {
    /// Ask the write policy. Ok(()) only on an explicit allow.
    pub fn check_write(&self, req: &WriteRequest<'_>) -> Result<()> {
        let Some(slot) = &self.write_policy else {
            return Err(Error::new(
                Code::PluginFailed,
                "no write-policy plugin is loaded; writes are refused",
            )
            .with("plugin", "write_policy"));
        };
        let _busy = self.busy();
        let mut store = self.store(slot.name);
        let request = WitRequest {
            tool: req.tool.to_owned(),
            kind: match req.kind {
                WriteKind::Create => WitKind::Create,
                WriteKind::Overwrite => WitKind::Overwrite,
                WriteKind::Append => WitKind::Append,
                WriteKind::Replace => WitKind::Replace,
                WriteKind::CopyOverwrite => WitKind::CopyOverwrite,
                WriteKind::CopyAppend => WitKind::CopyAppend,
            },
            path: req.path.to_owned(),
            exists: req.exists,
        };
        let outcome = slot
            .pre
            .instantiate(&mut store)
            .and_then(|inst| inst.call_check(&mut store, &request));
        match outcome {
            Ok(Ok(())) => Ok(()),
            Ok(Err(denial)) => {
                let code = match denial.code {
                    DenyCode::Forbidden => Code::Forbidden,
                    DenyCode::Conflict => Code::Conflict,
                    DenyCode::InvalidPath => Code::InvalidPath,
                };
                Err(Error::new(code, denial.message)
                    .with("path", req.path)
                    .with("policy", slot.source.to_string()))
            }
            Err(e) => {
                let err = self.call_error(slot, e);
                tracing::warn!(path = req.path, "write refused: {}", err.message);
                Err(err.with("path", req.path))
            }
        }
    }
}
