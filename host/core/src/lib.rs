//! kura's bottom layer: what every other crate stands on. The configuration
//! ([`config`]), the errors with their codes ([`error`]), the one module
//! that touches files ([`fs`]), the reading of tool arguments ([`args`]),
//! jobs ([`job`]), the allocator's free memory ([`heap`]), text handling ([`text`], [`scan`]) and the baseline write
//! rules ([`policy`]) and locked notes ([`lock`]).

pub mod args;
pub mod config;
pub mod error;
pub mod fault;
pub mod fs;
pub mod heap;
pub mod job;
pub mod lock;
pub mod policy;
pub mod scan;
pub mod text;
