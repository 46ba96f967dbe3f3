#!/usr/bin/env python3
"""The official Python SDK's Client (mcp 2.x) against a running Streamable HTTP server, in each
connect mode: `auto` (probes server/discover, so it lands in the 2026-07-28 era), `legacy`
(initialize, session) and `2026-07-28`. Fails unless every mode lists the tools and calls
test_simple_text with the fixture's text.

Usage: python_sdk_http.py URL
"""
import asyncio
import sys

from mcp.client.client import Client

EXPECTED = "This is a simple text response for testing."


async def check(url: str, mode: str) -> None:
    async with Client(url, mode=mode) as client:
        tools = await client.list_tools()
        names = {t.name for t in tools.tools}
        assert "test_simple_text" in names, f"{mode}: tools/list lacks the fixture tool: {names}"
        result = await client.call_tool("test_simple_text", {})
        assert not result.is_error, f"{mode}: {result}"
        text = result.content[0].text
        assert text == EXPECTED, f"{mode}: unexpected text {text!r}"
        print(f"python SDK over HTTP, mode {mode}: ok")


def main() -> None:
    url = sys.argv[1]
    for mode in ("auto", "legacy", "2026-07-28"):
        asyncio.run(check(url, mode))


if __name__ == "__main__":
    main()
