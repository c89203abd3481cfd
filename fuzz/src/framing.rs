//! JSON-RPC framing: any line gets a verdict; what is forwarded is a JSON
//! object (or blank), and every reply is one JSON-RPC error response.

use kura::server::framing::{Verdict, check};

pub fn run(line: &[u8]) {
    if line.contains(&b'\n') {
        return;
    }
    match check(line) {
        Verdict::Forward => {
            let body = line
                .strip_prefix(b"\xEF\xBB\xBF")
                .unwrap_or(line)
                .trim_ascii();
            if !body.is_empty() {
                let v: serde_json::Value = serde_json::from_slice(body).expect("forwarded JSON");
                assert!(v.is_object());
            }
        }
        Verdict::Reply(r) => {
            let v: serde_json::Value = serde_json::from_str(&r).expect("a JSON reply");
            assert_eq!(v["jsonrpc"], "2.0");
            assert!(v["error"]["code"].is_i64());
        }
    }
}
