#!/usr/bin/env python3
"""Interop check: the official Python SDK (mcp 2.x) lists and reads gitread's and recall's
resources, gets their prompts and asks completions, over stdio and over Streamable HTTP, in the
2026-07-28 era (mode auto) and the legacy era (mode legacy).

Usage:
  python_sdk_features.py gitread REPO TARGET...   (REPO: interop fixture repository of stdio.sh)
  python_sdk_features.py recall PROJECT TARGET... (PROJECT: holds the indexes of one memory note)
TARGET is `stdio:BINARY` (the script starts `BINARY --serve-mcp SERVER --root ROOT`) or an
http:// URL of the same server already running. Exit 0 when every check passes.
"""
import asyncio
import sys

from mcp import Client, StdioServerParameters
from mcp.types import PromptReference, ResourceTemplateReference


def text_of(contents):
    return "".join(getattr(c, "text", "") or "" for c in contents)


async def gitread(client, mode):
    templates = {t.uriTemplate if hasattr(t, "uriTemplate") else t.uri_template
                 for t in (await client.list_resource_templates()).resource_templates}
    for template in ("gitread://file/{rev}/{+path}", "gitread://commit/{rev}",
                     "gitread://diff/{base}/{head}"):
        assert template in templates, f"{mode}: {template} not in {templates}"
    read = await client.read_resource("gitread://file/HEAD~1/a.txt")
    assert text_of(read.contents) == "one\n", f"{mode}: file resource: {read.contents}"
    commit = text_of((await client.read_resource("gitread://commit/HEAD")).contents)
    assert "big file" in commit, f"{mode}: commit resource: {commit[:200]!r}"
    prompts = {p.name for p in (await client.list_prompts()).prompts}
    assert {"explain_commit", "review_diff"} <= prompts, f"{mode}: prompts {prompts}"
    prompt = await client.get_prompt("explain_commit", {"rev": "HEAD"})
    embedded = [m.content.resource for m in prompt.messages if getattr(m.content, "type", "") == "resource"]
    assert embedded and "big file" in embedded[0].text, f"{mode}: explain_commit: {prompt.messages}"
    file_ref = ResourceTemplateReference(type="ref/resource", uri="gitread://file/{rev}/{+path}")
    revs = (await client.complete(file_ref, {"name": "rev", "value": "v"})).completion.values
    assert "v1.0" in revs, f"{mode}: rev completion {revs}"
    paths = (await client.complete(file_ref, {"name": "path", "value": "b"},
                                   context_arguments={"rev": "HEAD"})).completion.values
    assert paths == ["big.txt"], f"{mode}: path completion {paths}"
    prompt_ref = PromptReference(type="ref/prompt", name="review_diff")
    heads = (await client.complete(prompt_ref, {"name": "head", "value": "ma"})).completion.values
    assert "main" in heads, f"{mode}: prompt argument completion {heads}"


async def recall(client, mode):
    templates = {t.uriTemplate if hasattr(t, "uriTemplate") else t.uri_template
                 for t in (await client.list_resource_templates()).resource_templates}
    assert "recall://memory/{id}" in templates, f"{mode}: templates {templates}"
    read = text_of((await client.read_resource("recall://memory/0")).contents)
    assert read.startswith("Sprocket plan\npath: references/plans/sprocket.md"), f"{mode}: {read[:200]!r}"
    prompt = await client.get_prompt("ask_team", {"question": "sprocket sizing"})
    embedded = [m.content.resource for m in prompt.messages if getattr(m.content, "type", "") == "resource"]
    assert embedded and "sprocket" in embedded[0].text.lower(), f"{mode}: ask_team: {prompt.messages}"
    ids = (await client.complete(ResourceTemplateReference(type="ref/resource", uri="recall://memory/{id}"),
                                 {"name": "id", "value": ""})).completion.values
    assert ids == ["0-sprocket-plan"], f"{mode}: id completion {ids}"
    read = text_of((await client.read_resource(f"recall://memory/{ids[0]}")).contents)
    assert read.startswith("Sprocket plan\n"), f"{mode}: read by the completed id: {read[:200]!r}"


async def run(server, root, target, mode):
    if target.startswith("stdio:"):
        params = StdioServerParameters(command=target[len("stdio:"):],
                                       args=["--serve-mcp", server, "--root", root])
    else:
        params = target
    async with Client(params, mode=mode) as client:
        await (gitread if server == "gitread" else recall)(client, mode)
    print(f"ok: {server} resources, prompts and completion, {target.split(':')[0]}, mode={mode}")


async def main():
    server, root, *targets = sys.argv[1:]
    assert server in ("gitread", "recall") and targets, __doc__
    for target in targets:
        for mode in ("auto", "legacy"):
            await asyncio.wait_for(run(server, root, target, mode), timeout=60)


if __name__ == "__main__":
    asyncio.run(main())
