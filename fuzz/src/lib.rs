//! The fuzz targets' bodies, one module each: `fuzz_targets/` holds
//! cargo-fuzz's one-line entries (built by `just fuzz`, with libFuzzer), and
//! the tests below run every body on sample inputs in each test run, so a
//! body that stops compiling or starts failing is caught without building
//! libFuzzer's C++ runtime (docs/decisions.md).

pub mod args;
pub mod framing;
pub mod http;
pub mod markdown;
pub mod model;
pub mod path;
pub mod scan;

#[cfg(test)]
mod tests {
    /// Inputs a fuzzer reaches early: the shapes each parser branches on,
    /// the defects found before (`./n:<`), and pseudo-random text drawn
    /// from those characters with a fixed seed. None is a SentencePiece
    /// model or an .npz, so the model body's samples reach its refusals
    /// only; the fuzzer's runs (`just fuzz`) go past them.
    fn samples() -> Vec<Vec<u8>> {
        let mut out: Vec<Vec<u8>> = [
            "",
            "a",
            "./n:<",
            "../x",
            "/abs/path",
            "C:\\x",
            "daily/2026-01-01.md",
            "---\ntitle: x\ntags: [a, b]\n---\n# H\n\nbody\n",
            "---\n---\n",
            "# 見出し\n\n本文。\n## 二\n",
            "\u{feff}{\"jsonrpc\":\"2.0\",\"id\":1,\"method\":\"ping\"}",
            "{\"jsonrpc\":\"2.0\",\"id\":1,\"method\":\"tools/list\"}",
            "[1,2]",
            "{\"path\":\"../etc\",\"query\":\"x\",\"limit\":-1}",
            "{\"path\":\"daily/2026-01-01.md\",\"content\":\"x\",\"mode\":\"append\"}",
            "{\"query\":\"x\",\"limit\":5,\"manual_id\":\"m\"}",
            "{\"limit\":\"five\",\"path\":123}",
            "POST /mcp\n\n{\"jsonrpc\":\"2.0\",\"id\":1,\"method\":\"initialize\",\"params\":{\"protocolVersion\":\"2025-06-18\",\"capabilities\":{},\"clientInfo\":{\"name\":\"fuzz\",\"version\":\"1\"}}}",
            "POST /mcp\nmcp-session-id: 0\n\n{\"jsonrpc\":\"2.0\",\"id\":2,\"method\":\"tools/call\",\"params\":{\"name\":\"vault_read\",\"arguments\":{\"path\":\"note.md\"}}}",
            "POST /mcp\ncontent-type: text/plain\n\nnot json",
            "GET /mcp\n\n",
            "DELETE /mcp\nmcp-session-id: nope\n\n",
        ]
        .iter()
        .map(|s| s.as_bytes().to_vec())
        .collect();
        let alphabet: Vec<char> = "ab/.:\\-#[]{}\"' \n\t<>|*?%日本語\u{feff}\0"
            .chars()
            .collect();
        let mut state: u64 = 0x9E37_79B9_7F4A_7C15;
        let mut next = || {
            state ^= state << 13;
            state ^= state >> 7;
            state ^= state << 17;
            state
        };
        for _ in 0..300 {
            let len = (next() % 40) as usize;
            let text: String = (0..len)
                .map(|_| alphabet[(next() % alphabet.len() as u64) as usize])
                .collect();
            out.push(text.into_bytes());
        }
        for _ in 0..100 {
            let len = (next() % 64) as usize;
            out.push((0..len).map(|_| next() as u8).collect());
        }
        out
    }

    fn texts() -> Vec<String> {
        samples()
            .into_iter()
            .filter_map(|b| String::from_utf8(b).ok())
            .collect()
    }

    #[test]
    fn path_target_holds_on_sample_inputs() {
        for t in texts() {
            crate::path::run(&t);
        }
    }

    #[test]
    fn args_target_holds_on_sample_inputs() {
        for b in samples() {
            crate::args::run(&b);
        }
    }

    #[test]
    fn markdown_target_holds_on_sample_inputs() {
        for t in texts() {
            crate::markdown::run(&t);
        }
    }

    #[test]
    fn scan_target_holds_on_sample_inputs() {
        for (i, t) in texts().iter().enumerate() {
            crate::scan::run(t, i as u8, (i * 7) as u16);
        }
    }

    #[test]
    fn framing_target_holds_on_sample_inputs() {
        for b in samples() {
            crate::framing::run(&b);
        }
    }

    #[test]
    fn http_target_holds_on_sample_inputs() {
        for b in samples() {
            crate::http::run(&b);
        }
    }

    #[test]
    fn model_target_holds_on_sample_inputs() {
        for b in samples() {
            crate::model::run(&b);
        }
    }
}
