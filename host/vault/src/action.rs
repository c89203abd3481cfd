//! `next_actions` of the vault's discovery tools (001): the tool to call next
//! and the smallest arguments for it, never a free-text reason.

use schemars::JsonSchema;
use serde::Serialize;
use serde_json::Value;

#[derive(Clone, Copy, Debug, PartialEq, Eq, Serialize, JsonSchema)]
#[serde(rename_all = "snake_case")]
pub enum Step {
    VaultRead,
    VaultSearch,
    VaultScan,
    VaultCoverage,
    ArtifactAudit,
    VaultFind,
    Stop,
}

/// One of the vault tools' `next_actions`.
pub type NextAction = crate::domain::search::NextAction<Step>;

/// The loop is done: `stop` with how sure the server is.
pub fn stop(confidence: f64) -> NextAction {
    NextAction::new(Step::Stop, confidence, Value::Null)
}
