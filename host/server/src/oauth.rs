//! OAuth 2.1 on the HTTP transport: kura as a resource server. It never
//! issues a token and never passes one on; it says where tokens come from
//! (Protected Resource Metadata, RFC 9728) and checks the ones it is
//! shown: a JWT offline, against the issuer's published keys (fetched from
//! its metadata, cached, fetched again for an unknown key id, bounded),
//! its issuer, its audience — this server's resource URI (RFC 8707), so a
//! token minted for another service is refused — and its lifetime. Its
//! scopes choose the profile it is served under, through one ordered table.

use std::sync::Arc;
use std::time::{Duration, Instant};

use jsonwebtoken::jwk::{Jwk, JwkSet};
use jsonwebtoken::{Algorithm, DecodingKey, Validation};
use reqwest::Url;
use serde::Deserialize;
use serde_json::{Value, json};

use crate::domain::{Catalog, Profile};

/// The most a metadata document or key set may weigh.
const MAX_DOCUMENT_BYTES: usize = 1 << 20;
/// The most keys kept from a key set.
const MAX_KEYS: usize = 64;
/// A key set is fetched again for an unknown key id at most this often: a
/// stream of tokens with made-up key ids cannot make kura hammer the issuer,
/// and a key the issuer has just rotated to is known within seconds.
const REFETCH_EVERY: Duration = Duration::from_secs(5);
/// A key set is kept this long when its answer says nothing
/// (`Cache-Control: max-age`), and at most [`KEYS_AT_MOST`] whatever it
/// says (at least [`REFETCH_EVERY`]): a key the issuer withdraws stops
/// working within it.
const KEYS_FOR: Duration = Duration::from_secs(300);
const KEYS_AT_MOST: Duration = Duration::from_secs(900);
/// A fetch from the issuer gives up after this long.
const FETCH_TIMEOUT: Duration = Duration::from_secs(10);
/// Clock skew allowed on `exp` and `nbf`, unless the file says otherwise.
const DEFAULT_LEEWAY_SECS: u64 = 30;
/// Where Protected Resource Metadata is served (RFC 9728 §3), before the
/// resource's own path.
pub const METADATA_PATH: &str = "/.well-known/oauth-protected-resource";

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

/// The OAuth file (`serve --http ADDR --oauth FILE`).
#[derive(Deserialize)]
#[serde(deny_unknown_fields)]
struct File {
    /// The authorization server's issuer identifier.
    issuer: String,
    /// This server's resource URI as clients reach it (the `aud` of its
    /// tokens), e.g. `https://kura.example.com/mcp`.
    resource: String,
    /// The issuer's key set, when its metadata does not name it (or names
    /// one on another host).
    jwks_uri: Option<String>,
    leeway_secs: Option<u64>,
    /// Opaque access tokens are checked at the issuer's introspection
    /// endpoint (RFC 7662) with kura's own client credentials.
    introspection: Option<IntrospectionEntry>,
    /// Scopes and the profile each grants, broadest first.
    #[serde(default, rename = "scope")]
    scopes: Vec<ScopeEntry>,
}

#[derive(Deserialize)]
#[serde(deny_unknown_fields)]
struct IntrospectionEntry {
    client_id: String,
    /// The variable holding the client's secret (never the file).
    client_secret_env: String,
    /// When the issuer's metadata does not name it.
    endpoint: Option<String>,
}

/// kura's credentials at the introspection endpoint.
#[derive(Clone, Debug)]
struct Introspection {
    client_id: String,
    secret: String,
    endpoint: Option<Url>,
}

#[derive(Deserialize)]
#[serde(deny_unknown_fields)]
struct ScopeEntry {
    name: String,
    /// `read_only`, `tools=...` or both; empty: everything.
    #[serde(default)]
    profile: String,
}

/// What the OAuth file says, checked.
#[derive(Clone, Debug)]
pub struct OAuthConfig {
    issuer: String,
    issuer_url: Url,
    resource: Url,
    jwks_uri: Option<Url>,
    introspection: Option<Introspection>,
    leeway: u64,
    /// In the file's order: a token is served under the first it holds.
    scopes: Vec<(String, Profile)>,
}

/// An `http:` URL is accepted on a loopback host only (OAuth 2.1 asks for
/// TLS everywhere else).
fn secure_url(what: &str, text: &str) -> Result<Url, String> {
    let url = Url::parse(text).map_err(|e| format!("`{what}` = {text:?}: {e}"))?;
    let loopback = match url.host() {
        Some(url::Host::Domain(d)) => d == "localhost",
        Some(url::Host::Ipv4(a)) => a.is_loopback(),
        Some(url::Host::Ipv6(a)) => a.is_loopback(),
        None => false,
    };
    match url.scheme() {
        "https" => {}
        "http" if loopback => {}
        _ => {
            return Err(format!(
                "`{what}` = {text:?}: an https URL is needed (http only on a loopback host)"
            ));
        }
    }
    if url.fragment().is_some() || url.host().is_none() {
        return Err(format!(
            "`{what}` = {text:?}: an absolute URL without a fragment is needed"
        ));
    }
    Ok(url)
}

impl OAuthConfig {
    /// The file's `text`; `env` gives the variables a secret is read from.
    pub fn parse(
        text: &str,
        catalog: Catalog,
        env: &dyn Fn(&str) -> Option<String>,
    ) -> Result<OAuthConfig, String> {
        let file: File = toml::from_str(text).map_err(|e| e.to_string())?;
        let issuer_url = secure_url("issuer", &file.issuer)?;
        let resource = secure_url("resource", &file.resource)?;
        if resource.query().is_some() {
            return Err(format!("`resource` = {:?} has a query", file.resource));
        }
        let jwks_uri = match &file.jwks_uri {
            Some(u) => Some(secure_url("jwks_uri", u)?),
            None => None,
        };
        let introspection = match &file.introspection {
            Some(i) => Some(Introspection {
                client_id: i.client_id.clone(),
                secret: env(&i.client_secret_env)
                    .filter(|v| !v.is_empty())
                    .ok_or_else(|| {
                        format!(
                            "`introspection.client_secret_env`: {} is not set",
                            i.client_secret_env
                        )
                    })?,
                endpoint: match &i.endpoint {
                    Some(u) => Some(secure_url("introspection.endpoint", u)?),
                    None => None,
                },
            }),
            None => None,
        };
        if file.scopes.is_empty() {
            return Err("no `[[scope]]`: name at least one scope and the profile it grants".into());
        }
        let mut scopes: Vec<(String, Profile)> = Vec::new();
        for s in &file.scopes {
            if s.name.is_empty() || s.name.contains(|c: char| c.is_whitespace() || c == '"') {
                return Err(format!("scope {:?}: a scope is one word", s.name));
            }
            if scopes.iter().any(|(n, _)| *n == s.name) {
                return Err(format!("scope {:?} twice", s.name));
            }
            let profile = Profile::parse(s.profile.split_whitespace(), catalog)
                .map_err(|e| format!("scope {:?}: {e}", s.name))?;
            scopes.push((s.name.clone(), profile));
        }
        Ok(OAuthConfig {
            issuer: file.issuer,
            issuer_url,
            resource,
            jwks_uri,
            introspection,
            leeway: file.leeway_secs.unwrap_or(DEFAULT_LEEWAY_SECS),
            scopes,
        })
    }

    /// The hosts (`host:port`) kura fetches from: the issuer's, and a key
    /// set configured elsewhere. The sandbox lets the process connect to
    /// their ports and nothing else.
    pub fn hosts(&self) -> Vec<String> {
        let mut hosts = vec![host_port(&self.issuer_url)];
        let introspection = self
            .introspection
            .as_ref()
            .and_then(|i| i.endpoint.as_ref());
        for j in self.jwks_uri.iter().chain(introspection) {
            let h = host_port(j);
            if !hosts.contains(&h) {
                hosts.push(h);
            }
        }
        hosts
    }

    pub fn issuer(&self) -> &str {
        &self.issuer
    }

    pub fn resource(&self) -> &str {
        self.resource.as_str()
    }

    /// The paths the metadata is served at: the resource's own (the well-known
    /// prefix before its path) and, when that differs, the root one, which
    /// clients also try.
    pub fn metadata_paths(&self) -> Vec<String> {
        let path = self.resource.path().trim_end_matches('/');
        let own = format!("{METADATA_PATH}{path}");
        let mut paths = vec![own];
        if !path.is_empty() {
            paths.push(METADATA_PATH.to_owned());
        }
        paths
    }

    /// Where a client reads the metadata (named in `WWW-Authenticate`).
    pub fn metadata_url(&self) -> String {
        let mut url = self.resource.clone();
        url.set_path(&self.metadata_paths()[0]);
        url.to_string()
    }

    /// The Protected Resource Metadata document.
    pub fn metadata(&self) -> Value {
        json!({
            "resource": self.resource.as_str(),
            "authorization_servers": [self.issuer],
            "scopes_supported": self.scope_names(),
            "bearer_methods_supported": ["header"],
            "resource_name": "kura",
        })
    }

    pub fn scope_names(&self) -> Vec<&str> {
        self.scopes.iter().map(|(n, _)| n.as_str()).collect()
    }

    /// The profile of the first scope of the table the token holds.
    fn profile_for(&self, held: &[&str]) -> Option<Profile> {
        self.scopes
            .iter()
            .find(|(n, _)| held.contains(&n.as_str()))
            .map(|(_, p)| p.clone())
    }
}

fn host_port(url: &Url) -> String {
    let host = match url.host() {
        Some(url::Host::Ipv6(a)) => format!("[{a}]"),
        Some(h) => h.to_string(),
        None => String::new(),
    };
    format!("{host}:{}", url.port_or_known_default().unwrap_or(443))
}

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

/// A JSON answer on its way.
pub type Answer<'a> = std::pin::Pin<Box<dyn Future<Output = Result<Value, String>> + Send + 'a>>;
/// A JSON answer and how long it may be kept.
pub type AgedAnswer<'a> =
    std::pin::Pin<Box<dyn Future<Output = Result<(Value, Option<Duration>), String>> + Send + 'a>>;

/// Where documents come from: the network in a server, a map in tests.
pub trait Fetch: Send + Sync {
    fn get(&self, url: &Url) -> Answer<'_>;

    /// [`Fetch::get`], with how long the answer may be kept (its
    /// `Cache-Control: max-age`), when it says.
    fn get_aged(&self, url: &Url) -> AgedAnswer<'_> {
        let answer = self.get(url);
        Box::pin(async move { Ok((answer.await?, None)) })
    }

    /// A form POSTed with HTTP Basic client credentials (`id`, `secret`).
    fn post_form(&self, url: &Url, form: &[(&str, &str)], id: &str, secret: &str) -> Answer<'_>;
}

/// Fetches JSON over HTTPS (http on loopback), bounded in size and time,
/// following no redirect.
pub struct Http(reqwest::Client);

impl Http {
    /// A client trusting `roots` (loaded before the process confined
    /// itself: the certificate files are not readable after).
    pub fn new(roots: rustls::RootCertStore) -> Result<Http, String> {
        let provider = Arc::new(rustls::crypto::ring::default_provider());
        let tls = rustls::ClientConfig::builder_with_provider(provider)
            .with_safe_default_protocol_versions()
            .map_err(|e| e.to_string())?
            .with_root_certificates(roots)
            .with_no_client_auth();
        let client = reqwest::Client::builder()
            .tls_backend_preconfigured(tls)
            .timeout(FETCH_TIMEOUT)
            .redirect(reqwest::redirect::Policy::none())
            .build()
            .map_err(|e| e.to_string())?;
        Ok(Http(client))
    }

    /// The system's trusted certificates.
    pub fn system_roots() -> rustls::RootCertStore {
        let mut roots = rustls::RootCertStore::empty();
        let found = rustls_native_certs::load_native_certs();
        roots.add_parsable_certificates(found.certs);
        roots
    }
}

impl Http {
    /// Send `request`; its JSON answer, read up to [`MAX_DOCUMENT_BYTES`].
    async fn json(url: Url, request: reqwest::RequestBuilder) -> Result<Value, String> {
        Ok(Self::aged(url, request).await?.0)
    }

    /// [`Http::json`], with the answer's `Cache-Control: max-age`.
    async fn aged(
        url: Url,
        request: reqwest::RequestBuilder,
    ) -> Result<(Value, Option<Duration>), String> {
        let mut response = request
            .header(reqwest::header::ACCEPT, "application/json")
            .send()
            .await
            .map_err(|e| format!("{url}: {e}"))?;
        if !response.status().is_success() {
            return Err(format!("{url}: HTTP {}", response.status()));
        }
        let max_age = response
            .headers()
            .get_all(reqwest::header::CACHE_CONTROL)
            .iter()
            .filter_map(|v| v.to_str().ok())
            .find_map(max_age);
        let mut body = Vec::new();
        while let Some(chunk) = response.chunk().await.map_err(|e| format!("{url}: {e}"))? {
            if body.len() + chunk.len() > MAX_DOCUMENT_BYTES {
                return Err(format!("{url}: larger than {MAX_DOCUMENT_BYTES} bytes"));
            }
            body.extend_from_slice(&chunk);
        }
        let doc = serde_json::from_slice(&body).map_err(|e| format!("{url}: not JSON: {e}"))?;
        Ok((doc, max_age))
    }
}

/// The `max-age` of a `Cache-Control` value (`no-store` and `no-cache`
/// count as 0: kept for the shortest time allowed).
fn max_age(value: &str) -> Option<Duration> {
    value.split(',').map(str::trim).find_map(|d| {
        let d = d.to_ascii_lowercase();
        if d == "no-store" || d == "no-cache" {
            return Some(Duration::ZERO);
        }
        d.strip_prefix("max-age=")?
            .trim_matches('"')
            .parse()
            .ok()
            .map(Duration::from_secs)
    })
}

/// How long a key set is kept, given its answer's `max-age`.
fn keys_lifetime(max_age: Option<Duration>) -> Duration {
    max_age
        .unwrap_or(KEYS_FOR)
        .clamp(REFETCH_EVERY, KEYS_AT_MOST)
}

impl Fetch for Http {
    fn get(&self, url: &Url) -> Answer<'_> {
        Box::pin(Self::json(url.clone(), self.0.get(url.clone())))
    }

    fn get_aged(&self, url: &Url) -> AgedAnswer<'_> {
        Box::pin(Self::aged(url.clone(), self.0.get(url.clone())))
    }

    fn post_form(&self, url: &Url, form: &[(&str, &str)], id: &str, secret: &str) -> Answer<'_> {
        let body = url::form_urlencoded::Serializer::new(String::new())
            .extend_pairs(form)
            .finish();
        let request = self
            .0
            .post(url.clone())
            .basic_auth(id, Some(secret))
            .header(
                reqwest::header::CONTENT_TYPE,
                "application/x-www-form-urlencoded",
            )
            .body(body);
        Box::pin(Self::json(url.clone(), request))
    }
}

/// The issuer's keys as last fetched.
#[derive(Default)]
struct Keys {
    set: Vec<Jwk>,
    /// When the set was last fetched, and how long it is kept.
    fetched: Option<Instant>,
    lifetime: Duration,
    /// When it was last asked for, fetched or not.
    tried: Option<Instant>,
    /// The key set's URL, once known.
    uri: Option<Url>,
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

/// Opaque tokens the issuer answered about, by their SHA-256: the profile
/// of an active one (None: refused), until when the answer may be believed.
type Introspected = std::collections::HashMap<[u8; 32], (Option<Profile>, Instant)>;

/// A refusal is remembered this long: the same made-up string sent again
/// is refused without asking the issuer.
const REFUSED_FOR: Duration = Duration::from_secs(30);
/// The issuer is asked about at most this many unknown strings in each
/// window: an unauthenticated caller cannot make kura flood it.
const ASKS_PER_WINDOW: u32 = 20;
const ASK_WINDOW: Duration = Duration::from_secs(10);

/// An introspected token is believed this long at most (or until its
/// `exp`, if sooner): a revoked token stops working within it.
const INTROSPECTED_FOR: Duration = Duration::from_secs(60);
/// The most introspected tokens remembered.
const MAX_INTROSPECTED: usize = 1024;

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

    /// The key for `kid` (or the only key for `alg` when the token names
    /// none). The key set is fetched again when its lifetime is over, or
    /// when it has no such key (a rotation), at most every
    /// [`REFETCH_EVERY`]; one fetch at a time, and a check whose key is
    /// known meanwhile is answered from the set as it was.
    async fn key(&self, kid: Option<&str>, alg: Algorithm) -> Result<DecodingKey, Refusal> {
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
    async fn fetch_keys(&self) -> Result<usize, String> {
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

    /// An opaque token, asked about at the issuer's introspection
    /// endpoint (RFC 7662): active, from this issuer, for this resource,
    /// not expired. A positive answer is remembered a little while.
    async fn introspect(&self, i: &Introspection, token: &str) -> Result<Profile, Refusal> {
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

#[cfg(test)]
mod tests {
    use std::collections::HashMap;
    use std::sync::Mutex;
    use std::sync::atomic::{AtomicUsize, Ordering};

    use base64::Engine;
    use base64::engine::general_purpose::URL_SAFE_NO_PAD as B64;
    use jsonwebtoken::{EncodingKey, Header};
    use ring::signature::{Ed25519KeyPair, KeyPair};

    use super::*;

    const ISSUER: &str = "https://id.example.com/realms/kura";
    const RESOURCE: &str = "https://kura.example.com/mcp";

    fn config(extra: &str) -> OAuthConfig {
        let text = format!(
            "issuer = \"{ISSUER}\"\nresource = \"{RESOURCE}\"\n{extra}\n\
             [[scope]]\nname = \"kura:all\"\n\
             [[scope]]\nname = \"kura:read\"\nprofile = \"read_only\"\n"
        );
        let env = |k: &str| (k == "KURA_TEST_SECRET").then(|| "s3cret".to_owned());
        OAuthConfig::parse(&text, crate::domain::Catalog::new(&[]), &env).unwrap()
    }

    /// The issuer's documents by URL, and how many fetches were made.
    #[derive(Default)]
    struct Docs {
        docs: Mutex<HashMap<String, Value>>,
        fetches: AtomicUsize,
        /// The `max-age` every answer carries.
        max_age: Mutex<Option<Duration>>,
        /// Answers never come (an issuer that hangs).
        hang: std::sync::atomic::AtomicBool,
    }

    impl Docs {
        fn set(&self, url: &str, doc: Value) {
            self.docs.lock().unwrap().insert(url.to_owned(), doc);
        }
    }

    impl Fetch for Arc<Docs> {
        fn get(&self, url: &Url) -> Answer<'_> {
            self.fetches.fetch_add(1, Ordering::SeqCst);
            let doc = self.docs.lock().unwrap().get(url.as_str()).cloned();
            let hang = self.hang.load(Ordering::SeqCst);
            Box::pin(async move {
                if hang {
                    std::future::pending::<()>().await;
                }
                doc.ok_or_else(|| "404".to_owned())
            })
        }

        fn get_aged(&self, url: &Url) -> AgedAnswer<'_> {
            let answer = self.get(url);
            let max_age = *self.max_age.lock().unwrap();
            Box::pin(async move { Ok((answer.await?, max_age)) })
        }

        /// The answer set for `POST url` and the form's `token`, from
        /// the right client only.
        fn post_form(
            &self,
            url: &Url,
            form: &[(&str, &str)],
            id: &str,
            secret: &str,
        ) -> Answer<'_> {
            self.fetches.fetch_add(1, Ordering::SeqCst);
            let token = form
                .iter()
                .find(|(k, _)| *k == "token")
                .map_or("", |(_, v)| *v);
            let doc = (id == "kura" && secret == "s3cret")
                .then(|| {
                    self.docs
                        .lock()
                        .unwrap()
                        .get(&format!("POST {url} {token}"))
                        .cloned()
                })
                .flatten();
            Box::pin(async move { doc.ok_or_else(|| "401".to_owned()) })
        }
    }

    struct Signer {
        kid: String,
        pkcs8: Vec<u8>,
        public: Vec<u8>,
    }

    impl Signer {
        fn new(kid: &str) -> Signer {
            let rng = ring::rand::SystemRandom::new();
            let pkcs8 = Ed25519KeyPair::generate_pkcs8(&rng).unwrap();
            let pair = Ed25519KeyPair::from_pkcs8(pkcs8.as_ref()).unwrap();
            Signer {
                kid: kid.into(),
                pkcs8: pkcs8.as_ref().to_vec(),
                public: pair.public_key().as_ref().to_vec(),
            }
        }

        fn jwk(&self) -> Value {
            json!({"kty": "OKP", "crv": "Ed25519", "alg": "EdDSA", "use": "sig",
                   "kid": self.kid, "x": B64.encode(&self.public)})
        }

        fn sign(&self, claims: Value) -> String {
            let mut header = Header::new(Algorithm::EdDSA);
            header.kid = Some(self.kid.clone());
            jsonwebtoken::encode(&header, &claims, &EncodingKey::from_ed_der(&self.pkcs8)).unwrap()
        }
    }

    fn now() -> u64 {
        std::time::SystemTime::now()
            .duration_since(std::time::UNIX_EPOCH)
            .unwrap()
            .as_secs()
    }

    fn claims(scope: &str) -> Value {
        json!({"iss": ISSUER, "aud": RESOURCE, "sub": "someone", "exp": now() + 300,
               "iat": now(), "scope": scope})
    }

    /// An issuer publishing `keys` through RFC 8414 metadata.
    fn issuer(keys: &[&Signer]) -> (Arc<Docs>, OAuth) {
        let docs = Arc::new(Docs::default());
        docs.set(
            "https://id.example.com/.well-known/oauth-authorization-server/realms/kura",
            json!({"issuer": ISSUER, "jwks_uri": "https://id.example.com/realms/kura/certs"}),
        );
        publish(&docs, keys);
        let oauth = OAuth::new(config(""), Box::new(docs.clone()));
        (docs, oauth)
    }

    fn publish(docs: &Docs, keys: &[&Signer]) {
        let keys: Vec<Value> = keys.iter().map(|k| k.jwk()).collect();
        docs.set(
            "https://id.example.com/realms/kura/certs",
            json!({ "keys": keys }),
        );
    }

    fn block<T>(f: impl Future<Output = T>) -> T {
        tokio::runtime::Builder::new_current_thread()
            .build()
            .unwrap()
            .block_on(f)
    }

    #[test]
    fn a_token_the_issuer_signed_is_served_under_its_first_granted_scope() {
        let key = Signer::new("k1");
        let (_, oauth) = issuer(&[&key]);
        let read = block(oauth.admit(&key.sign(claims("openid kura:read")))).unwrap();
        assert!(read.read_only);
        let all = block(oauth.admit(&key.sign(claims("kura:read kura:all")))).unwrap();
        assert!(!all.read_only, "the table's order decides, broadest first");
        // `scp` as a list, as some issuers write it.
        let mut c = claims("");
        c["scp"] = json!(["kura:read"]);
        assert!(block(oauth.admit(&key.sign(c))).unwrap().read_only);
    }

    #[test]
    fn a_token_for_another_resource_from_another_issuer_or_expired_is_refused() {
        let key = Signer::new("k1");
        let (_, oauth) = issuer(&[&key]);
        let refused = |c: Value| block(oauth.admit(&key.sign(c))).unwrap_err();
        let mut c = claims("kura:all");
        c["aud"] = json!("https://other.example.com/mcp");
        assert_eq!(
            refused(c),
            Refusal::Invalid("issued for another resource".into())
        );
        let mut c = claims("kura:all");
        c["iss"] = json!("https://evil.example.com");
        assert_eq!(refused(c), Refusal::Invalid("from another issuer".into()));
        let mut c = claims("kura:all");
        c["exp"] = json!(now() - 120);
        assert_eq!(refused(c), Refusal::Invalid("expired".into()));
        let mut c = claims("kura:all");
        c["nbf"] = json!(now() + 600);
        assert_eq!(refused(c), Refusal::Invalid("not valid yet".into()));
        let mut c = claims("kura:all");
        c.as_object_mut().unwrap().remove("aud");
        assert_eq!(refused(c), Refusal::Invalid("lacks exp, iss or aud".into()));
        // An audience list that names this resource is accepted.
        let mut c = claims("kura:all");
        c["aud"] = json!(["https://other.example.com", RESOURCE]);
        assert!(block(oauth.admit(&key.sign(c))).is_ok());
    }

    #[test]
    fn a_forged_signature_or_a_shared_secret_algorithm_is_refused() {
        let key = Signer::new("k1");
        let forger = Signer::new("k1"); // the same key id, another key
        let (_, oauth) = issuer(&[&key]);
        assert_eq!(
            block(oauth.admit(&forger.sign(claims("kura:all")))).unwrap_err(),
            Refusal::Invalid("bad signature".into())
        );
        // HS256 with the public key as the secret: the classic confusion.
        let mut header = Header::new(Algorithm::HS256);
        header.kid = Some("k1".into());
        let hs = jsonwebtoken::encode(
            &header,
            &claims("kura:all"),
            &EncodingKey::from_secret(&key.public),
        )
        .unwrap();
        assert!(matches!(block(oauth.admit(&hs)), Err(Refusal::Invalid(_))));
        // Unsigned.
        let none = format!(
            "{}.{}.",
            B64.encode(br#"{"alg":"none","typ":"JWT"}"#),
            B64.encode(claims("kura:all").to_string())
        );
        assert!(matches!(
            block(oauth.admit(&none)),
            Err(Refusal::Invalid(_))
        ));
        assert!(matches!(
            block(oauth.admit("not-a-jwt")),
            Err(Refusal::Invalid(_))
        ));
    }

    #[test]
    fn a_good_token_without_a_granted_scope_is_insufficient_scope() {
        let key = Signer::new("k1");
        let (_, oauth) = issuer(&[&key]);
        assert_eq!(
            block(oauth.admit(&key.sign(claims("openid profile")))).unwrap_err(),
            Refusal::Scope
        );
    }

    #[test]
    fn a_rotated_key_is_fetched_once_and_unknown_ids_do_not_hammer_the_issuer() {
        let old = Signer::new("old");
        let (docs, oauth) = issuer(&[&old]);
        block(oauth.admit(&old.sign(claims("kura:all")))).unwrap();
        let fetched = docs.fetches.load(Ordering::SeqCst);
        assert_eq!(fetched, 2, "metadata, then the key set");
        block(oauth.admit(&old.sign(claims("kura:all")))).unwrap();
        assert_eq!(docs.fetches.load(Ordering::SeqCst), fetched, "cached");
        // The issuer rotates; a token with the new key id arrives.
        let new = Signer::new("new");
        publish(&docs, &[&old, &new]);
        oauth.held().tried = Some(Instant::now() - REFETCH_EVERY);
        block(oauth.admit(&new.sign(claims("kura:all")))).unwrap();
        assert_eq!(docs.fetches.load(Ordering::SeqCst), fetched + 1);
        // Made-up key ids: refused without another fetch for a while.
        let stranger = Signer::new("stranger");
        for _ in 0..5 {
            assert!(block(oauth.admit(&stranger.sign(claims("kura:all")))).is_err());
        }
        assert_eq!(docs.fetches.load(Ordering::SeqCst), fetched + 1);
    }

    #[test]
    fn a_withdrawn_key_is_refused_once_the_key_set_s_lifetime_is_over() {
        let old = Signer::new("old");
        let (docs, oauth) = issuer(&[&old]);
        *docs.max_age.lock().unwrap() = Some(Duration::from_secs(60));
        block(oauth.admit(&old.sign(claims("kura:all")))).unwrap();
        assert_eq!(oauth.held().lifetime, Duration::from_secs(60));
        // The issuer withdraws the key (not only adds another).
        let new = Signer::new("new");
        publish(&docs, &[&new]);
        // Within the set's lifetime the key is still believed...
        block(oauth.admit(&old.sign(claims("kura:all")))).unwrap();
        // ...and once it is over, refused; the new key works.
        {
            let mut keys = oauth.held();
            let over = Instant::now() - Duration::from_secs(61);
            (keys.fetched, keys.tried) = (Some(over), Some(over));
        }
        let refused = block(oauth.admit(&old.sign(claims("kura:all"))));
        assert!(matches!(refused, Err(Refusal::Invalid(_))), "{refused:?}");
        block(oauth.admit(&new.sign(claims("kura:all")))).unwrap();
    }

    #[test]
    fn a_key_set_is_kept_as_its_max_age_says_within_bounds() {
        assert_eq!(
            max_age("public, max-age=600"),
            Some(Duration::from_secs(600))
        );
        assert_eq!(max_age("no-store"), Some(Duration::ZERO));
        assert_eq!(max_age("public"), None);
        assert_eq!(
            keys_lifetime(Some(Duration::from_secs(600))),
            Duration::from_secs(600)
        );
        assert_eq!(keys_lifetime(Some(Duration::ZERO)), REFETCH_EVERY);
        assert_eq!(
            keys_lifetime(Some(Duration::from_secs(86_400))),
            KEYS_AT_MOST
        );
        assert_eq!(keys_lifetime(None), KEYS_FOR);
    }

    #[test]
    fn a_check_with_a_known_key_never_waits_for_a_hanging_issuer() {
        let old = Signer::new("old");
        let (docs, oauth) = issuer(&[&old]);
        let runtime = tokio::runtime::Builder::new_current_thread()
            .enable_time()
            .build()
            .unwrap();
        runtime.block_on(async {
            oauth.admit(&old.sign(claims("kura:all"))).await.unwrap();
            // A token with a key id the set lacks sends kura to the issuer,
            // which never answers.
            docs.hang.store(true, Ordering::SeqCst);
            oauth.held().tried = Some(Instant::now() - REFETCH_EVERY);
            let stranger = Signer::new("stranger").sign(claims("kura:all"));
            let known = old.sign(claims("kura:all"));
            tokio::select! {
                biased;
                _ = oauth.admit(&stranger) => panic!("the hanging fetch ended"),
                r = tokio::time::timeout(Duration::from_secs(2), oauth.admit(&known)) => {
                    let r = r.expect("a known key's check waited for the fetch");
                    assert!(r.is_ok(), "{r:?}");
                }
            }
        });
    }

    #[test]
    fn opaque_strings_are_asked_about_once_each_and_at_a_bounded_rate() {
        let key = Signer::new("k1");
        let (docs, _) = issuer(&[&key]);
        let oauth = OAuth::new(
            config(
                "[introspection]\nendpoint = \"https://id.example.com/introspect\"\nclient_id = \"kura\"\nclient_secret_env = \"KURA_TEST_SECRET\"\n",
            ),
            Box::new(docs.clone()),
        );
        let asked = || docs.fetches.load(Ordering::SeqCst);
        docs.set(
            "POST https://id.example.com/introspect made-up",
            json!({"active": false}),
        );
        // The same made-up string, again and again: one question.
        for _ in 0..5 {
            assert!(block(oauth.admit("made-up")).is_err());
        }
        assert_eq!(asked(), 1);
        // A stream of different ones: the issuer hears a bounded number.
        for i in 0..200 {
            assert!(block(oauth.admit(&format!("made-up-{i}"))).is_err());
        }
        assert_eq!(asked(), ASKS_PER_WINDOW as usize);
    }

    #[test]
    fn metadata_naming_another_issuer_or_keys_on_another_host_is_not_trusted() {
        let key = Signer::new("k1");
        let (docs, oauth) = issuer(&[&key]);
        docs.set(
            "https://id.example.com/.well-known/oauth-authorization-server/realms/kura",
            json!({"issuer": ISSUER, "jwks_uri": "https://keys.example.net/certs"}),
        );
        assert_eq!(
            block(oauth.admit(&key.sign(claims("kura:all")))).unwrap_err(),
            Refusal::Invalid("the issuer's keys are unavailable".into())
        );
        let (docs, oauth) = issuer(&[&key]);
        docs.set(
            "https://id.example.com/.well-known/oauth-authorization-server/realms/kura",
            json!({"issuer": "https://evil.example.com", "jwks_uri": "https://id.example.com/realms/kura/certs"}),
        );
        assert!(block(oauth.admit(&key.sign(claims("kura:all")))).is_err());
        // OpenID Connect discovery is the fallback.
        let docs = Arc::new(Docs::default());
        docs.set(
            "https://id.example.com/realms/kura/.well-known/openid-configuration",
            json!({"issuer": ISSUER, "jwks_uri": "https://id.example.com/realms/kura/certs"}),
        );
        publish(&docs, &[&key]);
        let oauth = OAuth::new(config(""), Box::new(docs.clone()));
        assert!(block(oauth.admit(&key.sign(claims("kura:all")))).is_ok());
    }

    #[test]
    fn an_opaque_token_is_asked_about_once_and_believed_only_as_the_issuer_says() {
        let docs = Arc::new(Docs::default());
        docs.set(
            "https://id.example.com/.well-known/oauth-authorization-server/realms/kura",
            json!({"issuer": ISSUER, "jwks_uri": "https://id.example.com/realms/kura/certs",
                   "introspection_endpoint": "https://id.example.com/realms/kura/introspect"}),
        );
        let endpoint = "POST https://id.example.com/realms/kura/introspect";
        let answer = |token: &str, fields: Value| {
            let mut a = json!({"active": true, "iss": ISSUER, "aud": RESOURCE,
                               "exp": now() + 300, "scope": "kura:read"});
            for (k, v) in fields.as_object().unwrap() {
                a[k] = v.clone();
            }
            docs.set(&format!("{endpoint} {token}"), a);
        };
        answer("good", json!({}));
        answer("revoked", json!({"active": false}));
        answer("elsewhere", json!({"aud": "https://other.example.com/mcp"}));
        answer("foreign", json!({"iss": "https://evil.example.com"}));
        answer("stale", json!({"exp": now() - 60}));
        answer("unscoped", json!({"scope": "openid"}));
        let oauth = OAuth::new(
            config(
                "[introspection]\nclient_id = \"kura\"\nclient_secret_env = \"KURA_TEST_SECRET\"\n",
            ),
            Box::new(docs.clone()),
        );
        assert!(block(oauth.admit("good")).unwrap().read_only);
        let asked = docs.fetches.load(Ordering::SeqCst);
        assert!(block(oauth.admit("good")).unwrap().read_only);
        assert_eq!(docs.fetches.load(Ordering::SeqCst), asked, "remembered");
        let refused = |t: &str| block(oauth.admit(t)).unwrap_err();
        assert_eq!(refused("revoked"), Refusal::Invalid("not active".into()));
        assert_eq!(
            refused("elsewhere"),
            Refusal::Invalid("issued for another resource".into())
        );
        assert_eq!(
            refused("foreign"),
            Refusal::Invalid("from another issuer".into())
        );
        assert_eq!(refused("stale"), Refusal::Invalid("expired".into()));
        assert_eq!(refused("unscoped"), Refusal::Scope);
        assert!(matches!(refused("unknown"), Refusal::Invalid(_)));
        // Without [introspection], an opaque token is simply not a JWT.
        let (_, plain) = issuer(&[]);
        assert_eq!(
            block(plain.admit("good")).unwrap_err(),
            Refusal::Invalid("not a signed JWT".into())
        );
    }

    #[test]
    fn the_metadata_names_the_resource_its_issuer_and_scopes_at_the_well_known_paths() {
        let c = config("");
        assert_eq!(
            c.metadata_paths(),
            [
                "/.well-known/oauth-protected-resource/mcp",
                "/.well-known/oauth-protected-resource"
            ]
        );
        assert_eq!(
            c.metadata_url(),
            "https://kura.example.com/.well-known/oauth-protected-resource/mcp"
        );
        let m = c.metadata();
        assert_eq!(m["resource"], RESOURCE);
        assert_eq!(m["authorization_servers"], json!([ISSUER]));
        assert_eq!(m["scopes_supported"], json!(["kura:all", "kura:read"]));
        assert_eq!(c.hosts(), ["id.example.com:443"]);
    }

    #[test]
    fn the_oauth_file_refuses_plain_http_off_loopback_and_scopes_without_a_profile() {
        let parse = |t: &str| OAuthConfig::parse(t, crate::domain::Catalog::new(&[]), &|_| None);
        let scope = "[[scope]]\nname = \"a\"\n";
        assert!(
            parse(&format!(
                "issuer = \"http://id.example.com\"\nresource = \"{RESOURCE}\"\n{scope}"
            ))
            .unwrap_err()
            .contains("https")
        );
        assert!(
            parse(&format!(
                "issuer = \"http://127.0.0.1:9000\"\nresource = \"http://localhost:8080/mcp\"\n{scope}"
            ))
            .is_ok()
        );
        assert!(
            parse(&format!(
                "issuer = \"{ISSUER}\"\nresource = \"{RESOURCE}\"\n"
            ))
            .unwrap_err()
            .contains("scope")
        );
        assert!(
            parse(&format!(
                "issuer = \"{ISSUER}\"\nresource = \"{RESOURCE}\"\n[[scope]]\nname = \"a\"\nprofile = \"tools=\"\n"
            ))
            .is_err()
        );
        assert!(
            parse(&format!(
                "issuer = \"{ISSUER}\"\nresource = \"{RESOURCE}\"\nsurprise = 1\n{scope}"
            ))
            .is_err()
        );
    }
}
