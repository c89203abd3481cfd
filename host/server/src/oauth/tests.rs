use std::collections::HashMap;
use std::sync::atomic::{AtomicUsize, Ordering};
use std::sync::{Arc, Mutex};

use base64::Engine;
use base64::engine::general_purpose::URL_SAFE_NO_PAD as B64;
use jsonwebtoken::{EncodingKey, Header};
use ring::signature::{Ed25519KeyPair, KeyPair};

use std::time::{Duration, Instant};

use jsonwebtoken::Algorithm;
use reqwest::Url;
use serde_json::{Value, json};

use super::fetch::{AgedAnswer, Answer, Fetch, max_age};
use super::introspection::ASKS_PER_WINDOW;
use super::keys::{KEYS_AT_MOST, KEYS_FOR, REFETCH_EVERY, keys_lifetime};
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
    fn post_form(&self, url: &Url, form: &[(&str, &str)], id: &str, secret: &str) -> Answer<'_> {
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
        config("[introspection]\nclient_id = \"kura\"\nclient_secret_env = \"KURA_TEST_SECRET\"\n"),
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
