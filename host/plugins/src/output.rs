//! What a component prints: its stdout and stderr are kept in memory
//! (bounded) during a call and then written to kura's log on stderr, line
//! by line. Nothing a component prints can reach kura's stdout, which
//! carries JSON-RPC only, and a chatty component never fails for it: past
//! the bound, output is counted and dropped.

use std::pin::Pin;
use std::sync::{Arc, Mutex};
use std::task::{Context, Poll};

use bytes::Bytes;
use tokio::io::AsyncWrite;
use wasmtime_wasi::cli::{IsTerminal, StdoutStream};
use wasmtime_wasi::p2::{OutputStream, Pollable, StreamResult};

/// Bytes kept per call (stdout and stderr together).
pub const KEEP: usize = 16 * 1024;

#[derive(Default)]
struct Buf {
    bytes: Vec<u8>,
    dropped: usize,
}

/// One call's printed output. Clones share the buffer.
#[derive(Clone, Default)]
pub struct Captured(Arc<Mutex<Buf>>);

impl Captured {
    fn push(&self, b: &[u8]) {
        let mut buf = self.0.lock().unwrap_or_else(|e| e.into_inner());
        let room = KEEP.saturating_sub(buf.bytes.len());
        let keep = b.len().min(room);
        buf.bytes.extend_from_slice(&b[..keep]);
        buf.dropped += b.len() - keep;
    }

    /// The text printed so far and how many bytes were dropped.
    pub fn text(&self) -> (String, usize) {
        let buf = self.0.lock().unwrap_or_else(|e| e.into_inner());
        (
            String::from_utf8_lossy(&buf.bytes).into_owned(),
            buf.dropped,
        )
    }

    /// Write what the component printed to the log, one event per line.
    pub fn log(&self, slot: &str) {
        let (text, dropped) = self.text();
        for line in text.lines().filter(|l| !l.trim().is_empty()) {
            tracing::info!(target: "kura::plugin", slot, "{line}");
        }
        if dropped > 0 {
            tracing::info!(target: "kura::plugin", slot, "({dropped} more bytes of output dropped)");
        }
    }
}

impl IsTerminal for Captured {
    fn is_terminal(&self) -> bool {
        false
    }
}

impl StdoutStream for Captured {
    fn p2_stream(&self) -> Box<dyn OutputStream> {
        Box::new(self.clone())
    }

    fn async_stream(&self) -> Box<dyn AsyncWrite + Send + Sync> {
        Box::new(self.clone())
    }
}

impl OutputStream for Captured {
    fn write(&mut self, bytes: Bytes) -> StreamResult<()> {
        self.push(&bytes);
        Ok(())
    }

    fn flush(&mut self) -> StreamResult<()> {
        Ok(())
    }

    fn check_write(&mut self) -> StreamResult<usize> {
        Ok(64 * 1024)
    }
}

#[wasmtime_wasi::async_trait]
impl Pollable for Captured {
    async fn ready(&mut self) {}
}

impl AsyncWrite for Captured {
    fn poll_write(
        self: Pin<&mut Self>,
        _cx: &mut Context<'_>,
        buf: &[u8],
    ) -> Poll<std::io::Result<usize>> {
        self.push(buf);
        Poll::Ready(Ok(buf.len()))
    }

    fn poll_flush(self: Pin<&mut Self>, _cx: &mut Context<'_>) -> Poll<std::io::Result<()>> {
        Poll::Ready(Ok(()))
    }

    fn poll_shutdown(self: Pin<&mut Self>, _cx: &mut Context<'_>) -> Poll<std::io::Result<()>> {
        Poll::Ready(Ok(()))
    }
}

/// The one line a client sees when a call fails: the component's own last
/// word when it printed one (a Python exception's `ValueError: ...`, a Rust
/// panic's message, a JS `Error: ...`), else the first line of the trap.
/// Stack frames, `note:` lines and tracebacks' headers are skipped.
pub fn reason(trap: &str, printed: &str) -> String {
    // A Python traceback ends with the exception, whatever the runtime
    // prints after it.
    if let Some((_, after)) = printed.rsplit_once("Traceback (most recent call last):")
        && let Some(exception) = after
            .lines()
            .find(|l| !l.trim().is_empty() && !l.starts_with(char::is_whitespace))
    {
        return clip(exception.trim_end(), 300);
    }
    let said = printed.lines().rev().map(str::trim_end).find(|l| {
        let t = l.trim_start();
        !t.is_empty()
            && !l.starts_with(char::is_whitespace)
            && !t.starts_with("note:")
            && !t.starts_with("at ")
            && !t.starts_with("Traceback")
            && !t.starts_with("stack backtrace")
            && !(t.starts_with("thread '") && t.contains("panicked at"))
    });
    let line = match said {
        Some(l) => l,
        None => trap
            .lines()
            .map(str::trim)
            .find(|l| !l.is_empty())
            .unwrap_or("failed"),
    };
    clip(line, 300)
}

fn clip(s: &str, max: usize) -> String {
    match s.char_indices().nth(max) {
        Some((i, _)) => format!("{}…", &s[..i]),
        None => s.to_owned(),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn output_past_the_bound_is_counted_and_dropped() {
        let c = Captured::default();
        c.push(&vec![b'x'; KEEP - 1]);
        c.push(b"yz");
        let (text, dropped) = c.text();
        assert_eq!((text.len(), dropped), (KEEP, 1));
    }

    #[test]
    fn the_reason_is_the_components_last_word() {
        let py = "Traceback (most recent call last):\n  File \"app.py\", line 9, in rerank\n    raise ValueError('no candidates')\nValueError: no candidates\nthread '<unnamed>' (1) panicked at runtime/src/lib.rs:1280:25:\nPython function threw an unexpected exception\n";
        assert_eq!(
            reason("wasm trap: unreachable\nbacktrace...", py),
            "ValueError: no candidates"
        );
        let rust = "thread '<unnamed>' panicked at src/lib.rs:43:28:\nhostile policy traps on purpose\nnote: run with `RUST_BACKTRACE=1` environment variable to display a backtrace\n";
        assert_eq!(reason("wasm trap", rust), "hostile policy traps on purpose");
        let js = "Error: boom\n    at check (policy.js:4:11)\n";
        assert_eq!(reason("wasm trap", js), "Error: boom");
        assert_eq!(
            reason(
                "error while executing at wasm backtrace:\n    0: 0x1 - f",
                ""
            ),
            "error while executing at wasm backtrace:"
        );
        assert_eq!(reason("x", &"a".repeat(1000)).chars().count(), 301);
    }
}
