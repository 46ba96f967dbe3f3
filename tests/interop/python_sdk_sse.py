#!/usr/bin/env python3
"""The official Python SDK's HTTP+SSE client (2024-11-05 transport, `mcp.client.sse.sse_client`)
against a server run with `--legacy-sse`: initialize, list the tools and call test_simple_text.

Usage: python_sdk_sse.py BASE_URL   (e.g. http://localhost:PORT; the client opens BASE_URL/sse)
"""
import asyncio
import sys

from mcp.client.session import ClientSession
from mcp.client.sse import sse_client

EXPECTED = "This is a simple text response for testing."


async def check(base: str) -> None:
    async with sse_client(f"{base}/sse") as (read, write):
        async with ClientSession(read, write) as session:
            await session.initialize()
            tools = await session.list_tools()
            names = {t.name for t in tools.tools}
            assert "test_simple_text" in names, f"tools/list lacks the fixture tool: {names}"
            result = await session.call_tool("test_simple_text", {})
            assert not result.is_error, result
            assert result.content[0].text == EXPECTED, result
    print("python SDK over HTTP+SSE (2024-11-05): ok")


if __name__ == "__main__":
    asyncio.run(check(sys.argv[1]))
