//! The functions: global ones (`date()`, `link()`, `max()`), and those
//! called on a value (`x.lower()`, `list.contains(y)`, `file.hasTag("a")`)
//! by the kind of value they are called on; on a
//! missing value each gives null (so `!status.contains("x")` holds for a
//! note without `status`), except `isEmpty` (true) and `isTruthy`
//! (false).

use std::collections::HashSet;

use super::Fault;
use std::cmp::Ordering;

use super::env::Env;
use super::time::{self, Date};
use super::value::{LinkVal, Val, compare};
use super::value::{heavy, link_text, sorted};

fn fault(message: impl Into<String>, at: usize) -> Fault {
    Fault::new(message, at)
}

/// The longest text a function makes.
const MAX_TEXT: usize = 1 << 20;

fn text_arg(env: &Env<'_>, a: &[Val], k: usize, m: &str, at: usize) -> Result<String, Fault> {
    match a.get(k) {
        Some(Val::Null) | None => Err(fault(format!("`{m}()` takes a text"), at)),
        Some(v) => Ok(env.text(v)),
    }
}

fn num_arg(a: &[Val], k: usize, m: &str, at: usize) -> Result<Option<f64>, Fault> {
    match a.get(k) {
        None | Some(Val::Null) => Ok(None),
        Some(Val::Num(n)) => Ok(Some(*n)),
        Some(v) => Err(fault(
            format!("`{m}()` takes a number, not a {}", v.type_name()),
            at,
        )),
    }
}

/// JavaScript's `slice(start, end)` bounds over `len` items: negatives
/// count from the end.
fn bounds(len: usize, start: Option<f64>, end: Option<f64>) -> (usize, usize) {
    let at = |x: f64| -> usize {
        let x = x.trunc();
        if x < 0.0 {
            (len as f64 + x).max(0.0) as usize
        } else {
            (x as usize).min(len)
        }
    };
    let s = start.map_or(0, at);
    let e = end.map_or(len, at);
    (s, e.max(s))
}

pub fn method(env: &Env<'_>, v: Val, m: &str, a: &[Val], at: usize) -> Result<Val, Fault> {
    // Functions of any value.
    match m {
        "isTruthy" => return Ok(Val::Bool(v.truthy())),
        "isEmpty" => return Ok(Val::Bool(v.is_empty())),
        "toString" => return Ok(Val::Str(env.text(&v))),
        "isType" => {
            let t = text_arg(env, a, 0, m, at)?;
            return Ok(Val::Bool(
                v.type_name() == t || (t == "text" && matches!(v, Val::Str(_))),
            ));
        }
        _ => {}
    }
    let kind = v.type_name();
    let wrong = || fault(format!("`{m}()` does not apply to a {kind}"), at);
    Ok(match v {
        Val::Null => Val::Null,
        Val::Date(d) => match m {
            "date" => Val::Date(d.day()),
            "format" => Val::Str(d.format(&text_arg(env, a, 0, m, at)?)),
            "time" => Val::Str(d.time_of_day()),
            "relative" => Val::Str(d.relative(env.now())),
            _ => return Err(wrong()),
        },
        Val::Str(s) => string(env, &s, m, a, at)?,
        Val::Num(n) => match m {
            "abs" => Val::Num(n.abs()),
            "ceil" => Val::Num(n.ceil()),
            "floor" => Val::Num(n.floor()),
            "round" => {
                let digits = num_arg(a, 0, m, at)?.unwrap_or(0.0).clamp(0.0, 15.0);
                let p = 10f64.powi(digits as i32);
                // JavaScript rounds halves up, towards +∞.
                Val::Num((n * p + 0.5).floor() / p)
            }
            "toFixed" => {
                let digits = num_arg(a, 0, m, at)?.unwrap_or(0.0).clamp(0.0, 100.0) as usize;
                Val::Str(to_fixed(n, digits))
            }
            _ => return Err(wrong()),
        },
        Val::List(items) => list(env, items, m, a, at)?,
        Val::Obj(o) => match m {
            "keys" => Val::List(o.into_iter().map(|(k, _)| Val::Str(k)).collect()),
            "values" => Val::List(o.into_iter().map(|(_, v)| v).collect()),
            _ => return Err(wrong()),
        },
        Val::Regex(re, _) => match m {
            "matches" => Val::Bool(re.is_match(&text_arg(env, a, 0, m, at)?)),
            _ => return Err(wrong()),
        },
        Val::Link(ref l) => match m {
            "asFile" => env.file_of(&v).map_or(Val::Null, Val::File),
            "linksTo" => {
                let other = a
                    .first()
                    .ok_or_else(|| fault("`linksTo()` takes a file", at))?;
                env.file_of(&v)
                    .is_some_and(|f| env.links_to(f, other))
                    .into()
            }
            // A link read as its text.
            _ => string(env, &l.target, m, a, at)?,
        },
        Val::File(f) => match m {
            "asLink" => Val::Link(Box::new(LinkVal {
                target: env.path(f).to_owned(),
                display: a.first().map(|d| env.text(d)),
                from: None,
            })),
            "hasLink" => {
                let other = a
                    .first()
                    .ok_or_else(|| fault("`hasLink()` takes a file or a path", at))?;
                env.links_to(f, other).into()
            }
            "hasProperty" => env.has_property(f, &text_arg(env, a, 0, m, at)?).into(),
            "hasTag" => env.tagged(f, a).into(),
            "inFolder" => {
                let folder = text_arg(env, a, 0, m, at)?;
                let folder = folder.trim_matches('/');
                (folder.is_empty() || env.path(f).starts_with(&format!("{folder}/"))).into()
            }
            _ => return Err(wrong()),
        },
        Val::Bool(_) | Val::Dur(_) => return Err(wrong()),
    })
}

/// A global function (`now()`, `date(x)`, `link(p)`, ...) of its evaluated
/// arguments; `if()`, which evaluates one branch only, is the evaluator's.
pub fn global(env: &Env<'_>, f: &str, a: &[Val], at: usize) -> Result<Val, Fault> {
    let one = |n: &str| -> Result<&Val, Fault> {
        a.first()
            .ok_or_else(|| fault(format!("`{n}()` takes a value"), at))
    };
    Ok(match f {
        "now" => Val::Date(Date::from_ms(env.now(), true)),
        "today" => Val::Date(time::today(env.now())),
        "date" => match one(f)? {
            Val::Null => Val::Null,
            v => Val::Date(v.as_date().ok_or_else(|| {
                fault(
                    format!(
                        "`date({})`: not a date (write YYYY-MM-DD HH:mm:ss)",
                        env.text(v)
                    ),
                    at,
                )
            })?),
        },
        "duration" => {
            let v = one(f)?;
            Val::Dur(v.as_dur().ok_or_else(|| {
                fault(
                    format!(
                        "`duration({})`: not a duration such as \"1 week\"",
                        env.text(v)
                    ),
                    at,
                )
            })?)
        }
        "number" => match one(f)? {
            Val::Null => Val::Null,
            Val::Num(n) => Val::Num(*n),
            Val::Bool(b) => Val::Num(f64::from(*b as u8)),
            Val::Date(d) => Val::Num(d.ms as f64),
            Val::Dur(d) => Val::Num(d.approx_ms()),
            Val::Str(s) => Val::Num(
                s.trim()
                    .parse::<f64>()
                    .map_err(|_| fault(format!("`number(\"{s}\")`: not a number"), at))?,
            ),
            v => return Err(fault(format!("`number()` of a {}", v.type_name()), at)),
        },
        "list" => match one(f)? {
            Val::List(l) => Val::List(l.clone()),
            Val::Null => Val::List(Vec::new()),
            v => Val::List(vec![v.clone()]),
        },
        "max" | "min" => {
            let nums = a.iter().filter(|v| !matches!(v, Val::Null));
            let pick = if f == "max" {
                Ordering::Greater
            } else {
                Ordering::Less
            };
            let mut best: Option<Val> = None;
            for v in nums {
                if compare(v, v).is_none() {
                    return Err(fault(
                        format!("`{f}()` compares numbers or dates, not a {}", v.type_name()),
                        at,
                    ));
                }
                if best.as_ref().is_none_or(|b| compare(v, b) == Some(pick)) {
                    best = Some(v.clone());
                }
            }
            best.unwrap_or(Val::Null)
        }
        "file" => env.file_of(one(f)?).map_or(Val::Null, Val::File),
        "link" => {
            let target = match one(f)? {
                Val::File(file) => env.path(*file).to_owned(),
                v => env.text(v),
            };
            Val::Link(Box::new(LinkVal {
                target: link_text(&target).to_owned(),
                display: a.get(1).map(|d| env.text(d)),
                from: None,
            }))
        }
        "escapeHTML" => Val::Str(
            env.text(one(f)?)
                .replace('&', "&amp;")
                .replace('<', "&lt;")
                .replace('>', "&gt;")
                .replace('"', "&quot;")
                .replace('\'', "&#39;"),
        ),
        // Values a view renders: here, their text.
        "html" | "icon" | "image" => Val::Str(env.text(one(f)?)),
        other => {
            return Err(fault(
                format!("`{other}()` is not a Bases function kura supports"),
                at,
            ));
        }
    })
}

impl From<bool> for Val {
    fn from(b: bool) -> Val {
        Val::Bool(b)
    }
}

fn string(env: &Env<'_>, s: &str, m: &str, a: &[Val], at: usize) -> Result<Val, Fault> {
    let arg = |k| text_arg(env, a, k, m, at);
    let all_texts = || -> Result<Vec<String>, Fault> {
        if a.is_empty() {
            return Err(fault(format!("`{m}()` takes one or more texts"), at));
        }
        Ok(a.iter().map(|v| env.text(v)).collect())
    };
    Ok(match m {
        "contains" => s.contains(&arg(0)?).into(),
        "containsAll" => all_texts()?.iter().all(|t| s.contains(t.as_str())).into(),
        "containsAny" => all_texts()?.iter().any(|t| s.contains(t.as_str())).into(),
        "startsWith" => s.starts_with(&arg(0)?).into(),
        "endsWith" => s.ends_with(&arg(0)?).into(),
        "lower" => Val::Str(s.to_lowercase()),
        "trim" => Val::Str(s.trim().to_owned()),
        "reverse" => Val::Str(s.chars().rev().collect()),
        "title" => Val::Str(
            s.split(' ')
                .map(|w| {
                    let mut c = w.chars();
                    c.next()
                        .map(|f| f.to_uppercase().chain(c).collect::<String>())
                        .unwrap_or_default()
                })
                .collect::<Vec<_>>()
                .join(" "),
        ),
        "repeat" => {
            let n = num_arg(a, 0, m, at)?.unwrap_or(0.0).max(0.0) as usize;
            if s.len().saturating_mul(n) > MAX_TEXT {
                return Err(fault("`repeat()` would make a text over 1 MiB", at));
            }
            Val::Str(s.repeat(n))
        }
        "slice" => {
            let chars: Vec<char> = s.chars().collect();
            let (b, e) = bounds(chars.len(), num_arg(a, 0, m, at)?, num_arg(a, 1, m, at)?);
            Val::Str(chars[b..e].iter().collect())
        }
        "replace" => {
            let with = arg(1)?;
            // The most the text can grow to, before it is built.
            let times = match a.first() {
                Some(Val::Regex(re, true)) => re.find_iter(s).count(),
                Some(Val::Regex(..)) => 1,
                _ => {
                    let p = arg(0)?;
                    if p.is_empty() {
                        s.chars().count() + 1
                    } else {
                        s.matches(p.as_str()).count()
                    }
                }
            };
            if s.len().saturating_add(times.saturating_mul(with.len())) > MAX_TEXT {
                return Err(fault("`replace()` would make a text over 1 MiB", at));
            }
            // `$1`, `$<name>`, `$&`, `` $` ``, `$'` and `$$` as JavaScript
            // expands them.
            match a.first() {
                Some(Val::Regex(re, global)) => Val::Str(replaced(re, s, &with, *global, at)?),
                _ if with.contains('$') => {
                    let re = regex::Regex::new(&regex::escape(&arg(0)?))
                        .map_err(|e| fault(format!("`replace()`: {e}"), at))?;
                    Val::Str(replaced(&re, s, &with, true, at)?)
                }
                _ => Val::Str(s.replace(&arg(0)?, &with)),
            }
        }
        "split" => {
            let parts: Vec<String> = match a.first() {
                Some(Val::Regex(re, _)) => re.split(s).map(str::to_owned).collect(),
                _ => {
                    let sep = arg(0)?;
                    if sep.is_empty() {
                        s.chars().map(String::from).collect()
                    } else {
                        s.split(sep.as_str()).map(str::to_owned).collect()
                    }
                }
            };
            let n = num_arg(a, 1, m, at)?.map_or(usize::MAX, |n| n.max(0.0) as usize);
            heavy(
                Val::List(parts.into_iter().take(n).map(Val::Str).collect()),
                at,
            )?
        }
        _ => return Err(fault(format!("`{m}()` does not apply to a string"), at)),
    })
}

fn list(env: &Env<'_>, items: Vec<Val>, m: &str, a: &[Val], at: usize) -> Result<Val, Fault> {
    let has = |x: &Val| items.iter().any(|i| env.equal(i, x));
    Ok(match m {
        "contains" => has(a.first().unwrap_or(&Val::Null)).into(),
        "containsAll" => a.iter().all(has).into(),
        "containsAny" => a.iter().any(has).into(),
        "join" => {
            let sep = match a.first() {
                Some(v) => env.text(v),
                None => ",".to_owned(),
            };
            let parts: Vec<String> = items.iter().map(|v| env.text(v)).collect();
            let len = parts.iter().map(String::len).sum::<usize>()
                + sep.len().saturating_mul(parts.len().saturating_sub(1));
            if len > MAX_TEXT {
                return Err(fault("`join()` would make a text over 1 MiB", at));
            }
            Val::Str(parts.join(&sep))
        }
        "reverse" => Val::List(items.into_iter().rev().collect()),
        "sort" => Val::List(sorted(items)),
        "flat" => Val::List(
            items
                .into_iter()
                .flat_map(|v| match v {
                    Val::List(inner) => inner,
                    v => vec![v],
                })
                .collect(),
        ),
        "unique" => {
            let mut seen = HashSet::new();
            let mut out: Vec<Val> = Vec::new();
            for v in items {
                let same = env.canonical(v.clone());
                let key =
                    serde_json::to_string(&env.json_of(&same)).unwrap_or_default() + v.type_name();
                if seen.insert(key) {
                    out.push(v);
                }
            }
            Val::List(out)
        }
        "slice" => {
            let (b, e) = bounds(items.len(), num_arg(a, 0, m, at)?, num_arg(a, 1, m, at)?);
            Val::List(items[b..e].to_vec())
        }
        "mean" => {
            let nums: Vec<f64> = items.iter().filter_map(Val::as_num).collect();
            if nums.is_empty() {
                Val::Null
            } else {
                Val::Num(nums.iter().sum::<f64>() / nums.len() as f64)
            }
        }
        // filter, map and reduce are evaluated per item before this.
        _ => return Err(fault(format!("`{m}()` does not apply to a list"), at)),
    })
}

/// A replacement as JavaScript's `String.prototype.replace` expands it for
/// match `c` in `text`, added to `out`: `$$` a `$`, `$&` the match, `` $` ``
/// and `$'` the text before and after it, `$n` and `$nn` a group (when the
/// pattern has it; otherwise the characters as they are), `$<name>` a named
/// group (kept as written when the pattern names none). False as soon as
/// `out` passes 1 MiB: each `$'` may copy the rest of the text.
fn js_replacement(
    with: &str,
    c: &regex::Captures,
    named: bool,
    text: &str,
    out: &mut String,
) -> bool {
    let whole = c.get(0).expect("a match");
    let b = with.as_bytes();
    let mut i = 0;
    while i < b.len() {
        if out.len() > MAX_TEXT {
            return false;
        }
        if b[i] != b'$' || i + 1 == b.len() {
            let ch = with[i..].chars().next().expect("in bounds");
            out.push(ch);
            i += ch.len_utf8();
            continue;
        }
        match b[i + 1] {
            b'$' => {
                out.push('$');
                i += 2;
            }
            b'&' => {
                out.push_str(whole.as_str());
                i += 2;
            }
            b'`' => {
                out.push_str(&text[..whole.start()]);
                i += 2;
            }
            b'\'' => {
                out.push_str(&text[whole.end()..]);
                i += 2;
            }
            b'<' if named => match with[i + 2..].find('>') {
                Some(end) => {
                    let name = &with[i + 2..i + 2 + end];
                    out.push_str(c.name(name).map_or("", |m| m.as_str()));
                    i += end + 3;
                }
                None => {
                    out.push('$');
                    i += 1;
                }
            },
            d if d.is_ascii_digit() => {
                // Two digits when that group exists, else one.
                let two = b
                    .get(i + 2)
                    .filter(|e| e.is_ascii_digit())
                    .map(|e| usize::from(d - b'0') * 10 + usize::from(e - b'0'))
                    .filter(|&n| n >= 1 && n < c.len());
                let one = usize::from(d - b'0');
                match two {
                    Some(n) => {
                        out.push_str(c.get(n).map_or("", |m| m.as_str()));
                        i += 3;
                    }
                    None if one >= 1 && one < c.len() => {
                        out.push_str(c.get(one).map_or("", |m| m.as_str()));
                        i += 2;
                    }
                    None => {
                        out.push('$');
                        i += 1;
                    }
                }
            }
            _ => {
                out.push('$');
                i += 1;
            }
        }
    }
    out.len() <= MAX_TEXT
}

/// `text` with the matches of `re` (the first, or all when `global`)
/// replaced as JavaScript expands `with`; a fault as soon as the text
/// would pass 1 MiB.
pub(super) fn replaced(
    re: &regex::Regex,
    text: &str,
    with: &str,
    global: bool,
    at: usize,
) -> Result<String, Fault> {
    let named = re.capture_names().flatten().next().is_some();
    let mut out = String::with_capacity(text.len());
    let mut last = 0;
    for c in re
        .captures_iter(text)
        .take(if global { usize::MAX } else { 1 })
    {
        let m = c.get(0).expect("a match");
        out.push_str(&text[last..m.start()]);
        last = m.end();
        if !js_replacement(with, &c, named, text, &mut out) {
            return Err(fault("`replace()` would make a text over 1 MiB", at));
        }
    }
    out.push_str(&text[last..]);
    Ok(out)
}

/// `n.toFixed(digits)` as JavaScript writes it: the nearest number of
/// `digits` decimals to the exact value of `n`, a half rounded away from
/// zero (`(1.25).toFixed(1)` is `1.3`, `(2.5).toFixed(0)` is `3`; Rust's
/// formatting rounds halves to even). Past 10²¹, as `toString()`.
fn to_fixed(n: f64, digits: usize) -> String {
    if !n.is_finite() || n.abs() >= 1e21 {
        return super::value::num_text(n);
    }
    // Exact digits well past the last kept one: the first dropped digit
    // decides (an exact double never hides a 5 behind 40 more digits).
    const MORE: usize = 40;
    let exact = format!("{:.*}", digits + MORE, n.abs());
    let (kept, dropped) = exact.split_at(exact.len() - MORE);
    let mut out: Vec<u8> = kept.trim_end_matches('.').as_bytes().to_vec();
    if dropped.as_bytes()[0] >= b'5' {
        let mut carry = true;
        for b in out.iter_mut().rev() {
            match *b {
                b'.' => continue,
                b'9' => *b = b'0',
                d => {
                    *b = d + 1;
                    carry = false;
                    break;
                }
            }
        }
        if carry {
            out.insert(0, b'1');
        }
    }
    let text = String::from_utf8(out).expect("digits");
    if n < 0.0 { format!("-{text}") } else { text }
}
