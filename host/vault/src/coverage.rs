//! vault_coverage (001): which lines of a note the cited ranges cover. Ranges
//! are clipped to the file and merged when they overlap or touch;
//! `coverage_ratio = covered_lines / total_lines` (1.0 for an empty file).

use schemars::JsonSchema;
use serde::Serialize;
use serde_json::json;

use super::Vault;
use super::action::{NextAction, Step};
use crate::args::{Input, LineRanges};
use crate::error::{Error, Result};
use crate::fs::RelPath;
use crate::scan::LineRange;

/// Covered and uncovered ranges of a file of `total` lines.
#[derive(Clone, Debug, PartialEq)]
pub struct Coverage {
    pub total_lines: u64,
    pub covered_lines: u64,
    pub covered: Vec<LineRange>,
    pub uncovered: Vec<LineRange>,
}

impl Coverage {
    pub fn ratio(&self) -> f64 {
        if self.total_lines == 0 {
            1.0
        } else {
            self.covered_lines as f64 / self.total_lines as f64
        }
    }

    /// Whether `line` is covered.
    pub fn covers(&self, line: u64) -> bool {
        self.covered
            .iter()
            .any(|r| r.start_line <= line && line <= r.end_line)
    }
}

/// Clip `ranges` to `1..=total`, sort, and merge overlapping or touching ones.
pub fn measure(total: u64, ranges: impl IntoIterator<Item = (u64, u64)>) -> Coverage {
    let mut rs: Vec<(u64, u64)> = ranges
        .into_iter()
        .map(|(a, b)| (a.min(b).max(1), a.max(b).min(total)))
        .filter(|(a, b)| a <= b)
        .collect();
    rs.sort_unstable();
    let mut covered: Vec<LineRange> = Vec::new();
    for (a, b) in rs {
        match covered.last_mut() {
            Some(last) if a <= last.end_line + 1 => last.end_line = last.end_line.max(b),
            _ => covered.push(LineRange {
                start_line: a,
                end_line: b,
            }),
        }
    }
    let mut uncovered = Vec::new();
    let mut next = 1;
    for r in &covered {
        if r.start_line > next {
            uncovered.push(LineRange {
                start_line: next,
                end_line: r.start_line - 1,
            });
        }
        next = r.end_line + 1;
    }
    if next <= total {
        uncovered.push(LineRange {
            start_line: next,
            end_line: total,
        });
    }
    Coverage {
        total_lines: total,
        covered_lines: covered.iter().map(|r| r.end_line - r.start_line + 1).sum(),
        covered,
        uncovered,
    }
}

#[derive(Debug, Serialize, JsonSchema)]
pub struct CoverageApplied {
    pub coverage_min_ratio: f64,
}

#[derive(Debug, Serialize, JsonSchema)]
pub struct CoverageOutput {
    pub path: String,
    pub total_lines: u64,
    pub covered_lines: u64,
    pub coverage_ratio: f64,
    pub covered_ranges: Vec<LineRange>,
    pub uncovered_ranges: Vec<LineRange>,
    pub meets_min_coverage: bool,
    pub next_actions: Vec<NextAction>,
    pub applied: CoverageApplied,
}

/// The parameter `key`'s ranges checked against a file of `total` lines: a
/// range that ends past the end is `invalid_parameter`.
pub fn cited_ranges(ranges: LineRanges, key: &str, total: u64) -> Result<Vec<(u64, u64)>> {
    let limit = total.max(1) as i64;
    for (i, &(_, end)) in ranges.0.iter().enumerate() {
        if end > limit {
            let name = format!("{key}[{i}].end_line");
            return Err(Error::invalid_parameter(
                &name,
                format!(
                    "`{name}` is {end} but the file has {total} line{}",
                    if total == 1 { "" } else { "s" }
                ),
            )
            .with("total_lines", total));
        }
    }
    Ok(ranges
        .0
        .into_iter()
        .map(|(a, b)| (a as u64, b as u64))
        .collect())
}

/// Rounded for output: ratios are read by people and compared by agents.
pub use crate::domain::search::round3;

#[derive(Input)]
pub struct CoverageInput {
    /// File, vault-relative
    pub path: String,
    /// Ranges read or cited (may be empty)
    pub cited_ranges: LineRanges,
}

impl Vault {
    pub fn coverage(&self, input: CoverageInput) -> Result<CoverageOutput> {
        let path = RelPath::parse(&input.path, false)?;
        let file = self.root.open_file(&path)?;
        let total =
            crate::scan::count_lines(file).map_err(|e| crate::fs::io_error(e, &path))? as u64;
        let ranges = cited_ranges(input.cited_ranges, "cited_ranges", total)?;
        let c = measure(total, ranges);
        let ratio = c.ratio();
        let meets = ratio >= self.coverage_min_ratio;
        let next_actions = match c.uncovered.first() {
            // 001: after the first pass, scan the uncovered ranges first.
            Some(gap) if !meets => vec![NextAction::new(
                Step::VaultScan,
                0.9,
                json!({ "path": path.to_string(), "start_line": gap.start_line }),
            )],
            _ => vec![super::action::stop(0.9)],
        };
        tracing::info!(
            tool = "vault_coverage",
            path = %path,
            coverage_ratio = ratio,
            covered_ranges = c.covered.len(),
            uncovered_ranges = c.uncovered.len(),
            "coverage"
        );
        Ok(CoverageOutput {
            path: path.to_string(),
            total_lines: c.total_lines,
            covered_lines: c.covered_lines,
            coverage_ratio: round3(ratio),
            covered_ranges: c.covered,
            uncovered_ranges: c.uncovered,
            meets_min_coverage: meets,
            next_actions,
            applied: CoverageApplied {
                coverage_min_ratio: self.coverage_min_ratio,
            },
        })
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn r(a: u64, b: u64) -> LineRange {
        LineRange {
            start_line: a,
            end_line: b,
        }
    }

    #[test]
    fn overlapping_and_touching_ranges_merge() {
        let c = measure(20, [(5, 8), (1, 2), (3, 4), (7, 10), (15, 15)]);
        assert_eq!(c.covered, vec![r(1, 10), r(15, 15)]);
        assert_eq!(c.uncovered, vec![r(11, 14), r(16, 20)]);
        assert_eq!(c.covered_lines, 11);
        assert!((c.ratio() - 0.55).abs() < 1e-9);
    }

    #[test]
    fn empty_file_is_fully_covered() {
        let c = measure(0, [(1, 3)]);
        assert_eq!(c.covered_lines, 0);
        assert!(c.covered.is_empty() && c.uncovered.is_empty());
        assert_eq!(c.ratio(), 1.0);
    }

    #[test]
    fn ranges_are_clipped_to_the_file() {
        let c = measure(5, [(4, 99), (0, 1), (50, 60)]);
        assert_eq!(c.covered, vec![r(1, 1), r(4, 5)]);
        assert_eq!(c.uncovered, vec![r(2, 3)]);
        assert!(c.covers(5) && !c.covers(2));
    }
}
