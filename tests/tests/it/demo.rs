//! The README's main job, `kura demo`, run as a user runs it: it tours the
//! bundled data through a real `kura serve`, and only the writes it shows
//! being refused are refused.

#![allow(clippy::disallowed_methods)] // the test reads its temporary folder with std::fs

use std::process::Command;

use kura_tests::kura_bin;

#[test]
fn the_readme_main_job_tours_the_demo_and_only_the_refusals_fail() {
    let tmp = kura_tests::scratch::folder();
    let out = Command::new(kura_bin())
        .arg("demo")
        // Its temporary copy goes here, so the test can see it removed.
        .env("TMPDIR", tmp.path())
        .output()
        .expect("run kura demo");
    let stdout = String::from_utf8_lossy(&out.stdout);
    let stderr = String::from_utf8_lossy(&out.stderr);
    assert!(
        out.status.success(),
        "kura demo failed:\n{stdout}\n{stderr}"
    );

    // Each numbered step is its title line, the call, then the answer's mark.
    let lines: Vec<&str> = stdout.lines().collect();
    let mut steps = 0;
    for (i, line) in lines.iter().enumerate() {
        let Some((n, title)) = line.split_once(". ") else {
            continue;
        };
        if n.parse::<usize>().is_err() || !lines[i + 1].trim_start().starts_with('→') {
            continue;
        }
        steps += 1;
        let refused = lines[i + 2].trim_start().starts_with("← error");
        assert_eq!(
            refused,
            title.starts_with("A refused"),
            "step {n} ({title}) answered {}",
            lines[i + 2]
        );
    }
    assert!(steps >= 25, "only {steps} steps in:\n{stdout}");
    for shown in [
        "\"code\": \"forbidden\"",
        // The history's promise: a mistake undone, then an undo refused
        // over the person's own line.
        "\"tool\": \"vault_undo\"",
        "\"code\": \"conflict\"",
        "claims",
        "next_actions",
        "project_briefing",
        "done.",
    ] {
        assert!(stdout.contains(shown), "no {shown} in:\n{stdout}");
    }
    let left: Vec<_> = std::fs::read_dir(tmp.path()).unwrap().collect();
    assert!(left.is_empty(), "the demo left {left:?} behind");
}

/// What `cargo install --path host` puts on a user's PATH is the binary
/// alone: copied away from the checkout and run from an unrelated folder
/// with an empty home, it still tours the demo (its data, components and
/// templates are inside it).
#[test]
fn the_binary_alone_needs_no_checkout() {
    let tmp = kura_tests::scratch::folder();
    let bin = tmp.path().join("bin");
    std::fs::create_dir_all(&bin).unwrap();
    std::fs::copy(kura_bin(), bin.join("kura")).unwrap();
    let (elsewhere, home) = (tmp.path().join("elsewhere"), tmp.path().join("home"));
    std::fs::create_dir_all(&elsewhere).unwrap();
    std::fs::create_dir_all(&home).unwrap();
    let out = Command::new(bin.join("kura"))
        .arg("demo")
        .current_dir(&elsewhere)
        .env("HOME", &home)
        .env("TMPDIR", tmp.path())
        .env_remove("XDG_CONFIG_HOME")
        .env_remove("XDG_CACHE_HOME")
        .output()
        .unwrap();
    let stdout = String::from_utf8_lossy(&out.stdout);
    assert!(
        out.status.success() && stdout.contains("done."),
        "{stdout}\n{}",
        String::from_utf8_lossy(&out.stderr)
    );
}
