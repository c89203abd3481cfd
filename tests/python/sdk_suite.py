"""kura driven by the official MCP Python SDK (1.x: initialize; 2.x: server/discover).

Usage: sdk_suite.py KURA_BIN VAULT_DIR STATE_DIR CONFIG_FILE
Prints one line per check and a closing 'N passed, N failed' line; exits 1 on any failure.
The SDK validates every successful structuredContent against the tool's outputSchema.
"""

import asyncio
import sys
import traceback

import mcp
from mcp import StdioServerParameters

KURA, VAULT, STATE, CONFIG = sys.argv[1:5]
PARAMS = StdioServerParameters(
    command=KURA,
    args=["serve", "--config", CONFIG, "--vault-root", VAULT, "--state-dir", STATE],
    env={"RUST_LOG": "warn", "HOME": STATE},
)


def field(obj, *names):
    for n in names:
        if hasattr(obj, n):
            return getattr(obj, n)
    raise AttributeError(names)


async def checks(call, list_tools, handshake):
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
            "vault_search", "vault_find", "vault_coverage", "artifact_audit",
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

    for name, fn in [
        ("tools_listed_with_schemas_and_annotations", tools_listed),
        ("find_coverage_audit_validate_against_output_schemas", find_and_audit),
        ("read_result_validates_against_output_schema", read_validates),
        ("scan_resumes_without_loss", scan_round_trip),
        ("create_write_replace_search", write_cycle),
        ("errors_are_tool_results_with_spec_codes", errors_are_tool_results),
    ]:
        await check(f"{handshake}: {name}", fn)
    return results


async def main():
    if hasattr(mcp, "Client"):  # SDK 2.x: discover first, fall back to initialize
        async with mcp.Client(PARAMS) as client:
            version = getattr(client, "protocol_version", None)
            results = await checks(client.call_tool, client.list_tools, f"sdk2 (protocol {version})")
    else:  # SDK 1.x: the initialize handshake
        from mcp.client.stdio import stdio_client

        async with stdio_client(PARAMS) as (r, w):
            async with mcp.ClientSession(r, w) as session:
                init = await session.initialize()
                assert init.serverInfo.name == "kura", init.serverInfo
                results = await checks(session.call_tool, session.list_tools, f"sdk1 (protocol {init.protocolVersion})")
    failed = 0
    for name, err in results:
        print(("ok   " if err is None else "FAIL ") + name + ("" if err is None else f"\n     {err}"))
        failed += err is not None
    print(f"{len(results) - failed} passed, {failed} failed")
    sys.exit(1 if failed else 0)


asyncio.run(main())
