//! `kura serve --http`: who may connect. Tokens (401 without), `Host` and
//! `Origin` checks against DNS rebinding, `/healthz` without a token, and
//! the start-up rules for authentication. The protocol itself over HTTP is
//! exercised by the official Python SDK (python_sdk.rs).

use std::io::{Read, Write};
use std::net::TcpStream;
use std::process::{Child, Command, Stdio};

use kura_tests::{Fixture, http_url, kura_bin};
use serde_json::{Value, json};

const TOKEN: &str = "http-test-token-0123456789";
/// A token whose holder may only read.
const READER: &str = "http-reader-token-0123456789";
/// A token whose holder sees only the manual tools.
const MANUALS: &str = "http-manuals-token-0123456789";

pub(super) fn kura(f: &Fixture, extra: &[&str]) -> Command {
    let mut cmd = Command::new(kura_bin());
    cmd.args(f.args(extra));
    for var in kura::config::env_names() {
        cmd.env_remove(var);
    }
    cmd.env_remove("KURA_HTTP_TOKENS")
        .env("HOME", f.dir.path())
        .stdin(Stdio::null())
        .stdout(Stdio::null());
    cmd
}

/// A kura serving the fixture's vault over HTTP with one token, and the
/// `host:port` it listens on.
fn serve(f: &Fixture) -> (Child, String) {
    serve_with(f, &[])
}

/// [`serve`] with `extra` arguments.
fn serve_with(f: &Fixture, extra: &[&str]) -> (Child, String) {
    let tokens = f.dir.path().join("tokens");
    std::fs::write(
        &tokens,
        format!("# the team\n{TOKEN}\n{READER} read_only\n{MANUALS} tools=manual\n"),
    )
    .unwrap();
    let tokens = tokens.display().to_string();
    let mut args = vec!["--http", "127.0.0.1:0", "--token-file", &tokens];
    args.extend_from_slice(extra);
    let mut child = kura(f, &args).stderr(Stdio::piped()).spawn().unwrap();
    let url = http_url(&mut child);
    let addr = url
        .trim_start_matches("http://")
        .trim_end_matches("/mcp")
        .to_owned();
    (child, addr)
}

/// One HTTP/1.1 request to `addr` (a `Host` of its own unless `headers`
/// give one), read to its end: the whole response.
pub(super) fn send(
    addr: &str,
    method: &str,
    path: &str,
    headers: &[(&str, &str)],
    body: &str,
) -> String {
    let mut s = TcpStream::connect(addr).unwrap();
    let mut req = format!(
        "{method} {path} HTTP/1.1\r\nContent-Type: application/json\r\n\
         Accept: application/json, text/event-stream\r\nContent-Length: {}\r\nConnection: close\r\n",
        body.len()
    );
    if !headers.iter().any(|(k, _)| k.eq_ignore_ascii_case("host")) {
        req.push_str(&format!("Host: {addr}\r\n"));
    }
    for (k, v) in headers {
        req.push_str(&format!("{k}: {v}\r\n"));
    }
    req.push_str("\r\n");
    req.push_str(body);
    s.write_all(req.as_bytes()).unwrap();
    let mut out = String::new();
    s.read_to_string(&mut out).unwrap();
    out
}

/// A POST to `/mcp`.
fn exchange(addr: &str, headers: &[(&str, &str)], body: &str) -> String {
    send(addr, "POST", "/mcp", headers, body)
}

/// The JSON-RPC result in an SSE or JSON response body.
fn result_of(response: &str) -> Value {
    response
        .lines()
        .filter_map(|l| l.strip_prefix("data: ").or(l.strip_prefix('{').map(|_| l)))
        .filter_map(|d| serde_json::from_str::<Value>(d).ok())
        .find(|v| v.get("result").is_some() || v.get("error").is_some())
        .unwrap_or_else(|| panic!("no JSON-RPC answer in {response}"))
}

/// The status code of one HTTP/1.1 request to `addr`.
pub(super) fn status(
    addr: &str,
    method: &str,
    path: &str,
    headers: &[(&str, &str)],
    body: &str,
) -> u16 {
    send(addr, method, path, headers, body)[9..12]
        .parse()
        .unwrap()
}

pub(super) const INITIALIZE: &str = r#"{"jsonrpc":"2.0","id":1,"method":"initialize","params":{"protocolVersion":"2025-06-18","capabilities":{},"clientInfo":{"name":"raw","version":"1"}}}"#;

pub(super) fn stop(mut child: Child) {
    unsafe { libc::kill(child.id() as i32, libc::SIGTERM) };
    assert!(child.wait().unwrap().success());
}

#[test]
fn only_a_listed_bearer_token_reaches_the_tools_and_healthz_needs_none() {
    let f = Fixture::new();
    let (child, addr) = serve(&f);
    let bearer = format!("Bearer {TOKEN}");
    assert_eq!(status(&addr, "GET", "/healthz", &[], ""), 200);
    assert_eq!(status(&addr, "POST", "/mcp", &[], INITIALIZE), 401);
    let wrong = format!("Bearer {TOKEN}x");
    assert_eq!(
        status(
            &addr,
            "POST",
            "/mcp",
            &[("Authorization", &wrong)],
            INITIALIZE
        ),
        401
    );
    assert_eq!(
        status(
            &addr,
            "POST",
            "/mcp",
            &[("Authorization", &bearer)],
            INITIALIZE
        ),
        200
    );
    stop(child);
}

#[test]
fn a_foreign_host_or_origin_is_refused_against_dns_rebinding() {
    let f = Fixture::new();
    let (child, addr) = serve(&f);
    let bearer = format!("Bearer {TOKEN}");
    let auth = ("Authorization", bearer.as_str());
    assert_eq!(
        status(
            &addr,
            "POST",
            "/mcp",
            &[auth, ("Host", "attacker.example")],
            INITIALIZE
        ),
        403
    );
    assert_eq!(
        status(
            &addr,
            "POST",
            "/mcp",
            &[auth, ("Origin", "http://attacker.example")],
            INITIALIZE
        ),
        403
    );
    assert_eq!(
        status(
            &addr,
            "POST",
            "/mcp",
            &[auth, ("Host", "localhost")],
            INITIALIZE
        ),
        200
    );
    stop(child);
}

/// An initialized MCP session of `token`'s holder: the headers its
/// requests carry.
pub(super) fn open_session(addr: &str, token: &str) -> Vec<(&'static str, String)> {
    let bearer = format!("Bearer {token}");
    let init = exchange(addr, &[("Authorization", &bearer)], INITIALIZE);
    let session = init
        .lines()
        .find_map(|l| l.strip_prefix("mcp-session-id: "))
        .expect("a session id")
        .trim()
        .to_owned();
    let headers = vec![
        ("Authorization", bearer),
        ("Mcp-Session-Id", session),
        ("Mcp-Protocol-Version", "2025-06-18".to_owned()),
    ];
    request(
        addr,
        &headers,
        json!({"jsonrpc": "2.0", "method": "notifications/initialized"}),
    );
    headers
}

/// Send one JSON-RPC message in a session; its answer, if any.
pub(super) fn request(
    addr: &str,
    headers: &[(&'static str, String)],
    message: Value,
) -> Option<Value> {
    let headers: Vec<(&str, &str)> = headers.iter().map(|(k, v)| (*k, v.as_str())).collect();
    let response = exchange(addr, &headers, &message.to_string());
    message.get("id").map(|_| result_of(&response))
}

/// The tool names `token` sees, and the answer to a vault_create it sends.
fn as_holder_of(addr: &str, token: &str) -> (Vec<String>, Value) {
    listed_and_called(
        addr,
        token,
        "vault_create",
        json!({"path": "inbox/by-token.md", "content": "x"}),
    )
}

#[test]
fn sixteen_clients_appending_to_one_note_at_once_lose_and_duplicate_nothing() {
    let f = Fixture::new();
    f.write("inbox/shared.md", "# shared\n");
    let (child, addr) = serve(&f);
    let sessions: Vec<_> = (0..16).map(|_| open_session(&addr, TOKEN)).collect();
    let start = std::sync::Arc::new(std::sync::Barrier::new(16));
    let clients: Vec<_> = sessions
        .into_iter()
        .enumerate()
        .map(|(i, session)| {
            let (addr, start) = (addr.clone(), start.clone());
            std::thread::spawn(move || {
                start.wait();
                request(
                    &addr,
                    &session,
                    json!({"jsonrpc": "2.0", "id": 7, "method": "tools/call", "params": {
                        "name": "vault_write",
                        "arguments": {"path": "inbox/shared.md", "mode": "append",
                                      "content": format!("client {i:02}\n")}}}),
                )
                .unwrap()
            })
        })
        .collect();
    for c in clients {
        let answer = c.join().unwrap();
        assert_eq!(answer["result"]["isError"], false, "{answer}");
    }
    stop(child);
    let text = f.read("inbox/shared.md");
    for i in 0..16 {
        assert_eq!(
            text.matches(&format!("client {i:02}\n")).count(),
            1,
            "client {i}:\n{text}"
        );
    }
    assert_eq!(text.lines().count(), 17, "{text}");
}

#[test]
fn a_read_only_token_sees_and_calls_no_tool_that_writes() {
    let f = Fixture::new();
    let (child, addr) = serve(&f);
    let (all, created) = as_holder_of(&addr, TOKEN);
    assert!(all.iter().any(|n| n == "vault_create"), "{all:?}");
    assert!(created.get("result").is_some(), "{created}");
    let (reader, refused) = as_holder_of(&addr, READER);
    assert!(reader.iter().any(|n| n == "vault_read"), "{reader:?}");
    for write in ["vault_create", "vault_write", "vault_replace"] {
        assert!(
            !reader.iter().any(|n| n == write),
            "{write} listed: {reader:?}"
        );
    }
    assert!(
        refused["error"]["message"]
            .as_str()
            .is_some_and(|m| m.contains("unknown tool")),
        "{refused}"
    );
    stop(child);
    // Only the full token's note was written.
    assert!(f.vault().join("inbox/by-token.md").exists());
}

/// The `instructions` of the `initialize` answer `token`'s holder gets.
fn instructions_of(addr: &str, token: &str) -> String {
    let bearer = format!("Bearer {token}");
    let init = result_of(&exchange(addr, &[("Authorization", &bearer)], INITIALIZE));
    init["result"]["instructions"]
        .as_str()
        .unwrap_or_else(|| panic!("{init}"))
        .to_owned()
}

#[test]
fn a_tokens_instructions_describe_only_what_it_may_call() {
    let f = Fixture::new();
    let manuals = f.manuals().display().to_string();
    let (child, addr) = serve_with(&f, &["--manuals-root", &manuals]);
    let all = instructions_of(&addr, TOKEN);
    assert!(all.contains("manuals") && all.contains("vault"), "{all}");
    assert!(!all.contains("Read-only"), "{all}");
    let reader = instructions_of(&addr, READER);
    assert!(
        reader.contains("Read-only: no tool that writes"),
        "{reader}"
    );
    assert!(!reader.contains("vault_create"), "{reader}");
    let manual = instructions_of(&addr, MANUALS);
    assert!(manual.contains("read-only manuals"), "{manual}");
    assert!(!manual.contains("vault"), "{manual}");
    stop(child);
}

#[test]
fn http_needs_tokens_and_no_auth_is_for_loopback_only() {
    let f = Fixture::new();
    let refused = |extra: &[&str]| {
        let out = kura(&f, extra).stderr(Stdio::piped()).output().unwrap();
        assert_eq!(out.status.code(), Some(2), "{extra:?} started");
        String::from_utf8_lossy(&out.stderr).into_owned()
    };
    assert!(refused(&["--http", "127.0.0.1:0"]).contains("--token-file"));
    assert!(refused(&["--http", "0.0.0.0:0", "--no-auth"]).contains("loopback"));
    let short = f.dir.path().join("short");
    std::fs::write(&short, "abc\n").unwrap();
    let short = short.display().to_string();
    assert!(refused(&["--http", "127.0.0.1:0", "--token-file", &short]).contains("at least 16"));
}

/// The session's standalone stream (where the server's own notifications
/// go), its response head read.
fn notifications_of(addr: &str, session: &[(&'static str, String)]) -> TcpStream {
    let mut stream = TcpStream::connect(addr).unwrap();
    let mut get = format!("GET /mcp HTTP/1.1\r\nHost: {addr}\r\nAccept: text/event-stream\r\n");
    for (k, v) in session {
        get.push_str(&format!("{k}: {v}\r\n"));
    }
    get.push_str("\r\n");
    stream.write_all(get.as_bytes()).unwrap();
    stream
        .set_read_timeout(Some(std::time::Duration::from_secs(3)))
        .unwrap();
    let mut head = String::new();
    let mut buf = [0u8; 1];
    while !head.ends_with("\r\n\r\n") {
        let n = stream.read(&mut buf).unwrap();
        assert_eq!(n, 1, "the stream closed: {head}");
        head.push(buf[0] as char);
    }
    assert!(head.starts_with("HTTP/1.1 200"), "{head}");
    stream
}

/// What `stream` carries until `needle` arrives or its read timeout passes
/// without a byte.
fn hear(stream: &mut TcpStream, needle: &str) -> String {
    let mut heard = String::new();
    let mut buf = [0u8; 4096];
    while !heard.contains(needle) {
        match stream.read(&mut buf) {
            Ok(n) if n > 0 => heard.push_str(&String::from_utf8_lossy(&buf[..n])),
            _ => break,
        }
    }
    heard
}

#[test]
fn an_http_session_hears_a_project_added_from_outside() {
    let f = Fixture::new();
    let vibe = f.vibe().display().to_string();
    let (child, addr) = serve_with(&f, &["--vibe-root", &vibe]);
    let session = open_session(&addr, TOKEN);
    // A search first: the index (and its file watcher) is up once it answers.
    request(
        &addr,
        &session,
        json!({"jsonrpc": "2.0", "id": 2, "method": "tools/call", "params": {
            "name": "search", "arguments": {"query": "task"}}}),
    )
    .unwrap();
    let mut stream = notifications_of(&addr, &session);
    let added = std::time::Instant::now();
    std::fs::create_dir_all(f.vibe().join("from-outside/tasks")).unwrap();
    std::fs::write(f.vibe().join("from-outside/tasks/001-a.md"), "# Task: A\n").unwrap();
    let heard = hear(&mut stream, "notifications/resources/list_changed");
    assert!(
        heard.contains("notifications/resources/list_changed"),
        "no list_changed after {:?}:\n{heard}",
        added.elapsed()
    );
    assert!(
        added.elapsed() < std::time::Duration::from_secs(1),
        "{:?}",
        added.elapsed()
    );
    stop(child);
}

#[tokio::test]
async fn sigterm_with_a_listen_open_ends_the_server_at_once() {
    use rmcp::ClientServiceExt;
    use rmcp::model::{ProtocolVersion, SubscriptionFilter};
    use rmcp::service::ClientLifecycleMode;
    use rmcp::transport::StreamableHttpClientTransport;
    use rmcp::transport::streamable_http_client::StreamableHttpClientTransportConfig;

    kura::registry::install_crypto_provider();
    let f = Fixture::new();
    let vibe = f.vibe().display().to_string();
    let (mut child, addr) = serve_with(&f, &["--vibe-root", &vibe]);
    let config = StreamableHttpClientTransportConfig::with_uri(format!("http://{addr}/mcp"))
        .auth_header(TOKEN);
    let mode = ClientLifecycleMode::Discover {
        preferred_versions: vec![ProtocolVersion::V_2026_07_28],
    };
    let client =
        ().serve_with_lifecycle(StreamableHttpClientTransport::from_config(config), mode)
            .await
            .unwrap();
    let filter = SubscriptionFilter::builder()
        .resources_list_changed()
        .build();
    let _sub = client.listen(filter).await.unwrap();

    // A listen lasts until its client cancels it; a shutdown ends it.
    let started = std::time::Instant::now();
    unsafe { libc::kill(child.id() as i32, libc::SIGTERM) };
    let status = tokio::task::spawn_blocking(move || child.wait().unwrap())
        .await
        .unwrap();
    let took = started.elapsed();
    assert!(status.success(), "kura --http ended with {status}");
    assert!(
        took < std::time::Duration::from_secs(1),
        "the server took {took:?} to exit"
    );
}

/// One JSON-RPC request in `session`: its `result`, or its `error`.
fn ask(addr: &str, session: &[(&'static str, String)], method: &str, params: Value) -> Value {
    let answer = request(
        addr,
        session,
        json!({"jsonrpc": "2.0", "id": 9, "method": method, "params": params}),
    )
    .unwrap();
    answer
        .get("result")
        .or(answer.get("error"))
        .cloned()
        .unwrap_or_else(|| panic!("{answer}"))
}

/// What `token`'s holder gets from every surface of the vibe domain, as
/// comparable facts.
fn vibe_surfaces(addr: &str, token: &str) -> Vec<(&'static str, Value)> {
    let bearer = format!("Bearer {token}");
    let init = result_of(&exchange(addr, &[("Authorization", &bearer)], INITIALIZE));
    let caps = &init["result"]["capabilities"];
    let s = open_session(addr, token);
    let count = |v: &Value, key: &str| json!(v[key].as_array().map_or(0, Vec::len));
    let complete = ask(
        addr,
        &s,
        "completion/complete",
        json!({"ref": {"type": "ref/prompt", "name": "project_briefing"},
               "argument": {"name": "project", "value": "vi"}}),
    );
    let template_complete = ask(
        addr,
        &s,
        "completion/complete",
        json!({"ref": {"type": "ref/resource", "uri": "vibe://projects/{name}"},
               "argument": {"name": "name", "value": ""}}),
    );
    vec![
        (
            "capabilities.resources",
            json!(caps.get("resources").is_some()),
        ),
        ("capabilities.prompts", json!(caps.get("prompts").is_some())),
        (
            "capabilities.completions",
            json!(caps.get("completions").is_some()),
        ),
        (
            "resources/list",
            count(&ask(addr, &s, "resources/list", json!({})), "resources"),
        ),
        (
            "resources/templates/list",
            count(
                &ask(addr, &s, "resources/templates/list", json!({})),
                "resourceTemplates",
            ),
        ),
        (
            "resources/read",
            json!(
                ask(
                    addr,
                    &s,
                    "resources/read",
                    json!({"uri": "vibe://projects/vibeMCP"})
                )
                .get("contents")
                .is_some()
            ),
        ),
        (
            "resources/subscribe",
            json!(
                ask(
                    addr,
                    &s,
                    "resources/subscribe",
                    json!({"uri": "vibe://projects"})
                )
                .get("code")
                .is_none()
            ),
        ),
        (
            "prompts/list",
            count(&ask(addr, &s, "prompts/list", json!({})), "prompts"),
        ),
        (
            "prompts/get",
            json!(
                ask(
                    addr,
                    &s,
                    "prompts/get",
                    json!({"name": "project_briefing", "arguments": {"project": "vibeMCP"}})
                )
                .get("messages")
                .is_some()
            ),
        ),
        (
            "completion/complete prompt",
            complete["completion"]["values"].clone(),
        ),
        (
            "completion/complete template",
            template_complete["completion"]["values"].clone(),
        ),
    ]
}

#[test]
fn a_token_without_the_vibe_domain_meets_it_on_no_surface() {
    let f = Fixture::new();
    let vibe = f.vibe().display().to_string();
    let manuals = f.manuals().display().to_string();
    let (child, addr) = serve_with(&f, &["--vibe-root", &vibe, "--manuals-root", &manuals]);
    let yes = |what: &'static str| (what, json!(true));
    let full = vibe_surfaces(&addr, TOKEN);
    assert_eq!(
        full,
        vec![
            yes("capabilities.resources"),
            yes("capabilities.prompts"),
            yes("capabilities.completions"),
            ("resources/list", json!(3)),
            ("resources/templates/list", json!(2)),
            yes("resources/read"),
            yes("resources/subscribe"),
            ("prompts/list", json!(2)),
            yes("prompts/get"),
            ("completion/complete prompt", json!(["vibeMCP"])),
            ("completion/complete template", json!(["vibeMCP", "webapp"])),
        ]
    );
    // A read-only holder still reads: resources and prompts are data.
    assert_eq!(vibe_surfaces(&addr, READER), full);
    let no = |what: &'static str| (what, json!(false));
    assert_eq!(
        vibe_surfaces(&addr, MANUALS),
        vec![
            no("capabilities.resources"),
            no("capabilities.prompts"),
            no("capabilities.completions"),
            ("resources/list", json!(0)),
            ("resources/templates/list", json!(0)),
            no("resources/read"),
            no("resources/subscribe"),
            ("prompts/list", json!(0)),
            no("prompts/get"),
            ("completion/complete prompt", json!([])),
            ("completion/complete template", json!([])),
        ]
    );

    // Notifications: both sessions listen, subscribed to the project list;
    // a project added from outside reaches the full token's only.
    let sessions = [open_session(&addr, TOKEN), open_session(&addr, MANUALS)];
    for s in &sessions {
        ask(
            &addr,
            s,
            "resources/subscribe",
            json!({"uri": "vibe://projects"}),
        );
    }
    let mut streams = sessions.map(|s| notifications_of(&addr, &s));
    let [full, manual] = &mut streams;
    std::fs::create_dir_all(f.vibe().join("from-outside/tasks")).unwrap();
    std::fs::write(f.vibe().join("from-outside/tasks/001-a.md"), "# Task: A\n").unwrap();
    let heard = hear(full, "notifications/resources/updated");
    assert!(heard.contains("list_changed"), "{heard}");
    assert!(heard.contains("notifications/resources/updated"), "{heard}");
    // Both sessions are told in one pass: what the other would have heard
    // would be on its stream by now.
    manual
        .set_read_timeout(Some(std::time::Duration::from_millis(500)))
        .unwrap();
    let unheard = hear(manual, "notifications/");
    assert!(!unheard.contains("notifications/"), "{unheard}");
    stop(child);
}

#[test]
fn kura_http_tokens_is_a_comma_separated_list() {
    let f = Fixture::new();
    let second = "http-second-token-0123456789";
    let mut child = kura(&f, &["--http", "127.0.0.1:0"])
        .env("KURA_HTTP_TOKENS", format!("{TOKEN}, {second}"))
        .stderr(Stdio::piped())
        .spawn()
        .unwrap();
    let addr = http_url(&mut child)
        .trim_start_matches("http://")
        .trim_end_matches("/mcp")
        .to_owned();
    let init = |token: &str| {
        let bearer = format!("Bearer {token}");
        status(
            &addr,
            "POST",
            "/mcp",
            &[("Authorization", &bearer)],
            INITIALIZE,
        )
    };
    assert_eq!(init(TOKEN), 200);
    assert_eq!(init(second), 200);
    assert_eq!(init(&format!("{TOKEN},{second}")), 401);
    stop(child);
}

#[test]
fn an_initialize_beyond_max_sessions_is_refused_until_one_ends() {
    let f = Fixture::new();
    let (child, addr) = serve_with(&f, &["--max-sessions", "2"]);
    let first = open_session(&addr, TOKEN);
    let _second = open_session(&addr, READER);
    let bearer = format!("Bearer {TOKEN}");
    let refused = exchange(&addr, &[("Authorization", &bearer)], INITIALIZE);
    assert!(refused.starts_with("HTTP/1.1 503"), "{refused}");
    assert!(
        refused.to_ascii_lowercase().contains("retry-after: 60"),
        "{refused}"
    );
    let error = result_of(&refused);
    assert_eq!(error["id"], 1, "{error}");
    assert_eq!(error["error"]["code"], -32000, "{error}");
    assert_eq!(error["error"]["data"]["max_sessions"], 2, "{error}");
    // A request inside an open session is not a new session.
    let listed = request(
        &addr,
        &first,
        json!({"jsonrpc": "2.0", "id": 2, "method": "tools/list"}),
    )
    .unwrap();
    assert!(listed["result"]["tools"].is_array(), "{listed}");
    // Once one ends, a new one is admitted.
    let headers: Vec<(&str, &str)> = first.iter().map(|(k, v)| (*k, v.as_str())).collect();
    assert_eq!(status(&addr, "DELETE", "/mcp", &headers, ""), 204);
    assert_eq!(
        status(
            &addr,
            "POST",
            "/mcp",
            &[("Authorization", &bearer)],
            INITIALIZE
        ),
        200
    );
    stop(child);
}

/// What `token`'s holder sees listed, and the answer to one call of `tool`.
pub(super) fn listed_and_called(
    addr: &str,
    token: &str,
    tool: &str,
    arguments: Value,
) -> (Vec<String>, Value) {
    let session = open_session(addr, token);
    let listed = request(
        addr,
        &session,
        json!({"jsonrpc": "2.0", "id": 2, "method": "tools/list"}),
    )
    .unwrap();
    let names = listed["result"]["tools"]
        .as_array()
        .unwrap()
        .iter()
        .map(|t| t["name"].as_str().unwrap().to_owned())
        .collect();
    let called = request(
        addr,
        &session,
        json!({"jsonrpc": "2.0", "id": 3, "method": "tools/call",
               "params": {"name": tool, "arguments": arguments}}),
    )
    .unwrap();
    (names, called)
}

#[test]
fn a_profile_reaches_the_vault_through_the_bridge_only_when_it_names_the_vault() {
    let f = Fixture::new();
    let tokens = f.dir.path().join("profiles");
    let holders = [
        ("bridge-no-vault-0123456789", "tools=manual,bridge"),
        ("bridge-and-vault-0123456789", "tools=manual,bridge,vault"),
        ("one-bridge-tool-0123456789", "tools=bridge_copy_file"),
        (
            "bridge-read-only-0123456789",
            "tools=manual,bridge,vault read_only",
        ),
        (
            "duplicates-0123456789",
            "tools=manual,manual,vault_read,vault_read",
        ),
    ];
    let text: String = holders.iter().map(|(t, p)| format!("{t} {p}\n")).collect();
    std::fs::write(&tokens, text).unwrap();
    let (manuals, tokens) = (
        f.manuals().display().to_string(),
        tokens.display().to_string(),
    );
    let mut child = kura(
        &f,
        &[
            "--manuals-root",
            &manuals,
            "--http",
            "127.0.0.1:0",
            "--token-file",
            &tokens,
        ],
    )
    .stderr(Stdio::piped())
    .spawn()
    .unwrap();
    let addr = http_url(&mut child)
        .trim_start_matches("http://")
        .trim_end_matches("/mcp")
        .to_owned();
    let copy = |to: &str| {
        json!({"from_path": "public/funding.json", "manual_id": "vue-docs-ja",
               "to_path": to, "mode": "overwrite"})
    };
    let bridge = |names: &[String]| -> Vec<String> {
        names
            .iter()
            .filter(|n| n.starts_with("bridge_"))
            .cloned()
            .collect()
    };
    let unknown = |answer: &Value| {
        answer["error"]["message"]
            .as_str()
            .is_some_and(|m| m.contains("unknown tool"))
    };
    // Manuals and the bridge, not the vault: the bridge would write into
    // it, so it is neither listed nor callable.
    let (names, answer) =
        listed_and_called(&addr, holders[0].0, "bridge_copy_file", copy("a.json"));
    assert!(bridge(&names).is_empty(), "{names:?}");
    assert!(names.iter().any(|n| n == "manual_find"), "{names:?}");
    assert!(unknown(&answer), "{answer}");
    // With the vault named too, both bridge tools, and the copy lands.
    let (names, answer) =
        listed_and_called(&addr, holders[1].0, "bridge_copy_file", copy("b.json"));
    assert_eq!(bridge(&names), ["bridge_copy_section", "bridge_copy_file"]);
    assert!(
        answer["result"]["structuredContent"]["written_bytes"].as_u64() > Some(0),
        "{answer}"
    );
    // A tool named by its name is granted as named, and nothing else.
    let (names, answer) =
        listed_and_called(&addr, holders[2].0, "bridge_copy_file", copy("c.json"));
    assert_eq!(names, ["bridge_copy_file"]);
    assert!(
        answer["result"]["structuredContent"]["written_bytes"].as_u64() > Some(0),
        "{answer}"
    );
    // Read-only: the bridge writes, so none of it.
    let (names, answer) =
        listed_and_called(&addr, holders[3].0, "bridge_copy_file", copy("d.json"));
    assert!(bridge(&names).is_empty(), "{names:?}");
    assert!(unknown(&answer), "{answer}");
    // Names given twice are listed once.
    let (names, answer) = listed_and_called(
        &addr,
        holders[4].0,
        "vault_read",
        json!({"path": "notes/welcome.md"}),
    );
    let mut unique = names.clone();
    unique.sort();
    unique.dedup();
    assert_eq!(unique.len(), names.len(), "{names:?}");
    assert!(names.iter().any(|n| n == "vault_read"), "{names:?}");
    assert!(!names.iter().any(|n| n == "vault_create"), "{names:?}");
    assert!(answer.get("result").is_some(), "{answer}");
    stop(child);
    let written: Vec<bool> = ["a", "b", "c", "d"]
        .iter()
        .map(|n| f.vault().join(format!("{n}.json")).exists())
        .collect();
    assert_eq!(written, [false, true, true, false]);
}

/// `kura serve --http` with this token file: it must refuse to start; its
/// error output.
fn refused_token_file(f: &Fixture, text: &str) -> String {
    let tokens = f.dir.path().join("odd-tokens");
    std::fs::write(&tokens, text).unwrap();
    let tokens = tokens.display().to_string();
    let child = kura(f, &["--http", "127.0.0.1:0", "--token-file", &tokens])
        .stderr(Stdio::piped())
        .spawn()
        .unwrap();
    let (status, err) = kura_tests::refusal(child);
    assert!(!status.success(), "{err}");
    err
}

#[test]
fn an_odd_token_file_is_refused_at_start_with_its_line() {
    let f = Fixture::new();
    let t = "odd-token-file-0123456789";
    for (text, said) in [
        (format!("{t} tools=\n"), "line 1: `tools=` names no tool"),
        (
            format!("# team\n{t} tools=,\n"),
            "line 2: `tools=,` names no tool",
        ),
        (
            format!("{t} tools=manual,nosuch\n"),
            "line 1: `nosuch` names no tool and no domain",
        ),
        (
            format!("{t} admin\n"),
            "line 1: `admin` is not `read_only` or `tools=...`",
        ),
        (
            format!("{t} tools=vault\n{t} tools=manual\n"),
            "line 2: the token of line 1 again",
        ),
        ("# nobody\n\n".to_owned(), "no token given"),
    ] {
        let err = refused_token_file(&f, &text);
        assert!(err.contains(said), "{text:?}: {err}");
    }
}
