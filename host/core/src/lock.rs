//! Locked notes: a note whose front matter says `locked: true` (the key is
//! `lock_key`), or any file under a folder of `locked_folders`, is never
//! created over, changed, moved or deleted by any tool. Checked on every
//! change a root is about to make (the roots' recorder), so the vault's
//! tools, the bridge and the vibe tools all meet it, and a move whose link
//! rewrites reach a locked note fails whole and is undone.

use crate::config::Config;
use crate::error::{Code, Error, Result};
use crate::fs::RelPath;

#[derive(Clone, Debug, Default)]
pub struct Locks {
    key: String,
    /// Folders, each as its segments.
    folders: Vec<Vec<String>>,
}

impl Locks {
    /// The configuration's locks for a root.
    pub fn of(config: &Config) -> Locks {
        let folders = config
            .locked_folders
            .iter()
            .map(|f| {
                f.split('/')
                    .filter(|s| !s.is_empty() && *s != ".")
                    .map(str::to_owned)
                    .collect::<Vec<_>>()
            })
            .filter(|segs| !segs.is_empty())
            .collect();
        Locks {
            key: config.lock_key.clone(),
            folders,
        }
    }

    /// The refusal of a change to `p`, which holds `before` (None: no file
    /// yet), when a lock covers it.
    pub fn check(&self, p: &RelPath, before: Option<&[u8]>) -> Result<()> {
        if let Some(folder) = self.folders.iter().find(|f| self.under(p, f)) {
            let folder = folder.join("/");
            return Err(locked(
                p,
                format!("it is under `{folder}`, a folder of locked_folders"),
            )
            .with("lock", format!("locked_folders: {folder}")));
        }
        if let Some(text) = before
            && !self.key.is_empty()
            && front_matter_says(text, &self.key)
        {
            return Err(
                locked(p, format!("its front matter says `{}: true`", self.key))
                    .with("lock", format!("{}: true", self.key)),
            );
        }
        Ok(())
    }

    /// Whether `p` is `folder` or lies below it, each name compared as
    /// `.system/` is (`policy::names_folder`: trailing dots and spaces
    /// dropped, Unicode case folding), whatever this file system does: on
    /// exFAT or an SMB share `journal./2024.md` is `journal/2024.md`, and a
    /// vault synced to a case-folding disk merges `Journal/` into `journal/`.
    fn under(&self, p: &RelPath, folder: &[String]) -> bool {
        let segs = p.segments();
        segs.len() >= folder.len()
            && segs
                .iter()
                .zip(folder)
                .all(|(a, b)| crate::policy::names_folder(a, b))
    }

    /// The locks in force, one line each (`kura doctor`).
    pub fn describe(&self) -> Vec<String> {
        let mut out = vec![format!(
            "notes whose front matter says `{}: true`",
            self.key
        )];
        out.extend(
            self.folders
                .iter()
                .map(|f| format!("everything under `{}`", f.join("/"))),
        );
        out
    }
}

fn locked(p: &RelPath, why: String) -> Error {
    Error::new(
        Code::Forbidden,
        format!("`{p}` is locked ({why}); kura never changes, moves or deletes it. Unlock it yourself to let a tool change it"),
    )
    .with("path", p.to_string())
    .with("reason", "locked")
}

/// Whether `text` opens with front matter holding `key: true` at its top
/// level (YAML's `true`, quoted or not, any case).
fn front_matter_says(text: &[u8], key: &str) -> bool {
    let Ok(text) = std::str::from_utf8(text) else {
        return false;
    };
    let text = text.strip_prefix('\u{feff}').unwrap_or(text);
    let mut lines = text.lines();
    if lines.next().map(str::trim_end) != Some("---") {
        return false;
    }
    for line in lines {
        if matches!(line.trim_end(), "---" | "...") {
            return false;
        }
        let Some((k, v)) = line.split_once(':') else {
            continue;
        };
        // Top level only: an indented key belongs to another mapping.
        if k.starts_with([' ', '\t']) {
            continue;
        }
        let k = k.trim().trim_matches(['"', '\'']);
        let v = v
            .split(" #")
            .next()
            .unwrap_or(v)
            .trim()
            .trim_matches(['"', '\'']);
        if k == key {
            return v.eq_ignore_ascii_case("true");
        }
    }
    false
}

#[cfg(test)]
mod tests {
    use super::*;

    fn locks(folders: &[&str]) -> Locks {
        let config = Config {
            locked_folders: folders.iter().map(|s| s.to_string()).collect(),
            ..Config::default()
        };
        Locks::of(&config)
    }

    fn p(s: &str) -> RelPath {
        RelPath::parse(s, false).unwrap()
    }

    #[test]
    fn a_note_whose_front_matter_says_locked_is_locked() {
        let l = locks(&[]);
        for text in [
            "---\nlocked: true\n---\nbody\n",
            "---\ntitle: x\nlocked: True # mine\n---\n",
            "\u{feff}---\r\n\"locked\": 'true'\r\n---\r\n",
        ] {
            let e = l.check(&p("a.md"), Some(text.as_bytes())).unwrap_err();
            assert_eq!(e.code, Code::Forbidden, "{text:?}");
            assert!(e.message.contains("locked: true"), "{}", e.message);
        }
        for text in [
            "---\nlocked: false\n---\n",
            "---\nmeta:\n  locked: true\n---\n",
            "locked: true\n",
            "---\ntitle: x\n---\nlocked: true\n",
        ] {
            l.check(&p("a.md"), Some(text.as_bytes())).unwrap();
        }
        l.check(&p("new.md"), None).unwrap();
    }

    #[test]
    fn files_under_a_locked_folder_are_locked_and_its_neighbours_are_not() {
        let l = locks(&["journal/", "clients/acme"]);
        for locked in ["journal/a.md", "journal/2024/b.md", "clients/acme/x.md"] {
            let e = l.check(&p(locked), None).unwrap_err();
            assert!(e.message.contains("locked_folders"), "{}", e.message);
        }
        for free in ["journals/a.md", "clients/acme2/x.md", "clients/a.md"] {
            l.check(&p(free), None).unwrap();
        }
    }

    /// Issue 67: a locked folder was compared more loosely than `.system/`,
    /// so a name another file system reads as the locked folder's got past.
    #[test]
    fn locked_folders_are_compared_as_the_reserved_folder_is() {
        let l = locks(&["journal", "Über"]);
        for locked in [
            "journal./2024.md",
            "journal /2024.md",
            "JOURNAL/a.md",
            "Journal/a.md",
            "ÜBER/x.md",
            "U\u{308}ber/x.md",
        ] {
            l.check(&p(locked), None).unwrap_err();
        }
        l.check(&p("journal.md"), None).unwrap();
    }
}
