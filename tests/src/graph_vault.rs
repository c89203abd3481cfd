//! A realistic linked vault for the graph tests, made the same way every
//! time, with the truth about it recorded as it is written: every link
//! (its note, line, form and the note or file it points to, or none), the
//! tags and properties each note was given. The notes are the Debian
//! Reference's sections in English and Spanish (fixtures/corpora, GPL-2+,
//! with its LICENSE), each given front matter and a `Related` section;
//! around them topic hubs, people, daily notes, an inbox of notes nothing
//! links to, and attachments. Every link form occurs: wikilinks by name,
//! by path (with and without `.md`), with an alias as display text (as
//! Obsidian writes it) and by an alias alone (which, as in Obsidian, leads
//! nowhere), to a heading and a block,
//! with shown text; embeds of notes and attachments; markdown links
//! relative (`%20`, `<...>`) and from the top; reference definitions;
//! wikilinks in front-matter values; links in code that are not links;
//! and deliberate broken links. The corpus' own links to the HTML pages
//! it was converted from are made plain text, so that every link in the
//! vault is one the generator wrote and recorded.

#![allow(clippy::disallowed_methods)] // the fixture is written with std::fs

use std::collections::BTreeMap;
use std::path::Path;

use serde_json::{Map, Value, json};

/// One link the generator wrote.
#[derive(Clone, Debug, PartialEq, Eq, PartialOrd, Ord)]
pub struct TrueLink {
    pub from: String,
    pub line: u64,
    /// `wikilink`, `embed` or `markdown`.
    pub form: &'static str,
    /// The file it points to; None for a deliberate broken link.
    pub to: Option<String>,
}

#[derive(Default)]
pub struct Truth {
    /// Every note, in path order.
    pub notes: Vec<String>,
    pub attachments: Vec<String>,
    pub links: Vec<TrueLink>,
    /// The tags each note was given (front matter and text), lowercase.
    pub tags: BTreeMap<String, Vec<String>>,
    /// Each note's front-matter properties.
    pub props: BTreeMap<String, Map<String, Value>>,
}

/// `(line, form, file)` of each link, sorted.
pub type Links = Vec<(u64, String, Option<String>)>;

impl Truth {
    /// The links written in `note`, sorted.
    pub fn links_from(&self, note: &str) -> Links {
        let mut v: Links = self
            .links
            .iter()
            .filter(|l| l.from == note)
            .map(|l| (l.line, l.form.to_owned(), l.to.clone()))
            .collect();
        v.sort();
        v
    }

    /// `(note, line, form)` of the links to `note` from other notes, sorted.
    pub fn backlinks(&self, note: &str) -> Vec<(String, u64, String)> {
        let mut v: Vec<_> = self
            .links
            .iter()
            .filter(|l| l.to.as_deref() == Some(note) && l.from != note)
            .map(|l| (l.from.clone(), l.line, l.form.to_owned()))
            .collect();
        v.sort();
        v
    }

    /// The notes nothing else links to, in path order.
    pub fn orphans(&self) -> Vec<String> {
        self.notes
            .iter()
            .filter(|n| self.backlinks(n).is_empty())
            .cloned()
            .collect()
    }

    /// The notes with a link that points nowhere, in path order.
    pub fn with_broken_links(&self) -> Vec<String> {
        let mut v: Vec<String> = self
            .links
            .iter()
            .filter(|l| l.to.is_none())
            .map(|l| l.from.clone())
            .collect();
        v.dedup();
        v
    }

    /// The notes tagged `tag` or a tag below it, in path order.
    pub fn tagged(&self, tag: &str) -> Vec<String> {
        self.notes
            .iter()
            .filter(|n| {
                self.tags[n.as_str()]
                    .iter()
                    .any(|t| t == tag || t.starts_with(&format!("{tag}/")))
            })
            .cloned()
            .collect()
    }

    /// The truth as the Python SDK suite reads it: each note's links and
    /// backlinks, vault_notes arguments with the notes they must list, and
    /// a move (a topic hub and where to).
    pub fn to_json(&self) -> Value {
        let notes: Map<String, Value> = self
            .notes
            .iter()
            .map(|n| {
                (
                    n.clone(),
                    json!({"links": self.links_from(n), "backlinks": self.backlinks(n)}),
                )
            })
            .collect();
        let hub = self
            .notes
            .iter()
            .filter(|n| n.starts_with("topics/"))
            .max_by_key(|n| self.backlinks(n).len())
            .expect("a topic hub");
        json!({
            "notes": notes,
            "lists": [
                [{"only": "orphans"}, self.orphans()],
                [{"only": "unresolved"}, self.with_broken_links()],
                [{"filter": "#debian/ch02"}, self.tagged("debian/ch02")],
            ],
            "move": [hub, "archive/Moved Hub.md"],
        })
    }
}

/// A note being written: its lines, and the links recorded with their line.
struct Note {
    path: String,
    lines: Vec<String>,
    links: Vec<(u64, &'static str, Option<String>)>,
    tags: Vec<String>,
    props: Map<String, Value>,
}

impl Note {
    fn new(path: &str) -> Note {
        Note {
            path: path.to_owned(),
            lines: Vec::new(),
            links: Vec::new(),
            tags: Vec::new(),
            props: Map::new(),
        }
    }

    /// Front matter from `props` (tags and aliases as YAML lists).
    fn front(&mut self, props: Map<String, Value>) {
        self.lines.push("---".into());
        for (k, v) in &props {
            let text = match v {
                Value::Array(items) => format!(
                    "[{}]",
                    items
                        .iter()
                        .map(|i| i.as_str().map_or(i.to_string(), str::to_owned))
                        .collect::<Vec<_>>()
                        .join(", ")
                ),
                Value::String(s) => s.clone(),
                other => other.to_string(),
            };
            self.lines.push(format!("{k}: {text}"));
        }
        self.lines.push("---".into());
        if let Some(Value::Array(tags)) = props.get("tags") {
            self.tags
                .extend(tags.iter().filter_map(Value::as_str).map(str::to_lowercase));
        }
        self.props = props;
    }

    fn line(&mut self, text: impl Into<String>) {
        self.lines.push(text.into());
    }

    /// A line holding links: each `(form, target file)` is recorded on it.
    fn linked(&mut self, text: String, links: &[(&'static str, Option<&str>)]) {
        self.lines.push(text);
        let n = self.lines.len() as u64;
        for (form, to) in links {
            self.links.push((n, form, to.map(str::to_owned)));
        }
    }

    fn tag(&mut self, tag: &str) {
        let t = tag.to_lowercase();
        if !self.tags.contains(&t) {
            self.tags.push(t);
        }
    }
}

/// A deterministic sequence (the same vault on every machine).
struct Lcg(u64);

impl Lcg {
    fn next(&mut self, n: usize) -> usize {
        self.0 = self
            .0
            .wrapping_mul(6_364_136_223_846_793_005)
            .wrapping_add(1_442_695_040_888_963_407);
        ((self.0 >> 33) as usize) % n
    }
}

/// The corpus text with its links to the HTML pages made plain text and
/// its `[[n]]` footnote marks made `[n]`: real prose, no link kura would
/// count that the generator did not write.
fn plain(text: &str) -> String {
    let footnote = regex::Regex::new(r"\[\[(\d+)\]\]\(#[^)]*\)").unwrap();
    let text = footnote.replace_all(text, "[$1]");
    let internal = regex::Regex::new(r#"\[([^\]\[]*)\]\((?:[^)h]|h[^t])[^)]*\)"#).unwrap();
    internal.replace_all(&text, "$1").into_owned()
}

const TOPICS: &[(&str, &str, &[&str])] = &[
    ("Package Management", "pkg", &["ch02"]),
    ("System Tips", "tips", &["ch09"]),
    ("Data Management", "data", &["ch10"]),
    ("Data Conversion", "conversion", &["ch11"]),
    ("Networking", "net", &["ch05", "ch06"]),
    ("Programming", "prog", &["ch12"]),
    ("Basics", "basics", &["ch01"]),
    ("System Initialization", "init", &["ch03"]),
    ("Authentication", "auth", &["ch04"]),
    ("The X Window System", "x11", &["ch07"]),
    ("I18N and L10N", "i18n", &["ch08"]),
];

const PEOPLE: &[(&str, &str)] = &[
    ("Ada Lovelace", "Ada"),
    ("Alan Turing", "Alan"),
    ("Grace Hopper", "Grace"),
    ("Linus Torvalds", "Linus"),
    ("Ian Murdock", "Ian"),
    ("María Moliner", "María"),
];

const STATUSES: &[&str] = &["draft", "review", "done"];

/// Write the vault into `dir` (which must exist) and return its truth.
pub fn build(dir: &Path, corpora: &Path) -> Truth {
    let mut rng = Lcg(28);
    let mut notes: Vec<Note> = Vec::new();
    // The corpus notes, in both languages, with the same names.
    let mut sections: Vec<(String, String)> = Vec::new(); // (chapter, file name)
    for e in std::fs::read_dir(corpora.join("debian-reference-en")).unwrap() {
        let ch = e.unwrap().file_name().into_string().unwrap();
        if !ch.starts_with("ch") {
            continue;
        }
        for f in std::fs::read_dir(corpora.join("debian-reference-en").join(&ch)).unwrap() {
            let name = f.unwrap().file_name().into_string().unwrap();
            let es = corpora.join("debian-reference-es").join(&ch).join(&name);
            if name.ends_with(".md") && name != "index.md" && es.exists() {
                sections.push((ch.clone(), name));
            }
        }
    }
    sections.sort();
    let topic_of = |ch: &str| TOPICS.iter().find(|t| t.2.contains(&ch)).map(|t| t.0);
    for (lang, other) in [("en", "es"), ("es", "en")] {
        for (i, (ch, name)) in sections.iter().enumerate() {
            let stem = name.trim_end_matches(".md");
            let number = stem.split('-').next().unwrap_or(stem);
            let mut n = Note::new(&format!("{lang}/{ch}/{name}"));
            let mut props = Map::new();
            props.insert(
                "tags".into(),
                json!([format!("debian/{ch}"), format!("lang/{lang}")]),
            );
            props.insert("aliases".into(), json!([format!("{lang}-{number}")]));
            props.insert("status".into(), json!(STATUSES[i % 3]));
            props.insert("priority".into(), json!((i * 7) % 3 + 1));
            props.insert(
                "due".into(),
                json!(format!("2026-{}-{:02}", 10 + i % 3, 1 + i % 28)),
            );
            props.insert("reviewed".into(), json!(i % 2 == 0));
            n.front(props);
            let text = std::fs::read_to_string(
                corpora
                    .join(format!("debian-reference-{lang}"))
                    .join(ch)
                    .join(name),
            )
            .unwrap();
            for l in plain(&text).lines() {
                n.line(l);
            }
            n.line("");
            n.line("## Related");
            let counterpart = format!("{other}/{ch}/{name}");
            // By path without `.md`, with shown text.
            n.linked(
                format!(
                    "- [[{other}/{ch}/{stem}|{}]]",
                    if lang == "en" {
                        "en español"
                    } else {
                        "in English"
                    }
                ),
                &[("wikilink", Some(&counterpart))],
            );
            if let Some(next) = sections.get(i + 1) {
                let target = format!("{lang}/{}/{}", next.0, next.1);
                let rel = if next.0 == *ch {
                    next.1.clone()
                } else {
                    format!("../{}/{}", next.0, next.1)
                };
                n.linked(
                    format!("- Next: [the next section]({rel})"),
                    &[("markdown", Some(&target))],
                );
            }
            if let Some(topic) = topic_of(ch) {
                let hub = format!("topics/{topic}.md");
                match i % 4 {
                    0 => n.linked(format!("- Topic: [[{topic}]]"), &[("wikilink", Some(&hub))]),
                    1 => {
                        let alias = TOPICS.iter().find(|t| t.0 == topic).unwrap().1;
                        n.linked(
                            format!("- Topic: [[{topic}|{alias}]]"),
                            &[("wikilink", Some(&hub))],
                        )
                    }
                    2 => n.linked(
                        format!(
                            "- Topic: [{topic}](../../topics/{})",
                            topic.replace(' ', "%20") + ".md"
                        ),
                        &[("markdown", Some(&hub))],
                    ),
                    _ => n.linked(
                        format!("- Overview: ![[{topic}#Overview]]"),
                        &[("embed", Some(&hub))],
                    ),
                }
            }
            if i % 5 == 0 {
                let who = PEOPLE[rng.next(PEOPLE.len())].0;
                n.linked(
                    format!("- Asked [{who}](</people/{who}.md>) about it"),
                    &[("markdown", Some(&format!("people/{who}.md")))],
                );
            }
            if i % 6 == 0 {
                n.line(format!(
                    "Reading notes #debian/{ch}/notes and `[[not a link]]`."
                ));
                n.tag(&format!("debian/{ch}/notes"));
            }
            if i % 9 == 4 {
                n.linked(
                    format!("- To do: [[Missing section {i}]]"),
                    &[("wikilink", None)],
                );
            }
            notes.push(n);
        }
    }
    // Topic hubs: every section of their chapters, in every path form.
    for (k, (topic, alias, chapters)) in TOPICS.iter().enumerate() {
        let mut n = Note::new(&format!("topics/{topic}.md"));
        let mut props = Map::new();
        props.insert("tags".into(), json!(["topic", format!("topic/{alias}")]));
        props.insert("aliases".into(), json!([alias]));
        props.insert(
            "owner".into(),
            json!(format!(
                "\"[[{}|{}]]\"",
                PEOPLE[k % PEOPLE.len()].0,
                PEOPLE[k % PEOPLE.len()].1
            )),
        );
        n.front(props);
        // The owner wikilink is on the front matter's owner line.
        let owner_line = n
            .lines
            .iter()
            .position(|l| l.starts_with("owner:"))
            .unwrap() as u64
            + 1;
        n.links.push((
            owner_line,
            "wikilink",
            Some(format!("people/{}.md", PEOPLE[k % PEOPLE.len()].0)),
        ));
        n.line(format!("# {topic}"));
        n.line("");
        n.line("## Overview");
        n.line(format!(
            "The sections of the Debian Reference about {topic}. ^summary"
        ));
        n.line("");
        n.line("## Sections");
        let mut refs = Vec::new();
        for (j, (ch, name)) in sections
            .iter()
            .filter(|s| chapters.contains(&s.0.as_str()))
            .enumerate()
        {
            let stem = name.trim_end_matches(".md");
            let en = format!("en/{ch}/{name}");
            let es = format!("es/{ch}/{name}");
            match j % 4 {
                0 => n.linked(
                    format!("- [[en/{ch}/{stem}]] · [[es/{ch}/{name}]]"),
                    &[("wikilink", Some(&en)), ("wikilink", Some(&es))],
                ),
                1 => n.linked(
                    format!("- [{stem}](../en/{ch}/{name}) · [{stem} (es)](/es/{ch}/{name})"),
                    &[("markdown", Some(&en)), ("markdown", Some(&es))],
                ),
                2 => {
                    let number = stem.split('-').next().unwrap();
                    n.linked(
                        format!("- [[{stem}|en-{number}]] · [[es/{ch}/{stem}#Related|related]]"),
                        &[("wikilink", Some(&en)), ("wikilink", Some(&es))],
                    )
                }
                _ => {
                    let id = format!("r{k}x{j}");
                    n.linked(format!("- [{stem}][{id}]"), &[]);
                    refs.push((id, format!("../en/{ch}/{name}"), en));
                }
            }
        }
        n.line("");
        for (id, dest, to) in refs {
            n.linked(format!("[{id}]: {dest}"), &[("markdown", Some(&to))]);
        }
        if k % 3 == 0 {
            let pic = format!("attachments/diagram-{k}.png");
            n.linked(
                format!("![[diagram-{k}.png|400]]"),
                &[("embed", Some(&pic))],
            );
        }
        if k == 1 {
            n.linked("![[missing-diagram.png]]".into(), &[("embed", None)]);
        }
        n.line("```");
        n.line("[[inside a fence]] #not/a/tag");
        n.line("```");
        notes.push(n);
    }
    // People, named with spaces, known by first name.
    for (who, first) in PEOPLE {
        let mut n = Note::new(&format!("people/{who}.md"));
        let mut props = Map::new();
        props.insert("tags".into(), json!(["person"]));
        props.insert("aliases".into(), json!([first]));
        n.front(props);
        n.line(format!("# {who}"));
        n.linked(
            format!("Maintains [[{}]].", TOPICS[first.len() % TOPICS.len()].0),
            &[(
                "wikilink",
                Some(&format!(
                    "topics/{}.md",
                    TOPICS[first.len() % TOPICS.len()].0
                )),
            )],
        );
        notes.push(n);
    }
    // Daily notes: what was read, who was met, a tag, now and then a
    // block link, a broken link, a link in code.
    for d in 0..92u32 {
        let (month, day) = match d {
            0..31 => (10, d + 1),
            31..61 => (11, d - 30),
            _ => (12, d - 60),
        };
        let mut n = Note::new(&format!("daily/2026-{month:02}-{day:02}.md"));
        n.line(format!("# 2026-{month:02}-{day:02}"));
        let (ch, name) = &sections[rng.next(sections.len())];
        let lang = if d % 2 == 0 { "en" } else { "es" };
        n.linked(
            format!("- Read [[{lang}/{ch}/{}]]", name.trim_end_matches(".md")),
            &[("wikilink", Some(&format!("{lang}/{ch}/{name}")))],
        );
        let (who, first) = PEOPLE[rng.next(PEOPLE.len())];
        if d % 5 == 2 {
            // An alias as the destination: Obsidian resolves no link by it.
            n.linked(
                format!("- Met [[{first}]] #journal/meeting"),
                &[("wikilink", None)],
            );
        } else {
            n.linked(
                format!("- Met [[{who}|{first}]] #journal/meeting"),
                &[("wikilink", Some(&format!("people/{who}.md")))],
            );
        }
        n.tag("journal/meeting");
        if d % 7 == 3 {
            let (topic, ..) = TOPICS[rng.next(TOPICS.len())];
            n.linked(
                format!("- Quote: ![[{topic}#^summary]]"),
                &[("embed", Some(&format!("topics/{topic}.md")))],
            );
        }
        if d % 10 == 5 {
            n.linked(
                format!("- [x](../notes/gone-{d}.md) is gone"),
                &[("markdown", None)],
            );
        }
        if d % 8 == 2 {
            n.line("- `[[code, not a link]]` in passing");
        }
        notes.push(n);
    }
    // The inbox: notes nothing links to.
    for k in 0..5 {
        let mut n = Note::new(&format!("inbox/idea {k}.md"));
        let mut props = Map::new();
        props.insert("tags".into(), json!(["inbox"]));
        props.insert("status".into(), json!("draft"));
        n.front(props);
        n.line(format!("# Idea {k}"));
        n.linked(
            "Could go under [[Programming]].".into(),
            &[("wikilink", Some("topics/Programming.md"))],
        );
        notes.push(n);
    }
    // Write it all, and the truth.
    let mut truth = Truth::default();
    for n in &notes {
        let p = dir.join(&n.path);
        std::fs::create_dir_all(p.parent().unwrap()).unwrap();
        let mut text = n.lines.join("\n");
        text.push('\n');
        std::fs::write(&p, text).unwrap();
        truth.notes.push(n.path.clone());
        for (line, form, to) in &n.links {
            truth.links.push(TrueLink {
                from: n.path.clone(),
                line: *line,
                form,
                to: to.clone(),
            });
        }
        truth.tags.insert(n.path.clone(), n.tags.clone());
        truth.props.insert(n.path.clone(), n.props.clone());
    }
    for k in (0..TOPICS.len()).filter(|k| k % 3 == 0) {
        let p = format!("attachments/diagram-{k}.png");
        std::fs::create_dir_all(dir.join("attachments")).unwrap();
        // A PNG signature and an empty header: a file, not a note.
        std::fs::write(dir.join(&p), b"\x89PNG\r\n\x1a\n").unwrap();
        truth.attachments.push(p);
    }
    truth.notes.sort();
    truth.links.sort();
    truth
}
