//! The default `auditor` component: reads an artifact (a note written from a
//! source) as a tree of nodes ([`tree`]), reads its citations of source lines
//! ([`cite`]) and reports `rootless_node`, `orphan_branch` and `one_way_ref`
//! findings by the rules in [`audit`]. Plain Rust, unit-tested natively; the
//! wit-bindgen glue below converts records and is compiled for wasm only.
//! Coverage, marginal gain and next actions are the host's.

pub mod audit;
pub mod cite;
pub mod tree;

#[cfg(target_arch = "wasm32")]
mod glue {
    use super::audit;

    wit_bindgen::generate!({
        world: "auditor",
        path: "../../wit",
    });

    use kura::plugins::types::{Finding, FindingKind, LineRange};

    struct Component;

    impl Guest for Component {
        fn audit(input: AuditInput) -> AuditReport {
            let report = audit::audit(&audit::Input {
                artifact: &input.artifact,
                source_path: &input.source_path,
                source_lines: input.source_line_count,
                cited: input
                    .cited_ranges
                    .map(|v| v.iter().map(|r| (r.start_line, r.end_line)).collect()),
            });
            AuditReport {
                findings: report
                    .findings
                    .into_iter()
                    .map(|f| Finding {
                        kind: match f.kind {
                            audit::FindingKind::RootlessNode => FindingKind::RootlessNode,
                            audit::FindingKind::OrphanBranch => FindingKind::OrphanBranch,
                            audit::FindingKind::OneWayRef => FindingKind::OneWayRef,
                        },
                        message: f.message,
                        node_id: f.node_id,
                        line: f.line,
                    })
                    .collect(),
                cited_ranges: report
                    .cited
                    .into_iter()
                    .map(|(start_line, end_line)| LineRange {
                        start_line,
                        end_line,
                    })
                    .collect(),
                node_count: report.node_count,
            }
        }
    }

    export!(Component);
}
