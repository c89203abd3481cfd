//! The vault's baseline write rules: `.system/` is reserved, `daily/` holds
//! `YYYY-MM-DD.md` notes that are only ever created or appended to.
//!
//! The host compiles these rules in and checks them before any configured
//! write-policy component, which can add refusals but never lift these.
//! They are plain functions, unit-tested here.

pub mod policy;
