//! The OAuth file, read and checked: the issuer, this server's resource
//! URI, where keys and introspection live, and the scopes' profiles.

use reqwest::Url;
use serde::Deserialize;
use serde_json::{Value, json};

use crate::domain::{Catalog, Profile};

/// Clock skew allowed on `exp` and `nbf`, unless the file says otherwise.
const DEFAULT_LEEWAY_SECS: u64 = 30;
/// Where Protected Resource Metadata is served (RFC 9728 §3), before the
/// resource's own path.
pub const METADATA_PATH: &str = "/.well-known/oauth-protected-resource";

/// The OAuth file (`serve --http ADDR --oauth FILE`).
#[derive(Deserialize)]
#[serde(deny_unknown_fields)]
struct File {
    /// The authorization server's issuer identifier.
    pub(super) issuer: String,
    /// This server's resource URI as clients reach it (the `aud` of its
    /// tokens), e.g. `https://kura.example.com/mcp`.
    pub(super) resource: String,
    /// The issuer's key set, when its metadata does not name it (or names
    /// one on another host).
    pub(super) jwks_uri: Option<String>,
    pub(super) leeway_secs: Option<u64>,
    /// Opaque access tokens are checked at the issuer's introspection
    /// endpoint (RFC 7662) with kura's own client credentials.
    pub(super) introspection: Option<IntrospectionEntry>,
    /// Scopes and the profile each grants, broadest first.
    #[serde(default, rename = "scope")]
    pub(super) scopes: Vec<ScopeEntry>,
}

#[derive(Deserialize)]
#[serde(deny_unknown_fields)]
struct IntrospectionEntry {
    pub(super) client_id: String,
    /// The variable holding the client's secret (never the file).
    pub(super) client_secret_env: String,
    /// When the issuer's metadata does not name it.
    pub(super) endpoint: Option<String>,
}

/// kura's credentials at the introspection endpoint.
#[derive(Clone, Debug)]
pub(super) struct Introspection {
    pub(super) client_id: String,
    pub(super) secret: String,
    pub(super) endpoint: Option<Url>,
}

#[derive(Deserialize)]
#[serde(deny_unknown_fields)]
struct ScopeEntry {
    pub(super) name: String,
    /// `read_only`, `tools=...` or both; empty: everything.
    #[serde(default)]
    pub(super) profile: String,
}

/// What the OAuth file says, checked.
#[derive(Clone, Debug)]
pub struct OAuthConfig {
    pub(super) issuer: String,
    pub(super) issuer_url: Url,
    pub(super) resource: Url,
    pub(super) jwks_uri: Option<Url>,
    pub(super) introspection: Option<Introspection>,
    pub(super) leeway: u64,
    /// In the file's order: a token is served under the first it holds.
    pub(super) scopes: Vec<(String, Profile)>,
}

/// An `http:` URL is accepted on a loopback host only (OAuth 2.1 asks for
/// TLS everywhere else).
pub(super) fn secure_url(what: &str, text: &str) -> Result<Url, String> {
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
    pub(super) fn profile_for(&self, held: &[&str]) -> Option<Profile> {
        self.scopes
            .iter()
            .find(|(n, _)| held.contains(&n.as_str()))
            .map(|(_, p)| p.clone())
    }
}

pub(super) fn host_port(url: &Url) -> String {
    let host = match url.host() {
        Some(url::Host::Ipv6(a)) => format!("[{a}]"),
        Some(h) => h.to_string(),
        None => String::new(),
    };
    format!("{host}:{}", url.port_or_known_default().unwrap_or(443))
}
