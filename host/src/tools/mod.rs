//! The tools, each declared once (`catalog.rs`): name, title, domain,
//! descriptions, effect and a handler whose signature gives the input and
//! output types. The server lists them, `App` filters what is served and
//! dispatches through them, and docs/tools.md and the tests' expectations
//! are derived from them. Adding a tool is one entry in [`TOOLS`] plus its
//! input struct (`#[derive(Input)]`), its output type and the domain
//! function its handler calls.

mod catalog;

use std::sync::Arc;

use rmcp::handler::server::common::schema_for_output;
use rmcp::model::JsonObject;
use schemars::JsonSchema;
use serde::Serialize;
use serde_json::Value;

use crate::args::{Args, Input};
use crate::domain::{DOMAINS, Domains, Spec};
use crate::error::{Error, Result};
use crate::job::Job;

pub use catalog::TOOLS;

/// What runs a call, typed by its input and its output: the input's
/// schema is the one listed, and the arguments are read into it before the
/// handler runs; the output schema is generated from the type the handler
/// returns, so `structuredContent` cannot drift from what is listed.
pub trait Handler: Sync {
    fn input(&self) -> Value;
    fn output(&self) -> Arc<JsonObject>;
    /// Read the arguments into the input type, and nothing more.
    fn read(&self, args: Args) -> Result<()>;
    fn run(&self, domains: &Domains, args: Args, job: Job) -> Result<Value>;
}

/// A handler of input `I` and output `O`.
pub struct Typed<I, O>(pub fn(&Domains, I, Job) -> Result<O>);

impl<I: Input, O: Serialize + JsonSchema + 'static> Handler for Typed<I, O> {
    fn input(&self) -> Value {
        I::schema()
    }

    fn output(&self) -> Arc<JsonObject> {
        schema_for_output::<O>()
    }

    fn read(&self, args: Args) -> Result<()> {
        I::parse(args).map(drop)
    }

    fn run(&self, domains: &Domains, args: Args, job: Job) -> Result<Value> {
        (self.0)(domains, I::parse(args)?, job)
            .and_then(|o| serde_json::to_value(o).map_err(|e| Error::internal(e.to_string())))
    }
}

pub struct ToolDef {
    pub name: &'static str,
    /// A short human-readable name (`title` in tools/list).
    pub title: &'static str,
    /// The domain that must be open for the tool to be served.
    pub domain: &'static Spec,
    /// What the tool does, in one or two sentences (listed).
    pub description: &'static str,
    /// The rules in full (docs/tools.md): listing them in every
    /// tools/list would cost each client's context.
    pub details: &'static str,
    pub effect: Effect,
    pub handler: &'static dyn Handler,
}

/// What a call does to the data behind its tool: the MCP annotations and
/// the read-only profile follow from it.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Effect {
    /// Changes nothing.
    Read,
    /// Adds to the data or changes what it was asked to, and loses nothing
    /// (`idempotent`: the same call again changes nothing more).
    Write { idempotent: bool },
    /// May overwrite or remove what was there.
    Destructive { idempotent: bool },
}

impl Effect {
    pub fn read_only(self) -> bool {
        self == Effect::Read
    }
}

impl ToolDef {
    pub fn input(&self) -> Value {
        self.handler.input()
    }

    /// The schema of a successful call's `structuredContent`.
    pub fn output(&self) -> Arc<JsonObject> {
        self.handler.output()
    }

    /// Whether the tool changes nothing.
    pub fn read_only(&self) -> bool {
        self.effect.read_only()
    }

    /// Read `args` as this tool's input without running it: the error a
    /// call with them would get before it touches anything.
    pub fn read_input(&self, args: Args) -> Result<()> {
        self.in_domain(self.handler.read(args).map(|()| Value::Null))
            .map(drop)
    }

    /// Read the arguments and run the tool; a vibe tool's errors, a wrong
    /// argument included, come out in seed 002's codes.
    pub fn call(&self, domains: &Domains, args: Args, job: Job) -> Result<Value> {
        self.in_domain(self.handler.run(domains, args, job))
    }

    /// The error of a call the client cancelled before it ran.
    pub fn cancelled(&self) -> crate::error::Error {
        let e = crate::error::Error::new(
            crate::error::Code::Cancelled,
            format!("{} was cancelled by the client before it ran", self.name),
        );
        self.in_domain(Err(e)).unwrap_err()
    }

    fn in_domain(&self, r: Result<Value>) -> Result<Value> {
        r.map_err(self.domain.errors)
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
    TOOLS.iter().map(|t| t.name).collect()
}

/// The declaration of the tool called `name`.
pub fn find(name: &str) -> Option<&'static ToolDef> {
    TOOLS.iter().find(|t| t.name == name)
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
