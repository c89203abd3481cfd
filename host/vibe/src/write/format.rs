//! The text of what the vibe writes put on disk: slugs and task numbers,
//! a task file in seed 002's format, front matter merged into a document.

use serde_json::{Map, Value};

use crate::doc;

/// A kebab-case slug: diacritics dropped (`Diseñar` → `disenar`), lower
/// case, every run of other characters one `-`, at most 60 characters (cut
/// at a dash). Letters of any script are kept.
pub fn slug(title: &str) -> String {
    let folded = kura_text::tokenize::fold(&title.to_lowercase());
    let mut out = String::new();
    for c in folded.chars() {
        if c.is_alphanumeric() {
            out.push(c);
        } else if !out.is_empty() && !out.ends_with('-') {
            out.push('-');
        }
    }
    let mut out = out.trim_end_matches('-').to_owned();
    if out.chars().count() > 60 {
        let cut: String = out.chars().take(60).collect();
        out = match cut.rfind('-') {
            Some(i) if i > 20 => cut[..i].to_owned(),
            _ => cut,
        };
    }
    out
}

/// The next task number after those the names in `tasks/` start with.
pub fn next_number(names: &[String]) -> u64 {
    names
        .iter()
        .filter_map(|n| {
            let digits: String = n.chars().take_while(char::is_ascii_digit).collect();
            (!digits.is_empty() && n[digits.len()..].starts_with(['-', '.']))
                .then(|| digits.parse::<u64>().ok())
                .flatten()
        })
        .max()
        .map_or(1, |m| m + 1)
}

fn one_line(s: &str) -> String {
    s.split_whitespace().collect::<Vec<_>>().join(" ")
}

fn yaml_scalar(s: &str) -> String {
    let plain = !s.is_empty()
        && s.chars()
            .all(|c| c.is_alphanumeric() || matches!(c, '-' | '_' | '.' | '/'))
        && !matches!(s, "true" | "false" | "null" | "yes" | "no" | "on" | "off");
    if plain {
        s.to_owned()
    } else {
        serde_json::to_string(s).unwrap_or_default()
    }
}

/// A task file in seed 002's format.
pub struct TaskText<'a> {
    pub title: &'a str,
    pub status: &'a str,
    pub objective: &'a str,
    pub steps: &'a [&'a str],
    pub acceptance: &'a [&'a str],
    pub context: Option<&'a Map<String, Value>>,
    pub notes: Option<&'a str>,
    pub tags: &'a [&'a str],
}

fn context_value(v: &Value, code: bool) -> String {
    let item = |s: &str| {
        if code { format!("`{s}`") } else { s.to_owned() }
    };
    match v {
        Value::Array(items) => items
            .iter()
            .map(|i| match i {
                Value::String(s) => item(s),
                other => item(&other.to_string()),
            })
            .collect::<Vec<_>>()
            .join(", "),
        Value::String(s) => item(s),
        other => other.to_string(),
    }
}

impl TaskText<'_> {
    pub fn render(&self) -> String {
        let mut t = String::new();
        if !self.tags.is_empty() {
            let tags: Vec<String> = self.tags.iter().map(|s| yaml_scalar(s)).collect();
            t.push_str(&format!("---\ntags: [{}]\n---\n", tags.join(", ")));
        }
        t.push_str(&format!(
            "# Task: {}\n\nStatus: {}\n\n",
            one_line(self.title),
            self.status
        ));
        t.push_str(&format!("## Objective\n{}\n", self.objective.trim()));
        if let Some(ctx) = self.context.filter(|c| !c.is_empty()) {
            t.push_str("\n## Context\n");
            // 002's order first; other keys after, by name.
            let rank = |k: &str| match k {
                "related_files" => 0,
                "dependencies" => 1,
                _ => 2,
            };
            let mut entries: Vec<_> = ctx.iter().collect();
            entries.sort_by_key(|(k, _)| rank(k));
            for (k, v) in entries {
                let label = match k.as_str() {
                    "related_files" => "Related files".to_owned(),
                    "dependencies" => "Dependencies".to_owned(),
                    other => {
                        let words = other.replace('_', " ");
                        let mut c = words.chars();
                        c.next()
                            .map(|f| f.to_uppercase().chain(c).collect())
                            .unwrap_or_default()
                    }
                };
                t.push_str(&format!(
                    "- {label}: {}\n",
                    context_value(v, k == "related_files")
                ));
            }
        }
        t.push_str("\n## Steps\n");
        for (i, s) in self.steps.iter().enumerate() {
            t.push_str(&format!("{}. [ ] {}\n", i + 1, one_line(s)));
        }
        t.push_str("\n## Acceptance Criteria\n");
        for s in self.acceptance {
            t.push_str(&format!("- [ ] {}\n", one_line(s)));
        }
        if let Some(n) = self.notes.filter(|n| !n.trim().is_empty()) {
            t.push_str(&format!("\n## Notes\n{}\n", n.trim()));
        }
        t
    }
}

/// Front matter `extra` merged over the one at the top of `content` (a null
/// value removes a key), in front of the content's body.
pub(super) fn with_front(
    content: &str,
    base: Option<Map<String, Value>>,
    extra: &Map<String, Value>,
) -> String {
    let s = doc::split(content);
    let mut front = s.front.or(base).unwrap_or_default();
    for (k, v) in extra {
        if v.is_null() {
            front.remove(k);
        } else {
            front.insert(k.clone(), v.clone());
        }
    }
    format!("{}{}", doc::render_front(&front), s.body)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn slugs_are_kebab_case_without_diacritics() {
        assert_eq!(slug("Implementar tool search"), "implementar-tool-search");
        assert_eq!(slug("Diseñar schema SQLite!"), "disenar-schema-sqlite");
        assert_eq!(slug("  C++ & rate-limiting (v2)  "), "c-rate-limiting-v2");
        assert_eq!(slug("認証を直す"), "認証を直す");
        assert_eq!(slug("!!!"), "");
        assert!(slug(&"word ".repeat(40)).chars().count() <= 60);
    }

    #[test]
    fn next_number_follows_the_highest() {
        let names = |v: &[&str]| v.iter().map(|s| s.to_string()).collect::<Vec<_>>();
        assert_eq!(next_number(&names(&[])), 1);
        assert_eq!(
            next_number(&names(&["001-a.md", "004-b.md", "notes.md"])),
            5
        );
        assert_eq!(next_number(&names(&["999-z.md"])), 1000);
        assert_eq!(
            next_number(&names(&["2025-plan.md"])),
            2026,
            "digits then dash count"
        );
    }

    #[test]
    fn task_text_is_the_format_of_002() {
        let ctx: Map<String, Value> = serde_json::from_str(
            r#"{"related_files": ["src/tools/search.py", "src/db/fts.py"], "dependencies": ["003-disenar-schema-sqlite"]}"#,
        )
        .unwrap();
        let t = TaskText {
            title: "Implementar tool search",
            status: "pending",
            objective: "Implementar la tool search con FTS5 y ranking inteligente.",
            steps: &["Crear función de búsqueda en SQLite", "Agregar tests"],
            acceptance: &["Búsqueda devuelve resultados relevantes"],
            context: Some(&ctx),
            notes: Some("Usar BM25 nativo de FTS5."),
            tags: &["backend", "fts5", "search"],
        };
        assert_eq!(
            t.render(),
            "---\ntags: [backend, fts5, search]\n---\n# Task: Implementar tool search\n\nStatus: pending\n\n\
             ## Objective\nImplementar la tool search con FTS5 y ranking inteligente.\n\n\
             ## Context\n- Related files: `src/tools/search.py`, `src/db/fts.py`\n- Dependencies: 003-disenar-schema-sqlite\n\n\
             ## Steps\n1. [ ] Crear función de búsqueda en SQLite\n2. [ ] Agregar tests\n\n\
             ## Acceptance Criteria\n- [ ] Búsqueda devuelve resultados relevantes\n\n\
             ## Notes\nUsar BM25 nativo de FTS5.\n"
        );
    }

    #[test]
    fn a_task_without_tags_has_no_front_matter() {
        let t = TaskText {
            title: "x",
            status: "done",
            objective: "y",
            steps: &[],
            acceptance: &[],
            context: None,
            notes: None,
            tags: &[],
        };
        assert!(t.render().starts_with("# Task: x\n\nStatus: done\n"));
    }

    #[test]
    fn front_matter_merges_and_null_removes() {
        let extra: Map<String, Value> =
            serde_json::from_str(r#"{"tags": ["a"], "owner": null}"#).unwrap();
        let base: Map<String, Value> =
            serde_json::from_str(r#"{"owner": "ana", "updated": "2025-02-09"}"#).unwrap();
        let out = with_front("# T\nbody\n", Some(base), &extra);
        assert!(out.starts_with("---\n"), "{out}");
        assert!(
            out.contains("updated: 2025-02-09") || out.contains("updated: '2025-02-09'"),
            "{out}"
        );
        assert!(!out.contains("owner"), "{out}");
        assert!(out.ends_with("---\n# T\nbody\n"), "{out}");
    }
}
