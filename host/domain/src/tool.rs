//! A tool's declaration: name, title, domain, descriptions, effect and a
//! handler whose signature gives the input and output types. Each domain
//! lists its tools in its `tools.rs`; the server lists them all, `App`
//! filters what is served and dispatches through them, and docs/tools.md
//! and the tests' expectations are derived from them. Adding a tool is one
//! entry in its domain's list plus its input struct (`#[derive(Input)]`),
//! its output type and the domain function its handler calls.

use std::sync::Arc;

use rmcp::handler::server::common::schema_for_output;
use rmcp::model::JsonObject;
use schemars::JsonSchema;
use serde::Serialize;
use serde_json::Value;

use crate::args::{Args, Input};
use crate::error::{Error, Result};
use crate::job::Job;
use crate::{Domains, Spec};

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

    /// The error of a call its user declined to confirm.
    pub fn declined(&self, asked: &str) -> crate::error::Error {
        let e = crate::error::Error::new(
            crate::error::Code::Cancelled,
            format!("{} was not run: its user declined ({asked})", self.name),
        );
        self.in_domain(Err(e)).unwrap_err()
    }

    /// The error of a call whose confirmation could not be had: the
    /// question failed, timed out or was cancelled, so nothing was done.
    pub fn unconfirmed(&self, asked: &str, why: &str) -> crate::error::Error {
        let e = crate::error::Error::new(
            crate::error::Code::Cancelled,
            format!(
                "{} was not run: its user was asked ({asked}) but gave no answer ({why})",
                self.name
            ),
        )
        .with("reason", "unconfirmed");
        self.in_domain(Err(e)).unwrap_err()
    }

    fn in_domain(&self, r: Result<Value>) -> Result<Value> {
        r.map_err(self.domain.errors)
    }
}
