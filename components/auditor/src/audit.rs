//! The audit rules (docs/decisions.md, "Vault discovery and audit").
//!
//! Citations are read from each node's own text (not from code blocks); a
//! paragraph that holds nothing but citations (such as a `source_lines:`
//! line) is not a node of its own: its citations belong to its parent. A
//! citation is *inside* the source when its first line is a line of the
//! source; `source_lines` in the front matter count for coverage only.
//!
//! - `rootless_node` (根拠なし要素): a paragraph, list item or code block
//!   with no citation inside the source, neither its own, nor an ancestor's,
//!   nor (for an item) a nested item's.
//! - `orphan_branch` (孤立分岐): a heading with no content and no children;
//!   or the largest subtree whose citations all fall outside the source
//!   (its nodes are then not reported as rootless).
//! - `one_way_ref` (片方向参照): an internal link (`[[#Heading]]`,
//!   `[[^block]]`, `[[#^block]]`) to a node that does not exist, or to a node
//!   none of whose subtree's links point back at the linking node or one of
//!   its ancestors. Links to other notes (`[[note]]`) are not internal.

use crate::cite::{self, Cite};
use crate::tree::{self, Kind, Tree};

#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum FindingKind {
    RootlessNode,
    OrphanBranch,
    OneWayRef,
}

#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Finding {
    pub kind: FindingKind,
    pub message: String,
    pub node_id: Option<String>,
    pub line: u32,
}

#[derive(Clone, Debug, Default)]
pub struct Report {
    pub findings: Vec<Finding>,
    /// The citations used (given, or read from the artifact), as written.
    pub cited: Vec<(u32, u32)>,
    pub node_count: u32,
}

pub struct Input<'a> {
    pub artifact: &'a str,
    pub source_path: &'a str,
    pub source_lines: u32,
    /// Given by the caller; `None`: read from the artifact.
    pub cited: Option<Vec<(u32, u32)>>,
}

enum Target {
    /// (anchor, as written)
    Heading(String, String),
    Block(String),
}

/// Internal links in a text: `[[#Heading]]`, `[[^id]]`, `[[#^id]]` (an
/// alias after `|` is ignored).
fn links(text: &str) -> Vec<Target> {
    let mut out = Vec::new();
    let mut rest = text;
    while let Some(open) = rest.find("[[") {
        let after = &rest[open + 2..];
        let Some(close) = after.find("]]") else { break };
        let inner = after[..close].split('|').next().unwrap_or("").trim();
        if let Some(id) = inner.strip_prefix("#^").or_else(|| inner.strip_prefix('^')) {
            out.push(Target::Block(id.trim().to_owned()));
        } else if let Some(h) = inner.strip_prefix('#') {
            out.push(Target::Heading(anchor(h), h.trim().to_owned()));
        }
        rest = &after[close + 2..];
    }
    out
}

/// How headings are compared: NFKC, lower case, spaces collapsed, citations out.
fn anchor(title: &str) -> String {
    let stripped = cite::strip(title, &cite::scan(title, ""));
    let norm = kura_text::normalize(&stripped);
    let words: Vec<&str> = norm
        .split(|c: char| c.is_whitespace() || c == '(' || c == ')')
        .filter(|w| !w.is_empty())
        .collect();
    words.join(" ")
}

struct Analysed {
    tree: Tree,
    /// Per node: its citations of this source (own, plus those of
    /// citation-only paragraphs merged into it).
    cites: Vec<Vec<(u32, u32)>>,
    alive: Vec<bool>,
}

fn analyse(input: &Input) -> (Analysed, Vec<(u32, u32)>) {
    let tree = tree::parse(input.artifact);
    let n = tree.nodes.len();
    let mut cites: Vec<Vec<(u32, u32)>> = vec![vec![]; n];
    let mut alive = vec![true; n];
    let mut written: Vec<(u32, u32)> = Vec::new();
    let front: Vec<Cite> = cite::scan(&tree.front_matter, input.source_path);
    for c in front.iter().filter(|c| c.this_source) {
        written.extend(&c.ranges);
    }
    for (i, node) in tree.nodes.iter().enumerate() {
        if node.kind == Kind::Code {
            continue;
        }
        let found = cite::scan(&node.text, input.source_path);
        let own: Vec<(u32, u32)> = found
            .iter()
            .filter(|c| c.this_source)
            .flat_map(|c| c.ranges.iter().copied())
            .collect();
        written.extend(&own);
        let says_nothing = node.kind == Kind::Paragraph
            && !found.is_empty()
            && !cite::strip(&node.text, &found)
                .replace("source_lines", "")
                .chars()
                .any(char::is_alphanumeric);
        if says_nothing {
            alive[i] = false;
            if let Some(p) = node.parent {
                cites[p].extend(own);
            }
        } else {
            cites[i].extend(own);
        }
    }
    (Analysed { tree, cites, alive }, written)
}

fn id(kind: Kind, line: u32) -> String {
    format!("{}@L{line}", kind.name())
}

fn describe(kind: Kind) -> &'static str {
    match kind {
        Kind::Heading(_) => "heading",
        Kind::Item => "list item",
        Kind::Paragraph => "paragraph",
        Kind::Code => "code block",
    }
}

impl Analysed {
    /// The children of node `i` that are nodes of their own.
    fn kids(&self, i: usize) -> impl Iterator<Item = usize> + '_ {
        self.tree.nodes[i]
            .children
            .iter()
            .copied()
            .filter(|&c| self.alive[c])
    }

    /// A finding about node `i`.
    fn finding(&self, kind: FindingKind, i: usize, message: String) -> Finding {
        let node = &self.tree.nodes[i];
        Finding {
            kind,
            message,
            node_id: Some(id(node.kind, node.line)),
            line: node.line,
        }
    }
}

pub fn audit(input: &Input) -> Report {
    let (a, written) = analyse(input);
    let mut findings = rooting(&a, input);
    findings.extend(one_way_refs(&a));
    findings.sort_by_key(|f| f.line);
    Report {
        findings,
        cited: input.cited.clone().unwrap_or(written),
        node_count: a.alive.iter().filter(|&&x| x).count() as u32,
    }
}

/// `orphan_branch` and `rootless_node`: where each node's evidence is.
fn rooting(a: &Analysed, input: &Input) -> Vec<Finding> {
    let nodes = &a.tree.nodes;
    let n = nodes.len();
    let inside = |r: &(u32, u32)| r.0 >= 1 && r.0 <= input.source_lines;
    // Citations inside / outside the source in each subtree (children come
    // after their parents, so a reverse pass sees them first).
    let mut sub_in = vec![0usize; n];
    let mut sub_out = vec![0usize; n];
    for i in (0..n).rev() {
        if !a.alive[i] {
            continue;
        }
        sub_in[i] += a.cites[i].iter().filter(|r| inside(r)).count();
        sub_out[i] += a.cites[i].iter().filter(|r| !inside(r)).count();
        if let Some(p) = nodes[i].parent {
            sub_in[p] += sub_in[i];
            sub_out[p] += sub_out[i];
        }
    }
    let own_in = |i: usize| a.cites[i].iter().any(inside);
    let mut findings = Vec::new();
    let mut in_orphan = vec![false; n];
    for i in 0..n {
        if !a.alive[i] || nodes[i].parent.is_some_and(|p| in_orphan[p]) {
            if nodes[i].parent.is_some_and(|p| in_orphan[p]) {
                in_orphan[i] = true;
            }
            continue;
        }
        let node = &nodes[i];
        if sub_out[i] > 0 && sub_in[i] == 0 {
            in_orphan[i] = true;
            findings.push(a.finding(
                FindingKind::OrphanBranch,
                i,
                format!(
                    "orphan_branch (孤立分岐): every citation under the {} at line {} falls outside `{}` ({} lines)",
                    describe(node.kind),
                    node.line,
                    input.source_path,
                    input.source_lines
                ),
            ));
            continue;
        }
        match node.kind {
            Kind::Heading(_) if a.kids(i).next().is_none() => findings.push(a.finding(
                FindingKind::OrphanBranch,
                i,
                format!(
                    "orphan_branch (孤立分岐): the heading `{}` at line {} has no content and no children",
                    node.text.trim(),
                    node.line
                ),
            )),
            Kind::Heading(_) => {}
            _ => {
                let mut rooted = own_in(i) || sub_in[i] > 0;
                let mut up = node.parent;
                while let (false, Some(p)) = (rooted, up) {
                    rooted = own_in(p);
                    up = nodes[p].parent;
                }
                if !rooted {
                    findings.push(a.finding(
                        FindingKind::RootlessNode,
                        i,
                        format!(
                            "rootless_node (根拠なし要素): the {} at line {} cites no line of `{}`, and neither does anything above it",
                            describe(node.kind),
                            node.line,
                            input.source_path
                        ),
                    ));
                }
            }
        }
    }
    findings
}

/// `one_way_ref`: internal links to nothing, or to a node whose subtree
/// does not link back.
fn one_way_refs(a: &Analysed) -> Vec<Finding> {
    let nodes = &a.tree.nodes;
    let links = Links::of(a);
    let subtree = |root: usize| -> Vec<usize> {
        let mut out = vec![root];
        let mut k = 0;
        while k < out.len() {
            out.extend(a.kids(out[k]));
            k += 1;
        }
        out
    };
    let is_ancestor_or_self = |anc: usize, mut x: usize| loop {
        if x == anc {
            return true;
        }
        match nodes[x].parent {
            Some(p) => x = p,
            None => return false,
        }
    };
    let mut findings = Vec::new();
    for (i, node) in nodes.iter().enumerate() {
        for (t, target) in links.written[i].iter().zip(&links.resolved[i]) {
            let name = match t {
                Target::Heading(_, written) => format!("[[#{written}]]"),
                Target::Block(b) => format!("[[^{b}]]"),
            };
            let Some(target) = *target else {
                findings.push(a.finding(
                    FindingKind::OneWayRef,
                    i,
                    format!(
                        "one_way_ref (片方向参照): the {} at line {} links to {name}, which is not in this artifact",
                        describe(node.kind),
                        node.line
                    ),
                ));
                continue;
            };
            let back = subtree(target).into_iter().any(|j| {
                links.resolved[j]
                    .iter()
                    .flatten()
                    .any(|&k| is_ancestor_or_self(k, i))
            });
            if !back {
                findings.push(a.finding(
                    FindingKind::OneWayRef,
                    i,
                    format!(
                        "one_way_ref (片方向参照): the {} at line {} links to {name} (line {}), which does not link back",
                        describe(node.kind),
                        node.line,
                        nodes[target].line
                    ),
                ));
            }
        }
    }
    findings
}

/// Each node's internal links, as written and resolved (each once: the
/// first heading with that title, the first node with that block id).
struct Links {
    written: Vec<Vec<Target>>,
    resolved: Vec<Vec<Option<usize>>>,
}

impl Links {
    fn of(a: &Analysed) -> Links {
        let nodes = &a.tree.nodes;
        let mut headings = std::collections::HashMap::new();
        let mut blocks = std::collections::HashMap::new();
        for (j, nd) in nodes.iter().enumerate().filter(|(j, _)| a.alive[*j]) {
            if matches!(nd.kind, Kind::Heading(_)) {
                headings.entry(anchor(&nd.text)).or_insert(j);
            }
            if let Some(b) = &nd.block_id {
                blocks.entry(b.clone()).or_insert(j);
            }
        }
        let resolve = |t: &Target| -> Option<usize> {
            match t {
                Target::Heading(h, _) => headings.get(h).copied(),
                Target::Block(b) => blocks.get(b).copied(),
            }
        };
        let written: Vec<Vec<Target>> = nodes
            .iter()
            .enumerate()
            .map(|(i, nd)| {
                if a.alive[i] && nd.kind != Kind::Code {
                    links(&nd.text)
                } else {
                    vec![]
                }
            })
            .collect();
        let resolved = written
            .iter()
            .map(|ls| ls.iter().map(resolve).collect())
            .collect();
        Links { written, resolved }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn run(artifact: &str, source_lines: u32) -> Report {
        audit(&Input {
            artifact,
            source_path: "src/manual.md",
            source_lines,
            cited: None,
        })
    }

    fn kinds(r: &Report) -> (usize, usize, usize) {
        let count = |k| r.findings.iter().filter(|f| f.kind == k).count();
        (
            count(FindingKind::RootlessNode),
            count(FindingKind::OrphanBranch),
            count(FindingKind::OneWayRef),
        )
    }

    #[test]
    fn a_clean_artifact_has_no_findings() {
        let doc = "# Summary\n\nThe tool installs in two steps L1.\n\n## Steps\n- download (L3-L5)\n  - check the hash\n- run it (manual.md:6-9)\n\nsource_lines: 10-12\n\n## Limits\nOnly on Linux L20. See [[#Back]].\n\n## Back\nSee [[#Limits]] L21 ^back\n";
        let r = run(doc, 40);
        assert!(r.findings.is_empty(), "{:#?}", r.findings);
        assert_eq!(r.node_count, 10);
        assert_eq!(
            r.cited,
            vec![(1, 1), (3, 5), (6, 9), (10, 12), (20, 20), (21, 21)]
        );
    }

    #[test]
    fn mutual_links_are_not_one_way() {
        let doc = "# A (L1)\nsee [[#B]]\n# B (L2)\nsee [[#A]]\n";
        let r = run(doc, 5);
        assert!(r.findings.is_empty(), "{:#?}", r.findings);
        assert_eq!(r.node_count, 4);
        assert_eq!(r.cited, vec![(1, 1), (2, 2)]);
    }

    #[test]
    fn each_kind_is_found_and_counted() {
        let doc = "\
# Notes
intro L1

## Empty

## Facts
- cited L12
- not cited
  - nor this
- ghost L500
  - under the ghost

## Links
see [[#Nowhere]] and [[^missing]] L3

jump to [[#Facts]] L4
";
        let r = run(doc, 100);
        // `## Facts` has no citation of its own: its items stand alone.
        // Rootless: "not cited", "nor this". Orphans: "## Empty", the ghost
        // subtree. One-way: #Nowhere, ^missing, #Facts (no link back).
        assert_eq!(kinds(&r), (2, 2, 3), "{:#?}", r.findings);
        let ids: Vec<_> = r
            .findings
            .iter()
            .map(|f| f.node_id.clone().unwrap())
            .collect();
        assert_eq!(
            ids,
            vec![
                "heading@L4",
                "item@L8",
                "item@L9",
                "item@L10",
                "para@L14",
                "para@L14",
                "para@L16"
            ]
        );
        assert!(r.findings[0].message.contains("孤立分岐"));
    }

    #[test]
    fn citation_only_lines_cite_for_their_parent() {
        let doc = "## Part\nsource_lines: 4-6\n\nsome claim\n";
        let r = run(doc, 10);
        assert!(r.findings.is_empty(), "{:#?}", r.findings);
        assert_eq!(r.node_count, 2);
    }

    #[test]
    fn other_files_and_code_do_not_cite() {
        let doc = "- from elsewhere (other.md:1-3)\n\n```\nL5\n```\n";
        let r = run(doc, 10);
        assert_eq!(kinds(&r), (2, 0, 0));
        assert!(r.cited.is_empty());
    }

    #[test]
    fn given_ranges_replace_the_written_ones_for_coverage_only() {
        let r = audit(&Input {
            artifact: "- claim L2\n",
            source_path: "s.md",
            source_lines: 5,
            cited: Some(vec![(1, 5)]),
        });
        assert_eq!(r.cited, vec![(1, 5)]);
        assert!(r.findings.is_empty());
    }

    #[test]
    fn front_matter_counts_for_coverage_not_for_roots() {
        let r = run("---\nsource_lines: 1-9\n---\nclaim\n", 9);
        assert_eq!(r.cited, vec![(1, 9)]);
        assert_eq!(kinds(&r), (1, 0, 0));
    }

    /// The demo vault's fixtures, which the end-to-end tests audit through wasm.
    #[test]
    fn the_fixture_artifacts_have_their_known_findings() {
        const GUIDE: &str = include_str!("../../../fixtures/demo/vault/research/backup-guide.md");
        let lines = GUIDE.lines().count() as u32;
        let audit_of = |artifact| {
            audit(&Input {
                artifact,
                source_path: "research/backup-guide.md",
                source_lines: lines,
                cited: None,
            })
        };
        let draft = audit_of(include_str!(
            "../../../fixtures/demo/vault/research/backup-draft.md"
        ));
        assert_eq!(kinds(&draft), (2, 2, 3), "{:#?}", draft.findings);
        let clean = audit_of(include_str!(
            "../../../fixtures/demo/vault/research/backup-summary.md"
        ));
        assert!(clean.findings.is_empty(), "{:#?}", clean.findings);
    }

    #[test]
    fn block_links_resolve() {
        let doc = "- one L1 ^a\n  see [[^b]]\n- two L2 ^b\n  see [[#^a]]\n";
        assert!(run(doc, 3).findings.is_empty());
    }
}
