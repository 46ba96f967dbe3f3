#!/usr/bin/env python3
"""Interop check: the official Python SDK (mcp 2.x) drives agentteams-mcp over stdio in both eras.

mode="auto" probes server/discover and stays in the 2026-07-28 era against this server;
mode="legacy" does the initialize handshake. Both must list the tools and make every call given;
a call's text must hold its fragment (prefixed `ERROR:` when the call must fail), and where the tool declares an outputSchema (the SDK then
validates structuredContent against it) a successful call's structured content must be its text: gitread's `output` is the text
itself, recall's text is its structured result as JSON.

Usage: python_sdk.py BINARY SERVER ROOT (TOOL ARGS_JSON EXPECTED_TEXT_FRAGMENT)...
Exit 0 when every check passes; prints what failed otherwise.
"""
import asyncio, json, sys

from mcp import Client, StdioServerParameters


# A fragment starting with this is expected in an error result.
ERROR = "ERROR:"


async def check(mode, params, calls):
    async with Client(params, mode=mode) as client:
        tools = await client.list_tools()
        declared = {t.name: t for t in tools.tools}
        for tool, args, fragment in calls:
            assert tool in declared, f"{mode}: {tool} not in {sorted(declared)}"
            result = await client.call_tool(tool, args)
            wants_error = fragment.startswith(ERROR)
            fragment = fragment.removeprefix(ERROR)
            assert bool(result.is_error) == wants_error, f"{mode}: {tool} {args}: is_error={result.is_error}: {result.content}"
            text = "".join(getattr(c, "text", "") for c in result.content)
            assert fragment in text, f"{mode}: {tool}: {fragment!r} not in {text[:300]!r}"
            structured = getattr(result, "structured_content", None)
            if structured is None:
                structured = getattr(result, "structuredContent", None)
            schema = getattr(declared[tool], "output_schema", None) or getattr(declared[tool], "outputSchema", None)
            if schema and not result.is_error:
                assert structured is not None, f"{mode}: {tool} declares an outputSchema but sent no structuredContent"
                # gitread repeats its plain text as `output`; recall's text is its result as JSON.
                same = structured.get("output") == text if "output" in structured else json.loads(text) == structured
                assert same, f"{mode}: {tool}: structured content differs from the text"
            print(f"ok: mode={mode} tools={len(declared)} call={tool} structured={structured is not None}")


async def main():
    binary, server, root = sys.argv[1:4]
    rest = sys.argv[4:]
    assert rest and len(rest) % 3 == 0, "calls come as TOOL ARGS_JSON FRAGMENT triples"
    calls = [(rest[i], json.loads(rest[i + 1]), rest[i + 2]) for i in range(0, len(rest), 3)]
    params = StdioServerParameters(command=binary, args=["--serve-mcp", server, "--root", root])
    for mode in ("auto", "legacy"):
        await asyncio.wait_for(check(mode, params, calls), timeout=60)


if __name__ == "__main__":
    asyncio.run(main())
