#!/usr/bin/env python3
"""Interop check: the official Python SDK (mcp 2.x) drives agentteams-mcp over stdio in both eras.

mode="auto" probes server/discover and stays in the 2026-07-28 era against this server;
mode="legacy" does the initialize handshake. Both must list the tools and call one.

Usage: python_sdk.py BINARY SERVER ROOT TOOL ARGS_JSON EXPECTED_TEXT_FRAGMENT
Exit 0 when every check passes; prints what failed otherwise.
"""
import asyncio, json, sys

from mcp import Client, StdioServerParameters


async def check(mode, params, tool, args, fragment):
    async with Client(params, mode=mode) as client:
        tools = await client.list_tools()
        names = [t.name for t in tools.tools]
        assert tool in names, f"{mode}: {tool} not in {names}"
        result = await client.call_tool(tool, args)
        text = "".join(getattr(c, "text", "") for c in result.content)
        assert fragment in text, f"{mode}: {fragment!r} not in {text[:300]!r}"
        era = getattr(client.session, "protocol_version", None) or "?"
        print(f"ok: mode={mode} tools={len(names)} call={tool} is_error={result.is_error}")


async def main():
    binary, server, root, tool, args, fragment = sys.argv[1:7]
    params = StdioServerParameters(command=binary, args=["--serve-mcp", server, "--root", root])
    for mode in ("auto", "legacy"):
        await asyncio.wait_for(check(mode, params, tool, json.loads(args), fragment), timeout=30)


if __name__ == "__main__":
    asyncio.run(main())
