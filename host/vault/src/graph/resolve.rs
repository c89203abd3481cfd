//! Which file a link points to, as Obsidian decides: case does not matter,
//! `.md` may be left out, a path may be shortened to its last segments
//! while it stays unique. Never by a note's front-matter `aliases`: Obsidian
//! offers an alias when a link is typed but writes the note's name with the
//! alias as display text (`[[Artificial Intelligence|AI]]`), and `[[AI]]`
//! leads nowhere in it (its help page on aliases). A target that is a path from the vault's top
//! (with or without `.md`) is that file; a markdown link is first relative
//! to its note, and one that starts with `/` is from the vault's top only. Where several files fit a shortened path, the one in the
//! linking note's folder wins, then the one with the shortest path, then
//! the first by name (Obsidian leaves that case to its own order; kura
//! fixes one).

use std::collections::HashMap;

use super::facts::Form;

/// The files links are resolved against, by lowercase path and name.
#[derive(Default)]
pub struct Names {
    paths: Vec<String>,
    /// Each path in lowercase, for matching without allocating.
    lower: Vec<String>,
    /// Lowercase path (and, for a `.md` file, the path without it) → file.
    exact: HashMap<String, usize>,
    /// Lowercase file name (and, for a `.md` file, its stem) → files.
    by_name: HashMap<String, Vec<usize>>,
}

fn stem_md(lower: &str) -> Option<&str> {
    lower.strip_suffix(".md")
}

pub(super) fn parent(path: &str) -> &str {
    path.rsplit_once('/').map_or("", |(d, _)| d)
}

/// `base/rel` with `.` and `..` applied; None when it climbs out of the vault.
pub fn join(base: &str, rel: &str) -> Option<String> {
    let mut parts: Vec<&str> = base.split('/').filter(|s| !s.is_empty()).collect();
    for seg in rel.split('/') {
        match seg {
            "" | "." => {}
            ".." => {
                parts.pop()?;
            }
            s => parts.push(s),
        }
    }
    Some(parts.join("/"))
}

impl Names {
    /// `paths` in path order (sorted).
    pub fn new(paths: Vec<String>) -> Names {
        let mut n = Names {
            exact: HashMap::with_capacity(paths.len() * 2),
            by_name: HashMap::with_capacity(paths.len() * 2),
            ..Names::default()
        };
        for (i, p) in paths.iter().enumerate() {
            let lower = p.to_lowercase();
            let name = lower.rsplit('/').next().unwrap_or(&lower).to_owned();
            if let Some(stem) = stem_md(&name) {
                n.by_name.entry(stem.to_owned()).or_default().push(i);
            }
            n.by_name.entry(name).or_default().push(i);
            n.exact.insert(lower.clone(), i);
            n.lower.push(lower);
        }
        // A real file named like another's path without `.md` keeps its name.
        for (i, p) in paths.iter().enumerate() {
            if let Some(stem) = stem_md(&p.to_lowercase()) {
                n.exact.entry(stem.to_owned()).or_insert(i);
            }
        }
        n.paths = paths;
        n
    }

    pub fn path(&self, i: usize) -> &str {
        &self.paths[i]
    }

    /// Every file, in path order.
    pub fn paths(&self) -> &[String] {
        &self.paths
    }

    /// The file at exactly `path`.
    pub fn find(&self, path: &str) -> Option<usize> {
        self.paths.binary_search_by(|p| p.as_str().cmp(path)).ok()
    }

    /// The file a link written in `from` with `target` points to.
    pub fn resolve(&self, from: &str, target: &str, form: Form) -> Option<usize> {
        let target = target.trim();
        if target.is_empty() {
            return self.exact.get(&from.to_lowercase()).copied();
        }
        let relative = target.starts_with("./") || target.starts_with("../");
        // A markdown link from `/` names a path from the vault's top and
        // nothing else: neither the note's folder nor a search by name.
        if form == Form::Markdown && target.starts_with('/') {
            let wanted = join("", target)?.to_lowercase();
            return self.exact.get(&wanted).copied();
        }
        if form == Form::Markdown || relative {
            let joined = join(parent(from), target)?;
            if let Some(&i) = self.exact.get(&joined.to_lowercase()) {
                return Some(i);
            }
            if relative {
                return None;
            }
        }
        let wanted = join("", target.trim_start_matches('/'))?.to_lowercase();
        if let Some(&i) = self.exact.get(&wanted) {
            return Some(i);
        }
        let name = wanted.rsplit('/').next().unwrap_or(&wanted);
        // The path, or its last segments (with or without `.md`).
        let ends = |p: &str| {
            p == wanted
                || (p.len() > wanted.len()
                    && p.ends_with(wanted.as_str())
                    && p.as_bytes()[p.len() - wanted.len() - 1] == b'/')
        };
        let fits = |i: &&usize| {
            let p = self.lower[**i].as_str();
            ends(p) || stem_md(p).is_some_and(ends)
        };
        let found = self
            .by_name
            .get(name)
            .map(|c| c.iter().filter(fits).copied().collect::<Vec<_>>())
            .unwrap_or_default();
        self.best(from, &found)
    }

    /// Of several files a link fits, the one Obsidian's users expect.
    fn best(&self, from: &str, found: &[usize]) -> Option<usize> {
        let here = parent(from);
        found.iter().copied().min_by_key(|&i| {
            let p = &self.paths[i];
            (parent(p) != here, p.matches('/').count(), i)
        })
    }

    /// The shortest way to write a wikilink to file `i` from `from` that
    /// resolves back to it: its name if unique, else as few of its last
    /// segments as make it so, else its whole path. `.md` is left out.
    pub fn shortest(&self, from: &str, i: usize) -> String {
        let full = &self.paths[i];
        let bare = full.strip_suffix(".md").unwrap_or(full);
        let segs: Vec<&str> = bare.split('/').collect();
        for k in 1..=segs.len() {
            let candidate = segs[segs.len() - k..].join("/");
            if self.resolve(from, &candidate, Form::Wikilink) == Some(i) {
                return candidate;
            }
        }
        bare.to_owned()
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn names(paths: &[&str]) -> Names {
        Names::new(paths.iter().map(|p| p.to_string()).collect())
    }

    const VAULT: &[&str] = &[
        "Home.md",
        "a/Note.md",
        "b/Note.md",
        "b/c/Deep.md",
        "img/pic.png",
        "people/Ada Lovelace.md",
        "x/Home.md",
    ];

    fn at(n: &Names, from: &str, target: &str, form: Form) -> Option<&'static str> {
        n.resolve(from, target, form)
            .map(|i| *VAULT.iter().find(|p| **p == n.path(i)).unwrap())
    }

    #[test]
    fn wikilinks_resolve_by_name_without_case_or_extension() {
        let n = names(VAULT);
        let w = Form::Wikilink;
        assert_eq!(at(&n, "Home.md", "deep", w), Some("b/c/Deep.md"));
        assert_eq!(at(&n, "Home.md", "Deep.md", w), Some("b/c/Deep.md"));
        assert_eq!(at(&n, "Home.md", "c/deep", w), Some("b/c/Deep.md"));
        assert_eq!(at(&n, "Home.md", "B/C/DEEP", w), Some("b/c/Deep.md"));
        assert_eq!(at(&n, "Home.md", "pic.png", w), Some("img/pic.png"));
        assert_eq!(at(&n, "Home.md", "nothing", w), None);
        assert_eq!(at(&n, "Home.md", "x/deep", w), None, "not a suffix");
    }

    #[test]
    fn of_two_notes_with_one_name_the_nearest_wins() {
        let n = names(VAULT);
        let w = Form::Wikilink;
        assert_eq!(at(&n, "b/c/Deep.md", "Note", w), Some("a/Note.md"));
        assert_eq!(at(&n, "b/Other.md", "Note", w), Some("b/Note.md"));
        assert_eq!(at(&n, "Home.md", "b/Note", w), Some("b/Note.md"));
        // A name that is also a path from the vault's top is that path.
        assert_eq!(at(&n, "x/Other.md", "Home", w), Some("Home.md"));
        assert_eq!(at(&n, "x/Other.md", "x/Home", w), Some("x/Home.md"));
    }

    #[test]
    fn markdown_links_are_relative_to_the_note_first() {
        let n = names(VAULT);
        let m = Form::Markdown;
        assert_eq!(at(&n, "b/c/Deep.md", "../Note.md", m), Some("b/Note.md"));
        assert_eq!(
            at(&n, "b/c/Deep.md", "../../a/Note.md", m),
            Some("a/Note.md")
        );
        assert_eq!(at(&n, "b/c/Deep.md", "../../../out.md", m), None);
        assert_eq!(
            at(&n, "Home.md", "people/Ada Lovelace.md", m),
            Some("people/Ada Lovelace.md")
        );
        assert_eq!(
            at(&n, "x/Home.md", "Deep.md", m),
            Some("b/c/Deep.md"),
            "by name"
        );
    }

    #[test]
    fn a_markdown_link_from_slash_starts_at_the_vault_s_top() {
        let n = names(&["docs/a.md", "x/Note.md", "x/docs/a.md"]);
        let got = n
            .resolve("x/Note.md", "/docs/a.md", Form::Markdown)
            .map(|i| n.path(i));
        assert_eq!(got, Some("docs/a.md"));
        let got = n
            .resolve("x/Note.md", "docs/a.md", Form::Markdown)
            .map(|i| n.path(i));
        assert_eq!(
            got,
            Some("x/docs/a.md"),
            "without `/`, the note's folder first"
        );
        assert_eq!(
            n.resolve("x/Note.md", "/a.md", Form::Markdown),
            None,
            "no search by name"
        );
    }

    /// Obsidian's help, "Aliases": a link made from an alias is written
    /// `[[Artificial Intelligence|AI]]` "rather than just using the alias
    /// as the link destination (`[[AI]]`)"; such a link leads nowhere.
    #[test]
    fn a_link_never_resolves_by_alias() {
        let n = names(VAULT);
        for form in [Form::Wikilink, Form::Embed, Form::Markdown] {
            assert_eq!(at(&n, "Home.md", "Ada", form), None);
        }
        assert_eq!(
            at(&n, "Home.md", "Ada Lovelace", Form::Wikilink),
            Some("people/Ada Lovelace.md")
        );
    }

    /// Obsidian's help, "Internal links": a link to a file other than
    /// Markdown includes its extension (`[[Figure 1.png]]`); a note's may
    /// leave `.md` out. "Embed files": `![[Document.pdf#page=3]]`.
    #[test]
    fn a_file_other_than_a_note_is_named_with_its_extension() {
        let n = names(VAULT);
        assert_eq!(
            at(&n, "Home.md", "pic.png", Form::Wikilink),
            Some("img/pic.png")
        );
        assert_eq!(
            at(&n, "Home.md", "pic.png", Form::Embed),
            Some("img/pic.png")
        );
        assert_eq!(
            at(&n, "Home.md", "pic", Form::Wikilink),
            None,
            "no extension"
        );
        assert_eq!(
            at(&n, "Home.md", "Deep", Form::Wikilink),
            Some("b/c/Deep.md")
        );
        let text = "![[Figure 1.png|100x145]] ![[Doc.pdf#page=3]] [[My note#Heading 1#Heading 2]] [[2023-01-01#^37066d]]\n";
        let got: Vec<(String, Option<String>)> = super::super::facts::occurrences(text)
            .into_iter()
            .map(|o| (o.target, o.fragment))
            .collect();
        let want = [
            ("Figure 1.png", None),
            ("Doc.pdf", Some("page=3")),
            ("My note", Some("Heading 1#Heading 2")),
            ("2023-01-01", Some("^37066d")),
        ];
        let want: Vec<(String, Option<String>)> = want
            .iter()
            .map(|(t, f)| (t.to_string(), f.map(str::to_owned)))
            .collect();
        assert_eq!(got, want);
    }

    #[test]
    fn an_empty_target_is_the_note_itself() {
        let n = names(VAULT);
        assert_eq!(at(&n, "a/Note.md", "", Form::Wikilink), Some("a/Note.md"));
    }

    #[test]
    fn the_shortest_link_resolves_back() {
        let n = names(VAULT);
        let i = |p: &str| VAULT.iter().position(|v| *v == p).unwrap();
        assert_eq!(n.shortest("Home.md", i("b/c/Deep.md")), "Deep");
        assert_eq!(n.shortest("Home.md", i("b/Note.md")), "b/Note");
        assert_eq!(n.shortest("b/Other.md", i("b/Note.md")), "Note");
        assert_eq!(n.shortest("Home.md", i("x/Home.md")), "x/Home");
        assert_eq!(n.shortest("Home.md", i("img/pic.png")), "pic.png");
        for from in VAULT {
            for (k, _) in VAULT.iter().enumerate() {
                let s = n.shortest(from, k);
                assert_eq!(
                    n.resolve(from, &s, Form::Wikilink),
                    Some(k),
                    "{from} -> {s}"
                );
            }
        }
    }
}
