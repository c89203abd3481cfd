//! The MCP Bundle for Claude Desktop: `kura bundle` writes its folder, the
//! official `mcpb` CLI validates the manifest and packs it, and the binary
//! unpacked from the bundle serves with the settings Claude Desktop
//! substitutes into the manifest's command.

use std::process::Command;

use kura_tests::{kura_bin, toolchain};
use serde_json::Value;

fn ran(cmd: &mut Command) -> String {
    String::from_utf8_lossy(&kura_tests::succeeded(cmd)).into_owned()
}

#[test]
fn the_bundle_validates_packs_and_its_binary_serves_the_roots_given() {
    let tmp = kura_tests::scratch::folder();
    let dir = tmp.path().join("bundle");
    ran(Command::new(kura_bin()).arg("bundle").arg(&dir));
    let manifest: Value =
        serde_json::from_str(&std::fs::read_to_string(dir.join("manifest.json")).unwrap()).unwrap();
    for root in ["vault_root", "manuals_root", "vibe_root"] {
        assert_eq!(
            manifest["user_config"][root]["type"], "directory",
            "{manifest:#}"
        );
    }
    assert!(
        manifest["tools"]
            .as_array()
            .unwrap()
            .iter()
            .any(|t| t["name"] == "vault_find"),
        "{manifest:#}"
    );
    let mcpb = toolchain::mcpb();
    let valid = ran(Command::new(&mcpb)
        .arg("validate")
        .arg(dir.join("manifest.json")));
    assert!(valid.contains("passes"), "{valid}");
    let packed = tmp.path().join("kura.mcpb");
    ran(Command::new(&mcpb).arg("pack").arg(&dir).arg(&packed));
    let unpacked = tmp.path().join("unpacked");
    ran(Command::new(&mcpb)
        .arg("unpack")
        .arg(&packed)
        .arg(&unpacked));

    // What Claude Desktop runs: the manifest's command and environment with
    // `${__dirname}` the unpacked folder and the user's settings filled in
    // (a folder left unset is an empty value).
    let vault = tmp.path().join("notes");
    std::fs::create_dir_all(&vault).unwrap();
    std::fs::write(vault.join("hello.md"), "# Hello\n").unwrap();
    let config = &manifest["server"]["mcp_config"];
    let fill = |s: &str| {
        s.replace("${__dirname}", &unpacked.display().to_string())
            .replace("${user_config.vault_root}", &vault.display().to_string())
            .replace("${user_config.manuals_root}", "")
            .replace("${user_config.vibe_root}", "")
    };
    let mut cmd = Command::new(fill(config["command"].as_str().unwrap()));
    for var in kura::config::env_names() {
        cmd.env_remove(var);
    }
    for (k, v) in config["env"].as_object().unwrap() {
        cmd.env(k, fill(v.as_str().unwrap()));
    }
    // One call with the same configuration `serve` would load.
    let listed = ran(cmd.env("HOME", tmp.path()).args(["call", "vault_ls", "{}"]));
    assert!(listed.contains("hello.md"), "{listed}");
    assert_eq!(config["args"], serde_json::json!(["serve"]));
}
