"""The official MCP Python SDK (1.x) as a client that can ask its user.

Usage: python confirm.py ANSWER KURA ARGS...   (ANSWER: accept, decline, cancel,
or none for a client that declares no elicitation)

Runs KURA ARGS over stdio, calls vault_delete on the folder `old-drafts` and
on the note `inbox/one.md`; prints one JSON line: the questions the server
asked and each call's isError and text.
"""

import asyncio
import json
import sys

import mcp.types as types
from mcp import ClientSession, StdioServerParameters
from mcp.client.stdio import stdio_client


async def main():
    answer, command, args = sys.argv[1], sys.argv[2], sys.argv[3:]
    asked = []

    async def on_elicit(context, params):
        asked.append(params.message)
        return types.ElicitResult(action=answer)

    callback = None if answer == "none" else on_elicit
    params = StdioServerParameters(command=command, args=args)
    async with stdio_client(params) as (read, write):
        async with ClientSession(read, write, elicitation_callback=callback) as session:
            await session.initialize()
            calls = {}
            for path in ["old-drafts", "inbox/one.md"]:
                result = await session.call_tool("vault_delete", {"path": path})
                calls[path] = {"is_error": bool(result.isError), "text": result.content[0].text}
    print(json.dumps({"asked": asked, "calls": calls}))


asyncio.run(main())
