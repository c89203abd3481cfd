"""The official MCP Python SDK as a client that can ask its user: 1.x over the
initialize handshake (kura sends an elicitation request), 2.x over
2026-07-28 (kura answers `input_required`; the SDK asks and calls again).

Usage: python confirm.py ANSWER KURA ARGS...   (ANSWER: accept, decline, cancel,
none for a client that declares no elicitation, or error for one whose
question fails: the user closed the dialog and the client answers an error)

Runs KURA ARGS over stdio, calls vault_delete on the folder `old-drafts` and
on the note `inbox/one.md`; prints one JSON line: the questions the server
asked and each call's isError and text.
"""

import asyncio
import json
import sys

import mcp
import mcp.types as types
from mcp import ClientSession, StdioServerParameters
from mcp.client.stdio import stdio_client


async def main():
    answer, command, args = sys.argv[1], sys.argv[2], sys.argv[3:]
    asked = []

    async def on_elicit(context, params):
        asked.append(params.message)
        if answer == "error":
            return types.ErrorData(code=-32603, message="the user closed the dialog")
        return types.ElicitResult(action=answer)

    callback = None if answer == "none" else on_elicit
    params = StdioServerParameters(command=command, args=args)
    calls = {}

    async def delete_all(call):
        for path in ["old-drafts", "inbox/one.md"]:
            result = await call("vault_delete", {"path": path})
            error = getattr(result, "is_error", None)
            if error is None:
                error = result.isError
            calls[path] = {"is_error": bool(error), "text": result.content[0].text}

    if hasattr(mcp, "Client"):  # SDK 2.x
        async with mcp.Client(params, elicitation_callback=callback) as client:
            version = getattr(client, "protocol_version", None)
            await delete_all(client.call_tool)
    else:
        async with stdio_client(params) as (read, write):
            async with ClientSession(read, write, elicitation_callback=callback) as session:
                init = await session.initialize()
                version = init.protocolVersion
                await delete_all(session.call_tool)
    print(json.dumps({"asked": asked, "calls": calls, "protocol": str(version)}))


asyncio.run(main())
