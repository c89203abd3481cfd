//! Every tool kura serves: each domain's list, in the order of [`DOMAINS`],
//! and which of them a caller may see ([`Profile`]).

use crate::app::DOMAINS;
use crate::domain::Spec;
pub use crate::domain::tool::{Effect, Handler, ToolDef, Typed};

/// Every tool, in the order tools/list gives them.
pub fn all() -> impl Iterator<Item = &'static ToolDef> {
    DOMAINS.iter().flat_map(|d| d.tools)
}

/// Which tools a caller may see and call, besides the configured roots:
/// `read_only` (no tool that writes) and `tools` (names or domains; empty:
/// all). The configuration has one; an HTTP token may add its own.
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub struct Profile {
    pub read_only: bool,
    pub tools: Vec<String>,
}

impl Profile {
    /// The configuration's `read_only` and `tools`.
    pub fn of(config: &crate::config::Config) -> Profile {
        Profile {
            read_only: config.read_only,
            tools: config.tools.clone(),
        }
    }

    pub fn admits(&self, t: &ToolDef) -> bool {
        (t.read_only() || !self.read_only)
            && (self.tools.is_empty()
                || self.tools.iter().any(|p| p == t.name || p == t.domain.name))
    }

    /// Whether the holder may see `domain`'s data at all — through any
    /// surface, not only tools: a profile names the domain or one of its
    /// tools. `read_only` hides writes, not data.
    pub fn grants(&self, domain: &Spec) -> bool {
        self.tools.is_empty()
            || self
                .tools
                .iter()
                .any(|p| p == domain.name || find(p).is_some_and(|t| t.domain == domain))
    }

    /// A `tools` entry that names no tool and no domain.
    pub fn unknown_entry(&self) -> Option<&str> {
        self.tools
            .iter()
            .map(String::as_str)
            .find(|p| find(p).is_none() && !DOMAINS.iter().any(|d| d.name == *p))
    }

    /// A profile written as words: `read_only`, `tools=a,b`.
    pub fn parse<'a>(
        words: impl IntoIterator<Item = &'a str>,
    ) -> std::result::Result<Profile, String> {
        let mut profile = Profile::default();
        for word in words {
            match word.split_once('=') {
                None if word == "read_only" => profile.read_only = true,
                Some(("tools", list)) => profile.tools.extend(
                    list.split(',')
                        .map(str::trim)
                        .filter(|t| !t.is_empty())
                        .map(str::to_owned),
                ),
                _ => return Err(format!("`{word}` is not `read_only` or `tools=...`")),
            }
        }
        match profile.unknown_entry() {
            Some(e) => Err(format!("`{e}` names no tool and no domain")),
            None => Ok(profile),
        }
    }
}

/// Every tool's name, in the order tools/list gives them.
pub fn names() -> Vec<&'static str> {
    all().map(|t| t.name).collect()
}

/// The declaration of the tool called `name`.
pub fn find(name: &str) -> Option<&'static ToolDef> {
    all().find(|t| t.name == name)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_profile_grants_the_data_of_the_domains_it_names_and_no_other() {
        let p = |words: &str| Profile::parse(words.split_whitespace()).unwrap();
        for &d in DOMAINS {
            assert!(p("").grants(d), "{d:?}");
            assert!(
                p("read_only").grants(d),
                "read-only hides writes, not {d:?}"
            );
        }
        use crate::{manual, vault, vibe};
        assert!(p("tools=manual").grants(&manual::DOMAIN));
        assert!(!p("tools=manual").grants(&vibe::DOMAIN));
        assert!(!p("tools=manual").grants(&vault::DOMAIN));
        // One tool of a domain is access to that domain's data.
        assert!(p("tools=search").grants(&vibe::DOMAIN));
        assert!(!p("tools=vault_read,manual_find").grants(&vibe::DOMAIN));
        assert!(p("tools=vault_read,manual_find").grants(&vault::DOMAIN));
    }
}
