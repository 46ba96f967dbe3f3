"""A minimal MCP client over stdio (newline-delimited JSON-RPC), shared by the gitread benchmarks.

No SDK: one process, one buffered reader (readline() on an unbuffered pipe costs one read(2) per
byte), requests answered in order. Server-to-client notifications (logging, progress) and requests
are skipped while waiting for a reply; a server request gets a "method not found" error back.

    server = StdioServer(["agentteams-mcp", "--serve-mcp", "gitread", "--root", repo])
    tools = server.tools()                    # name -> inputSchema
    call = server.call("git_log", {"n": 3})   # Call: .text, .bytes, .is_error, .result
    server.close()
"""
import json
import subprocess

PROTOCOL_VERSION = "2025-06-18"


class ServerError(Exception):
    """A JSON-RPC error reply, or a server that closed its output."""


class Call:
    """One tools/call: the result as received, its text content and the size of that text."""

    def __init__(self, tool, arguments, result):
        self.tool = tool
        self.arguments = arguments
        self.result = result
        texts = [c.get("text", "") for c in result.get("content", []) if c.get("type") == "text"]
        self.text = "".join(texts)
        # The bytes an agent reads: the text content as the client receives it, in UTF-8.
        self.bytes = len(self.text.encode("utf-8"))
        self.is_error = bool(result.get("isError"))

    def output(self):
        """The text with gitread's `{"output": "..."}` envelope (the reference's form) taken off,
        for checking what the reply says; byte counts always use `text` as received."""
        if self.text.startswith("{"):
            try:
                value = json.loads(self.text)
            except ValueError:
                return self.text
            if isinstance(value, dict) and isinstance(value.get("output"), str):
                return value["output"]
        return self.text

    def summary(self):
        return {"tool": self.tool, "arguments": self.arguments, "bytes": self.bytes,
                "isError": self.is_error}


class StdioServer:
    def __init__(self, argv, env=None, cwd=None, client_name="gitread-bench"):
        self.argv = argv
        self.proc = subprocess.Popen(argv, env=env, cwd=cwd, stdin=subprocess.PIPE,
                                     stdout=subprocess.PIPE)
        self.next_id = 0
        self.init = self.request("initialize", {
            "protocolVersion": PROTOCOL_VERSION, "capabilities": {},
            "clientInfo": {"name": client_name, "version": "1"}})
        self._send({"jsonrpc": "2.0", "method": "notifications/initialized"})
        self._tools = None

    def _send(self, message):
        self.proc.stdin.write((json.dumps(message) + "\n").encode())
        self.proc.stdin.flush()

    def request(self, method, params):
        """Send one request and return its result; raise ServerError on an error reply."""
        self.next_id += 1
        rid = self.next_id
        self._send({"jsonrpc": "2.0", "id": rid, "method": method, "params": params})
        while True:
            line = self.proc.stdout.readline()
            if not line:
                raise ServerError(f"{self.argv[0]} closed its output (exit {self.proc.poll()})")
            if not line.strip():
                continue
            reply = json.loads(line)
            if "method" in reply:  # a notification or a request from the server
                if "id" in reply:
                    self._send({"jsonrpc": "2.0", "id": reply["id"],
                                "error": {"code": -32601, "message": "not supported"}})
                continue
            if reply.get("id") != rid:
                continue
            if "error" in reply:
                raise ServerError(reply["error"])
            return reply["result"]

    def server_info(self):
        return self.init.get("serverInfo", {})

    def tools(self):
        """name -> inputSchema, from tools/list (all pages)."""
        if self._tools is None:
            tools, cursor = {}, None
            while True:
                page = self.request("tools/list", {"cursor": cursor} if cursor else {})
                for t in page.get("tools", []):
                    tools[t["name"]] = t.get("inputSchema", {})
                cursor = page.get("nextCursor")
                if not cursor:
                    break
            self._tools = tools
        return self._tools

    def has(self, tool, *arguments):
        """Whether tools/list declares the tool and each named argument."""
        schema = self.tools().get(tool)
        if schema is None:
            return False
        props = schema.get("properties", {})
        return all(a in props for a in arguments)

    def missing(self, tool, *arguments):
        """None when the tool and arguments are declared, else a note such as
        'needs tool git_refs' or 'needs git_log argument author'."""
        if tool not in self.tools():
            return f"needs tool {tool}"
        props = self.tools()[tool].get("properties", {})
        absent = [a for a in arguments if a not in props]
        if absent:
            return f"needs {tool} argument{'s' if len(absent) > 1 else ''} {', '.join(absent)}"
        return None

    def call(self, tool, arguments):
        return Call(tool, arguments, self.request("tools/call", {"name": tool, "arguments": arguments}))

    def close(self):
        try:
            self.proc.stdin.close()
            self.proc.wait(timeout=10)
        except subprocess.TimeoutExpired:
            self.proc.kill()
            self.proc.wait()
