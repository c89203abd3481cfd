//! docs/tools.md, generated from the tool declarations: what each tool is
//! for, its rules in full, its parameters and its output fields. A test
//! in the `kura` crate keeps the file current (`KURA_BLESS=1 cargo test -p
//! kura reference` rewrites it).

use std::fmt::Write;

use serde_json::Value;

use crate::domain::{Catalog, Effect, ToolDef};

/// The reference of `catalog`'s tools, with the default read cap written
/// in.
pub fn markdown(catalog: Catalog) -> String {
    let cap = crate::config::Config::default().scan_max_chars.to_string();
    let fill = |s: &str| super::with_cap(s, &cap);
    let mut out = String::from(
        "# Tools\n\n\
         Generated from the tool declarations (each domain's `tools.rs`, `host/*/src/tools.rs`) by \
         `KURA_BLESS=1 cargo test -p kura reference`; do not edit by hand.\n\n\
         Every result is `structuredContent` plus the same JSON as text. A failed call is \
         `isError: true` with `{\"error\": {\"code\", \"message\", \"details\"}}` (the vibe tools add \
         `\"success\": false` and use seed 002's upper-case codes). Read caps below are the default \
         (`scan_max_chars`).\n",
    );
    undo_and_confirmations(&mut out, catalog);
    for domain in catalog.domains() {
        let _ = write!(out, "\n## {}\n", domain.name);
        for t in domain.tools {
            tool(&mut out, t, &fill);
        }
    }
    out
}

/// Tools that write only kura's own files (`.system/`, the index): their
/// writes are not a person's, and are not in the history.
const NOT_RECORDED: [&str; 2] = ["artifact_audit", "reindex"];

/// Which write tools can be undone and which may ask first.
fn undo_and_confirmations(out: &mut String, catalog: Catalog) {
    let names = |keep: &dyn Fn(&ToolDef) -> bool| {
        catalog
            .tools()
            .filter(|t| keep(t))
            .map(|t| format!("`{}`", t.name))
            .collect::<Vec<_>>()
            .join(", ")
    };
    let _ = write!(
        out,
        "\n## Undo and confirmations\n\n\
         **Undoable** (each call is one change in the root's history; `vault_undo`, or vibe's `undo`, \
         takes it back, and the undo is itself undoable): {}. Not recorded, because they write only \
         kura's own files: {}.\n\n\
         **Asked first**, when the client can ask (elicitation) and `confirm = \"destructive\"` (the \
         default): `vault_delete` of a folder, `vault_move` of a folder or of a note five or more \
         notes link to, and `bridge_copy_section`/`bridge_copy_file` in `overwrite` mode onto a note \
         that has content — undoable too, but a person may rather not find them done. With \
         `confirm = \"always\"`, every call of a destructive tool: {}. A question that fails or is \
         not answered \"yes\" runs nothing (`cancelled`); a client that cannot ask gets the call \
         as asked.\n",
        names(&|t| !t.effect.read_only() && !NOT_RECORDED.contains(&t.name)),
        NOT_RECORDED.map(|n| format!("`{n}`")).join(", "),
        names(&|t| matches!(t.effect, Effect::Destructive { .. })),
    );
}

fn tool(out: &mut String, t: &ToolDef, fill: &dyn Fn(&str) -> String) {
    let kind = match t.effect {
        Effect::Read => "read-only".to_owned(),
        Effect::Write { idempotent } | Effect::Destructive { idempotent } => format!(
            "writes · {} · {}",
            if matches!(t.effect, Effect::Destructive { .. }) {
                "destructive"
            } else {
                "not destructive"
            },
            if idempotent {
                "idempotent"
            } else {
                "not idempotent"
            }
        ),
    };
    let _ = write!(
        out,
        "\n### `{}` — {}\n\n*{kind}*\n\n{}\n\n{}\n",
        t.name,
        t.title,
        fill(t.description),
        fill(t.details)
    );
    // As listed: an optional parameter takes null for absent, unsaid.
    let input = super::schema::input(t.input());
    table(out, &input, ["parameter", "required"], fill);
    let output = Value::Object((*t.output()).clone());
    let output = super::schema::inline(&output, output.get("$defs").unwrap_or(&Value::Null), 0);
    table(out, &output, ["output field", "always"], fill);
}

/// The fields of an object schema as a table (nothing when it has none).
fn table(out: &mut String, schema: &Value, heads: [&str; 2], fill: &dyn Fn(&str) -> String) {
    let mut rows = Vec::new();
    fields(schema, "", &mut rows, 2);
    if rows.is_empty() {
        return;
    }
    let [field, required_head] = heads;
    let _ = write!(
        out,
        "\n| {field} | type | {required_head} | meaning |\n| --- | --- | --- | --- |\n"
    );
    for (name, ty, required, meaning) in rows {
        let _ = writeln!(
            out,
            "| `{name}` | {ty} | {} | {} |",
            if required { "yes" } else { "" },
            cell(&fill(&meaning))
        );
    }
}

/// A table cell: one line, pipes escaped.
fn cell(s: &str) -> String {
    s.split_whitespace()
        .collect::<Vec<_>>()
        .join(" ")
        .replace('|', "\\|")
}

/// The object schema a field holds, if any (behind a nullable `anyOf`, an
/// array's items, a `$ref`).
fn object(s: &Value) -> Option<&Value> {
    if s.get("properties").is_some() {
        return Some(s);
    }
    if let Some(items) = s.get("items") {
        return object(items);
    }
    ["anyOf", "oneOf"]
        .iter()
        .filter_map(|k| s.get(*k).and_then(Value::as_array))
        .flatten()
        .find_map(object)
}

/// A field's type in words: `string`, `integer ≥ 1`, `"a" \| "b"`,
/// `array of object`, `… or null`.
fn type_words(s: &Value) -> String {
    let mut words: Vec<String> = Vec::new();
    if let Some(list) = s.get("enum").and_then(Value::as_array) {
        words.push(
            list.iter()
                .filter(|v| !v.is_null())
                .map(|v| format!("`{v}`"))
                .collect::<Vec<_>>()
                .join(", "),
        );
        if list.iter().any(Value::is_null) {
            words.push("null".into());
        }
        return words.join(" or ");
    }
    if let Some(c) = s.get("const") {
        return format!("`{c}`");
    }
    let types: Vec<&str> = match s.get("type") {
        Some(Value::String(t)) => vec![t.as_str()],
        Some(Value::Array(ts)) => ts.iter().filter_map(Value::as_str).collect(),
        _ => Vec::new(),
    };
    for t in types {
        words.push(match t {
            "array" => match s.get("items") {
                Some(items) => format!("array of {}", type_words(items)),
                None => "array".into(),
            },
            "integer" | "number" => match s.get("minimum").and_then(Value::as_i64) {
                Some(m) if m > 0 => format!("{t} ≥ {m}"),
                _ => t.to_owned(),
            },
            other => other.to_owned(),
        });
    }
    for k in ["anyOf", "oneOf"] {
        for b in s.get(k).and_then(Value::as_array).into_iter().flatten() {
            let w = type_words(b);
            if !w.is_empty() && !words.contains(&w) {
                words.push(w);
            }
        }
    }
    if words.is_empty() {
        "any".into()
    } else {
        words.join(" or ")
    }
}

type Row = (String, String, bool, String);

/// The rows of an object schema's fields, `depth` levels deep (`a.b`).
fn fields(s: &Value, prefix: &str, rows: &mut Vec<Row>, depth: usize) {
    let required: Vec<&str> = s
        .get("required")
        .and_then(Value::as_array)
        .map(|r| r.iter().filter_map(Value::as_str).collect())
        .unwrap_or_default();
    let Some(props) = s.get("properties").and_then(Value::as_object) else {
        return;
    };
    for (name, p) in props {
        let meaning = p
            .get("description")
            .and_then(Value::as_str)
            .unwrap_or("")
            .to_owned();
        let full = format!("{prefix}{name}");
        rows.push((
            full.clone(),
            type_words(p),
            required.contains(&name.as_str()),
            meaning,
        ));
        if depth > 1
            && let Some(inner) = object(p)
        {
            fields(inner, &format!("{full}."), rows, depth - 1);
        }
    }
}
