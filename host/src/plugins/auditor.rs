//! The auditor slot: artifact_audit's structural findings. A failure of the
//! component is the tool's error (`plugin_failed` or `timeout`).

use super::Plugins;
use super::bindings::types::{AuditInput, FindingKind as WitKind, LineRange};
use crate::error::{Error, Result};

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
        let Some(slot) = &self.auditor else {
            return Err(Error::internal("no auditor plugin is loaded"));
        };
        let _busy = self.busy();
        let mut store = self.store(slot.name);
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
        let report = slot
            .pre
            .instantiate(&mut store)
            .and_then(|inst| inst.call_audit(&mut store, &input))
            .map_err(|e| self.call_error(slot, e))?;
        Ok(AuditReport {
            findings: report
                .findings
                .into_iter()
                .map(|f| AuditFinding {
                    kind: match f.kind {
                        WitKind::RootlessNode => FindingKind::RootlessNode,
                        WitKind::OrphanBranch => FindingKind::OrphanBranch,
                        WitKind::OneWayRef => FindingKind::OneWayRef,
                    },
                    message: f.message,
                    node_id: f.node_id,
                    line: f.line,
                })
                .collect(),
            cited: report
                .cited_ranges
                .into_iter()
                .map(|r| (r.start_line, r.end_line))
                .collect(),
            node_count: report.node_count,
        })
    }
}
