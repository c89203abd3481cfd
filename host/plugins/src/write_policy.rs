//! The write policy: every vault write passes the host's baseline rules
//! first — `.system/` reserved, `daily/` notes only created or appended to
//! (the [`crate::policy`] module) — and then, when one is configured, the write-policy
//! component. All must allow: a component adds refusals, it can never
//! lift the baseline. A component that denies, traps, times out, failed to
//! load or is still loading after [`LOAD_WAIT`] refuses the write (fail
//! closed); reads never wait for it.

use crate::policy;

use super::bindings::types::{DenyCode, WriteKind as WitKind, WriteRequest as WitRequest};
use super::{LOAD_WAIT, Plugins, ready};
use crate::error::{Code, Error, Result};

pub use crate::policy::Kind as WriteKind;

#[derive(Clone, Debug)]
pub struct WriteRequest<'a> {
    pub tool: &'a str,
    pub kind: WriteKind,
    pub path: &'a str,
    pub exists: bool,
}

/// How long a denial message may be (a component's longer text is cut).
const DENIAL_MAX_CHARS: usize = 500;

/// The host's own rules, which no configured policy can switch off.
pub fn baseline(req: &WriteRequest<'_>) -> Result<()> {
    policy::check(req.kind, req.path, req.exists).map_err(|d| {
        Error::new(d.code, d.message)
            .with("path", req.path)
            .with("policy", "baseline")
    })
}

impl Plugins {
    /// Ask the baseline, then the configured policy. Ok(()) only when both
    /// allow.
    pub fn check_write(&self, req: &WriteRequest<'_>) -> Result<()> {
        baseline(req)?;
        let Some(cell) = &self.write_policy else {
            return Ok(());
        };
        let loaded = ready(cell, LOAD_WAIT).map_err(|e| {
            tracing::warn!(path = req.path, "write refused: {}", e.message);
            e.with("path", req.path)
        })?;
        let request = WitRequest {
            tool: req.tool.to_owned(),
            kind: match req.kind {
                WriteKind::Create => WitKind::Create,
                WriteKind::Overwrite => WitKind::Overwrite,
                WriteKind::Append => WitKind::Append,
                WriteKind::Replace => WitKind::Replace,
                WriteKind::CopyOverwrite => WitKind::CopyOverwrite,
                WriteKind::CopyAppend => WitKind::CopyAppend,
                // The interface is unchanged, so components built for it
                // keep working: a move is judged as the overwrite of the
                // path it leaves and the create of the one it takes; a
                // link rewrite as a replace.
                WriteKind::MoveFrom => WitKind::Overwrite,
                WriteKind::MoveTo => WitKind::Create,
                WriteKind::Relink => WitKind::Replace,
            },
            path: req.path.to_owned(),
            exists: req.exists,
        };
        let outcome = self.runtime.call(cell, &loaded, |store, pre| {
            pre.instantiate(&mut *store)?
                .call_check(&mut *store, &request)
        });
        match outcome {
            Ok(Ok(())) => Ok(()),
            Ok(Err(denial)) => {
                let code = match denial.code {
                    DenyCode::Forbidden => Code::Forbidden,
                    DenyCode::Conflict => Code::Conflict,
                    DenyCode::InvalidPath => Code::InvalidPath,
                };
                let mut message: String = denial.message.chars().take(DENIAL_MAX_CHARS).collect();
                if message.len() < denial.message.len() {
                    message.push('…');
                }
                Err(Error::new(code, message)
                    .with("path", req.path)
                    .with("policy", loaded.source.to_string()))
            }
            Err(e) => {
                tracing::warn!(path = req.path, "write refused: {}", e.message);
                Err(e.with("path", req.path))
            }
        }
    }
}
