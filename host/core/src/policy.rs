//! The vault's baseline write rules: `.system/` is reserved, `daily/` holds
//! `YYYY-MM-DD.md` notes that are only ever created or appended to. Every
//! vault write is checked against them before any configured write-policy
//! component, which can add refusals but never lift these. Plain
//! functions, unit-tested here.

use crate::error::Code;

/// What a write is about to do (mirrors `kura:plugins/types.write-kind`).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Kind {
    Create,
    Overwrite,
    Append,
    Replace,
    CopyOverwrite,
    CopyAppend,
    /// A note leaves this path (vault_move, vault_delete).
    MoveFrom,
    /// A note arrives at this path (vault_move, vault_delete).
    MoveTo,
    /// Only the path part of links in this note changes, to keep pointing
    /// at a note that moved (vault_move).
    Relink,
}

#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Deny {
    pub code: Code,
    pub message: String,
}

fn deny(code: Code, message: impl Into<String>) -> Result<(), Deny> {
    Err(Deny {
        code,
        message: message.into(),
    })
}

/// Whether folder name `segment` is `name` on some file system kura may
/// serve: compared after canonical decomposition (NFD) and full Unicode
/// case folding, as casefolded ext4 and APFS compare names, so that no
/// spelling (`.SYSTEM`, `.ſystem` with a long s, `Daily` with a Kelvin
/// sign for a K elsewhere) reaches a protected folder. Applied whether or
/// not the vault's own file system folds case: a vault synced to one that
/// does merges those folders there. Trailing dots and spaces are dropped
/// first, as FAT, exFAT and SMB shares drop them from a name
/// (`.system./x.md` is `.system/x.md` there).
pub fn names_folder(segment: &str, name: &str) -> bool {
    use unicode_normalization::UnicodeNormalization;
    let segment = segment.trim_end_matches(['.', ' ']);
    if segment.is_ascii() && name.is_ascii() {
        return segment.eq_ignore_ascii_case(name);
    }
    let (a, b): (String, String) = (segment.nfd().collect(), name.nfd().collect());
    unicase::eq(a.as_str(), b.as_str())
}

/// The reserved folder at the vault's top.
pub const RESERVED: &str = ".system";
/// The folder of daily notes at the vault's top.
pub const DAILY: &str = "daily";

/// Whether vault path `path` lies under the reserved `.system/` (or is it).
pub fn is_reserved(path: &str) -> bool {
    names_folder(top_segment(path), RESERVED)
}

/// The first path segment decides the area: the reserved `.system/` and the
/// append-only `daily/` live at the vault root only.
fn top_segment(path: &str) -> &str {
    path.split('/').next().unwrap_or("")
}

/// `YYYY-MM-DD.md` with a real calendar date.
pub fn is_daily_name(name: &str) -> bool {
    let Some(stem) = name.strip_suffix(".md") else {
        return false;
    };
    let b = stem.as_bytes();
    if b.len() != 10 || b[4] != b'-' || b[7] != b'-' {
        return false;
    }
    let digits = |r: std::ops::Range<usize>| -> Option<u32> {
        let s = &stem[r];
        if s.bytes().all(|c| c.is_ascii_digit()) {
            s.parse().ok()
        } else {
            None
        }
    };
    let (Some(y), Some(m), Some(d)) = (digits(0..4), digits(5..7), digits(8..10)) else {
        return false;
    };
    if !(1..=12).contains(&m) || d == 0 {
        return false;
    }
    let leap = (y % 4 == 0 && y % 100 != 0) || y % 400 == 0;
    let days = match m {
        2 if leap => 29,
        2 => 28,
        4 | 6 | 9 | 11 => 30,
        _ => 31,
    };
    d <= days
}

/// Decide one write. `path` is vault-relative and already validated by the host.
pub fn check(kind: Kind, path: &str, exists: bool) -> Result<(), Deny> {
    let top = top_segment(path);
    if names_folder(top, RESERVED) {
        return deny(
            Code::Forbidden,
            format!("`{path}` is under `.system/`, which is reserved for the server"),
        );
    }
    match top {
        top if names_folder(top, DAILY) => {
            let rest = path.split_once('/').map_or("", |(_, r)| r);
            if rest.contains('/') || !is_daily_name(rest) {
                return deny(
                    Code::Forbidden,
                    format!(
                        "`{path}`: notes under `daily/` must be named `daily/YYYY-MM-DD.md` with a real date"
                    ),
                );
            }
            match kind {
                Kind::MoveFrom | Kind::MoveTo => deny(
                    Code::Forbidden,
                    format!(
                        "`{path}`: daily notes are never moved or renamed, and none is made by a move"
                    ),
                ),
                // The one change a daily note takes besides appending: its
                // links follow a note that moved, so they do not break.
                Kind::Relink => Ok(()),
                // The first write of a day is vault_create's (000/001).
                Kind::Append | Kind::CopyAppend if !exists => deny(
                    Code::Conflict,
                    format!(
                        "`{path}` does not exist yet; a daily note is created with vault_create"
                    ),
                ),
                Kind::Create | Kind::Append | Kind::CopyAppend => Ok(()),
                Kind::Replace => deny(
                    Code::Forbidden,
                    format!("`{path}`: daily notes are append-only; replace is not allowed"),
                ),
                Kind::Overwrite | Kind::CopyOverwrite => deny(
                    Code::Forbidden,
                    format!("`{path}`: daily notes are append-only; use mode=append"),
                ),
            }
        }
        _ => Ok(()),
    }
}

/// Decide a folder a move makes (the folders around the notes it moves,
/// and the empty ones a moved folder holds): never `.system/` or inside
/// it, never inside `daily/`, which holds daily notes only.
pub fn check_folder(path: &str) -> Result<(), Deny> {
    let top = top_segment(path);
    if names_folder(top, RESERVED) {
        return deny(
            Code::Forbidden,
            format!("`{path}` is under `.system/`, which is reserved for the server"),
        );
    }
    if names_folder(top, DAILY) && path.contains('/') {
        return deny(
            Code::Forbidden,
            format!("`{path}`: `daily/` holds daily notes only, no folders"),
        );
    }
    Ok(())
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_move_makes_no_folder_in_system_or_daily() {
        assert!(check_folder(".system").is_err());
        assert!(check_folder(".System./x").is_err());
        assert!(check_folder("daily/old").is_err());
        assert!(check_folder("daily").is_ok());
        assert!(check_folder("archive/daily").is_ok());
    }

    #[test]
    fn system_folder_is_reserved_for_every_kind() {
        for kind in [
            Kind::Create,
            Kind::Overwrite,
            Kind::Append,
            Kind::Replace,
            Kind::CopyOverwrite,
            Kind::CopyAppend,
            Kind::MoveFrom,
            Kind::MoveTo,
            Kind::Relink,
        ] {
            let err = check(kind, ".system/x.md", true).unwrap_err();
            assert_eq!(err.code, Code::Forbidden, "{kind:?}");
        }
        assert!(check(Kind::Create, ".system", false).is_err());
    }

    #[test]
    fn reserved_names_are_compared_as_fat_exfat_and_smb_compare_them() {
        // Those file systems drop a name's trailing dots and spaces.
        for p in [
            ".system./x.md",
            ".system /x.md",
            ".System. ./a.md",
            ".system.",
        ] {
            assert_eq!(
                check(Kind::Create, p, false).unwrap_err().code,
                Code::Forbidden,
                "{p}"
            );
            assert!(is_reserved(p), "{p}");
        }
        for p in ["daily./2026-01-01.md", "daily /2026-01-01.md"] {
            assert_eq!(
                check(Kind::Overwrite, p, true).unwrap_err().code,
                Code::Forbidden,
                "{p}"
            );
            assert_eq!(
                check(Kind::MoveTo, p, false).unwrap_err().code,
                Code::Forbidden
            );
        }
        // A dot inside a name is part of it.
        assert!(!names_folder(".system.d", RESERVED));
    }

    #[test]
    fn reserved_folders_are_compared_under_full_case_folding() {
        // `.ſystem` (long s) folds to `.system` as `.SYSTEM` does.
        for p in [".SYSTEM/x.md", ".ſystem/x.md", ".Syſtem/a/b.md", ".system"] {
            assert_eq!(
                check(Kind::Create, p, false).unwrap_err().code,
                Code::Forbidden,
                "{p}"
            );
            assert!(is_reserved(p), "{p}");
        }
        for p in ["Daily/2026-01-01.md", "DAILY/2026-01-01.md"] {
            assert_eq!(
                check(Kind::Overwrite, p, true).unwrap_err().code,
                Code::Forbidden,
                "{p}"
            );
        }
        // The decomposed and composed spellings of one name are one name.
        assert!(names_folder("Cafe\u{301}", "café"));
        assert!(!names_folder(".systems", RESERVED));
        assert!(!is_reserved("notes/.system/x.md"));
    }

    #[test]
    fn nested_system_folder_is_an_ordinary_folder() {
        assert!(check(Kind::Create, "notes/.system/x.md", false).is_ok());
    }

    #[test]
    fn daily_create_needs_a_real_date() {
        assert!(check(Kind::Create, "daily/2026-02-28.md", false).is_ok());
        assert!(check(Kind::Create, "daily/2024-02-29.md", false).is_ok());
        for bad in [
            "daily/2026-02-29.md",
            "daily/2026-13-01.md",
            "daily/2026-00-10.md",
            "daily/2026-04-31.md",
            "daily/2026-4-01.md",
            "daily/2026-04-01.txt",
            "daily/notes.md",
            "daily/2026/04-01.md",
            "daily/sub/2026-04-01.md",
            "daily/２０２６-04-01.md",
            "daily",
        ] {
            assert_eq!(
                check(Kind::Create, bad, false).unwrap_err().code,
                Code::Forbidden,
                "{bad}"
            );
        }
    }

    #[test]
    fn daily_is_append_only() {
        assert!(check(Kind::Append, "daily/2026-01-01.md", true).is_ok());
        assert!(check(Kind::CopyAppend, "daily/2026-01-01.md", true).is_ok());
        for kind in [Kind::Overwrite, Kind::Replace, Kind::CopyOverwrite] {
            assert_eq!(
                check(kind, "daily/2026-01-01.md", true).unwrap_err().code,
                Code::Forbidden
            );
        }
    }

    #[test]
    fn daily_notes_are_never_moved_but_their_links_follow_a_moved_note() {
        for kind in [Kind::MoveFrom, Kind::MoveTo] {
            assert_eq!(
                check(kind, "daily/2026-01-01.md", true).unwrap_err().code,
                Code::Forbidden
            );
        }
        assert!(check(Kind::Relink, "daily/2026-01-01.md", true).is_ok());
    }

    #[test]
    fn daily_first_write_is_a_create() {
        for kind in [Kind::Append, Kind::CopyAppend] {
            assert_eq!(
                check(kind, "daily/2026-01-02.md", false).unwrap_err().code,
                Code::Conflict
            );
        }
    }

    #[test]
    fn elsewhere_everything_is_allowed() {
        assert!(check(Kind::Overwrite, "notes/a.md", true).is_ok());
        assert!(check(Kind::Replace, "dailyish/a.md", true).is_ok());
    }
}
