"""A whole agent session undone, driven by the official MCP Python SDK (1.x).

Usage: python undo_session.py MODE VAULT VIBE KURA ARGS...
  MODE: clean (undo the session and compare with the start) or conflict (the
  user edits notes/welcome.md in between: the undo must change nothing).

Runs KURA ARGS over stdio and, as an agent would: creates a note, overwrites
one, replaces every occurrence of a word, rewrites a section, moves a note
other notes link to, deletes a folder, copies a manual section over a note
(the bridge) and rewrites a vibe document; then lists the session's history
and undoes the session in the vault and in the vibe workspace. Prints one
JSON line: every file's SHA-256 and every folder of both roots at the start,
after the session and at the end, and what each call answered.
"""

import asyncio
import hashlib
import json
import os
import sys

from mcp import ClientSession, StdioServerParameters
from mcp.client.stdio import stdio_client


def snapshot(*roots):
    files, folders = {}, []
    for root in roots:
        name = os.path.basename(root)
        for here, dirs, names in os.walk(root):
            rel = os.path.relpath(here, root)
            if rel != ".":
                folders.append(f"{name}/{rel}")
            for n in names:
                if n.startswith(".kura-tmp-"):
                    continue
                with open(os.path.join(here, n), "rb") as f:
                    files[f"{name}/{os.path.normpath(os.path.join(rel, n))}"] = hashlib.sha256(f.read()).hexdigest()
    return {"files": files, "folders": sorted(folders)}


SESSION = [
    ("vault_create", {"path": "ideas/new/idea.md", "content": "# Idea\n"}),
    ("vault_write", {"path": "notes/welcome.md", "content": "overwritten\n", "mode": "overwrite"}),
    ("vault_replace", {"path": "research/backup-guide.md", "find": "backup", "replace": "copy", "max_replacements": 0}),
    ("vault_edit", {"path": "research/backup-summary.md", "heading": "Frequency", "mode": "replace", "content": "- weekly\n"}),
    ("vault_move", {"from": "research/backup-guide.md", "to": "guides/Backup Guide.md"}),
    ("vault_delete", {"path": "research"}),
    ("bridge_copy_section", {"from_ref": {"manual_id": "vue-docs-ja", "path": "guide/essentials/computed.md", "start_line": 1}, "to_path": "notes/日本語メモ.md", "mode": "overwrite"}),
    ("update_doc", {"project": "webapp", "folder": "references", "filename": "auth-notes.md", "content": "replaced by the agent\n"}),
]


def answer(result):
    error = getattr(result, "isError", None)
    return {"is_error": bool(error), "data": result.structuredContent, "text": result.content[0].text if result.content else ""}


async def main():
    mode, vault, vibe, command, args = sys.argv[1], sys.argv[2], sys.argv[3], sys.argv[4], sys.argv[5:]
    out = {"start": snapshot(vault, vibe), "calls": []}
    params = StdioServerParameters(command=command, args=args)
    async with stdio_client(params) as (read, write):
        async with ClientSession(read, write) as session:
            await session.initialize()
            for tool, arguments in SESSION:
                out["calls"].append([tool, answer(await session.call_tool(tool, arguments))])
            out["session"] = snapshot(vault, vibe)
            if mode == "conflict":
                with open(os.path.join(vault, "notes/welcome.md"), "a") as f:
                    f.write("the user's own line\n")
                out["edited"] = snapshot(vault, vibe)
            out["history"] = answer(await session.call_tool("vault_history", {"session": "current", "limit": 100}))
            out["vibe_history"] = answer(await session.call_tool("history", {"session": "current"}))
            out["undo"] = answer(await session.call_tool("vault_undo", {"session": "current"}))
            out["vibe_undo"] = answer(await session.call_tool("undo", {"session": "current"}))
    out["end"] = snapshot(vault, vibe)
    print(json.dumps(out))


asyncio.run(main())
