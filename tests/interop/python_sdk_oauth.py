#!/usr/bin/env python3
"""The official Python SDK's client (mcp 2.x) with its OAuthClientProvider logs in to our server
in OAuth resource server mode (--auth-config) through the whole MCP authorization flow, against a
small authorization server this script runs:

401 with resource_metadata -> protected resource metadata -> RFC 8414 metadata -> dynamic client
registration -> authorization with PKCE S256 and the resource parameter (answered at once with a
redirect, as a headless CI run needs) -> token -> the call; then a tool that needs another scope
-> 403 insufficient_scope -> step-up authorization -> the call succeeds. The server fetches the
authorization server's metadata and key set itself and checks every JWT (typ at+jwt, signature,
iss, aud, exp, scopes).

The authorization server signs RS256, PS256, ES256 or EdDSA (Ed25519) access tokens (argument
ALG) with a key made by `cryptography` at start. It checks what it receives: PKCE, the redirect URI, the resource.

Usage: python_sdk_oauth.py BINARY ALG   (ALG: RS256, PS256, ES256 or EdDSA)
"""
import asyncio
import base64
import hashlib
import http.client
import json
import os
import secrets
import socket
import subprocess
import sys
import tempfile
import threading
import time
import urllib.parse
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer

import httpx2
from cryptography.hazmat.primitives import hashes
from cryptography.hazmat.primitives.asymmetric import ec, ed25519, padding, rsa
from cryptography.hazmat.primitives.asymmetric.utils import decode_dss_signature

from mcp.client.auth import AuthorizationCodeResult, OAuthClientProvider
from mcp.client.client import Client
from mcp.client.streamable_http import streamable_http_client
from mcp.shared.auth import OAuthClientInformationFull, OAuthClientMetadata, OAuthToken

EXPECTED = "This is a simple text response for testing."


def b64url(data: bytes) -> str:
    return base64.urlsafe_b64encode(data).rstrip(b"=").decode()


def uint(n: int, length: int | None = None) -> str:
    length = length or (n.bit_length() + 7) // 8
    return b64url(n.to_bytes(length, "big"))


class Signer:
    def __init__(self, alg: str):
        self.alg = alg
        if alg in ("RS256", "PS256"):
            self.key = rsa.generate_private_key(public_exponent=65537, key_size=2048)
            numbers = self.key.public_key().public_numbers()
            self.jwk = {"kty": "RSA", "kid": "rsa-1", "alg": alg, "use": "sig",
                        "n": uint(numbers.n), "e": uint(numbers.e)}
        elif alg == "EdDSA":
            self.key = ed25519.Ed25519PrivateKey.generate()
            raw = self.key.public_key().public_bytes_raw()
            self.jwk = {"kty": "OKP", "kid": "ed-1", "alg": "EdDSA", "use": "sig", "crv": "Ed25519",
                        "x": b64url(raw)}
        else:
            self.key = ec.generate_private_key(ec.SECP256R1())
            numbers = self.key.public_key().public_numbers()
            self.jwk = {"kty": "EC", "kid": "ec-1", "alg": "ES256", "use": "sig", "crv": "P-256",
                        "x": uint(numbers.x, 32), "y": uint(numbers.y, 32)}

    def sign(self, claims: dict) -> str:
        header = {"alg": self.alg, "typ": "at+jwt", "kid": self.jwk["kid"]}
        signing_input = f"{b64url(json.dumps(header).encode())}.{b64url(json.dumps(claims).encode())}"
        if self.alg == "RS256":
            signature = self.key.sign(signing_input.encode(), padding.PKCS1v15(), hashes.SHA256())
        elif self.alg == "PS256":
            # RFC 7518 §3.5: MGF1 with SHA-256, a salt as long as the hash.
            pss = padding.PSS(mgf=padding.MGF1(hashes.SHA256()), salt_length=32)
            signature = self.key.sign(signing_input.encode(), pss, hashes.SHA256())
        elif self.alg == "EdDSA":
            signature = self.key.sign(signing_input.encode())
        else:
            r, s = decode_dss_signature(self.key.sign(signing_input.encode(), ec.ECDSA(hashes.SHA256())))
            signature = r.to_bytes(32, "big") + s.to_bytes(32, "big")
        return f"{signing_input}.{b64url(signature)}"


class AuthorizationServer:
    """RFC 8414 metadata, RFC 7591 registration, authorization (PKCE S256, immediate redirect),
    token, JWKS. Records what happened for the checks at the end."""

    def __init__(self, alg: str):
        self.signer = Signer(alg)
        self.clients: dict[str, dict] = {}
        self.codes: dict[str, dict] = {}
        self.authorizations: list[dict] = []
        self.jwks_fetches = 0
        self.httpd = ThreadingHTTPServer(("127.0.0.1", 0), self.handler())
        self.issuer = f"http://127.0.0.1:{self.httpd.server_address[1]}/as"
        threading.Thread(target=self.httpd.serve_forever, daemon=True).start()

    def metadata(self) -> dict:
        iss = self.issuer
        return {
            "issuer": iss,
            "authorization_endpoint": f"{iss}/authorize",
            "token_endpoint": f"{iss}/token",
            "registration_endpoint": f"{iss}/register",
            "jwks_uri": f"{iss}/jwks",
            "response_types_supported": ["code"],
            "grant_types_supported": ["authorization_code"],
            "code_challenge_methods_supported": ["S256"],
            "token_endpoint_auth_methods_supported": ["client_secret_post", "client_secret_basic", "none"],
            "scopes_supported": ["mcp", "tools:call"],
        }

    def handler(self):
        server = self

        class Handler(BaseHTTPRequestHandler):
            def log_message(self, *args):
                pass

            def reply(self, status: int, body: dict | None = None, headers: dict | None = None):
                data = json.dumps(body).encode() if body is not None else b""
                self.send_response(status)
                for name, value in (headers or {}).items():
                    self.send_header(name, value)
                if body is not None:
                    self.send_header("Content-Type", "application/json")
                self.send_header("Content-Length", str(len(data)))
                self.end_headers()
                self.wfile.write(data)

            def do_GET(self):
                url = urllib.parse.urlsplit(self.path)
                query = dict(urllib.parse.parse_qsl(url.query))
                if url.path == "/.well-known/oauth-authorization-server/as":
                    self.reply(200, server.metadata())
                elif url.path == "/as/jwks":
                    server.jwks_fetches += 1
                    self.reply(200, {"keys": [server.signer.jwk]})
                elif url.path == "/as/authorize":
                    client = server.clients.get(query.get("client_id", ""))
                    ok = (client is not None
                          and query.get("redirect_uri") in client["redirect_uris"]
                          and query.get("response_type") == "code"
                          and query.get("code_challenge_method") == "S256"
                          and query.get("code_challenge"))
                    if not ok:
                        self.reply(400, {"error": "invalid_request"})
                        return
                    server.authorizations.append(query)
                    code = secrets.token_urlsafe(16)
                    server.codes[code] = query
                    location = query["redirect_uri"] + "?" + urllib.parse.urlencode(
                        {"code": code, "state": query.get("state", ""), "iss": server.issuer})
                    self.reply(302, None, {"Location": location})
                else:
                    self.reply(404, {"error": "not_found"})

            def do_POST(self):
                length = int(self.headers.get("Content-Length", "0"))
                body = self.rfile.read(length).decode()
                if self.path == "/as/register":
                    request = json.loads(body)
                    client_id = secrets.token_urlsafe(8)
                    client = dict(request, client_id=client_id, client_secret=secrets.token_urlsafe(16),
                                  client_id_issued_at=int(time.time()))
                    server.clients[client_id] = client
                    self.reply(201, client)
                elif self.path == "/as/token":
                    form = dict(urllib.parse.parse_qsl(body))
                    grant = server.codes.pop(form.get("code", ""), None)
                    verifier = form.get("code_verifier", "")
                    challenge = b64url(hashlib.sha256(verifier.encode()).digest())
                    if (grant is None or form.get("grant_type") != "authorization_code"
                            or challenge != grant["code_challenge"]
                            or form.get("redirect_uri") != grant["redirect_uri"]
                            or form.get("resource") != grant.get("resource")):
                        self.reply(400, {"error": "invalid_grant"})
                        return
                    now = int(time.time())
                    scope = grant.get("scope", "")
                    token = server.signer.sign({
                        "iss": server.issuer, "aud": grant["resource"], "sub": "interop-user",
                        "client_id": grant["client_id"], "scope": scope, "iat": now, "exp": now + 600,
                    })
                    self.reply(200, {"access_token": token, "token_type": "Bearer",
                                     "expires_in": 600, "scope": scope})
                else:
                    self.reply(404, {"error": "not_found"})

        return Handler


class MemoryStorage:
    def __init__(self):
        self.tokens: OAuthToken | None = None
        self.client: OAuthClientInformationFull | None = None

    async def get_tokens(self):
        return self.tokens

    async def set_tokens(self, tokens):
        self.tokens = tokens

    async def get_client_info(self):
        return self.client

    async def set_client_info(self, client_info):
        self.client = client_info


def free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


def start_server(binary: str, auth: AuthorizationServer, folder: str) -> tuple[subprocess.Popen, str]:
    port = free_port()
    url = f"http://localhost:{port}/mcp"
    config = {
        "resource": url,
        "authorization_servers": [{"issuer": auth.issuer}],
        "algorithms": [auth.signer.alg],
        "scopes": {"required": ["mcp"], "tools": {"test_simple_text": ["tools:call"]}},
    }
    path = os.path.join(folder, "auth.json")
    with open(path, "w") as f:
        json.dump(config, f)
    process = subprocess.Popen(
        [binary, "--serve-mcp", "conformance", "--http", "--port", str(port), "--auth-config", path],
        stderr=subprocess.PIPE, stdin=subprocess.DEVNULL, stdout=subprocess.DEVNULL, text=True)
    line = process.stderr.readline()
    assert "Streamable HTTP on" in line, f"the server did not start: {line}"
    return process, url


async def log_in_and_call(url: str, auth: AuthorizationServer, mode: str) -> None:
    redirect: dict[str, str] = {}

    async def redirect_handler(authorization_url: str) -> None:
        # What a browser does: follow the authorization URL; the server redirects at once.
        parts = urllib.parse.urlsplit(authorization_url)
        connection = http.client.HTTPConnection(parts.hostname, parts.port, timeout=10)
        connection.request("GET", f"{parts.path}?{parts.query}")
        response = connection.getresponse()
        assert response.status == 302, f"authorization refused: {response.status} {response.read()!r}"
        location = urllib.parse.urlsplit(response.getheader("Location"))
        redirect.update(urllib.parse.parse_qsl(location.query))

    async def callback_handler() -> AuthorizationCodeResult:
        return AuthorizationCodeResult(code=redirect["code"], state=redirect.get("state"), iss=redirect.get("iss"))

    provider = OAuthClientProvider(
        server_url=url,
        client_metadata=OAuthClientMetadata(
            client_name="agentteams interop",
            redirect_uris=["http://127.0.0.1:1/callback"],
            grant_types=["authorization_code"],
            response_types=["code"],
        ),
        storage=MemoryStorage(),
        redirect_handler=redirect_handler,
        callback_handler=callback_handler,
    )
    before = len(auth.authorizations)
    async with httpx2.AsyncClient(auth=provider, timeout=30) as http_client:
        async with Client(streamable_http_client(url, http_client=http_client), mode=mode) as client:
            tools = await client.list_tools()
            names = {t.name for t in tools.tools}
            assert "test_simple_text" in names, f"{mode}: {names}"
            first = auth.authorizations[before:]
            assert len(first) == 1, f"{mode}: {len(first)} authorizations before the call"
            assert first[0].get("scope") == "mcp", f"{mode}: first scope {first[0].get('scope')!r}"
            assert first[0].get("resource") == url, f"{mode}: resource {first[0].get('resource')!r}"
            result = await client.call_tool("test_simple_text", {})
            assert not result.is_error, f"{mode}: {result}"
            assert result.content[0].text == EXPECTED, f"{mode}: {result.content[0].text!r}"
            step_up = auth.authorizations[before + 1:]
            assert len(step_up) == 1, f"{mode}: {len(step_up)} step-up authorizations"
            assert set(step_up[0].get("scope", "").split()) == {"mcp", "tools:call"}, step_up[0]
    print(f"python SDK OAuth ({auth.signer.alg}, mode {mode}): logged in, stepped up to tools:call, called: ok")


def main() -> None:
    binary, alg = sys.argv[1], sys.argv[2]
    auth = AuthorizationServer(alg)
    with tempfile.TemporaryDirectory() as folder:
        process, url = start_server(binary, auth, folder)
        try:
            for mode in ("legacy", "auto"):
                asyncio.run(log_in_and_call(url, auth, mode))
            assert auth.jwks_fetches == 1, f"the key set was fetched {auth.jwks_fetches} times"
        finally:
            process.kill()
            process.wait()


if __name__ == "__main__":
    main()
