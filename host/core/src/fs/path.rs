//! Parsing of the relative paths tools receive. Nothing here touches the disk:
//! it decides `invalid_path` (malformed) versus `out_of_scope` (would leave
//! the root) and yields normalised `/`-separated segments.

use crate::error::{Code, Error, Result};

/// The longest path a tool accepts (Linux's `PATH_MAX`).
pub const PATH_MAX_BYTES: usize = 4096;

/// A validated path relative to a root: no `.`/`..`, no empty segments.
/// The empty path (no segments) is the root itself.
#[derive(Clone, Debug, PartialEq, Eq, Hash, PartialOrd, Ord)]
pub struct RelPath {
    segments: Vec<String>,
}

impl RelPath {
    pub fn root() -> Self {
        RelPath { segments: vec![] }
    }

    /// Parse a user-supplied path. `allow_root` accepts "" / "." / "/"-free
    /// spellings of the root itself (for listings); files never are the root.
    pub fn parse(input: &str, allow_root: bool) -> Result<Self> {
        if input.len() > PATH_MAX_BYTES {
            // Refused before any work, and not echoed back.
            return Err(Error::new(
                Code::InvalidPath,
                format!(
                    "the path is {} bytes long; at most {PATH_MAX_BYTES} are accepted",
                    input.len()
                ),
            ));
        }
        let bad = |why: &str| {
            Error::new(
                Code::InvalidPath,
                format!("invalid path `{}`: {why}", input.escape_debug()),
            )
            .with("path", input)
        };
        if input.is_empty() {
            return if allow_root {
                Ok(RelPath::root())
            } else {
                Err(bad("the path is empty"))
            };
        }
        if input.chars().any(|c| c == '\0' || c.is_control()) {
            return Err(bad("it contains a NUL or control character"));
        }
        if input.contains('\\') {
            return Err(bad("use `/` to separate folders, not a backslash"));
        }
        if input.starts_with('/') {
            return Err(bad(
                "paths are relative to the root; an absolute path is not allowed",
            ));
        }
        let mut segments: Vec<String> = Vec::new();
        for seg in input.split('/') {
            match seg {
                "" | "." => {}
                ".." => {
                    if segments.pop().is_none() {
                        return Err(Error::new(
                            Code::OutOfScope,
                            format!("path `{input}` would leave the root"),
                        )
                        .with("path", input));
                    }
                }
                s => segments.push(s.to_owned()),
            }
        }
        if segments.is_empty() && !allow_root {
            return Err(bad("the path names the root folder, not a file"));
        }
        // Judged on the path as resolved, so `./c:x` is refused as `c:x`
        // is, and a path prints as something that parses again.
        let b = segments.first().map_or(&[][..], |s| s.as_bytes());
        if b.len() >= 2 && b[0].is_ascii_alphabetic() && b[1] == b':' {
            return Err(bad("a drive letter is not allowed"));
        }
        Ok(RelPath { segments })
    }

    pub fn segments(&self) -> &[String] {
        &self.segments
    }

    pub fn is_root(&self) -> bool {
        self.segments.is_empty()
    }

    pub fn file_name(&self) -> Option<&str> {
        self.segments.last().map(String::as_str)
    }

    pub fn parent(&self) -> RelPath {
        let mut segments = self.segments.clone();
        segments.pop();
        RelPath { segments }
    }

    pub fn join(&self, name: &str) -> RelPath {
        let mut segments = self.segments.clone();
        segments.push(name.to_owned());
        RelPath { segments }
    }

    /// `a/b/c`, or `.` for the root (cap-std wants a non-empty path).
    pub fn as_fs_path(&self) -> String {
        if self.segments.is_empty() {
            ".".to_owned()
        } else {
            self.segments.join("/")
        }
    }

    pub fn extension(&self) -> Option<&str> {
        self.file_name()?.rsplit_once('.').map(|(_, e)| e)
    }
}

impl std::fmt::Display for RelPath {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str(&self.segments.join("/"))
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn code(input: &str) -> Code {
        RelPath::parse(input, false).unwrap_err().code
    }

    #[test]
    fn malformed_paths_are_invalid_path() {
        for p in [
            "",
            "/etc/passwd",
            "a\\b",
            "..\\x",
            "a\0b",
            "a\nb",
            "C:x",
            "c:/x",
            "\u{7f}",
        ] {
            assert_eq!(code(p), Code::InvalidPath, "{p:?}");
        }
    }

    #[test]
    fn a_drive_letter_is_refused_however_the_path_reaches_it() {
        // Found by the `path` fuzz target: `./n:<` parsed to `n:<`, which
        // printed as a path that no longer parsed.
        for p in ["./n:<", "a/../c:x", ".//C:/y"] {
            assert_eq!(code(p), Code::InvalidPath, "{p:?}");
        }
        assert!(RelPath::parse("notes/c:x", false).is_ok());
    }

    #[test]
    fn dotdot_past_the_root_is_out_of_scope() {
        for p in ["..", "../x", "a/../../x", "./../x"] {
            assert_eq!(code(p), Code::OutOfScope, "{p:?}");
        }
    }

    #[test]
    fn dotdot_inside_the_root_normalises() {
        assert_eq!(
            RelPath::parse("a/../b//c/./d", false).unwrap().to_string(),
            "b/c/d"
        );
    }

    #[test]
    fn fullwidth_and_percent_dots_are_plain_names() {
        // No NFKC, no percent-decoding: these are literal file names.
        assert_eq!(
            RelPath::parse("．．/x", false).unwrap().segments()[0],
            "．．"
        );
        assert_eq!(
            RelPath::parse("%2e%2e/x", false).unwrap().segments()[0],
            "%2e%2e"
        );
    }

    #[test]
    fn root_only_where_allowed() {
        assert!(RelPath::parse(".", true).unwrap().is_root());
        assert_eq!(code("."), Code::InvalidPath);
    }

    proptest::proptest! {
        /// Whatever the input, a parsed path holds only plain names: it can
        /// never name anything above the root, and it prints back as itself.
        #[test]
        fn parsed_paths_stay_beneath_the_root(input in "[a./\\\\:%\\x00-\\x1f日]{0,24}") {
            if let Ok(p) = RelPath::parse(&input, true) {
                for seg in p.segments() {
                    proptest::prop_assert!(!seg.is_empty() && seg != "." && seg != "..");
                    proptest::prop_assert!(!seg.contains('/') && !seg.contains('\\'));
                }
                let again = RelPath::parse(&p.to_string(), true).unwrap();
                proptest::prop_assert_eq!(again, p);
            }
        }
    }
}
