//! The auditor slot: artifact_audit's structural findings. A failure of the
//! component is the tool's error (`plugin_failed` or `timeout`). The host
//! contains a report that breaks the contract (wit/worlds.wit): a finding's
//! line past the artifact's end is clamped to it, messages are cut to
//! [`MESSAGE_MAX_CHARS`], at most [`FINDINGS_MAX`] findings are kept, and
//! citations are clipped to the source by the caller.

use super::bindings::types::{AuditInput, FindingKind as WitKind, LineRange};
use super::{LOAD_WAIT, Plugins, ready};
use crate::error::{Error, Result};

/// Findings kept from one report.
pub const FINDINGS_MAX: usize = 1000;
/// Characters kept of a finding's message.
pub const MESSAGE_MAX_CHARS: usize = 500;

#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum FindingKind {
    RootlessNode,
    OrphanBranch,
    OneWayRef,
}

#[derive(Clone, Debug)]
pub struct AuditFinding {
    pub kind: FindingKind,
    pub message: String,
    pub node_id: Option<String>,
    pub line: u32,
}

#[derive(Clone, Debug)]
pub struct AuditReport {
    pub findings: Vec<AuditFinding>,
    /// Citations the audit used, as written (not clipped to the source).
    pub cited: Vec<(u32, u32)>,
    pub node_count: u32,
}

pub struct AuditRequest<'a> {
    pub artifact_path: &'a str,
    pub artifact: &'a str,
    pub source_path: &'a str,
    pub source_lines: u32,
    pub cited: Option<&'a [(u32, u32)]>,
}

impl Plugins {
    pub fn audit(&self, req: &AuditRequest<'_>) -> Result<AuditReport> {
        let Some(cell) = &self.auditor else {
            return Err(Error::internal("no auditor plugin is loaded"));
        };
        let loaded = ready(cell, LOAD_WAIT)?;
        let input = AuditInput {
            artifact_path: req.artifact_path.to_owned(),
            artifact: req.artifact.to_owned(),
            source_path: req.source_path.to_owned(),
            source_line_count: req.source_lines,
            cited_ranges: req.cited.map(|c| {
                c.iter()
                    .map(|&(start_line, end_line)| LineRange {
                        start_line,
                        end_line,
                    })
                    .collect()
            }),
        };
        let report = self.runtime.call(cell, &loaded, |store, pre| {
            pre.instantiate(&mut *store)?
                .call_audit(&mut *store, &input)
        })?;
        let last_line = u32::try_from(req.artifact.lines().count().max(1)).unwrap_or(u32::MAX);
        Ok(AuditReport {
            findings: report
                .findings
                .into_iter()
                .take(FINDINGS_MAX)
                .map(|f| AuditFinding {
                    kind: match f.kind {
                        WitKind::RootlessNode => FindingKind::RootlessNode,
                        WitKind::OrphanBranch => FindingKind::OrphanBranch,
                        WitKind::OneWayRef => FindingKind::OneWayRef,
                    },
                    message: f.message.chars().take(MESSAGE_MAX_CHARS).collect(),
                    node_id: f
                        .node_id
                        .map(|n| n.chars().take(MESSAGE_MAX_CHARS).collect()),
                    line: f.line.clamp(1, last_line),
                })
                .collect(),
            cited: report
                .cited_ranges
                .into_iter()
                .take(FINDINGS_MAX)
                .map(|r| (r.start_line, r.end_line))
                .collect(),
            node_count: report.node_count,
        })
    }
}
