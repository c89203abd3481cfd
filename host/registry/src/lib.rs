//! Components to and from OCI registries, in the Wasm artifact layout the
//! component-model tools use (an image manifest whose config is
//! `application/vnd.wasm.config.v0+json` and whose one layer is
//! `application/wasm`), so a component pushed by those tools can be pulled
//! and one pushed by kura can be pulled by them.
//!
//! Every byte is checked against its digest: the manifest against the
//! reference's digest (or the one it is recorded under), the layer against
//! the manifest. Sizes are bounded before anything is read. A detached
//! minisign signature travels beside the component as an artifact of its
//! own whose `subject` is the component's manifest, under the tag
//! `sha256-<manifest hex>.minisig` (registries without the referrers API,
//! such as the reference implementation 2.x, serve it the same way).
//!
//! Only `kura plugins pull` and `push` use this crate: serving reads the
//! lock file and the store, never a registry.

use futures_util::StreamExt;
use oci_client::client::{ClientConfig, ClientProtocol};
use oci_client::manifest::{OciDescriptor, OciImageManifest};
use oci_client::secrets::RegistryAuth;
use oci_client::{Client, Reference};
use serde::Serialize;

use kura_core::config::{Digest, OciRef};

pub const MANIFEST_MEDIA_TYPE: &str = "application/vnd.oci.image.manifest.v1+json";
pub const WASM_CONFIG_MEDIA_TYPE: &str = "application/vnd.wasm.config.v0+json";
pub const WASM_LAYER_MEDIA_TYPE: &str = "application/wasm";
/// The signature artifact's type and its one layer's.
pub const SIGNATURE_MEDIA_TYPE: &str = "application/vnd.kura.minisign.signature.v1";
const EMPTY_MEDIA_TYPE: &str = "application/vnd.oci.empty.v1+json";

/// The largest component pulled: more than any toolchain's output (a
/// componentize-py component is about 40 MiB), and a bound on memory.
pub const MAX_COMPONENT_BYTES: u64 = 256 << 20;
const MAX_MANIFEST_BYTES: usize = 4 << 20;
const MAX_SIGNATURE_BYTES: u64 = 64 << 10;

#[derive(Debug, thiserror::Error)]
pub enum Error {
    #[error("{reference}: {message}")]
    Registry { reference: String, message: String },
    #[error("{reference}: {message}")]
    Content { reference: String, message: String },
}

/// How to reach a registry.
#[derive(Clone, Debug, Default)]
pub struct Options {
    /// Plain HTTP for this registry although it is not on this machine.
    pub plain_http: bool,
    /// `KURA_REGISTRY_USERNAME` and `KURA_REGISTRY_PASSWORD`, when set.
    pub basic: Option<(String, String)>,
}

/// A component as pulled: every digest already checked.
#[derive(Clone, Debug)]
pub struct Pulled {
    pub manifest: Digest,
    /// The manifest's own bytes (kept, so that the layer's digest can be
    /// derived from them again at every start).
    pub manifest_bytes: Vec<u8>,
    pub digest: Digest,
    pub bytes: Vec<u8>,
    /// The minisign signature pushed beside it, if there is one.
    pub signature: Option<Vec<u8>>,
}

/// What the Wasm artifact layout's config says of a component.
#[derive(Clone, Debug, Serialize)]
#[serde(rename_all = "camelCase")]
pub struct WasmConfig {
    pub created: String,
    pub architecture: &'static str,
    pub os: &'static str,
    pub layer_digests: Vec<String>,
    pub component: ComponentInfo,
}

#[derive(Clone, Debug, Serialize)]
pub struct ComponentInfo {
    pub exports: Vec<String>,
    pub imports: Vec<String>,
}

impl WasmConfig {
    pub fn new(digest: &Digest, exports: Vec<String>, imports: Vec<String>) -> WasmConfig {
        WasmConfig {
            created: chrono::Utc::now().to_rfc3339_opts(chrono::SecondsFormat::Secs, true),
            architecture: "wasm",
            os: "wasip2",
            layer_digests: vec![digest.to_string()],
            component: ComponentInfo { exports, imports },
        }
    }
}

/// A client for one reference's registry.
pub struct Registry {
    client: Client,
    auth: RegistryAuth,
    name: String,
}

/// Install ring as the process's TLS crypto provider, once. reqwest is
/// built with rustls but no provider of its own (ring is the one the rest
/// of kura builds), so any reqwest client in a process linking kura — this
/// crate's, or another's such as rmcp's HTTP client — needs it first. A
/// second install is refused; either way one is installed.
pub fn install_crypto_provider() {
    let _ = rustls::crypto::ring::default_provider().install_default();
}

impl Registry {
    pub fn new(reference: &OciRef, options: &Options) -> Registry {
        install_crypto_provider();
        let protocol = if options.plain_http || reference.is_loopback() {
            ClientProtocol::HttpsExcept(vec![reference.registry.clone()])
        } else {
            ClientProtocol::Https
        };
        let client = Client::new(ClientConfig {
            protocol,
            // One component and its signature: nothing to do in parallel.
            max_concurrent_download: 1,
            max_concurrent_upload: 1,
            connect_timeout: Some(std::time::Duration::from_secs(10)),
            read_timeout: Some(std::time::Duration::from_secs(60)),
            user_agent: concat!("kura/", env!("CARGO_PKG_VERSION")),
            ..ClientConfig::default()
        });
        let auth = match &options.basic {
            Some((user, password)) => RegistryAuth::Basic(user.clone(), password.clone()),
            None => RegistryAuth::Anonymous,
        };
        Registry {
            client,
            auth,
            name: reference.to_string(),
        }
    }

    fn registry_error(&self, message: impl std::fmt::Display) -> Error {
        Error::Registry {
            reference: self.name.clone(),
            message: message.to_string(),
        }
    }

    fn content_error(&self, message: impl Into<String>) -> Error {
        Error::Content {
            reference: self.name.clone(),
            message: message.into(),
        }
    }

    /// Pull the component `reference` names and the signature beside it.
    pub async fn pull(&self, reference: &OciRef) -> Result<Pulled, Error> {
        let image = to_reference(reference);
        let (raw, said) = self
            .client
            .pull_manifest_raw(&image, &self.auth, &[MANIFEST_MEDIA_TYPE])
            .await
            .map_err(|e| self.registry_error(e))?;
        if raw.len() > MAX_MANIFEST_BYTES {
            return Err(self.content_error(format!(
                "its manifest is {} bytes, over the {MAX_MANIFEST_BYTES} a manifest may have",
                raw.len()
            )));
        }
        let manifest = Digest::of(&raw);
        let expected = match &reference.digest {
            Some(d) => Some(d.clone()),
            // The digest the registry said it has: checked too.
            None => Digest::parse(&said).ok(),
        };
        if let Some(want) = expected
            && want != manifest
        {
            return Err(self.content_error(format!(
                "the registry sent a manifest whose digest is {manifest}, not {want}"
            )));
        }
        let parsed: OciImageManifest = serde_json::from_slice(&raw)
            .map_err(|e| self.content_error(format!("its manifest cannot be read: {e}")))?;
        let layer = self.wasm_layer(&parsed)?;
        let digest = Digest::parse(&layer.digest).map_err(|e| self.content_error(e))?;
        let bytes = self
            .blob(&image, layer, MAX_COMPONENT_BYTES, "the component")
            .await?;
        let signature = self.pull_signature(reference, &manifest).await?;
        Ok(Pulled {
            manifest,
            manifest_bytes: raw.to_vec(),
            digest,
            bytes,
            signature,
        })
    }

    /// The manifest's one `application/wasm` layer.
    fn wasm_layer<'m>(&self, m: &'m OciImageManifest) -> Result<&'m OciDescriptor, Error> {
        match m.layers.as_slice() {
            [one] if one.media_type == WASM_LAYER_MEDIA_TYPE => Ok(one),
            layers => Err(self.content_error(format!(
                "not a Wasm component artifact: expected one {WASM_LAYER_MEDIA_TYPE} layer, found [{}] (config {})",
                layers
                    .iter()
                    .map(|l| l.media_type.as_str())
                    .collect::<Vec<_>>()
                    .join(", "),
                m.config.media_type
            ))),
        }
    }

    /// A blob, bounded by its descriptor's size (itself bounded by `max`)
    /// and checked against its digest.
    async fn blob(
        &self,
        image: &Reference,
        layer: &OciDescriptor,
        max: u64,
        what: &str,
    ) -> Result<Vec<u8>, Error> {
        let size = u64::try_from(layer.size).unwrap_or(u64::MAX);
        if size > max {
            return Err(
                self.content_error(format!("{what} is {size} bytes, over the {max} kura takes"))
            );
        }
        let mut stream = self
            .client
            .pull_blob_stream(image, layer)
            .await
            .map_err(|e| self.registry_error(e))?;
        let mut bytes = Vec::with_capacity(size as usize);
        while let Some(chunk) = stream.next().await {
            let chunk = chunk.map_err(|e| self.registry_error(e))?;
            if bytes.len() as u64 + chunk.len() as u64 > size {
                return Err(self.content_error(format!(
                    "the registry sent more of {what} than the {size} bytes its manifest declares"
                )));
            }
            bytes.extend_from_slice(&chunk);
        }
        let found = Digest::of(&bytes);
        if found.as_str() != layer.digest || bytes.len() as u64 != size {
            return Err(self.content_error(format!(
                "the registry sent {what} as {} bytes hashing to {found}, not the {size} bytes of {}",
                bytes.len(),
                layer.digest
            )));
        }
        Ok(bytes)
    }

    /// The signature artifact tagged for `manifest`, when there is one.
    async fn pull_signature(
        &self,
        reference: &OciRef,
        manifest: &Digest,
    ) -> Result<Option<Vec<u8>>, Error> {
        let image = signature_reference(reference, manifest);
        let raw = match self
            .client
            .pull_manifest_raw(&image, &self.auth, &[MANIFEST_MEDIA_TYPE])
            .await
        {
            Ok((raw, _)) => raw,
            Err(e) if is_not_found(&e) => return Ok(None),
            Err(e) => return Err(self.registry_error(e)),
        };
        let parsed: OciImageManifest = serde_json::from_slice(&raw).map_err(|e| {
            self.content_error(format!("its signature's manifest cannot be read: {e}"))
        })?;
        let about = parsed.subject.as_ref().map(|s| s.digest.as_str());
        if about != Some(manifest.as_str()) {
            return Err(self.content_error(format!(
                "the signature tagged for {manifest} is about {}",
                about.unwrap_or("nothing")
            )));
        }
        let Some(layer) = parsed
            .layers
            .iter()
            .find(|l| l.media_type == SIGNATURE_MEDIA_TYPE)
        else {
            return Ok(None);
        };
        self.blob(&image, layer, MAX_SIGNATURE_BYTES, "the signature")
            .await
            .map(Some)
    }

    /// Push a component (and its signature) under `reference`'s tag, its
    /// layer titled with its file name (what OCI tools name it on a pull);
    /// returns the manifest's digest.
    pub async fn push(
        &self,
        reference: &OciRef,
        bytes: &[u8],
        title: &str,
        config: &WasmConfig,
        signature: Option<&[u8]>,
    ) -> Result<Digest, Error> {
        if reference.digest.is_some() || reference.tag.is_none() {
            return Err(self.content_error("a push needs a tag and no digest"));
        }
        let image = to_reference(reference);
        let config = serde_json::to_vec(config).map_err(|e| self.content_error(e.to_string()))?;
        let config = self
            .put_blob(&image, &config, WASM_CONFIG_MEDIA_TYPE)
            .await?;
        let mut layer = self.put_blob(&image, bytes, WASM_LAYER_MEDIA_TYPE).await?;
        layer.annotations = Some(
            [(
                "org.opencontainers.image.title".to_owned(),
                title.to_owned(),
            )]
            .into(),
        );
        let manifest = OciImageManifest {
            schema_version: 2,
            media_type: Some(MANIFEST_MEDIA_TYPE.into()),
            config,
            layers: vec![layer],
            subject: None,
            artifact_type: None,
            annotations: None,
        };
        let (digest, size) = self.put_manifest(&image, &manifest).await?;
        if let Some(sig) = signature {
            let empty = self.put_blob(&image, b"{}", EMPTY_MEDIA_TYPE).await?;
            let layer = self.put_blob(&image, sig, SIGNATURE_MEDIA_TYPE).await?;
            let signed = OciImageManifest {
                schema_version: 2,
                media_type: Some(MANIFEST_MEDIA_TYPE.into()),
                config: empty,
                layers: vec![layer],
                subject: Some(OciDescriptor {
                    media_type: MANIFEST_MEDIA_TYPE.into(),
                    digest: digest.to_string(),
                    size,
                    urls: None,
                    annotations: None,
                    artifact_type: None,
                }),
                artifact_type: Some(SIGNATURE_MEDIA_TYPE.into()),
                annotations: None,
            };
            self.put_manifest(&signature_reference(reference, &digest), &signed)
                .await?;
        }
        Ok(digest)
    }

    async fn put_blob(
        &self,
        image: &Reference,
        bytes: &[u8],
        media_type: &str,
    ) -> Result<OciDescriptor, Error> {
        let digest = Digest::of(bytes);
        self.client
            .store_auth_if_needed(image.resolve_registry(), &self.auth)
            .await;
        let exists = self
            .client
            .blob_exists(image, digest.as_str())
            .await
            .unwrap_or(false);
        if !exists {
            self.client
                .push_blob(image, bytes.to_vec(), digest.as_str())
                .await
                .map_err(|e| self.registry_error(e))?;
        }
        Ok(OciDescriptor {
            media_type: media_type.into(),
            digest: digest.to_string(),
            size: bytes.len() as i64,
            urls: None,
            annotations: None,
            artifact_type: None,
        })
    }

    async fn put_manifest(
        &self,
        image: &Reference,
        manifest: &OciImageManifest,
    ) -> Result<(Digest, i64), Error> {
        let raw = serde_json::to_vec(manifest).map_err(|e| self.content_error(e.to_string()))?;
        self.client
            .push_manifest_raw(
                image,
                raw.clone(),
                http::HeaderValue::from_static(MANIFEST_MEDIA_TYPE),
            )
            .await
            .map_err(|e| self.registry_error(e))?;
        Ok((Digest::of(&raw), raw.len() as i64))
    }
}

fn to_reference(r: &OciRef) -> Reference {
    match (&r.tag, &r.digest) {
        (Some(t), Some(d)) => Reference::with_tag_and_digest(
            r.registry.clone(),
            r.repository.clone(),
            t.clone(),
            d.to_string(),
        ),
        (None, Some(d)) => {
            Reference::with_digest(r.registry.clone(), r.repository.clone(), d.to_string())
        }
        (t, None) => Reference::with_tag(
            r.registry.clone(),
            r.repository.clone(),
            t.clone().unwrap_or_else(|| "latest".into()),
        ),
    }
}

/// Where the signature of `manifest` is tagged.
fn signature_reference(r: &OciRef, manifest: &Digest) -> Reference {
    Reference::with_tag(
        r.registry.clone(),
        r.repository.clone(),
        format!("sha256-{}.minisig", manifest.hex()),
    )
}

fn is_not_found(e: &oci_client::errors::OciDistributionError) -> bool {
    use oci_client::errors::OciDistributionError as E;
    match e {
        E::ImageManifestNotFoundError(_) => true,
        E::RegistryError { envelope, .. } => envelope
            .errors
            .iter()
            .any(|e| format!("{:?}", e.code).contains("Unknown")),
        E::ServerError { code, .. } => *code == 404,
        _ => false,
    }
}
