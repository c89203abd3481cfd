//! The vault as a web of notes: each note's links, tags, aliases and
//! properties ([`facts`], kept by the index in the note's manifest entry),
//! resolved against every note ([`resolve`]) into outgoing links and
//! backlinks. The graph is derived from the index, never from the files:
//! it is rebuilt when the index's generation changes (a write, an external
//! edit or a rename the watcher saw), reusing the facts of every note whose
//! content hash did not change.

pub mod facts;
pub mod filter;
pub mod resolve;
pub mod rewrite;

use std::collections::HashMap;
use std::sync::{Arc, Mutex};

use facts::{Facts, Form, Link};
use resolve::Names;

use crate::error::Result;
use crate::fs::{RelPath, Root};

/// One note of the graph.
pub struct Note {
    pub path: String,
    hash: String,
    pub facts: Arc<Facts>,
}

/// Where a link from a note points.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Edge {
    /// The linking note and the link's place in its facts.
    pub from: u32,
    pub link: u32,
}

pub struct Graph {
    /// The index generation this graph was built from.
    generation: u64,
    /// In path order.
    pub notes: Vec<Note>,
    names: Names,
    /// For each note, the note each of its links resolves to.
    out: Vec<Vec<Option<u32>>>,
    /// For each note, the links to it from other notes, in path order.
    back: Vec<Vec<Edge>>,
}

/// Whether a link's target names a file other than a note (`.png`, `.pdf`):
/// such links resolve against the vault's files, not the graph.
pub fn is_attachment(target: &str) -> bool {
    let name = target.rsplit('/').next().unwrap_or(target);
    name.rsplit_once('.').is_some_and(|(stem, ext)| {
        !stem.is_empty()
            && (1..=5).contains(&ext.len())
            && ext.chars().all(|c| c.is_ascii_alphanumeric())
            && !matches!(ext.to_ascii_lowercase().as_str(), "md" | "markdown" | "txt")
    })
}

impl Graph {
    /// The graph of the notes the index holds, `(path, content hash, kept
    /// facts)`, reusing `previous`'s facts of unchanged notes.
    pub fn build<'a>(
        generation: u64,
        files: impl Iterator<Item = (&'a str, &'a str, Option<&'a serde_json::Value>)>,
        previous: Option<&Graph>,
    ) -> Graph {
        let reuse: HashMap<&str, &Note> = previous
            .map(|g| g.notes.iter().map(|n| (n.path.as_str(), n)).collect())
            .unwrap_or_default();
        let notes: Vec<Note> = files
            .map(|(path, hash, meta)| {
                let facts = match reuse.get(path) {
                    Some(n) if n.hash == hash => n.facts.clone(),
                    _ => Arc::new(Facts::kept(meta)),
                };
                Note {
                    path: path.to_owned(),
                    hash: hash.to_owned(),
                    facts,
                }
            })
            .collect();
        let names = Names::new(notes.iter().map(|n| n.path.clone()).collect(), |i| {
            &notes[i].facts.aliases
        });
        let mut back = vec![Vec::new(); notes.len()];
        let out: Vec<Vec<Option<u32>>> = notes
            .iter()
            .enumerate()
            .map(|(from, n)| {
                n.facts
                    .links
                    .iter()
                    .enumerate()
                    .map(|(k, l)| {
                        let to = names.resolve(&n.path, &l.target, l.form)?;
                        if to != from {
                            back[to].push(Edge {
                                from: from as u32,
                                link: k as u32,
                            });
                        }
                        Some(to as u32)
                    })
                    .collect()
            })
            .collect();
        Graph {
            generation,
            notes,
            names,
            out,
            back,
        }
    }

    pub fn generation(&self) -> u64 {
        self.generation
    }

    /// The note at `path` (exactly as indexed).
    pub fn find(&self, path: &str) -> Option<usize> {
        self.notes
            .binary_search_by(|n| n.path.as_str().cmp(path))
            .ok()
    }

    /// The note each of note `i`'s links resolves to.
    pub fn targets(&self, i: usize) -> &[Option<u32>] {
        &self.out[i]
    }

    /// The links to note `i` from other notes.
    pub fn backlinks(&self, i: usize) -> &[Edge] {
        &self.back[i]
    }

    /// The link an edge stands for.
    pub fn link(&self, e: Edge) -> &Link {
        &self.notes[e.from as usize].facts.links[e.link as usize]
    }

    pub fn names(&self) -> &Names {
        &self.names
    }

    /// Every link that resolves to no note, `(note, link)` in path and line
    /// order. Links to attachments are included: the caller checks them
    /// against the files.
    pub fn unresolved(&self) -> impl Iterator<Item = (usize, usize)> + '_ {
        self.out.iter().enumerate().flat_map(|(i, links)| {
            links
                .iter()
                .enumerate()
                .filter(|(_, t)| t.is_none())
                .map(move |(k, _)| (i, k))
        })
    }

    /// Notes no other note links to, in path order.
    pub fn orphans(&self) -> impl Iterator<Item = usize> + '_ {
        (0..self.notes.len()).filter(|&i| self.back[i].is_empty())
    }
}

/// The vault's graph, kept for the index generation it was built from.
#[derive(Default)]
pub struct Kept(Mutex<Option<Arc<Graph>>>);

impl Kept {
    /// The graph of the index as it is now (brought up to date first).
    pub fn current(&self, index: &crate::index::LiveIndex, root: &Root) -> Result<Arc<Graph>> {
        index.refresh(root)?;
        let generation = index.generation();
        let mut kept = self.0.lock().unwrap_or_else(|e| e.into_inner());
        if let Some(g) = kept.as_ref().filter(|g| g.generation == generation) {
            return Ok(g.clone());
        }
        let files = index.index()?.files();
        let graph = Arc::new(Graph::build(
            generation,
            files
                .iter()
                .map(|(path, info)| (path, info.hash, info.meta)),
            kept.as_deref(),
        ));
        *kept = Some(graph.clone());
        Ok(graph)
    }
}

/// The vault's files that are not notes, for links to attachments.
pub fn attachments(root: &Root) -> Result<Names> {
    let mut paths: Vec<String> = root
        .walk_files(&RelPath::root())?
        .into_iter()
        .filter(|(p, _)| {
            !crate::notes::indexable(p)
                && !crate::notes::is_reserved(p)
                && !crate::notes::is_trash(p)
        })
        .map(|(p, _)| p.to_string())
        .collect();
    paths.sort();
    Ok(Names::new(paths, |_| &[]))
}

/// How a link's target is found: a note of the graph, a file of the
/// vault's attachments, or nothing.
pub enum Target<'a> {
    Note(usize),
    File(&'a str),
    Missing,
}

impl Graph {
    /// Where link `k` of note `i` points, attachments looked up in `files`
    /// (when the caller walked them).
    pub fn target<'a>(&self, i: usize, k: usize, files: Option<&'a Names>) -> Target<'a> {
        if let Some(t) = self.out[i][k] {
            return Target::Note(t as usize);
        }
        let l = &self.notes[i].facts.links[k];
        files
            .filter(|_| is_attachment(&l.target) || l.form == Form::Embed)
            .and_then(|f| {
                f.resolve(&self.notes[i].path, &l.target, l.form)
                    .map(|j| f.path(j))
            })
            .map_or(Target::Missing, Target::File)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn graph(notes: &[(&str, &str)]) -> Graph {
        let metas: Vec<(String, String, serde_json::Value)> = notes
            .iter()
            .map(|(p, text)| {
                (
                    p.to_string(),
                    blake3::hash(text.as_bytes()).to_hex().to_string(),
                    serde_json::to_value(Facts::of(text)).unwrap(),
                )
            })
            .collect();
        Graph::build(
            1,
            metas
                .iter()
                .map(|(p, h, m)| (p.as_str(), h.as_str(), Some(m))),
            None,
        )
    }

    #[test]
    fn backlinks_are_the_links_that_resolve_to_a_note() {
        let g = graph(&[
            ("a.md", "[[b]] and [[b#Part]] and [[nowhere]]\n"),
            ("b.md", "# Part\nback to [a](a.md) and [[b]] itself\n"),
            ("c.md", "![[B]]\n"),
            ("lonely.md", "nothing\n"),
        ]);
        let b = g.find("b.md").unwrap();
        let from: Vec<(&str, u32)> = g
            .backlinks(b)
            .iter()
            .map(|e| (g.notes[e.from as usize].path.as_str(), g.link(*e).line))
            .collect();
        assert_eq!(
            from,
            [("a.md", 1), ("a.md", 1), ("c.md", 1)],
            "self-links left out"
        );
        let unresolved: Vec<&str> = g
            .unresolved()
            .map(|(i, k)| g.notes[i].facts.links[k].target.as_str())
            .collect();
        assert_eq!(unresolved, ["nowhere"]);
        let orphans: Vec<&str> = g.orphans().map(|i| g.notes[i].path.as_str()).collect();
        assert_eq!(orphans, ["c.md", "lonely.md"]);
    }

    #[test]
    fn a_rebuild_reuses_the_facts_of_unchanged_notes() {
        let g1 = graph(&[("a.md", "[[b]]\n"), ("b.md", "x\n")]);
        let metas = [
            ("a.md", g1.notes[0].hash.clone(), serde_json::Value::Null),
            ("b.md", "changed".to_owned(), serde_json::Value::Null),
        ];
        let g2 = Graph::build(
            2,
            metas.iter().map(|(p, h, m)| (*p, h.as_str(), Some(m))),
            Some(&g1),
        );
        assert!(Arc::ptr_eq(&g1.notes[0].facts, &g2.notes[0].facts));
        assert_eq!(g2.backlinks(1).len(), 1);
    }

    #[test]
    fn attachments_are_told_by_their_extension() {
        for t in ["pic.png", "a/doc.PDF", "x.tar.gz"] {
            assert!(is_attachment(t), "{t}");
        }
        for t in ["note", "note.md", "v1.2 release notes", "a.b/c", ".hidden"] {
            assert!(!is_attachment(t), "{t}");
        }
    }
}
