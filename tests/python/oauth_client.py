"""The official MCP Python SDK (2.x) as an OAuth client of kura.

Usage: python oauth_client.py KURA_URL ISSUER CLIENT_ID CLIENT_SECRET SCOPE

The SDK's client-credentials provider meets kura's 401, reads the Protected
Resource Metadata it names, the issuer's metadata, asks the issuer for a
token for kura's resource, and retries; then the session lists the tools
and calls one. Prints one JSON line: the tools listed, the call's result and
the access token's audience.
"""

import asyncio
import base64
import json
import sys

import mcp
from mcp.client.auth.extensions.client_credentials import ClientCredentialsOAuthProvider
from mcp.client.streamable_http import streamable_http_client
from mcp.shared._httpx_utils import create_mcp_http_client


class Memory:
    """Tokens and client information kept in memory for one run."""

    def __init__(self):
        self.tokens = None
        self.client = None

    async def get_tokens(self):
        return self.tokens

    async def set_tokens(self, tokens):
        self.tokens = tokens

    async def get_client_info(self):
        return self.client

    async def set_client_info(self, client_info):
        self.client = client_info


async def main():
    url, issuer, client_id, secret, scope = sys.argv[1:6]
    storage = Memory()
    provider = ClientCredentialsOAuthProvider(
        server_url=url,
        storage=storage,
        client_id=client_id,
        client_secret=secret,
        scope=scope,
        issuer=issuer,
    )
    transport = streamable_http_client(url, http_client=create_mcp_http_client(auth=provider))
    async with mcp.Client(transport) as client:
        tools = [t.name for t in (await client.list_tools()).tools]
        called = await client.call_tool("vault_ls", {})
    payload = storage.tokens.access_token.split(".")[1]
    claims = json.loads(base64.urlsafe_b64decode(payload + "=" * (-len(payload) % 4)))
    print(
        json.dumps(
            {
                "tools": tools,
                "is_error": bool(called.is_error),
                "aud": claims.get("aud"),
                "scope": claims.get("scope"),
            }
        )
    )


asyncio.run(main())
