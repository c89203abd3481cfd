//! OAuth 2.1 on `kura serve --http --oauth FILE`, against a real
//! authorization server: panva's certified OpenID provider (npm
//! `oidc-provider`) on loopback, issuing RS256 JWT access tokens by the
//! client-credentials grant for the resource asked for. kura is the
//! resource server: it publishes where tokens come from, accepts the
//! issuer's tokens for itself under their scope's profile, and refuses
//! every other with the status and challenge RFC 6750 / RFC 9728 name.

use std::io::{BufRead, BufReader, Read, Write};
use std::net::TcpStream;
use std::process::{Child, Command, Stdio};

use kura_tests::{Fixture, http_url, toolchain};
use serde_json::{Value, json};

use super::http::{INITIALIZE, kura, listed_and_called, send, stop};

const CLIENT: &str = "kura-test:kura-test-secret-0123456789";
const SCOPES: &str = "kura:all kura:read kura:other";

/// A private RSA key as a JWK, made by Node's crypto.
fn key(kid: &str) -> Value {
    let script = "const {generateKeyPairSync} = require('crypto');\
        const {privateKey} = generateKeyPairSync('rsa', {modulusLength: 2048});\
        const j = privateKey.export({format: 'jwk'});\
        j.kid = process.argv[1]; j.alg = 'RS256'; j.use = 'sig';\
        console.log(JSON.stringify(j));";
    let out = Command::new(toolchain::node_22())
        .args(["-e", script, kid])
        .output()
        .unwrap();
    assert!(
        out.status.success(),
        "{}",
        String::from_utf8_lossy(&out.stderr)
    );
    serde_json::from_slice(&out.stdout).unwrap()
}

/// The authorization server, stopped when dropped.
struct Issuer {
    child: Child,
    url: String,
}

impl Issuer {
    /// Serving `keys` (the first signs) on `port` (0: any), its JWT
    /// tokens living `ttl` seconds.
    fn start(keys: &[&Value], port: u16, ttl: u64) -> Issuer {
        Self::start_as(keys, port, ttl, "jwt")
    }

    /// [`Issuer::start`] with tokens of `format` (`jwt`, `opaque`).
    fn start_as(keys: &[&Value], port: u16, ttl: u64, format: &str) -> Issuer {
        let script = kura_tests::workspace().join("tests/node/oauth-provider.mjs");
        let mut child = Command::new(toolchain::node_22())
            .arg(script)
            .env("OIDC_PROVIDER", toolchain::oidc_provider())
            .env("PORT", port.to_string())
            .env(
                "KEYS",
                Value::from(keys.iter().map(|k| (*k).clone()).collect::<Vec<_>>()).to_string(),
            )
            .env("SCOPES", SCOPES)
            .env("TTL", ttl.to_string())
            .env("FORMAT", format)
            .stdin(Stdio::null())
            .stdout(Stdio::piped())
            .stderr(Stdio::null())
            .spawn()
            .unwrap();
        let mut line = String::new();
        BufReader::new(child.stdout.take().unwrap())
            .read_line(&mut line)
            .unwrap();
        let url =
            serde_json::from_str::<Value>(&line).unwrap_or_else(|_| panic!("{line}"))["issuer"]
                .as_str()
                .unwrap()
                .to_owned();
        Issuer { child, url }
    }

    fn port(&self) -> u16 {
        self.url.rsplit(':').next().unwrap().parse().unwrap()
    }

    /// An access token from the client-credentials grant.
    fn token(&self, scope: &str, resource: &str) -> String {
        let addr = self.url.trim_start_matches("http://");
        let body = format!("grant_type=client_credentials&scope={scope}&resource={resource}");
        let mut s = TcpStream::connect(addr).unwrap();
        use base64::Engine;
        let basic = base64::engine::general_purpose::STANDARD.encode(CLIENT);
        write!(
            s,
            "POST /token HTTP/1.1\r\nHost: {addr}\r\nAuthorization: Basic {basic}\r\n\
             Content-Type: application/x-www-form-urlencoded\r\nContent-Length: {}\r\n\
             Connection: close\r\n\r\n{body}",
            body.len()
        )
        .unwrap();
        let mut out = String::new();
        s.read_to_string(&mut out).unwrap();
        let json = out.split("\r\n\r\n").nth(1).unwrap_or_default();
        serde_json::from_str::<Value>(json).unwrap_or_else(|_| panic!("{out}"))["access_token"]
            .as_str()
            .unwrap_or_else(|| panic!("{out}"))
            .to_owned()
    }
}

impl Drop for Issuer {
    fn drop(&mut self) {
        let _ = self.child.kill();
        let _ = self.child.wait();
    }
}

/// A loopback port nobody listens on now.
fn free_port() -> u16 {
    std::net::TcpListener::bind("127.0.0.1:0")
        .unwrap()
        .local_addr()
        .unwrap()
        .port()
}

/// kura trusting `issuer`, as the resource `http://127.0.0.1:PORT/mcp`;
/// the child, its `host:port` and its resource URI.
fn serve(f: &Fixture, issuer: &str) -> (Child, String, String) {
    serve_with(f, issuer, "")
}

/// [`serve`] with `extra` lines in the OAuth file.
fn serve_with(f: &Fixture, issuer: &str, extra: &str) -> (Child, String, String) {
    let port = free_port();
    let resource = format!("http://127.0.0.1:{port}/mcp");
    let file = f.dir.path().join("oauth.toml");
    std::fs::write(
        &file,
        format!(
            "issuer = \"{issuer}\"\nresource = \"{resource}\"\nleeway_secs = 0\n{extra}\n\
             [[scope]]\nname = \"kura:all\"\n\
             [[scope]]\nname = \"kura:read\"\nprofile = \"read_only\"\n"
        ),
    )
    .unwrap();
    let addr = format!("127.0.0.1:{port}");
    let mut child = kura(
        f,
        &["--http", &addr, "--oauth", &file.display().to_string()],
    )
    .env("KURA_TEST_OAUTH_SECRET", "kura-rs-secret-0123456789")
    .stderr(Stdio::piped())
    .spawn()
    .unwrap();
    http_url(&mut child);
    (child, addr, resource)
}

/// The status line's code and the `WWW-Authenticate` header of an
/// `initialize` sent with `token`.
fn refused(addr: &str, token: Option<&str>) -> (u16, String) {
    let bearer = token.map(|t| format!("Bearer {t}"));
    let headers: Vec<(&str, &str)> = bearer
        .iter()
        .map(|b| ("Authorization", b.as_str()))
        .collect();
    let response = send(addr, "POST", "/mcp", &headers, INITIALIZE);
    let code = response[9..12].parse().unwrap();
    let challenge = response
        .lines()
        .find_map(|l| l.strip_prefix("www-authenticate: "))
        .unwrap_or_default()
        .to_owned();
    (code, challenge)
}

#[test]
fn the_issuers_tokens_pass_under_their_scope_and_every_other_is_refused() {
    let f = Fixture::new();
    let k1 = key("k1");
    let issuer = Issuer::start(&[&k1], 0, 300);
    let (child, addr, resource) = serve(&f, &issuer.url);

    // Without a token: 401, and where to learn how to get one.
    let (code, challenge) = refused(&addr, None);
    assert_eq!(code, 401);
    let metadata_url = format!("http://{addr}/.well-known/oauth-protected-resource/mcp");
    assert!(
        challenge.contains(&format!("resource_metadata=\"{metadata_url}\"")),
        "{challenge}"
    );
    let doc = send(
        &addr,
        "GET",
        "/.well-known/oauth-protected-resource/mcp",
        &[],
        "",
    );
    let doc: Value = serde_json::from_str(doc.split("\r\n\r\n").nth(1).unwrap()).unwrap();
    assert_eq!(doc["resource"], resource);
    assert_eq!(doc["authorization_servers"], json!([issuer.url]));

    // kura:read is served read-only, kura:all everything.
    let reader = issuer.token("kura:read", &resource);
    let (tools, created) = listed_and_called(
        &addr,
        &reader,
        "vault_create",
        json!({"path": "inbox/oauth.md", "content": "x"}),
    );
    assert!(tools.iter().any(|t| t == "vault_read"), "{tools:?}");
    assert!(!tools.iter().any(|t| t == "vault_create"), "{tools:?}");
    assert!(created.get("error").is_some(), "{created}");
    let writer = issuer.token("kura:all", &resource);
    let (tools, created) = listed_and_called(
        &addr,
        &writer,
        "vault_create",
        json!({"path": "inbox/oauth.md", "content": "x"}),
    );
    assert!(tools.iter().any(|t| t == "vault_create"), "{tools:?}");
    assert_eq!(created["result"]["isError"], false, "{created}");

    // A good token with no scope kura grants: 403 insufficient_scope.
    let (code, challenge) = refused(&addr, Some(&issuer.token("kura:other", &resource)));
    assert_eq!(code, 403);
    assert!(
        challenge.contains("error=\"insufficient_scope\""),
        "{challenge}"
    );
    assert!(
        challenge.contains("scope=\"kura:all kura:read\""),
        "{challenge}"
    );

    // A token the issuer minted for another resource (RFC 8707).
    let elsewhere = issuer.token("kura:all", "http://127.0.0.1:1/other");
    let (code, challenge) = refused(&addr, Some(&elsewhere));
    assert_eq!(code, 401);
    assert!(challenge.contains("error=\"invalid_token\""), "{challenge}");
    assert!(challenge.contains("another resource"), "{challenge}");

    // A signature tampered with.
    // (a character well inside the signature: the last one's low bits
    // are padding a decoder may ignore)
    let at = writer.len() - 10;
    let flipped = if &writer[at..=at] == "A" { "B" } else { "A" };
    let forged = format!("{}{flipped}{}", &writer[..at], &writer[at + 1..]);
    let (code, challenge) = refused(&addr, Some(&forged));
    assert_eq!(code, 401, "{challenge}");

    // Another issuer holding the same key: its tokens name itself.
    let other = Issuer::start(&[&k1], 0, 300);
    let (code, challenge) = refused(&addr, Some(&other.token("kura:all", &resource)));
    assert_eq!(code, 401);
    assert!(challenge.contains("another issuer"), "{challenge}");

    // The issuer rotates to a new key (the old one still published) and
    // its tokens now live one second: the new key is fetched, and a token
    // past its `exp` is refused (no leeway here).
    let port = issuer.port();
    drop(issuer);
    let k2 = key("k2");
    let issuer = Issuer::start(&[&k2, &k1], port, 1);
    // kura fetches a key set again at most every few seconds: a token of
    // the new key (each one fresh, they live a second) passes once it has.
    let fresh = within(20, || {
        let t = issuer.token("kura:all", &resource);
        (refused(&addr, Some(&t)).0 == 200).then_some(t)
    })
    .expect("a token signed by the new key is accepted");
    assert_eq!(
        refused(&addr, Some(&writer)).0,
        200,
        "the old key is still published"
    );
    let challenge = within(10, || {
        let (code, challenge) = refused(&addr, Some(&fresh));
        (code == 401).then_some(challenge)
    })
    .expect("the token is refused once past its exp");
    assert!(challenge.contains("expired"), "{challenge}");
    stop(child);
}

/// The first `Some` of `f`, tried every 100 ms for at most `secs` seconds.
fn within<T>(secs: u64, mut f: impl FnMut() -> Option<T>) -> Option<T> {
    let deadline = std::time::Instant::now() + std::time::Duration::from_secs(secs);
    loop {
        if let Some(t) = f() {
            return Some(t);
        }
        if std::time::Instant::now() >= deadline {
            return None;
        }
        std::thread::sleep(std::time::Duration::from_millis(100));
    }
}

/// The official Python SDK's OAuth client (client credentials) meets
/// kura's 401, finds the issuer through the Protected Resource Metadata,
/// gets a token for kura's resource and calls a tool with it.
#[test]
fn the_python_sdk_gets_a_token_through_the_metadata_and_calls_a_tool() {
    let f = Fixture::new();
    let issuer = Issuer::start(&[&key("k1")], 0, 300);
    let (child, addr, resource) = serve(&f, &issuer.url);
    let python = toolchain::python_sdk(toolchain::SDK_2X);
    let (id, secret) = CLIENT.split_once(':').unwrap();
    let out = Command::new(python)
        .arg(kura_tests::workspace().join("tests/python/oauth_client.py"))
        .args([
            &format!("http://{addr}/mcp"),
            &issuer.url,
            id,
            secret,
            "kura:read",
        ])
        .output()
        .unwrap();
    stop(child);
    let stdout = String::from_utf8_lossy(&out.stdout);
    assert!(
        out.status.success(),
        "{stdout}\n{}",
        String::from_utf8_lossy(&out.stderr)
    );
    let seen: Value = serde_json::from_str(stdout.trim()).unwrap();
    assert_eq!(seen["aud"], resource, "{seen}");
    // The SDK asks for the scopes kura's challenge names (the MCP scope
    // selection rule), and the issuer grants them all: the table's first,
    // kura:all, decides.
    assert_eq!(seen["scope"], "kura:all kura:read", "{seen}");
    assert_eq!(seen["is_error"], false, "{seen}");
    let tools: Vec<&str> = seen["tools"]
        .as_array()
        .unwrap()
        .iter()
        .filter_map(Value::as_str)
        .collect();
    assert!(tools.contains(&"vault_create"), "{seen}");
}

/// Opaque access tokens: kura asks the issuer's introspection endpoint
/// (found in its metadata) with its own client credentials, and serves an
/// active token for itself under its scope's profile.
#[test]
fn an_opaque_token_is_checked_at_the_issuers_introspection_endpoint() {
    let f = Fixture::new();
    let issuer = Issuer::start_as(&[&key("k1")], 0, 300, "opaque");
    let (child, addr, resource) = serve_with(
        &f,
        &issuer.url,
        "[introspection]\nclient_id = \"kura-rs\"\nclient_secret_env = \"KURA_TEST_OAUTH_SECRET\"",
    );
    let reader = issuer.token("kura:read", &resource);
    assert_eq!(reader.split('.').count(), 1, "opaque: {reader}");
    let (tools, _) = listed_and_called(&addr, &reader, "vault_ls", json!({}));
    assert!(tools.iter().any(|t| t == "vault_read"), "{tools:?}");
    assert!(!tools.iter().any(|t| t == "vault_create"), "{tools:?}");
    let (code, challenge) = refused(
        &addr,
        Some(&issuer.token("kura:all", "http://127.0.0.1:1/other")),
    );
    assert_eq!(code, 401);
    assert!(challenge.contains("another resource"), "{challenge}");
    let (code, challenge) = refused(&addr, Some("made-up-opaque-token-0123456789"));
    assert_eq!(code, 401);
    assert!(challenge.contains("not active"), "{challenge}");
    assert_eq!(
        refused(&addr, Some(&issuer.token("kura:other", &resource))).0,
        403
    );
    stop(child);
}
