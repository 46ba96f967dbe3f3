#!/usr/bin/env python3
"""The official Python SDK (mcp 2.x) serving the same trivial tool as the fixture server
(`test_simple_text`) over Streamable HTTP at /mcp, with the SDK's default configuration
(stateful sessions, SSE replies).

Usage: python_peer.py PORT   (needs `pip install mcp==2.3.0 uvicorn`)
"""
import sys

from mcp.server.mcpserver import MCPServer

port = int(sys.argv[1]) if len(sys.argv) > 1 else 8002
server = MCPServer("python-peer", log_level="WARNING")


@server.tool(description="Returns one text block.")
def test_simple_text() -> str:
    return "This is a simple text response for testing."


if __name__ == "__main__":
    server.run(transport="streamable-http", host="127.0.0.1", port=port)
