//! The vibe domain's resources, prompts and progress notifications (seed
//! 002), and its path rules (docs/decisions.md): a sibling of VIBE_ROOT and anything
//! reached through a symbolic link leaving it are out of scope.

#![allow(clippy::disallowed_methods)] // tests build their fixtures with std::fs

use std::sync::{Arc, Mutex};
use std::time::{Duration, Instant};

use kura_tests::{Fixture, Kura, command};
use rmcp::model::{
    ArgumentInfo, CallToolRequestParams, CompleteRequestParams, GetPromptRequestParams,
    NumberOrString, ProgressNotificationParam, ProgressToken, ReadResourceRequestParams, Reference,
    RequestMetaObject,
};
use rmcp::service::{NotificationContext, RunningService};
use rmcp::transport::TokioChildProcess;
use rmcp::{ClientHandler, RoleClient, ServiceExt};
use serde_json::{Value, json};

async fn kura() -> (Fixture, Kura) {
    let f = Fixture::new();
    let k = f.start_vibe(&[]).await;
    (f, k)
}

async fn resource(k: &Kura, uri: &str) -> Result<Value, rmcp::ServiceError> {
    let r = k
        .client
        .read_resource(ReadResourceRequestParams::new(uri))
        .await?;
    let text = match &r.contents[0] {
        rmcp::model::ResourceContents::TextResourceContents {
            text, mime_type, ..
        } => {
            assert_eq!(mime_type.as_deref(), Some("application/json"));
            text.clone()
        }
        other => panic!("not text: {other:?}"),
    };
    Ok(serde_json::from_str(&text).unwrap())
}

async fn prompt(k: &Kura, name: &str, args: Value) -> Result<String, rmcp::ServiceError> {
    let r = k
        .client
        .get_prompt(
            GetPromptRequestParams::new(name).with_arguments(args.as_object().unwrap().clone()),
        )
        .await?;
    assert_eq!(r.messages.len(), 1);
    Ok(r.messages[0].content.as_text().unwrap().text.clone())
}

async fn complete(k: &Kura, reference: Reference, name: &str, typed: &str) -> Vec<String> {
    k.client
        .complete(CompleteRequestParams::new(
            reference,
            ArgumentInfo::new(name, typed),
        ))
        .await
        .unwrap()
        .completion
        .values
}

#[tokio::test]
async fn completions_offer_the_projects_and_folders_typed_so_far() {
    let (_f, k) = kura().await;
    let caps = k.client.peer_info().unwrap().capabilities.clone();
    assert!(caps.completions.is_some(), "completions are advertised");
    let project = || Reference::for_resource("vibe://projects/{name}");
    assert_eq!(
        complete(&k, project(), "name", "").await,
        ["vibeMCP", "webapp"]
    );
    assert_eq!(complete(&k, project(), "name", "WE").await, ["webapp"]);
    let prompt = Reference::for_prompt("session_start");
    assert_eq!(complete(&k, prompt, "project", "vib").await, ["vibeMCP"]);
    let document = Reference::for_resource("vibe://projects/{name}/{folder}/{file}");
    assert_eq!(
        complete(&k, document, "folder", "s").await,
        ["scratch", "sessions"]
    );
    let unknown = Reference::for_prompt("ghost_prompt");
    assert!(complete(&k, unknown, "project", "").await.is_empty());
    k.stop().await;
}

#[tokio::test]
async fn resources_list_the_projects_and_two_templates() {
    let (_f, k) = kura().await;
    let uris: Vec<String> = k
        .client
        .list_all_resources()
        .await
        .unwrap()
        .into_iter()
        .map(|r| r.uri.clone())
        .collect();
    assert_eq!(
        uris,
        [
            "vibe://projects",
            "vibe://projects/vibeMCP",
            "vibe://projects/webapp"
        ]
    );
    let templates: Vec<String> = k
        .client
        .list_all_resource_templates()
        .await
        .unwrap()
        .into_iter()
        .map(|t| t.uri_template.clone())
        .collect();
    assert_eq!(
        templates,
        [
            "vibe://projects/{name}",
            "vibe://projects/{name}/{folder}/{file}"
        ]
    );
    k.stop().await;
}

#[tokio::test]
async fn projects_resource_has_the_stats_of_002() {
    let (f, k) = kura().await;
    let v = resource(&k, "vibe://projects").await.unwrap();
    let p = &v["projects"][0];
    assert_eq!(p["name"], "vibeMCP");
    let path = f.vibe().canonicalize().unwrap().join("vibeMCP");
    assert_eq!(p["path"], path.display().to_string());
    assert_eq!(
        p["stats"],
        json!({"total_docs": 13, "open_tasks": 2, "pending_tasks": 1, "in_progress_tasks": 1,
               "done_tasks": 3, "blocked_tasks": 1, "last_session_date": "2025-02-09"})
    );
    assert_eq!(
        p["folders"],
        json!({"tasks": 6, "plans": 1, "sessions": 2, "reports": 1, "changelog": 1,
               "references": 1, "scratch": 1})
    );
    let updated = p["last_updated"].as_str().unwrap();
    assert!(updated.ends_with('Z') && updated.contains('T'), "{updated}");
    assert_eq!(v["projects"][1]["name"], "webapp");
    k.stop().await;
}

#[tokio::test]
async fn project_resource_lists_files_with_task_status() {
    let (_f, k) = kura().await;
    let v = resource(&k, "vibe://projects/vibeMCP").await.unwrap();
    assert_eq!(v["name"], "vibeMCP");
    let tasks = v["folders"]["tasks"].as_array().unwrap();
    assert_eq!(tasks.len(), 6);
    assert_eq!(
        tasks[3],
        json!({"filename": "004-definir-interfaz-mcp.md", "status": "in-progress",
               "updated": tasks[3]["updated"].clone()})
    );
    assert_eq!(tasks[0]["updated"], "2025-02-07", "front matter's updated");
    let plans = v["folders"]["plans"].as_array().unwrap();
    assert!(plans[0].get("status").is_none(), "status only for tasks");
    assert_eq!(plans[0]["filename"], "execution-plan.md");
    k.stop().await;
}

#[tokio::test]
async fn file_resource_has_metadata_and_content() {
    let (f, k) = kura().await;
    let v = resource(
        &k,
        "vibe://projects/vibeMCP/tasks/004-definir-interfaz-mcp.md",
    )
    .await
    .unwrap();
    assert_eq!(v["project"], "vibeMCP");
    assert_eq!(v["folder"], "tasks");
    assert_eq!(v["filename"], "004-definir-interfaz-mcp.md");
    assert_eq!(v["path"], "vibeMCP/tasks/004-definir-interfaz-mcp.md");
    assert_eq!(v["metadata"]["status"], "in-progress");
    assert_eq!(v["metadata"]["tags"], json!(["mcp", "design"]));
    let text = std::fs::read_to_string(f.vibe().join("vibeMCP/tasks/004-definir-interfaz-mcp.md"))
        .unwrap();
    assert_eq!(v["content"], text);
    // Percent-encoded names are decoded.
    let e = resource(&k, "vibe://projects/vibeMCP/references/vibe%2Dstructure.md").await;
    assert_eq!(e.unwrap()["filename"], "vibe-structure.md");
    k.stop().await;
}

#[tokio::test]
async fn unknown_resources_are_json_rpc_errors() {
    let (_f, k) = kura().await;
    for uri in [
        "vibe://projects/ghost",
        "vibe://projects/vibeMCP/tasks/999.md",
        "vibe://elsewhere",
        "vibe://projects/vibeMCP/tasks",
        "vibe://projects/..%2F..%2Foutside/x/canary.txt",
    ] {
        let err = resource(&k, uri).await.expect_err(uri);
        let text = format!("{err:?}");
        assert!(
            text.contains("-32002")
                || text.contains("-32602")
                || text.contains("ResourceNotFound")
                || text.contains("InvalidParams"),
            "{uri}: {text}"
        );
    }
    k.stop().await;
}

#[tokio::test]
async fn project_briefing_assembles_the_sections_of_002() {
    let (_f, k) = kura().await;
    let list = k.client.list_all_prompts().await.unwrap();
    let names: Vec<_> = list.iter().map(|p| p.name.as_str()).collect();
    assert_eq!(names, ["project_briefing", "session_start"]);
    let text = prompt(&k, "project_briefing", json!({"project": "vibeMCP"}))
        .await
        .unwrap();
    for needle in [
        "# Project Briefing: vibeMCP",
        "## Current Status",
        "- **Total documents:** 13",
        "- **Open tasks:** 2 (1 in-progress, 1 pending)",
        "## Active Tasks (in-progress)",
        "### 004 - Definir interfaz MCP (resources, tools, prompts)",
        "**Progress:** 3/7 steps completed",
        "## Blocked Tasks",
        "### 006 - Implementar indexador",
        "## Pending Tasks (next up)",
        "1. 005 - Crear un workspace de ejemplo",
        "## Recent Sessions",
        "### 2025-02-09\n- Diseñé el schema SQLite",
        "### 2025-02-08",
        "## Recent Decisions",
        "**Database choice:**",
        "Los nombres de tarea llevan número",
    ] {
        assert!(text.contains(needle), "missing {needle:?} in\n{text}");
    }
    assert!(
        text.find("### 2025-02-09").unwrap() < text.find("### 2025-02-08").unwrap(),
        "newest session first"
    );
    k.stop().await;
}

#[tokio::test]
async fn session_start_loads_the_focus_task() {
    let (_f, k) = kura().await;
    let text = prompt(
        &k,
        "session_start",
        json!({"project": "vibeMCP", "focus": "004"}),
    )
    .await
    .unwrap();
    for needle in [
        "# Session Start: vibeMCP",
        "Focus: Task 004 - Definir interfaz MCP",
        "## Task Details",
        "**Status:** in-progress",
        "**Objective:** Documentar la API completa",
        "4. [ ] Definir prompts",
        "## Related Files",
        "`docs/sqlite-schema.md`",
        "## Last Session (2025-02-09)",
        "## Suggested Actions",
        "Continue with the next open step: Definir prompts",
    ] {
        assert!(text.contains(needle), "missing {needle:?} in\n{text}");
    }
    let feature = prompt(
        &k,
        "session_start",
        json!({"project": "webapp", "focus": "rate limiting"}),
    )
    .await
    .unwrap();
    assert!(feature.contains("Focus: rate limiting"), "{feature}");
    assert!(
        feature.contains("`tasks/001-add-rate-limiting.md`"),
        "{feature}"
    );
    let plain = prompt(&k, "session_start", json!({"project": "webapp"}))
        .await
        .unwrap();
    assert!(
        plain.contains("Pick up the next pending task: 002 - Explain JWT refresh"),
        "{plain}"
    );
    let err = prompt(&k, "project_briefing", json!({"project": "ghost"})).await;
    assert!(err.is_err());
    let err = prompt(&k, "project_briefing", json!({})).await;
    assert!(err.is_err());
    // An unknown prompt is named as such, with or without arguments.
    for args in [json!({}), json!({"project": "webapp"})] {
        let err = prompt(&k, "ghost_prompt", args).await.unwrap_err();
        assert!(
            err.to_string().contains("no such prompt: ghost_prompt"),
            "{err}"
        );
    }
    let err = resource(&k, "vibe://elsewhere").await.unwrap_err();
    match err {
        rmcp::ServiceError::McpError(e) => {
            assert_eq!(e.code, rmcp::model::ErrorCode::RESOURCE_NOT_FOUND, "{e:?}")
        }
        other => panic!("{other}"),
    }
    k.stop().await;
}

/// (progress, total) of one notification.
type Seen = (f64, Option<f64>);

/// A client that records the progress notifications it receives, and when,
/// and the resource notifications (`list` for list_changed, else the URI).
#[derive(Clone, Default)]
struct Recorder {
    progress: Arc<Mutex<Vec<(Instant, Seen)>>>,
    resources: Arc<Mutex<Vec<(Instant, String)>>>,
}

impl Recorder {
    fn seen(&self) -> Vec<Seen> {
        self.progress
            .lock()
            .unwrap()
            .iter()
            .map(|(_, s)| *s)
            .collect()
    }

    /// The progress notifications that arrived after `t`.
    fn after(&self, t: Instant) -> Vec<Seen> {
        let seen = self.progress.lock().unwrap();
        seen.iter()
            .filter(|(at, _)| *at > t)
            .map(|(_, s)| *s)
            .collect()
    }

    /// Wait (up to `wait`) for a progress notification after `t`.
    async fn progress_after(&self, t: Instant, wait: Duration) {
        let deadline = Instant::now() + wait;
        while self.after(t).is_empty() {
            assert!(Instant::now() < deadline, "no progress within {wait:?}");
            tokio::time::sleep(Duration::from_millis(20)).await;
        }
    }

    /// The resource notifications since `t`, waiting up to `wait` for `want`.
    async fn resources_since(&self, t: Instant, want: &str, wait: Duration) -> Vec<String> {
        let deadline = Instant::now() + wait;
        loop {
            let got: Vec<String> = self
                .resources
                .lock()
                .unwrap()
                .iter()
                .filter(|(at, _)| *at >= t)
                .map(|(_, what)| what.clone())
                .collect();
            if got.iter().any(|g| g == want) || Instant::now() >= deadline {
                return got;
            }
            tokio::time::sleep(Duration::from_millis(20)).await;
        }
    }
}

impl ClientHandler for Recorder {
    async fn on_progress(
        &self,
        params: ProgressNotificationParam,
        _context: NotificationContext<RoleClient>,
    ) {
        let seen = (params.progress, params.total);
        self.progress.lock().unwrap().push((Instant::now(), seen));
    }

    async fn on_resource_list_changed(&self, _context: NotificationContext<RoleClient>) {
        let mut r = self.resources.lock().unwrap();
        r.push((Instant::now(), "list".into()));
    }

    async fn on_resource_updated(
        &self,
        params: rmcp::model::ResourceUpdatedNotificationParam,
        _context: NotificationContext<RoleClient>,
    ) {
        let mut r = self.resources.lock().unwrap();
        r.push((Instant::now(), params.uri));
    }
}

/// kura over the fixture's vibe workspace, with a recording client; kura's
/// log goes to `kura.log` in the fixture's folder.
async fn recording(f: &Fixture) -> (Recorder, RunningService<RoleClient, Recorder>) {
    let log = std::fs::File::create(f.dir.path().join("kura.log")).unwrap();
    let (transport, _) = TokioChildProcess::builder(command(&f.vibe_args(&[])))
        .stderr(log)
        .spawn()
        .unwrap();
    let recorder = Recorder::default();
    let client = recorder.clone().serve(transport).await.unwrap();
    (recorder, client)
}

#[tokio::test]
async fn reindex_sends_progress_notifications_for_a_progress_token() {
    let f = Fixture::new();
    let (recorder, client) = recording(&f).await;
    let mut params = CallToolRequestParams::new("reindex")
        .with_arguments(json!({"full": true}).as_object().unwrap().clone());
    let mut meta = RequestMetaObject::default();
    meta.set_progress_token(ProgressToken(NumberOrString::String("r1".into())));
    params.meta = Some(meta);
    let r = client.call_tool(params).await.unwrap();
    assert_ne!(r.is_error, Some(true));
    let seen = recorder.seen();
    assert!(seen.len() >= 2, "{seen:?}");
    assert!(
        seen.windows(2).all(|w| w[0].0 <= w[1].0),
        "increasing: {seen:?}"
    );
    assert_eq!(seen.last().unwrap(), &(20.0, Some(20.0)), "{seen:?}");
    // (rmcp's client puts a progress token on every request, so the case
    // without one is checked by the Python SDK suite.)
    let _ = client.cancel().await;
}

/// A successful tools/call of the client below.
async fn call_ok(client: &RunningService<RoleClient, Recorder>, tool: &str, args: Value) -> Value {
    let params = CallToolRequestParams::new(tool.to_owned())
        .with_arguments(args.as_object().unwrap().clone());
    let r = client.call_tool(params).await.unwrap();
    assert_ne!(r.is_error, Some(true), "{tool}: {:?}", r.structured_content);
    r.structured_content.unwrap()
}

#[tokio::test]
async fn a_cancelled_reindex_stops_at_once_and_leaves_a_correct_index() {
    const FILES: usize = 30_000;
    let f = Fixture::new();
    let big = f.vibe().join("big");
    for folder in ["tasks", "references"] {
        std::fs::create_dir_all(big.join(folder)).unwrap();
    }
    for i in 0..FILES {
        let folder = if i % 2 == 0 { "tasks" } else { "references" };
        std::fs::write(
            big.join(folder).join(format!("{i:05}-item.md")),
            format!("# Item {i}\n\nStatus: pending\n\nUnique marker{i} among common words.\n"),
        )
        .unwrap();
    }
    let (recorder, client) = recording(&f).await;
    // Returns once the start-up sync is done (it holds the index meanwhile).
    let first = call_ok(&client, "reindex", json!({})).await;
    let all = first["stats"]["scanned"].as_u64().unwrap();
    assert!(all as usize > FILES, "{first}");

    let params = CallToolRequestParams::new("reindex")
        .with_arguments(json!({"full": true}).as_object().unwrap().clone());
    let request =
        rmcp::model::ClientRequest::CallToolRequest(rmcp::model::CallToolRequest::new(params));
    let sent = Instant::now();
    let handle = client
        .peer()
        .send_cancellable_request(request, rmcp::service::PeerRequestOptions::no_options())
        .await
        .unwrap();
    // Cancelled once it is under way.
    recorder.progress_after(sent, Duration::from_secs(60)).await;
    handle.cancel(Some("test".into())).await.unwrap();
    kura_tests::wait_for_log(
        &f.dir.path().join("kura.log"),
        "was cancelled by the client",
        Duration::from_secs(60),
    );
    // It stopped before its end: no report ever said all files were done.
    let reports = recorder.after(sent);
    assert!(
        reports.iter().all(|(done, total)| Some(*done) < *total),
        "the cancelled reindex ran to its end: {reports:?}"
    );
    let found = call_ok(&client, "search", json!({"query": "marker12345"})).await;
    assert_eq!(found["total_matches"], 1, "{found}");

    // The next reindex sees every file once, and so does a search.
    let again = call_ok(&client, "reindex", json!({"full": true})).await;
    assert_eq!(again["stats"]["scanned"], all, "{again}");
    assert_eq!(again["stats"]["deleted"], 0, "{again}");
    for q in ["marker0", "marker29999", "marker12345"] {
        let hit = call_ok(&client, "search", json!({"query": q})).await;
        assert_eq!(hit["total_matches"], 1, "{q}: {hit}");
    }
    let _ = client.cancel().await;
}

#[tokio::test]
async fn calls_past_the_limit_wait_their_turn_and_one_cancelled_meanwhile_never_runs() {
    const FILES: usize = 10_000;
    let f = Fixture::new();
    let big = f.vibe().join("big").join("references");
    std::fs::create_dir_all(&big).unwrap();
    for i in 0..FILES {
        std::fs::write(
            big.join(format!("{i:05}.md")),
            format!("# Item {i}\n\nCommon words.\n"),
        )
        .unwrap();
    }
    let args = f.vibe_args(&["--set", "max_concurrent_calls=1"]);
    let (transport, _) = TokioChildProcess::builder(command(&args))
        .stderr(std::process::Stdio::null())
        .spawn()
        .unwrap();
    let recorder = Recorder::default();
    let client = recorder.clone().serve(transport).await.unwrap();
    call_ok(&client, "reindex", json!({})).await;
    let send = |tool: &str, args: Value| {
        let params = CallToolRequestParams::new(tool.to_owned())
            .with_arguments(args.as_object().unwrap().clone());
        let request =
            rmcp::model::ClientRequest::CallToolRequest(rmcp::model::CallToolRequest::new(params));
        client
            .peer()
            .send_cancellable_request(request, rmcp::service::PeerRequestOptions::no_options())
    };
    // The one turn: a full reindex of the 10,000 files.
    let sent = Instant::now();
    let long = send("reindex", json!({"full": true})).await.unwrap();
    // It has the turn once it reports progress.
    recorder.progress_after(sent, Duration::from_secs(60)).await;
    // Queued behind it: a write, cancelled before its turn, and a read.
    let write = send(
        "create_task",
        json!({"project": "webapp", "title": "queued-and-cancelled", "objective": "o",
               "steps": ["s"], "acceptance_criteria": ["a"]}),
    )
    .await
    .unwrap();
    let read = send("list_tasks", json!({"project": "webapp"}))
        .await
        .unwrap();
    // A resource read takes a turn too: it reads files as a tool does.
    let resource = client
        .peer()
        .send_cancellable_request(
            rmcp::model::ClientRequest::ReadResourceRequest(rmcp::model::ReadResourceRequest::new(
                ReadResourceRequestParams::new("vibe://projects/webapp"),
            )),
            rmcp::service::PeerRequestOptions::no_options(),
        )
        .await
        .unwrap();
    let queued = Instant::now();
    let resource = tokio::spawn(async move {
        let r = resource.await_response().await;
        (Instant::now(), r)
    });
    // The cancel follows the write on the same stream: the server has the
    // write queued when it hears of it.
    write.cancel(Some("test".into())).await.unwrap();
    let read = tokio::spawn(async move {
        let r = read.await_response().await;
        (Instant::now(), r)
    });
    let long = long.await_response().await.unwrap();
    let long_done = Instant::now();
    let rmcp::model::ServerResult::CallToolResult(long) = long else {
        panic!("{long:?}")
    };
    assert_ne!(long.is_error, Some(true), "{long:?}");
    let (read_done, read) = read.await.unwrap();
    assert!(read.is_ok(), "{read:?}");
    // The two responses come in order on one stream but are picked up by
    // two tasks, so their instants may swap by microseconds; a read that
    // had not waited for the turn would end most of a reindex earlier.
    const SKEW: Duration = Duration::from_millis(50);
    assert!(
        long_done - queued > 2 * SKEW,
        "the reindex went on long enough after the read was queued to tell waiting from not: {:?}",
        long_done - queued
    );
    assert!(
        read_done + SKEW >= long_done,
        "the read waited for the one turn: it ended {:?} before the reindex",
        long_done - read_done
    );
    let (resource_done, resource) = resource.await.unwrap();
    assert!(resource.is_ok(), "{resource:?}");
    assert!(
        resource_done + SKEW >= long_done,
        "the resource read waited for the one turn: it ended {:?} before the reindex",
        long_done - resource_done
    );
    // The cancelled write never ran.
    let tasks = call_ok(&client, "list_tasks", json!({"project": "webapp"})).await;
    assert!(
        !tasks.to_string().contains("queued-and-cancelled"),
        "{tasks}"
    );
    let _ = client.cancel().await;
}

/// create_task in webapp.
async fn new_task(client: &RunningService<RoleClient, Recorder>, title: &str) {
    let args = json!({"project": "webapp", "title": title, "objective": "o", "steps": ["s"],
                      "acceptance_criteria": ["a"]});
    call_ok(client, "create_task", args).await;
}

// resources/subscribe is what clients that start with `initialize` speak
// (rmcp marks it legacy next to protocol 2026-07-28's subscriptions/listen).
#[allow(deprecated)]
#[tokio::test]
async fn a_project_added_from_outside_is_announced_within_a_second() {
    let f = Fixture::new();
    let (recorder, client) = recording(&f).await;
    let caps = client
        .peer_info()
        .unwrap()
        .capabilities
        .resources
        .clone()
        .unwrap();
    assert_eq!(
        (caps.list_changed, caps.subscribe),
        (Some(true), Some(true))
    );
    // Returns once the start-up sync is done: the watcher is running.
    call_ok(&client, "reindex", json!({})).await;
    let subscribe = |uri: &str| client.subscribe(rmcp::model::SubscribeRequestParams::new(uri));
    subscribe("vibe://projects/webapp").await.unwrap();
    subscribe("vibe://projects/webapp/tasks/001-add-rate-limiting.md")
        .await
        .unwrap();
    assert!(subscribe("vibe://elsewhere").await.is_err());

    let t = Instant::now();
    std::fs::create_dir_all(f.vibe().join("newproj/tasks")).unwrap();
    std::fs::write(f.vibe().join("newproj/tasks/001-a.md"), "# Task: a\n").unwrap();
    let got = recorder
        .resources_since(t, "list", Duration::from_secs(1))
        .await;
    assert!(got.contains(&"list".to_owned()), "within a second: {got:?}");
    assert!(
        !got.iter().any(|g| g.contains("webapp")),
        "webapp is untouched: {got:?}"
    );
    let listed = client.list_all_resources().await.unwrap();
    assert!(listed.iter().any(|r| r.uri == "vibe://projects/newproj"));

    // A write through the server updates its project, not a sibling file;
    // one burst is one notification.
    let t = Instant::now();
    new_task(&client, "Watch me").await;
    let project = "vibe://projects/webapp";
    let got = recorder
        .resources_since(t, project, Duration::from_secs(2))
        .await;
    assert_eq!(got.iter().filter(|g| *g == project).count(), 1, "{got:?}");
    assert!(
        !got.iter().any(|g| g.ends_with("001-add-rate-limiting.md")),
        "{got:?}"
    );
    assert!(!got.contains(&"list".to_owned()), "{got:?}");

    // Unsubscribed, it hears nothing more of that project.
    client
        .unsubscribe(rmcp::model::UnsubscribeRequestParams::new(project))
        .await
        .unwrap();
    let t = Instant::now();
    new_task(&client, "Quiet").await;
    let got = recorder
        .resources_since(t, project, Duration::from_millis(600))
        .await;
    assert!(got.is_empty(), "{got:?}");
    let _ = client.cancel().await;
}

#[tokio::test]
async fn a_listening_client_of_protocol_2026_07_28_hears_the_same_changes() {
    use rmcp::model::{ProtocolVersion, ServerNotification, SubscriptionFilter};
    let f = Fixture::new();
    let mode = rmcp::service::ClientLifecycleMode::Discover {
        preferred_versions: vec![ProtocolVersion::V_2026_07_28],
    };
    let k = Kura::start(f.vibe_args(&[]), mode).await;
    // Returns once the start-up sync is done: the watcher is running.
    k.call("reindex", json!({})).await.ok();
    let project = "vibe://projects/webapp";
    let filter = SubscriptionFilter::builder()
        .resources_list_changed()
        .resource_subscription(project)
        .resource_subscription("vibe://elsewhere")
        .build();
    let mut sub = k.client.listen(filter).await.unwrap();
    let accepted = sub.acknowledged().clone();
    assert_eq!(accepted.resources_list_changed, Some(true));
    assert_eq!(
        accepted.resource_subscriptions,
        Some(vec![project.to_owned()])
    );

    std::fs::create_dir_all(f.vibe().join("newproj/tasks")).unwrap();
    std::fs::write(f.vibe().join("newproj/tasks/001-a.md"), "# Task: a\n").unwrap();
    let next = tokio::time::timeout(Duration::from_secs(1), sub.next()).await;
    let got = next.expect("within a second").unwrap().unwrap();
    assert!(
        matches!(got, ServerNotification::ResourceListChangedNotification(_)),
        "{got:?}"
    );
    std::fs::write(
        f.vibe().join("webapp/tasks/001-add-rate-limiting.md"),
        "# Task: x\n",
    )
    .unwrap();
    let next = tokio::time::timeout(Duration::from_secs(2), sub.next()).await;
    match next.expect("within two seconds").unwrap().unwrap() {
        ServerNotification::ResourceUpdatedNotification(n) => assert_eq!(n.params.uri, project),
        other => panic!("{other:?}"),
    }
    k.stop().await;
}

#[tokio::test]
async fn a_client_closing_its_input_with_a_listen_open_ends_the_server_at_once() {
    use rmcp::model::{ProtocolVersion, SubscriptionFilter};
    let f = Fixture::new();
    let mode = rmcp::service::ClientLifecycleMode::Discover {
        preferred_versions: vec![ProtocolVersion::V_2026_07_28],
    };
    let k = Kura::start(f.vibe_args(&[]), mode).await;
    let filter = SubscriptionFilter::builder()
        .resources_list_changed()
        .build();
    let _sub = k.client.listen(filter).await.unwrap();
    // rmcp's client closes the server's stdin, waits 3 s for it to exit,
    // then sends SIGTERM: a listen that outlived the input held it there.
    let started = Instant::now();
    k.stop().await;
    let took = started.elapsed();
    assert!(
        took < Duration::from_secs(1),
        "the server took {took:?} to exit"
    );
}

#[tokio::test]
async fn sibling_of_vibe_root_is_out_of_scope() {
    // `~/.vibe2` beside `~/.vibe`: a prefix check on the string would let it in.
    let f = Fixture::new();
    let sibling = f.dir.path().join("vibe2");
    std::fs::create_dir_all(sibling.join("p/tasks")).unwrap();
    std::fs::write(
        sibling.join("p/tasks/001-x.md"),
        "# Task: secret\n\nStatus: pending\n",
    )
    .unwrap();
    let k = f.start_vibe(&[]).await;
    for args in [
        json!({"project": "../vibe2/p", "folder": "tasks", "filename": "001-x.md"}),
        json!({"project": "..", "folder": "tasks", "filename": "001-x.md"}),
        json!({"project": "vibe2", "folder": "tasks", "filename": "001-x.md"}),
    ] {
        let r = k.call("read_doc", args.clone()).await;
        assert!(
            matches!(r.code(), "INVALID_PATH" | "PROJECT_NOT_FOUND"),
            "{args}: {}",
            r.body
        );
        assert!(!r.text.contains("secret"));
    }
    let s = k.call("search", json!({"query": "secret"})).await;
    assert_eq!(s.ok()["total_matches"], 0);
    k.stop().await;
}

#[tokio::test]
async fn symlink_escape_out_of_vibe_root_is_refused() {
    let f = Fixture::new();
    let outside = f.outside();
    // A project that is a link to the outside, a folder link, a file link.
    std::os::unix::fs::symlink(&outside, f.vibe().join("linked")).unwrap();
    std::os::unix::fs::symlink(&outside, f.vibe().join("webapp/reports")).unwrap();
    std::os::unix::fs::symlink(
        outside.join("canary.txt"),
        f.vibe().join("webapp/tasks/009-leak.md"),
    )
    .unwrap();
    let k = f.start_vibe(&[]).await;
    let leaks = [
        (
            "read_doc",
            json!({"project": "linked", "folder": "tasks", "filename": "canary.txt"}),
        ),
        (
            "read_doc",
            json!({"project": "webapp", "folder": "reports", "filename": "canary.txt"}),
        ),
        (
            "read_doc",
            json!({"project": "webapp", "folder": "tasks", "filename": "009-leak.md"}),
        ),
        (
            "create_doc",
            json!({"project": "webapp", "folder": "reports", "filename": "pwned.md", "content": "x"}),
        ),
        (
            "update_doc",
            json!({"project": "webapp", "folder": "tasks", "filename": "009-leak.md", "content": "x"}),
        ),
        (
            "update_task_status",
            json!({"project": "webapp", "task": "009", "status": "done"}),
        ),
        ("create_plan", json!({"project": "linked", "content": "x"})),
        ("log_session", json!({"project": "linked", "content": "x"})),
    ];
    for (tool, args) in leaks {
        let r = k.call(tool, args.clone()).await;
        assert!(
            matches!(
                r.code(),
                "INVALID_PATH" | "PROJECT_NOT_FOUND" | "FILE_NOT_FOUND"
            ),
            "{tool} {args}: {}",
            r.body
        );
        assert!(!r.text.contains("CANARY"), "{tool} leaked");
    }
    let s = k.call("search", json!({"query": "canary secret"})).await;
    assert_eq!(s.ok()["total_matches"], 0, "links are not indexed");
    let projects = resource(&k, "vibe://projects").await.unwrap();
    let names: Vec<_> = projects["projects"]
        .as_array()
        .unwrap()
        .iter()
        .map(|p| p["name"].clone())
        .collect();
    assert_eq!(
        names,
        [json!("vibeMCP"), json!("webapp")],
        "a linked project is not listed"
    );
    assert!(resource(&k, "vibe://projects/linked").await.is_err());
    f.assert_canary_untouched();
    k.stop().await;
}

#[tokio::test]
async fn all_four_domains_serve_every_tool_3_resources_and_2_prompts() {
    let f = Fixture::new();
    let manuals = f.manuals().display().to_string();
    let k = f.start_vibe(&["--manuals-root", &manuals]).await;
    let tools = k.tools().await;
    let names: Vec<&str> = tools.iter().map(|t| t.name.as_ref()).collect();
    assert_eq!(names, kura::tools::names());
    let fixed = k.client.list_all_resources().await.unwrap();
    let templates = k.client.list_all_resource_templates().await.unwrap();
    assert_eq!(fixed[0].uri, "vibe://projects");
    assert_eq!(1 + templates.len(), 3, "vibe://projects and two templates");
    assert_eq!(k.client.list_all_prompts().await.unwrap().len(), 2);
    let caps = k.client.peer_info().unwrap().capabilities.clone();
    assert!(caps.resources.is_some() && caps.prompts.is_some());
    k.stop().await;
    // Without a vibe root: neither capability is announced.
    let k = f.start().await;
    let caps = k.client.peer_info().unwrap().capabilities.clone();
    assert!(caps.resources.is_none() && caps.prompts.is_none());
    k.stop().await;
}

#[tokio::test]
async fn a_configured_tools_profile_without_vibe_hides_its_resources_and_prompts() {
    let f = Fixture::new();
    let manuals = f.manuals().display().to_string();
    let k = Kura::start(
        f.vibe_args(&["--manuals-root", &manuals, "--tools", "manual"]),
        rmcp::service::ClientLifecycleMode::Initialize,
    )
    .await;
    let caps = k.client.peer_info().unwrap().capabilities.clone();
    assert!(
        caps.resources.is_none() && caps.prompts.is_none(),
        "{caps:?}"
    );
    assert!(k.client.list_all_resources().await.unwrap().is_empty());
    assert!(
        k.client
            .list_all_resource_templates()
            .await
            .unwrap()
            .is_empty()
    );
    assert!(k.client.list_all_prompts().await.unwrap().is_empty());
    assert!(resource(&k, "vibe://projects").await.is_err());
    assert!(
        prompt(&k, "project_briefing", json!({"project": "vibeMCP"}))
            .await
            .is_err()
    );
    let project = Reference::for_resource("vibe://projects/{name}");
    assert!(complete(&k, project, "name", "").await.is_empty());
    k.stop().await;
}
