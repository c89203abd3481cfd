//! Where a slot's component comes from: a file, or an OCI reference
//! (`oci://HOST[:PORT]/REPOSITORY[:TAG][@sha256:HEX]`) resolved through the
//! lock file and the local store, and what a digest looks like.

use std::path::Path;

/// A slot's component as the configuration names it.
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum ComponentRef<'a> {
    File(&'a Path),
    Oci(OciRef),
}

/// A content digest, `sha256:` and 64 lower-case hex digits: the form OCI
/// registries, the lock file and a slot's pin all use.
#[derive(Clone, Debug, PartialEq, Eq, Hash, PartialOrd, Ord)]
pub struct Digest(String);

impl Digest {
    pub fn parse(s: &str) -> Result<Digest, String> {
        let hex = s
            .strip_prefix("sha256:")
            .ok_or_else(|| format!("`{s}` is not a digest: expected sha256:<64 hex digits>"))?;
        if hex.len() != 64 || !hex.bytes().all(|b| b.is_ascii_hexdigit()) {
            return Err(format!(
                "`{s}` is not a digest: expected sha256:<64 hex digits>"
            ));
        }
        Ok(Digest(format!("sha256:{}", hex.to_ascii_lowercase())))
    }

    /// The digest of these bytes.
    pub fn of(bytes: &[u8]) -> Digest {
        Digest(format!("sha256:{}", crate::text::sha256(bytes)))
    }

    pub fn as_str(&self) -> &str {
        &self.0
    }

    /// The 64 hex digits.
    pub fn hex(&self) -> &str {
        &self.0["sha256:".len()..]
    }

    /// `sha256:` and the first 12 digits, for tables.
    pub fn short(&self) -> &str {
        &self.0[..19]
    }
}

impl std::fmt::Display for Digest {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str(&self.0)
    }
}

/// An OCI reference with its registry named: kura never guesses a default
/// registry, so a reference always says where it leads.
#[derive(Clone, Debug, PartialEq, Eq, Hash, PartialOrd, Ord)]
pub struct OciRef {
    /// `host` or `host:port`.
    pub registry: String,
    /// `name` or `path/to/name`, lower case.
    pub repository: String,
    pub tag: Option<String>,
    pub digest: Option<Digest>,
}

pub const OCI_SCHEME: &str = "oci://";

impl OciRef {
    /// Parse `oci://HOST[:PORT]/REPOSITORY[:TAG][@sha256:HEX]`. Without a
    /// tag or digest the tag is `latest`, as every OCI tool reads it.
    pub fn parse(s: &str) -> Result<OciRef, String> {
        let bad = |why: &str| {
            format!(
                "`{s}` is not an OCI reference ({why}): expected oci://HOST[:PORT]/REPOSITORY[:TAG][@sha256:DIGEST]"
            )
        };
        let rest = s.strip_prefix(OCI_SCHEME).ok_or_else(|| bad("no oci://"))?;
        let (rest, digest) = match rest.split_once('@') {
            Some((r, d)) => (r, Some(Digest::parse(d).map_err(|e| bad(&e))?)),
            None => (rest, None),
        };
        let (registry, path) = rest
            .split_once('/')
            .ok_or_else(|| bad("no repository after the host"))?;
        let host_ok = |c: char| c.is_ascii_alphanumeric() || ".-:[]".contains(c);
        if registry.is_empty() || !registry.chars().all(host_ok) {
            return Err(bad("the host"));
        }
        // A tag follows the last `:` of the last path segment.
        let (repository, tag) = match path.rsplit_once(':') {
            Some((r, t)) if !t.contains('/') => (r, Some(t)),
            _ => (path, None),
        };
        let segment_ok = |seg: &str| {
            !seg.is_empty()
                && seg
                    .chars()
                    .all(|c| c.is_ascii_lowercase() || c.is_ascii_digit() || "._-".contains(c))
                && seg.starts_with(|c: char| c.is_ascii_alphanumeric())
        };
        if !repository.split('/').all(segment_ok) {
            return Err(bad(
                "the repository: lower-case letters, digits, `.`, `_`, `-` and `/`",
            ));
        }
        if let Some(t) = tag {
            let tag_ok = !t.is_empty()
                && t.len() <= 128
                && t.chars()
                    .all(|c| c.is_ascii_alphanumeric() || "._-".contains(c))
                && !t.starts_with(['.', '-']);
            if !tag_ok {
                return Err(bad("the tag"));
            }
        }
        let tag = match (tag, &digest) {
            (Some(t), _) => Some(t.to_owned()),
            (None, Some(_)) => None,
            (None, None) => Some("latest".to_owned()),
        };
        Ok(OciRef {
            registry: registry.to_owned(),
            repository: repository.to_owned(),
            tag,
            digest,
        })
    }

    /// Whether the registry is this machine (plain HTTP is used for it, as
    /// the usual OCI tools do; every other registry is reached by HTTPS).
    pub fn is_loopback(&self) -> bool {
        let host = match self.registry.rsplit_once(':') {
            Some((h, port)) if port.bytes().all(|b| b.is_ascii_digit()) => h,
            _ => &self.registry,
        };
        matches!(host, "localhost" | "[::1]") || host.starts_with("127.")
    }

    /// The same repository at a digest (what a tag resolved to).
    pub fn at(&self, digest: Digest) -> OciRef {
        OciRef {
            digest: Some(digest),
            ..self.clone()
        }
    }

    /// Without the scheme: `host/repo:tag@sha256:...`, the form OCI
    /// clients take.
    pub fn bare(&self) -> String {
        let mut s = format!("{}/{}", self.registry, self.repository);
        if let Some(t) = &self.tag {
            s.push(':');
            s.push_str(t);
        }
        if let Some(d) = &self.digest {
            s.push('@');
            s.push_str(d.as_str());
        }
        s
    }
}

impl std::fmt::Display for OciRef {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        write!(f, "{OCI_SCHEME}{}", self.bare())
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    const D: &str = "sha256:0123456789abcdef0123456789abcdef0123456789abcdef0123456789abcdef";

    #[test]
    fn references_in_every_form() {
        let r = OciRef::parse("oci://127.0.0.1:5000/kura/reranker:1.0").unwrap();
        assert_eq!(r.registry, "127.0.0.1:5000");
        assert_eq!(r.repository, "kura/reranker");
        assert_eq!(r.tag.as_deref(), Some("1.0"));
        assert!(r.is_loopback());
        assert_eq!(r.to_string(), "oci://127.0.0.1:5000/kura/reranker:1.0");
        let r = OciRef::parse(&format!("oci://ghcr.io/a/b@{D}")).unwrap();
        assert_eq!(
            (r.tag.as_deref(), r.digest.as_ref().map(Digest::as_str)),
            (None, Some(D))
        );
        assert!(!r.is_loopback());
        let r = OciRef::parse("oci://localhost/x").unwrap();
        assert_eq!(r.tag.as_deref(), Some("latest"));
        assert!(r.is_loopback());
        let r = OciRef::parse(&format!("oci://h:1/x:v2@{D}")).unwrap();
        assert_eq!(r.bare(), format!("h:1/x:v2@{D}"));
    }

    #[test]
    fn a_reference_without_a_registry_or_with_a_bad_part_is_refused() {
        for bad in [
            "reranker:1.0",
            "oci://reranker",
            "oci:///x",
            "oci://h/Upper",
            "oci://h/x:",
            "oci://h/x:-bad",
            "oci://h/x@sha256:12",
            "oci://h/x@md5:0123",
            "oci://h//x",
        ] {
            let e = OciRef::parse(bad).unwrap_err();
            assert!(e.contains("expected oci://"), "{bad}: {e}");
        }
    }

    #[test]
    fn digests_are_sha256_in_lower_case() {
        assert_eq!(
            Digest::parse(&D.to_uppercase().replace("SHA256", "sha256"))
                .unwrap()
                .as_str(),
            D
        );
        assert!(Digest::parse("sha512:00").is_err());
        assert_eq!(
            Digest::of(b"").as_str(),
            "sha256:e3b0c44298fc1c149afbf4c8996fb92427ae41e4649b934ca495991b7852b855"
        );
        assert_eq!(Digest::parse(D).unwrap().short(), "sha256:0123456789ab");
    }
}
