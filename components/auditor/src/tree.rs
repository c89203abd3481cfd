//! An artifact as a tree of nodes, read line by line: ATX and setext headings
//! nest by level; list items (`-`, `*`, `+`, `1.`, `1)`) nest by indentation
//! under the nearest heading or item; a paragraph is a run of non-blank lines
//! (a line right after a list item, without a blank line between, continues
//! the item); a fenced code block is one node whose text is never read for
//! citations or links. A YAML front matter block at the top is kept apart.
//! A line ending in ` ^id` gives its node the block id `id`.

#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Kind {
    Heading(u8),
    Item,
    Paragraph,
    Code,
}

impl Kind {
    pub fn name(self) -> &'static str {
        match self {
            Kind::Heading(_) => "heading",
            Kind::Item => "item",
            Kind::Paragraph => "para",
            Kind::Code => "code",
        }
    }
}

#[derive(Clone, Debug)]
pub struct Node {
    pub kind: Kind,
    /// First line, 1-based.
    pub line: u32,
    /// The node's own lines (a heading: its title), without its children.
    pub text: String,
    pub parent: Option<usize>,
    pub children: Vec<usize>,
    pub block_id: Option<String>,
}

#[derive(Debug, Default)]
pub struct Tree {
    pub nodes: Vec<Node>,
    pub front_matter: String,
}

/// Leading indentation in columns (a tab counts 4) and the rest of the line.
fn indent(line: &str) -> (usize, &str) {
    let mut cols = 0;
    for (i, c) in line.char_indices() {
        match c {
            ' ' => cols += 1,
            '\t' => cols += 4,
            _ => return (cols, &line[i..]),
        }
    }
    (cols, "")
}

/// `#`…`######` then a space or the end: (level, title).
fn atx(rest: &str) -> Option<(u8, &str)> {
    let level = rest.bytes().take_while(|&b| b == b'#').count();
    if !(1..=6).contains(&level) {
        return None;
    }
    let after = &rest[level..];
    if !(after.is_empty() || after.starts_with([' ', '\t'])) {
        return None;
    }
    let title = after.trim();
    // Closing hashes are decoration.
    let trimmed = title.trim_end_matches('#');
    let title = if trimmed.is_empty() || trimmed.ends_with([' ', '\t']) {
        trimmed.trim_end()
    } else {
        title
    };
    Some((level as u8, title))
}

/// A list marker: (columns it takes with the spaces after it, the item text).
fn list_marker(rest: &str) -> Option<(usize, &str)> {
    let b = rest.as_bytes();
    let marker = match b.first()? {
        b'-' | b'*' | b'+' => 1,
        b'0'..=b'9' => {
            let d = b.iter().take_while(|c| c.is_ascii_digit()).count();
            if d > 9 || !matches!(b.get(d), Some(b'.' | b')')) {
                return None;
            }
            d + 1
        }
        _ => return None,
    };
    let after = &rest[marker..];
    if after.is_empty() {
        return Some((marker + 1, ""));
    }
    if !after.starts_with([' ', '\t']) {
        return None;
    }
    let spaces = after.len() - after.trim_start().len();
    Some((marker + spaces.clamp(1, 4), after.trim_start()))
}

fn thematic_break(rest: &str) -> bool {
    let t: String = rest.chars().filter(|c| !c.is_whitespace()).collect();
    t.len() >= 3
        && ["-", "*", "_"]
            .iter()
            .any(|m| t.chars().all(|c| c.to_string() == *m))
}

fn fence(rest: &str) -> Option<(char, usize)> {
    let c = rest.chars().next()?;
    if c != '`' && c != '~' {
        return None;
    }
    let n = rest.chars().take_while(|&x| x == c).count();
    (n >= 3).then_some((c, n))
}

/// ` ^id` at the end of a line: (the line without it, the id).
fn block_id(line: &str) -> (&str, Option<String>) {
    let t = line.trim_end();
    if let Some(at) = t.rfind(" ^") {
        let id = &t[at + 2..];
        if !id.is_empty()
            && id
                .chars()
                .all(|c| c.is_ascii_alphanumeric() || c == '-' || c == '_')
        {
            return (&t[..at], Some(id.to_owned()));
        }
    }
    (line, None)
}

struct Builder {
    tree: Tree,
    headings: Vec<usize>,
    /// Open list items: (node, the column their content starts at).
    items: Vec<(usize, usize)>,
    /// The node a following non-blank line continues.
    open: Option<usize>,
}

impl Builder {
    fn add(&mut self, kind: Kind, line: u32, text: &str, parent: Option<usize>) -> usize {
        let (text, id) = block_id(text);
        let idx = self.tree.nodes.len();
        self.tree.nodes.push(Node {
            kind,
            line,
            text: text.to_owned(),
            parent,
            children: vec![],
            block_id: id,
        });
        if let Some(p) = parent {
            self.tree.nodes[p].children.push(idx);
        }
        idx
    }

    /// The node a block starting at column `col` belongs to.
    fn container(&mut self, col: usize) -> Option<usize> {
        while self.items.last().is_some_and(|&(_, content)| col < content) {
            self.items.pop();
        }
        self.items
            .last()
            .map(|&(n, _)| n)
            .or(self.headings.last().copied())
    }

    fn heading(&mut self, level: u8, line: u32, title: &str) -> usize {
        self.items.clear();
        while let Some(&h) = self.headings.last() {
            match self.tree.nodes[h].kind {
                Kind::Heading(l) if l >= level => {
                    self.headings.pop();
                }
                _ => break,
            }
        }
        let parent = self.headings.last().copied();
        let idx = self.add(Kind::Heading(level), line, title, parent);
        self.headings.push(idx);
        idx
    }

    fn append(&mut self, node: usize, text: &str) {
        let (text, id) = block_id(text);
        let n = &mut self.tree.nodes[node];
        n.text.push('\n');
        n.text.push_str(text);
        if id.is_some() {
            n.block_id = id;
        }
    }
}

/// The line that closes a YAML front matter block opened on the first line.
fn front_matter_end(lines: &[&str]) -> Option<usize> {
    if lines.first()?.trim_end() != "---" {
        return None;
    }
    (1..lines.len()).find(|&i| matches!(lines[i].trim_end(), "---" | "..."))
}

/// A setext underline: `===` for level 1, `---` (two or more) for level 2.
fn setext_level(rest: &str) -> Option<u8> {
    let underline = rest.trim_end();
    if !underline.is_empty() && underline.bytes().all(|c| c == b'=') {
        Some(1)
    } else if underline.len() >= 2 && underline.bytes().all(|c| c == b'-') {
        Some(2)
    } else {
        None
    }
}

impl Builder {
    /// A line inside the fenced block `(fence char, fence length, node)`:
    /// part of the code node; the block stays open unless the line closes it.
    fn code_line(
        &mut self,
        (c, len, node): (char, usize, usize),
        line: &str,
    ) -> Option<(char, usize, usize)> {
        let (_, rest) = indent(line);
        let closes = fence(rest).is_some_and(|(fc, fl)| {
            fc == c && fl >= len && rest.trim_start_matches(c).trim().is_empty()
        });
        self.append(node, line);
        (!closes).then_some((c, len, node))
    }

    /// Setext: a paragraph directly under a heading, underlined, becomes a
    /// heading; false when the open node is not such a paragraph.
    fn underline(&mut self, level: u8) -> bool {
        let Some(p) = self.open else {
            return false;
        };
        let node = &self.tree.nodes[p];
        if node.kind != Kind::Paragraph
            || node.parent != self.headings.last().copied()
            || !self.items.is_empty()
        {
            return false;
        }
        // Re-home the paragraph as a heading.
        let (title, line) = (node.text.clone(), node.line);
        if let Some(parent) = node.parent {
            self.tree.nodes[parent].children.retain(|&c| c != p);
        }
        self.tree.nodes.pop();
        self.heading(level, line, title.trim());
        self.open = None;
        true
    }
}

pub fn parse(text: &str) -> Tree {
    let mut b = Builder {
        tree: Tree::default(),
        headings: vec![],
        items: vec![],
        open: None,
    };
    let lines: Vec<&str> = text
        .split('\n')
        .map(|l| l.strip_suffix('\r').unwrap_or(l))
        .collect();
    let count = if text.ends_with('\n') {
        lines.len() - 1
    } else {
        lines.len()
    };
    let mut n = 0;
    if let Some(end) = front_matter_end(&lines[..count]) {
        b.tree.front_matter = lines[1..end].join("\n");
        n = end + 1;
    }
    let mut fenced: Option<(char, usize, usize)> = None;
    let mut prev_blank = true;
    while n < count {
        let line = lines[n];
        let no = n as u32 + 1;
        n += 1;
        if let Some(open) = fenced {
            fenced = b.code_line(open, line);
            continue;
        }
        let (col, rest) = indent(line);
        if rest.is_empty() {
            prev_blank = true;
            b.open = None;
            continue;
        }
        let was_blank = std::mem::replace(&mut prev_blank, false);
        if let Some((c, len)) = fence(rest) {
            let parent = b.container(col);
            let node = b.add(Kind::Code, no, line, parent);
            fenced = Some((c, len, node));
            b.open = None;
            continue;
        }
        if col <= 3 {
            if let Some((level, title)) = atx(rest) {
                b.heading(level, no, title);
                b.open = None;
                continue;
            }
            if let (Some(level), false) = (setext_level(rest), was_blank)
                && b.underline(level)
            {
                continue;
            }
            if thematic_break(rest) {
                b.items.clear();
                b.open = None;
                continue;
            }
        }
        if let Some((width, item)) = list_marker(rest) {
            let parent = b.container(col);
            let node = b.add(Kind::Item, no, item, parent);
            b.items.push((node, col + width));
            b.open = Some(node);
            continue;
        }
        match b.open {
            Some(node) if !was_blank => b.append(node, rest),
            _ => {
                let parent = b.container(col);
                let node = b.add(Kind::Paragraph, no, rest, parent);
                b.open = Some(node);
            }
        }
    }
    b.tree
}

#[cfg(test)]
mod tests {
    use super::*;

    fn shape(text: &str) -> Vec<(String, u32, Option<u32>)> {
        let t = parse(text);
        t.nodes
            .iter()
            .map(|n| {
                let name = match n.kind {
                    Kind::Heading(l) => format!("h{l}"),
                    k => k.name().to_owned(),
                };
                (name, n.line, n.parent.map(|p| t.nodes[p].line))
            })
            .collect()
    }

    #[test]
    fn headings_items_and_paragraphs_nest() {
        let doc = "# Title\n\nIntro\ncontinues\n\n## A\n- one\n  - one.one\n    more of one.one\n- two\n\nafter list\n### A.1\ntext\n## B\n";
        assert_eq!(
            shape(doc),
            vec![
                ("h1".into(), 1, None),
                ("para".into(), 3, Some(1)),
                ("h2".into(), 6, Some(1)),
                ("item".into(), 7, Some(6)),
                ("item".into(), 8, Some(7)),
                ("item".into(), 10, Some(6)),
                ("para".into(), 12, Some(6)),
                ("h3".into(), 13, Some(6)),
                ("para".into(), 14, Some(13)),
                ("h2".into(), 15, Some(1)),
            ]
        );
        let t = parse(doc);
        assert_eq!(t.nodes[1].text, "Intro\ncontinues");
        assert_eq!(t.nodes[4].text, "one.one\nmore of one.one");
    }

    #[test]
    fn fences_front_matter_setext_and_block_ids() {
        let doc = "---\nsource_lines: 1-3\n---\nTitle\n=====\n```\n# not a heading\n- not an item\n```\ntext ^blk\n\n---\n";
        let t = parse(doc);
        assert_eq!(t.front_matter, "source_lines: 1-3");
        assert_eq!(
            shape(doc),
            vec![
                ("h1".into(), 4, None),
                ("code".into(), 6, Some(4)),
                ("para".into(), 10, Some(4))
            ]
        );
        assert_eq!(t.nodes[0].text, "Title");
        assert_eq!(t.nodes[2].block_id.as_deref(), Some("blk"));
        assert_eq!(t.nodes[2].text, "text");
    }

    #[test]
    fn indented_paragraph_after_a_blank_stays_in_its_item() {
        let doc = "- item\n\n  still the item's\nnot the item's\n";
        // "not the item's" continues the paragraph (lazy continuation).
        assert_eq!(
            shape(doc),
            vec![("item".into(), 1, None), ("para".into(), 3, Some(1))]
        );
        let doc = "- item\n\nout of the list\n";
        assert_eq!(
            shape(doc),
            vec![("item".into(), 1, None), ("para".into(), 3, None)]
        );
    }

    #[test]
    fn closing_hashes_and_crlf() {
        let t = parse("## Setup ##\r\nbody\r\n");
        assert_eq!(t.nodes[0].text, "Setup");
        assert_eq!(t.nodes[1].text, "body");
    }
}
