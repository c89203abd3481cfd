//! What kura serves as a whole: the domains it knows, in order, with
//! their tools ([`Catalog`]), and which of them a caller may see
//! ([`Profile`]). The `kura` crate names the domains; everything above
//! this crate is handed the catalog.

use crate::Spec;
use crate::tool::ToolDef;

/// The domains kura knows, in the order they are opened, listed in
/// docs/tools.md and indexed by `kura index`; their tools in the order
/// tools/list gives them.
#[derive(Clone, Copy, Debug)]
pub struct Catalog(&'static [&'static Spec]);

impl Catalog {
    pub const fn new(domains: &'static [&'static Spec]) -> Catalog {
        Catalog(domains)
    }

    pub fn domains(self) -> impl Iterator<Item = &'static Spec> {
        self.0.iter().copied()
    }

    /// Every tool, in the order tools/list gives them.
    pub fn tools(self) -> impl Iterator<Item = &'static ToolDef> {
        self.0.iter().flat_map(|d| d.tools)
    }

    /// Every tool's name, in the order tools/list gives them.
    pub fn names(self) -> Vec<&'static str> {
        self.tools().map(|t| t.name).collect()
    }

    /// The declaration of the tool called `name`.
    pub fn find(self, name: &str) -> Option<&'static ToolDef> {
        self.tools().find(|t| t.name == name)
    }

    /// Whether `entry` names a tool or a domain.
    pub fn knows(self, entry: &str) -> bool {
        self.find(entry).is_some() || self.domains().any(|d| d.name == entry)
    }
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
            tools: config.tools.clone().unwrap_or_default(),
        }
    }

    /// Whether the holder may see and call `t`: named itself, or through
    /// its domain — and then only when every domain the tool also reaches
    /// (the bridge: the vault and the manuals) is named as well, so that a
    /// profile never reaches data through a tool that it cannot reach
    /// otherwise. A tool named by its own name is granted as named.
    pub fn admits(&self, t: &ToolDef) -> bool {
        let named = |n: &str| self.tools.iter().any(|p| p == n);
        (t.read_only() || !self.read_only)
            && (self.tools.is_empty()
                || named(t.name)
                || (named(t.domain.name) && t.domain.needs.iter().all(|d| named(d.name))))
    }

    /// Whether the holder may see `domain`'s data at all — through any
    /// surface, not only tools: a profile names the domain or one of its
    /// tools. `read_only` hides writes, not data.
    pub fn grants(&self, domain: &Spec) -> bool {
        self.tools.is_empty()
            || self
                .tools
                .iter()
                .any(|p| p == domain.name || domain.tools.iter().any(|t| t.name == p))
    }

    /// A `tools` entry that names no tool and no domain of `catalog`.
    pub fn unknown_entry(&self, catalog: Catalog) -> Option<&str> {
        self.tools
            .iter()
            .map(String::as_str)
            .find(|p| !catalog.knows(p))
    }

    /// A profile written as words: `read_only`, `tools=a,b`.
    pub fn parse<'a>(
        words: impl IntoIterator<Item = &'a str>,
        catalog: Catalog,
    ) -> std::result::Result<Profile, String> {
        let mut profile = Profile::default();
        for word in words {
            match word.split_once('=') {
                None if word == "read_only" => profile.read_only = true,
                Some(("tools", list)) => {
                    let before = profile.tools.len();
                    profile.tools.extend(
                        list.split(',')
                            .map(str::trim)
                            .filter(|t| !t.is_empty())
                            .map(str::to_owned),
                    );
                    // `tools=` with nothing after it (a file written from
                    // an unset variable) must not mean "every tool".
                    if profile.tools.len() == before {
                        return Err(format!(
                            "`{word}` names no tool; name the tools or domains to grant, or leave `tools=` out for all"
                        ));
                    }
                }
                _ => return Err(format!("`{word}` is not `read_only` or `tools=...`")),
            }
        }
        match profile.unknown_entry(catalog) {
            Some(e) => Err(format!("`{e}` names no tool and no domain")),
            None => Ok(profile),
        }
    }
}
