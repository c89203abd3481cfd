//! A vault on a FUSE mount that has neither `renameat2(RENAME_NOREPLACE)`
//! nor hard links: `rclone mount` of a local folder, the way people mount
//! cloud drives (it answers EINVAL to the flag and EIO to `link`). Every
//! write works there, a taken name is still refused, and `kura doctor`
//! says which guarantee the mount gets. Where FUSE or rclone is missing
//! the tests say so and pass, unless `KURA_REQUIRE_FUSE` is set (CI sets
//! it where it installed them), which makes their absence a failure.

#![allow(clippy::disallowed_methods)] // the test mounts and reads with std

use std::path::{Path, PathBuf};
use std::process::{Child, Command, Stdio};
use std::time::{Duration, Instant};

use kura_tests::{Kura, kura_bin};
use rmcp::service::ClientLifecycleMode;
use serde_json::json;

/// A local folder mounted through `rclone mount`, unmounted on drop.
struct Mount {
    dir: tempfile::TempDir,
    rclone: Child,
}

impl Mount {
    /// The mount, or None (with the reason printed) where it cannot be made.
    fn start() -> Option<Mount> {
        let missing = |why: String| {
            assert!(
                std::env::var_os("KURA_REQUIRE_FUSE").is_none(),
                "KURA_REQUIRE_FUSE is set, but {why}"
            );
            eprintln!("skipped: {why}");
            None
        };
        if !Path::new("/dev/fuse").exists() {
            return missing("this machine has no /dev/fuse".into());
        }
        let dir = kura_tests::scratch::folder();
        let (remote, mnt) = (dir.path().join("remote"), dir.path().join("mnt"));
        std::fs::create_dir_all(&remote).unwrap();
        std::fs::create_dir_all(&mnt).unwrap();
        let spawned = Command::new("rclone")
            .arg("mount")
            .args([&remote, &mnt])
            .args(["--vfs-cache-mode", "off", "--config", "/dev/null"])
            .stdout(Stdio::null())
            .stderr(Stdio::null())
            .spawn();
        let rclone = match spawned {
            Ok(c) => c,
            Err(e) => return missing(format!("rclone cannot be started ({e})")),
        };
        let mut m = Mount { dir, rclone };
        let t = Instant::now();
        while !m.mounted() {
            if let Ok(Some(status)) = m.rclone.try_wait() {
                return missing(format!(
                    "rclone mount exited ({status}): FUSE is not usable here"
                ));
            }
            if t.elapsed() > Duration::from_secs(20) {
                return missing("rclone mount did not come up in 20 s".into());
            }
            std::thread::sleep(Duration::from_millis(50));
        }
        Some(m)
    }

    fn mounted(&self) -> bool {
        let mnt = self.vault().display().to_string();
        std::fs::read_to_string("/proc/self/mounts")
            .unwrap_or_default()
            .lines()
            .any(|l| l.split(' ').nth(1) == Some(mnt.as_str()) && l.contains("fuse.rclone"))
    }

    fn vault(&self) -> PathBuf {
        self.dir.path().join("mnt")
    }

    /// The folder behind the mount, as rclone writes it.
    fn remote(&self) -> PathBuf {
        self.dir.path().join("remote")
    }

    fn state(&self) -> PathBuf {
        self.dir.path().join("state")
    }
}

impl Drop for Mount {
    fn drop(&mut self) {
        let _ = Command::new("fusermount3")
            .arg("-u")
            .arg(self.vault())
            .status();
        // rclone exits once unmounted; kill it if the unmount failed.
        let t = Instant::now();
        while matches!(self.rclone.try_wait(), Ok(None)) && t.elapsed() < Duration::from_secs(5) {
            std::thread::sleep(Duration::from_millis(50));
        }
        let _ = self.rclone.kill();
        let _ = self.rclone.wait();
    }
}

#[tokio::test]
async fn creates_and_moves_work_on_a_mount_without_noreplace_or_links() {
    let Some(m) = Mount::start() else { return };
    std::fs::create_dir_all(m.vault().join("notes")).unwrap();
    std::fs::write(m.vault().join("notes/a.md"), "# A\nSee [[b]].\n").unwrap();
    let vault = m.vault().display().to_string();
    let state = m.state().display().to_string();
    let k = Kura::start(
        vec![
            "serve".into(),
            "--vault-root".into(),
            vault,
            "--state-dir".into(),
            state,
        ],
        ClientLifecycleMode::Initialize,
    )
    .await;
    let created = k
        .call(
            "vault_create",
            json!({"path": "new/deep/b.md", "content": "# B\n"}),
        )
        .await;
    created.ok();
    assert_eq!(
        std::fs::read_to_string(m.remote().join("new/deep/b.md")).unwrap(),
        "# B\n"
    );
    // A taken name is refused, and the note there is kept.
    let again = k
        .call(
            "vault_create",
            json!({"path": "new/deep/b.md", "content": "other"}),
        )
        .await;
    assert_eq!(again.code(), "conflict", "{}", again.body);
    let onto = k
        .call(
            "vault_move",
            json!({"from": "new/deep/b.md", "to": "notes/a.md"}),
        )
        .await;
    assert_eq!(onto.code(), "conflict", "{}", onto.body);
    assert_eq!(
        std::fs::read_to_string(m.vault().join("notes/a.md")).unwrap(),
        "# A\nSee [[b]].\n"
    );
    // A move (its link rewritten), a rewrite, a deletion and their undo.
    let moved = k
        .call(
            "vault_move",
            json!({"from": "new/deep/b.md", "to": "moved/c.md"}),
        )
        .await;
    assert_eq!(moved.ok()["links_rewritten"], 1, "{}", moved.body);
    assert!(m.vault().join("moved/c.md").is_file());
    k.call(
        "vault_write",
        json!({"path": "moved/c.md", "content": "# C\n", "mode": "overwrite"}),
    )
    .await
    .ok();
    k.call("vault_delete", json!({"path": "notes/a.md"}))
        .await
        .ok();
    assert!(m.vault().join(".trash/notes/a.md").is_file());
    k.call("vault_undo", json!({"session": "current"}))
        .await
        .ok();
    assert_eq!(
        std::fs::read_to_string(m.remote().join("notes/a.md")).unwrap(),
        "# A\nSee [[b]].\n"
    );
    assert!(!m.vault().join("moved").exists());
    assert!(!m.vault().join("new").exists());
    drop(k);
}

#[test]
fn doctor_says_how_a_mount_without_noreplace_takes_new_names() {
    let Some(m) = Mount::start() else { return };
    let out = Command::new(kura_bin())
        .args(["doctor", "--json", "--vault-root"])
        .arg(m.vault())
        .env("HOME", m.dir.path())
        .output()
        .unwrap();
    let report: serde_json::Value = serde_json::from_slice(&out.stdout).unwrap();
    let roots: Vec<&serde_json::Value> = report["findings"]
        .as_array()
        .unwrap()
        .iter()
        .filter(|f| f["area"] == "roots" && f["says"].as_str().unwrap().starts_with("vault:"))
        .collect();
    assert_eq!(roots.len(), 1, "{report:#}");
    assert_eq!(roots[0]["status"], "warn", "{report:#}");
    assert!(
        roots[0]["says"]
            .as_str()
            .unwrap()
            .contains("checked rename"),
        "{report:#}"
    );
}
