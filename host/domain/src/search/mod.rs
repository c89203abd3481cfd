//! What the search tools (manual_find, vault_find) share: one pipeline
//! shape and its vocabulary. A search runs as
//!
//! 1. **candidates**: the tool's own index query within its scope;
//! 2. **first score**: the features a tool measures on a candidate, added
//!    up by its named [`Weights`] table;
//! 3. **late scores**: a scorer that reads the query and the best
//!    candidates' text (the reranker component) [`blend`]ed into the first
//!    score with its weight;
//! 4. **integrate**: what was kept is measured, an [`IntegrationStatus`]
//!    decided and [`NextAction`]s proposed.
//!
//! [`Run`] carries a search through them: the caller's `budget`
//! ([`BudgetInput`]), cancellation between stages, and each stage's time.
//! Each tool keeps its own candidates, features and list of next tools; a
//! new signal is a feature in the tables or one more late scorer.

mod blend;
pub mod dense;
pub mod encoder;
pub mod lexicon;
pub mod phrasings;
mod run;
mod weights;

pub use blend::{Blend, blend};
pub use run::Run;
pub use weights::{Weight, Weights, flag, w};

use schemars::JsonSchema;
use serde::Serialize;
use serde_json::{Map, Value};

use crate::args::Input;

/// `budget` of a search tool.
#[derive(Input, Default)]
pub struct BudgetInput {
    /// Max candidate sections (default 200)
    #[arg(lenient, min = 1)]
    pub max_candidates: Option<i64>,
    /// ms before optional stages stop (default 60000)
    #[arg(lenient, min = 1)]
    pub time_ms: Option<i64>,
}

#[derive(Clone, Copy, Debug, PartialEq, Eq, Serialize, JsonSchema)]
#[serde(rename_all = "snake_case")]
pub enum IntegrationStatus {
    /// Enough was found: read the best evidence and stop searching.
    Ready,
    /// Something was found, but not enough, or it is spread or concentrated.
    NeedsFollowup,
    /// Nothing to integrate.
    Blocked,
}

/// One of `next_actions`: the tool to call next (`K`, the tool's own list)
/// and the smallest arguments for it, never a free-text reason.
#[derive(Clone, Debug, Serialize, JsonSchema)]
pub struct NextAction<K> {
    /// The tool to call next (`stop`, in the lists that have it: the loop
    /// is done).
    #[serde(rename = "type")]
    pub kind: K,
    /// How sure the server is that this is the right next step, 0..1.
    pub confidence: Option<f64>,
    /// The smallest arguments for that call (null when it needs none, as
    /// `stop`).
    pub params: Option<Map<String, Value>>,
}

impl<K> NextAction<K> {
    /// `confidence` clamped to 0..1 and rounded to three decimals; `params`
    /// kept when it is an object.
    pub fn new(kind: K, confidence: f64, params: Value) -> NextAction<K> {
        NextAction::with(kind, Some(round3(confidence.clamp(0.0, 1.0))), params)
    }

    /// `confidence` as given (None: not estimated).
    pub fn with(kind: K, confidence: Option<f64>, params: Value) -> NextAction<K> {
        NextAction {
            kind,
            confidence,
            params: match params {
                Value::Object(m) => Some(m),
                _ => None,
            },
        }
    }
}

/// `x` rounded to three decimals, as every ratio the search tools report.
pub fn round3(x: f64) -> f64 {
    (x * 1000.0).round() / 1000.0
}
