//! The index's schema: its fields, how a file's key becomes its searchable
//! name, and how a unit becomes a tantivy document.

use tantivy::TantivyDocument;
use tantivy::schema::{
    Field, IndexRecordOption, STORED, STRING, Schema, TextFieldIndexing, TextOptions,
};

use crate::text::reference::references;
use crate::{SectionIndex, Unit, analyzer};

pub(crate) struct Fields {
    pub(crate) file: Field,
    /// The first segment of `file` (the manual), for scoped searches.
    pub(crate) scope: Field,
    pub(crate) start_line: Field,
    pub(crate) end_line: Field,
    pub(crate) heading: Field,
    pub(crate) body: Field,
    /// The file's name: its path below the scope, without the extension
    /// ([`name_of`]). In many manual sets the file name is the title and
    /// the body never repeats it.
    pub(crate) name: Field,
    /// The chapter, section and page references of the file's name and the
    /// unit's heading path, whole (`第2章-6`, `5.6`, `crontab(5)`), so a query
    /// naming one finds it however common its digits are.
    pub(crate) refs: Field,
    /// The file's [`Extracted::tags`], for filters.
    pub(crate) tag: Field,
}

pub(crate) fn schema() -> (Schema, Fields) {
    let mut b = Schema::builder();
    let text = |tokenizer: &str, stored: bool| {
        let o = TextOptions::default().set_indexing_options(
            TextFieldIndexing::default()
                .set_tokenizer(tokenizer)
                .set_index_option(IndexRecordOption::WithFreqs),
        );
        if stored { o.set_stored() } else { o }
    };
    let fields = Fields {
        file: b.add_text_field("file", STRING | STORED),
        scope: b.add_text_field("scope", STRING),
        start_line: b.add_u64_field("start_line", STORED),
        end_line: b.add_u64_field("end_line", STORED),
        heading: b.add_text_field("heading", text(analyzer::PLAIN, true)),
        // Not stored: the text is in the file (see `Hit::body`), and a small
        // document store keeps loading 200 candidates cheap.
        body: b.add_text_field("body", text(analyzer::PLAIN, false)),
        name: b.add_text_field("name", text(analyzer::PLAIN, false)),
        refs: b.add_text_field("refs", STRING),
        tag: b.add_text_field("tag", STRING),
    };
    (b.build(), fields)
}

/// The searchable name of a file key: the path below its first segment
/// (the manual, the project; a one-segment key keeps it), without the
/// extension, folders separated by spaces.
pub(crate) fn name_of(file: &str) -> String {
    stem_below_scope(file).replace('/', " ")
}

/// A file key's path below its first segment (a one-segment key keeps it),
/// without the extension: `manual/man5/crontab.5.md` → `man5/crontab.5`.
pub fn stem_below_scope(file: &str) -> &str {
    let below = file.split_once('/').map_or(file, |(_, rest)| rest);
    below
        .rsplit_once('.')
        .filter(|(_, ext)| !ext.contains('/'))
        .map_or(below, |(stem, _)| stem)
}

/// What every unit of a file carries: its key, name and the name's
/// references (worked out once per file, not per unit).
pub(crate) struct FileFields<'a> {
    key: &'a str,
    name: String,
    refs: Vec<String>,
}

impl<'a> FileFields<'a> {
    pub(crate) fn new(key: &'a str) -> FileFields<'a> {
        let name = name_of(key);
        let refs = references(&name);
        FileFields { key, name, refs }
    }
}

impl SectionIndex {
    pub(crate) fn doc(&self, file: &FileFields, unit: &Unit, tags: &[String]) -> TantivyDocument {
        let f = &self.fields;
        let mut d = TantivyDocument::default();
        d.add_text(f.file, file.key);
        d.add_text(f.scope, file.key.split('/').next().unwrap_or(""));
        d.add_u64(f.start_line, unit.start_line);
        d.add_u64(f.end_line, unit.end_line);
        d.add_text(f.heading, &unit.heading);
        d.add_text(f.body, &unit.body);
        let mut refs = file.refs.clone();
        refs.extend(references(&unit.heading));
        refs.sort();
        refs.dedup();
        for r in refs {
            d.add_text(f.refs, r);
        }
        d.add_text(f.name, &file.name);
        for t in tags {
            d.add_text(f.tag, t);
        }
        d
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_file_name_is_its_path_below_the_scope_without_extension() {
        assert_eq!(
            name_of("m/第２章-６ 壊れたシステム.md"),
            "第２章-６ 壊れたシステム"
        );
        assert_eq!(name_of("manpages-ja/man5/crontab.5.md"), "man5 crontab.5");
        assert_eq!(name_of("note.md"), "note");
        assert_eq!(name_of("a.b/c"), "c");
    }
}
