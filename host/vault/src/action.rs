//! `next_actions` of the vault's discovery tools (001): the tool to call next
//! and the smallest arguments for it, never a free-text reason.

use schemars::JsonSchema;
use serde::Serialize;
use serde_json::{Map, Value};

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

#[derive(Clone, Debug, Serialize, JsonSchema)]
pub struct NextAction {
    /// The tool to call next (`stop`: the loop is done).
    #[serde(rename = "type")]
    pub kind: Step,
    /// How sure the server is that this is the right next step, 0..1.
    pub confidence: Option<f64>,
    /// The smallest arguments for that call (null for `stop`).
    pub params: Option<Map<String, Value>>,
}

impl NextAction {
    pub fn new(kind: Step, confidence: f64, params: Value) -> NextAction {
        NextAction {
            kind,
            confidence: Some((confidence.clamp(0.0, 1.0) * 1000.0).round() / 1000.0),
            params: match params {
                Value::Object(m) => Some(m),
                _ => None,
            },
        }
    }

    pub fn stop(confidence: f64) -> NextAction {
        NextAction::new(Step::Stop, confidence, Value::Null)
    }
}
