"""Stream resumption through a balancer (tests/deploy): a POST stream is closed by its replica
(SEP-1699 polling, the fixture's test_reconnection) and resumed with GET + Last-Event-ID, four
times, through a round-robin balancer that must route each GET to the replica named by the
event id's first field; any other replica would answer 421. A Last-Event-ID naming no replica
the balancer knows reaches some replica, which refuses it with 421.

usage: resume_balanced.py URL CA_FILE   (python3, standard library only)
"""

import http.client
import json
import ssl
import sys
import urllib.parse

url = urllib.parse.urlsplit(sys.argv[1])
context = ssl.create_default_context(cafile=sys.argv[2])


def request(method, headers, body=None):
    """One request on a fresh connection: (status, headers, whole body as text)."""
    conn = http.client.HTTPSConnection(url.hostname, url.port, context=context, timeout=20)
    conn.request(method, url.path, body=body, headers=headers)
    response = conn.getresponse()
    text = response.read().decode()
    conn.close()
    return response.status, response, text


def events(text):
    """(id, data) of each SSE event in text."""
    out = []
    for block in text.split("\n\n"):
        fields = dict(
            line.split(": ", 1) if ": " in line else (line.rstrip(":"), "")
            for line in block.splitlines()
            if line and not line.startswith(":")
        )
        if fields:
            out.append((fields.get("id"), fields.get("data", "")))
    return out


post = {"Accept": "application/json, text/event-stream", "Content-Type": "application/json"}
init = {
    "jsonrpc": "2.0",
    "id": 1,
    "method": "initialize",
    "params": {
        "protocolVersion": "2025-11-25",
        "capabilities": {},
        "clientInfo": {"name": "resume-balanced", "version": "1"},
    },
}
status, response, text = request("POST", post, json.dumps(init))
assert status == 200, (status, text)
session = {"Mcp-Session-Id": response.getheader("mcp-session-id"), "MCP-Protocol-Version": "2025-11-25"}
note = {"jsonrpc": "2.0", "method": "notifications/initialized"}
assert request("POST", {**post, **session}, json.dumps(note))[0] == 202

call = {"jsonrpc": "2.0", "id": 2, "method": "tools/call",
        "params": {"name": "test_reconnection", "arguments": {}}}
status, _, text = request("POST", {**post, **session}, json.dumps(call))
assert status == 200, (status, text)
posted = events(text)
assert len(posted) == 1 and posted[0][1] == "", f"expected only a priming event: {text!r}"
last_id = posted[0][0]
replica = last_id.split(".")[0]
print(f"POST stream closed after its priming event {last_id}")

get = {"Accept": "text/event-stream", **session}
for attempt in range(4):
    status, _, text = request("GET", {**get, "Last-Event-ID": last_id})
    assert status == 200, f"resumption {attempt + 1} answered {status}: {text}"
    replies = [json.loads(data) for _, data in events(text) if data]
    assert [r.get("id") for r in replies] == [2], text
    assert "Reconnection test completed" in json.dumps(replies[0]), text
    print(f"resumption {attempt + 1} reached {replica} and replayed the response")

stray = "nowhere." + ".".join(last_id.split(".")[1:])
status, _, text = request("GET", {**get, "Last-Event-ID": stray})
assert status == 421 and "nowhere" in text, (status, text)
print("an id naming no known replica is refused with 421")
