"""kura driven by the official MCP Python SDK (1.x: initialize; 2.x: server/discover).

Usage: sdk_suite.py KURA_BIN VAULT_DIR STATE_DIR CONFIG_FILE VIBE_DIR [HTTP_URL TOKEN]
With HTTP_URL and TOKEN, the suite talks Streamable HTTP to a kura already serving those roots
there (bearer TOKEN); otherwise it starts kura itself over stdio.
Prints one line per check and a closing 'N passed, N failed' line; exits 1 on any failure.
The SDK validates every successful structuredContent against the tool's outputSchema.
With KURA_SDK_LINKED=FILE (the truth about a generated linked vault, as JSON), the suite checks
the graph tools on that vault against it instead.
"""

import asyncio
import json
import os
import sys
import traceback

import mcp
from mcp import StdioServerParameters

KURA, VAULT, STATE, CONFIG, VIBE = sys.argv[1:6]
HTTP = sys.argv[6:8] or None
PARAMS = StdioServerParameters(
    command=KURA,
    args=["serve", "--config", CONFIG, "--vault-root", VAULT, "--vibe-root", VIBE, "--state-dir", STATE],
    env={"RUST_LOG": "warn", "HOME": STATE},
)


def field(obj, *names):
    for n in names:
        if hasattr(obj, n):
            return getattr(obj, n)
    raise AttributeError(names)


async def checks(s, handshake):
    call, list_tools = s.call_tool, s.list_tools
    results = []

    async def check(name, fn):
        try:
            await fn()
            results.append((name, None))
        except Exception as e:  # noqa: BLE001 - report every failure
            results.append((name, "".join(traceback.format_exception_only(type(e), e)).strip()))

    async def tools_listed():
        tools = await list_tools()
        names = [t.name for t in field(tools, "tools")]
        assert names == [
            "vault_ls", "vault_read", "vault_scan", "vault_create", "vault_write", "vault_replace",
            "vault_edit", "vault_search", "vault_find", "vault_links", "vault_notes", "vault_base",
            "vault_tasks", "vault_task_status", "vault_move",
            "vault_delete", "vault_history", "vault_undo", "vault_coverage", "artifact_audit",
            "search", "read_doc", "list_tasks", "get_plan", "create_doc", "update_doc", "create_task",
            "update_task_status", "create_plan", "log_session", "history", "undo", "reindex",
        ], names
        for t in field(tools, "tools"):
            schema = field(t, "outputSchema", "output_schema")
            assert schema and schema["type"] == "object", t.name
            ann = t.annotations
            assert ann is not None and field(ann, "readOnlyHint", "read_only_hint") is not None, t.name

    async def read_validates():
        r = await call("vault_read", {"path": "notes/welcome.md", "range": {"start_line": 1, "end_line": 3}})
        assert not field(r, "isError", "is_error")
        sc = field(r, "structuredContent", "structured_content")
        assert sc["applied_range"] == {"start_line": 1, "end_line": 3}, sc
        assert sc["truncated_reason"] == "range_end"

    async def scan_round_trip():
        text, args = "", {"path": "notes/long-journal.md"}
        for _ in range(10):
            sc = field(await call("vault_scan", args), "structuredContent", "structured_content")
            text += sc["text"]
            if sc["eof"]:
                break
            args = {"path": "notes/long-journal.md", "cursor": {"char_offset": sc["next_cursor"]["char_offset"]}}
        with open(f"{VAULT}/notes/long-journal.md", encoding="utf-8") as fh:
            assert text == fh.read()

    async def write_cycle():
        r = await call("vault_create", {"path": "sdk/note.md", "content": "hello sdk\n"})
        assert field(r, "structuredContent", "structured_content") == {"written_path": "sdk/note.md", "written_bytes": 10}
        await call("vault_write", {"path": "sdk/note.md", "content": "more\n", "mode": "append"})
        r = await call("vault_replace", {"path": "sdk/note.md", "find": "hello", "replace": "bye"})
        assert field(r, "structuredContent", "structured_content")["replacements"] == 1
        r = await call("vault_search", {"query": "bye sdk", "mode": "plain"})
        hits = field(r, "structuredContent", "structured_content")["results"]
        assert hits and hits[0]["path"] == "sdk/note.md", hits

    async def errors_are_tool_results():
        for args, code in [
            ({"path": "daily/2026-01-05.md", "find": "MCP", "replace": "x"}, "forbidden"),
            ({"path": "../outside.md", "find": "a", "replace": "b"}, "out_of_scope"),
            ({"path": "notes/welcome.md", "find": "a", "replace": "b", "max_replacements": True}, "invalid_parameter"),
        ]:
            r = await call("vault_replace", args)
            assert field(r, "isError", "is_error") is True, args
            sc = field(r, "structuredContent", "structured_content")
            assert sc["error"]["code"] == code, sc
            assert field(r, "content")[0].text.startswith(code)

    async def find_and_audit():
        # The SDK validates structuredContent against each tool's outputSchema.
        r = await call("vault_find", {"query": "encrypted archive", "budget": {"max_candidates": "50"}})
        assert not field(r, "isError", "is_error"), r
        sc = field(r, "structuredContent", "structured_content")
        assert "cutoff_reason" not in sc["summary"], sc
        assert sc["next_actions"][0]["type"] == "vault_read", sc
        r = await call("artifact_audit", {"artifact_path": "research/backup-draft.md", "source_path": "research/backup-guide.md"})
        sc = field(r, "structuredContent", "structured_content")
        assert (sc["rootless_nodes"], sc["orphan_branches"], sc["one_way_refs"]) == (2, 2, 3), sc
        r = await call("vault_coverage", {"path": "research/backup-guide.md", "cited_ranges": [{"start_line": 1, "end_line": 47}]})
        assert field(r, "structuredContent", "structured_content")["coverage_ratio"] == 1.0

    def sc(r):
        assert not field(r, "isError", "is_error"), r
        return field(r, "structuredContent", "structured_content")

    async def graph_tools():
        # Links in three forms to the guide, a move that rewrites them, and back.
        sc(await call("vault_create", {"path": "sdk/links.md", "content":
            "---\ntags: [sdk/graph]\nstatus: open\n---\n# Links\n"
            "[[backup-guide]] ![[backup-guide#Restore]] [g](../research/backup-guide.md)\n"}))
        back = sc(await call("vault_links", {"path": "research/backup-guide.md"}))["backlinks"]
        assert [(b["path"], b["line"], b["form"]) for b in back] == [
            ("sdk/links.md", 6, "wikilink"), ("sdk/links.md", 6, "embed"), ("sdk/links.md", 6, "markdown")], back
        notes = sc(await call("vault_notes", {"filter": "#sdk and status = open"}))["notes"]
        assert [n["path"] for n in notes] == ["sdk/links.md"], notes
        moved = sc(await call("vault_move", {"from": "research/backup-guide.md", "to": "guides/Backup Guide.md"}))
        assert moved["links_rewritten"] == 3, moved
        with open(f"{VAULT}/sdk/links.md", encoding="utf-8") as fh:
            assert fh.read().endswith(
                "[[Backup Guide|backup-guide]] ![[Backup Guide#Restore]] [g](../guides/Backup%20Guide.md)\n")
        sc(await call("vault_move", {"from": "guides/Backup Guide.md", "to": "research/backup-guide.md"}))
        h = sc(await call("vault_read", {"path": "sdk/links.md", "full": True}))["hash"]
        sc(await call("vault_edit", {"path": "sdk/links.md", "heading": "Links", "mode": "append",
                                     "content": "- more", "expected_hash": h}))
        gone = sc(await call("vault_delete", {"path": "sdk/links.md"}))
        assert gone["trash_path"] == ".trash/sdk/links.md", gone

    async def vibe_tools_validate():
        # Every vibe tool's success, validated by the SDK against its outputSchema.
        found = sc(await call("search", {"query": "indexador sqlite", "limit": 3}))
        assert found["results"][0]["path"] == "vibeMCP/tasks/003-disenar-schema-sqlite.md", found
        doc = sc(await call("read_doc", {"project": "vibeMCP", "folder": "plans", "filename": "execution-plan.md"}))
        assert doc["metadata"]["type"] == "plan", doc
        assert sc(await call("list_tasks", {"status": "pending"}))["total"] == 2
        assert sc(await call("get_plan", {"project": "vibeMCP"}))["parsed"]["done"] == 3
        t = sc(await call("create_task", {"project": "webapp", "title": "From Python", "objective": "o",
                                          "steps": ["a"], "acceptance_criteria": ["b"], "tags": ["sdk"]}))
        assert t["task"]["number"] == "004", t
        u = sc(await call("update_task_status", {"project": "webapp", "task": "4", "status": "done"}))
        assert u["task"]["previous_status"] == "pending", u
        sc(await call("create_doc", {"project": "webapp", "folder": "scratch", "filename": "py.md", "content": "# Py\n"}))
        h = sc(await call("read_doc", {"project": "webapp", "folder": "scratch", "filename": "py.md"}))["hash"]
        u = sc(await call("update_doc", {"project": "webapp", "folder": "scratch", "filename": "py.md",
                                         "content": "# Py 2\n", "expected_hash": h}))
        assert u["previous_hash"] == h, u
        assert sc(await call("create_plan", {"project": "webapp", "filename": "py-plan.md", "content": "# P\n"}))["action"] == "created"
        assert sc(await call("log_session", {"project": "webapp", "content": "- from python", "suffix": "sdk"}))["indexed"] is True
        r = await call("read_doc", {"project": "webapp", "folder": "nope", "filename": "x.md"})
        assert field(r, "isError", "is_error") is True
        err = field(r, "structuredContent", "structured_content")
        assert err["success"] is False and err["error"]["code"] == "INVALID_FOLDER", err

    async def reindex_reports_progress():
        seen = []

        async def on_progress(progress, total, message):
            seen.append((progress, total))

        r = sc(await call("reindex", {"full": True}, progress_callback=on_progress))
        n = r["stats"]["scanned"]
        assert n >= 20 and seen and seen[-1] == (n, n), (r, seen)
        assert [p for p, _ in seen] == sorted(p for p, _ in seen), seen

    async def resources_and_prompts():
        res = [str(x.uri) for x in field(await s.list_resources(), "resources")]
        assert res[:2] == ["vibe://projects", "vibe://projects/vibeMCP"], res
        tpl = [field(x, "uriTemplate", "uri_template") for x in field(await s.list_resource_templates(), "resourceTemplates", "resource_templates")]
        assert tpl == ["vibe://projects/{name}", "vibe://projects/{name}/{folder}/{file}"], tpl
        body = json.loads(field(await s.read_resource("vibe://projects/vibeMCP/tasks/004-definir-interfaz-mcp.md"), "contents")[0].text)
        assert body["metadata"]["status"] == "in-progress", body
        prompts = [p.name for p in field(await s.list_prompts(), "prompts")]
        assert prompts == ["project_briefing", "session_start"], prompts
        p = await s.get_prompt("session_start", {"project": "vibeMCP", "focus": "004"})
        text = field(p, "messages")[0].content.text
        assert "## Task Details" in text and "## Suggested Actions" in text, text

    async def linked_vault():
        # Every note's links and backlinks, the orphans, the broken links and the filters as the
        # test's own record of the vault says; then a hub's move keeps every backlink in place.
        with open(os.environ["KURA_SDK_LINKED"], encoding="utf-8") as fh:
            truth = json.load(fh)

        async def links_of(path):
            out = sc(await call("vault_links", {"path": path, "limit": 1000}))
            links = sorted(([l["line"], l["form"], l["resolved"]] for l in out["links"]),
                           key=lambda l: (l[0], l[1], l[2] or ""))
            back = sorted([b["path"], b["line"], b["form"]] for b in out["backlinks"])
            return links, back

        for path, want in truth["notes"].items():
            links, back = await links_of(path)
            assert links == want["links"], (path, links, want["links"])
            assert back == want["backlinks"], (path, back, want["backlinks"])
        for args, want in truth["lists"]:
            out = sc(await call("vault_notes", dict(args, limit=1000)))
            assert [n["path"] for n in out["notes"]] == want, (args, out["total"])
        hub, to = truth["move"]
        moved = sc(await call("vault_move", {"from": hub, "to": to}))
        assert moved["links_rewritten"] > 0, moved
        assert (await links_of(to))[1] == truth["notes"][hub]["backlinks"]
        sc(await call("vault_move", {"from": to, "to": hub}))
        assert (await links_of(hub))[1] == truth["notes"][hub]["backlinks"]

    if os.environ.get("KURA_SDK_LINKED"):
        await check(f"{handshake}: linked_vault_links_lists_and_a_move", linked_vault)
        return results

    for name, fn in [
        ("vibe_tools_validate_against_output_schemas", vibe_tools_validate),
        ("reindex_reports_progress_to_a_progress_callback", reindex_reports_progress),
        ("vibe_resources_and_prompts", resources_and_prompts),
        ("tools_listed_with_schemas_and_annotations", tools_listed),
        ("find_coverage_audit_validate_against_output_schemas", find_and_audit),
        ("read_result_validates_against_output_schema", read_validates),
        ("scan_resumes_without_loss", scan_round_trip),
        ("create_write_replace_search", write_cycle),
        ("errors_are_tool_results_with_spec_codes", errors_are_tool_results),
        ("graph_tools_link_move_edit_and_trash", graph_tools),
    ]:
        await check(f"{handshake}: {name}", fn)
    return results


def transport_v1():
    """SDK 1.x: the (read, write) streams of stdio or Streamable HTTP."""
    from contextlib import asynccontextmanager

    if HTTP is None:
        from mcp.client.stdio import stdio_client

        return stdio_client(PARAMS)
    from mcp.client.streamable_http import streamablehttp_client

    @asynccontextmanager
    async def http():
        url, token = HTTP
        async with streamablehttp_client(url, headers={"Authorization": f"Bearer {token}"}) as (r, w, _):
            yield r, w

    return http()


def server_v2():
    """SDK 2.x: what `mcp.Client` connects to."""
    if HTTP is None:
        return PARAMS
    from mcp.client.streamable_http import streamable_http_client
    from mcp.shared._httpx_utils import create_mcp_http_client

    url, token = HTTP
    return streamable_http_client(url, http_client=create_mcp_http_client(headers={"Authorization": f"Bearer {token}"}))


async def main():
    if hasattr(mcp, "Client"):  # SDK 2.x: discover first, fall back to initialize
        async with mcp.Client(server_v2()) as client:
            version = getattr(client, "protocol_version", None)
            results = await checks(client, f"sdk2 (protocol {version})")
    else:  # SDK 1.x: the initialize handshake
        async with transport_v1() as (r, w):
            async with mcp.ClientSession(r, w) as session:
                init = await session.initialize()
                assert init.serverInfo.name == "kura", init.serverInfo
                results = await checks(session, f"sdk1 (protocol {init.protocolVersion})")
    failed = 0
    for name, err in results:
        print(("ok   " if err is None else "FAIL ") + name + ("" if err is None else f"\n     {err}"))
        failed += err is not None
    print(f"{len(results) - failed} passed, {failed} failed")
    sys.exit(1 if failed else 0)


asyncio.run(main())
