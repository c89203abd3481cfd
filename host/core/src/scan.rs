//! Reading a file piece by piece under the fixed character cap: the shared
//! engine of vault_scan and manual_scan (seeds 000 and 004), and the output
//! records they share.

use std::io::BufRead;

use schemars::JsonSchema;
use serde::Serialize;

use serde_json::{Value, json};

use crate::args::{Args, Input, Param, Rule};
use crate::error::{Error, Result};
use crate::text::{self, Lines};

/// A 1-based inclusive line range as the seeds print it.
#[derive(Clone, Copy, Debug, Serialize, JsonSchema, PartialEq, Eq)]
pub struct LineRange {
    pub start_line: u64,
    pub end_line: u64,
}

/// `{ "char_offset": n | null }`
#[derive(Clone, Copy, Debug, Serialize, JsonSchema)]
pub struct CharCursor {
    pub char_offset: Option<u64>,
}

#[derive(Debug, Serialize, JsonSchema)]
pub struct ScanApplied {
    pub max_chars: u64,
}

#[derive(Debug, Serialize, JsonSchema)]
pub struct ScanOutput {
    pub text: String,
    pub applied_range: LineRange,
    pub next_cursor: CharCursor,
    pub eof: bool,
    pub truncated: bool,
    /// `none` or `max_chars`.
    pub truncated_reason: String,
    pub applied: ScanApplied,
}

/// Where a scan starts, as the arguments said (validated against the file later).
#[derive(Clone, Copy, Debug)]
pub enum ScanStart {
    /// `start_line` (wins) or `cursor.start_line`; the flag says which.
    Line {
        line: i64,
        from_cursor: bool,
    },
    /// `cursor.char_offset` (or 004's number|string shorthand).
    Offset(i64),
    Beginning,
}

/// `cursor` as an object: the previous call's `next_cursor`, or a line.
#[derive(Input)]
pub struct ScanCursor {
    /// Start line, 1-based
    #[arg(min = 1)]
    pub start_line: Option<i64>,
    /// Absolute char offset, from next_cursor
    #[arg(min = 0)]
    pub char_offset: Option<i64>,
}

/// manual_scan's `cursor`: the object, or (seed 004) the character offset
/// alone, as a number or a numeric string.
pub enum Cursor {
    At(ScanCursor),
    Offset(i64),
}

impl From<ScanCursor> for Cursor {
    fn from(c: ScanCursor) -> Cursor {
        Cursor::At(c)
    }
}

impl Param for Cursor {
    fn schema_with(_: &Rule) -> Value {
        let mut schema = <ScanCursor as Input>::schema();
        schema["type"] = json!(["object", "integer", "string"]);
        schema
    }

    fn read(a: &Args, key: &'static str, rule: &Rule) -> Result<Option<Self>> {
        match a.get(key) {
            Some(Value::Number(_) | Value::String(_)) => {
                Ok(a.int_lenient(key, 0)?.map(Cursor::Offset))
            }
            _ => Ok(<ScanCursor as Param>::read(a, key, rule)?.map(Cursor::At)),
        }
    }
}

impl ScanStart {
    /// `start_line`, else `cursor.start_line`, else `cursor.char_offset`,
    /// else line 1.
    pub fn new(start_line: Option<i64>, cursor: Option<Cursor>) -> ScanStart {
        let (line, offset) = match cursor {
            Some(Cursor::At(c)) => (c.start_line, c.char_offset),
            Some(Cursor::Offset(o)) => (None, Some(o)),
            None => (None, None),
        };
        match (start_line, line, offset) {
            (Some(l), _, _) => ScanStart::Line {
                line: l,
                from_cursor: false,
            },
            (None, Some(l), _) => ScanStart::Line {
                line: l,
                from_cursor: true,
            },
            (None, None, Some(o)) => ScanStart::Offset(o),
            _ => ScanStart::Beginning,
        }
    }
}

/// A bounded read of `[start, limit)` of a file: its text, the lines it
/// spans, and where a scan would resume (the one place vault_read,
/// manual_read and the scans compute these).
pub struct Window {
    pub text: String,
    pub chars: u64,
    pub range: LineRange,
    /// Resume point; null when the text reaches the end of the file.
    pub next_cursor: CharCursor,
    /// The text stops before the end of the file.
    pub truncated: bool,
    /// The character cap (not `limit`) stopped it.
    pub capped: bool,
}

pub fn window(
    content: &str,
    lines: &Lines,
    start: usize,
    limit: usize,
    max_chars: usize,
) -> Window {
    let c = text::cut(lines, start, limit, max_chars);
    let truncated = c.end < content.len();
    Window {
        chars: c.chars as u64,
        range: LineRange {
            start_line: c.start_line as u64,
            end_line: c.end_line as u64,
        },
        next_cursor: CharCursor {
            char_offset: truncated.then(|| text::char_offset(content, c.end) as u64),
        },
        truncated,
        capped: c.capped,
        text: c.text,
    }
}

/// Where a streamed window starts.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum At {
    Beginning,
    /// An absolute character offset.
    Char(u64),
    /// A 1-based line.
    Line(usize),
}

/// Where a streamed window stops, besides the character cap.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Limit {
    Eof,
    /// After the `\n` that ends this 1-based line.
    EndOfLine(usize),
}

/// Why a streamed window has no text to give.
#[derive(Debug)]
pub enum Stop {
    /// The start lies past the end of a file of this many lines/characters.
    Past {
        lines: usize,
        chars: u64,
    },
    /// The bytes are not UTF-8.
    NotText,
    Io(std::io::Error),
}

impl From<std::io::Error> for Stop {
    fn from(e: std::io::Error) -> Self {
        if e.kind() == std::io::ErrorKind::InvalidData {
            Stop::NotText
        } else {
            Stop::Io(e)
        }
    }
}

/// UTF-8 text from a byte stream, a buffer at a time; an incomplete
/// character at a buffer's end waits for the next.
struct Decoder<R> {
    r: R,
    carry: Vec<u8>,
}

impl<R: BufRead> Decoder<R> {
    /// The next piece of text into `out`; false at the end.
    fn next(&mut self, out: &mut String) -> std::io::Result<bool> {
        let bad = || std::io::Error::new(std::io::ErrorKind::InvalidData, "not UTF-8");
        out.clear();
        loop {
            let buf = self.r.fill_buf()?;
            if buf.is_empty() {
                return if self.carry.is_empty() {
                    Ok(false)
                } else {
                    Err(bad())
                };
            }
            let n = buf.len();
            self.carry.extend_from_slice(buf);
            self.r.consume(n);
            let valid = match std::str::from_utf8(&self.carry) {
                Ok(_) => self.carry.len(),
                Err(e) if e.error_len().is_none() => e.valid_up_to(),
                Err(_) => return Err(bad()),
            };
            if valid > 0 {
                out.push_str(std::str::from_utf8(&self.carry[..valid]).map_err(|_| bad())?);
                self.carry.drain(..valid);
                return Ok(true);
            }
        }
    }
}

/// The window [`window`] cuts, read from a stream: only the text it returns
/// is held, so memory does not depend on the file's size (a 1 GiB line
/// costs one buffer and the window). The bytes before the start are
/// decoded and counted, never kept.
pub fn stream_window<R: BufRead>(
    r: R,
    at: At,
    limit: Limit,
    max_chars: usize,
) -> Result<Window, Stop> {
    let mut dec = Decoder {
        r,
        carry: Vec::new(),
    };
    let mut chunk = String::new();
    let mut walk = Walk::default();
    'read: while dec.next(&mut chunk)? {
        for ch in chunk.chars() {
            if !walk.step(ch, at, limit, max_chars) {
                break 'read;
            }
        }
    }
    walk.window(at)
}

/// Where [`stream_window`] is in the stream, and what it has kept.
#[derive(Default)]
struct Walk {
    /// Characters before the current one.
    chars: u64,
    /// Newlines before the current character.
    nl: usize,
    last_nl: bool,
    /// (character, newlines) at the start.
    started: Option<(u64, usize)>,
    text: String,
    taken: usize,
    /// Some(capped) when more text follows.
    stopped: Option<bool>,
}

impl Walk {
    /// Take one character; false when the window is complete.
    fn step(&mut self, ch: char, at: At, limit: Limit, max_chars: usize) -> bool {
        if self.started.is_none()
            && match at {
                At::Beginning => true,
                At::Char(c) => self.chars == c,
                At::Line(n) => self.nl + 1 >= n,
            }
        {
            self.started = Some((self.chars, self.nl));
        }
        if self.started.is_some() {
            if matches!(limit, Limit::EndOfLine(m) if self.nl >= m) {
                self.stopped = Some(false);
                return false;
            }
            if self.taken == max_chars {
                self.stopped = Some(true);
                return false;
            }
            self.text.push(ch);
            self.taken += 1;
        }
        self.chars += 1;
        self.last_nl = ch == '\n';
        self.nl += usize::from(self.last_nl);
        true
    }

    fn window(self, at: At) -> Result<Window, Stop> {
        let Walk {
            chars,
            nl,
            last_nl,
            started,
            mut text,
            mut taken,
            stopped,
        } = self;
        let lines_at_eof = if chars == 0 {
            0
        } else {
            nl + 1 - usize::from(last_nl)
        };
        let Some((start_char, start_nl)) = started else {
            return empty_at_end(at, chars, lines_at_eof);
        };
        let capped = stopped == Some(true);
        if capped && let Some(i) = text.rfind('\n') {
            // End after the last complete line, as `text::window` does.
            taken -= text[i + 1..].chars().count();
            text.truncate(i + 1);
        }
        let start_line = start_nl + 1;
        let body = text.strip_suffix('\n').unwrap_or(&text);
        let end_line = start_line + body.bytes().filter(|&b| b == b'\n').count();
        let truncated = stopped.is_some();
        Ok(Window {
            chars: taken as u64,
            range: LineRange {
                start_line: start_line as u64,
                end_line: end_line as u64,
            },
            next_cursor: CharCursor {
                char_offset: truncated.then_some(start_char + taken as u64),
            },
            truncated,
            capped,
            text,
        })
    }
}

/// The end of the file came before the start: a start exactly there is an
/// empty window, anything later is past the end.
fn empty_at_end(at: At, chars: u64, lines_at_eof: usize) -> Result<Window, Stop> {
    let at_end = match at {
        At::Beginning => true,
        At::Char(c) => chars == c,
        At::Line(n) => n == 1 && chars == 0,
    };
    if !at_end {
        return Err(Stop::Past {
            lines: lines_at_eof,
            chars,
        });
    }
    let start_line = if chars == 0 { 1 } else { lines_at_eof };
    Ok(Window {
        text: String::new(),
        chars: 0,
        range: LineRange {
            start_line: start_line as u64,
            end_line: start_line.min(lines_at_eof) as u64,
        },
        next_cursor: CharCursor { char_offset: None },
        truncated: false,
        capped: false,
    })
}

/// The number of lines of a stream, as [`Lines::count`] counts them,
/// without holding more than a buffer.
pub fn count_lines<R: BufRead>(mut r: R) -> std::io::Result<usize> {
    let (mut newlines, mut any, mut last_nl) = (0usize, false, false);
    loop {
        let buf = r.fill_buf()?;
        if buf.is_empty() {
            break;
        }
        any = true;
        newlines += buf.iter().filter(|&&b| b == b'\n').count();
        last_nl = buf.last() == Some(&b'\n');
        let n = buf.len();
        r.consume(n);
    }
    Ok(if any {
        newlines + 1 - usize::from(last_nl)
    } else {
        0
    })
}

/// The error of a start line past the end, as every tool words it.
pub fn past_line(key: &str, line: i64, total: usize) -> Error {
    Error::invalid_parameter(
        key,
        format!(
            "`{key}` is {line} but the file has {total} line{}",
            if total == 1 { "" } else { "s" }
        ),
    )
    .with("total_lines", total as u64)
}

/// One window of a stream from `start`, at most `max_chars` characters;
/// `fail` turns a read error into the tool's error.
pub fn scan_stream<R: BufRead>(
    r: R,
    start: ScanStart,
    max_chars: usize,
    fail: impl FnOnce(std::io::Error) -> Error,
) -> Result<ScanOutput> {
    let at = match start {
        ScanStart::Line { line, .. } => At::Line(line.max(1) as usize),
        ScanStart::Offset(off) => At::Char(off.max(0) as u64),
        ScanStart::Beginning => At::Beginning,
    };
    let w = match stream_window(r, at, Limit::Eof, max_chars) {
        Ok(w) => w,
        Err(Stop::Past { lines, chars }) => {
            return Err(match start {
                ScanStart::Line { line, from_cursor } => {
                    let key = if from_cursor {
                        "cursor.start_line"
                    } else {
                        "start_line"
                    };
                    past_line(key, line, lines)
                }
                ScanStart::Offset(off) => Error::invalid_parameter(
                    "cursor.char_offset",
                    format!("`cursor.char_offset` is {off} but the file has {chars} characters"),
                ),
                ScanStart::Beginning => Error::internal("an empty start cannot be past the end"),
            });
        }
        Err(Stop::NotText) => {
            return Err(fail(std::io::Error::new(
                std::io::ErrorKind::InvalidData,
                "not UTF-8",
            )));
        }
        Err(Stop::Io(e)) => return Err(fail(e)),
    };
    Ok(ScanOutput {
        applied_range: w.range,
        next_cursor: w.next_cursor,
        eof: !w.truncated,
        truncated: w.truncated,
        truncated_reason: if w.capped { "max_chars" } else { "none" }.to_owned(),
        applied: ScanApplied {
            max_chars: max_chars as u64,
        },
        text: w.text,
    })
}

/// One window of `content` from `start`, at most `max_chars` characters.
pub fn scan(content: &str, start: ScanStart, max_chars: usize) -> Result<ScanOutput> {
    scan_stream(content.as_bytes(), start, max_chars, |e| {
        Error::internal(format!("reading text in memory failed: {e}"))
    })
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::text::{self, Lines};
    use proptest::prelude::*;

    /// The in-memory reference: the window of the whole text.
    fn reference(content: &str, at: At, limit: Limit, max: usize) -> Option<Window> {
        let lines = Lines::new(content);
        let total = lines.count();
        let start = match at {
            At::Beginning => 0,
            At::Char(c) => text::byte_of_char(content, c as usize)?,
            At::Line(n) if n > total.max(1) => return None,
            At::Line(n) => lines.start(n),
        };
        let end = match limit {
            Limit::Eof => content.len(),
            Limit::EndOfLine(m) => lines.end(m).max(start),
        };
        Some(window(content, &lines, start, end, max))
    }

    fn parts(w: &Window) -> (String, u64, LineRange, Option<u64>, bool, bool) {
        (
            w.text.clone(),
            w.chars,
            w.range,
            w.next_cursor.char_offset,
            w.truncated,
            w.capped,
        )
    }

    fn texts() -> impl Strategy<Value = String> {
        proptest::collection::vec(
            prop_oneof![
                Just('a'),
                Just('\n'),
                Just('\r'),
                Just('é'),
                Just('日'),
                Just('😀')
            ],
            0..40,
        )
        .prop_map(String::from_iter)
    }

    proptest! {
        /// The streamed window is the in-memory one, whatever the buffer
        /// size (characters split across reads), start, limit and cap.
        #[test]
        fn streamed_windows_equal_in_memory_ones(
            content in texts(),
            buf in 1usize..9,
            start in 0u64..45,
            by_line in any::<bool>(),
            extra_lines in proptest::option::of(0usize..5),
            max in 1usize..20,
        ) {
            let at = if by_line { At::Line(start as usize / 3 + 1) } else { At::Char(start) };
            let limit = match (at, extra_lines) {
                (At::Line(n), Some(k)) => Limit::EndOfLine(n + k),
                _ => Limit::Eof,
            };
            let reader = std::io::BufReader::with_capacity(buf, content.as_bytes());
            let streamed = stream_window(reader, at, limit, max);
            match (reference(&content, at, limit, max), streamed) {
                (Some(want), Ok(got)) => prop_assert_eq!(parts(&got), parts(&want)),
                (None, Err(Stop::Past { lines, chars })) => {
                    prop_assert_eq!(lines, Lines::new(&content).count());
                    prop_assert_eq!(chars, content.chars().count() as u64);
                }
                (want, got) => prop_assert!(false, "reference {:?} vs stream {:?}", want.map(|w| parts(&w)), got.map(|w| parts(&w))),
            }
        }

        /// A scan resumed from each `next_cursor` loses and repeats nothing.
        #[test]
        fn resumed_scans_cover_the_file_exactly(content in texts(), max in 1usize..12) {
            let mut at = ScanStart::Beginning;
            let mut out = String::new();
            for _ in 0..=content.len() + 1 {
                let s = scan(&content, at, max).unwrap();
                out.push_str(&s.text);
                match s.next_cursor.char_offset {
                    Some(c) => at = ScanStart::Offset(c as i64),
                    None => break,
                }
            }
            prop_assert_eq!(out, content);
        }

        /// Streamed line counts agree with the line table.
        #[test]
        fn streamed_line_counts_agree(content in texts()) {
            prop_assert_eq!(count_lines(content.as_bytes()).unwrap(), Lines::new(&content).count());
        }
    }

    #[test]
    fn invalid_utf8_is_not_text() {
        let bytes: &[u8] = b"ok\n\xff\xfe";
        assert!(matches!(
            stream_window(bytes, At::Beginning, Limit::Eof, 100),
            Err(Stop::NotText)
        ));
    }
}
