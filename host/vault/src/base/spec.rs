//! A base as its YAML says it (Obsidian's published Bases syntax): read
//! whole before anything is evaluated, so that a construct kura does not
//! support, an unknown formula or a malformed filter is refused with where
//! it is (`views[1].filters.and[0]`, column 12), never skipped.

use serde_json::{Map, Value};

use crate::error::{Error, Result};
use crate::expr::env::Env;
use crate::expr::eval::{Row, Vars};
use crate::expr::parse::{Ex, Node};
use crate::expr::value::{Val, compare, sort_order};
use crate::expr::{self, walk};

/// A filter: one statement, or `and`/`or`/`not` of more.
pub enum Cond {
    /// The statement and its text.
    Expr(Ex, String),
    And(Vec<Cond>),
    Or(Vec<Cond>),
    /// None of them.
    Not(Vec<Cond>),
}

pub struct SortBy {
    pub id: String,
    pub by: Ex,
    pub desc: bool,
}

pub struct View {
    pub kind: String,
    pub name: String,
    pub filters: Option<Cond>,
    /// The columns: each property's id and the expression reading it.
    pub order: Vec<(String, Ex)>,
    pub sort: Vec<SortBy>,
    pub group: Option<SortBy>,
    pub limit: Option<usize>,
    /// Column id → the summary's name.
    pub summaries: Vec<(String, String)>,
}

pub struct Base {
    pub filters: Option<Cond>,
    pub formulas: Vec<(String, Ex)>,
    display: Map<String, Value>,
    /// The base's own summary formulas, over `values`.
    custom: Vec<(String, Ex)>,
    pub views: Vec<View>,
}

fn bad(at: &str, message: impl std::fmt::Display) -> Error {
    Error::invalid_parameter("path", format!("{message} (at `{at}` of the base)")).with("at", at)
}

/// A YAML scalar as the expression text it stands for.
fn statement(v: &Value) -> Option<String> {
    match v {
        Value::String(s) => Some(s.clone()),
        Value::Bool(b) => Some(b.to_string()),
        Value::Number(n) => Some(n.to_string()),
        _ => None,
    }
}

fn parse_expr(text: &str, at: &str, summary: bool) -> Result<Ex> {
    expr::parse(text, summary).map_err(|f| {
        bad(at, format!("{} (column {} of `{text}`)", f.message, f.at)).with("column", f.at)
    })
}

fn cond(v: &Value, at: &str) -> Result<Cond> {
    if let Some(text) = statement(v) {
        return Ok(Cond::Expr(parse_expr(&text, at, false)?, text));
    }
    let Value::Object(m) = v else {
        return Err(bad(
            at,
            "a filter is a statement, or one of `and`, `or`, `not` with a list",
        ));
    };
    let mut keys = m.keys();
    let (Some(key), None) = (keys.next(), keys.next()) else {
        return Err(bad(
            at,
            "a filter object has exactly one key: `and`, `or` or `not`",
        ));
    };
    let items = match &m[key] {
        Value::Array(a) => a.clone(),
        // `not: statement` reads as a list of one.
        one => vec![one.clone()],
    };
    let list = items
        .iter()
        .enumerate()
        .map(|(i, x)| cond(x, &format!("{at}.{key}[{i}]")))
        .collect::<Result<Vec<_>>>()?;
    match key.as_str() {
        "and" => Ok(Cond::And(list)),
        "or" => Ok(Cond::Or(list)),
        "not" => Ok(Cond::Not(list)),
        other => Err(bad(
            at,
            format!("`{other}` is not a filter: write `and`, `or` or `not`"),
        )),
    }
}

fn property(id: &str, at: &str) -> Result<Ex> {
    expr::property(id).map_err(|f| bad(at, f.message))
}

fn sort_by(v: &Value, at: &str) -> Result<SortBy> {
    let (id, dir) = match v {
        Value::String(s) => (s.clone(), None),
        Value::Object(m) => {
            let Some(id) = m.get("property").and_then(Value::as_str) else {
                return Err(bad(at, "a sort or group names its `property`"));
            };
            (
                id.to_owned(),
                m.get("direction")
                    .and_then(Value::as_str)
                    .map(str::to_owned),
            )
        }
        _ => return Err(bad(at, "a sort or group is `{property, direction}`")),
    };
    let desc = match dir.as_deref().map(str::to_ascii_uppercase).as_deref() {
        None | Some("ASC") => false,
        Some("DESC") => true,
        Some(other) => return Err(bad(at, format!("direction `{other}`: write ASC or DESC"))),
    };
    Ok(SortBy {
        by: property(&id, at)?,
        id,
        desc,
    })
}

fn list_of<T>(
    v: Option<&Value>,
    at: &str,
    what: &str,
    one: impl Fn(&Value, &str) -> Result<T>,
) -> Result<Vec<T>> {
    match v {
        None | Some(Value::Null) => Ok(Vec::new()),
        Some(Value::Array(a)) => a
            .iter()
            .enumerate()
            .map(|(i, x)| one(x, &format!("{at}[{i}]")))
            .collect(),
        Some(_) => Err(bad(at, format!("`{at}` is a list of {what}"))),
    }
}

fn view(v: &Value, k: usize) -> Result<View> {
    let at = format!("views[{k}]");
    let Value::Object(m) = v else {
        return Err(bad(&at, "a view is a mapping with `type` and `name`"));
    };
    let text = |key: &str| m.get(key).and_then(statement);
    // `filters:` with nothing after it is no filter, as Obsidian reads it.
    let filters = m
        .get("filters")
        .filter(|f| !f.is_null())
        .map(|f| cond(f, &format!("{at}.filters")))
        .transpose()?;
    let mut order = list_of(
        m.get("order"),
        &format!("{at}.order"),
        "properties",
        |x, here| {
            let id = statement(x).ok_or_else(|| bad(here, "a column is a property name"))?;
            Ok((property(&id, here)?, id))
        },
    )?
    .into_iter()
    .map(|(e, id)| (id, e))
    .collect::<Vec<_>>();
    if order.is_empty() {
        order.push(("file.name".to_owned(), property("file.name", &at)?));
    }
    let sort = match m.get("sort") {
        Some(Value::Object(_)) => vec![sort_by(&m["sort"], &format!("{at}.sort"))?],
        other => list_of(other, &format!("{at}.sort"), "sorts", sort_by)?,
    };
    let group = match m.get("groupBy") {
        None | Some(Value::Null) => None,
        Some(g) => Some(sort_by(g, &format!("{at}.groupBy"))?),
    };
    let limit = match m.get("limit") {
        None | Some(Value::Null) => None,
        Some(l) => Some(
            l.as_u64()
                .filter(|&n| n > 0)
                .ok_or_else(|| bad(&format!("{at}.limit"), "`limit` is a whole number above 0"))?
                as usize,
        ),
    };
    let summaries = match m.get("summaries") {
        None | Some(Value::Null) => Vec::new(),
        Some(Value::Object(s)) => s
            .iter()
            .map(|(id, how)| {
                statement(how).map(|h| (id.clone(), h)).ok_or_else(|| {
                    bad(
                        &format!("{at}.summaries.{id}"),
                        "a summary is named by a text",
                    )
                })
            })
            .collect::<Result<_>>()?,
        Some(_) => {
            return Err(bad(
                &format!("{at}.summaries"),
                "`summaries` maps columns to summaries",
            ));
        }
    };
    Ok(View {
        kind: text("type").unwrap_or_else(|| "table".to_owned()),
        name: text("name").unwrap_or_else(|| format!("View {}", k + 1)),
        filters,
        order,
        sort,
        group,
        limit,
        summaries,
    })
}

/// The summaries Obsidian has built in.
pub const BUILT_IN: &[&str] = &[
    "Average",
    "Min",
    "Max",
    "Sum",
    "Range",
    "Median",
    "Stddev",
    "Earliest",
    "Latest",
    "Checked",
    "Unchecked",
    "Empty",
    "Filled",
    "Unique",
];

fn named_map(v: Option<&Value>, at: &str, summary: bool) -> Result<Vec<(String, Ex)>> {
    match v {
        None | Some(Value::Null) => Ok(Vec::new()),
        Some(Value::Object(m)) => m
            .iter()
            .map(|(name, e)| {
                let here = format!("{at}.{name}");
                let text = statement(e).ok_or_else(|| bad(&here, "an expression is a text"))?;
                Ok((name.clone(), parse_expr(&text, &here, summary)?))
            })
            .collect(),
        Some(_) => Err(bad(at, format!("`{at}` maps names to expressions"))),
    }
}

impl Base {
    pub fn parse(text: &str) -> Result<Base> {
        let v: Value = serde_yaml_ng::from_str(text)
            .map_err(|e| Error::invalid_parameter("path", format!("the base is not YAML: {e}")))?;
        let m = match v {
            Value::Object(m) => m,
            Value::Null => Map::new(),
            _ => {
                return Err(bad(
                    "",
                    "a base is a mapping (filters, formulas, properties, views)",
                ));
            }
        };
        let filters = m
            .get("filters")
            .filter(|f| !f.is_null())
            .map(|f| cond(f, "filters"))
            .transpose()?;
        let formulas = named_map(m.get("formulas"), "formulas", false)?;
        let custom = named_map(m.get("summaries"), "summaries", true)?;
        let display = match m.get("properties") {
            Some(Value::Object(p)) => p.clone(),
            _ => Map::new(),
        };
        let mut views = list_of(m.get("views"), "views", "views", |v, here| {
            let k: usize = here
                .trim_start_matches("views[")
                .trim_end_matches(']')
                .parse()
                .unwrap_or(0);
            view(v, k)
        })?;
        if views.is_empty() {
            // A base without views shows its files as one table.
            views.push(view(&Value::Object(Map::new()), 0)?);
        }
        let base = Base {
            filters,
            formulas,
            display,
            custom,
            views,
        };
        base.check()?;
        Ok(base)
    }

    /// Every expression with where it is.
    fn expressions(&self) -> Vec<(&Ex, String)> {
        fn conds<'a>(c: &'a Cond, at: &str, out: &mut Vec<(&'a Ex, String)>) {
            match c {
                Cond::Expr(e, _) => out.push((e, at.to_owned())),
                Cond::And(l) | Cond::Or(l) | Cond::Not(l) => {
                    l.iter().for_each(|c| conds(c, at, out))
                }
            }
        }
        let mut out: Vec<(&Ex, String)> = self
            .formulas
            .iter()
            .map(|(n, e)| (e, format!("formulas.{n}")))
            .collect();
        if let Some(c) = &self.filters {
            conds(c, "filters", &mut out);
        }
        for (k, v) in self.views.iter().enumerate() {
            if let Some(c) = &v.filters {
                conds(c, &format!("views[{k}].filters"), &mut out);
            }
            out.extend(
                v.order
                    .iter()
                    .map(|(id, e)| (e, format!("views[{k}].order: {id}"))),
            );
            out.extend(
                v.sort
                    .iter()
                    .chain(&v.group)
                    .map(|s| (&s.by, format!("views[{k}]: {}", s.id))),
            );
        }
        out
    }

    /// Every `formula.x` names a formula, and every summary is built in or
    /// the base's own.
    fn check(&self) -> Result<()> {
        for (k, v) in self.views.iter().enumerate() {
            for (id, how) in &v.summaries {
                if !BUILT_IN.contains(&how.as_str()) && !self.custom.iter().any(|(n, _)| n == how) {
                    return Err(bad(
                        &format!("views[{k}].summaries.{id}"),
                        format!(
                            "`{how}` is neither a built-in summary ({}) nor one of the base's `summaries`",
                            BUILT_IN.join(", ")
                        ),
                    ));
                }
            }
        }
        for (e, at) in self.expressions() {
            let mut missing = None;
            walk(e, &mut |x| {
                if let Node::Formula(name) = &x.node
                    && !self.formulas.iter().any(|(n, _)| n == name)
                    && missing.is_none()
                {
                    missing = Some(name.clone());
                }
            });
            if let Some(name) = missing {
                return Err(bad(
                    &at,
                    format!("`formula.{name}` is not one of the base's `formulas`"),
                ));
            }
        }
        Ok(())
    }

    pub fn display_name(&self, id: &str) -> String {
        let plain = id.strip_prefix("note.").unwrap_or(id);
        [id, plain]
            .iter()
            .find_map(|k| {
                self.display
                    .get(*k)?
                    .get("displayName")?
                    .as_str()
                    .map(str::to_owned)
            })
            .unwrap_or_else(|| id.to_owned())
    }

    /// Summary `how` of a column's values.
    pub fn summary(&self, env: &Env<'_>, how: &str, vals: Vec<Val>) -> Result<Value> {
        if let Some((_, e)) = self.custom.iter().find(|(n, _)| n == how) {
            let values = Val::List(vals);
            // A summary reads `values` only: any file will do as its row.
            let row = Row::new(crate::expr::value::FileRef::Note(0), 0);
            return env
                .eval(e, &row, Vars::summary(&values))
                .map(|v| env.json_of(&v))
                .map_err(|f| {
                    f.stopped("the summary", how).unwrap_or_else(|| {
                        bad(
                            &format!("summaries.{how}"),
                            format!("{} (column {})", f.message, f.at),
                        )
                    })
                });
        }
        let nums: Vec<f64> = vals
            .iter()
            .filter_map(|v| if let Val::Num(n) = v { Some(*n) } else { None })
            .collect();
        let num = |n: Option<f64>| n.map_or(Value::Null, crate::expr::env::num_json);
        let count = |n: usize| Value::from(n as u64);
        let mut sorted = nums.clone();
        sorted.sort_by(|a, b| a.total_cmp(b));
        let mean = (!nums.is_empty()).then(|| nums.iter().sum::<f64>() / nums.len() as f64);
        let dates: Vec<&Val> = vals.iter().filter(|v| matches!(v, Val::Date(_))).collect();
        let pick = |want: std::cmp::Ordering| {
            dates
                .iter()
                .copied()
                .reduce(|a, b| if compare(b, a) == Some(want) { b } else { a })
                .map_or(Value::Null, |d| env.json_of(d))
        };
        Ok(match how {
            "Average" => num(mean),
            "Sum" => num(Some(nums.iter().sum())),
            "Min" => num(sorted.first().copied()),
            "Max" => num(sorted.last().copied()),
            "Range" => num(sorted.first().zip(sorted.last()).map(|(a, b)| b - a)),
            "Median" => num((!sorted.is_empty()).then(|| {
                let n = sorted.len();
                if n % 2 == 1 {
                    sorted[n / 2]
                } else {
                    (sorted[n / 2 - 1] + sorted[n / 2]) / 2.0
                }
            })),
            "Stddev" => num(mean.map(|m| {
                (nums.iter().map(|x| (x - m).powi(2)).sum::<f64>() / nums.len() as f64).sqrt()
            })),
            "Earliest" => pick(std::cmp::Ordering::Less),
            "Latest" => pick(std::cmp::Ordering::Greater),
            "Checked" => count(vals.iter().filter(|v| matches!(v, Val::Bool(true))).count()),
            "Unchecked" => count(
                vals.iter()
                    .filter(|v| matches!(v, Val::Bool(false)))
                    .count(),
            ),
            "Empty" => count(vals.iter().filter(|v| v.is_empty()).count()),
            "Filled" => count(vals.iter().filter(|v| !v.is_empty()).count()),
            "Unique" => {
                // Links by the file they resolve to, as `unique()` tells them.
                let same: Vec<Val> = vals.iter().map(|v| env.canonical(v.clone())).collect();
                let mut seen: Vec<&Val> = same.iter().filter(|v| !v.is_empty()).collect();
                seen.sort_by(|a, b| sort_order(a, b));
                seen.dedup_by(|a, b| sort_order(a, b) == std::cmp::Ordering::Equal);
                count(seen.len())
            }
            other => {
                return Err(Error::invalid_parameter(
                    "path",
                    format!("`{other}` is not a summary"),
                ));
            }
        })
    }
}

/// The text of each ```` ```base ```` block of a note, in order.
pub fn blocks(text: &str) -> Vec<String> {
    crate::text::markdown::fenced(text, &["base"])
        .into_iter()
        .map(|b| b.text)
        .collect()
}

#[cfg(test)]
mod tests {
    use super::*;

    fn refused(yaml: &str) -> String {
        match Base::parse(yaml) {
            Ok(_) => panic!("accepted: {yaml}"),
            Err(e) => e.message,
        }
    }

    #[test]
    fn what_kura_does_not_evaluate_is_refused_with_where_it_is() {
        let m = refused(
            "views:\n  - type: table\n    filters:\n      and:\n        - 'file.hasTag(\"a\")'\n        - 'price.sum() > 2'\n",
        );
        assert!(
            m.contains("`sum()`")
                && m.contains("views[0].filters.and[1]")
                && m.contains("column 7"),
            "{m}"
        );
        let m = refused("filters:\n  xor: [a, b]\n");
        assert!(m.contains("`xor`"), "{m}");
        let m = refused("views:\n  - type: table\n    order: [formula.nope]\n");
        assert!(m.contains("formula.nope"), "{m}");
        let m = refused("views:\n  - type: table\n    summaries:\n      price: Mode\n");
        assert!(m.contains("`Mode`"), "{m}");
        let m = refused("views:\n  - type: table\n    sort:\n      - column: due\n");
        assert!(m.contains("property"), "{m}");
        let m = refused("filters: 'a = 1'\n");
        assert!(m.contains("=="), "{m}");
    }

    /// `filters:` with no value, as a person leaves it after removing the
    /// last filter in Obsidian, is no filter (it was refused).
    #[test]
    fn an_empty_filters_key_is_no_filter() {
        let b = Base::parse("filters:\nviews:\n  - type: table\n    filters:\n").unwrap();
        assert!(b.filters.is_none() && b.views[0].filters.is_none());
    }

    #[test]
    fn base_blocks_are_found_in_a_note() {
        let t = "# Dash\n\n```base\nviews:\n  - type: table\n```\n\n```yaml\nx: 1\n```\n\n~~~base\nfilters: 'a'\n~~~\n";
        let b = blocks(t);
        assert_eq!(b.len(), 2);
        assert!(b[0].starts_with("views:"));
        assert!(b[1].starts_with("filters:"));
    }
}
