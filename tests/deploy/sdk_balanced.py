#!/usr/bin/env python3
"""The official Python SDK's Client (mcp 2.x) over https through a load balancer in front of
several replicas: in legacy-session and in 2026-07-28 mode, two dozen tools/call requests each,
every reply checked. In the first mode the replica whose pid is given is killed (SIGKILL) after a
third of the calls: every call after it must still succeed (the balancer routes around it and the
remaining replicas accept the session, sealed with the shared key).

Usage: sdk_balanced.py URL PID_TO_KILL   (trust for https: SSL_CERT_FILE, the test's CA)
       sdk_balanced.py URL --expect-refusal (SSL_CERT_FILE names another CA: must not connect)
"""
import asyncio
import os
import signal
import sys

from mcp.client.client import Client

EXPECTED = "This is a simple text response for testing."
CALLS = 24
# Seconds between the kill and the next call.
KILL_SETTLE = 0.5


async def run(url: str, mode: str, kill_pid: int) -> None:
    async with Client(url, mode=mode) as client:
        for i in range(CALLS):
            if kill_pid and i == CALLS // 3:
                os.kill(kill_pid, signal.SIGKILL)
                print(f"{mode}: killed replica pid {kill_pid} after {i} calls")
                # Between two calls, as a crash usually falls: the balancer sees its pooled
                # connections to the dead replica close. A call sent in the same instant could
                # fail (the balancer cannot tell whether it ran, and does not replay a POST);
                # docs/deploy.md says so.
                await asyncio.sleep(KILL_SETTLE)
            result = await client.call_tool("test_simple_text", {})
            assert not result.is_error, f"{mode}: call {i}: {result}"
            text = result.content[0].text
            assert text == EXPECTED, f"{mode}: call {i}: unexpected text {text!r}"
        print(f"python SDK over {url}, mode {mode}: {CALLS} calls ok")


def describe(e: BaseException) -> str:
    """The messages of an exception, its causes and (for a group) its members."""
    parts = [repr(e)]
    for inner in [e.__cause__, e.__context__, *getattr(e, "exceptions", ())]:
        if inner is not None:
            parts.append(describe(inner))
    return " | ".join(parts)


async def refused(url: str) -> None:
    try:
        async with Client(url, mode="legacy") as client:
            await client.list_tools()
    except Exception as e:  # the SDK wraps the TLS failure in its own errors
        assert "CERTIFICATE_VERIFY_FAILED" in describe(e), f"not a TLS refusal: {describe(e)}"
        print("python SDK refused the certificate: CERTIFICATE_VERIFY_FAILED")
        return
    raise AssertionError(f"{url}: connected although the certificate does not verify")


def main() -> None:
    if sys.argv[2] == "--expect-refusal":
        asyncio.run(refused(sys.argv[1]))
        return
    url, kill_pid = sys.argv[1], int(sys.argv[2])
    asyncio.run(run(url, "legacy", kill_pid))
    asyncio.run(run(url, "2026-07-28", 0))


if __name__ == "__main__":
    main()
