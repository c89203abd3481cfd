//! A guard in front of rmcp's stdio transport: every line a client sends
//! gets an answer. rmcp drops input that is not JSON (so that a peer echoing
//! errors cannot start a storm) and lines over its 16 MiB limit, and a
//! client waits for a reply that never comes. JSON-RPC 2.0 says a parse
//! error is answered with -32700 and an invalid request with -32600 (id
//! null when it cannot be read), so this layer reads the lines first,
//! answers the malformed ones itself, and passes the rest to rmcp
//! unchanged. A reply to a line is one line, so no storm can grow from it.

use serde::Deserialize;
use serde::de::{self, Deserializer as _, IgnoredAny, MapAccess, Visitor};
use serde_json::value::RawValue;
use tokio::io::{AsyncBufReadExt, AsyncRead, AsyncWrite, AsyncWriteExt, BufReader, DuplexStream};
use tokio::sync::mpsc;
use tokio_util::sync::CancellationToken;

/// The longest line read (rmcp's own limit): a longer one is discarded as
/// it arrives, never buffered, and answered with -32600.
pub const MAX_LINE_BYTES: usize = 16 << 20;

const PARSE_ERROR: i32 = -32700;
const INVALID_REQUEST: i32 = -32600;

/// What to do with one line.
#[derive(Debug, PartialEq, Eq)]
pub enum Verdict {
    /// A well-formed message (or a blank line): rmcp handles it.
    Forward,
    /// Malformed: this JSON-RPC error response answers it.
    Reply(String),
}

/// The members of a JSON-RPC message, unparsed.
#[derive(Deserialize)]
struct Envelope<'a> {
    #[serde(borrow)]
    jsonrpc: Option<&'a RawValue>,
    #[serde(borrow)]
    id: Option<&'a RawValue>,
    #[serde(borrow)]
    method: Option<&'a RawValue>,
    #[serde(borrow)]
    params: Option<&'a RawValue>,
    #[serde(borrow)]
    result: Option<&'a RawValue>,
    #[serde(borrow)]
    error: Option<&'a RawValue>,
}

fn reply(id: Option<&RawValue>, code: i32, message: &str) -> Verdict {
    let id = id.map_or("null", RawValue::get);
    let error = serde_json::json!({ "code": code, "message": message });
    Verdict::Reply(format!(r#"{{"jsonrpc":"2.0","id":{id},"error":{error}}}"#))
}

/// An id a response may carry: a string or a number.
fn valid_id(id: &RawValue) -> bool {
    matches!(id.get().as_bytes().first(), Some(b'"' | b'-' | b'0'..=b'9'))
}

/// The deepest nesting serde_json reads (its recursion limit); rmcp drops a
/// deeper message without a word.
const MAX_DEPTH: usize = 127;

/// How deeply the JSON text nests arrays and objects (brackets inside
/// strings do not count).
fn depth(text: &[u8]) -> usize {
    let (mut depth, mut deepest, mut in_string, mut escaped) = (0usize, 0usize, false, false);
    for &b in text {
        if in_string {
            match b {
                _ if escaped => escaped = false,
                b'\\' => escaped = true,
                b'"' => in_string = false,
                _ => {}
            }
            continue;
        }
        match b {
            b'"' => in_string = true,
            b'[' | b'{' => {
                depth += 1;
                deepest = deepest.max(depth);
            }
            b']' | b'}' => depth = depth.saturating_sub(1),
            _ => {}
        }
    }
    deepest
}

/// How much of an over-long line is kept, to find its id.
const KEEP_OF_OVERSIZED: usize = 64 << 10;

/// The id of a message whose line is too long to read whole, when it comes
/// before the bulk (clients write `jsonrpc`, `id` and `method` before
/// `params`): the top-level members are read in order until `id`.
fn leading_id(prefix: &[u8]) -> Option<Box<RawValue>> {
    struct Find<'a>(&'a mut Option<Box<RawValue>>);
    impl<'de> Visitor<'de> for Find<'_> {
        type Value = ();
        fn expecting(&self, f: &mut std::fmt::Formatter) -> std::fmt::Result {
            f.write_str("a JSON-RPC message")
        }
        fn visit_map<A: MapAccess<'de>>(self, mut m: A) -> Result<(), A::Error> {
            while let Some(key) = m.next_key::<String>()? {
                if key == "id" {
                    *self.0 = Some(m.next_value()?);
                    // Stop here: the rest of the prefix is cut short.
                    return Err(de::Error::custom("found"));
                }
                m.next_value::<IgnoredAny>()?;
            }
            Ok(())
        }
    }
    let mut found = None;
    let _ = serde_json::Deserializer::from_slice(prefix).deserialize_map(Find(&mut found));
    found.filter(|id| valid_id(id))
}

/// Judge one line (without its `\n`).
pub fn check(line: &[u8]) -> Verdict {
    let line = line.strip_prefix(b"\xEF\xBB\xBF").unwrap_or(line);
    let text = line.trim_ascii();
    if text.is_empty() {
        return Verdict::Forward;
    }
    if text.first() == Some(&b'[') {
        // JSON-RPC batches were removed from MCP (2025-06-18).
        return match serde_json::from_slice::<serde::de::IgnoredAny>(text) {
            Ok(_) => reply(
                None,
                INVALID_REQUEST,
                "Invalid Request: batches are not supported",
            ),
            Err(e) => reply(None, PARSE_ERROR, &format!("Parse error: {e}")),
        };
    }
    let env: Envelope = match serde_json::from_slice(text) {
        Ok(env) => env,
        Err(e) if e.is_data() => {
            return reply(
                None,
                INVALID_REQUEST,
                "Invalid Request: a message is a JSON object",
            );
        }
        Err(e) => return reply(None, PARSE_ERROR, &format!("Parse error: {e}")),
    };
    let id = env.id.filter(|id| valid_id(id));
    if env.id.is_some() && id.is_none() {
        return reply(
            None,
            INVALID_REQUEST,
            "Invalid Request: `id` must be a string or a number",
        );
    }
    if depth(text) > MAX_DEPTH {
        return reply(
            id,
            INVALID_REQUEST,
            &format!("Invalid Request: nested deeper than {MAX_DEPTH} levels"),
        );
    }
    let version = env
        .jsonrpc
        .and_then(|v| serde_json::from_str::<String>(v.get()).ok());
    if version.as_deref() != Some("2.0") {
        return reply(
            id,
            INVALID_REQUEST,
            "Invalid Request: `jsonrpc` must be \"2.0\"",
        );
    }
    match env.method {
        Some(m) if serde_json::from_str::<String>(m.get()).is_err() => reply(
            id,
            INVALID_REQUEST,
            "Invalid Request: `method` must be a string",
        ),
        Some(_) => match env.params {
            Some(p) if !matches!(p.get().as_bytes().first(), Some(b'{' | b'[')) => reply(
                id,
                INVALID_REQUEST,
                "Invalid Request: `params` must be an object",
            ),
            _ => Verdict::Forward,
        },
        // A response to one of the server's requests.
        None if id.is_some() && (env.result.is_some() || env.error.is_some()) => Verdict::Forward,
        None => reply(
            id,
            INVALID_REQUEST,
            "Invalid Request: neither a request (`method`) nor a response (`result`/`error`)",
        ),
    }
}

/// Read a line of at most [`MAX_LINE_BYTES`] into `buf` (cleared first);
/// past that, discard the rest of the line unread. Returns None at the end
/// of input, else whether the line was too long.
async fn read_line<R: AsyncRead + Unpin>(
    r: &mut BufReader<R>,
    buf: &mut Vec<u8>,
) -> std::io::Result<Option<bool>> {
    buf.clear();
    let mut oversized = false;
    loop {
        let chunk = r.fill_buf().await?;
        if chunk.is_empty() {
            return Ok((!buf.is_empty() || oversized).then_some(oversized));
        }
        let (take, done) = match chunk.iter().position(|&b| b == b'\n') {
            Some(i) => (i + 1, true),
            None => (chunk.len(), false),
        };
        if !oversized {
            if buf.len() + take > MAX_LINE_BYTES + 1 {
                oversized = true;
                // Keep the start: it may name the request's id.
                let room = KEEP_OF_OVERSIZED.saturating_sub(buf.len()).min(take);
                buf.extend_from_slice(&chunk[..room]);
                buf.truncate(KEEP_OF_OVERSIZED);
            } else {
                buf.extend_from_slice(&chunk[..take]);
            }
        }
        r.consume(take);
        if done {
            return Ok(Some(oversized));
        }
    }
}

/// Put the guard between `input`/`output` (the process's stdio) and rmcp:
/// returns the reader and writer to give rmcp. Two tasks run until the
/// input ends and rmcp has written its last line; `ended` is cancelled
/// when the input ends.
pub fn guard<R, W>(input: R, output: W, ended: CancellationToken) -> (DuplexStream, DuplexStream)
where
    R: AsyncRead + Unpin + Send + 'static,
    W: AsyncWrite + Unpin + Send + 'static,
{
    const PIPE: usize = 256 << 10;
    let (to_rmcp, rmcp_in) = tokio::io::duplex(PIPE);
    let (rmcp_out, from_rmcp) = tokio::io::duplex(PIPE);
    let (replies, pending) = mpsc::unbounded_channel::<String>();
    tokio::spawn(read_input(input, to_rmcp, replies, ended));
    tokio::spawn(write_output(output, from_rmcp, pending));
    (rmcp_in, rmcp_out)
}

/// The client's lines: well-formed ones to rmcp, malformed ones answered.
async fn read_input<R: AsyncRead + Unpin>(
    input: R,
    mut to_rmcp: DuplexStream,
    replies: mpsc::UnboundedSender<String>,
    ended: CancellationToken,
) {
    let mut input = BufReader::with_capacity(64 << 10, input);
    let mut line = Vec::new();
    loop {
        let oversized = match read_line(&mut input, &mut line).await {
            Ok(Some(o)) => o,
            Ok(None) => break,
            Err(e) => {
                tracing::error!("reading the client's input: {e}");
                break;
            }
        };
        let verdict = if oversized {
            reply(
                leading_id(&line).as_deref(),
                INVALID_REQUEST,
                &format!("Invalid Request: a message is at most {MAX_LINE_BYTES} bytes"),
            )
        } else {
            check(line.strip_suffix(b"\n").unwrap_or(&line))
        };
        match verdict {
            Verdict::Forward => {
                if !line.ends_with(b"\n") {
                    line.push(b'\n');
                }
                if to_rmcp.write_all(&line).await.is_err() {
                    break; // rmcp has stopped
                }
            }
            Verdict::Reply(r) => {
                tracing::debug!("answered a malformed message: {r}");
                if replies.send(r).is_err() {
                    break;
                }
            }
        }
    }
    // Dropping `to_rmcp` ends rmcp's input: it shuts down as before.
    ended.cancel();
}

/// rmcp's lines and the guard's replies to the client, each whole.
async fn write_output<W: AsyncWrite + Unpin>(
    mut output: W,
    from_rmcp: DuplexStream,
    mut pending: mpsc::UnboundedReceiver<String>,
) {
    let mut from_rmcp = BufReader::with_capacity(64 << 10, from_rmcp);
    let mut buf = Vec::new();
    let mut open = true;
    loop {
        tokio::select! {
            // `read_until` keeps a partial line in `buf` when the other
            // branch wins, and the next call goes on with it.
            n = from_rmcp.read_until(b'\n', &mut buf), if open => {
                match n {
                    Ok(0) | Err(_) => open = false,
                    Ok(_) => {
                        if output.write_all(&buf).await.is_err() || output.flush().await.is_err() {
                            return;
                        }
                        buf.clear();
                    }
                }
            }
            r = pending.recv() => {
                let Some(mut r) = r else {
                    if !open { return; }
                    continue;
                };
                r.push('\n');
                if output.write_all(r.as_bytes()).await.is_err() || output.flush().await.is_err() {
                    return;
                }
            }
            else => return,
        }
        if !open && pending.is_closed() && pending.is_empty() {
            return;
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn answer(line: &str) -> serde_json::Value {
        match check(line.as_bytes()) {
            Verdict::Reply(r) => serde_json::from_str(&r).unwrap(),
            Verdict::Forward => panic!("forwarded: {line}"),
        }
    }

    #[test]
    fn malformed_messages_are_answered() {
        let deep = format!("{}{}", "[".repeat(200), "]".repeat(200));
        let deep_params = format!(
            r#"{{"jsonrpc":"2.0","id":9,"method":"x","params":{}1{}}}"#,
            r#"{"a":"#.repeat(200),
            "}".repeat(200)
        );
        for (line, code) in [
            ("{not json", PARSE_ERROR),
            (deep.as_str(), INVALID_REQUEST), // an array: a batch
            (
                r#"[{"jsonrpc":"2.0","id":1,"method":"ping"}]"#,
                INVALID_REQUEST,
            ),
            (
                r#"{"jsonrpc":"1.0","id":1,"method":"ping"}"#,
                INVALID_REQUEST,
            ),
            (
                r#"{"jsonrpc":"2.0","id":1,"method":"ping","params":"x"}"#,
                INVALID_REQUEST,
            ),
            (r#"{"jsonrpc":"2.0","id":1,"method":7}"#, INVALID_REQUEST),
            (
                r#"{"jsonrpc":"2.0","id":{},"method":"ping"}"#,
                INVALID_REQUEST,
            ),
            (r#""just a string""#, INVALID_REQUEST),
            (r#"{"jsonrpc":"2.0","id":3}"#, INVALID_REQUEST),
            (deep_params.as_str(), INVALID_REQUEST),
        ] {
            let a = answer(line);
            assert_eq!(a["error"]["code"], code, "{line}");
            assert_eq!(a["jsonrpc"], "2.0");
        }
        // The id is echoed when it can be read.
        assert_eq!(
            answer(r#"{"jsonrpc":"1.0","id":"a","method":"x"}"#)["id"],
            "a"
        );
        assert!(answer("{").get("id").unwrap().is_null());
        assert_eq!(answer(&deep_params)["id"], 9);
        assert_eq!(depth(br#"{"a":"[[[{{","b":[1]}"#), 2);
    }

    #[test]
    fn the_id_of_an_over_long_line_is_read_from_its_start() {
        let id = |s: &str| leading_id(s.as_bytes()).map(|r| r.get().to_owned());
        assert_eq!(
            id(r#"{"jsonrpc":"2.0","id":7,"method":"x","params":{"q":"aaaa"#),
            Some("7".into())
        );
        assert_eq!(
            id(r#"{"id":"ab","params":{"q":"aaa"#),
            Some(r#""ab""#.into())
        );
        assert_eq!(id(r#"{"jsonrpc":"2.0","params":{"q":"aaaa"#), None);
        assert_eq!(id(r#"{"jsonrpc":"2.0","id":{"x":1},"method":"#), None);
        assert_eq!(id("[1,2"), None);
    }

    #[test]
    fn well_formed_messages_pass() {
        for line in [
            r#"{"jsonrpc":"2.0","id":1,"method":"tools/list"}"#,
            r#"{"jsonrpc":"2.0","method":"notifications/initialized"}"#,
            r#"{"jsonrpc":"2.0","id":"x","method":"tools/call","params":{"name":"a"}}"#,
            r#"{"jsonrpc":"2.0","id":4,"result":{}}"#,
            "   ",
            "\u{feff}{\"jsonrpc\":\"2.0\",\"id\":1,\"method\":\"ping\"}",
        ] {
            assert_eq!(check(line.as_bytes()), Verdict::Forward, "{line}");
        }
    }
}
