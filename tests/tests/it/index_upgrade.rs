//! An index in the state folder that this kura did not write as it is now:
//! one of an earlier format (a fixture checked in when the format was 7), one
//! whose manifest is damaged, one with a truncated segment. Each is reused
//! only if it is sound and of this version, else rebuilt from the files;
//! never misread, never a crash.

use std::path::{Path, PathBuf};
use std::time::Duration;

use kura_tests::{Kura, command, wait_for_log, workspace};
use rmcp::service::ClientLifecycleMode;
use serde_json::json;

/// The format the fixture was written in.
const FIXTURE_FORMAT: u32 = 7;

fn copy_dir(from: &Path, to: &Path) {
    std::fs::create_dir_all(to).unwrap();
    for e in std::fs::read_dir(from).unwrap() {
        let e = e.unwrap();
        if e.file_type().unwrap().is_dir() {
            copy_dir(&e.path(), &to.join(e.file_name()));
        } else {
            std::fs::copy(e.path(), to.join(e.file_name())).unwrap();
        }
    }
}

struct Upgrade {
    dir: tempfile::TempDir,
}

impl Upgrade {
    /// The fixture's vault, and its index where kura looks for it.
    async fn new() -> (Upgrade, PathBuf) {
        let fixture = workspace().join("fixtures/index/format-7");
        let u = Upgrade {
            dir: kura_tests::scratch::folder(),
        };
        copy_dir(&fixture.join("vault"), &u.dir.path().join("vault"));
        // A first `kura index` names the vault's index folder (after the
        // vault's path) before it returns; the fixture's files then take
        // its place.
        let out = command(&u.args("index")).output().await.unwrap();
        assert!(out.status.success(), "{out:?}");
        let index = std::fs::read_dir(u.dir.path().join("state/index"))
            .unwrap()
            .map(|e| e.unwrap().path())
            // The folder, not the lock file beside it.
            .find(|p| {
                p.is_dir()
                    && p.file_name()
                        .unwrap()
                        .to_string_lossy()
                        .starts_with("vault-")
            })
            .expect("the vault's index folder");
        std::fs::remove_dir_all(&index).unwrap();
        copy_dir(&fixture.join("index"), &index);
        (u, index)
    }

    /// `kura SUBCOMMAND` on the fixture's vault and this test's state.
    fn args(&self, subcommand: &str) -> Vec<String> {
        let (vault, state) = (self.dir.path().join("vault"), self.dir.path().join("state"));
        [
            subcommand,
            "--vault-root",
            vault.to_str().unwrap(),
            "--state-dir",
            state.to_str().unwrap(),
        ]
        .map(String::from)
        .to_vec()
    }

    async fn serve(&self, log: &str) -> Kura {
        let log = std::fs::File::create(self.dir.path().join(log)).unwrap();
        Kura::start_command(
            command(&self.args("serve")),
            ClientLifecycleMode::Initialize,
            log.into(),
        )
        .await
    }

    fn log(&self, name: &str) -> String {
        std::fs::read_to_string(self.dir.path().join(name)).unwrap()
    }

    /// What vault_find answers: the notes it integrates, best first.
    async fn finds(&self, k: &Kura) -> Vec<String> {
        let r = k.call("vault_find", json!({"query": "quokka diet"})).await;
        let r = r.ok();
        assert_eq!(r["summary"]["candidates"], 2, "{r}");
        r["next_actions"]
            .as_array()
            .unwrap()
            .iter()
            .filter_map(|a| a["params"]["path"].as_str().map(String::from))
            .collect()
    }
}

const REBUILT: &str = "index is rebuilt";

#[tokio::test]
async fn an_index_of_the_fixtures_format_is_reused_and_of_another_rebuilt() {
    let (u, _) = Upgrade::new().await;
    let k = u.serve("kura.log").await;
    assert_eq!(u.finds(&k).await, ["notes/quokka.md"]);
    k.stop().await;
    let log = u.log("kura.log");
    if kura::index::FORMAT == FIXTURE_FORMAT {
        assert!(!log.contains(REBUILT), "{log}");
    } else {
        assert!(log.contains(REBUILT), "{log}");
    }
}

#[tokio::test]
async fn a_damaged_manifest_means_a_rebuild_not_a_misread() {
    let (u, index) = Upgrade::new().await;
    std::fs::write(
        index.join("manifest.json"),
        b"{\"format\": 7, \"files\": {\"notes/",
    )
    .unwrap();
    let k = u.serve("kura.log").await;
    assert_eq!(u.finds(&k).await, ["notes/quokka.md"]);
    k.stop().await;
    let log = wait_for_log(
        &u.dir.path().join("kura.log"),
        REBUILT,
        Duration::from_secs(5),
    );
    assert!(log.contains("manifest"), "{log}");
}

#[tokio::test]
async fn a_truncated_segment_means_a_rebuild_not_a_crash() {
    let (u, index) = Upgrade::new().await;
    for e in std::fs::read_dir(&index).unwrap() {
        let p = e.unwrap().path();
        if p.extension().is_some_and(|x| x == "term" || x == "store") {
            let bytes = std::fs::read(&p).unwrap();
            std::fs::write(&p, &bytes[..bytes.len() / 2]).unwrap();
        }
    }
    let k = u.serve("kura.log").await;
    assert_eq!(u.finds(&k).await, ["notes/quokka.md"]);
    // The server still answers after the search.
    k.call("vault_ls", json!({})).await.ok();
    k.stop().await;
    wait_for_log(
        &u.dir.path().join("kura.log"),
        REBUILT,
        Duration::from_secs(5),
    );
}
