//! The vault as a web of notes: each note's links, tags, aliases and
//! properties ([`facts`], kept by the index in the note's manifest entry),
//! resolved against every note ([`resolve`]) into outgoing links and
//! backlinks. The graph is derived from the index, never from the files:
//! it is rebuilt when the index's generation changes (a write, an external
//! edit or a rename the watcher saw), reusing the facts of every note whose
//! content hash did not change.

mod destination;
pub mod facts;
pub mod resolve;
pub mod rewrite;
pub mod tasks;

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
    /// The file's size and times as the index last saw them.
    pub size: u64,
    pub mtime_ns: i128,
    pub ctime_ns: i128,
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
    names: Arc<Names>,
    /// For each note, the note each of its links resolves to.
    out: Vec<Vec<Option<u32>>>,
    /// For each note, the links to it from other notes, in path order.
    back: Vec<Vec<Edge>>,
    /// Each tag (lowercase) → the notes that carry it, in path order: a
    /// filter with a tag looks at those notes only, not at every note's
    /// facts (a cache miss or more each).
    tags: HashMap<String, Vec<u32>>,
}

/// Each tag (lowercase) → the notes that carry it.
fn tag_index(notes: &[Note]) -> HashMap<String, Vec<u32>> {
    let mut tags: HashMap<String, Vec<u32>> = HashMap::new();
    for (i, n) in notes.iter().enumerate() {
        for t in &n.facts.tags {
            let v = tags.entry(t.to_lowercase()).or_default();
            if v.last() != Some(&(i as u32)) {
                v.push(i as u32);
            }
        }
    }
    tags
}

/// Where each link of note `from` points, its edges added to `back`
/// (links from a note to itself are not backlinks).
fn resolve_links(
    names: &Names,
    notes: &[Note],
    from: usize,
    back: &mut [Vec<Edge>],
) -> Vec<Option<u32>> {
    let n = &notes[from];
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
}

/// Whether a link that no note answers may be to one of the vault's other
/// files: its target has a file extension, or it is an embed.
pub fn may_name_a_file(l: &Link) -> bool {
    is_attachment(&l.target) || l.form == Form::Embed
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

/// Whether tag `have` is `want` (lowercase) or nested under it, without
/// case and without allocating.
pub fn tag_is(have: &str, want: &str) -> bool {
    let mut h = have.chars().flat_map(char::to_lowercase);
    for w in want.chars() {
        if h.next() != Some(w) {
            return false;
        }
    }
    matches!(h.next(), None | Some('/'))
}

impl Graph {
    /// The graph of the notes the index holds (path, content hash, kept
    /// facts, size and times), reusing `previous`'s facts of unchanged notes. While the
    /// same notes are there (an edit of a note's text), only the changed
    /// notes' links are resolved again; otherwise every link is, since a new
    /// name can change where any link points.
    pub fn build<'a>(
        generation: u64,
        files: impl Iterator<Item = (&'a str, crate::index::FileInfo<'a>)>,
        previous: Option<&Graph>,
    ) -> Graph {
        let reuse: HashMap<&str, &Note> = previous
            .map(|g| g.notes.iter().map(|n| (n.path.as_str(), n)).collect())
            .unwrap_or_default();
        let mut changed = Vec::new();
        let notes: Vec<Note> = files
            .enumerate()
            .map(|(i, (path, info))| {
                let facts = match reuse.get(path) {
                    Some(n) if n.hash == info.hash => n.facts.clone(),
                    _ => {
                        changed.push(i);
                        Arc::new(Facts::kept(info.meta))
                    }
                };
                Note {
                    path: path.to_owned(),
                    hash: info.hash.to_owned(),
                    facts,
                    size: info.size,
                    mtime_ns: info.mtime_ns,
                    ctime_ns: info.ctime_ns,
                }
            })
            .collect();
        match previous {
            Some(p) if p.same_names(&notes) => p.updated(generation, notes, &changed),
            _ => Graph::whole(generation, notes),
        }
    }

    /// Every link resolved.
    fn whole(generation: u64, notes: Vec<Note>) -> Graph {
        let names = Names::new(notes.iter().map(|n| n.path.clone()).collect());
        let mut back = vec![Vec::new(); notes.len()];
        let out: Vec<Vec<Option<u32>>> = (0..notes.len())
            .map(|from| resolve_links(&names, &notes, from, &mut back))
            .collect();
        Graph {
            generation,
            tags: tag_index(&notes),
            notes,
            names: Arc::new(names),
            out,
            back,
        }
    }

    /// Whether `notes` are this graph's notes by path: names resolve as
    /// they did.
    fn same_names(&self, notes: &[Note]) -> bool {
        self.notes.len() == notes.len()
            && self.notes.iter().zip(notes).all(|(a, b)| a.path == b.path)
    }

    /// This graph with the `changed` notes' links resolved again.
    fn updated(&self, generation: u64, notes: Vec<Note>, changed: &[usize]) -> Graph {
        let mut out = self.out.clone();
        let mut back = self.back.clone();
        let mut touched = Vec::new();
        for &c in changed {
            for t in self.out[c].iter().flatten().map(|&t| t as usize) {
                back[t].retain(|e| e.from as usize != c);
            }
            out[c] = resolve_links(&self.names, &notes, c, &mut back);
            touched.extend(out[c].iter().flatten().map(|&t| t as usize));
        }
        touched.sort_unstable();
        touched.dedup();
        for t in touched {
            back[t].sort_unstable_by_key(|e| (e.from, e.link));
        }
        // The tag index stays while no changed note's tags changed.
        let tags = if changed
            .iter()
            .all(|&i| self.notes[i].facts.tags == notes[i].facts.tags)
        {
            self.tags.clone()
        } else {
            tag_index(&notes)
        };
        Graph {
            generation,
            tags,
            notes,
            names: self.names.clone(),
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

    /// The notes note `i` links to or is linked from, itself left out.
    pub fn neighbours(&self, i: usize) -> std::collections::HashSet<usize> {
        self.out[i]
            .iter()
            .flatten()
            .map(|&t| t as usize)
            .chain(self.back[i].iter().map(|e| e.from as usize))
            .filter(|&t| t != i)
            .collect()
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

    /// The notes a filter may keep, in path order: those carrying `tag`
    /// (or a tag nested under it), or every note.
    pub fn pool(&self, tag: Option<&str>) -> Vec<usize> {
        match tag {
            Some(t) => {
                let mut v: Vec<usize> = self
                    .tags
                    .iter()
                    .filter(|(have, _)| tag_is(have, t))
                    .flat_map(|(_, notes)| notes.iter().map(|&i| i as usize))
                    .collect();
                v.sort_unstable();
                v.dedup();
                v
            }
            None => (0..self.notes.len()).collect(),
        }
    }

    /// Notes no other note links to, in path order.
    pub fn orphans(&self) -> impl Iterator<Item = usize> + '_ {
        (0..self.notes.len()).filter(|&i| self.back[i].is_empty())
    }
}

/// The vault's graph, kept for the index generation it was built from,
/// and its attachments, kept while no file outside the index changes.
#[derive(Default)]
pub struct Kept {
    graph: Mutex<Option<Arc<Graph>>>,
    files: Mutex<Option<(u64, Arc<Names>)>>,
}

impl Kept {
    /// The graph of the index as it is now (brought up to date first).
    pub fn current(&self, index: &crate::index::LiveIndex, root: &Root) -> Result<Arc<Graph>> {
        index.refresh(root)?;
        let generation = index.generation();
        let mut kept = self.graph.lock().unwrap_or_else(|e| e.into_inner());
        if let Some(g) = kept.as_ref().filter(|g| g.generation == generation) {
            return Ok(g.clone());
        }
        let files = index.index()?.files();
        let graph = Arc::new(Graph::build(generation, files.iter(), kept.as_deref()));
        *kept = Some(graph.clone());
        Ok(graph)
    }

    /// The vault's attachments as of the index's last re-check (call after
    /// [`Kept::current`]): walked again only when the re-check saw a file
    /// the index does not hold change.
    pub fn attachments(&self, index: &crate::index::LiveIndex, root: &Root) -> Result<Arc<Names>> {
        let seen = index.others_generation();
        let mut kept = self.files.lock().unwrap_or_else(|e| e.into_inner());
        if let Some((_, files)) = kept.as_ref().filter(|(at, _)| *at == seen) {
            return Ok(files.clone());
        }
        let files = Arc::new(attachments(root)?);
        *kept = Some((seen, files.clone()));
        Ok(files)
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
    Ok(Names::new(paths))
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
            .filter(|_| may_name_a_file(l))
            .and_then(|f| {
                f.resolve(&self.notes[i].path, &l.target, l.form)
                    .map(|j| f.path(j))
            })
            .map_or(Target::Missing, Target::File)
    }
}

#[cfg(test)]
pub(crate) mod tests {
    use super::*;

    /// The graph of notes given by path and text.
    pub(crate) fn graph(notes: &[(&str, &str)]) -> Graph {
        build_from(&metas(notes), None)
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
        let null = || serde_json::value::RawValue::from_string("null".to_owned()).unwrap();
        let metas = [
            ("a.md", g1.notes[0].hash.clone(), null()),
            ("b.md", "changed".to_owned(), null()),
        ];
        let g2 = Graph::build(2, metas.iter().map(|(p, h, m)| (*p, info(h, m))), Some(&g1));
        assert!(Arc::ptr_eq(&g1.notes[0].facts, &g2.notes[0].facts));
        assert_eq!(g2.backlinks(1).len(), 1);
    }

    fn metas(notes: &[(&str, &str)]) -> Vec<(String, String, Box<serde_json::value::RawValue>)> {
        notes
            .iter()
            .map(|(p, text)| {
                (
                    p.to_string(),
                    blake3::hash(text.as_bytes()).to_hex().to_string(),
                    serde_json::value::to_raw_value(&Facts::of(text)).unwrap(),
                )
            })
            .collect()
    }

    pub(crate) fn info<'a>(
        hash: &'a str,
        meta: &'a serde_json::value::RawValue,
    ) -> crate::index::FileInfo<'a> {
        crate::index::FileInfo {
            size: 0,
            mtime_ns: 0,
            ctime_ns: 0,
            hash,
            meta: Some(meta),
        }
    }

    fn build_from(
        m: &[(String, String, Box<serde_json::value::RawValue>)],
        previous: Option<&Graph>,
    ) -> Graph {
        Graph::build(
            2,
            m.iter().map(|(p, h, v)| (p.as_str(), info(h, v))),
            previous,
        )
    }

    fn edges(g: &Graph) -> (Vec<Vec<Option<u32>>>, Vec<Vec<Edge>>) {
        (g.out.clone(), g.back.clone())
    }

    #[test]
    fn an_edit_resolves_only_its_note_again_and_agrees_with_a_whole_build() {
        let before = [
            ("a.md", "[[b]] [[c]] [[a]]\n"),
            ("b.md", "---\naliases: [bee]\n---\n[[c]] [[a]]\n"),
            ("c.md", "[[b]] #keep\n"),
            ("d.md", "[[bee]]\n"),
        ];
        let g1 = build_from(&metas(&before), None);
        // c now links to a and d, no longer to b; a links to itself and d.
        let after = [
            ("a.md", "[[d]] [[a]] [[bee]]\n"),
            ("b.md", "---\naliases: [bee]\n---\n[[c]] [[a]]\n"),
            ("c.md", "[[d]] and [[a]] and [[nowhere]] #keep\n"),
            ("d.md", "[[bee]]\n"),
        ];
        let m = metas(&after);
        let g2 = build_from(&m, Some(&g1));
        assert!(Arc::ptr_eq(&g1.names, &g2.names), "names kept");
        assert_eq!(edges(&g2), edges(&build_from(&m, None)));
        assert_eq!(g2.tags, build_from(&m, None).tags, "tags kept");
        // A renamed note changes the names: every link is resolved again.
        let renamed = [
            ("a.md", "[[d]] [[a]] [[bee]]\n"),
            ("bee.md", "---\naliases: [bee]\n---\n[[c]] [[a]]\n"),
            ("c.md", "[[d]] and [[a]] and [[nowhere]] #keep\n"),
            ("d.md", "[[bee]]\n"),
        ];
        let m = metas(&renamed);
        let g3 = build_from(&m, Some(&g2));
        assert!(!Arc::ptr_eq(&g2.names, &g3.names));
        assert_eq!(g3.targets(3), [Some(1)], "d's [[bee]] now names bee.md");
        assert_eq!(edges(&g3), edges(&build_from(&m, None)));
        assert_eq!(g3.tags, build_from(&m, None).tags);
        // A changed tag with the names unchanged: the tag index follows.
        let retagged = [
            ("a.md", "[[d]] [[a]] [[bee]]\n"),
            ("bee.md", "---\naliases: [bee]\n---\n[[c]] [[a]]\n"),
            ("c.md", "[[d]] and [[a]] and [[nowhere]] #other\n"),
            ("d.md", "[[bee]]\n"),
        ];
        let m = metas(&retagged);
        let g4 = build_from(&m, Some(&g3));
        assert!(Arc::ptr_eq(&g3.names, &g4.names));
        assert_eq!(g4.tags, build_from(&m, None).tags);
        assert_eq!(g4.tags.get("other"), Some(&vec![2]));
        assert!(!g4.tags.contains_key("keep"));
    }

    /// The tag index narrows a filter's notes to those carrying its first
    /// tag, nested ones and any case included: exactly the notes whose
    /// facts carry it.
    #[test]
    fn the_tag_index_gives_every_note_carrying_a_tag_and_no_other() {
        let g = graph(&[
            (
                "a.md",
                "---\ntags: [Project/X, done]\nstatus: open\n---\n#inline\n",
            ),
            ("b.md", "---\ntags: [project/x/sub]\nstatus: done\n---\n"),
            ("c.md", "---\ntags: project/xy\n---\n#Project/X\n"),
            ("d.md", "no tags\n"),
        ]);
        for tag in ["project/x", "inline", "nowhere", "project/xy", "done"] {
            let every: Vec<usize> = (0..g.notes.len())
                .filter(|&i| g.notes[i].facts.tags.iter().any(|t| tag_is(t, tag)))
                .collect();
            assert_eq!(g.pool(Some(tag)), every, "{tag}");
        }
        assert_eq!(g.pool(Some("project/x")), [0, 1, 2]);
        assert_eq!(g.pool(None), [0, 1, 2, 3]);
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
