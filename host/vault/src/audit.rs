//! artifact_audit (001, docs/decisions.md): the auditor plugin reads the artifact's node
//! tree and citations and reports its findings; the host measures how much of
//! the source the citations cover, the marginal gain since the previous audit
//! of the same artifact/source pair (kept under `.system/audit/`), decides
//! `needs_forced_full_scan` by 001's three rules, and proposes next actions.

use schemars::JsonSchema;
use serde::{Deserialize, Serialize};
use serde_json::json;

use super::Vault;
use super::action::{NextAction, Step};
use super::coverage::{Coverage, cited_ranges, measure, round3};
use crate::args::{Input, LineRanges};
use crate::error::{Error, Result};
use crate::fs::RelPath;
use crate::plugins::{AuditFinding, AuditReport, AuditRequest, FindingKind};
use crate::text::Lines;

#[derive(Clone, Copy, Debug, Serialize, JsonSchema)]
#[serde(rename_all = "snake_case")]
pub enum Kind {
    RootlessNode,
    OrphanBranch,
    OneWayRef,
}

#[derive(Debug, Serialize, JsonSchema)]
pub struct Finding {
    pub kind: Kind,
    pub message: String,
    /// `{heading|item|para|code}@L{line}`: the node's kind and first line in the artifact.
    pub node_id: Option<String>,
}

#[derive(Debug, Serialize, JsonSchema)]
pub struct AuditApplied {
    /// `given` (the call's cited_ranges) or `artifact` (read from its citations).
    pub cited_ranges_from: String,
    pub coverage_min_ratio: f64,
    pub marginal_gain_min: f64,
    /// Nodes the auditor read in the artifact.
    pub node_count: u64,
}

#[derive(Debug, Serialize, JsonSchema)]
pub struct AuditOutput {
    pub artifact_path: String,
    pub source_path: String,
    pub rootless_nodes: u64,
    pub orphan_branches: u64,
    pub one_way_refs: u64,
    pub coverage_ratio: Option<f64>,
    pub uncovered_ranges_count: u64,
    /// Share of the source's lines covered now and not at the previous audit
    /// of this pair (the first audit counts everything it covers).
    pub marginal_gain: Option<f64>,
    pub needs_forced_full_scan: bool,
    pub next_actions: Vec<NextAction>,
    pub findings: Vec<Finding>,
    pub applied: AuditApplied,
}

/// What `.system/audit/` remembers of the previous audit of a pair.
#[derive(Debug, Default, Serialize, Deserialize)]
struct History {
    artifact_path: String,
    source_path: String,
    covered: Vec<(u64, u64)>,
    audits: u64,
}

fn history_path(artifact: &RelPath, source: &RelPath) -> Result<RelPath> {
    let key = blake3::hash(format!("{artifact}\0{source}").as_bytes()).to_hex();
    RelPath::parse(&format!(".system/audit/{}.json", &key[..32]), false)
}

#[derive(Input)]
pub struct AuditInput {
    /// Artifact note, vault-relative
    pub artifact_path: String,
    /// Source note, vault-relative
    pub source_path: String,
    /// Source ranges counted as covered (default: the artifact's citations)
    pub cited_ranges: Option<LineRanges>,
}

impl Vault {
    /// Record this audit's covered lines; returns the lines covered now that
    /// were not at the previous audit.
    fn record_audit(&self, artifact: &RelPath, source: &RelPath, now: &Coverage) -> Result<u64> {
        let at = history_path(artifact, source)?;
        let new_lines = self.root.update(&at, |current| {
            let before: History = current
                .and_then(|b| serde_json::from_slice(b).ok())
                .unwrap_or_default();
            let prev = measure(now.total_lines, before.covered.iter().copied());
            let new_lines = now
                .covered
                .iter()
                .flat_map(|r| r.start_line..=r.end_line)
                .filter(|&l| !prev.covers(l))
                .count() as u64;
            let h = History {
                artifact_path: artifact.to_string(),
                source_path: source.to_string(),
                covered: now
                    .covered
                    .iter()
                    .map(|r| (r.start_line, r.end_line))
                    .collect(),
                audits: before.audits + 1,
            };
            let bytes =
                serde_json::to_vec_pretty(&h).map_err(|e| Error::internal(e.to_string()))?;
            Ok(Some((bytes, new_lines)))
        })?;
        Ok(new_lines.unwrap_or(0))
    }

    pub fn audit(&self, input: AuditInput) -> Result<AuditOutput> {
        let artifact_path = RelPath::parse(&input.artifact_path, false)?;
        let source_path = RelPath::parse(&input.source_path, false)?;
        let artifact = self.root.read_text(&artifact_path)?;
        let source = self.root.read_text(&source_path)?;
        let total = Lines::new(&source).count() as u64;
        let given = match input.cited_ranges {
            Some(r) => Some(cited_ranges(r, "cited_ranges", total)?),
            None => None,
        };
        let given32: Option<Vec<(u32, u32)>> = given
            .as_ref()
            .map(|g| g.iter().map(|&(a, b)| (clamp32(a), clamp32(b))).collect());
        let report = self.plugins.audit(&AuditRequest {
            artifact_path: &artifact_path.to_string(),
            artifact: &artifact,
            source_path: &source_path.to_string(),
            source_lines: clamp32(total),
            cited: given32.as_deref(),
        })?;
        let coverage = measure(
            total,
            report.cited.iter().map(|&(a, b)| (a as u64, b as u64)),
        );
        let new_lines = self.record_audit(&artifact_path, &source_path, &coverage)?;
        let rules = Rules::judge(self, &report, &coverage, new_lines);
        let pair = (artifact_path.to_string(), source_path.to_string());
        tracing::info!(
            tool = "artifact_audit",
            artifact_path = %pair.0,
            source_path = %pair.1,
            rootless_nodes = rules.rootless,
            orphan_branches = rules.orphans,
            one_way_refs = rules.one_way,
            coverage_ratio = rules.ratio,
            marginal_gain = rules.gain,
            "audit"
        );
        let next_actions = rules.next_actions(&pair, &coverage, &report);
        Ok(AuditOutput {
            rootless_nodes: rules.rootless,
            orphan_branches: rules.orphans,
            one_way_refs: rules.one_way,
            coverage_ratio: Some(round3(rules.ratio)),
            uncovered_ranges_count: coverage.uncovered.len() as u64,
            marginal_gain: Some(round3(rules.gain)),
            needs_forced_full_scan: rules.forced(),
            next_actions,
            applied: AuditApplied {
                cited_ranges_from: if given.is_some() { "given" } else { "artifact" }.into(),
                coverage_min_ratio: self.coverage_min_ratio,
                marginal_gain_min: self.marginal_gain_min,
                node_count: report.node_count as u64,
            },
            findings: report.findings.into_iter().map(Finding::from).collect(),
            artifact_path: pair.0,
            source_path: pair.1,
        })
    }
}

fn clamp32(n: u64) -> u32 {
    n.min(u32::MAX as u64) as u32
}

impl From<AuditFinding> for Finding {
    fn from(f: AuditFinding) -> Self {
        Finding {
            kind: match f.kind {
                FindingKind::RootlessNode => Kind::RootlessNode,
                FindingKind::OrphanBranch => Kind::OrphanBranch,
                FindingKind::OneWayRef => Kind::OneWayRef,
            },
            message: f.message,
            node_id: f.node_id,
        }
    }
}

/// One audit's counts against 001's three rules.
struct Rules {
    rootless: u64,
    orphans: u64,
    one_way: u64,
    ratio: f64,
    gain: f64,
    below_min: bool,
    still_gaining: bool,
}

impl Rules {
    fn judge(vault: &Vault, report: &AuditReport, coverage: &Coverage, new_lines: u64) -> Rules {
        let total = coverage.total_lines;
        let ratio = coverage.ratio();
        let gain = if total == 0 {
            0.0
        } else {
            new_lines as f64 / total as f64
        };
        let count = |k: FindingKind| report.findings.iter().filter(|f| f.kind == k).count() as u64;
        Rules {
            rootless: count(FindingKind::RootlessNode),
            orphans: count(FindingKind::OrphanBranch),
            one_way: count(FindingKind::OneWayRef),
            ratio,
            gain,
            below_min: ratio < vault.coverage_min_ratio,
            still_gaining: gain >= vault.marginal_gain_min && !coverage.uncovered.is_empty(),
        }
    }

    fn has_findings(&self) -> bool {
        self.rootless + self.orphans + self.one_way > 0
    }

    /// `needs_forced_full_scan`: any of the three rules holds.
    fn forced(&self) -> bool {
        self.below_min || self.has_findings() || self.still_gaining
    }

    /// Uncovered ranges first (001 §3), then where the artifact needs
    /// mending, then audit again to see what the mending changed.
    fn next_actions(
        &self,
        (artifact_path, source_path): &(String, String),
        coverage: &Coverage,
        report: &AuditReport,
    ) -> Vec<NextAction> {
        if !self.forced() {
            return vec![super::action::stop(0.9)];
        }
        let mut next_actions = Vec::new();
        if let Some(gap) = coverage
            .uncovered
            .first()
            .filter(|_| self.below_min || self.still_gaining)
        {
            next_actions.push(NextAction::new(
                Step::VaultScan,
                0.9,
                json!({ "path": source_path, "start_line": gap.start_line }),
            ));
        }
        if let Some(f) = report.findings.first() {
            next_actions.push(NextAction::new(
                Step::VaultScan,
                0.8,
                json!({ "path": artifact_path, "start_line": f.line.max(1) }),
            ));
        }
        next_actions.push(NextAction::new(
            Step::ArtifactAudit,
            0.6,
            json!({ "artifact_path": artifact_path, "source_path": source_path }),
        ));
        next_actions
    }
}
