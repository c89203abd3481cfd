//! Writes from several clients and several server processes on one vault:
//! each write is atomic and none is lost.

use kura_tests::{Fixture, Kura};
use serde_json::json;

async fn appends(k: &Kura, who: &str) {
    for i in 0..60 {
        let line = format!("{who}-{i}\n");
        k.call(
            "vault_write",
            json!({"path": "shared.md", "content": line, "mode": "append"}),
        )
        .await
        .ok();
    }
}

#[tokio::test]
async fn appends_from_two_server_processes_are_never_lost() {
    let f = Fixture::new();
    f.write("shared.md", "");
    let a = f.start().await;
    let b = f.start().await;
    tokio::join!(
        appends(&a, "a"),
        appends(&b, "b"),
        appends(&a, "c"),
        appends(&b, "d")
    );
    let text = f.read("shared.md");
    let mut lines: Vec<&str> = text.lines().collect();
    assert_eq!(lines.len(), 240, "lost appends");
    lines.sort();
    lines.dedup();
    assert_eq!(lines.len(), 240, "duplicated appends");
}

#[tokio::test]
async fn readers_see_the_old_or_the_new_file_never_a_mix() {
    let f = Fixture::new();
    let old = "old ".repeat(5000);
    let new = "new ".repeat(5000);
    f.write("flip.md", &old);
    let w = f.start().await;
    let r = f.start().await;
    let writer = async {
        for i in 0..40 {
            let content = if i % 2 == 0 { &new } else { &old };
            w.call(
                "vault_write",
                json!({"path": "flip.md", "content": content, "mode": "overwrite"}),
            )
            .await
            .ok();
        }
    };
    let reader = async {
        for _ in 0..80 {
            let rep = r.call("vault_scan", json!({"path": "flip.md"})).await;
            let text = rep.ok()["text"].as_str().unwrap().to_owned();
            assert!(text == old[..12000] || text == new[..12000], "a torn read");
        }
    };
    tokio::join!(writer, reader);
}
