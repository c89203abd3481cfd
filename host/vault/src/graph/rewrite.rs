//! The links a move rewrites, and how: every link that pointed to a file
//! must point to the same file (at its new path) afterwards, written in its
//! own form. A wikilink written as a bare name gets the shortest name that
//! is unique after the move, one written as a path gets the new path (with
//! `.md` if it had it); a markdown link gets the path relative to its note
//! (from the vault's top if it began with `/`), `%20` for spaces unless it
//! was written between `<` and `>`. Headings, block ids, shown text and
//! the `!` of an embed are kept: only the path part of a link changes, but
//! for what a reader sees. A renamed file's wikilink without display text
//! gets the link as it was written as its display text (`[[Aliases]]` →
//! `[[Note aliases|Aliases]]`, `\|` in a table), so that the sentence it
//! is in reads as it did; display text that is then the link itself goes
//! (`[[Draft|Draft]]` → `[[Draft]]`, the rename undone).

use super::facts::{Form, Occurrence, occurrences};
use super::resolve::{Names, parent};

/// The vault's files before and after a move, and where each file goes.
pub struct Move<'a> {
    pub before: &'a Names,
    pub after: &'a Names,
    /// A file's path after the move (itself when it does not move).
    pub to: &'a dyn Fn(&str) -> String,
}

/// The characters a markdown destination cannot hold as they are: what
/// CommonMark would read otherwise (a space or parenthesis ends it, `\\`
/// escapes, `&name;` is an entity) or what kura would (`%`, `#`, `^`).
fn encode(path: &str) -> String {
    let mut out = String::with_capacity(path.len());
    for (i, c) in path.char_indices() {
        match c {
            ' ' => out.push_str("%20"),
            '%' => out.push_str("%25"),
            '(' => out.push_str("%28"),
            ')' => out.push_str("%29"),
            '<' => out.push_str("%3C"),
            '>' => out.push_str("%3E"),
            '#' => out.push_str("%23"),
            '^' => out.push_str("%5E"),
            '\\' => out.push_str("%5C"),
            '&' if looks_like_entity(&path[i..]) => out.push_str("%26"),
            c => out.push(c),
        }
    }
    out
}

/// `&name;` or `&#...;` at the start of `s`.
fn looks_like_entity(s: &str) -> bool {
    let rest = &s[1..];
    let n = rest
        .bytes()
        .take_while(|b| b.is_ascii_alphanumeric() || *b == b'#')
        .count();
    n > 0 && rest.as_bytes().get(n) == Some(&b';')
}

/// A path written between `<` and `>`: only those and `\\` are escaped.
fn encode_angled(path: &str) -> String {
    let mut out = String::with_capacity(path.len());
    for c in path.chars() {
        if matches!(c, '<' | '>' | '\\') {
            out.push('\\');
        }
        out.push(c);
    }
    out
}

/// `to` relative to folder `dir`.
fn relative(dir: &str, to: &str) -> String {
    let a: Vec<&str> = dir.split('/').filter(|s| !s.is_empty()).collect();
    let b: Vec<&str> = to.split('/').collect();
    let common = a.iter().zip(&b).take_while(|(x, y)| x == y).count();
    let mut parts: Vec<&str> = vec![".."; a.len() - common];
    parts.extend(&b[common..]);
    parts.join("/")
}

/// A file's name as a link shows it: its last segment, without `.md`.
fn name_of(target: &str) -> String {
    let last = target.rsplit('/').next().unwrap_or(target).to_lowercase();
    last.strip_suffix(".md").map(str::to_owned).unwrap_or(last)
}

/// The display text of wikilink `o` whose path is now `written` (the text
/// copied up to `copied`): the link as it was written when it had none and
/// its file's name changed, none when it is the link itself. Returns where
/// the copy goes on.
fn shown(text: &str, o: &Occurrence, written: &str, copied: usize, out: &mut String) -> usize {
    let rest = &text[o.path.end..o.target_end];
    match &o.shown {
        None if name_of(&o.target) != name_of(written) => {
            out.push_str(rest);
            out.push_str(if o.in_table { "\\|" } else { "|" });
            // As Obsidian shows a link to a heading or block: `Note > Part`.
            out.push_str(&text[o.path.start..o.target_end].replace('#', " > "));
            o.target_end
        }
        Some(s) if text[s.clone()] == format!("{written}{rest}").replace('#', " > ") => {
            out.push_str(rest);
            s.end
        }
        _ => copied,
    }
}

fn has_md(target: &str) -> bool {
    target.to_lowercase().ends_with(".md")
}

impl Move<'_> {
    /// How link `o`, written in the note now at `note` (after the move),
    /// writes file `want` (after the move); None when no way resolves back.
    fn write(&self, note: &str, o: &Occurrence, want: usize) -> Option<String> {
        let path = self.after.path(want);
        let keep_md = |p: &str| {
            if has_md(&o.target) || !has_md(p) {
                p.to_owned()
            } else {
                p[..p.len() - 3].to_owned()
            }
        };
        let candidates: Vec<String> = match o.form {
            Form::Wikilink | Form::Embed => {
                let short = self.after.shortest(note, want);
                let short = if has_md(&o.target) && has_md(path) && !has_md(&short) {
                    format!("{short}.md")
                } else {
                    short
                };
                if o.target.starts_with("./") || o.target.starts_with("../") {
                    let r = keep_md(&relative(parent(note), path));
                    let r = if r.starts_with("../") {
                        r
                    } else {
                        format!("./{r}")
                    };
                    vec![r, keep_md(path)]
                } else if o.target.contains('/') {
                    vec![keep_md(path), short]
                } else {
                    vec![short, keep_md(path)]
                }
            }
            Form::Markdown => {
                let written = if o.target.starts_with('/') {
                    format!("/{}", keep_md(path))
                } else {
                    let r = keep_md(&relative(parent(note), path));
                    if o.target.starts_with("./") && !r.starts_with("../") {
                        format!("./{r}")
                    } else {
                        r
                    }
                };
                vec![written]
            }
        };
        candidates
            .into_iter()
            .find(|c| self.after.resolve(note, c, o.form) == Some(want))
            .map(|c| match o.form {
                Form::Markdown if o.angled => encode_angled(&c),
                Form::Markdown => encode(&c),
                _ => c,
            })
    }

    /// The text of the note at `was` (now at `(self.to)(was)`) with every
    /// link whose file moved or whose resolution the move would change
    /// rewritten; None when no link needs it. `Err(target)`: a link that
    /// cannot be written so as to keep its file.
    pub fn rewrite(&self, was: &str, text: &str) -> Result<Option<(String, u64)>, String> {
        let now = (self.to)(was);
        let mut out = String::with_capacity(text.len() + 64);
        let mut copied = 0;
        let mut n = 0;
        for o in occurrences(text) {
            if o.target.is_empty() {
                continue; // a place in the note itself goes with it
            }
            let Some(b) = self.before.resolve(was, &o.target, o.form) else {
                continue; // pointed nowhere; the move does not mend it
            };
            let Some(want) = self.after.find(&(self.to)(self.before.path(b))) else {
                return Err(o.target.clone());
            };
            if self.after.resolve(&now, &o.target, o.form) == Some(want) {
                continue;
            }
            let written = self.write(&now, &o, want).ok_or_else(|| o.target.clone())?;
            out.push_str(&text[copied..o.path.start]);
            out.push_str(&written);
            copied = o.path.end;
            if o.form == Form::Wikilink {
                copied = shown(text, &o, &written, copied, &mut out);
            }
            n += 1;
        }
        if n == 0 {
            return Ok(None);
        }
        out.push_str(&text[copied..]);
        Ok(Some((out, n)))
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn names(paths: &[&str]) -> Names {
        let mut p: Vec<String> = paths.iter().map(|s| s.to_string()).collect();
        p.sort();
        Names::new(p)
    }

    fn moved(before: &[&str], from: &str, to: &str, note: &str, text: &str) -> String {
        let b = names(before);
        let after: Vec<String> = before
            .iter()
            .map(|p| {
                if *p == from {
                    to.to_owned()
                } else {
                    p.to_string()
                }
            })
            .collect();
        let after_refs: Vec<&str> = after.iter().map(String::as_str).collect();
        let a = names(&after_refs);
        let map = |p: &str| {
            if p == from {
                to.to_owned()
            } else {
                p.to_owned()
            }
        };
        let m = Move {
            before: &b,
            after: &a,
            to: &map,
        };
        match m.rewrite(note, text).unwrap() {
            Some((t, _)) => t,
            None => text.to_owned(),
        }
    }

    const VAULT: &[&str] = &["Home.md", "a/Old Name.md", "b/Other.md", "img/pic.png"];

    #[test]
    fn each_link_keeps_its_form() {
        let text = "[[Old Name]] [[Old Name#Part|shown]] ![[Old Name#^blk]] [[a/Old Name]] [[Old Name.md]]\n[x](a/Old%20Name.md#Part) [y](<a/Old Name.md>) [z](/a/Old%20Name.md) [[Other]]\n";
        let got = moved(VAULT, "a/Old Name.md", "c/New Name.md", "Home.md", text);
        assert_eq!(
            got,
            "[[New Name|Old Name]] [[New Name#Part|shown]] ![[New Name#^blk]] [[c/New Name|a/Old Name]] [[New Name.md|Old Name.md]]\n[x](c/New%20Name.md#Part) [y](<c/New Name.md>) [z](/c/New%20Name.md) [[Other]]\n"
        );
    }

    /// The issue's case from Obsidian's help vault: `Aliases.md` renamed
    /// `Note aliases.md`. A sentence reads as it did; in a table the
    /// display text's `|` is escaped; moved back, the links are as written.
    #[test]
    fn a_renamed_file_s_bare_wikilinks_keep_what_the_reader_sees() {
        let vault = ["Aliases.md", "Home.md", "people/Ada.md"];
        let text = "Add [[Aliases]] to a note, or [[Aliases#Add an alias|one]]; ![[Aliases]]; [[Aliases#Intro]].\n\n| page | link |\n| --- | --- |\n| x | [[Aliases]] |\n| y | [[Aliases\\|shown]] |\n";
        let got = moved(&vault, "Aliases.md", "Note aliases.md", "Home.md", text);
        assert_eq!(
            got,
            "Add [[Note aliases|Aliases]] to a note, or [[Note aliases#Add an alias|one]]; ![[Note aliases]]; [[Note aliases#Intro|Aliases > Intro]].\n\n| page | link |\n| --- | --- |\n| x | [[Note aliases\\|Aliases]] |\n| y | [[Note aliases\\|shown]] |\n"
        );
        let after = ["Home.md", "Note aliases.md", "people/Ada.md"];
        let back = moved(&after, "Note aliases.md", "Aliases.md", "Home.md", &got);
        assert_eq!(back, text);
        // Moved, not renamed: what the reader sees is the name, unchanged.
        let got = moved(
            &vault,
            "people/Ada.md",
            "team/Ada.md",
            "Home.md",
            "[[people/Ada]] [[Ada]]\n",
        );
        assert_eq!(got, "[[team/Ada]] [[Ada]]\n");
    }

    #[test]
    fn a_moved_note_s_relative_links_follow_it() {
        let text = "[o](../b/Other.md) [[Other]] [p](../img/pic.png) [[#Part]]\n";
        let got = moved(
            VAULT,
            "a/Old Name.md",
            "deep/er/Old Name.md",
            "a/Old Name.md",
            text,
        );
        assert_eq!(
            got,
            "[o](../../b/Other.md) [[Other]] [p](../../img/pic.png) [[#Part]]\n"
        );
    }

    #[test]
    fn a_name_that_becomes_ambiguous_gets_a_path() {
        let text = "[[Other]]\n";
        let got = moved(VAULT, "a/Old Name.md", "a/Other.md", "Home.md", text);
        assert_eq!(
            got, "[[b/Other]]\n",
            "a/Other.md would now be nearer by tie-break"
        );
    }

    #[test]
    fn links_that_pointed_nowhere_or_elsewhere_are_left_alone() {
        let text = "[[Nowhere]] [[Other]] `[[Old Name]]` [ext](https://x.y/Old%20Name.md)\n";
        let got = moved(VAULT, "a/Old Name.md", "c/New.md", "Home.md", text);
        assert_eq!(got, text);
    }

    #[test]
    fn an_attachment_s_embeds_follow_it() {
        let got = moved(
            VAULT,
            "img/pic.png",
            "media/photo.png",
            "b/Other.md",
            "![[pic.png|200]] [i](../img/pic.png)\n",
        );
        assert_eq!(got, "![[photo.png|200]] [i](../media/photo.png)\n");
    }

    #[test]
    fn a_link_s_title_is_never_taken_for_its_destination() {
        let text = "[see](Draft.md \"Draft.md\") [t](<Draft.md> 'Draft.md')\n\n[r]: Draft.md \"Draft.md\"\n";
        let got = moved(
            &["Draft.md", "Home.md"],
            "Draft.md",
            "Final.md",
            "Home.md",
            text,
        );
        assert_eq!(
            got,
            "[see](Final.md \"Draft.md\") [t](<Final.md> 'Draft.md')\n\n[r]: Final.md \"Draft.md\"\n"
        );
    }

    #[test]
    fn escaped_and_entity_destinations_are_rewritten_too() {
        let text = "[x](Plan\\_v2.md) [y](A&amp;B.md)\n";
        let before = ["A&B.md", "Home.md", "Plan_v2.md"];
        let got = moved(&before, "Plan_v2.md", "done/Plan_v3.md", "Home.md", text);
        assert_eq!(got, "[x](done/Plan_v3.md) [y](A&amp;B.md)\n");
        let got = moved(&before, "A&B.md", "C&D.md", "Home.md", text);
        assert_eq!(got, "[x](Plan\\_v2.md) [y](C&D.md)\n");
    }

    #[test]
    fn a_rooted_markdown_link_follows_the_top_level_note() {
        let vault = ["docs/a.md", "x/Note.md", "x/docs/a.md"];
        let text = "[t](/docs/a.md)\n";
        let got = moved(&vault, "docs/a.md", "docs/b.md", "x/Note.md", text);
        assert_eq!(got, "[t](/docs/b.md)\n");
        // The note's neighbour of the same name is not what it named.
        let got = moved(&vault, "x/docs/a.md", "x/docs/c.md", "x/Note.md", text);
        assert_eq!(got, text);
    }

    #[test]
    fn destinations_are_encoded_as_markdown_needs() {
        assert_eq!(encode("a b/(c)%.md"), "a%20b/%28c%29%25.md");
        assert_eq!(encode("A&B.md &amp;.md"), "A&B.md%20%26amp;.md");
        assert_eq!(encode_angled("a<b>\\c.md"), "a\\<b\\>\\\\c.md");
        assert_eq!(relative("a/b", "a/c/d.md"), "../c/d.md");
        assert_eq!(relative("", "x.md"), "x.md");
        assert_eq!(relative("a", "a/x.md"), "x.md");
    }

    mod model {
        //! Generated notes with links in every form: a move and its reverse
        //! give back the bytes, a move changes nothing but destinations,
        //! and every link that resolved still resolves to the same file.

        use super::*;
        use proptest::prelude::*;

        const FILES: &[&str] = &[
            "Draft.md",
            "Home.md",
            "a/b/Deep.md",
            "img/p.png",
            "notes/Plan v2.md",
            "Plan_v2.md",
            "A&B.md",
        ];

        /// Pieces of a note: links in each form, and text that only looks
        /// like links (code, a fence, a comment, a bare name).
        fn piece() -> impl Strategy<Value = &'static str> {
            prop::sample::select(vec![
                "[[Draft]]",
                "[[Draft#Head|shown]]",
                "![[p.png]]",
                "![[Draft#^blk]]",
                "[[notes/Plan v2]]",
                "[[Deep]]",
                "[[Deep|an alias]]",
                "[x](Plan\\_v2.md)",
                "[x](A&amp;B.md)",
                "[x](Dr&#97;ft.md \"Dr&#97;ft.md\")",
                "[[A&B]]",
                "[t](Draft.md \"Draft.md\")",
                "[t](<notes/Plan v2.md>)",
                "[t](notes/Plan%20v2.md#h)",
                "[t](/a/b/Deep.md)",
                "[t](a/b/Deep.md 'a/b/Deep.md')",
                "[![i](img/p.png)](Draft.md)",
                "\n\n[r1]: Draft.md \"Draft.md\"\n\n",
                "\n\n[r2]: <a/b/Deep.md>\n\n",
                "`[[Draft]]`",
                "\n\n```\n[[Draft]] [x](Draft.md)\n```\n\n",
                "<!-- [[Draft]] -->",
                "Draft.md",
                " ",
                "\n",
                "# Draft\n",
            ])
        }

        /// Front matter (with a link in a property) or none, then pieces.
        fn note() -> impl Strategy<Value = String> {
            let front =
                prop::sample::select(vec!["", "---\nrelated: \"[[Draft]]\"\ntags: [x]\n---\n"]);
            (front, prop::collection::vec(piece(), 1..12))
                .prop_map(|(f, p)| f.to_owned() + &p.concat())
        }

        fn moves() -> impl Strategy<Value = (&'static str, &'static str)> {
            prop::sample::select(vec![
                ("Draft.md", "x/Final.md"),
                ("a/b/Deep.md", "Deep2.md"),
                ("notes/Plan v2.md", "Plan (v3).md"),
                ("img/p.png", "media/p 2.png"),
                ("Plan_v2.md", "sub/Plan_v3.md"),
                ("A&B.md", "C&D (x).md"),
            ])
        }

        /// The text with every link destination's bytes taken out (and a
        /// wikilink's display text, which a rename may add or drop).
        fn without_destinations(text: &str) -> String {
            let mut out = String::new();
            let mut at = 0;
            for o in occurrences(text) {
                out.push_str(&text[at..o.path.start]);
                at = o.path.end;
                if o.form == Form::Wikilink {
                    out.push_str(&text[at..o.target_end]);
                    at = o.shown.as_ref().map_or(o.target_end, |s| s.end);
                }
            }
            out.push_str(&text[at..]);
            out
        }

        fn universe(from: &str, to: &str) -> (Names, Names) {
            let after: Vec<&str> = FILES
                .iter()
                .map(|p| if *p == from { to } else { p })
                .collect();
            (names(FILES), names(&after))
        }

        proptest! {
            #![proptest_config(ProptestConfig::with_cases(2000))]

            #[test]
            fn a_move_then_its_reverse_gives_back_the_links(text in note(), (from, to) in moves()) {
                // The bytes, but for a path shortened to a name that is
                // unique again: each link resolves to the same file.
                let there = moved(FILES, from, to, "Home.md", &text);
                let after: Vec<&str> = FILES.iter().map(|p| if *p == from { to } else { p }).collect();
                let back = moved(&after, to, from, "Home.md", &there);
                prop_assert_eq!(without_destinations(&back), without_destinations(&text));
                let n = names(FILES);
                let (was, now) = (occurrences(&text), occurrences(&back));
                prop_assert_eq!(was.len(), now.len());
                for (a, b) in was.iter().zip(&now) {
                    prop_assert_eq!(
                        n.resolve("Home.md", &a.target, a.form),
                        n.resolve("Home.md", &b.target, b.form)
                    );
                }
            }

            #[test]
            fn a_move_changes_no_byte_but_destinations(text in note(), (from, to) in moves()) {
                let there = moved(FILES, from, to, "Home.md", &text);
                prop_assert_eq!(without_destinations(&there), without_destinations(&text));
                prop_assert_eq!(occurrences(&there).len(), occurrences(&text).len());
            }

            #[test]
            fn every_link_resolves_to_the_same_file_after_a_move(text in note(), (from, to) in moves()) {
                let (before, after) = universe(from, to);
                let there = moved(FILES, from, to, "Home.md", &text);
                let (was, now) = (occurrences(&text), occurrences(&there));
                for (a, b) in was.iter().zip(&now) {
                    let old = before.resolve("Home.md", &a.target, a.form).map(|i| before.path(i));
                    let new = after.resolve("Home.md", &b.target, b.form).map(|i| after.path(i));
                    let expected = old.map(|p| if p == from { to } else { p });
                    prop_assert_eq!(new, expected, "{} became {}", a.target, b.target);
                }
            }
        }
    }
}
