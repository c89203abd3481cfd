//! The sample call `kura plugins check` makes for each world: input like
//! what kura sends, and a one-line account of the answer.

use std::sync::Arc;

use crate::slot::{Cell, World};
use crate::{Plugins, RerankCandidate, Reranked, WriteKind, WriteRequest, bindings};

/// A world `check` can sample: how to put a loaded component in its slot,
/// and the call.
pub(super) trait Sample: World + Sized {
    fn put(p: &mut Plugins, cell: Arc<Cell<Self>>);
    fn sample(p: &Plugins) -> Result<String, String>;
}

/// `candidates` (id, heading, text) as the reranker slot takes them, each
/// with a first-stage score of 1.0.
pub fn rerank_candidates(candidates: &[(String, String, String)]) -> Vec<RerankCandidate<'_>> {
    candidates
        .iter()
        .map(|(id, heading, text)| RerankCandidate {
            id: id.clone(),
            heading,
            text,
            score: 1.0,
        })
        .collect()
}

/// 200 candidates of ~500 bytes, as manual_find sends them.
pub fn sample_candidates() -> Vec<(String, String, String)> {
    (0..200)
        .map(|i| {
            (
                format!("guide/page-{i}.md#1"),
                format!("ガイド > 算出プロパティ {i}"),
                format!(
                    "算出プロパティはリアクティブな依存関係にもとづいてキャッシュされます。Computed properties are cached based on their reactive dependencies (section {i}). メソッドは再レンダリングのたびに実行されます。"
                ),
            )
        })
        .collect()
}

impl Sample for bindings::reranker::RerankerPre<crate::State> {
    fn put(p: &mut Plugins, cell: Arc<Cell<Self>>) {
        p.reranker = Some(cell);
    }

    fn sample(p: &Plugins) -> Result<String, String> {
        let owned = sample_candidates();
        let list = rerank_candidates(&owned);
        match p.rerank("算出プロパティ キャッシュ computed cache", &list) {
            Some(Reranked::Scores(s)) => {
                let lo = s.iter().copied().fold(f64::INFINITY, f64::min);
                let hi = s.iter().copied().fold(f64::NEG_INFINITY, f64::max);
                Ok(format!(
                    "rerank of {} candidates gave scores in [{lo:.3}, {hi:.3}]",
                    s.len()
                ))
            }
            Some(Reranked::Failed(e)) => Err(e.message),
            Some(Reranked::Pending) | None => Err("the reranker did not load".into()),
        }
    }
}

impl Sample for bindings::claim_graph::ClaimGraphPre<crate::State> {
    fn put(p: &mut Plugins, cell: Arc<Cell<Self>>) {
        p.claim_graph = Some(cell);
    }

    fn sample(p: &Plugins) -> Result<String, String> {
        let owned = sample_candidates();
        let evidences: Vec<crate::claim_graph::GraphEvidence<'_>> = owned
            .iter()
            .take(10)
            .enumerate()
            .map(
                |(i, (_, heading, text))| crate::claim_graph::GraphEvidence {
                    evidence_id: format!("e{}", i + 1),
                    manual_id: "sample",
                    path: "guide/computed.md",
                    start_line: 1 + 10 * i as u64,
                    heading,
                    text,
                    score: 1.0 - i as f64 / 10.0,
                    signals: vec!["heading".into()],
                },
            )
            .collect();
        let facets = [kura_text::facet::Facet::Definition];
        match p.claim_graph("算出プロパティとは", &facets, &evidences) {
            Some(Ok(g)) => Ok(format!(
                "build over 10 evidences gave {} claims, {} edges, {} facets",
                g.claims.len(),
                g.edges.len(),
                g.facets.len()
            )),
            Some(Err(e)) => Err(e.message),
            None => Err("the claim graph did not load".into()),
        }
    }
}

impl Sample for bindings::auditor::AuditorPre<crate::State> {
    fn put(p: &mut Plugins, cell: Arc<Cell<Self>>) {
        p.auditor = Some(cell);
    }

    fn sample(p: &Plugins) -> Result<String, String> {
        let artifact = "# Summary\n\n- Computed properties are cached (L1-L3)\n  - Methods run on every render (L4-L6)\n- An orphan claim\n";
        let req = crate::AuditRequest {
            artifact_path: "notes/summary.md",
            artifact,
            source_path: "sources/computed.md",
            source_lines: 40,
            cited: None,
        };
        p.audit(&req)
            .map(|a| {
                format!(
                    "audit of a 5-line artifact gave {} findings, {} nodes, {} citations",
                    a.findings.len(),
                    a.node_count,
                    a.cited.len()
                )
            })
            .map_err(|e| e.message)
    }
}

impl Sample for bindings::write_policy::WritePolicyPre<crate::State> {
    fn put(p: &mut Plugins, cell: Arc<Cell<Self>>) {
        p.write_policy = Some(cell);
    }

    fn sample(p: &Plugins) -> Result<String, String> {
        let asks = [
            (WriteKind::Create, "notes/new.md", false),
            (WriteKind::Overwrite, "notes/old.md", true),
            (WriteKind::Append, "daily/2026-01-05.md", true),
            (WriteKind::Create, "archive/x.md", false),
        ];
        let mut said = Vec::new();
        for (kind, path, exists) in asks {
            let req = WriteRequest {
                tool: "kura plugins check",
                kind,
                path,
                exists,
            };
            let verdict = match p.check_write(&req) {
                Ok(()) => "allow".to_owned(),
                Err(e)
                    if matches!(
                        e.code,
                        crate::error::Code::PluginFailed | crate::error::Code::Timeout
                    ) =>
                {
                    return Err(e.message);
                }
                Err(e) => format!("deny {}", e.code.as_str()),
            };
            said.push(format!("{kind:?} {path}: {verdict}"));
        }
        Ok(said.join(", "))
    }
}

impl Sample for bindings::embedder::EmbedderPre<crate::State> {
    fn put(p: &mut Plugins, cell: Arc<Cell<Self>>) {
        p.embedder = Some(cell);
    }

    /// Three sentences that say one thing (Japanese, Spanish, English) and
    /// one that says another: how near the translations are, against it.
    fn sample(p: &Plugins) -> Result<String, String> {
        let texts: Vec<String> = [
            "パッケージを削除するには apt remove を使います",
            "Para eliminar un paquete se usa apt remove",
            "To remove a package, use apt remove",
            "Computed properties are cached based on their reactive dependencies",
        ]
        .map(String::from)
        .to_vec();
        let e = match p.embedder() {
            Some(Ok(e)) => e,
            Some(Err(e)) => return Err(e.message),
            None => return Err("the embedder did not load".into()),
        };
        let v = e.embed(&texts).map_err(|e| e.message)?;
        let cos = |a: usize, b: usize| -> f32 { v[a].iter().zip(&v[b]).map(|(x, y)| x * y).sum() };
        Ok(format!(
            "embed of 4 texts gave unit vectors; cosine ja–en {:.2}, es–en {:.2}, en–unrelated {:.2}",
            cos(0, 2),
            cos(1, 2),
            cos(2, 3)
        ))
    }
}
