//! How a manual file becomes index units: a markdown file is split at its
//! headings (fence-aware); a `.json` file is one unit whose text is its keys
//! and string values.

use serde_json::Value;

use super::FileType;
use crate::fs::RelPath;
use crate::index::Unit;
use crate::text::Lines;

pub fn extract(path: &RelPath, text: &str) -> Vec<Unit> {
    match FileType::of(path) {
        Some(FileType::Md) => crate::index::markdown_units(text),
        Some(FileType::Json) => vec![json_unit(path, text)],
        None => vec![],
    }
}

fn json_unit(path: &RelPath, text: &str) -> Unit {
    let mut body = String::new();
    match serde_json::from_str::<Value>(text) {
        Ok(v) => flatten(&v, &mut body),
        Err(_) => body.push_str(text), // not valid JSON: index the raw text
    }
    Unit {
        start_line: 1,
        end_line: Lines::new(text).count().max(1) as u64,
        heading: path.file_name().unwrap_or_default().to_owned(),
        body,
    }
}

fn flatten(v: &Value, out: &mut String) {
    match v {
        Value::Object(m) => {
            for (k, v) in m {
                out.push_str(k);
                out.push('\n');
                flatten(v, out);
            }
        }
        Value::Array(a) => a.iter().for_each(|v| flatten(v, out)),
        Value::String(s) => {
            out.push_str(s);
            out.push('\n');
        }
        Value::Number(n) => {
            out.push_str(&n.to_string());
            out.push('\n');
        }
        Value::Bool(_) | Value::Null => {}
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn markdown_sections_become_units_with_heading_paths() {
        let text = "# A\nintro\n## B\nbody b\n";
        let p = RelPath::parse("m/x.md", false).unwrap();
        let u = extract(&p, text);
        assert_eq!(u.len(), 2);
        assert_eq!(
            (u[1].heading.as_str(), u[1].start_line, u[1].end_line),
            ("A > B", 3, 4)
        );
        assert_eq!(u[1].body, "## B\nbody b\n");
    }

    #[test]
    fn json_is_one_unit_of_keys_and_strings() {
        let p = RelPath::parse("m/f.json", false).unwrap();
        let u = extract(
            &p,
            "{\"name\": \"Vue\", \"tags\": [\"ui\", 3], \"ok\": true}\n",
        );
        assert_eq!(u.len(), 1);
        // serde_json orders keys.
        assert_eq!(u[0].body, "name\nVue\nok\ntags\nui\n3\n");
        assert_eq!(u[0].heading, "f.json");
    }
}
