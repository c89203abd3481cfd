//! Property types as Obsidian keeps them in `.obsidian/types.json`
//! (`{"types": {"due": "date", "rating": "number"}}`): a property with a
//! type is read as that type, and a value that is not one is malformed (the
//! note is left out and counted); a property without one is read by its
//! value (an ISO date a date, `[[Note]]` a link).

use std::collections::HashMap;

use serde_json::Value;

use super::time::Date;
use super::value::{FileRef, Val};
use super::value::{from_json, text_val};
use crate::fs::{RelPath, Root};

#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Kind {
    Text,
    Number,
    Checkbox,
    Date,
    Datetime,
    /// `multitext`, `tags`, `aliases`.
    List,
}

#[derive(Debug, Default)]
pub struct Types {
    /// Lowercase property name → its type.
    kinds: HashMap<String, Kind>,
}

/// Where Obsidian keeps the types, under the vault's top.
pub const TYPES_FILE: &str = ".obsidian/types.json";

impl Types {
    /// The vault's types; none when the file is missing or unreadable (a
    /// damaged file is logged, never an error: the values decide then).
    pub fn load(root: &Root) -> Types {
        let Ok(p) = RelPath::parse(TYPES_FILE, false) else {
            return Types::default();
        };
        match root.read(&p) {
            Ok(bytes) => Types::parse(&bytes).unwrap_or_else(|| {
                tracing::warn!(
                    file = TYPES_FILE,
                    "not the JSON Obsidian writes: property types left out"
                );
                Types::default()
            }),
            _ => Types::default(),
        }
    }

    pub fn parse(bytes: &[u8]) -> Option<Types> {
        let v: Value = serde_json::from_slice(bytes).ok()?;
        let types = v.get("types")?.as_object()?;
        let kinds = types
            .iter()
            .filter_map(|(k, t)| {
                let kind = match t.as_str()? {
                    "text" => Kind::Text,
                    "number" => Kind::Number,
                    "checkbox" => Kind::Checkbox,
                    "date" => Kind::Date,
                    "datetime" => Kind::Datetime,
                    "multitext" | "tags" | "aliases" => Kind::List,
                    _ => return None,
                };
                Some((k.to_lowercase(), kind))
            })
            .collect();
        Some(Types { kinds })
    }

    pub fn kind(&self, name: &str) -> Option<Kind> {
        if self.kinds.is_empty() {
            return None;
        }
        self.kinds.get(&name.to_lowercase()).copied()
    }

    /// Property `name`'s value `v` as its type reads it; Err says why it
    /// is not one.
    pub fn read(&self, name: &str, v: &Value, from: FileRef) -> Result<Val, String> {
        let Some(kind) = self.kind(name) else {
            return Ok(from_json(v, Some(from)));
        };
        let bad = |what: &str| format!("is not {what} (`{v}`), as .obsidian/types.json types it");
        Ok(match (kind, v) {
            (_, Value::Null) => Val::Null,
            (Kind::Text, Value::String(s)) => Val::Str(s.clone()),
            (Kind::Text, Value::Number(_) | Value::Bool(_)) => Val::Str(v.to_string()),
            (Kind::Text, _) => return Err(bad("a text")),
            (Kind::Number, Value::Number(n)) => Val::Num(n.as_f64().unwrap_or(f64::NAN)),
            (Kind::Number, Value::String(s)) => {
                Val::Num(s.trim().parse().map_err(|_| bad("a number"))?)
            }
            (Kind::Number, _) => return Err(bad("a number")),
            (Kind::Checkbox, Value::Bool(b)) => Val::Bool(*b),
            (Kind::Checkbox, Value::String(s)) if s == "true" || s == "false" => {
                Val::Bool(s == "true")
            }
            (Kind::Checkbox, _) => return Err(bad("a checkbox")),
            (Kind::Date, Value::String(s)) => {
                Val::Date(Date::parse(s).ok_or_else(|| bad("a date"))?.day())
            }
            (Kind::Datetime, Value::String(s)) => {
                let d = Date::parse(s).ok_or_else(|| bad("a date and time"))?;
                Val::Date(Date { time: true, ..d })
            }
            (Kind::Date | Kind::Datetime, _) => return Err(bad("a date")),
            (Kind::List, Value::Array(a)) => Val::List(
                a.iter()
                    .map(|x| match x {
                        Value::String(s) => text_val(s, Some(from)),
                        other => from_json(other, Some(from)),
                    })
                    .collect(),
            ),
            (Kind::List, Value::String(s)) => Val::List(vec![text_val(s, Some(from))]),
            (Kind::List, _) => return Err(bad("a list")),
        })
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_typed_property_reads_as_its_type_and_a_wrong_value_is_malformed() {
        let t = Types::parse(br#"{"types": {"Rating": "number", "due": "date", "done": "checkbox", "tags": "tags"}}"#).unwrap();
        let f = FileRef::Note(0);
        assert!(matches!(t.read("rating", &Value::from("4"), f), Ok(Val::Num(n)) if n == 4.0));
        assert!(t.read("rating", &Value::from("four"), f).is_err());
        assert!(t.read("due", &Value::from("someday"), f).is_err());
        assert!(
            matches!(t.read("due", &Value::from("2026-11-30T10:00"), f), Ok(Val::Date(d)) if !d.time)
        );
        assert!(t.read("done", &Value::from(1), f).is_err());
        assert!(matches!(t.read("tags", &Value::from("a"), f), Ok(Val::List(l)) if l.len() == 1));
        // Untyped: read by its value.
        assert!(matches!(
            t.read("other", &Value::from("2026-11-30"), f),
            Ok(Val::Date(_))
        ));
        assert!(Types::parse(b"[1]").is_none());
    }
}
