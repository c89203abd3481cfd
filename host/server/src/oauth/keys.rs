//! The issuer's published keys: fetched, kept for their lifetime, fetched
//! again for an unknown key id at most every few seconds, and never
//! waited for by a check whose key is known.

use std::time::{Duration, Instant};

use jsonwebtoken::jwk::{Jwk, JwkSet};
use jsonwebtoken::{Algorithm, DecodingKey};
use reqwest::Url;

use super::{OAuth, Refusal};

/// The most keys kept from a key set.
const MAX_KEYS: usize = 64;
/// A key set is fetched again for an unknown key id at most this often: a
/// stream of tokens with made-up key ids cannot make kura hammer the issuer,
/// and a key the issuer has just rotated to is known within seconds.
pub(super) const REFETCH_EVERY: Duration = Duration::from_secs(5);
/// A key set is kept this long when its answer says nothing
/// (`Cache-Control: max-age`), and at most [`KEYS_AT_MOST`] whatever it
/// says (at least [`REFETCH_EVERY`]): a key the issuer withdraws stops
/// working within it.
pub(super) const KEYS_FOR: Duration = Duration::from_secs(300);
pub(super) const KEYS_AT_MOST: Duration = Duration::from_secs(900);

/// How long a key set is kept, given its answer's `max-age`.
pub(super) fn keys_lifetime(max_age: Option<Duration>) -> Duration {
    max_age
        .unwrap_or(KEYS_FOR)
        .clamp(REFETCH_EVERY, KEYS_AT_MOST)
}

/// The issuer's keys as last fetched.
#[derive(Default)]
pub(super) struct Keys {
    set: Vec<Jwk>,
    /// When the set was last fetched, and how long it is kept.
    pub(super) fetched: Option<Instant>,
    pub(super) lifetime: Duration,
    /// When it was last asked for, fetched or not.
    pub(super) tried: Option<Instant>,
    /// The key set's URL, once known.
    pub(super) uri: Option<Url>,
}

impl Keys {
    /// The set is as the issuer publishes it, within its lifetime.
    fn fresh(&self) -> bool {
        self.fetched.is_some_and(|t| t.elapsed() < self.lifetime)
    }

    /// A fetch is allowed: none in the last [`REFETCH_EVERY`].
    fn may_fetch(&self) -> bool {
        self.tried.is_none_or(|t| t.elapsed() >= REFETCH_EVERY)
    }
}

impl OAuth {
    /// The key for `kid` (or the only key for `alg` when the token names
    /// none). The key set is fetched again when its lifetime is over, or
    /// when it has no such key (a rotation), at most every
    /// [`REFETCH_EVERY`]; one fetch at a time, and a check whose key is
    /// known meanwhile is answered from the set as it was.
    pub(super) async fn key(
        &self,
        kid: Option<&str>,
        alg: Algorithm,
    ) -> Result<DecodingKey, Refusal> {
        let decoding =
            |k: &Jwk| DecodingKey::from_jwk(k).map_err(|_| Refusal::Invalid("unusable key".into()));
        let unpublished =
            || Refusal::Invalid("signed with a key the issuer does not publish".into());
        let known = |keys: &Keys| find(&keys.set, kid, alg).cloned();
        let (found, fresh) = {
            let keys = self.held();
            (known(&keys), keys.fresh())
        };
        if let Some(k) = &found
            && fresh
        {
            return decoding(k);
        }
        let _one = match self.fetching.try_lock() {
            Ok(one) => one,
            // A fetch is on its way: a known key is used as it was.
            Err(_) if found.is_some() => {
                return found.as_ref().map_or_else(|| Err(unpublished()), decoding);
            }
            Err(_) => self.fetching.lock().await,
        };
        // The fetch this one waited for may have brought the key.
        {
            let keys = self.held();
            let found = known(&keys);
            match &found {
                Some(k) if keys.fresh() => return decoding(k),
                _ if !keys.may_fetch() => {
                    return found.map_or_else(|| Err(unpublished()), |k| decoding(&k));
                }
                _ => {}
            }
        }
        if let Err(e) = self.fetch_keys().await {
            tracing::warn!("OAuth: the issuer's keys could not be fetched: {e}");
            // An issuer out of reach is not one that withdrew its keys:
            // a known key stays in use until the set can be fetched.
            return match found {
                Some(k) => decoding(&k),
                None => Err(Refusal::Invalid("the issuer's keys are unavailable".into())),
            };
        }
        let keys = self.held();
        find(&keys.set, kid, alg)
            .ok_or_else(unpublished)
            .and_then(decoding)
    }

    /// Fetch the key set (the caller holds `fetching`) and keep it: how
    /// many keys it holds.
    pub(super) async fn fetch_keys(&self) -> Result<usize, String> {
        let known = {
            let mut keys = self.held();
            keys.tried = Some(Instant::now());
            keys.uri.clone()
        };
        let uri = match (known, &self.config.jwks_uri) {
            (Some(u), _) => u,
            (None, Some(u)) => u.clone(),
            (None, None) => self.endpoint("jwks_uri").await?,
        };
        let (doc, max_age) = self.fetch.get_aged(&uri).await?;
        let set: JwkSet =
            serde_json::from_value(doc).map_err(|e| format!("{uri}: not a key set: {e}"))?;
        let mut keys = self.held();
        keys.uri = Some(uri);
        keys.set = set.keys.into_iter().take(MAX_KEYS).collect();
        keys.fetched = Some(Instant::now());
        keys.lifetime = keys_lifetime(max_age);
        Ok(keys.set.len())
    }
}

/// The key a token names, of a type its algorithm can use.
fn find<'a>(set: &'a [Jwk], kid: Option<&str>, alg: Algorithm) -> Option<&'a Jwk> {
    let fits = |k: &&Jwk| {
        let declared = k.common.key_algorithm.map(|a| a.to_string());
        declared.is_none_or(|a| a == format!("{alg:?}"))
    };
    match kid {
        Some(kid) => set
            .iter()
            .filter(fits)
            .find(|k| k.common.key_id.as_deref() == Some(kid)),
        None => {
            let mut usable = set.iter().filter(fits).filter(|k| {
                DecodingKey::from_jwk(k).is_ok_and(|_| key_family(k) == alg_family(alg))
            });
            let first = usable.next();
            // Several keys and no id: which one is not guessed.
            usable.next().is_none().then_some(first).flatten()
        }
    }
}

fn key_family(k: &Jwk) -> &'static str {
    use jsonwebtoken::jwk::AlgorithmParameters as P;
    match k.algorithm {
        P::RSA(_) => "RSA",
        P::EllipticCurve(_) => "EC",
        P::OctetKeyPair(_) => "OKP",
        P::OctetKey(_) => "oct",
    }
}

fn alg_family(alg: Algorithm) -> &'static str {
    match alg {
        Algorithm::ES256 | Algorithm::ES384 => "EC",
        Algorithm::EdDSA => "OKP",
        Algorithm::HS256 | Algorithm::HS384 | Algorithm::HS512 => "oct",
        _ => "RSA",
    }
}
