//! `kura setup CLIENT`: the real binary writes itself into each client's
//! configuration file under a temporary home, and the file is read back
//! as the client reads it; other servers and settings are kept; a second
//! run changes nothing; a dry run writes nothing; a file with comments or a
//! link is left as it is.

use std::path::Path;
use std::process::{Command, Output};

use kura_tests::kura_bin;
use serde_json::Value;

/// `kura setup ARGS` with `home` as the home folder (and no other
/// configuration folder, no CODEX_HOME).
fn setup(home: &Path, args: &[&str]) -> Output {
    Command::new(kura_bin())
        .arg("setup")
        .args(args)
        .env("HOME", home)
        .env_remove("XDG_CONFIG_HOME")
        .env_remove("CODEX_HOME")
        .output()
        .unwrap()
}

fn ok(out: &Output) -> String {
    assert!(
        out.status.success(),
        "{}\n{}",
        String::from_utf8_lossy(&out.stdout),
        String::from_utf8_lossy(&out.stderr)
    );
    String::from_utf8_lossy(&out.stdout).into_owned()
}

/// Each client: its file under the home, and kura's entry in it as that
/// client reads it (command, args).
const CLIENTS: &[(&str, &str)] = &[
    (
        "claude-desktop",
        ".config/Claude/claude_desktop_config.json",
    ),
    ("claude-code", ".claude.json"),
    ("cursor", ".cursor/mcp.json"),
    ("vscode", ".config/Code/User/mcp.json"),
    ("windsurf", ".codeium/windsurf/mcp_config.json"),
    ("zed", ".config/zed/settings.json"),
    ("codex", ".codex/config.toml"),
    ("gemini", ".gemini/settings.json"),
];

/// kura's entry in `text` as the client's own format has it.
fn entry(client: &str, text: &str) -> (String, Vec<String>) {
    let strings = |v: &Value| -> Vec<String> {
        v.as_array()
            .unwrap()
            .iter()
            .map(|a| a.as_str().unwrap().to_owned())
            .collect()
    };
    if client == "codex" {
        let t: toml::Table = text.parse().unwrap();
        let e = &t["mcp_servers"]["kura"];
        let args = e["args"]
            .as_array()
            .unwrap()
            .iter()
            .map(|a| a.as_str().unwrap().to_owned());
        return (e["command"].as_str().unwrap().to_owned(), args.collect());
    }
    let v: Value = serde_json::from_str(text).unwrap();
    let e = match client {
        "vscode" => &v["servers"]["kura"],
        "zed" => &v["context_servers"]["kura"],
        _ => &v["mcpServers"]["kura"],
    };
    if matches!(client, "vscode" | "claude-code") {
        assert_eq!(e["type"], "stdio", "{text}");
    }
    (
        e["command"].as_str().unwrap().to_owned(),
        strings(&e["args"]),
    )
}

#[test]
fn every_client_gets_an_entry_it_can_read_and_a_second_run_changes_nothing() {
    let home = kura_tests::scratch::folder();
    let notes = home.path().join("notes");
    std::fs::create_dir_all(&notes).unwrap();
    let notes = notes.display().to_string();
    for (client, file) in CLIENTS {
        let said = ok(&setup(home.path(), &[client, "--vault-root", &notes]));
        assert!(said.contains("created"), "{client}: {said}");
        let path = home.path().join(file);
        let text = std::fs::read_to_string(&path).unwrap();
        let (command, args) = entry(client, &text);
        assert_eq!(
            Path::new(&command),
            kura_bin().canonicalize().unwrap(),
            "{client}"
        );
        assert_eq!(args, ["serve", "--vault-root", notes.as_str()], "{client}");
        let again = ok(&setup(home.path(), &[client, "--vault-root", &notes]));
        assert!(again.contains("nothing changed"), "{client}: {again}");
        assert_eq!(std::fs::read_to_string(&path).unwrap(), text, "{client}");
    }
    let listed = ok(&setup(home.path(), &["--list"]));
    assert_eq!(
        listed.matches("kura is configured").count(),
        CLIENTS.len(),
        "{listed}"
    );
}

#[test]
fn other_servers_and_settings_are_kept_and_the_old_file_backed_up() {
    let home = kura_tests::scratch::folder();
    let path = home.path().join(".cursor/mcp.json");
    std::fs::create_dir_all(path.parent().unwrap()).unwrap();
    let before = "{\n  \"theme\": \"dark\",\n  \"mcpServers\": {\n    \"other\": {\"command\": \"x\",   \"args\": [\"--odd\"]}\n  }\n}\n";
    std::fs::write(&path, before).unwrap();
    // A dry run shows the change and writes nothing.
    let diff = ok(&setup(home.path(), &["cursor", "--dry-run"]));
    assert!(diff.contains("+    \"kura\": {"), "{diff}");
    assert_eq!(std::fs::read_to_string(&path).unwrap(), before);
    ok(&setup(home.path(), &["cursor"]));
    let after = std::fs::read_to_string(&path).unwrap();
    assert!(
        after.contains("\"other\": {\"command\": \"x\",   \"args\": [\"--odd\"]}"),
        "{after}"
    );
    let v: Value = serde_json::from_str(&after).unwrap();
    assert_eq!(v["theme"], "dark");
    assert_eq!(v["mcpServers"].as_object().unwrap().len(), 2, "{after}");
    let backup = home.path().join(".cursor/mcp.json.kura-backup");
    assert_eq!(std::fs::read_to_string(backup).unwrap(), before);
}

#[test]
fn a_file_with_comments_or_behind_a_link_is_left_as_it_is() {
    let home = kura_tests::scratch::folder();
    let zed = home.path().join(".config/zed/settings.json");
    std::fs::create_dir_all(zed.parent().unwrap()).unwrap();
    let jsonc = "{\n  // my font\n  \"buffer_font_size\": 15,\n}\n";
    std::fs::write(&zed, jsonc).unwrap();
    let out = setup(home.path(), &["zed"]);
    assert!(!out.status.success());
    let err = String::from_utf8_lossy(&out.stderr);
    assert!(
        err.contains("context_servers") && err.contains("\"kura\""),
        "{err}"
    );
    assert_eq!(std::fs::read_to_string(&zed).unwrap(), jsonc);
    // A configuration file that is a link (a dotfiles manager's) is not
    // written through.
    let real = home.path().join("dotfiles-gemini.json");
    std::fs::write(&real, "{}\n").unwrap();
    std::fs::create_dir_all(home.path().join(".gemini")).unwrap();
    std::os::unix::fs::symlink(&real, home.path().join(".gemini/settings.json")).unwrap();
    let out = setup(home.path(), &["gemini"]);
    assert!(!out.status.success());
    assert!(
        String::from_utf8_lossy(&out.stderr).contains("link"),
        "{out:?}"
    );
    assert_eq!(std::fs::read_to_string(&real).unwrap(), "{}\n");
    // An unknown client names the known ones.
    let out = setup(home.path(), &["notepad"]);
    assert!(
        String::from_utf8_lossy(&out.stderr).contains("claude-desktop"),
        "{out:?}"
    );
}
