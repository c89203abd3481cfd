//! Where the issuer's documents come from: HTTPS (http on loopback),
//! bounded in size and time, following no redirect; a map in tests.

use std::sync::Arc;
use std::time::Duration;

use reqwest::Url;
use serde_json::Value;

/// The most a metadata document or key set may weigh.
const MAX_DOCUMENT_BYTES: usize = 1 << 20;
/// A fetch from the issuer gives up after this long.
const FETCH_TIMEOUT: Duration = Duration::from_secs(10);

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
pub(super) fn max_age(value: &str) -> Option<Duration> {
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
