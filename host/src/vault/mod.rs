//! The vault domain (seeds 000 and 001): a markdown notes folder with the
//! append-only `daily/` and the reserved `.system/`. Reads go straight to the
//! files; every write asks the write-policy plugin first and is atomic.

pub mod action;
mod audit;
pub mod coverage;
mod find;
pub mod index;
mod read;
mod search;
mod write;

use std::sync::Arc;

use crate::fs::Root;
use crate::plugins::Plugins;

pub use crate::scan::ScanOutput;
pub use audit::{AuditInput, AuditOutput};
pub use coverage::{CoverageInput, CoverageOutput};
pub use find::{FindInput, FindOutput};
pub use read::{LsInput, ReadInput, ScanInput};
pub use read::{LsOutput, ReadOutput};
pub use search::{SearchInput, SearchOutput};
pub use write::{CreateInput, MODES, ReplaceInput, ReplaceOutput, WriteInput, WriteOutput};

pub struct Vault {
    pub root: Root,
    pub plugins: Arc<Plugins>,
    /// vault_find's index of the notes.
    pub index: crate::index::LiveIndex,
    /// The fixed character cap of reads and scans (`SCAN_MAX_CHARS`).
    pub max_chars: usize,
    /// `COVERAGE_MIN_RATIO`: coverage that counts as enough.
    pub coverage_min_ratio: f64,
    /// `MARGINAL_GAIN_MIN`: below this, another pass adds too little.
    pub marginal_gain_min: f64,
}
