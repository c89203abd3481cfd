//! Opaque tokens, asked about at the issuer's introspection endpoint
//! (RFC 7662): answers remembered briefly, refusals too, and the asks
//! bounded, so an unauthenticated caller cannot make kura flood the issuer.

use std::time::{Duration, Instant};

use serde_json::Value;

use super::config::Introspection;
use super::{Claims, OAuth, Refusal};
use crate::domain::Profile;

/// Opaque tokens the issuer answered about, by their SHA-256: the profile
/// of an active one (None: refused), until when the answer may be believed.
pub(super) type Introspected = std::collections::HashMap<[u8; 32], (Option<Profile>, Instant)>;

/// A refusal is remembered this long: the same made-up string sent again
/// is refused without asking the issuer.
const REFUSED_FOR: Duration = Duration::from_secs(30);
/// The issuer is asked about at most this many unknown strings in each
/// window: an unauthenticated caller cannot make kura flood it.
pub(super) const ASKS_PER_WINDOW: u32 = 20;
const ASK_WINDOW: Duration = Duration::from_secs(10);

/// An introspected token is believed this long at most (or until its
/// `exp`, if sooner): a revoked token stops working within it.
const INTROSPECTED_FOR: Duration = Duration::from_secs(60);
/// The most introspected tokens remembered.
const MAX_INTROSPECTED: usize = 1024;

impl OAuth {
    /// An opaque token, asked about at the issuer's introspection
    /// endpoint (RFC 7662): active, from this issuer, for this resource,
    /// not expired. A positive answer is remembered a little while.
    pub(super) async fn introspect(
        &self,
        i: &Introspection,
        token: &str,
    ) -> Result<Profile, Refusal> {
        use sha2::Digest;
        let key: [u8; 32] = sha2::Sha256::digest(token.as_bytes()).into();
        let now = Instant::now();
        {
            let mut seen = self.introspected.lock().unwrap_or_else(|e| e.into_inner());
            match seen.get(&key) {
                Some((Some(profile), until)) if *until > now => return Ok(profile.clone()),
                Some((None, until)) if *until > now => {
                    return Err(Refusal::Invalid("not active".into()));
                }
                Some(_) => {
                    seen.remove(&key);
                }
                None => {}
            }
        }
        {
            let mut asks = self.asks.lock().unwrap_or_else(|e| e.into_inner());
            if now.duration_since(asks.0) >= ASK_WINDOW {
                *asks = (now, 0);
            }
            if asks.1 >= ASKS_PER_WINDOW {
                tracing::warn!(
                    "OAuth: more unknown tokens than the issuer is asked about; refused"
                );
                return Err(Refusal::Invalid(
                    "too many unknown tokens at once; try again shortly".into(),
                ));
            }
            asks.1 += 1;
        }
        let endpoint = match &i.endpoint {
            Some(u) => u.clone(),
            None => self.endpoint("introspection_endpoint").await.map_err(|e| {
                tracing::warn!("OAuth: no introspection endpoint: {e}");
                Refusal::Invalid("the issuer cannot be asked about this token".into())
            })?,
        };
        let form = [("token", token), ("token_type_hint", "access_token")];
        let answer = self
            .fetch
            .post_form(&endpoint, &form, &i.client_id, &i.secret)
            .await
            .map_err(|e| {
                tracing::warn!("OAuth: introspection failed: {e}");
                Refusal::Invalid("the issuer cannot be asked about this token".into())
            })?;
        let judged = self.introspected(&answer);
        let (kept, until) = match &judged {
            Ok((profile, lives)) => (Some(profile.clone()), now + (*lives).min(INTROSPECTED_FOR)),
            Err(_) => (None, now + REFUSED_FOR),
        };
        let mut seen = self.introspected.lock().unwrap_or_else(|e| e.into_inner());
        if seen.len() >= MAX_INTROSPECTED {
            seen.retain(|_, (_, u)| *u > now);
            if seen.len() >= MAX_INTROSPECTED {
                seen.clear();
            }
        }
        seen.insert(key, (kept, until));
        judged.map(|(profile, _)| profile)
    }

    /// What an introspection answer grants, and for how long it holds.
    fn introspected(&self, answer: &Value) -> Result<(Profile, Duration), Refusal> {
        let invalid = |why: &str| Err(Refusal::Invalid(why.into()));
        if answer["active"] != Value::Bool(true) {
            return invalid("not active");
        }
        if let Some(iss) = answer.get("iss")
            && iss.as_str() != Some(self.config.issuer.as_str())
        {
            return invalid("from another issuer");
        }
        let resource = self.config.resource.as_str();
        let for_us = match &answer["aud"] {
            Value::String(a) => a == resource,
            Value::Array(list) => list.iter().any(|a| a.as_str() == Some(resource)),
            _ => false,
        };
        if !for_us {
            return invalid("issued for another resource");
        }
        let now = std::time::SystemTime::now()
            .duration_since(std::time::UNIX_EPOCH)
            .map_or(0, |d| d.as_secs());
        let exp = answer["exp"].as_u64();
        if exp.is_some_and(|e| e + self.config.leeway <= now) {
            return invalid("expired");
        }
        if answer["nbf"]
            .as_u64()
            .is_some_and(|n| n > now + self.config.leeway)
        {
            return invalid("not valid yet");
        }
        let claims: Claims = serde_json::from_value(answer.clone())
            .map_err(|_| Refusal::Invalid("malformed".into()))?;
        let profile = self
            .config
            .profile_for(&claims.scopes())
            .ok_or(Refusal::Scope)?;
        let lives = exp.map_or(INTROSPECTED_FOR, |e| {
            Duration::from_secs(e.saturating_sub(now))
        });
        Ok((profile, lives))
    }
}
