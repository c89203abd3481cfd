//! Rule-based claim graph.
//!
//! 1. The query's topic is its content terms (no facet cues, no particles).
//! 2. Each evidence is cut into sentences; its *key sentence* is the one that
//!    covers most of the topic (ties: the earlier one). An evidence whose key
//!    sentence covers none of the topic and whose heading covers none either
//!    is off-topic and gets no edge.
//! 3. For each facet the query asks for (`unknown` when it names none), the
//!    on-topic evidences that show that facet (cue phrases in the heading or
//!    the key sentence; every on-topic evidence for `unknown`) back one claim:
//!    the key sentence of the best-scored of them. Each of them is linked to the
//!    claim: `contradicts` when its key sentence is about the same thing
//!    (token overlap with the claim) but of the opposite polarity (negation
//!    cues), `requires_followup` when it qualifies the claim (an exception
//!    marker while the facet is not `exceptions`) or only touches the topic,
//!    `supports` otherwise.
//! 4. A facet with no such evidence but with on-topic evidence gets an
//!    `unresolved` claim linked `requires_followup` to the two best on-topic
//!    evidences; with no on-topic evidence at all it gets no claim.
//! 5. A claim is `supported` with supports and no contradiction, `conflicted`
//!    with both, `unresolved` without support. A facet is `covered` when one
//!    of its claims is supported, `partial` when it has claims but none
//!    supported, `missing` when it has none.

use std::collections::HashSet;

use kura_text::facet::{Facet, detect_plain};
use kura_text::plain;
use kura_text::tokenize::{content_terms, tokens};

/// Share of the topic a key sentence must cover to support a claim on its own.
const SUPPORT_COVERAGE: f64 = 0.5;
/// Token overlap with the claim above which two sentences are about the same thing.
const SAME_SUBJECT: f64 = 0.3;
/// Longest claim text, in characters.
const CLAIM_CHARS: usize = 240;

#[derive(Clone, Debug)]
pub struct Evidence {
    pub id: String,
    pub heading: String,
    pub text: String,
    pub score: f64,
}

#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Status {
    Supported,
    Conflicted,
    Unresolved,
}

#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Relation {
    Supports,
    Contradicts,
    RequiresFollowup,
}

#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Coverage {
    Covered,
    Partial,
    Missing,
}

#[derive(Clone, Debug, PartialEq)]
pub struct Claim {
    pub id: String,
    pub facet: Facet,
    pub text: String,
    pub status: Status,
    pub confidence: f64,
}

#[derive(Clone, Debug, PartialEq)]
pub struct Edge {
    pub from_claim: String,
    pub to_evidence: String,
    pub relation: Relation,
    pub confidence: f64,
}

#[derive(Clone, Debug, PartialEq)]
pub struct FacetSummary {
    pub facet: Facet,
    pub claims: u32,
    pub supported: u32,
    pub conflicted: u32,
    pub unresolved: u32,
    pub coverage: Coverage,
}

#[derive(Clone, Debug, Default, PartialEq)]
pub struct Graph {
    pub claims: Vec<Claim>,
    pub edges: Vec<Edge>,
    pub facets: Vec<FacetSummary>,
}

/// What step 2 learns about one evidence.
struct Read {
    key: String,
    key_tokens: HashSet<String>,
    /// Share of the topic the key sentence (or, failing that, the heading) covers.
    coverage: f64,
    facets: Vec<Facet>,
    negative: bool,
    /// The key sentence qualifies what it says (ただし, except, salvo, ...).
    exception: bool,
    /// Score relative to the best evidence, in (0, 1].
    weight: f64,
}

fn token_set(text: &str) -> HashSet<String> {
    tokens(text).into_iter().map(|t| t.text).collect()
}

fn share(topic: &[String], have: &HashSet<String>) -> f64 {
    if topic.is_empty() {
        return 0.0;
    }
    topic.iter().filter(|t| have.contains(*t)).count() as f64 / topic.len() as f64
}

/// Sentences of a section: split after 。．！？!? and at line ends, with
/// markdown list and heading markers and code fences left out.
pub fn sentences(text: &str) -> Vec<String> {
    let mut out = Vec::new();
    let mut in_fence = false;
    for line in text.lines() {
        let t = line.trim();
        if t.starts_with("```") || t.starts_with("~~~") {
            in_fence = !in_fence;
            continue;
        }
        if in_fence || t.is_empty() {
            continue;
        }
        let t = t.trim_start_matches(['#', '-', '*', '>', '|', ' ']).trim();
        let mut cur = String::new();
        let mut chars = t.chars().peekable();
        while let Some(c) = chars.next() {
            cur.push(c);
            let end = matches!(c, '。' | '．' | '！' | '？' | '!' | '?')
                || (c == '.' && chars.peek().is_none_or(|n| n.is_whitespace()));
            if end {
                push_sentence(&mut out, &mut cur);
            }
        }
        push_sentence(&mut out, &mut cur);
    }
    out
}

fn push_sentence(out: &mut Vec<String>, cur: &mut String) {
    let s = cur.trim();
    if s.chars().any(char::is_alphanumeric) {
        out.push(s.to_owned());
    }
    cur.clear();
}

/// Negation cues, on [`plain`] text (Japanese as substrings, others as words).
fn is_negative(plain_sentence: &str) -> bool {
    const JA: &[&str] = &[
        "ない",
        "ません",
        "不要",
        "禁止",
        "非推奨",
        "べきではない",
        "できず",
        "不可",
    ];
    const WORDS: &[&str] = &[
        "not",
        "cannot",
        "never",
        "no",
        "don t",
        "doesn t",
        "isn t",
        "aren t",
        "won t",
        "deprecated",
        "nunca",
        "jamas",
        "obsoleto",
        "ningun",
        "ninguna",
    ];
    JA.iter().any(|c| plain_sentence.contains(c))
        || WORDS
            .iter()
            .any(|w| plain_sentence.contains(&format!(" {w} ")))
}

/// Words that restrict a statement rather than deny it.
fn is_qualifier(plain_sentence: &str) -> bool {
    const JA: &[&str] = &["ただし", "除く", "除いて", "以外", "例外", "場合を除"];
    const WORDS: &[&str] = &[
        "except",
        "exception",
        "unless",
        "however",
        "but",
        "excepto",
        "salvo",
        "sin embargo",
        "pero",
        "a menos que",
    ];
    JA.iter().any(|c| plain_sentence.contains(c))
        || WORDS
            .iter()
            .any(|w| plain_sentence.contains(&format!(" {w} ")))
}

fn read(topic: &[String], e: &Evidence, best_score: f64) -> Read {
    let heading_tokens = token_set(&e.heading);
    let mut key = String::new();
    let mut key_tokens = HashSet::new();
    let mut coverage = -1.0;
    for s in sentences(&e.text) {
        let t = token_set(&s);
        let c = share(topic, &t);
        if c > coverage {
            coverage = c;
            key = s;
            key_tokens = t;
        }
    }
    // A section whose heading names the topic is about it even when no single
    // sentence repeats it.
    let coverage = coverage.max(share(topic, &heading_tokens)).max(0.0);
    let plain_key = plain(&key);
    let mut facets = detect_plain(&format!("{}{}", plain(&e.heading), plain_key));
    facets.retain(|f| *f != Facet::Unknown);
    // Structure says what cue words may not: steps and code show how to do
    // something; a section that names its topic in its first sentence
    // defines it; one sentence that names most of a multi-part topic
    // compares its parts.
    let mut shown = |f: Facet, yes: bool| {
        if yes && !facets.contains(&f) {
            facets.push(f);
        }
    };
    shown(Facet::Procedure, has_steps_or_code(&e.text));
    let first = sentences(&e.text).into_iter().next().unwrap_or_default();
    shown(
        Facet::Definition,
        share(topic, &token_set(&first)) >= SUPPORT_COVERAGE,
    );
    shown(Facet::Compare, topic.len() >= 2 && coverage >= 0.75);
    let exception = is_qualifier(&plain_key);
    Read {
        negative: is_negative(&plain_key),
        exception,
        key,
        key_tokens,
        coverage,
        facets,
        weight: if best_score > 0.0 {
            (e.score / best_score).clamp(0.0, 1.0)
        } else {
            1.0
        },
    }
}

fn has_steps_or_code(text: &str) -> bool {
    text.lines().any(|l| {
        let t = l.trim_start();
        t.starts_with("```")
            || t.starts_with("~~~")
            || t.split_once(". ")
                .is_some_and(|(n, _)| !n.is_empty() && n.chars().all(|c| c.is_ascii_digit()))
    })
}

fn overlap(a: &HashSet<String>, b: &HashSet<String>) -> f64 {
    let small = a.len().min(b.len());
    if small == 0 {
        return 0.0;
    }
    a.intersection(b).count() as f64 / small as f64
}

fn clip(s: &str) -> String {
    if s.chars().count() <= CLAIM_CHARS {
        return s.to_owned();
    }
    let mut out: String = s.chars().take(CLAIM_CHARS - 1).collect();
    out.push('…');
    out
}

fn round(x: f64) -> f64 {
    (x * 1000.0).round() / 1000.0
}

/// Build the graph for `query`, asking for `query_facets`, from `evidences`
/// (best first is not required).
pub fn build(query: &str, query_facets: &[Facet], evidences: &[Evidence]) -> Graph {
    let topic = content_terms(query);
    let best_score = evidences.iter().map(|e| e.score).fold(0.0, f64::max);
    let reads: Vec<Read> = evidences
        .iter()
        .map(|e| read(&topic, e, best_score))
        .collect();
    let on_topic: Vec<usize> = {
        let mut v: Vec<usize> = (0..evidences.len())
            .filter(|&i| reads[i].coverage > 0.0)
            .collect();
        v.sort_by(|&a, &b| evidences[b].score.total_cmp(&evidences[a].score));
        v
    };
    let read = Reading {
        evidences,
        reads: &reads,
    };
    let mut g = Graph::default();
    for facet in wanted(query_facets) {
        let backing: Vec<usize> = on_topic
            .iter()
            .copied()
            .filter(|&i| facet == Facet::Unknown || reads[i].facets.contains(&facet))
            .collect();
        let id = format!("c{}", g.claims.len() + 1);
        if !backing.is_empty() {
            read.backed_claim(&mut g, id, facet, &backing);
        } else if !on_topic.is_empty() {
            read.unanswered_claim(&mut g, id, facet, &on_topic, query);
        }
        let summary = facet_summary(&g, facet);
        g.facets.push(summary);
    }
    g
}

/// The facets asked about, each once; `Unknown` when none is named.
fn wanted(query_facets: &[Facet]) -> Vec<Facet> {
    let mut wanted: Vec<Facet> = Vec::new();
    for f in query_facets {
        if *f != Facet::Unknown && !wanted.contains(f) {
            wanted.push(*f);
        }
    }
    if wanted.is_empty() {
        wanted.push(Facet::Unknown);
    }
    wanted
}

/// The evidence and what was read from each.
struct Reading<'a> {
    evidences: &'a [Evidence],
    reads: &'a [Read],
}

impl Reading<'_> {
    /// A claim stated by the best of `backing` (the lead), with an edge to
    /// each section that backs, contradicts or qualifies it.
    fn backed_claim(&self, g: &mut Graph, id: String, facet: Facet, backing: &[usize]) {
        let lead = backing[0];
        let lead_read = &self.reads[lead];
        let (mut sup, mut con) = (0usize, 0usize);
        let mut sup_conf = 0.0;
        for &i in backing {
            let r = &self.reads[i];
            let relation = if i == lead {
                Relation::Supports
            } else {
                relation(r, lead_read, facet)
            };
            let confidence = round(r.weight * (0.5 + 0.5 * r.coverage));
            match relation {
                Relation::Supports => {
                    sup += 1;
                    sup_conf += confidence;
                }
                Relation::Contradicts => con += 1,
                Relation::RequiresFollowup => {}
            }
            g.edges.push(Edge {
                from_claim: id.clone(),
                to_evidence: self.evidences[i].id.clone(),
                relation,
                confidence,
            });
        }
        let status = match (sup, con) {
            (0, _) => Status::Unresolved,
            (_, 0) => Status::Supported,
            _ => Status::Conflicted,
        };
        let confidence = match status {
            Status::Supported => sup_conf / sup as f64,
            Status::Conflicted => sup_conf / (sup + con) as f64,
            Status::Unresolved => 0.25 * lead_read.weight,
        };
        let text = if lead_read.key.is_empty() {
            self.evidences[lead].heading.clone()
        } else {
            lead_read.key.clone()
        };
        g.claims.push(Claim {
            id,
            facet,
            text: clip(&text),
            status,
            confidence: round(confidence.clamp(0.0, 1.0)),
        });
    }

    /// No section states the facet: an unresolved claim that points to the
    /// two best sections on the topic for a closer look.
    fn unanswered_claim(
        &self,
        g: &mut Graph,
        id: String,
        facet: Facet,
        on_topic: &[usize],
        query: &str,
    ) {
        for &i in on_topic.iter().take(2) {
            g.edges.push(Edge {
                from_claim: id.clone(),
                to_evidence: self.evidences[i].id.clone(),
                relation: Relation::RequiresFollowup,
                confidence: round(0.5 * self.reads[i].weight * self.reads[i].coverage),
            });
        }
        g.claims.push(Claim {
            id,
            facet,
            text: clip(&format!(
                "No section found states the {} asked about: {}",
                facet.as_str(),
                query.trim()
            )),
            status: Status::Unresolved,
            confidence: 0.0,
        });
    }
}

/// How a section other than the lead bears on the lead's claim.
fn relation(r: &Read, lead: &Read, facet: Facet) -> Relation {
    let same = overlap(&r.key_tokens, &lead.key_tokens) >= SAME_SUBJECT;
    // A qualified statement asks for a closer look before it can be
    // called a contradiction.
    if (r.exception && facet != Facet::Exceptions) || r.coverage < SUPPORT_COVERAGE {
        Relation::RequiresFollowup
    } else if same && r.negative != lead.negative {
        Relation::Contradicts
    } else {
        Relation::Supports
    }
}

/// The facet's claims counted by status, and how well it is covered.
fn facet_summary(g: &Graph, facet: Facet) -> FacetSummary {
    let mine: Vec<&Claim> = g.claims.iter().filter(|c| c.facet == facet).collect();
    let count = |s: Status| mine.iter().filter(|c| c.status == s).count() as u32;
    let supported = count(Status::Supported);
    FacetSummary {
        facet,
        claims: mine.len() as u32,
        supported,
        conflicted: count(Status::Conflicted),
        unresolved: count(Status::Unresolved),
        coverage: if supported > 0 {
            Coverage::Covered
        } else if mine.is_empty() {
            Coverage::Missing
        } else {
            Coverage::Partial
        },
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn ev(id: &str, heading: &str, text: &str, score: f64) -> Evidence {
        Evidence {
            id: id.into(),
            heading: heading.into(),
            text: text.into(),
            score,
        }
    }

    #[test]
    fn sentences_split_in_japanese_and_english_and_skip_code() {
        assert_eq!(
            sentences(
                "# 見出し\n算出プロパティはキャッシュされます。依存が変わると再評価されます。\n```js\nconst a = 1.\n```\n- It is cached. See v1.2 too"
            ),
            [
                "見出し",
                "算出プロパティはキャッシュされます。",
                "依存が変わると再評価されます。",
                "It is cached.",
                "See v1.2 too"
            ]
        );
    }

    #[test]
    fn a_definition_backed_by_two_sections_is_supported_and_covered() {
        let g = build(
            "算出プロパティとは",
            &[Facet::Definition],
            &[
                ev(
                    "e1",
                    "算出プロパティ",
                    "算出プロパティとは、リアクティブな状態から値を導く定義です。",
                    10.0,
                ),
                ev(
                    "e2",
                    "算出プロパティの基本",
                    "算出プロパティの意味は、キャッシュされる値です。",
                    8.0,
                ),
            ],
        );
        assert_eq!(g.claims.len(), 1);
        assert_eq!(g.claims[0].status, Status::Supported);
        assert_eq!(g.claims[0].facet, Facet::Definition);
        assert!(g.claims[0].text.starts_with("算出プロパティとは"));
        assert_eq!(g.edges.len(), 2);
        assert!(g.edges.iter().all(|e| e.relation == Relation::Supports));
        assert_eq!(g.facets[0].coverage, Coverage::Covered);
    }

    #[test]
    fn opposite_polarity_on_the_same_subject_is_a_conflict() {
        let g = build(
            "can computed properties be async",
            &[Facet::Eligibility],
            &[
                ev(
                    "e1",
                    "Computed",
                    "Computed properties can be async when supported by the plugin.",
                    9.0,
                ),
                ev(
                    "e2",
                    "Computed caveats",
                    "Computed properties are not async and cannot be supported.",
                    7.0,
                ),
            ],
        );
        assert_eq!(g.claims[0].status, Status::Conflicted);
        assert!(g.edges.iter().any(|e| e.relation == Relation::Contradicts));
        assert_eq!(g.facets[0].coverage, Coverage::Partial);
    }

    #[test]
    fn an_asked_facet_nobody_states_is_unresolved_then_missing() {
        let evidences = [ev("e1", "Teleport", "Teleport moves a subtree.", 5.0)];
        // (its first sentence names the topic: a definition, not an exception)
        let g = build("teleport の例外", &[Facet::Exceptions], &evidences);
        assert_eq!(g.claims[0].status, Status::Unresolved);
        assert_eq!(g.edges[0].relation, Relation::RequiresFollowup);
        assert_eq!(g.facets[0].coverage, Coverage::Partial);
        let g = build("zebra の例外", &[Facet::Exceptions], &evidences);
        assert!(g.claims.is_empty() && g.edges.is_empty());
        assert_eq!(g.facets[0].coverage, Coverage::Missing);
    }

    #[test]
    fn an_exception_marker_asks_for_follow_up() {
        let g = build(
            "how to use teleport",
            &[Facet::Procedure],
            &[
                ev(
                    "e1",
                    "Using Teleport",
                    "Teleport in three steps.\n1. Use teleport with the to prop.",
                    9.0,
                ),
                ev(
                    "e2",
                    "Teleport usage",
                    "How to use teleport: however it cannot target SSR.",
                    8.0,
                ),
            ],
        );
        let rel: Vec<Relation> = g.edges.iter().map(|e| e.relation).collect();
        assert_eq!(rel, [Relation::Supports, Relation::RequiresFollowup]);
        assert_eq!(g.claims[0].status, Status::Supported);
    }

    #[test]
    fn no_facet_in_the_query_means_one_unknown_claim() {
        let g = build(
            "Teleport",
            &[],
            &[ev("e1", "Teleport", "Teleport moves a subtree.", 1.0)],
        );
        assert_eq!(g.facets.len(), 1);
        assert_eq!(g.facets[0].facet, Facet::Unknown);
        assert_eq!(g.claims[0].status, Status::Supported);
    }

    #[test]
    fn no_evidence_gives_missing_facets_and_no_claims() {
        let g = build("what is x", &[Facet::Definition], &[]);
        assert!(g.claims.is_empty());
        assert_eq!(g.facets[0].coverage, Coverage::Missing);
    }
}
