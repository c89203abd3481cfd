//! `kura serve` confines its own process (Linux Landlock) by default: its log
//! says what was applied, and the tools work under it — every other
//! end-to-end suite runs sandboxed too, since that is the default. That a
//! confined thread cannot open a file outside its roots even through
//! `std::fs` is shown by `fs::sandbox`'s own test, with the same rules.

use kura_tests::{Fixture, Kura};
use rmcp::service::ClientLifecycleMode;
use serde_json::json;

/// The kernel's Landlock ABI (0: none).
pub(crate) fn landlock_abi() -> i64 {
    // SAFETY: landlock_create_ruleset(NULL, 0, LANDLOCK_CREATE_RULESET_VERSION)
    // only returns a number.
    let abi = unsafe {
        libc::syscall(
            libc::SYS_landlock_create_ruleset,
            std::ptr::null::<u8>(),
            0usize,
            1u32,
        )
    };
    abi.max(0)
}

/// Serve the fixture's vault, manuals and vibe roots with `extra`
/// arguments, run a write, a read, a search and a vibe write, and return
/// kura's log.
async fn serve_and_use(f: &Fixture, extra: &[&str]) -> String {
    let log = f.outside().parent().unwrap().join("kura.log");
    let manuals = f.manuals().display().to_string();
    let mut args = vec!["--manuals-root", manuals.as_str()];
    args.extend_from_slice(extra);
    let k = Kura::start_logging(
        f.vibe_args(&args),
        ClientLifecycleMode::Initialize,
        std::fs::File::create(&log).unwrap().into(),
    )
    .await;
    k.call(
        "vault_create",
        json!({"path": "inbox/sandboxed.md", "content": "written under the sandbox\n"}),
    )
    .await
    .ok();
    let read = k
        .call(
            "vault_read",
            json!({"path": "inbox/sandboxed.md", "full": true}),
        )
        .await;
    assert_eq!(read.ok()["text"], "written under the sandbox\n");
    let found = k.call("manual_find", json!({"query": "API"})).await;
    assert!(found.ok()["trace_id"].is_string());
    let tasks = k.call("list_tasks", json!({})).await;
    let project = tasks.ok()["tasks"][0]["project"]
        .as_str()
        .unwrap()
        .to_owned();
    k.call(
        "log_session",
        json!({"project": project, "content": "a session under the sandbox"}),
    )
    .await
    .ok();
    k.stop().await;
    f.assert_canary_untouched();
    std::fs::read_to_string(&log).unwrap()
}

#[tokio::test]
async fn serve_confines_itself_where_the_kernel_has_landlock_and_every_domain_works() {
    let f = Fixture::new();
    let log = serve_and_use(&f, &[]).await;
    let line = log
        .lines()
        .find(|l| l.contains("sandbox:"))
        .unwrap_or_else(|| panic!("no sandbox line in the log:\n{log}"));
    match landlock_abi() {
        0 => assert!(line.contains("sandbox: not applied"), "{line}"),
        1..=5 => assert!(line.contains("sandbox: Landlock partly enforced"), "{line}"),
        _ => assert!(line.contains("sandbox: Landlock fully enforced"), "{line}"),
    }
    if landlock_abi() > 0 {
        let manuals = f.manuals().display().to_string();
        let vault = f.vault().display().to_string();
        assert!(line.contains(&format!("read-only [{manuals}")), "{line}");
        assert!(line.contains(&vault), "{line}");
        assert!(!line.contains(&f.outside().display().to_string()), "{line}");
    }
}

#[tokio::test]
async fn no_sandbox_turns_the_confinement_off() {
    let f = Fixture::new();
    let log = serve_and_use(&f, &["--no-sandbox"]).await;
    assert!(log.contains("sandbox: off"), "{log}");
    assert!(!log.contains("Landlock"), "{log}");
}
