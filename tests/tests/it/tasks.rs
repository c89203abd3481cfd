//! The person's tasks (issue 69), against the real binary over stdio: every
//! query of the tasks fixture vault returns the tasks worked out by hand in
//! `fixtures/vaults/tasks.expected.json` (committed before kura first ran
//! them); a status change writes the whole note as the Tasks plugin would,
//! is one change vault_undo takes back, and refuses a stale task, a locked
//! note and a daily note's line.

use kura_tests::Fixture;
use serde_json::{Value, json};

/// An answer's tasks as `[path, line]`.
fn listed(answer: &Value) -> Value {
    answer["tasks"]
        .as_array()
        .unwrap()
        .iter()
        .map(|t| json!([t["path"], t["line"]]))
        .collect()
}

#[tokio::test]
async fn every_query_of_the_fixture_returns_its_hand_worked_tasks() {
    let (_f, k, expected) = Fixture::fixture_vault("tasks", &[]).await;
    for q in expected["vault_tasks"].as_array().unwrap() {
        let what = q["name"].as_str().unwrap();
        let r = k.call("vault_tasks", q["args"].clone()).await;
        let got = r.ok();
        assert_eq!(listed(got), q["tasks"], "{what}: {}", r.body);
        assert_eq!(got["total"], q["total"], "{what}");
        assert_eq!(got["warnings"], Value::Null, "{what}: {}", r.body);
        if let Some(groups) = q.get("groups") {
            let got: Value = got["groups"]
                .as_array()
                .unwrap()
                .iter()
                .map(|g| json!([g["value"], g["count"]]))
                .collect();
            assert_eq!(&got, groups, "{what}");
        }
    }
    // What a task answers: its text without the emoji fields, its fields.
    let r = k
        .call(
            "vault_tasks",
            json!({"filter": "file.name == \"Alpha.md\" && line == 9"}),
        )
        .await;
    let t = &r.ok()["tasks"][0];
    assert_eq!(t["text"], "Call the bank #errand");
    assert_eq!(t["status"], " ");
    assert_eq!(t["status_type"], "TODO");
    assert_eq!(t["heading"], "This week");
    assert_eq!(t["tags"], json!(["#errand"]));
    assert_eq!(
        t["fields"],
        json!({"due": "2026-12-04", "priority": "high"})
    );
    k.stop().await;
}

/// Pages follow one another without a task lost or repeated; a filter
/// that fails on a task names it in `warnings`; a filter kura cannot read
/// is refused by name.
#[tokio::test]
async fn tasks_page_and_a_bad_filter_is_refused_by_name() {
    let (_f, k, expected) = Fixture::fixture_vault("tasks", &[]).await;
    let mut seen = Vec::new();
    let mut cursor = json!(null);
    loop {
        let r = k
            .call("vault_tasks", json!({"limit": 5, "cursor": cursor}))
            .await;
        let got = r.ok().clone();
        assert_eq!(got["total"], 17);
        seen.extend(listed(&got).as_array().unwrap().clone());
        cursor = got["next_cursor"].clone();
        if cursor.is_null() {
            break;
        }
    }
    assert_eq!(Value::from(seen), expected["vault_tasks"][0]["tasks"]);
    let r = k
        .call("vault_tasks", json!({"filter": "due.nothing(1) > 2"}))
        .await;
    assert_eq!(r.code(), "invalid_parameter", "{}", r.body);
    let r = k
        .call(
            "vault_tasks",
            json!({"filter": "text.lower().contains(\"bank\")"}),
        )
        .await;
    assert_eq!(listed(r.ok()), json!([["projects/Alpha.md", 9]]));
    k.stop().await;
}

/// The Recurring Tasks page's rule, on a whole note: the next occurrence
/// above the done task, its due date a week on, the done date added; the
/// rest of the note byte for byte. vault_tasks sees the change at once,
/// and vault_undo puts the note back exactly.
#[tokio::test]
async fn completing_a_recurring_task_writes_the_next_occurrence_and_undoes() {
    let (f, k, _) = Fixture::fixture_vault("tasks", &[]).await;
    let path = f.vault().join("projects/Alpha.md");
    let before = std::fs::read_to_string(&path).unwrap();
    let water = k
        .call(
            "vault_tasks",
            json!({"filter": "file.name == \"Alpha.md\" && line == 14"}),
        )
        .await
        .ok()
        .clone();
    let r = k
        .call(
            "vault_task_status",
            json!({"path": "projects/Alpha.md", "line": 14, "hash": water["tasks"][0]["hash"],
                   "status": "done", "date": "2026-12-07"}),
        )
        .await;
    let got = r.ok();
    assert_eq!(got["line"], 15, "{}", r.body);
    assert_eq!(got["next_line"], 14);
    let after = std::fs::read_to_string(&path).unwrap();
    let want = before.replace(
        "- [ ] Water the plants 🔁 every week 📅 2026-12-06\n",
        "- [ ] Water the plants 🔁 every week 📅 2026-12-13\n\
         - [x] Water the plants 🔁 every week 📅 2026-12-06 ✅ 2026-12-07\n",
    );
    assert_ne!(want, before);
    assert_eq!(after, want);
    let read = k
        .call(
            "vault_read",
            json!({"path": "projects/Alpha.md", "full": true}),
        )
        .await;
    assert_eq!(got["hash"], read.ok()["hash"]);
    let open = k
        .call(
            "vault_tasks",
            json!({"filter": "file.name == \"Alpha.md\" && recurring"}),
        )
        .await;
    assert_eq!(
        listed(open.ok()),
        json!([["projects/Alpha.md", 14], ["projects/Alpha.md", 15]])
    );
    assert_eq!(open.ok()["tasks"][0]["fields"]["due"], "2026-12-13");
    // One change, undone whole.
    let history = k.call("vault_history", json!({"limit": 1})).await;
    let change = history.ok()["changes"][0].clone();
    assert_eq!(change["tool"], "vault_task_status", "{change}");
    k.call("vault_undo", json!({"change": change["id"]}))
        .await
        .ok();
    assert_eq!(std::fs::read_to_string(&path).unwrap(), before);
    // Back to to-do: the done date goes, nothing else changes.
    k.call(
        "vault_task_status",
        json!({"path": "projects/Alpha.md", "line": 11, "text": "Draft the report", "status": "todo"}),
    )
    .await
    .ok();
    assert_eq!(
        std::fs::read_to_string(&path).unwrap(),
        before.replace(
            "  - [x] Draft the report ✅ 2026-12-02\n",
            "  - [ ] Draft the report\n"
        )
    );
    k.stop().await;
}

/// A task changed since it was listed, a line that is no task, a locked
/// note and a daily note (append-only) are refused, and nothing is
/// written.
#[tokio::test]
async fn a_stale_locked_or_daily_task_is_refused_and_nothing_is_written() {
    let (f, k, _) = Fixture::fixture_vault("tasks", &[]).await;
    let path = f.vault().join("projects/Beta.md");
    let before = std::fs::read_to_string(&path).unwrap();
    // The person edited the task in their editor after it was listed.
    let edited = before.replace("Phone Acme", "Phone Acme about the invoice");
    std::fs::write(&path, &edited).unwrap();
    let r = k
        .call(
            "vault_task_status",
            json!({"path": "projects/Beta.md", "line": 9, "text": "Phone Acme (due:: 2026-12-10) #errand", "status": "done"}),
        )
        .await;
    assert_eq!(r.code(), "conflict", "{}", r.body);
    assert_eq!(
        r.body["error"]["details"]["text"],
        "Phone Acme about the invoice (due:: 2026-12-10) #errand"
    );
    let r = k
        .call(
            "vault_task_status",
            json!({"path": "projects/Beta.md", "line": 5, "text": "priority:: 2", "status": "done"}),
        )
        .await;
    assert_eq!(r.code(), "conflict", "{}", r.body);
    assert_eq!(std::fs::read_to_string(&path).unwrap(), edited);
    // Named by its hash, a task the person completed meanwhile is stale
    // even where its next occurrence now reads the same.
    let listed_alpha = k
        .call(
            "vault_tasks",
            json!({"filter": "file.name == \"Alpha.md\" && recurring"}),
        )
        .await
        .ok()
        .clone();
    let water = &listed_alpha["tasks"][0];
    assert_eq!(water["line"], 14);
    let alpha = f.vault().join("projects/Alpha.md");
    let before_alpha = std::fs::read_to_string(&alpha).unwrap();
    let completed_in_obsidian = before_alpha.replace(
        "- [ ] Water the plants 🔁 every week 📅 2026-12-06\n",
        "- [ ] Water the plants 🔁 every week 📅 2026-12-13\n- [x] Water the plants 🔁 every week 📅 2026-12-06 ✅ 2026-12-06\n",
    );
    std::fs::write(&alpha, &completed_in_obsidian).unwrap();
    let r = k
        .call(
            "vault_task_status",
            json!({"path": "projects/Alpha.md", "line": 14, "hash": water["hash"], "status": "done"}),
        )
        .await;
    assert_eq!(r.code(), "conflict", "{}", r.body);
    assert_eq!(
        std::fs::read_to_string(&alpha).unwrap(),
        completed_in_obsidian
    );
    let r = k
        .call(
            "vault_task_status",
            json!({"path": "projects/Alpha.md", "line": 14, "status": "done"}),
        )
        .await;
    assert_eq!(r.code(), "invalid_parameter", "{}", r.body);
    // A locked note is never changed.
    f.write(
        "projects/Mine.md",
        "---\nlocked: true\n---\n- [ ] Mine to tick\n",
    );
    let r = k
        .call(
            "vault_task_status",
            json!({"path": "projects/Mine.md", "line": 4, "text": "Mine to tick", "status": "done"}),
        )
        .await;
    assert!(r.is_error, "{}", r.body);
    assert_eq!(r.body["error"]["details"]["reason"], "locked", "{}", r.body);
    // A daily note takes appends only (seed 000's rule): its tasks are
    // listed, never rewritten.
    let daily = f.vault().join("daily/2026-12-01.md");
    let before_daily = std::fs::read_to_string(&daily).unwrap();
    let r = k
        .call(
            "vault_task_status",
            json!({"path": "daily/2026-12-01.md", "line": 2, "text": "Buy stamps #errand", "status": "done"}),
        )
        .await;
    assert_eq!(r.code(), "forbidden", "{}", r.body);
    assert_eq!(std::fs::read_to_string(&daily).unwrap(), before_daily);
    // A status kura does not know, and a date that is none.
    for (status, date) in [("finished", "2026-12-07"), ("done", "07/12/2026")] {
        let r = k
            .call(
                "vault_task_status",
                json!({"path": "projects/Alpha.md", "line": 9, "text": "Call the bank #errand", "status": status, "date": date}),
            )
            .await;
        assert_eq!(r.code(), "invalid_parameter", "{}", r.body);
    }
    k.stop().await;
}

/// The tool's number of the `n`-th block in `language` of a note: it
/// counts every ```tasks, ```dataview and ```dataviewjs block.
fn block_number(note: &str, language: &str, n: u64) -> u64 {
    let fences: Vec<&str> = note
        .lines()
        .filter_map(|l| l.strip_prefix("```"))
        .filter(|l| ["tasks", "dataview", "dataviewjs"].contains(&l.trim()))
        .map(str::trim)
        .collect();
    let at = fences
        .iter()
        .enumerate()
        .filter(|(_, l)| **l == language)
        .nth(n as usize - 1)
        .expect("the fixture's block")
        .0;
    at as u64 + 1
}

/// Home.md's ```tasks and ```dataview blocks give the tasks worked out by
/// hand from the two plugins' documentation (the Tasks plugin's default
/// emoji format does not read Beta's `[due:: …]` fields; Dataview reads
/// both, and a TASK query shows a task's sub-tasks under it); a block and
/// a filter together are refused.
#[tokio::test]
async fn the_fixture_s_blocks_list_what_the_plugins_list() {
    let (f, k, expected) = Fixture::fixture_vault("tasks", &[]).await;
    for b in expected["blocks"].as_array().unwrap() {
        let note = f.read(b["path"].as_str().unwrap());
        let language = b["language"].as_str().unwrap();
        let block = block_number(&note, language, b["block"].as_u64().unwrap());
        let r = k
            .call("vault_tasks", json!({"path": b["path"], "block": block}))
            .await;
        assert_eq!(listed(r.ok()), b["tasks"], "{language}: {}", r.body);
        let children = b["children"].as_object().cloned().unwrap_or_default();
        for t in r.ok()["tasks"].as_array().unwrap() {
            let key = format!("{}:{}", t["path"].as_str().unwrap(), t["line"]);
            let want = children.get(&key).cloned().unwrap_or(json!(null));
            let got = t.get("children").cloned().unwrap_or(json!(null));
            assert_eq!(got, want, "{language}: the sub-tasks of {key}");
        }
    }
    let r = k
        .call(
            "vault_tasks",
            json!({"path": "Home.md", "filter": "!completed"}),
        )
        .await;
    assert_eq!(r.code(), "invalid_parameter", "{}", r.body);
    // A block kura cannot read is refused naming its line.
    f.write(
        "Agenda.md",
        "# Agenda\n\n```tasks\nnot done\nfilter by function task.isDone\n```\n\n```dataviewjs\ndv.taskList(dv.pages().file.tasks)\n```\n",
    );
    let r = k.call("vault_tasks", json!({"path": "Agenda.md"})).await;
    assert_eq!(r.code(), "invalid_parameter", "{}", r.body);
    assert!(r.text.contains("filter by function"), "{}", r.text);
    let r = k
        .call("vault_tasks", json!({"path": "Agenda.md", "block": 2}))
        .await;
    assert!(r.text.contains("JavaScript"), "{}", r.text);
    // The plugin's own statuses, from its settings: `[h]` on hold.
    f.write(
        ".obsidian/plugins/obsidian-tasks-plugin/data.json",
        r#"{"statusSettings": {"coreStatuses": [{"symbol": " ", "name": "Todo", "nextStatusSymbol": "x", "type": "TODO"}, {"symbol": "x", "name": "Done", "nextStatusSymbol": " ", "type": "DONE"}], "customStatuses": [{"symbol": "h", "name": "On hold", "nextStatusSymbol": " ", "type": "ON_HOLD"}]}}"#,
    );
    f.write(
        "Held.md",
        "- [h] Wait for Ana\n\n```tasks\nstatus.type is ON_HOLD\n```\n",
    );
    let held = k
        .until("vault_tasks", json!({"path": "Held.md"}), |r| {
            r["total"] == 1
        })
        .await;
    assert_eq!(listed(&held), json!([["Held.md", 1]]), "{held}");
    assert_eq!(held["tasks"][0]["status_type"], "ON_HOLD");
    let r = k
        .call(
            "vault_tasks",
            json!({"filter": "statusType == \"ON_HOLD\""}),
        )
        .await;
    assert_eq!(listed(r.ok()), json!([["Held.md", 1]]));
    // Grouped and limited as the block says.
    f.write(
        "Week.md",
        "```tasks\nnot done\nhas due date\ngroup by filename\nsort by due reverse\nlimit groups 2\n```\n",
    );
    let r = k.call("vault_tasks", json!({"path": "Week.md"})).await;
    let got = r.ok();
    assert_eq!(
        got["groups"],
        json!([{"value": "Alpha", "count": 2}]),
        "{}",
        r.body
    );
    assert_eq!(
        listed(got),
        json!([["projects/Alpha.md", 17], ["projects/Alpha.md", 13]])
    );
    k.stop().await;
}

/// A ```dataview LIST or TABLE block answers its columns and rows (worked
/// out by hand from the fixture), paged like tasks; what kura does not
/// evaluate is refused with its place in the query.
#[tokio::test]
async fn a_dataview_table_or_list_block_gives_its_columns_and_rows() {
    let (f, k, _) = Fixture::fixture_vault("tasks", &[]).await;
    f.write(
        "Tables.md",
        "# Tables\n\n```dataview\nTABLE WITHOUT ID file.name AS Project, status, length(filter(file.tasks, (t) => !t.completed)) AS Open\nFROM \"projects\"\nSORT file.name\n```\n\n```dataview\nLIST FROM #errand\n```\n\n```dataview\nTASK\nWHERE !completed\nCALENDAR due\n```\n\n```dataview\nCALENDAR file.day\n```\n",
    );
    let r = k
        .call("vault_tasks", json!({"path": "Tables.md", "block": 1}))
        .await;
    let got = r.ok();
    assert_eq!(
        got["columns"],
        json!(["Project", "status", "Open"]),
        "{got}"
    );
    assert_eq!(
        got["rows"],
        json!([["Alpha", "active", 7], ["Beta", "paused", 4]])
    );
    assert_eq!(got["tasks"], json!([]));
    let r = k
        .call(
            "vault_tasks",
            json!({"path": "Tables.md", "block": 2, "limit": 2}),
        )
        .await;
    let got = r.ok();
    assert_eq!(got["columns"], json!(["File"]), "{got}");
    assert_eq!(
        got["rows"],
        json!([["daily/2026-12-01.md"], ["projects/Alpha.md"]])
    );
    assert_eq!((&got["total"], &got["next_cursor"]), (&json!(3), &json!(2)));
    let r = k
        .call(
            "vault_tasks",
            json!({"path": "Tables.md", "block": 2, "cursor": 2}),
        )
        .await;
    assert_eq!(r.ok()["rows"], json!([["projects/Beta.md"]]));
    // A command kura does not know, and a query type it does not draw.
    for (block, words) in [
        (3, ["line 3, column 1", "CALENDAR"]),
        (4, ["line 1, column 1", "calendar"]),
    ] {
        let r = k
            .call("vault_tasks", json!({"path": "Tables.md", "block": block}))
            .await;
        assert_eq!(r.code(), "invalid_parameter", "{}", r.body);
        for w in words {
            assert!(r.text.contains(w), "{w}: {}", r.text);
        }
    }
    k.stop().await;
}
