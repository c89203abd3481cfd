//! Typed inputs. A tool's input is a struct with `#[derive(Input)]`
//! (`kura-derive`); each field's type says here, once, both its JSON Schema
//! and how it is read with [`Args`], so the schema tools/list shows and the
//! parser cannot drift apart, and every wrong value is `invalid_parameter`
//! naming the parameter.

use serde_json::{Map, Value, json};

use super::Args;
use crate::error::{Error, Result};

pub use kura_derive::Input;

/// A tool's whole input: an object of parameters.
pub trait Input: Sized {
    /// The object schema: properties with their descriptions, required ones.
    fn schema() -> Value;
    fn parse(a: Args) -> Result<Self>;
}

/// One parameter's type.
pub trait Param: Sized {
    fn schema_with(rule: &Rule) -> Value;
    /// The value under `key`; `None` when absent or null.
    fn read(a: &Args, key: &'static str, rule: &Rule) -> Result<Option<Self>>;
}

/// What `#[arg(...)]` adds to a field's type.
#[derive(Clone, Copy)]
pub struct Rule {
    pub min: Option<i64>,
    pub max: Option<i64>,
    /// The only strings accepted.
    pub one_of: Option<&'static [&'static str]>,
    /// A string that must not be empty; not bounded (written content).
    pub nonempty: bool,
    /// A search query: not blank, at most `QUERY_MAX_CHARS` characters.
    pub query: bool,
    /// A string of any length (written content: the write bounds it).
    pub text: bool,
    /// An integer that may come as a string (`"100"`): seeds 003/004's budgets.
    pub lenient: bool,
}

/// `schema` with its description.
pub fn described(mut schema: Value, description: &str) -> Value {
    schema["description"] = json!(description);
    schema
}

/// An object schema (`required` only when something is).
pub fn object(properties: Map<String, Value>, required: Vec<&'static str>) -> Value {
    let mut schema = json!({ "type": "object", "properties": properties });
    if !required.is_empty() {
        schema["required"] = json!(required);
    }
    schema
}

impl Param for String {
    fn schema_with(rule: &Rule) -> Value {
        if rule.nonempty || rule.query {
            json!({ "type": "string", "minLength": 1 })
        } else {
            json!({ "type": "string" })
        }
    }

    fn read(a: &Args, key: &'static str, rule: &Rule) -> Result<Option<Self>> {
        let s = if rule.query {
            a.query(key)?
        } else if rule.nonempty {
            a.nonempty(key)?
        } else if rule.text {
            a.text(key)?
        } else {
            a.str(key)?
        };
        Ok(s.map(str::to_owned))
    }
}

/// A word out of `one_of`.
impl Param for &'static str {
    fn schema_with(rule: &Rule) -> Value {
        json!({ "type": "string", "enum": rule.one_of.unwrap_or_default() })
    }

    fn read(a: &Args, key: &'static str, rule: &Rule) -> Result<Option<Self>> {
        a.choice(key, rule.one_of.unwrap_or_default())
    }
}

impl Param for bool {
    fn schema_with(_: &Rule) -> Value {
        json!({ "type": "boolean" })
    }

    fn read(a: &Args, key: &'static str, _: &Rule) -> Result<Option<Self>> {
        a.bool(key)
    }
}

/// Integers: at least `min`, at most `max` (each when said).
impl Param for i64 {
    fn schema_with(rule: &Rule) -> Value {
        let mut schema = if rule.lenient {
            // A whole number such as `100.0` is an "integer" to JSON Schema.
            json!({ "type": ["integer", "string"] })
        } else {
            json!({ "type": "integer" })
        };
        if let Some(min) = rule.min {
            schema["minimum"] = json!(min);
        }
        if let Some(max) = rule.max {
            schema["maximum"] = json!(max);
        }
        schema
    }

    fn read(a: &Args, key: &'static str, rule: &Rule) -> Result<Option<Self>> {
        let min = rule.min.unwrap_or(i64::MIN);
        let i = if rule.lenient {
            a.int_lenient(key, min)?
        } else {
            a.int(key, min)?
        };
        match (i, rule.max) {
            (Some(i), Some(max)) if i > max => {
                let name = a.name(key);
                Err(
                    Error::invalid_parameter(&name, format!("`{name}` must be <= {max}, got {i}"))
                        .with("maximum", max)
                        .with("value", i),
                )
            }
            _ => Ok(i),
        }
    }
}

impl Param for Vec<String> {
    fn schema_with(_: &Rule) -> Value {
        json!({ "type": "array", "items": { "type": "string" } })
    }

    fn read(a: &Args, key: &'static str, _: &Rule) -> Result<Option<Self>> {
        Ok(a.str_list(key)?
            .map(|l| l.into_iter().map(str::to_owned).collect()))
    }
}

/// Any JSON object, as it is (front matter, a task's context).
impl Param for Map<String, Value> {
    fn schema_with(_: &Rule) -> Value {
        json!({ "type": "object" })
    }

    fn read(a: &Args, key: &'static str, _: &Rule) -> Result<Option<Self>> {
        Ok(a.map(key)?.cloned())
    }
}

/// Line ranges `[{start_line, end_line}]`, both >= 1 and in order, named
/// `key[i].start_line` in errors.
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub struct LineRanges(pub Vec<(i64, i64)>);

impl Param for LineRanges {
    fn schema_with(_: &Rule) -> Value {
        json!({
            "type": "array",
            "items": {
                "type": "object",
                "properties": {
                    "start_line": { "type": "integer", "minimum": 1 },
                    "end_line": { "type": "integer", "minimum": 1 },
                },
                "required": ["start_line", "end_line"],
            },
        })
    }

    fn read(a: &Args, key: &'static str, _: &Rule) -> Result<Option<Self>> {
        Ok(a.line_ranges(key)?.map(LineRanges))
    }
}

/// A search's other phrasings of its question (`queries`): at most
/// [`PHRASINGS_MAX`], each read as a query is (not blank, at most
/// `QUERY_MAX_CHARS` characters), named `queries[i]` in errors.
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub struct Phrasings(pub Vec<String>);

/// The most other phrasings a search takes: each costs a first stage.
pub const PHRASINGS_MAX: usize = 4;

impl Param for Phrasings {
    fn schema_with(_: &Rule) -> Value {
        // Each item's bounds are a query's, said by the error, not here:
        // tools/list has a budget.
        json!({ "type": "array", "items": { "type": "string" }, "maxItems": PHRASINGS_MAX })
    }

    fn read(a: &Args, key: &'static str, _: &Rule) -> Result<Option<Self>> {
        let Some(list) = a.str_list(key)? else {
            return Ok(None);
        };
        if list.len() > PHRASINGS_MAX {
            return Err(a.too_long(key, list.len(), PHRASINGS_MAX, "items"));
        }
        let mut out = Vec::with_capacity(list.len());
        for (i, q) in list.into_iter().enumerate() {
            let name = format!("{key}[{i}]");
            if q.trim().is_empty() {
                let name = a.name(&name);
                return Err(Error::invalid_parameter(
                    &name,
                    format!("`{name}` must not be blank"),
                ));
            }
            let chars = q.chars().count();
            if chars > super::QUERY_MAX_CHARS {
                return Err(a.too_long(&name, chars, super::QUERY_MAX_CHARS, "characters"));
            }
            out.push(q.to_owned());
        }
        Ok(Some(Phrasings(out)))
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::error::Code;

    /// Every kind of field, as the tools use them.
    #[derive(Input, Debug)]
    struct Sample {
        /// A required path.
        path: String,
        /// A query.
        #[arg(query)]
        query: Option<String>,
        /// Lines.
        #[arg(min = 1, max = 10)]
        limit: Option<i64>,
        /// A budget.
        #[arg(lenient, min = 1)]
        budget: Option<i64>,
        /// A word.
        #[arg(one_of = ["a", "b"])]
        mode: Option<&'static str>,
        /// Nested.
        inner: Option<Inner>,
        /// Read but not listed.
        #[arg(hidden)]
        alias: Option<String>,
    }

    #[derive(Input, Debug)]
    struct Inner {
        /// A line.
        #[arg(min = 1)]
        start_line: i64,
    }

    fn parse(v: Value) -> Result<Sample> {
        Sample::parse(Args::new(v.as_object()))
    }

    fn fails_on(v: Value) -> String {
        let e = parse(v).unwrap_err();
        assert_eq!(e.code, Code::InvalidParameter);
        e.details["parameter"].as_str().unwrap().to_owned()
    }

    #[test]
    fn the_schema_says_what_the_reading_checks() {
        let s = Sample::schema();
        assert_eq!(s["required"], json!(["path"]));
        assert_eq!(s["properties"]["path"]["description"], "A required path.");
        assert_eq!(s["properties"]["query"]["minLength"], 1);
        assert_eq!(s["properties"]["limit"]["maximum"], 10);
        assert_eq!(s["properties"]["mode"]["enum"], json!(["a", "b"]));
        assert_eq!(
            s["properties"]["inner"]["properties"]["start_line"]["minimum"],
            1
        );
        assert_eq!(s["properties"]["inner"]["required"], json!(["start_line"]));
        assert!(s["properties"].get("alias").is_none());
    }

    #[test]
    fn each_rule_of_the_schema_is_enforced_by_name() {
        assert_eq!(fails_on(json!({})), "path");
        assert_eq!(fails_on(json!({"path": 1})), "path");
        assert_eq!(fails_on(json!({"path": "p", "query": " "})), "query");
        assert_eq!(fails_on(json!({"path": "p", "limit": 11})), "limit");
        assert_eq!(fails_on(json!({"path": "p", "limit": 0})), "limit");
        assert_eq!(fails_on(json!({"path": "p", "budget": "x"})), "budget");
        assert_eq!(fails_on(json!({"path": "p", "mode": "c"})), "mode");
        assert_eq!(
            fails_on(json!({"path": "p", "inner": {}})),
            "inner.start_line"
        );
        assert_eq!(fails_on(json!({"path": "p", "alias": 3})), "alias");
    }

    #[test]
    fn null_is_absent_and_lenient_budgets_take_strings() {
        let s = parse(json!({"path": "p", "query": null, "budget": "200", "alias": "x"})).unwrap();
        assert_eq!(s.path, "p");
        assert_eq!(s.query, None);
        assert_eq!(s.budget, Some(200));
        assert_eq!(s.alias.as_deref(), Some("x"));
        assert!(s.mode.is_none() && s.inner.is_none() && s.limit.is_none());
        let s = parse(json!({"path": "p", "inner": {"start_line": 3.0}, "mode": "b"})).unwrap();
        assert_eq!(s.inner.map(|i| i.start_line), Some(3));
        assert_eq!(s.mode, Some("b"));
    }

    /// A search's phrasings.
    #[derive(Input, Debug)]
    struct Search {
        /// Other phrasings.
        queries: Option<Phrasings>,
    }

    #[test]
    fn at_most_four_phrasings_each_a_query() {
        let read = |v: Value| Search::parse(Args::new(v.as_object()));
        let four = read(json!({"queries": ["a", "b", "c", "d"]})).unwrap();
        assert_eq!(four.queries.map(|q| q.0.len()), Some(4));
        let name = |v: Value| read(v).unwrap_err().details["parameter"].clone();
        assert_eq!(
            name(json!({"queries": ["a", "b", "c", "d", "e"]})),
            "queries"
        );
        assert_eq!(name(json!({"queries": ["a", "  "]})), "queries[1]");
        assert_eq!(name(json!({"queries": ["x".repeat(1001)]})), "queries[0]");
        assert_eq!(name(json!({"queries": "a"})), "queries");
        let s = Search::schema();
        assert_eq!(s["properties"]["queries"]["maxItems"], 4);
    }
}
