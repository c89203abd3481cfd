//! `kura demo` and `kura serve --demo`: the bundled demo vault, manuals and
//! vibe workspace (embedded at build time from `fixtures/demo/vault`,
//! `fixtures/manuals` and `fixtures/demo/vibe`) copied to a temporary folder,
//! toured by a real MCP client over stdio.

use std::path::{Path, PathBuf};

use serde_json::{Value, json};

use crate::client::Session;
use crate::config::Config;

include!(concat!(env!("OUT_DIR"), "/demo_files.rs"));

/// A temporary copy of the demo data, removed when dropped.
pub struct DemoData {
    dir: tempfile::TempDir,
}

impl DemoData {
    pub fn create() -> std::io::Result<DemoData> {
        let dir = tempfile::Builder::new().prefix("kura-demo-").tempdir()?;
        crate::fs::materialize(&dir.path().join("vault"), DEMO_FILES)?;
        crate::fs::materialize(&dir.path().join("manuals"), DEMO_MANUALS)?;
        crate::fs::materialize(&dir.path().join("vibe"), DEMO_VIBE)?;
        Ok(DemoData { dir })
    }

    pub fn manuals(&self) -> PathBuf {
        self.dir.path().join("manuals")
    }

    pub fn vibe(&self) -> PathBuf {
        self.dir.path().join("vibe")
    }

    pub fn vault(&self) -> PathBuf {
        self.dir.path().join("vault")
    }

    /// Leave the folder on disk (for `serve --demo` in a child process).
    pub fn path(&self) -> &Path {
        self.dir.path()
    }
}

impl DemoData {
    /// `config` with the demo's roots (other roots are dropped).
    pub fn configure(&self, mut config: Config) -> Config {
        config.vault_root = Some(self.vault());
        config.manuals_root = Some(self.manuals());
        config.vibe_root = Some(self.vibe());
        config
    }

    /// `plan` for a process serving the demo: the copy is kura's own
    /// (read-write whole, manuals included, so that it can be removed at
    /// exit), and its folder may be removed from its parent.
    pub fn sandbox(&self, mut plan: crate::fs::sandbox::Plan) -> crate::fs::sandbox::Plan {
        plan.write.push(self.path().to_path_buf());
        plan.remove_dir
            .extend(self.path().parent().map(Path::to_path_buf));
        plan
    }
}

/// A client's side of the tour: the session, and the number of the
/// last exchange printed.
struct Tour {
    session: Session,
    n: usize,
    /// The sentence encoder's model was found and given to the server.
    model: bool,
}

impl Tour {
    /// Print the next exchange's number, what it shows and the call.
    fn announce(&mut self, what: &str, call: &str) {
        self.n += 1;
        println!("{}. {what}", self.n);
        println!("   → {call}");
    }

    /// One numbered exchange: print the call and the (shortened) answer.
    async fn step(&mut self, what: &str, tool: &str, args: Value) -> anyhow::Result<Value> {
        self.step_view(what, tool, args, |v| v.clone()).await
    }

    /// [`Tour::step`], printing `view` of the answer.
    async fn step_view(
        &mut self,
        what: &str,
        tool: &str,
        args: Value,
        view: fn(&Value) -> Value,
    ) -> anyhow::Result<Value> {
        self.announce(what, &format!("{tool} {}", serde_json::to_string(&args)?));
        let result = self.session.call(tool, args).await?;
        let body = result.structured_content.clone().unwrap_or(Value::Null);
        let mark = if result.is_error == Some(true) {
            "← error"
        } else {
            "←"
        };
        let text = show(&view(&body)).replace('\n', "\n     ");
        println!("   {mark} {text}\n");
        Ok(body)
    }
}

fn show(value: &Value) -> String {
    let mut text = serde_json::to_string_pretty(value).unwrap_or_default();
    if text.len() > 1400 {
        let cut = (0..=1400)
            .rev()
            .find(|i| text.is_char_boundary(*i))
            .unwrap_or(0);
        text.truncate(cut);
        text.push_str("\n  …");
    }
    text
}

/// The tour: the exchanges a client would have, printed readably.
pub async fn run() -> anyhow::Result<()> {
    let data = DemoData::create()?;
    let mut tour = start(&data).await?;
    vault_tour(&mut tour).await?;
    history_tour(&mut tour, &data).await?;
    graph_tour(&mut tour).await?;
    tasks_tour(&mut tour).await?;
    manual_tour(&mut tour).await?;
    meaning_tour(&mut tour).await?;
    evidence_tour(&mut tour).await?;
    vibe_tour(&mut tour).await?;
    tour.session.close().await?;
    println!("done. `kura serve --demo` serves the same data to any MCP client.");
    Ok(())
}

/// The sentence encoder's model, if `kura models install` put it in the
/// default state folder: copied into the demo's, so that the server uses it.
fn copy_model(state: &Path) -> bool {
    let Some(from) = Config::default().state_dir() else {
        return false;
    };
    let dir = from.join(crate::embed::store::DIR);
    let files = ["MODEL", "sp.model", "weights.npz", "LICENSE"];
    let read: Vec<(String, Vec<u8>)> = files
        .iter()
        .filter_map(|f| {
            crate::fs::read_operator_file(&dir.join(f))
                .ok()
                .map(|b| (format!("{}/{f}", crate::embed::store::DIR), b))
        })
        .collect();
    if read.len() != files.len() {
        return false;
    }
    let refs: Vec<(&str, &[u8])> = read
        .iter()
        .map(|(n, b)| (n.as_str(), b.as_slice()))
        .collect();
    crate::fs::materialize(state, &refs).is_ok()
}

/// Start `kura serve` over stdio on the demo data; say what it offers.
async fn start(data: &DemoData) -> anyhow::Result<Tour> {
    let exe = std::env::current_exe()?;
    let state = data.path().join("state");
    let empty_config = data.path().join("empty.toml");
    crate::fs::materialize(data.path(), &[("empty.toml", b"")])?;
    let model = copy_model(&state);
    let args = vec![
        "--config".to_owned(),
        empty_config.display().to_string(),
        "--vault-root".to_owned(),
        data.vault().display().to_string(),
        "--manuals-root".to_owned(),
        data.manuals().display().to_string(),
        "--vibe-root".to_owned(),
        data.vibe().display().to_string(),
        "--state-dir".to_owned(),
        state.display().to_string(),
    ];
    println!(
        "kura demo: temporary copies of the demo vault at {}, of a manual at {} and of a vibe workspace at {}",
        data.vault().display(),
        data.manuals().display(),
        data.vibe().display()
    );
    println!("starting `kura serve` over stdio and talking MCP to it.\n");
    let session = Session::spawn(&exe, &args).await?;
    if let Some(info) = session
        .client
        .peer_info()
        .and_then(|i| i.server_info.clone())
    {
        println!("initialize → server {} {}\n", info.name, info.version);
    }
    let tools = session.client.list_all_tools().await?;
    let names: Vec<_> = tools.iter().map(|t| t.name.to_string()).collect();
    println!("tools/list → {}\n", names.join(", "));
    Ok(Tour {
        session,
        n: 0,
        model,
    })
}

/// With the sentence encoder: a question in English over the Japanese
/// manual, which shares none of its words.
async fn meaning_tour(tour: &mut Tour) -> anyhow::Result<()> {
    if !tour.model {
        println!(
            "(with the sentence encoder installed — `kura models install` — the tour also asks the Japanese manual a question in English)\n"
        );
        return Ok(());
    }
    let ask = json!({"query": "how do I put a JavaScript expression inside a template", "manual_id": "vue-docs-ja"});
    // The vectors are built after the lexical index; until then the answer
    // says it matched words only.
    let started = std::time::Instant::now();
    while started.elapsed() < std::time::Duration::from_secs(60) {
        let r = tour.session.call("manual_find", ask.clone()).await?;
        let waiting = r
            .structured_content
            .as_ref()
            .is_some_and(|v| v["warnings"].to_string().contains("matched words only"));
        if !waiting {
            break;
        }
        tokio::time::sleep(std::time::Duration::from_millis(300)).await;
    }
    let found = tour
        .step_view(
            "Ask the Japanese manual in English (the sentence encoder ranks its sections by meaning)",
            "manual_find",
            json!({"query": ask["query"], "manual_id": "vue-docs-ja", "use_cache": false}),
            |v| json!({"trace_id": v["trace_id"], "summary": v["summary"]}),
        )
        .await?;
    tour.step(
        "The best candidates",
        "manual_hits",
        json!({"trace_id": found["trace_id"], "kind": "candidates", "limit": 3}),
    )
    .await?;
    Ok(())
}

/// The vault (001): reads, writes, a search, and what the policy refuses.
async fn vault_tour(tour: &mut Tour) -> anyhow::Result<()> {
    let steps: Vec<(&str, &str, Value)> = vec![
        ("List the vault root", "vault_ls", json!({})),
        (
            "Read the first lines of a note",
            "vault_read",
            json!({"path": "notes/welcome.md", "range": {"start_line": 1, "end_line": 6}}),
        ),
        (
            "Scan a long note: 12000 characters at a time",
            "vault_scan",
            json!({"path": "notes/long-journal.md"}),
        ),
        (
            "Create a note",
            "vault_create",
            json!({"path": "notes/demo-created.md", "content": "# Made by the demo\n\nstatus: draft\n"}),
        ),
        (
            "Replace text in it",
            "vault_replace",
            json!({"path": "notes/demo-created.md", "find": "draft", "replace": "final"}),
        ),
        (
            "Append to today's daily note",
            "vault_write",
            json!({"path": "daily/2026-01-05.md", "content": "- demo was here\n", "mode": "append"}),
        ),
        (
            "Search the vault (regex)",
            "vault_search",
            json!({"query": "final|cap-std", "limit": 5}),
        ),
        (
            "A refused write: daily notes are append-only",
            "vault_replace",
            json!({"path": "daily/2026-01-05.md", "find": "demo", "replace": "x"}),
        ),
        (
            "A refused write: .system/ is reserved",
            "vault_create",
            json!({"path": ".system/hack.md", "content": "x"}),
        ),
        (
            "A refused path: escaping the root",
            "vault_read",
            json!({"path": "../etc/passwd", "full": true}),
        ),
    ];
    for (what, tool, args) in steps {
        tour.step(what, tool, args).await?;
    }
    Ok(())
}

/// What kura promises first: an agent's mistake is listed and undone, and
/// an undo never writes over what the person typed since.
async fn history_tour(tour: &mut Tour, data: &DemoData) -> anyhow::Result<()> {
    let note = "notes/demo-created.md";
    tour.step(
        "An agent overwrites the note by mistake",
        "vault_write",
        json!({"path": note, "content": "oops\n", "mode": "overwrite"}),
    )
    .await?;
    let newest = |v: &Value| {
        json!(v["changes"].as_array().map(|c| {
            c.iter()
                .take(2)
                .map(|c| json!({"id": c["id"], "tool": c["tool"], "files": c["files"]}))
                .collect::<Vec<_>>()
        }))
    };
    let listed = tour
        .step_view(
            "Its history: every change, newest first",
            "vault_history",
            json!({"path": note, "limit": 2}),
            newest,
        )
        .await?;
    let change = listed["changes"][0]["id"].clone();
    tour.step("Undo the mistake", "vault_undo", json!({"change": change}))
        .await?;
    let listed = tour
        .step_view(
            "The undo is a change too",
            "vault_history",
            json!({"path": note, "limit": 1}),
            newest,
        )
        .await?;
    let undo = listed["changes"][0]["id"].clone();
    tour.announce(
        "The person adds a line to the note in their editor",
        &format!("(outside kura: {note} gets \"- my own line\")"),
    );
    let path = data.vault().join(note);
    let mut text = crate::fs::read_operator_file(&path)?;
    text.extend_from_slice(b"- my own line\n");
    crate::fs::write_operator_file(&path, &text)?;
    println!();
    tour.step(
        "A refused undo of the undo: the note changed since, nothing is touched",
        "vault_undo",
        json!({"change": undo}),
    )
    .await?;
    Ok(())
}

/// The person's tasks: a note of checkboxes in the Tasks plugin's format,
/// this week's list, and one recurring task done as the plugin does it.
async fn tasks_tour(tour: &mut Tour) -> anyhow::Result<()> {
    let note = "notes/chores.md";
    let chores = "# Chores\n\
                  - [ ] Rotate the backup disks 🔁 every week 📅 2026-01-05 ⏫\n\
                  - [ ] Test a restore 📅 2026-01-07 #backup\n\
                  - [x] Buy a second disk ✅ 2026-01-02\n\
                  - [ ] Renew the domain [due:: 2027-03-01]\n";
    tour.step(
        "A note of tasks, as the Tasks and Dataview plugins write them",
        "vault_create",
        json!({"path": note, "content": chores}),
    )
    .await?;
    let week = json!({"filter": "!completed && due <= today() + \"1 week\"", "sort": ["due"]});
    let listed = tour
        .step(
            "What is due this week (or overdue), soonest first, from the index",
            "vault_tasks",
            week.clone(),
        )
        .await?;
    let first = &listed["tasks"][0];
    tour.step(
        "Mark the first one done: the done date, and its next occurrence a week on",
        "vault_task_status",
        json!({"path": first["path"], "line": first["line"], "hash": first["hash"], "status": "done"}),
    )
    .await?;
    tour.step(
        "The note as Obsidian shows it now",
        "vault_read",
        json!({"path": note, "full": true}),
    )
    .await?;
    Ok(())
}

/// A base the demo saves: the plans, grouped by status, with the days
/// left to each one's due date.
const PLANS_BASE: &str = "filters:\n  and:\n    - file.hasTag(\"plan\")\nformulas:\n  days_left: '((due - today()) / 86400000).round()'\nproperties:\n  formula.days_left:\n    displayName: Days left\nviews:\n  - type: table\n    name: Open plans\n    groupBy:\n      property: status\n      direction: ASC\n    order: [file.basename, due, formula.days_left]\n";

/// The vault as a web of notes: links in every form, backlinks with their
/// line, a tag and property query, a move that rewrites the links to what
/// moved, an edit under a heading, and the trash.
async fn graph_tour(tour: &mut Tour) -> anyhow::Result<()> {
    let plan = "---\ntags: [plan, backup]\nstatus: draft\ndue: 2026-12-01\n---\n# Backup plan\n\
                Follow [[backup-guide#Restore|the restore drills]], weigh ![[backup-summary]] and\n\
                [the draft](../research/backup-draft.md).\n\n## Open questions\n- how often?\n";
    let steps: Vec<(&str, &str, Value)> = vec![
        (
            "Write a note that links in every form (wikilink, embed, markdown)",
            "vault_create",
            json!({"path": "notes/backup-plan.md", "content": plan}),
        ),
        (
            "Link to it from today's daily note",
            "vault_write",
            json!({"path": "daily/2026-01-05.md", "content": "- read [[backup-guide]]\n", "mode": "append"}),
        ),
        (
            "What links to the guide: backlinks with their line, from the index",
            "vault_links",
            json!({"path": "research/backup-guide.md"}),
        ),
        (
            "Notes by tag and property",
            "vault_notes",
            json!({"filter": "#backup and status = draft and due < 2027-01-01"}),
        ),
        (
            "The same question as a Bases expression, with chosen properties",
            "vault_notes",
            json!({"filter": "file.hasTag(\"backup\") && status == \"draft\" && due < today() + \"1 year\"", "properties": ["status", "due", "file.mtime"]}),
        ),
        (
            "Save a view as Obsidian's Bases plugin does, in a .base file",
            "vault_create",
            json!({"path": "Plans.base", "content": PLANS_BASE}),
        ),
        (
            "The view's rows as the person sees them in Obsidian: columns, formula, groups",
            "vault_base",
            json!({"path": "Plans.base"}),
        ),
        (
            "Rename and move the guide: every link to it is rewritten in its own form",
            "vault_move",
            json!({"from": "research/backup-guide.md", "to": "guides/Backup Guide.md"}),
        ),
        (
            "The plan's links after the move",
            "vault_read",
            json!({"path": "notes/backup-plan.md", "range": {"start_line": 7, "end_line": 8}}),
        ),
        (
            "Move it back: the links follow again",
            "vault_move",
            json!({"from": "guides/Backup Guide.md", "to": "research/backup-guide.md"}),
        ),
        (
            "Append under a heading",
            "vault_edit",
            json!({"path": "notes/backup-plan.md", "heading": "Backup plan > Open questions", "mode": "append", "content": "- who restores?"}),
        ),
        (
            "Send a note to the trash (vault_move brings it back)",
            "vault_delete",
            json!({"path": "notes/demo-created.md"}),
        ),
        (
            "A refused move: daily notes are never renamed",
            "vault_move",
            json!({"from": "daily/2026-01-05.md", "to": "notes/old-day.md"}),
        ),
    ];
    for (what, tool, args) in steps {
        tour.step(what, tool, args).await?;
    }
    Ok(())
}

/// The manual domain (004): search with evidence, page the trace, read the answer.
async fn manual_tour(tour: &mut Tour) -> anyhow::Result<()> {
    let found = tour.step_view(
        "Search a manual in Japanese, with the claim graph (shown: summary, claims, next actions)",
        "manual_find",
        json!({"query": "算出プロパティとメソッドの違いは？キャッシュされる？", "include_claim_graph": true}),
        |v| {
            json!({
                "trace_id": v["trace_id"],
                "summary": v["summary"],
                "claims": v["claim_graph"]["claims"],
                "next_actions": v["next_actions"].as_array().map(|a| a.iter().take(2).cloned().collect::<Vec<_>>()),
            })
        },
    )
    .await?;
    let trace = found["trace_id"].clone();
    tour.step(
        "Page through the trace: the ranked candidates (compact)",
        "manual_hits",
        json!({"trace_id": trace, "kind": "candidates", "limit": 5}),
    )
    .await?;
    tour.step(
        "The gaps the claim graph found",
        "manual_hits",
        json!({"trace_id": trace, "kind": "gaps"}),
    )
    .await?;
    let read = found["next_actions"]
        .as_array()
        .and_then(|a| a.iter().find(|x| x["type"] == "manual_read"))
        .map(|x| x["params"].clone());
    if let Some(params) = read {
        tour.step(
            "Follow the first next action: read the best section",
            "manual_read",
            params,
        )
        .await?;
    }
    Ok(())
}

/// Vault discovery and audit (001 §3), and the bridge (003).
async fn evidence_tour(tour: &mut Tour) -> anyhow::Result<()> {
    tour.step(
        "Find where the vault answers a question: a summary and next actions, no hit list",
        "vault_find",
        json!({"query": "how often to back up notes"}),
    )
    .await?;
    tour.step(
        "How much of the source two read ranges cover",
        "vault_coverage",
        json!({"path": "research/backup-guide.md", "cited_ranges": [
            {"start_line": 1, "end_line": 15}, {"start_line": 14, "end_line": 24}
        ]}),
    )
    .await?;
    tour.step_view(
        "Audit a draft written from that source (it has known defects; shown: counts, findings, next actions)",
        "artifact_audit",
        json!({"artifact_path": "research/backup-draft.md", "source_path": "research/backup-guide.md"}),
        |v| {
            json!({
                "rootless_nodes": v["rootless_nodes"],
                "orphan_branches": v["orphan_branches"],
                "one_way_refs": v["one_way_refs"],
                "coverage_ratio": v["coverage_ratio"],
                "needs_forced_full_scan": v["needs_forced_full_scan"],
                "findings": v["findings"],
                "next_actions": v["next_actions"],
            })
        },
    )
    .await?;
    tour.step(
        "Audit the finished summary: no findings, everything covered, stop",
        "artifact_audit",
        json!({"artifact_path": "research/backup-summary.md", "source_path": "research/backup-guide.md"}),
    )
    .await?;
    tour.step(
        "Copy a manual section into the vault inside the server (only metadata comes back)",
        "bridge_copy_section",
        json!({
            "from_ref": {"manual_id": "vue-docs-ja", "path": "guide/essentials/computed.md", "start_line": 141},
            "to_path": "notes/computed-vs-methods.md",
            "mode": "overwrite"
        }),
    )
    .await?;
    Ok(())
}

/// The vibe workspace (002): resources, search, a task's life, a session
/// note, a prompt.
async fn vibe_tour(tour: &mut Tour) -> anyhow::Result<()> {
    projects_resource(tour).await?;
    tour.step_view(
        "Search every project, best match first (shown: path, heading, snippet, score)",
        "search",
        json!({"query": "indexador sqlite", "limit": 3}),
        |v| {
            json!(v["results"].as_array().map(|a| a
                .iter()
                .map(|r| json!({"path": r["path"], "heading": r["heading"], "snippet": r["snippet"], "score": r["score"]}))
                .collect::<Vec<_>>()))
        },
    )
    .await?;
    tour.step(
        "Text with punctuation is just text",
        "search",
        json!({"query": "what is JWT?", "project": "webapp", "limit": 1}),
    )
    .await?;
    let created = tour.step(
        "Create a task: numbered under the project's lock, in the standard format",
        "create_task",
        json!({
            "project": "webapp",
            "title": "Add per-user login limits",
            "objective": "Limit login attempts per account as well as per IP.",
            "steps": ["Key the bucket by account id", "Test lockout and reset"],
            "acceptance_criteria": ["The 6th attempt on one account within a minute gets a 429"],
            "context": {"related_files": ["auth.py"], "dependencies": ["001-add-rate-limiting"]},
            "tags": ["backend", "security"]
        }),
    )
    .await?;
    let number = created["task"]["number"].clone();
    tour.step(
        "Start it",
        "update_task_status",
        json!({"project": "webapp", "task": number, "status": "in-progress"}),
    )
    .await?;
    tour.step(
        "Log today's session (local date)",
        "log_session",
        json!({"project": "webapp", "content": "## Done\n\n- Planned per-user limits\n\n## Next steps\n\n- Key the bucket by account id"}),
    )
    .await?;
    tour.step(
        "A refused write: a folder a project does not have",
        "create_doc",
        json!({"project": "webapp", "folder": "secrets", "filename": "x.md", "content": "x"}),
    )
    .await?;
    briefing_prompt(tour).await
}

/// vibe://projects, each project's name and counts.
async fn projects_resource(tour: &mut Tour) -> anyhow::Result<()> {
    use rmcp::model::ReadResourceRequestParams;
    tour.announce(
        "The vibe projects, as a resource",
        "resources/read vibe://projects",
    );
    let r = tour
        .session
        .client
        .read_resource(ReadResourceRequestParams::new("vibe://projects"))
        .await?;
    if let Some(rmcp::model::ResourceContents::TextResourceContents { text, .. }) =
        r.contents.first()
    {
        let v: Value = serde_json::from_str(text)?;
        let brief: Vec<Value> = v["projects"]
            .as_array()
            .map(|a| {
                a.iter()
                    .map(|p| json!({"name": p["name"], "stats": p["stats"]}))
                    .collect()
            })
            .unwrap_or_default();
        println!("   ← {}\n", show(&json!(brief)).replace('\n', "\n     "));
    }
    Ok(())
}

/// The project_briefing prompt for one project.
async fn briefing_prompt(tour: &mut Tour) -> anyhow::Result<()> {
    use rmcp::model::GetPromptRequestParams;
    tour.announce(
        "The project_briefing prompt",
        r#"prompts/get project_briefing {"project": "webapp"}"#,
    );
    let p = tour
        .session
        .client
        .get_prompt(
            GetPromptRequestParams::new("project_briefing").with_arguments(
                json!({"project": "webapp"})
                    .as_object()
                    .cloned()
                    .unwrap_or_default(),
            ),
        )
        .await?;
    if let Some(text) = p.messages.first().and_then(|m| m.content.as_text()) {
        println!("   ← {}\n", text.text.trim_end().replace('\n', "\n     "));
    }
    Ok(())
}
