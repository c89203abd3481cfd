//! Whether a component is the one the operator meant: its digest against
//! the slot's pin, its detached minisign signature against the keys the
//! operator trusts (`plugin_trusted_keys`), and whether an unsigned one may
//! load at all (`plugin_require_signature`). Checked on the bytes before
//! anything is compiled, at start and at every reload.

use base64::Engine as _;
use minisign_verify::{PublicKey, Signature};

use crate::config::{Config, Digest};

/// Who vouches for a component.
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum Signer {
    /// Built into kura: trusted as kura itself is.
    BuiltIn,
    /// No signature was found, and none is required.
    Unsigned,
    /// Signed by this key, not checked: no key is trusted.
    NotChecked { key: String },
    /// Signed by a trusted key, and the signature holds.
    Key { key: String, comment: String },
}

impl std::fmt::Display for Signer {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        match self {
            Signer::BuiltIn => f.write_str("kura (built in)"),
            Signer::Unsigned => f.write_str("unsigned"),
            Signer::NotChecked { key } => write!(f, "key {key} (not checked: no trusted keys)"),
            Signer::Key { key, .. } => write!(f, "key {key}"),
        }
    }
}

/// The operator's trusted keys and whether a signature is required.
#[derive(Clone, Debug, Default)]
pub struct Trust {
    keys: Vec<(String, PublicKey)>,
    require: bool,
    /// Required because keys are trusted, not because the operator said.
    implied: bool,
}

/// minisign's key id: bytes 2..10 of the key or signature, a
/// little-endian number printed in upper-case hex (as `minisign` shows it).
fn key_id(decoded: &[u8]) -> Option<String> {
    let id: [u8; 8] = decoded.get(2..10)?.try_into().ok()?;
    Some(format!("{:X}", u64::from_le_bytes(id)))
}

fn decode(line: &str) -> Option<Vec<u8>> {
    base64::engine::general_purpose::STANDARD
        .decode(line.trim())
        .ok()
}

impl Trust {
    /// From the configuration; a key that cannot be read stops the start.
    pub fn new(config: &Config) -> Result<Trust, String> {
        let mut keys = Vec::new();
        for raw in &config.plugin_trusted_keys {
            // The whole `.pub` file's text is accepted too.
            let line = raw.lines().last().unwrap_or("").trim();
            let key = PublicKey::from_base64(line).map_err(|e| {
                format!("PLUGIN_TRUSTED_KEYS: `{raw}` is not a minisign public key: {e}")
            })?;
            let id = decode(line).as_deref().and_then(key_id).unwrap_or_default();
            keys.push((id, key));
        }
        // Keys trusted without a word on unsigned components: required,
        // so that dropping a signature is never a way around them.
        let implied = config.plugin_require_signature.is_none() && !keys.is_empty();
        let require = config.plugin_require_signature.unwrap_or(implied);
        Ok(Trust {
            keys,
            require,
            implied,
        })
    }

    /// Judge a component's bytes and its signature file's text, if any.
    pub fn judge(&self, bytes: &[u8], signature: Option<&[u8]>) -> Result<Signer, String> {
        let Some(raw) = signature else {
            if self.require {
                let why = if self.implied {
                    "PLUGIN_TRUSTED_KEYS is set, so unsigned components are refused \
                     (PLUGIN_REQUIRE_SIGNATURE=false lets them load)"
                } else {
                    "PLUGIN_REQUIRE_SIGNATURE refuses unsigned components"
                };
                return Err(format!(
                    "is not signed, and {why}; sign it with `minisign -Sm FILE` \
                     (kura reads FILE.minisig beside a file, or the signature pushed with it \
                     to a registry)"
                ));
            }
            return Ok(Signer::Unsigned);
        };
        let text = std::str::from_utf8(raw).map_err(|_| "its signature is not text".to_owned())?;
        let sig = Signature::decode(text)
            .map_err(|e| format!("its signature cannot be read as a minisign signature: {e}"))?;
        let key = text
            .lines()
            .nth(1)
            .and_then(decode)
            .as_deref()
            .and_then(key_id)
            .unwrap_or_default();
        if self.keys.is_empty() {
            if self.require {
                return Err(format!(
                    "is signed by key {key}, but no key is trusted (PLUGIN_TRUSTED_KEYS)"
                ));
            }
            return Ok(Signer::NotChecked { key });
        }
        let Some((_, public)) = self.keys.iter().find(|(id, _)| *id == key) else {
            return Err(format!(
                "is signed by key {key}, which is not one of PLUGIN_TRUSTED_KEYS"
            ));
        };
        public.verify(bytes, &sig, false).map_err(|e| {
            format!("its signature by key {key} does not hold: {e} (the bytes or the signature were changed)")
        })?;
        Ok(Signer::Key {
            key,
            comment: sig.trusted_comment().to_owned(),
        })
    }
}

/// A slot pinned to a digest takes only those bytes.
pub fn check_pin(pin: Option<&Digest>, found: &Digest) -> Result<(), String> {
    match pin {
        Some(want) if want != found => {
            Err(format!("is pinned to {want} but its bytes are {found}"))
        }
        _ => Ok(()),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    // A key pair made by `minisign -G` for these tests, and a signature of
    // `b"component"` by it (`minisign -Sm`).
    const PUBLIC: &str = "RWQrzWuOWGp0AZIroFrraRZZo9AphQQwThVybasNhbsfWSJKltgChiQE";
    const SIGNED: &str = "untrusted comment: signature from minisign secret key\n\
RUQrzWuOWGp0AdW4jhrr2i8xGRDD4/K633Zgbt84k0d7DlIu00v9PMYXUnmLYxSBlIN3sbCVtMjUlSxUv++faDB7aR8hbDXVtAk=\n\
trusted comment: file:component\n\
JIr44UGitOBqudRKznCo/nytPosHdVU5beLOF1Ed1ck5Ccxhr0B+zIBhGsLr3VFNm0diqs4vOMgtiVzDPDomBg==\n";

    fn trust(keys: &[&str], require: bool) -> Trust {
        let config = Config {
            plugin_trusted_keys: keys.iter().map(|k| k.to_string()).collect(),
            plugin_require_signature: Some(require),
            ..Config::default()
        };
        Trust::new(&config).unwrap()
    }

    #[test]
    fn unsigned_components_load_unless_a_signature_is_required() {
        assert_eq!(
            trust(&[], false).judge(b"x", None).unwrap(),
            Signer::Unsigned
        );
        let e = trust(&[PUBLIC], true).judge(b"x", None).unwrap_err();
        assert!(e.contains("is not signed"), "{e}");
    }

    #[test]
    fn with_trusted_keys_an_unsigned_component_is_refused_unless_the_operator_allows_it() {
        let judge = |require: Option<bool>| {
            let config = Config {
                plugin_trusted_keys: vec![PUBLIC.into()],
                plugin_require_signature: require,
                ..Config::default()
            };
            Trust::new(&config).unwrap().judge(b"x", None)
        };
        let e = judge(None).unwrap_err();
        assert!(e.contains("is not signed"), "{e}");
        assert_eq!(judge(Some(false)).unwrap(), Signer::Unsigned);
        // No keys, nothing said: unsigned components load.
        let none = Trust::new(&Config::default()).unwrap();
        assert_eq!(none.judge(b"x", None).unwrap(), Signer::Unsigned);
    }

    #[test]
    fn a_bad_key_in_the_configuration_is_refused() {
        let config = Config {
            plugin_trusted_keys: vec!["RWQnotakey".into()],
            ..Config::default()
        };
        let e = Trust::new(&config).unwrap_err();
        assert!(e.contains("not a minisign public key"), "{e}");
    }

    #[test]
    fn signature_checks() {
        let signed = Some(SIGNED.as_bytes());
        let id = key_id(&decode(PUBLIC).unwrap()).unwrap();
        assert_eq!(id, "1746A588E6BCD2B", "as `minisign -G` printed it");
        match trust(&[PUBLIC], true).judge(b"component", signed).unwrap() {
            Signer::Key { key, comment } => {
                assert_eq!(key, id);
                assert!(comment.contains("file:component"), "{comment}");
            }
            other => panic!("{other:?}"),
        }
        let e = trust(&[PUBLIC], false)
            .judge(b"c0mponent", signed)
            .unwrap_err();
        assert!(e.contains("does not hold"), "{e}");
        let other = "RWQ0PGpvhinJ4wuwT0mB50GTPlQrdZMJancgoCrYmaSUhxa5CPDk5vPb";
        let e = trust(&[other], false)
            .judge(b"component", signed)
            .unwrap_err();
        assert!(e.contains("not one of PLUGIN_TRUSTED_KEYS"), "{e}");
        assert_eq!(
            trust(&[], false).judge(b"component", signed).unwrap(),
            Signer::NotChecked { key: id }
        );
        let e = trust(&[PUBLIC], false)
            .judge(b"x", Some(b"junk"))
            .unwrap_err();
        assert!(e.contains("cannot be read"), "{e}");
    }

    #[test]
    fn a_pinned_slot_takes_only_its_digest() {
        let d = Digest::of(b"a");
        check_pin(Some(&d), &d).unwrap();
        check_pin(None, &d).unwrap();
        let e = check_pin(Some(&d), &Digest::of(b"b")).unwrap_err();
        assert!(
            e.contains(d.as_str()) && e.contains(Digest::of(b"b").as_str()),
            "{e}"
        );
    }
}
