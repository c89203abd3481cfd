//! Typed reading of tool arguments. kura parses arguments itself (not through
//! serde derive) so that a wrong JSON type is a tool error with the code
//! `invalid_parameter` naming the parameter, never a JSON-RPC error and never
//! a silent coercion. `null` counts as absent; unknown keys are ignored.
//! Tools declare their inputs as structs (`param.rs`); [`Args`] is what
//! those read through.

mod param;

pub use param::{Input, LineRanges, PHRASINGS_MAX, Param, Phrasings, Rule, described, object};

use serde_json::{Map, Value};

use crate::error::{Error, Result};

/// The longest query any search tool accepts, in characters: enough for a
/// paragraph, and it keeps a query's cost bounded (seed 002's own cap).
pub const QUERY_MAX_CHARS: usize = 1000;

/// The longest string argument that is not file content (paths, globs,
/// names, notes), in bytes. Content (`content`, `find`, `replace`) is read
/// with [`Args::text`] and bounded by `max_file_bytes` where it is written.
pub const STR_MAX_BYTES: usize = 64 << 10;

/// The most items a string-list argument may hold.
pub const LIST_MAX_ITEMS: usize = 1000;

#[derive(Clone, Copy)]
pub struct Args<'a> {
    map: &'a Map<String, Value>,
    prefix: &'a str,
}

static EMPTY: std::sync::LazyLock<Map<String, Value>> = std::sync::LazyLock::new(Map::new);

fn type_name(v: &Value) -> &'static str {
    match v {
        Value::Null => "null",
        Value::Bool(_) => "a boolean",
        Value::Number(_) => "a number",
        Value::String(_) => "a string",
        Value::Array(_) => "an array",
        Value::Object(_) => "an object",
    }
}

/// The integer a JSON number holds, if it holds one (`3` and `3.0`, not `3.5`).
fn as_integer(v: &Value) -> Option<i64> {
    let n = v.as_number()?;
    if let Some(i) = n.as_i64() {
        return Some(i);
    }
    let f = n.as_f64()?;
    (f.fract() == 0.0 && f.abs() < 9.0e15).then_some(f as i64)
}

/// Check an already-read line number, the parameter `name`, against a file
/// of `total` lines (an empty file accepts line 1, which yields nothing).
pub fn line_in(name: &str, line: i64, total: usize) -> Result<usize> {
    let line = line as usize;
    if line > total.max(1) {
        return Err(Error::invalid_parameter(
            name,
            format!(
                "`{name}` is {line} but the file has {total} line{}",
                if total == 1 { "" } else { "s" }
            ),
        )
        .with("total_lines", total as u64));
    }
    Ok(line)
}

impl<'a> Args<'a> {
    pub fn new(map: Option<&'a Map<String, Value>>) -> Self {
        Args {
            map: map.unwrap_or(&EMPTY),
            prefix: "",
        }
    }

    /// The full dotted name of a parameter, for messages.
    pub fn name(&self, key: &str) -> String {
        if self.prefix.is_empty() {
            key.to_owned()
        } else {
            format!("{}.{key}", self.prefix)
        }
    }

    fn wrong(&self, key: &str, expected: &str, got: &Value) -> Error {
        let name = self.name(key);
        Error::invalid_parameter(
            &name,
            format!("`{name}` must be {expected}, not {}", type_name(got)),
        )
        .with("expected", expected)
    }

    pub fn get(&self, key: &str) -> Option<&'a Value> {
        self.map.get(key).filter(|v| !v.is_null())
    }

    pub fn missing(&self, key: &str) -> Error {
        let name = self.name(key);
        Error::invalid_parameter(&name, format!("`{name}` is required"))
    }

    /// A value over a documented size: refused before any work, and never
    /// echoed back.
    pub fn too_long(&self, key: &str, len: usize, limit: usize, unit: &str) -> Error {
        let name = self.name(key);
        Error::invalid_parameter(
            &name,
            format!("`{name}` is {len} {unit} long; at most {limit} are accepted"),
        )
        .with("limit", limit as u64)
        .with("unit", unit)
    }

    /// A string of any length (file content: the write bounds it).
    pub fn text(&self, key: &str) -> Result<Option<&'a str>> {
        match self.get(key) {
            None => Ok(None),
            Some(Value::String(s)) => Ok(Some(s)),
            Some(v) => Err(self.wrong(key, "a string", v)),
        }
    }

    /// A string of at most [`STR_MAX_BYTES`].
    pub fn str(&self, key: &str) -> Result<Option<&'a str>> {
        let s = self.text(key)?;
        if let Some(s) = s
            && s.len() > STR_MAX_BYTES
        {
            return Err(self.too_long(key, s.len(), STR_MAX_BYTES, "bytes"));
        }
        Ok(s)
    }

    /// A search query: not blank, at most [`QUERY_MAX_CHARS`].
    pub fn query(&self, key: &str) -> Result<Option<&'a str>> {
        let Some(q) = self.text(key)? else {
            return Ok(None);
        };
        if q.trim().is_empty() {
            return Err(self.empty(key));
        }
        let chars = q.chars().take(QUERY_MAX_CHARS + 1).count();
        if chars > QUERY_MAX_CHARS {
            return Err(self.too_long(key, q.chars().count(), QUERY_MAX_CHARS, "characters"));
        }
        Ok(Some(q))
    }

    /// A string that must not be empty (written content, so bounded where
    /// it is written, not here).
    pub fn nonempty(&self, key: &str) -> Result<Option<&'a str>> {
        match self.text(key)? {
            Some("") => Err(self.empty(key)),
            s => Ok(s),
        }
    }

    fn empty(&self, key: &str) -> Error {
        let name = self.name(key);
        Error::invalid_parameter(&name, format!("`{name}` must not be empty"))
    }

    pub fn bool(&self, key: &str) -> Result<Option<bool>> {
        match self.get(key) {
            None => Ok(None),
            Some(Value::Bool(b)) => Ok(Some(*b)),
            Some(v) => Err(self.wrong(key, "a boolean", v)),
        }
    }

    /// An integer `>= min`; booleans, strings and fractions are refused.
    pub fn int(&self, key: &str, min: i64) -> Result<Option<i64>> {
        let Some(v) = self.get(key) else {
            return Ok(None);
        };
        let Some(i) = as_integer(v) else {
            return Err(self.wrong(key, "an integer", v));
        };
        self.at_least(key, i, min).map(Some)
    }

    /// Like [`Args::int`] but also accepts a string or number that converts to
    /// an integer (`"100"`, `100.0`): the seeds ask this of `budget.*` only.
    pub fn int_lenient(&self, key: &str, min: i64) -> Result<Option<i64>> {
        let Some(v) = self.get(key) else {
            return Ok(None);
        };
        let parsed = match v {
            Value::String(s) => {
                let s = s.trim();
                s.parse::<i64>().ok().or_else(|| {
                    s.parse::<f64>()
                        .ok()
                        .filter(|f| f.is_finite() && f.fract() == 0.0 && f.abs() < 9.0e15)
                        .map(|f| f as i64)
                })
            }
            Value::Bool(_) => None,
            other => as_integer(other),
        };
        let Some(i) = parsed else {
            return Err(self.wrong(key, "an integer (or a string holding one)", v));
        };
        self.at_least(key, i, min).map(Some)
    }

    fn at_least(&self, key: &str, i: i64, min: i64) -> Result<i64> {
        if i < min {
            let name = self.name(key);
            return Err(Error::invalid_parameter(
                &name,
                format!("`{name}` must be >= {min}, got {i}"),
            )
            .with("minimum", min)
            .with("value", i));
        }
        Ok(i)
    }

    /// An array of strings.
    pub fn str_list(&self, key: &str) -> Result<Option<Vec<&'a str>>> {
        let Some(v) = self.get(key) else {
            return Ok(None);
        };
        let Value::Array(items) = v else {
            return Err(self.wrong(key, "an array of strings", v));
        };
        if items.len() > LIST_MAX_ITEMS {
            return Err(self.too_long(key, items.len(), LIST_MAX_ITEMS, "items"));
        }
        items
            .iter()
            .enumerate()
            .map(|(i, item)| {
                let s = item
                    .as_str()
                    .ok_or_else(|| self.wrong(&format!("{key}[{i}]"), "a string", item))?;
                if s.len() > STR_MAX_BYTES {
                    return Err(self.too_long(
                        &format!("{key}[{i}]"),
                        s.len(),
                        STR_MAX_BYTES,
                        "bytes",
                    ));
                }
                Ok(s)
            })
            .collect::<Result<Vec<_>>>()
            .map(Some)
    }

    /// A JSON object, as it is.
    pub fn map(&self, key: &str) -> Result<Option<&'a Map<String, Value>>> {
        match self.get(key) {
            None => Ok(None),
            Some(Value::Object(m)) => Ok(Some(m)),
            Some(v) => Err(self.wrong(key, "an object", v)),
        }
    }

    /// One of a fixed set of strings.
    pub fn choice(&self, key: &str, allowed: &[&'static str]) -> Result<Option<&'static str>> {
        let Some(s) = self.str(key)? else {
            return Ok(None);
        };
        allowed
            .iter()
            .find(|a| **a == s)
            .copied()
            .map(Some)
            .ok_or_else(|| {
                let name = self.name(key);
                Error::invalid_parameter(
                    &name,
                    format!("`{name}` must be one of {}, got `{s}`", allowed.join("|")),
                )
                .with("allowed", allowed.to_vec())
            })
    }

    /// An array of `{start_line, end_line}` objects (both required integers
    /// >= 1, `start_line <= end_line`), named `key[i].start_line` in errors.
    pub fn line_ranges(&self, key: &str) -> Result<Option<Vec<(i64, i64)>>> {
        let Some(v) = self.get(key) else {
            return Ok(None);
        };
        let Value::Array(items) = v else {
            return Err(self.wrong(key, "an array of {start_line, end_line}", v));
        };
        let base = self.name(key);
        let mut out = Vec::with_capacity(items.len());
        for (i, item) in items.iter().enumerate() {
            let at = format!("{base}[{i}]");
            let Value::Object(map) = item else {
                return Err(Error::invalid_parameter(
                    &at,
                    format!(
                        "`{at}` must be an object {{start_line, end_line}}, not {}",
                        type_name(item)
                    ),
                ));
            };
            let line = |k: &str| -> Result<i64> {
                let name = format!("{at}.{k}");
                match map.get(k).filter(|v| !v.is_null()) {
                    None => Err(Error::invalid_parameter(
                        &name,
                        format!("`{name}` is required"),
                    )),
                    Some(v) => match as_integer(v) {
                        Some(n) if n >= 1 => Ok(n),
                        Some(n) => Err(Error::invalid_parameter(
                            &name,
                            format!("`{name}` must be >= 1, got {n}"),
                        )),
                        None => Err(Error::invalid_parameter(
                            &name,
                            format!("`{name}` must be an integer, not {}", type_name(v)),
                        )),
                    },
                }
            };
            let (start, end) = (line("start_line")?, line("end_line")?);
            if start > end {
                return Err(Error::invalid_parameter(
                    &at,
                    format!("`{at}`: start_line {start} is after end_line {end}"),
                ));
            }
            out.push((start, end));
        }
        Ok(Some(out))
    }

    /// A nested object, read with the same rules.
    pub fn obj(&self, key: &'a str) -> Result<Option<Args<'a>>> {
        match self.get(key) {
            None => Ok(None),
            Some(Value::Object(map)) => Ok(Some(Args {
                map,
                // Names are dotted one level deep (`range.start_line`): the
                // seeds nest no deeper.
                prefix: key,
            })),
            Some(v) => Err(self.wrong(key, "an object", v)),
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::error::Code;
    use serde_json::json;

    fn with(v: Value, f: impl FnOnce(Args) -> Result<()>) -> Result<()> {
        f(Args::new(v.as_object()))
    }

    #[test]
    fn booleans_are_not_numbers() {
        let e = with(json!({"n": true}), |a| a.int("n", 1).map(|_| ())).unwrap_err();
        assert_eq!(e.code, Code::InvalidParameter);
        assert_eq!(e.details["parameter"], "n");
    }

    #[test]
    fn strings_are_not_numbers_except_lenient() {
        assert!(with(json!({"n": "5"}), |a| a.int("n", 1).map(|_| ())).is_err());
        with(json!({"n": "5"}), |a| {
            assert_eq!(a.int_lenient("n", 1)?, Some(5));
            Ok(())
        })
        .unwrap();
        with(json!({"n": 100.0}), |a| {
            assert_eq!(a.int_lenient("n", 1)?, Some(100));
            Ok(())
        })
        .unwrap();
        assert!(with(json!({"n": "x"}), |a| a.int_lenient("n", 1).map(|_| ())).is_err());
        assert!(with(json!({"n": true}), |a| a.int_lenient("n", 1).map(|_| ())).is_err());
    }

    #[test]
    fn null_is_absent_and_minimums_hold() {
        with(json!({"n": null}), |a| {
            assert_eq!(a.int("n", 1)?, None);
            Ok(())
        })
        .unwrap();
        assert!(with(json!({"n": 0}), |a| a.int("n", 1).map(|_| ())).is_err());
        assert!(with(json!({"n": 2.5}), |a| a.int("n", 1).map(|_| ())).is_err());
    }

    #[test]
    fn nested_names_are_dotted() {
        let e = with(json!({"range": {"start_line": false}}), |a| {
            a.obj("range")?.unwrap().int("start_line", 1).map(|_| ())
        })
        .unwrap_err();
        assert_eq!(e.details["parameter"], "range.start_line");
    }
}
