//! The tokens of a Bases expression: numbers, quoted strings, regular
//! expressions (`/abc/g`), names, and operators, each with the column
//! (1-based, in characters) it starts at.

use super::Fault;

#[derive(Clone, Debug, PartialEq)]
pub enum Tok {
    Num(f64),
    Str(String),
    /// A pattern and its flags.
    Regex(String, String),
    Name(String),
    /// An operator or a bracket.
    Op(&'static str),
    End,
}

#[derive(Clone, Debug, PartialEq)]
pub struct Token {
    pub tok: Tok,
    pub at: usize,
}

/// Longest first, so that `>=` is not read as `>` then `=`.
const OPS: &[&str] = &[
    "&&", "||", "==", "!=", ">=", "<=", "+", "-", "*", "/", "%", "(", ")", "[", "]", ",", ".", "!",
    ">", "<", "{", "}", ":", "=",
];

fn is_name_start(c: char) -> bool {
    c.is_alphabetic() || c == '_' || c == '$'
}

fn is_name_char(c: char) -> bool {
    c.is_alphanumeric() || c == '_' || c == '$'
}

/// Whether a `/` after this token divides (it follows a value) rather than
/// opening a regular expression.
fn ends_value(t: Option<&Token>) -> bool {
    matches!(
        t.map(|t| &t.tok),
        Some(Tok::Num(_) | Tok::Str(_) | Tok::Regex(..) | Tok::Name(_) | Tok::Op(")" | "]"))
    )
}

pub fn tokens(text: &str) -> Result<Vec<Token>, Fault> {
    let chars: Vec<char> = text.chars().collect();
    let mut out: Vec<Token> = Vec::new();
    let mut i = 0;
    while i < chars.len() {
        let c = chars[i];
        let at = i + 1;
        if c.is_whitespace() {
            i += 1;
            continue;
        }
        if c.is_ascii_digit() || (c == '.' && chars.get(i + 1).is_some_and(char::is_ascii_digit)) {
            let start = i;
            while i < chars.len() && (chars[i].is_ascii_digit() || chars[i] == '.') {
                // `1.5` but not the `.` of `5.abs()`.
                if chars[i] == '.' && !chars.get(i + 1).is_some_and(char::is_ascii_digit) {
                    break;
                }
                i += 1;
            }
            let s: String = chars[start..i].iter().collect();
            let n = s
                .parse::<f64>()
                .map_err(|_| Fault::new(format!("`{s}` is not a number"), at))?;
            out.push(Token {
                tok: Tok::Num(n),
                at,
            });
            continue;
        }
        if c == '"' || c == '\'' {
            let (s, next) = string(&chars, i)?;
            out.push(Token {
                tok: Tok::Str(s),
                at,
            });
            i = next;
            continue;
        }
        if c == '/' && !ends_value(out.last()) {
            let (re, next) = regex(&chars, i)?;
            out.push(Token { tok: re, at });
            i = next;
            continue;
        }
        if is_name_start(c) {
            let start = i;
            while i < chars.len() && is_name_char(chars[i]) {
                i += 1;
            }
            let s: String = chars[start..i].iter().collect();
            out.push(Token {
                tok: Tok::Name(s),
                at,
            });
            continue;
        }
        let rest: String = chars[i..chars.len().min(i + 2)].iter().collect();
        let Some(op) = OPS.iter().find(|op| rest.starts_with(**op)) else {
            return Err(Fault::new(
                format!("`{c}` is not part of the Bases syntax"),
                at,
            ));
        };
        out.push(Token {
            tok: Tok::Op(op),
            at,
        });
        i += op.chars().count();
    }
    out.push(Token {
        tok: Tok::End,
        at: chars.len() + 1,
    });
    Ok(out)
}

/// A quoted string from `chars[i]` (its quote) with `\` escapes, and where
/// the text goes on.
fn string(chars: &[char], i: usize) -> Result<(String, usize), Fault> {
    let quote = chars[i];
    let mut s = String::new();
    let mut j = i + 1;
    while j < chars.len() {
        match chars[j] {
            '\\' if j + 1 < chars.len() => {
                s.push(match chars[j + 1] {
                    'n' => '\n',
                    't' => '\t',
                    other => other,
                });
                j += 2;
            }
            c if c == quote => return Ok((s, j + 1)),
            c => {
                s.push(c);
                j += 1;
            }
        }
    }
    Err(Fault::new("a string that is never closed", i + 1))
}

/// A regular expression `/pattern/flags` from `chars[i]`.
fn regex(chars: &[char], i: usize) -> Result<(Tok, usize), Fault> {
    let mut pattern = String::new();
    let mut j = i + 1;
    let mut in_class = false;
    while j < chars.len() {
        match chars[j] {
            '\\' if j + 1 < chars.len() => {
                pattern.push('\\');
                pattern.push(chars[j + 1]);
                j += 2;
                continue;
            }
            '[' => in_class = true,
            ']' => in_class = false,
            '/' if !in_class => {
                let mut k = j + 1;
                let mut flags = String::new();
                while k < chars.len() && chars[k].is_ascii_alphabetic() {
                    flags.push(chars[k]);
                    k += 1;
                }
                return Ok((Tok::Regex(pattern, flags), k));
            }
            _ => {}
        }
        pattern.push(chars[j]);
        j += 1;
    }
    Err(Fault::new(
        "a regular expression that is never closed",
        i + 1,
    ))
}

#[cfg(test)]
mod tests {
    use super::*;

    fn toks(s: &str) -> Vec<Tok> {
        tokens(s).unwrap().into_iter().map(|t| t.tok).collect()
    }

    #[test]
    fn a_slash_divides_after_a_value_and_opens_a_pattern_elsewhere() {
        assert_eq!(
            toks("(a / 2)"),
            [
                Tok::Op("("),
                Tok::Name("a".into()),
                Tok::Op("/"),
                Tok::Num(2.0),
                Tok::Op(")"),
                Tok::End
            ]
        );
        assert_eq!(
            toks("/a[/]b/g.matches(x)")[0],
            Tok::Regex("a[/]b".into(), "g".into())
        );
    }

    #[test]
    fn numbers_strings_and_operators_keep_their_columns() {
        let t = tokens("price >= 2.5 && 'it\\'s' != \"x\"").unwrap();
        let cols: Vec<usize> = t.iter().map(|t| t.at).collect();
        assert_eq!(cols, [1, 7, 10, 14, 17, 25, 28, 31]);
        assert_eq!(t[4].tok, Tok::Str("it's".into()));
        assert_eq!(
            toks("5.abs()")[..3],
            [Tok::Num(5.0), Tok::Op("."), Tok::Name("abs".into())]
        );
    }

    #[test]
    fn an_unclosed_string_names_where_it_starts() {
        let e = tokens("a == \"open").unwrap_err();
        assert_eq!(e.at, 6);
        assert!(tokens("a # b").is_err());
    }
}
