//! YAML front matter: the `---` block at the very start of a markdown
//! text, parsed into a JSON map, and written back.

use serde_json::{Map, Value};

/// A text split into its front matter (parsed) and the rest.
pub struct Split<'a> {
    pub front: Option<Map<String, Value>>,
    /// The raw front matter block, delimiters included ("" when none).
    pub front_raw: &'a str,
    pub body: &'a str,
}

/// Split off a `---` … `---` block at the very start. A block that is not a
/// YAML mapping is left in the body.
pub fn split(text: &str) -> Split<'_> {
    let none = Split {
        front: None,
        front_raw: "",
        body: text,
    };
    let Some(rest) = text
        .strip_prefix("---\n")
        .or_else(|| text.strip_prefix("---\r\n"))
    else {
        return none;
    };
    let open = text.len() - rest.len();
    let mut at = 0;
    for line in rest.split_inclusive('\n') {
        if line.trim_end() == "---" {
            let yaml = &rest[..at];
            let end = open + at + line.len();
            let parsed: Option<Value> = if yaml.trim().is_empty() {
                Some(Value::Object(Map::new()))
            } else {
                serde_yaml_ng::from_str(yaml).ok()
            };
            return match parsed {
                Some(Value::Object(m)) => Split {
                    front: Some(m),
                    front_raw: &text[..end],
                    body: &text[end..],
                },
                _ => none,
            };
        }
        at += line.len();
    }
    none
}

/// A front matter block for `map` (empty map: no block).
pub fn render_front(map: &Map<String, Value>) -> String {
    if map.is_empty() {
        return String::new();
    }
    let yaml = serde_yaml_ng::to_string(map).unwrap_or_default();
    format!("---\n{yaml}---\n")
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_front_matter_that_is_not_a_mapping_stays_in_the_body() {
        let s = split("---\n- a\n- b\n---\ntext\n");
        assert!(s.front.is_none());
        assert!(s.body.starts_with("---"));
    }
}
