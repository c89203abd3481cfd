//! OAuth 2.1 on the HTTP transport: kura as a resource server. It never
//! issues a token and never passes one on; it says where tokens come from
//! (Protected Resource Metadata, RFC 9728) and checks the ones it is
//! shown: a JWT offline, against the issuer's published keys (fetched from
//! its metadata, cached, fetched again for an unknown key id, bounded),
//! its issuer, its audience — this server's resource URI (RFC 8707), so a
//! token minted for another service is refused — and its lifetime. Its
//! scopes choose the profile it is served under, through one ordered table.

use std::time::Instant;

use jsonwebtoken::{Algorithm, Validation};
use reqwest::Url;
use serde::Deserialize;
use serde_json::Value;

use crate::domain::Profile;

mod config;
mod fetch;
mod introspection;
mod keys;
#[cfg(test)]
mod tests;

pub use config::{METADATA_PATH, OAuthConfig};
use config::{host_port, secure_url};
pub use fetch::{AgedAnswer, Answer, Fetch, Http};
use introspection::Introspected;
use keys::Keys;

/// Signature algorithms accepted: public-key ones only. A shared-secret
/// algorithm (HS256) would let anyone who knows a public key forge tokens,
/// and `none` is no signature.
const ALGORITHMS: [Algorithm; 9] = [
    Algorithm::RS256,
    Algorithm::RS384,
    Algorithm::RS512,
    Algorithm::PS256,
    Algorithm::PS384,
    Algorithm::PS512,
    Algorithm::ES256,
    Algorithm::ES384,
    Algorithm::EdDSA,
];

/// Why a token was not accepted.
#[derive(Debug, PartialEq, Eq)]
pub enum Refusal {
    /// Not a token this server accepts (bad signature, expired, for
    /// another resource, from another issuer, unknown key): 401
    /// `invalid_token`.
    Invalid(String),
    /// A good token without any scope of the table: 403
    /// `insufficient_scope`.
    Scope,
}

/// The claims kura reads besides the ones `jsonwebtoken` checks.
#[derive(Deserialize)]
struct Claims {
    /// RFC 9068: space-separated.
    #[serde(default)]
    scope: Option<String>,
    /// Some issuers (Entra ID, Okta) use `scp`, a string or a list.
    #[serde(default)]
    scp: Option<Scp>,
}

#[derive(Deserialize)]
#[serde(untagged)]
enum Scp {
    One(String),
    Many(Vec<String>),
}

impl Claims {
    fn scopes(&self) -> Vec<&str> {
        let mut out: Vec<&str> = Vec::new();
        out.extend(self.scope.iter().flat_map(|s| s.split_whitespace()));
        match &self.scp {
            Some(Scp::One(s)) => out.extend(s.split_whitespace()),
            Some(Scp::Many(v)) => out.extend(v.iter().map(String::as_str)),
            None => {}
        }
        out
    }
}

/// Checks tokens for one configuration.
pub struct OAuth {
    config: OAuthConfig,
    fetch: Box<dyn Fetch>,
    /// Held only to look or to store, never across a fetch: a check whose
    /// key is known never waits for the issuer.
    keys: std::sync::Mutex<Keys>,
    /// Held across a key set's fetch: one at a time.
    fetching: tokio::sync::Mutex<()>,
    /// The issuer's metadata, once fetched.
    metadata: tokio::sync::OnceCell<(Url, Value)>,
    introspected: std::sync::Mutex<Introspected>,
    /// The current window's start and the introspections asked in it.
    asks: std::sync::Mutex<(Instant, u32)>,
}

impl OAuth {
    pub fn new(config: OAuthConfig, fetch: Box<dyn Fetch>) -> OAuth {
        OAuth {
            config,
            fetch,
            keys: std::sync::Mutex::new(Keys::default()),
            fetching: tokio::sync::Mutex::new(()),
            metadata: tokio::sync::OnceCell::new(),
            introspected: std::sync::Mutex::new(Introspected::new()),
            asks: std::sync::Mutex::new((Instant::now(), 0)),
        }
    }

    pub fn config(&self) -> &OAuthConfig {
        &self.config
    }

    /// Fetch the issuer's metadata and keys now (`kura doctor`): what was
    /// found, or why nothing was.
    pub async fn probe(&self) -> Result<String, String> {
        let _one = self.fetching.lock().await;
        let n = self.fetch_keys().await?;
        let uri = self
            .held()
            .uri
            .as_ref()
            .map_or(String::new(), Url::to_string);
        Ok(format!("the issuer publishes {n} key(s) at {uri}"))
    }

    fn held(&self) -> std::sync::MutexGuard<'_, Keys> {
        self.keys.lock().unwrap_or_else(|e| e.into_inner())
    }

    /// The profile `token` is served under, or why it is refused.
    pub async fn admit(&self, token: &str) -> Result<Profile, Refusal> {
        let Ok(header) = jsonwebtoken::decode_header(token) else {
            return match &self.config.introspection {
                Some(i) => self.introspect(i, token).await,
                None => Err(Refusal::Invalid("not a signed JWT".into())),
            };
        };
        if !ALGORITHMS.contains(&header.alg) {
            return Err(Refusal::Invalid(format!(
                "signed with {:?}, not a public-key algorithm",
                header.alg
            )));
        }
        let key = self.key(header.kid.as_deref(), header.alg).await?;
        let mut v = Validation::new(header.alg);
        v.set_issuer(&[&self.config.issuer]);
        v.set_audience(&[self.config.resource.as_str()]);
        v.set_required_spec_claims(&["exp", "iss", "aud"]);
        v.validate_nbf = true;
        v.leeway = self.config.leeway;
        let data = jsonwebtoken::decode::<Claims>(token, &key, &v).map_err(|e| {
            use jsonwebtoken::errors::ErrorKind as K;
            Refusal::Invalid(
                match e.kind() {
                    K::ExpiredSignature => "expired",
                    K::ImmatureSignature => "not valid yet",
                    K::InvalidAudience => "issued for another resource",
                    K::InvalidIssuer => "from another issuer",
                    K::InvalidSignature => "bad signature",
                    K::MissingRequiredClaim(_) => "lacks exp, iss or aud",
                    _ => "malformed",
                }
                .into(),
            )
        })?;
        self.config
            .profile_for(&data.claims.scopes())
            .ok_or(Refusal::Scope)
    }

    /// The URL the issuer's metadata gives for `field` (`jwks_uri`,
    /// `introspection_endpoint`), on the issuer's own host.
    async fn endpoint(&self, field: &str) -> Result<Url, String> {
        let (url, doc) = self.metadata.get_or_try_init(|| self.discover()).await?;
        let text = doc[field]
            .as_str()
            .ok_or_else(|| format!("{url} names no {field}"))?;
        let found = secure_url(field, text)?;
        if host_port(&found) != host_port(&self.config.issuer_url) {
            return Err(format!(
                "{url} puts its {field} on another host ({found}): name it in the OAuth file to allow it"
            ));
        }
        Ok(found)
    }

    /// The issuer's metadata (RFC 8414, then OpenID Connect discovery),
    /// which must name the configured issuer.
    async fn discover(&self) -> Result<(Url, Value), String> {
        let issuer = &self.config.issuer_url;
        let path = issuer.path().trim_end_matches('/');
        let mut oauth = issuer.clone();
        oauth.set_path(&format!("/.well-known/oauth-authorization-server{path}"));
        let mut oidc = issuer.clone();
        oidc.set_path(&format!("{path}/.well-known/openid-configuration"));
        let mut errors = Vec::new();
        for url in [oauth, oidc] {
            match self.fetch.get(&url).await {
                Ok(doc) if doc["issuer"].as_str() == Some(self.config.issuer.as_str()) => {
                    return Ok((url, doc));
                }
                Ok(doc) => errors.push(format!(
                    "{url} names the issuer {}, not {:?}",
                    doc["issuer"], self.config.issuer
                )),
                Err(e) => errors.push(e),
            }
        }
        Err(format!("no metadata: {}", errors.join("; ")))
    }
}
