//! What one note says about the web it belongs to, read with pulldown-cmark
//! so that code blocks and inline code carry no links or tags: its links
//! (`[[wikilinks]]`, `![[embeds]]`, markdown links and reference
//! definitions, and wikilinks in front-matter values), its tags (`#tag`,
//! `#a/b`, front-matter `tags`), its aliases, its front matter as
//! properties, its headings and its block ids (`^id`).

use std::ops::Range;

use pulldown_cmark::{Event, LinkType, Options, Parser, Tag, TagEnd};
use regex::Regex;
use serde::{Deserialize, Serialize};
use serde_json::{Map, Value};

use super::destination;
use crate::text::Lines;
use crate::text::front;

/// How a link is written.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Serialize, Deserialize, schemars::JsonSchema)]
#[serde(rename_all = "snake_case")]
pub enum Form {
    /// `[[note]]`, `[[note#heading|shown]]`
    Wikilink,
    /// `![[note]]`, `![[picture.png]]`
    Embed,
    /// `[shown](path/to/note.md)` or a reference definition `[id]: note.md`
    Markdown,
}

/// One link as the index keeps it.
#[derive(Clone, Debug, PartialEq, Eq, Serialize, Deserialize)]
pub struct Link {
    #[serde(rename = "f")]
    pub form: Form,
    /// The path part as written (percent-decoded in a markdown link); ""
    /// for a link to a place in the same note.
    #[serde(rename = "t")]
    pub target: String,
    /// What follows `#`: a heading, or `^id` for a block.
    #[serde(rename = "h", default, skip_serializing_if = "Option::is_none")]
    pub fragment: Option<String>,
    #[serde(rename = "l")]
    pub line: u32,
    /// The line the link is on, trimmed and cut at [`CONTEXT_CHARS`].
    #[serde(rename = "c")]
    pub context: String,
}

/// The characters of a link's line kept as its context.
pub const CONTEXT_CHARS: usize = 160;

/// What the index keeps about a note, in its manifest entry: backlinks,
/// tags and properties are answered from these without reading files.
#[derive(Clone, Debug, Default, PartialEq, Serialize, Deserialize)]
pub struct Facts {
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub links: Vec<Link>,
    /// Without `#`, in order of first appearance, each once (compared
    /// without case, as Obsidian does).
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub tags: Vec<String>,
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub aliases: Vec<String>,
    /// The front matter, as parsed.
    #[serde(default, skip_serializing_if = "Map::is_empty")]
    pub props: Map<String, Value>,
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub headings: Vec<String>,
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub blocks: Vec<String>,
    /// Its tasks ([`super::tasks`]), in order.
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub tasks: Vec<super::tasks::Task>,
    /// Dataview's `key:: value` lines: the note's own fields.
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub fields: Vec<(String, String)>,
}

/// A link where it is written: what a move rewrites.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Occurrence {
    pub form: Form,
    pub target: String,
    pub fragment: Option<String>,
    /// The bytes of the whole link.
    pub span: Range<usize>,
    /// The bytes of the path part as written (empty, at the fragment, for
    /// a link within the note).
    pub path: Range<usize>,
    /// A markdown destination written between `<` and `>`.
    pub angled: bool,
    /// Where a wikilink's path and heading end (at its `|`, or its `]]`).
    pub target_end: usize,
    /// A wikilink's display text, after its `|`.
    pub shown: Option<Range<usize>>,
    /// Written in a table, where a wikilink's `|` is escaped: `\|`.
    pub in_table: bool,
}

fn options() -> Options {
    Options::ENABLE_WIKILINKS
        | Options::ENABLE_YAML_STYLE_METADATA_BLOCKS
        | Options::ENABLE_TABLES
        | Options::ENABLE_FOOTNOTES
        | Options::ENABLE_HEADING_ATTRIBUTES
}

/// A destination with a scheme (`https:`, `mailto:`, `obsidian:`) leaves
/// the vault.
fn is_external(dest: &str) -> bool {
    let scheme = dest.split(':').next().unwrap_or("");
    dest.contains(':')
        && !scheme.is_empty()
        && scheme.len() > 1 // `C:` would be a drive, not a scheme
        && scheme.starts_with(|c: char| c.is_ascii_alphabetic())
        && scheme
            .chars()
            .all(|c| c.is_ascii_alphanumeric() || "+.-".contains(c))
}

/// `path#fragment` split at the first `#`.
fn split_fragment(s: &str) -> (&str, Option<&str>) {
    match s.split_once('#') {
        Some((p, f)) => (p, Some(f)),
        None => (s, None),
    }
}

/// A wikilink's occurrence from its whole span `[[...]]` or `![[...]]`.
fn wikilink(text: &str, span: Range<usize>, embed: bool, in_table: bool) -> Option<Occurrence> {
    let open = span.start + if embed { 3 } else { 2 };
    let close = span.end.checked_sub(2)?;
    let inner = text.get(open..close)?;
    let target_part = inner.split('|').next().unwrap_or(inner);
    let shown = (target_part.len() < inner.len()).then(|| open + target_part.len() + 1..close);
    // In a table the pipe is escaped: `[[note\|shown]]`.
    let target_part = target_part.strip_suffix('\\').unwrap_or(target_part);
    let (path, fragment) = split_fragment(target_part);
    let lead = path.len() - path.trim_start().len();
    let target = path.trim();
    Some(Occurrence {
        form: if embed { Form::Embed } else { Form::Wikilink },
        target: target.to_owned(),
        fragment: fragment.map(|f| f.trim().to_owned()),
        span,
        path: open + lead..open + lead + target.len(),
        angled: false,
        target_end: open + target_part.len(),
        shown,
        in_table,
    })
}

/// A markdown destination's occurrence: `raw` the bytes it is written
/// with (found by [`destination`]), `dest` what the parser decoded them to.
fn markdown(
    text: &str,
    span: Range<usize>,
    found: Option<(Range<usize>, bool)>,
    dest: &str,
) -> Option<Occurrence> {
    if dest.is_empty() || is_external(dest) {
        return None;
    }
    let (raw, angled) = found?;
    if !destination::spells(&text[raw.clone()], dest) {
        tracing::debug!(
            dest,
            "a link destination written in a way kura does not follow"
        );
        return None;
    }
    let (path, fragment) = split_fragment(dest);
    let decoded = percent_encoding::percent_decode_str(path)
        .decode_utf8()
        .map(|c| c.into_owned())
        .unwrap_or_else(|_| path.to_owned());
    let at = raw.start;
    Some(Occurrence {
        form: Form::Markdown,
        target: decoded,
        fragment: fragment.map(|f| {
            percent_encoding::percent_decode_str(f)
                .decode_utf8_lossy()
                .into_owned()
        }),
        path: at..at + destination::path_end(&text[raw.clone()]),
        target_end: raw.end,
        span,
        angled,
        shown: None,
        in_table: false,
    })
}

/// An inline link or image the parser has opened and not yet closed.
struct Open<'a> {
    span: Range<usize>,
    dest: pulldown_cmark::CowStr<'a>,
    inline: bool,
    /// Where its text ends so far: the end of its last inner event.
    text_end: usize,
}

fn wikilink_in_yaml() -> &'static Regex {
    static RE: std::sync::OnceLock<Regex> = std::sync::OnceLock::new();
    RE.get_or_init(|| Regex::new(r"(!?)\[\[([^\[\]\n]+)\]\]").expect("a valid pattern"))
}

pub(crate) fn tag_pattern() -> &'static Regex {
    static RE: std::sync::OnceLock<Regex> = std::sync::OnceLock::new();
    // Letters, digits, `_`, `-` and `/` (nesting); not only digits.
    RE.get_or_init(|| {
        Regex::new(r"(?:^|[\s(,;])#([\p{L}\p{N}_\-/]*[\p{L}_\-][\p{L}\p{N}_\-/]*)")
            .expect("a valid pattern")
    })
}

fn block_pattern() -> &'static Regex {
    static RE: std::sync::OnceLock<Regex> = std::sync::OnceLock::new();
    RE.get_or_init(|| Regex::new(r"(?:^|\s)\^([A-Za-z0-9-]+)\s*$").expect("a valid pattern"))
}

/// Every link of a note, in order, where it is written.
pub fn occurrences(text: &str) -> Vec<Occurrence> {
    Scan::of(text).occurrences
}

/// Where the pass over a note's events stands: inside how many code
/// blocks and links, the heading being read, the links open.
#[derive(Default)]
struct Pass<'a> {
    code: usize,
    /// A link's shown text carries no tags (`[[#Heading]]`).
    link: usize,
    /// Inside a table: a wikilink's `|` is written `\|` there.
    table: usize,
    heading: Option<String>,
    opened: Vec<Open<'a>>,
}

/// What one pass over a note finds.
struct Scan {
    occurrences: Vec<Occurrence>,
    tags: Vec<String>,
    headings: Vec<String>,
    blocks: Vec<String>,
    props: Map<String, Value>,
}

impl Scan {
    fn of(text: &str) -> Scan {
        let split = front::split(text);
        let mut scan = Scan {
            occurrences: Vec::new(),
            tags: Vec::new(),
            headings: Vec::new(),
            blocks: Vec::new(),
            props: split.front.unwrap_or_default(),
        };
        // Wikilinks in front-matter values (`related: "[[note]]"`).
        for m in wikilink_in_yaml().captures_iter(split.front_raw) {
            let whole = m.get(0).expect("group 0");
            let embed = !m[1].is_empty();
            if let Some(o) = wikilink(text, whole.range(), embed, false) {
                scan.occurrences.push(o);
            }
        }
        let parser = Parser::new_ext(text, options());
        let defs: Vec<(Range<usize>, String)> = parser
            .reference_definitions()
            .iter()
            .map(|(_, d)| (d.span.clone(), d.dest.to_string()))
            .collect();
        let mut pass = Pass::default();
        for (event, range) in parser.into_offset_iter() {
            scan.step(&mut pass, text, event, range);
        }
        for (span, dest) in defs {
            let found = destination::definition(text, span.clone());
            scan.occurrences.extend(markdown(text, span, found, &dest));
        }
        // By where the path is written: an image inside a link has its
        // path before the link's, and a rewrite copies the text between.
        scan.occurrences.sort_by_key(|o| o.path.start);
        scan
    }

    /// One event of the pass over `text`.
    fn step<'a>(&mut self, pass: &mut Pass<'a>, text: &str, event: Event<'a>, range: Range<usize>) {
        if !matches!(event, Event::End(TagEnd::Link | TagEnd::Image)) {
            for o in &mut pass.opened {
                o.text_end = o.text_end.max(range.end);
            }
        }
        match event {
            Event::Start(Tag::CodeBlock(_) | Tag::MetadataBlock(_)) => pass.code += 1,
            Event::End(TagEnd::CodeBlock | TagEnd::MetadataBlock(_)) => {
                pass.code = pass.code.saturating_sub(1)
            }
            Event::Start(Tag::Table(_)) => pass.table += 1,
            Event::End(TagEnd::Table) => pass.table = pass.table.saturating_sub(1),
            Event::Start(Tag::Heading { .. }) => pass.heading = Some(String::new()),
            Event::End(TagEnd::Heading(_)) => {
                if let Some(h) = pass.heading.take() {
                    self.headings
                        .push(h.split_whitespace().collect::<Vec<_>>().join(" "));
                }
            }
            Event::Start(Tag::Link {
                link_type,
                dest_url,
                ..
            })
            | Event::Start(Tag::Image {
                link_type,
                dest_url,
                ..
            }) => {
                let embed = text[range.clone()].starts_with('!');
                if let LinkType::WikiLink { .. } = link_type {
                    self.occurrences
                        .extend(wikilink(text, range.clone(), embed, pass.table > 0));
                }
                pass.opened.push(Open {
                    text_end: range.start + if embed { 2 } else { 1 },
                    span: range,
                    dest: dest_url,
                    // Reference links: their definitions are the links.
                    inline: link_type == LinkType::Inline,
                });
                pass.link += 1;
            }
            Event::End(TagEnd::Link | TagEnd::Image) => {
                pass.link = pass.link.saturating_sub(1);
                if let Some(o) = pass.opened.pop() {
                    if o.inline {
                        let found = destination::inline(text, o.text_end, o.span.end);
                        self.occurrences
                            .extend(markdown(text, o.span.clone(), found, &o.dest));
                    }
                    // An image inside a link is part of the link's text.
                    for outer in &mut pass.opened {
                        outer.text_end = outer.text_end.max(o.span.end);
                    }
                }
            }
            Event::Text(t) if pass.code == 0 => {
                if let Some(h) = pass.heading.as_mut() {
                    h.push_str(&t);
                }
                if pass.link == 0 {
                    self.tags_in(&t);
                }
                if let Some(b) = block_pattern().captures(&t) {
                    self.blocks.push(b[1].to_owned());
                }
            }
            Event::Code(t) => {
                if let Some(h) = pass.heading.as_mut() {
                    h.push_str(&t);
                }
            }
            _ => {}
        }
    }

    fn tags_in(&mut self, text: &str) {
        for m in tag_pattern().captures_iter(text) {
            self.add_tag(&m[1]);
        }
    }

    fn add_tag(&mut self, tag: &str) {
        let tag = tag.trim().trim_start_matches('#').trim_matches('/');
        if tag.is_empty() || tag.chars().all(|c| c.is_ascii_digit()) {
            return;
        }
        if !self
            .tags
            .iter()
            .any(|t| t.to_lowercase() == tag.to_lowercase())
        {
            self.tags.push(tag.to_owned());
        }
    }
}

/// A front-matter value as a list of strings: a list, or one string split
/// at commas (Obsidian accepts `tags: a, b`).
fn strings(v: &Value) -> Vec<String> {
    match v {
        Value::Array(items) => items
            .iter()
            .filter_map(|i| match i {
                Value::String(s) => Some(s.clone()),
                Value::Number(n) => Some(n.to_string()),
                _ => None,
            })
            .collect(),
        Value::String(s) => s
            .split(',')
            .map(str::trim)
            .filter(|s| !s.is_empty())
            .map(str::to_owned)
            .collect(),
        _ => Vec::new(),
    }
}

/// The first of `keys` the front matter has.
fn first_of<'a>(props: &'a Map<String, Value>, keys: &[&str]) -> Option<&'a Value> {
    keys.iter().find_map(|k| props.get(*k))
}

impl Facts {
    /// Read a note's facts from its text.
    pub fn of(text: &str) -> Facts {
        let mut scan = Scan::of(text);
        let lines = Lines::new(text);
        let mut tags = Vec::new();
        if let Some(v) = first_of(&scan.props, &["tags", "tag"]) {
            // `tags: a b` is one string with spaces in YAML; Obsidian
            // reads it as two tags.
            for s in strings(v) {
                tags.extend(s.split_whitespace().map(str::to_owned));
            }
        }
        let body_tags = std::mem::take(&mut scan.tags);
        for t in tags.iter().chain(&body_tags) {
            scan.add_tag(t);
        }
        let aliases = first_of(&scan.props, &["aliases", "alias"])
            .map(strings)
            .unwrap_or_default();
        let links = scan
            .occurrences
            .iter()
            .map(|o| {
                let line = lines.line_of(o.span.start);
                Link {
                    form: o.form,
                    target: o.target.clone(),
                    fragment: o.fragment.clone().filter(|f| !f.is_empty()),
                    line: line as u32,
                    context: context(lines.line(line)),
                }
            })
            .collect();
        Facts {
            links,
            tags: scan.tags,
            aliases,
            props: scan.props,
            headings: scan.headings,
            blocks: scan.blocks,
            tasks: super::tasks::tasks(text),
            fields: super::tasks::note_fields(text),
        }
    }

    /// The facts kept in a manifest entry (default when there are none).
    pub fn kept(meta: Option<&serde_json::value::RawValue>) -> Facts {
        meta.and_then(|m| serde_json::from_str(m.get()).ok())
            .unwrap_or_default()
    }
}

fn context(line: &str) -> String {
    let t = line.trim();
    if t.chars().count() <= CONTEXT_CHARS {
        return t.to_owned();
    }
    let mut s: String = t.chars().take(CONTEXT_CHARS - 1).collect();
    s.push('…');
    s
}

#[cfg(test)]
mod tests {
    use super::*;

    const NOTE: &str = "---\ntags: [project/x, Draft]\naliases: Alpha, The First\nstatus: done\ndue: 2026-12-01\nrelated: \"[[Other]]\"\n---\n# Title #inline\nSee [[Note A#Head|shown **x**]] and ![[img.png|100]] and [[a/b/c]] [[Note#^blk]] [[#Local]].\n[md](My%20Note.md#sec) [md2](<My Note.md>) [ext](https://x.y) `[[code]]` #tag #a/b #123 C#sharp\n\n```\n[[fenced]] #nottag\n```\n\n    [[indented]] #nottag2\n\nA paragraph ^para-1\n\n[ref]: ../up/Ref%20Note.md\n";

    #[test]
    fn every_link_form_is_found_and_code_carries_none() {
        let f = Facts::of(NOTE);
        let got: Vec<(Form, &str, Option<&str>, u32)> = f
            .links
            .iter()
            .map(|l| (l.form, l.target.as_str(), l.fragment.as_deref(), l.line))
            .collect();
        assert_eq!(
            got,
            [
                (Form::Wikilink, "Other", None, 6),
                (Form::Wikilink, "Note A", Some("Head"), 9),
                (Form::Embed, "img.png", None, 9),
                (Form::Wikilink, "a/b/c", None, 9),
                (Form::Wikilink, "Note", Some("^blk"), 9),
                (Form::Wikilink, "", Some("Local"), 9),
                (Form::Markdown, "My Note.md", Some("sec"), 10),
                (Form::Markdown, "My Note.md", None, 10),
                (Form::Markdown, "../up/Ref Note.md", None, 20),
            ]
        );
        assert!(f.links[1].context.starts_with("See [[Note A#Head"));
    }

    #[test]
    fn tags_come_from_the_front_matter_and_the_text_but_not_code() {
        let f = Facts::of(NOTE);
        assert_eq!(f.tags, ["project/x", "Draft", "inline", "tag", "a/b"]);
        assert_eq!(f.aliases, ["Alpha", "The First"]);
        assert_eq!(f.props["status"], "done");
        assert_eq!(f.headings, ["Title #inline"]);
        assert_eq!(f.blocks, ["para-1"]);
    }

    #[test]
    fn the_path_range_is_what_a_move_rewrites() {
        for o in occurrences(NOTE) {
            let written = &NOTE[o.path.clone()];
            match o.form {
                Form::Markdown if !o.angled => assert_eq!(
                    percent_encoding::percent_decode_str(written).decode_utf8_lossy(),
                    o.target
                ),
                _ => assert_eq!(written, o.target),
            }
            assert!(o.span.start <= o.path.start && o.path.end <= o.span.end);
        }
    }

    #[test]
    fn a_table_cell_s_escaped_pipe_is_not_part_of_the_target() {
        let o = occurrences("| a | [[Note\\|shown]] |\n|---|---|\n");
        assert_eq!(o.len(), 1);
        assert_eq!(o[0].target, "Note");
    }

    #[test]
    fn escaped_and_entity_destinations_are_links() {
        let t = "[x](Plan\\_v2.md) [y](A&amp;B.md#h) [z](<a\\>b.md>) [![i](p.png)](q.md)\n";
        let o = occurrences(t);
        let got: Vec<(&str, &str)> = o
            .iter()
            .map(|o| (o.target.as_str(), &t[o.path.clone()]))
            .collect();
        assert_eq!(
            got,
            [
                ("Plan_v2.md", "Plan\\_v2.md"),
                ("A&B.md", "A&amp;B.md"),
                ("a>b.md", "a\\>b.md"),
                ("p.png", "p.png"),
                ("q.md", "q.md"),
            ]
        );
    }

    #[test]
    fn a_title_is_never_taken_for_the_destination() {
        let t = "[Draft.md](Draft.md \"Draft.md\")\n\n[r]: Draft.md 'Draft.md'\n";
        let o = occurrences(t);
        assert_eq!(o.len(), 2);
        for o in o {
            assert_eq!(&t[o.path.clone()], "Draft.md");
            let before = &t[o.span.start..o.path.start];
            assert!(
                !before.contains("Draft.md \"") && !before.contains(": Draft"),
                "{before:?}"
            );
            assert!(
                before.ends_with('(') || before.ends_with(": "),
                "{before:?}"
            );
        }
    }

    #[test]
    fn kept_facts_round_trip_through_json() {
        let f = Facts::of(NOTE);
        let v = serde_json::value::to_raw_value(&f).unwrap();
        assert_eq!(Facts::kept(Some(&v)), f);
        assert_eq!(Facts::kept(None), Facts::default());
    }

    #[test]
    fn external_destinations_are_not_links() {
        for d in ["https://a.b", "mailto:x@y", "obsidian://open?x"] {
            assert!(is_external(d), "{d}");
        }
        for d in ["note.md", "C:/x.md", "../a b.md", "#heading"] {
            assert!(!is_external(d), "{d}");
        }
    }
}
