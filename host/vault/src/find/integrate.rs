//! Stage 1.5 of vault_find: rank what Stage 0 or Stage 1 kept, measure it
//! (bias, gaps, word coverage, sufficiency), decide `integration_status`
//! and the next actions. Its weights are the named tables below.

use std::collections::{HashMap, HashSet};

use serde_json::json;

use super::{
    BIAS_HIGH, BIAS_MIN, Cand, Cutoff, FindSummary, Pass, Query, READY, SignalCoverage, TOP,
};
use crate::Vault;
use crate::action::{NextAction, Step};
use crate::coverage::round3;
use crate::domain::search::{IntegrationStatus, Weights, flag, phrasings, w};
use crate::graph::Graph;

impl Vault {
    /// Stage 1.5: rank what Stage 0 or Stage 1 kept, measure it, decide
    /// `integration_status` and the next actions.
    pub(super) fn integrate(
        &self,
        queries: &[Query],
        passes: Vec<Pass>,
        cutoff: Option<Cutoff>,
        scope_expanded: bool,
        scoped: bool,
        warnings: Vec<String>,
    ) -> (FindSummary, Vec<NextAction>, Vec<String>) {
        let q = &queries[0];
        let all = || passes.iter().flat_map(|p| &p.cands);
        let stage = if all().any(|c| c.normalized) {
            0
        } else if !all().any(|c| c.loose) && all().any(|c| c.near) {
            2
        } else {
            1
        };
        // Links count only from the graph as the index is now; without it
        // (an index error) the ranking ignores them.
        let graph = self
            .link_evidence
            .then(|| self.current_graph().ok())
            .flatten();
        // Each phrasing's ranking, and the share of its words its best
        // sections hold together; several are fused by reciprocal rank.
        let mut lists = Vec::with_capacity(passes.len());
        let mut union_cov = 0.0f64;
        for (q, pass) in queries.iter().zip(&passes) {
            let stage0 = pass.cands.iter().any(|c| c.normalized);
            let kept = ranked(&pass.cands, stage0, graph.as_deref());
            union_cov = union_cov.max(union_coverage(&kept, q));
            lists.push(kept);
        }
        // With several phrasings, the best note answers as far as every
        // phrasing's words are in it (a short phrase of names alone would
        // match its note whole and say `ready` on one read), and the whole
        // query counts only as the caller asked it.
        let (kept, best_cov, stage0) = if lists.len() == 1 {
            let kept = lists.pop().unwrap_or_default();
            let best = kept.first().map_or(0.0, |c| c.coverage);
            let whole = kept.first().is_some_and(|c| c.normalized);
            (kept, best, whole)
        } else {
            let kept = fused_by_note(lists.clone());
            let (cov, whole) = match kept.first() {
                Some(b) => {
                    let cov = lists
                        .iter()
                        .map(|l| in_note(l, &b.file).map_or(0.0, |c| c.coverage))
                        .sum::<f64>()
                        / lists.len() as f64;
                    (
                        cov,
                        in_note(&lists[0], &b.file).is_some_and(|c| c.normalized),
                    )
                }
                None => (0.0, false),
            };
            (kept, cov, whole)
        };
        let m = Measures::of(&kept, best_cov, union_cov, stage0);
        let status = m.status();
        let asked = Asked {
            q,
            scoped,
            scope_expanded,
        };
        let actions = self.next_actions(
            &asked,
            status,
            &kept,
            &m,
            passes[0].cands.first(),
            graph.as_deref(),
        );
        let share = |f: &dyn Fn(&Cand) -> bool| {
            if m.n == 0 {
                0.0
            } else {
                kept.iter().filter(|c| f(c)).count() as f64 / m.n as f64
            }
        };
        let summary = FindSummary {
            scanned_files: passes.iter().map(|p| p.files).sum(),
            scanned_nodes: passes.iter().map(|p| p.nodes).sum(),
            candidates: passes.iter().map(|p| p.cands.len() as u64).sum(),
            warnings: warnings.len() as u64,
            max_stage_applied: stage,
            scope_expanded,
            integrated_candidates: m.n as u64,
            signal_coverage: SignalCoverage {
                normalized: round3(share(&|c| c.normalized)),
                loose: round3(share(&|c| c.loose)),
                meaning: round3(share(&|c| c.near)),
            },
            file_bias_ratio: round3(m.bias),
            gap_ranges_count: m.gaps,
            sufficiency_score: round3(m.sufficiency),
            integration_status: status,
            cutoff_reason: cutoff,
        };
        (summary, actions, warnings)
    }

    /// What to call next, most useful first.
    fn next_actions(
        &self,
        asked: &Asked,
        status: IntegrationStatus,
        kept: &[Cand],
        m: &Measures,
        first_found: Option<&Cand>,
        graph: Option<&Graph>,
    ) -> Vec<NextAction> {
        let c = &CONFIDENCE;
        let mut actions = Vec::new();
        let read = |c: &Cand, conf: f64| {
            NextAction::new(
                Step::VaultRead,
                conf,
                json!({ "path": c.file, "range": { "start_line": c.start, "end_line": c.end } }),
            )
        };
        match (status, kept.first()) {
            (IntegrationStatus::Ready, Some(b)) => {
                actions.push(read(b, m.sufficiency));
                actions.push(crate::action::stop(m.sufficiency));
            }
            (IntegrationStatus::NeedsFollowup, Some(b)) => {
                actions.push(read(b, m.sufficiency.max(c.read_floor)));
                let large = self.is_large(&b.file);
                if m.best_gaps > 0 || m.biased || large {
                    // The answer spans the file: read it through, from the top.
                    actions.push(NextAction::new(
                        Step::VaultScan,
                        c.scan,
                        json!({ "path": b.file }),
                    ));
                }
                // Follow a link: the best hit in another note that the best
                // note links to or is linked from.
                let linked = graph.and_then(|g| linked_hit(g, b, kept));
                if let Some(n) = linked {
                    actions.push(read(n, c.follow_link));
                }
                if let Some(rs) = m.per_file.get(b.file.as_str()).filter(|r| r.len() >= 2) {
                    let mut rs = rs.clone();
                    rs.sort_unstable();
                    let cited: Vec<_> = rs
                        .iter()
                        .map(|&(s, e)| json!({ "start_line": s, "end_line": e }))
                        .collect();
                    actions.push(NextAction::new(
                        Step::VaultCoverage,
                        c.coverage,
                        json!({ "path": b.file, "cited_ranges": cited }),
                    ));
                }
                if m.union_cov < 1.0 && asked.scoped && !asked.scope_expanded {
                    // Some words were found nowhere in the scope: try the whole vault.
                    actions.push(NextAction::new(
                        Step::VaultFind,
                        c.widen,
                        json!({ "query": asked.q.text }),
                    ));
                }
                // Not sure of the best: the best sections of the next notes
                // in the ranking, each less sure than the one before.
                let mut proposed: Vec<&str> = vec![b.file.as_str()];
                proposed.extend(linked.map(|n| n.file.as_str()));
                let mut others = Vec::new();
                for k in kept {
                    if others.len() == c.other_notes {
                        break;
                    }
                    if !proposed.contains(&k.file.as_str()) {
                        proposed.push(k.file.as_str());
                        others.push(k);
                    }
                }
                for (i, o) in others.into_iter().enumerate() {
                    let conf = c.other_note * o.rank / b.rank.max(f64::EPSILON) / (i + 1) as f64;
                    actions.push(read(o, conf.min(c.other_note)));
                }
            }
            _ => {
                // Nothing integrated: a literal line search catches what the
                // word index cannot (symbols, partial words).
                actions.push(NextAction::new(
                    Step::VaultSearch,
                    c.line_search,
                    json!({ "query": asked.q.text, "mode": "plain" }),
                ));
                if let Some(f) = first_found {
                    actions.push(read(f, c.first_found));
                }
            }
        }
        actions
    }
}

/// What the caller asked, as the next actions need it.
struct Asked<'a, 'q> {
    q: &'a Query<'q>,
    /// The search was limited to a folder or a glob.
    scoped: bool,
    /// It was widened to the whole vault after the scope kept nothing.
    scope_expanded: bool,
}

/// What ranks a kept section.
#[derive(Clone, Copy, Debug, PartialEq)]
enum Rank {
    /// Its BM25 over the best kept one's.
    Bm25,
    /// Its share of the query's words.
    Coverage,
    /// The whole query matched it after folding (Stage 0).
    Normalized,
    /// Outside Stage 0: its sentence vector's cosine with the query's over
    /// the best kept one's (0 without the encoder). Its weight makes meaning
    /// decide and the words break near-ties: on the vault gold set's dev
    /// half (mostly questions in another language than their answer), 0.4
    /// kept the lexical order's 0.273 first-read hits, 2 gave 0.500, 8
    /// 0.682, 16 and 20 0.727. On the handbook vault's dev half (736 notes
    /// in three languages, whose own words appear in some note for almost
    /// any question), 8 gave 0.241, 16 0.266, 32 0.253, and the encoder's
    /// first note alone 0.278: 16 leaves the words a say among sections
    /// within a sixteenth of the best cosine.
    Meaning,
    /// The share of the strongest other hits (the [`TOP`] of the ranking
    /// without it) whose note links to its note or is linked from it. On
    /// the linked vault gold set's dev half (words only), 0.1 to 0.5 lift
    /// the right first reads from 0.65 to 0.70, 0.5 also a right note
    /// among the reads to 0.75; 1.0 drops the first reads to 0.55 (a
    /// neighbour outranks the note that holds the words).
    Linked,
}

const RANK: Weights<Rank, 5> = Weights([
    w(Rank::Bm25, 0.5),
    w(Rank::Coverage, 0.3),
    w(Rank::Normalized, 0.2),
    w(Rank::Meaning, 16.0),
    w(Rank::Linked, LINKED),
]);

/// [`Rank::Linked`]'s weight.
const LINKED: f64 = 0.5;

/// What says the kept sections answer the query.
#[derive(Clone, Copy, Debug, PartialEq)]
enum Sufficiency {
    /// The best-ranked section's share of the query's words: the one the
    /// first read names, whatever another section holds.
    BestCoverage,
    /// The share of the query's words the top sections hold together.
    UnionCoverage,
    /// Stage 0 matched somewhere.
    WholeQuery,
}

const SUFFICIENCY: Weights<Sufficiency, 3> = Weights([
    w(Sufficiency::BestCoverage, 0.5),
    w(Sufficiency::UnionCoverage, 0.2),
    w(Sufficiency::WholeQuery, 0.3),
]);

/// How sure each next action is when the search needs a follow-up.
struct FollowupConfidence {
    /// Reading the best evidence, at least.
    read_floor: f64,
    /// Reading its file through (gaps, bias, a large file).
    scan: f64,
    /// Measuring the coverage of its ranges.
    coverage: f64,
    /// Searching the whole vault when the scope missed words.
    widen: f64,
    /// A literal line search when nothing was integrated.
    line_search: f64,
    /// Reading the first section found, then.
    first_found: f64,
    /// Reading a hit in a note linked to or from the best one.
    follow_link: f64,
    /// Reading the best section of each of the next notes in the ranking
    /// (at most `other_notes` of them), the first at most this sure. Four
    /// make the reads the ranking's first five notes: on the handbook
    /// vault's dev half a right note among the reads went 0.557 → 0.570
    /// from three.
    other_note: f64,
    other_notes: usize,
}

const CONFIDENCE: FollowupConfidence = FollowupConfidence {
    read_floor: 0.3,
    scan: 0.7,
    coverage: 0.5,
    widen: 0.4,
    line_search: 0.3,
    first_found: 0.2,
    follow_link: 0.45,
    other_note: 0.3,
    other_notes: 4,
};

/// The candidates Stage 1.5 keeps (Stage 0's matches, or else Stage 1's
/// and Stage 2's), ranked by [`RANK`]: once without links, then again with
/// each one's links to the strongest of that first ranking.
fn ranked(cands: &[Cand], stage0: bool, graph: Option<&Graph>) -> Vec<Cand> {
    let mut kept: Vec<Cand> = cands
        .iter()
        .filter(|c| {
            if stage0 {
                c.normalized
            } else {
                c.loose || c.near
            }
        })
        .cloned()
        .collect();
    let top_bm25 = kept
        .iter()
        .map(|c| c.bm25)
        .fold(0.0f32, f32::max)
        .max(f32::EPSILON);
    let top_cos = kept
        .iter()
        .map(|c| c.meaning)
        .fold(0.0f64, f64::max)
        .max(f64::EPSILON);
    let score = |c: &Cand| {
        RANK.score(|f| match f {
            Rank::Bm25 => f64::from(c.bm25 / top_bm25),
            Rank::Coverage => c.coverage,
            Rank::Normalized => flag(c.normalized),
            // An exact match of the whole query keeps its lexical order.
            Rank::Meaning if stage0 => 0.0,
            Rank::Meaning => c.meaning / top_cos,
            Rank::Linked => c.linked,
        })
    };
    let sort = |kept: &mut Vec<Cand>| {
        for c in kept.iter_mut() {
            c.rank = score(c);
        }
        kept.sort_by(|a, b| b.rank.total_cmp(&a.rank));
    };
    sort(&mut kept);
    if let Some(g) = graph {
        link_shares(&mut kept, g);
        sort(&mut kept);
    }
    kept
}

/// Each candidate's [`Rank::Linked`]: the share of the notes of the
/// ranking's first [`TOP`] (other than its own) linked to or from its note.
fn link_shares(kept: &mut [Cand], g: &Graph) {
    let mut strong: Vec<usize> = Vec::new();
    for c in kept.iter().take(TOP) {
        if let Some(i) = g.find(&c.file).filter(|i| !strong.contains(i)) {
            strong.push(i);
        }
    }
    if strong.len() < 2 {
        return; // one note: nothing to be linked with
    }
    let near: Vec<HashSet<usize>> = strong.iter().map(|&s| g.neighbours(s)).collect();
    for c in kept.iter_mut() {
        let Some(i) = g.find(&c.file) else { continue };
        let n = strong
            .iter()
            .zip(&near)
            .filter(|(s, ns)| **s != i && ns.contains(&i))
            .count();
        c.linked = n as f64 / strong.len() as f64;
    }
}

/// The best kept hit, after the best one, in another note the best note
/// links to or is linked from.
fn linked_hit<'a>(g: &Graph, best: &Cand, kept: &'a [Cand]) -> Option<&'a Cand> {
    let near = g.neighbours(g.find(&best.file)?);
    kept.iter()
        .filter(|c| c.file != best.file)
        .find(|c| g.find(&c.file).is_some_and(|i| near.contains(&i)))
}

/// The best-ranked section of `file` in a ranking.
fn in_note<'c>(ranking: &'c [Cand], file: &str) -> Option<&'c Cand> {
    ranking.iter().find(|c| c.file == file)
}

/// Several phrasings' rankings fused by note: a note's sections follow
/// it, each ranked with its note's fused score.
fn fused_by_note(lists: Vec<Vec<Cand>>) -> Vec<Cand> {
    phrasings::fuse_by_document(
        lists,
        |c: &Cand| (c.file.clone(), c.start),
        |c| c.file.clone(),
    )
    .into_iter()
    .map(|(mut c, score)| {
        c.rank = score;
        c
    })
    .collect()
}

/// The share of `q`'s words the best [`TOP`] of its ranking `kept` hold
/// together (the best one's coverage when it has no content words).
fn union_coverage(kept: &[Cand], q: &Query) -> f64 {
    if q.units.is_empty() {
        return kept.first().map_or(0.0, |c| c.coverage);
    }
    let found = (0..q.units.len())
        .filter(|&u| kept.iter().take(TOP).any(|c| c.units[u]))
        .count();
    found as f64 / q.units.len() as f64
}

/// What Stage 1.5 measures on the ranked candidates.
struct Measures<'a> {
    /// Candidates kept.
    n: usize,
    /// Their line ranges, by file.
    per_file: HashMap<&'a str, Vec<(u64, u64)>>,
    /// The share of them in the file that holds the most.
    bias: f64,
    biased: bool,
    /// Gaps between ranges in the files of the best [`TOP`].
    gaps: u64,
    /// Gaps in the best candidate's file.
    best_gaps: u64,
    /// The share of the query's words the best [`TOP`] hold together.
    union_cov: f64,
    sufficiency: f64,
}

impl<'a> Measures<'a> {
    /// `best_cov`: the share of the query's words in the best section;
    /// `union_cov`: the share the best sections hold together
    /// ([`union_coverage`]); `stage0`: the best matched the whole query.
    fn of(kept: &'a [Cand], best_cov: f64, union_cov: f64, stage0: bool) -> Measures<'a> {
        let n = kept.len();
        let mut per_file: HashMap<&str, Vec<(u64, u64)>> = HashMap::new();
        for c in kept {
            per_file.entry(&c.file).or_default().push((c.start, c.end));
        }
        let bias = per_file
            .values()
            .map(Vec::len)
            .max()
            .map_or(0.0, |m| m as f64 / n.max(1) as f64);
        let gaps_in = |file: &str| -> u64 {
            let mut rs = per_file.get(file).cloned().unwrap_or_default();
            rs.sort_unstable();
            rs.windows(2).filter(|w| w[1].0 > w[0].1 + 1).count() as u64
        };
        let mut top_files: Vec<&str> = Vec::new();
        for c in kept.iter().take(TOP) {
            if !top_files.contains(&c.file.as_str()) {
                top_files.push(&c.file);
            }
        }
        let gaps: u64 = top_files.iter().map(|f| gaps_in(f)).sum();
        let sufficiency = if n == 0 {
            0.0
        } else {
            SUFFICIENCY.score(|f| match f {
                Sufficiency::BestCoverage => best_cov,
                Sufficiency::UnionCoverage => union_cov,
                Sufficiency::WholeQuery => flag(stage0),
            })
        };
        let best_gaps = kept.first().map_or(0, |b| gaps_in(&b.file));
        Measures {
            n,
            bias,
            biased: n >= BIAS_MIN && bias >= BIAS_HIGH,
            gaps,
            best_gaps,
            union_cov,
            sufficiency,
            per_file,
        }
    }

    fn status(&self) -> IntegrationStatus {
        if self.n == 0 {
            IntegrationStatus::Blocked
        } else if self.sufficiency >= READY && self.best_gaps == 0 && !self.biased {
            IntegrationStatus::Ready
        } else {
            IntegrationStatus::NeedsFollowup
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::graph::tests::graph;

    fn cand(file: &str, bm25: f32) -> Cand {
        Cand {
            file: file.into(),
            start: 1,
            end: 2,
            bm25,
            normalized: false,
            loose: true,
            units: vec![true],
            coverage: 1.0,
            meaning: 0.0,
            near: false,
            linked: 0.0,
            rank: 0.0,
        }
    }

    #[test]
    fn a_note_linked_with_the_strongest_hits_gains_over_an_unlinked_equal() {
        let g = graph(&[
            ("a.md", "[[c]]\n"),
            ("b.md", "[[c]]\n"),
            ("c.md", "nothing out\n"),
            ("d.md", "nothing at all\n"),
        ]);
        // c and d score the same by words; a and b, stronger, link to c.
        let cands = [
            cand("a.md", 10.0),
            cand("b.md", 9.0),
            cand("d.md", 5.0),
            cand("c.md", 5.0),
        ];
        let order = |g: Option<&Graph>| -> Vec<String> {
            ranked(&cands, false, g)
                .into_iter()
                .map(|c| c.file)
                .collect()
        };
        assert_eq!(order(None), ["a.md", "b.md", "d.md", "c.md"]);
        assert_eq!(order(Some(&g)), ["a.md", "b.md", "c.md", "d.md"]);
        let kept = ranked(&cands, false, Some(&g));
        let c = kept.iter().find(|c| c.file == "c.md").unwrap();
        assert_eq!(c.linked, 0.5, "linked from two of the four strongest");
    }

    /// Ready says the read it proposes answers: the words another section
    /// holds do not make the first one's read sufficient.
    #[test]
    fn ready_is_judged_on_the_section_it_proposes_to_read() {
        let q = Query::new("alpha beta", "alpha beta".into(), None);
        assert_eq!(q.units.len(), 2);
        let holding = |file: &str, units: Vec<bool>| Cand {
            coverage: units.iter().filter(|&&u| u).count() as f64 / 2.0,
            units,
            ..cand(file, 1.0)
        };
        // First by meaning, one word of two; the other holds both.
        let kept = [
            holding("near.md", vec![true, false]),
            holding("words.md", vec![true, true]),
        ];
        let measured = |kept: &[Cand]| {
            Measures::of(kept, kept[0].coverage, union_coverage(kept, &q), false).status()
        };
        assert_eq!(measured(&kept), IntegrationStatus::NeedsFollowup);
        let kept = [kept[1].clone(), kept[0].clone()];
        assert_eq!(measured(&kept), IntegrationStatus::Ready);
    }

    #[test]
    fn following_a_link_names_the_best_linked_hit_in_another_note() {
        let g = graph(&[("a.md", "[[c]]\n"), ("b.md", "x\n"), ("c.md", "y\n")]);
        let kept = [cand("a.md", 3.0), cand("b.md", 2.0), cand("c.md", 1.0)];
        assert_eq!(linked_hit(&g, &kept[0], &kept).unwrap().file, "c.md");
        assert!(linked_hit(&g, &kept[1], &kept).is_none(), "b links nowhere");
    }
}
