//! The baseline: how manual search is usually built — SQLite FTS5 with the
//! trigram tokenizer (it needs no word segmentation, so it takes Japanese),
//! one row per section (the same sections kura indexes), the query split
//! into words at spaces and punctuation, each word of three characters or
//! more quoted and OR-ed, ranked by FTS5's bm25().

use kura::fs::RelPath;
use kura::manual::units::extract;
use rusqlite::{Connection, params};

pub struct Fts {
    db: Connection,
}

impl Fts {
    /// Index `files`: (path relative to the manuals root, text).
    pub fn build(files: &[(String, String)]) -> anyhow::Result<Fts> {
        let db = Connection::open_in_memory()?;
        db.execute_batch(
            "CREATE VIRTUAL TABLE sections USING fts5(manual UNINDEXED, path UNINDEXED, \
             start_line UNINDEXED, heading, body, tokenize='trigram');",
        )?;
        let tx = db.unchecked_transaction()?;
        {
            let mut ins = tx.prepare(
                "INSERT INTO sections(manual, path, start_line, heading, body) VALUES (?1, ?2, ?3, ?4, ?5)",
            )?;
            for (rel, text) in files {
                let Some((manual, path)) = rel.split_once('/') else {
                    continue;
                };
                let rp = RelPath::parse(rel, false).map_err(|e| anyhow::anyhow!(e.message))?;
                for u in extract(&rp, text) {
                    ins.execute(params![
                        manual,
                        path,
                        u.start_line as i64,
                        u.heading,
                        u.body
                    ])?;
                }
            }
        }
        tx.commit()?;
        Ok(Fts { db })
    }

    /// The query as such tools build it.
    pub fn match_expr(query: &str) -> Option<String> {
        let words: Vec<String> = query
            .split(|c: char| {
                c.is_whitespace()
                    || (c.is_ascii_punctuation() && c != '-' && c != '_')
                    || "、。？！「」（）・：".contains(c)
            })
            .filter(|w| w.chars().count() >= 3)
            .map(|w| format!("\"{}\"", w.replace('"', "\"\"")))
            .collect();
        (!words.is_empty()).then(|| words.join(" OR "))
    }

    /// Ranked (path) of the best sections of `manual` for `query`.
    pub fn search(&self, manual: &str, query: &str, limit: usize) -> anyhow::Result<Vec<String>> {
        let Some(expr) = Fts::match_expr(query) else {
            return Ok(vec![]);
        };
        let mut st = self.db.prepare_cached(
            "SELECT path FROM sections WHERE sections MATCH ?1 AND manual = ?2 ORDER BY bm25(sections) LIMIT ?3",
        )?;
        let rows = st.query_map(params![expr, manual, limit as i64], |r| {
            r.get::<_, String>(0)
        })?;
        Ok(rows.collect::<Result<Vec<_>, _>>()?)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn queries_become_quoted_or_of_long_enough_words() {
        assert_eq!(
            Fts::match_expr("how do I use apt-get?").as_deref(),
            Some("\"how\" OR \"use\" OR \"apt-get\"")
        );
        assert_eq!(
            Fts::match_expr("算出プロパティとは？ キャッシュ").as_deref(),
            Some("\"算出プロパティとは\" OR \"キャッシュ\"")
        );
        assert_eq!(Fts::match_expr("a b"), None);
    }

    #[test]
    fn trigram_fts_finds_japanese_substrings() {
        let files = vec![
            (
                "m/a.md".to_owned(),
                "# 算出プロパティ\n算出プロパティはキャッシュされます。\n".to_owned(),
            ),
            (
                "m/b.md".to_owned(),
                "# Watchers\nA watcher runs a callback.\n".to_owned(),
            ),
        ];
        let f = Fts::build(&files).unwrap();
        assert_eq!(f.search("m", "キャッシュ", 5).unwrap(), ["a.md"]);
        assert_eq!(f.search("m", "watcher callback", 5).unwrap(), ["b.md"]);
        assert!(f.search("other", "watcher", 5).unwrap().is_empty());
    }
}
