//! The tools kura serves: those of [`crate::CATALOG`]'s domains, in the
//! order tools/list gives them.

pub use crate::domain::{Effect, Handler, Profile, ToolDef, Typed};

/// Every tool, in the order tools/list gives them.
pub fn all() -> impl Iterator<Item = &'static ToolDef> {
    crate::CATALOG.tools()
}

/// Every tool's name, in the order tools/list gives them.
pub fn names() -> Vec<&'static str> {
    crate::CATALOG.names()
}

/// The declaration of the tool called `name`.
pub fn find(name: &str) -> Option<&'static ToolDef> {
    crate::CATALOG.find(name)
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::server::Tokens;
    use crate::{CATALOG, manual, vault, vibe};

    #[test]
    fn a_profile_grants_the_data_of_the_domains_it_names_and_no_other() {
        let p = |words: &str| Profile::parse(words.split_whitespace(), CATALOG).unwrap();
        for d in CATALOG.domains() {
            assert!(p("").grants(d), "{d:?}");
            assert!(
                p("read_only").grants(d),
                "read-only hides writes, not {d:?}"
            );
        }
        assert!(p("tools=manual").grants(&manual::DOMAIN));
        assert!(!p("tools=manual").grants(&vibe::DOMAIN));
        assert!(!p("tools=manual").grants(&vault::DOMAIN));
        // One tool of a domain is access to that domain's data.
        assert!(p("tools=search").grants(&vibe::DOMAIN));
        assert!(!p("tools=vault_read,manual_find").grants(&vibe::DOMAIN));
        assert!(p("tools=vault_read,manual_find").grants(&vault::DOMAIN));
    }

    #[test]
    fn a_profile_admits_a_tool_only_with_every_domain_it_reaches() {
        let p = |words: &str| Profile::parse(words.split_whitespace(), CATALOG).unwrap();
        let copy = find("bridge_copy_section").unwrap();
        // The bridge writes into the vault: naming the bridge and the
        // manuals is not a grant of the vault.
        assert!(!p("tools=manual,bridge").admits(copy));
        assert!(!p("tools=bridge").admits(copy));
        assert!(!p("tools=bridge,vault_read,manual").admits(copy));
        assert!(p("tools=bridge,vault,manual").admits(copy));
        // Named by its own name, a tool is granted as named.
        assert!(p("tools=bridge_copy_section").admits(copy));
        assert!(!p("read_only tools=bridge,vault,manual").admits(copy));
        for t in all().filter(|t| t.domain.name == "manual") {
            assert!(p("tools=manual,bridge").admits(t), "{}", t.name);
        }
    }

    #[test]
    fn an_empty_or_odd_tools_list_is_refused_at_start() {
        for bad in [
            "tok-0123456789abcdefgh tools=",
            "tok-0123456789abcdefgh tools=,",
            "tok-0123456789abcdefgh tools= read_only",
            "tok-0123456789abcdefgh tools=vault,nothing",
        ] {
            let err = Tokens::parse(bad, CATALOG).err();
            assert!(
                err.as_deref().is_some_and(|e| e.starts_with("line 1:")),
                "{bad}: {err:?}"
            );
        }
        // Duplicates are the same grant.
        let p = Profile::parse(["tools=vault,vault,vault_read"], CATALOG).unwrap();
        assert!(p.admits(find("vault_create").unwrap()));
    }

    #[test]
    fn only_a_listed_token_is_admitted_with_its_profile() {
        let tokens = Tokens::parse(
            "# team\nalpha-0123456789abcdef\n\nreader-0123456789abcdef read_only\n\
             manuals-0123456789abcdef tools=manual,vault_read\n",
            CATALOG,
        )
        .unwrap();
        assert_eq!(
            tokens.admits("alpha-0123456789abcdef"),
            Some(Profile::default())
        );
        assert_eq!(
            tokens
                .admits("reader-0123456789abcdef")
                .map(|p| p.read_only),
            Some(true)
        );
        assert_eq!(
            tokens.admits("manuals-0123456789abcdef").map(|p| p.tools),
            Some(vec!["manual".to_owned(), "vault_read".to_owned()])
        );
        assert_eq!(tokens.admits("alpha-0123456789abcde"), None);
        assert_eq!(tokens.admits(""), None);
        let listed = Tokens::list("a-0123456789abcdefgh, b-0123456789abcdefgh").unwrap();
        assert!(listed.admits("b-0123456789abcdefgh").is_some());
    }

    #[test]
    fn short_missing_or_misprofiled_tokens_are_refused() {
        let parse = |text: &str| Tokens::parse(text, CATALOG);
        assert!(parse("short").is_err());
        assert!(parse("# only a comment\n").is_err());
        assert!(parse("token-0123456789abcdef writable").is_err());
        assert!(parse("token-0123456789abcdef tools=nothing").is_err());
        assert!(Tokens::list("x-0123456789abcdefgh, short").is_err());
        // One token on two lines: which profile holds is not guessed.
        let e = parse("token-0123456789abcdef tools=manual\n\ntoken-0123456789abcdef\n")
            .err()
            .unwrap();
        assert_eq!(e, "line 3: the token of line 1 again");
        // A short token says its line too.
        let e = parse("token-0123456789abcdef\nshort\n").err().unwrap();
        assert!(e.starts_with("line 2: "), "{e}");
    }

    #[allow(clippy::disallowed_methods)] // the test reads and blesses a file of the repository
    #[test]
    fn reference_docs_tools_md_is_current() {
        let path = std::path::Path::new(env!("CARGO_MANIFEST_DIR")).join("../docs/tools.md");
        let made = crate::server::reference::markdown(CATALOG);
        if std::env::var_os("KURA_BLESS").is_some() {
            std::fs::write(&path, &made).unwrap();
        }
        let kept = std::fs::read_to_string(&path).unwrap_or_default();
        assert!(
            kept == made,
            "docs/tools.md is stale: run `KURA_BLESS=1 cargo test -p kura reference`"
        );
        for t in all() {
            assert!(made.contains(&format!("### `{}`", t.name)), "{}", t.name);
        }
    }
}
