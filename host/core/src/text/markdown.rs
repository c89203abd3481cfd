//! Markdown structure for manuals: headings and the sections they open,
//! found with pulldown-cmark so that `#` inside code fences, HTML blocks or
//! front matter is never taken for a heading.

use pulldown_cmark::{Event, HeadingLevel, Options, Parser, Tag, TagEnd};

use super::Lines;

#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Heading {
    pub level: u8,
    /// The heading's text, without `{#anchor}` attributes or markup.
    pub title: String,
    /// 1-based line where the heading starts.
    pub line: usize,
}

/// A section: a heading (or the preamble before the first heading, level 0)
/// and the lines up to the next heading of any level.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Section {
    pub level: u8,
    pub title: String,
    /// Titles from the outermost enclosing heading down to this one.
    pub path: Vec<String>,
    pub start_line: usize,
    /// Inclusive.
    pub end_line: usize,
}

fn level(l: HeadingLevel) -> u8 {
    match l {
        HeadingLevel::H1 => 1,
        HeadingLevel::H2 => 2,
        HeadingLevel::H3 => 3,
        HeadingLevel::H4 => 4,
        HeadingLevel::H5 => 5,
        HeadingLevel::H6 => 6,
    }
}

/// Every heading of a markdown text, in order.
pub fn headings(text: &str) -> Vec<Heading> {
    let lines = Lines::new(text);
    let opts = Options::ENABLE_HEADING_ATTRIBUTES
        | Options::ENABLE_YAML_STYLE_METADATA_BLOCKS
        | Options::ENABLE_TABLES
        | Options::ENABLE_FOOTNOTES;
    let mut out = Vec::new();
    let mut current: Option<Heading> = None;
    for (event, range) in Parser::new_ext(text, opts).into_offset_iter() {
        match event {
            Event::Start(Tag::Heading { level: l, .. }) => {
                current = Some(Heading {
                    level: level(l),
                    title: String::new(),
                    line: lines.line_of(range.start),
                });
            }
            Event::End(TagEnd::Heading(_)) => {
                if let Some(mut h) = current.take() {
                    h.title = h.title.split_whitespace().collect::<Vec<_>>().join(" ");
                    out.push(h);
                }
            }
            Event::Text(t) | Event::Code(t) | Event::InlineHtml(t) => {
                if let Some(h) = current.as_mut() {
                    h.title.push_str(&t);
                }
            }
            Event::SoftBreak | Event::HardBreak => {
                if let Some(h) = current.as_mut() {
                    h.title.push(' ');
                }
            }
            _ => {}
        }
    }
    out
}

/// The sections of a markdown text. A non-blank preamble before the first
/// heading is a level-0 section with an empty title.
pub fn sections(text: &str) -> Vec<Section> {
    let lines = Lines::new(text);
    let total = lines.count();
    let heads = headings(text);
    let mut out = Vec::new();
    let first = heads.first().map_or(total + 1, |h| h.line);
    if first > 1 && !text[..lines.start(first)].trim().is_empty() {
        out.push(Section {
            level: 0,
            title: String::new(),
            path: vec![],
            start_line: 1,
            end_line: first - 1,
        });
    }
    let mut stack: Vec<(u8, String)> = Vec::new();
    for (i, h) in heads.iter().enumerate() {
        while stack.last().is_some_and(|(l, _)| *l >= h.level) {
            stack.pop();
        }
        stack.push((h.level, h.title.clone()));
        let end = heads.get(i + 1).map_or(total, |n| n.line - 1);
        out.push(Section {
            level: h.level,
            title: h.title.clone(),
            path: stack.iter().map(|(_, t)| t.clone()).collect(),
            start_line: h.line,
            end_line: end.max(h.line),
        });
    }
    out
}

/// A fenced code block of one of the languages asked for.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Fenced {
    /// Its info string's first word, as written (`base`, `tasks`).
    pub language: String,
    /// 1-based line of its opening fence.
    pub line: usize,
    pub text: String,
}

/// The fenced code blocks of `text` whose language is one of `languages`,
/// in order (blocks in blockquotes and lists too, as Obsidian renders
/// them).
pub fn fenced(text: &str, languages: &[&str]) -> Vec<Fenced> {
    use pulldown_cmark::CodeBlockKind;
    let lines = Lines::new(text);
    let mut out = Vec::new();
    let mut open: Option<Fenced> = None;
    for (ev, range) in Parser::new(text).into_offset_iter() {
        match ev {
            Event::Start(Tag::CodeBlock(CodeBlockKind::Fenced(info))) => {
                let language = info.split_whitespace().next().unwrap_or("").to_owned();
                if languages.contains(&language.as_str()) {
                    open = Some(Fenced {
                        language,
                        line: lines.line_of(range.start),
                        text: String::new(),
                    });
                }
            }
            Event::Text(t) => {
                if let Some(b) = open.as_mut() {
                    b.text.push_str(&t);
                }
            }
            Event::End(TagEnd::CodeBlock) => out.extend(open.take()),
            _ => {}
        }
    }
    out
}

#[cfg(test)]
mod tests {
    use super::*;

    const DOC: &str = "intro line\n\n# Title {#top}\n\ntext\n\n```md\n# not a heading\n```\n\n## Sub `code` part\nbody\n\nSetext\n------\nmore\n";

    #[test]
    fn headings_skip_fences_and_strip_anchors() {
        let h = headings(DOC);
        let got: Vec<(u8, &str, usize)> = h
            .iter()
            .map(|h| (h.level, h.title.as_str(), h.line))
            .collect();
        assert_eq!(
            got,
            [(1, "Title", 3), (2, "Sub code part", 11), (2, "Setext", 14)]
        );
    }

    #[test]
    fn sections_cover_the_file_with_heading_paths() {
        let s = sections(DOC);
        let got: Vec<(usize, usize, Vec<&str>)> = s
            .iter()
            .map(|s| {
                (
                    s.start_line,
                    s.end_line,
                    s.path.iter().map(String::as_str).collect(),
                )
            })
            .collect();
        assert_eq!(
            got,
            [
                (1, 2, vec![]),
                (3, 10, vec!["Title"]),
                (11, 13, vec!["Title", "Sub code part"]),
                (14, 16, vec!["Title", "Setext"]),
            ]
        );
    }

    #[test]
    fn front_matter_is_not_a_heading() {
        let doc = "---\ntitle: x\n---\n# Real\n";
        assert_eq!(headings(doc).len(), 1);
        assert_eq!(headings(doc)[0].line, 4);
    }

    #[test]
    fn japanese_headings_keep_their_text() {
        let doc = "# 算出プロパティ {#computed-properties}\n\n## 基本的な例 {#basic-example}\n";
        let h = headings(doc);
        assert_eq!(h[0].title, "算出プロパティ");
        assert_eq!(h[1].title, "基本的な例");
    }
}
