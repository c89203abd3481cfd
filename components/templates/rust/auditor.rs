//! A kura auditor in Rust: list items are nodes; a node that cites no
//! source line ("(L12)", "(L3-L7)") is reported.

wit_bindgen::generate!({ world: "auditor", path: "wit" });

use kura::plugins::types::{Finding, FindingKind, LineRange};

struct Component;

/// The "(L3-L7)" citations of a line.
fn citations(line: &str) -> Vec<LineRange> {
    line.split("(L")
        .skip(1)
        .filter_map(|rest| {
            let inner = rest.split(')').next()?;
            let (a, b) = inner.split_once('-').unwrap_or((inner, inner));
            let start = a.parse().ok()?;
            let end = b.trim_start_matches('L').parse().ok()?;
            Some(LineRange { start_line: start, end_line: end })
        })
        .collect()
}

impl Guest for Component {
    fn audit(input: AuditInput) -> AuditReport {
        let mut findings = Vec::new();
        let mut cited = Vec::new();
        let mut node_count = 0;
        for (i, line) in input.artifact.lines().enumerate() {
            let item = line.trim();
            if !(item.starts_with("- ") || item.starts_with("* ")) {
                continue;
            }
            node_count += 1;
            let refs = citations(item);
            if refs.is_empty() {
                findings.push(Finding {
                    kind: FindingKind::RootlessNode,
                    message: "a node that cites no source line".into(),
                    node_id: None,
                    line: i as u32 + 1,
                });
            }
            cited.extend(refs);
        }
        AuditReport {
            findings,
            cited_ranges: input.cited_ranges.unwrap_or(cited),
            node_count,
        }
    }
}

export!(Component);
