"""OAuth lab: an authorization server built on the Python `mcp` SDK's own
`mcp.server.auth` routes (mcp 2.3.0), in front of an SDK-protected MCP resource server.

    py_sdk_as.py [--approve auto|form] [--access-token-ttl S] [--refresh always|never]
                 [--client-credentials] [--issuer-style example|string|mixed] [--scopes read,write]
                 [--as-port N] [--rs-port N]

One process, two loopback listeners (both ephemeral by default):

* the authorization server (AS): `create_auth_routes(...)` of the SDK, unchanged — RFC 8414
  metadata at `/.well-known/oauth-authorization-server`, `/authorize`, `/token`, `/register`
  (dynamic registration, RFC 7591, the SDK's handler: default method client_secret_post),
  `/revoke`. The SDK's `ClientAuthenticator` is what runs for every token request: it reads
  `client_id` from the form even with HTTP Basic ("Missing client_id" otherwise) and enforces
  the client's *registered* method.
* the resource server (RS): an `MCPServer` with `AuthSettings(issuer_url, resource_server_url,
  required_scopes, validate_token_resource=True)` and a verifier that asks the provider (so
  tokens are opaque and revocable); the SDK serves RFC 9728 metadata at the path-inserted
  `/.well-known/oauth-protected-resource/mcp`.

Pre-registered clients (CLIENTS below): `sdk-basic` (client_secret_basic), `sdk-post`
(client_secret_post), `sdk-public` (none). Their loopback redirect `http://127.0.0.1/callback`
matches on any port (RFC 8252 §7.3); dynamically registered clients keep the SDK's exact match.

What the SDK routes cannot do, added around them (and said so):
* `client_credentials`: the SDK's token handler validates a discriminated union of
  authorization_code | refresh_token | jwt-bearer and answers anything else 400
  invalid_request. With `--client-credentials` the `/token` route is replaced by a thin
  dispatcher: grant_type=client_credentials is served here (client authenticated by the SDK's
  own ClientAuthenticator, so the same enforcement applies), every other grant goes to the
  SDK's TokenHandler unchanged; the metadata then also lists `client_credentials`.
* a test log (`GET /_lab/log`: token requests with the client authentication that arrived,
  whether `client_id` was in the body, status and error; registrations;
  `refresh_token_replays`; `grants_revoked`), `POST /_lab/reset`, and `POST /_lab/revoke-all`
  (every access and refresh token dies: "the server now refuses the saved token").
* refresh-token rotation with reuse detection: a rotated-out refresh token presented again is
  counted in `refresh_token_replays` and revokes its whole grant (as oidc-provider does).

Approval: `--approve auto` (default) makes `/authorize` redirect straight to the callback with
the code (like the conformance suite); `--approve form` redirects to `/lab/approve/<id>`, a page
with two forms (hidden `decision` = approve | deny) that the project's scripted browser
(tests/kit/src/oauth_browser.rs) already knows how to submit.

Issuer (`--issuer-style`): by default the SDK example's way, `AnyHttpUrl("http://127.0.0.1:P")`
on both sides, so AS metadata and RS metadata both say `http://127.0.0.1:P/` (trailing slash).

stdout: `issuer ISSUER` (exactly as the AS metadata's `issuer`) then `listening on http://127.0.0.1:RS_PORT/mcp` once both accept
connections (the harness's readiness line). The issuer is also the RS metadata's
`authorization_servers[0]`. With INTEROP_EXIT_ON_STDIN_EOF=1 it exits when stdin closes.
"""

from __future__ import annotations

import argparse
import asyncio
import base64
import os
import secrets
import socket
import sys
import threading
import time
from typing import Any
from urllib.parse import urlencode, urlparse

from pydantic import AnyHttpUrl, AnyUrl
from starlette.applications import Starlette
from starlette.requests import Request
from starlette.responses import HTMLResponse, JSONResponse, RedirectResponse, Response
from starlette.routing import Route

from mcp.server.auth.handlers.metadata import MetadataHandler
from mcp.server.auth.handlers.token import TokenHandler
from mcp.server.auth.middleware.client_auth import AuthenticationError, ClientAuthenticator
from mcp.server.auth.provider import (
    AccessToken,
    AuthorizationCode,
    AuthorizationParams,
    RefreshToken,
    construct_redirect_uri,
)
from mcp.server.auth.routes import build_metadata, create_auth_routes
from mcp.server.auth.settings import AuthSettings, ClientRegistrationOptions, RevocationOptions
from mcp.server.mcpserver import MCPServer
from mcp.shared.auth import InvalidRedirectUriError, OAuthClientInformationFull, OAuthToken
from mcp.types import ToolAnnotations

SCOPES = ["read", "write", "offline_access"]


class LoopbackClient(OAuthClientInformationFull):
    """A pre-registered native client: `http://127.0.0.1/callback` matches any port."""

    def validate_redirect_uri(self, redirect_uri: AnyUrl | None) -> AnyUrl:
        if redirect_uri is not None:
            u = urlparse(str(redirect_uri))
            if u.scheme == "http" and u.hostname == "127.0.0.1" and u.path == "/callback" and not u.query:
                return redirect_uri
            raise InvalidRedirectUriError(f"Redirect URI '{redirect_uri}' not registered for client")
        raise InvalidRedirectUriError("redirect_uri must be specified")


def preregistered(client_credentials: bool) -> list[OAuthClientInformationFull]:
    grants = ["authorization_code", "refresh_token"] + (["client_credentials"] if client_credentials else [])
    common: dict[str, Any] = dict(
        redirect_uris=["http://127.0.0.1/callback"],
        grant_types=grants,
        response_types=["code"],
        scope=" ".join(SCOPES),
        client_id_issued_at=int(time.time()),
    )
    return [
        LoopbackClient(client_id="sdk-basic", client_secret="sdk-basic-secret-71c2",
                       token_endpoint_auth_method="client_secret_basic", **common),
        LoopbackClient(client_id="sdk-post", client_secret="sdk-post-secret-0a9e",
                       token_endpoint_auth_method="client_secret_post", **common),
        LoopbackClient(client_id="sdk-public", token_endpoint_auth_method="none",
                       **{**common, "grant_types": ["authorization_code", "refresh_token"]}),
    ]


class Provider:
    """In-memory OAuthAuthorizationServerProvider with rotation and reuse detection."""

    def __init__(self, issuer: str, args: argparse.Namespace) -> None:
        self.issuer = issuer
        self.args = args
        self.clients: dict[str, OAuthClientInformationFull] = {
            c.client_id: c for c in preregistered(args.client_credentials)
        }
        self.pending: dict[str, tuple[OAuthClientInformationFull, AuthorizationParams]] = {}
        self.codes: dict[str, AuthorizationCode] = {}
        self.access: dict[str, tuple[AccessToken, str]] = {}  # token -> (record, grant id)
        self.refresh: dict[str, tuple[RefreshToken, str]] = {}  # live refresh tokens
        self.spent: dict[str, str] = {}  # rotated-out refresh token -> grant id
        self.log: dict[str, Any] = {}
        self.reset_log()

    def reset_log(self) -> None:
        self.log = {"token_requests": [], "registrations": [], "authorizations": [],
                    "refresh_token_replays": 0, "grants_revoked": 0}

    # --- clients ---
    async def get_client(self, client_id: str) -> OAuthClientInformationFull | None:
        return self.clients.get(client_id)

    async def register_client(self, client_info: OAuthClientInformationFull) -> None:
        assert client_info.client_id is not None
        self.clients[client_info.client_id] = client_info
        self.log["registrations"].append({
            "client_id": client_info.client_id,
            "token_endpoint_auth_method": client_info.token_endpoint_auth_method,
            "application_type": client_info.application_type,
            "grant_types": client_info.grant_types,
            "redirect_uris": [str(u) for u in client_info.redirect_uris or []],
            "scope": client_info.scope,
            # Test-only: lets a test assert the issued secret never reaches agenthealth's output.
            "client_secret": client_info.client_secret,
        })

    # --- authorization ---
    async def authorize(self, client: OAuthClientInformationFull, params: AuthorizationParams) -> str:
        self.log["authorizations"].append({"client_id": client.client_id, "scopes": params.scopes,
                                           "resource": params.resource})
        if self.args.approve == "auto":
            return self.finish(client, params, approve=True)
        txn = secrets.token_urlsafe(16)
        self.pending[txn] = (client, params)
        return f"{self.issuer.rstrip('/')}/lab/approve/{txn}"

    def finish(self, client: OAuthClientInformationFull, params: AuthorizationParams, approve: bool) -> str:
        if not approve:
            return construct_redirect_uri(str(params.redirect_uri), error="access_denied", state=params.state)
        code = secrets.token_urlsafe(32)
        assert client.client_id is not None
        self.codes[code] = AuthorizationCode(
            code=code, scopes=params.scopes or [], expires_at=time.time() + 300, client_id=client.client_id,
            code_challenge=params.code_challenge, redirect_uri=params.redirect_uri,
            redirect_uri_provided_explicitly=params.redirect_uri_provided_explicitly,
            resource=params.resource, subject="lab-user")
        return construct_redirect_uri(str(params.redirect_uri), code=code, state=params.state)

    async def load_authorization_code(self, client: OAuthClientInformationFull, code: str) -> AuthorizationCode | None:
        return self.codes.get(code)

    def issue(self, client_id: str, scopes: list[str], resource: str | None, grant: str,
              with_refresh: bool) -> OAuthToken:
        ttl = self.args.access_token_ttl
        at = "sdk-at-" + secrets.token_urlsafe(24)
        self.access[at] = (AccessToken(token=at, client_id=client_id, scopes=scopes,
                                       expires_at=int(time.time()) + ttl, resource=resource,
                                       subject="lab-user"), grant)
        rt = None
        if with_refresh:
            rt = "sdk-rt-" + secrets.token_urlsafe(24)
            self.refresh[rt] = (RefreshToken(token=rt, client_id=client_id, scopes=scopes,
                                             resource=resource, subject="lab-user"), grant)
        return OAuthToken(access_token=at, expires_in=ttl, scope=" ".join(scopes) or None, refresh_token=rt)

    async def exchange_authorization_code(self, client: OAuthClientInformationFull, code: AuthorizationCode) -> OAuthToken:
        del self.codes[code.code]
        with_refresh = self.args.refresh == "always" and "refresh_token" in client.grant_types
        return self.issue(code.client_id, code.scopes, code.resource, secrets.token_hex(8), with_refresh)

    async def load_refresh_token(self, client: OAuthClientInformationFull, token: str) -> RefreshToken | None:
        if token in self.spent:
            # Reuse of a rotated-out refresh token: count it and kill the whole grant.
            self.log["refresh_token_replays"] += 1
            self.revoke_grant(self.spent[token])
            return None
        found = self.refresh.get(token)
        return found[0] if found else None

    async def exchange_refresh_token(self, client: OAuthClientInformationFull, refresh_token: RefreshToken,
                                     scopes: list[str]) -> OAuthToken:
        _, grant = self.refresh.pop(refresh_token.token)
        self.spent[refresh_token.token] = grant
        return self.issue(refresh_token.client_id, scopes, refresh_token.resource, grant, True)

    def revoke_grant(self, grant: str) -> None:
        self.log["grants_revoked"] += 1
        for store in (self.access, self.refresh):
            for t in [t for t, (_, g) in store.items() if g == grant]:
                del store[t]

    async def load_access_token(self, token: str) -> AccessToken | None:
        found = self.access.get(token)
        if not found or (found[0].expires_at or 0) < time.time():
            return None
        return found[0]

    async def revoke_token(self, token: AccessToken | RefreshToken) -> None:
        for store in (self.access, self.refresh):
            if token.token in store:
                self.revoke_grant(store[token.token][1])
                return

    async def exchange_identity_assertion(self, client, params):  # pragma: no cover - not offered
        raise NotImplementedError


def arrived_method(request: Request, form: Any) -> str:
    basic = request.headers.get("authorization", "").lower().startswith("basic ")
    post = "client_secret" in form
    return "multiple" if basic and post else "client_secret_basic" if basic else "client_secret_post" if post else "none"


def as_app(provider: Provider, issuer: AnyHttpUrl, args: argparse.Namespace) -> Starlette:
    reg = ClientRegistrationOptions(enabled=True, valid_scopes=SCOPES)
    rev = RevocationOptions(enabled=True)
    routes = create_auth_routes(provider, issuer, client_registration_options=reg,
                                revocation_options=rev)
    authenticator = ClientAuthenticator(provider)
    sdk_token = TokenHandler(provider, authenticator)

    async def token(request: Request) -> Response:
        form = await request.form()  # cached on the request: the SDK handler reads the same form
        entry = {"grant_type": form.get("grant_type"), "auth_method": arrived_method(request, form),
                 "client_id_in_body": form.get("client_id"), "resource": form.getlist("resource"),
                 "scope": form.get("scope"), "status": None, "error": None, "error_description": None,
                 "refresh_token_issued": False}
        provider.log["token_requests"].append(entry)
        if args.client_credentials and form.get("grant_type") == "client_credentials":
            response = await client_credentials(request, form)
        else:
            response = await sdk_token.handle(request)
        entry["status"] = response.status_code
        try:
            import json
            body = json.loads(bytes(response.body))
            entry["error"] = body.get("error")
            entry["error_description"] = body.get("error_description")
            entry["refresh_token_issued"] = bool(body.get("refresh_token"))
            # Test-only: lets a test assert no issued token reaches agenthealth's output.
            entry["access_token"] = body.get("access_token")
            entry["refresh_token"] = body.get("refresh_token")
        except Exception:  # noqa: BLE001 - not JSON: leave the fields empty
            pass
        return response

    async def client_credentials(request: Request, form: Any) -> Response:
        headers = {"Cache-Control": "no-store", "Pragma": "no-cache"}
        try:
            client = await authenticator.authenticate_request(request)
        except AuthenticationError as e:
            return JSONResponse({"error": "invalid_client", "error_description": e.message}, 401, headers)
        if "client_credentials" not in client.grant_types or not client.client_secret:
            return JSONResponse({"error": "unauthorized_client"}, 400, headers)
        scopes = str(form.get("scope") or "").split()
        allowed = (client.scope or "").split()
        if any(s not in allowed for s in scopes):
            return JSONResponse({"error": "invalid_scope"}, 400, headers)
        resource = form.get("resource")
        assert client.client_id is not None
        tok = provider.issue(client.client_id, scopes, str(resource) if resource else None,
                             secrets.token_hex(8), with_refresh=False)
        return JSONResponse(tok.model_dump(exclude_none=True), 200, headers)

    metadata = build_metadata(issuer, None, reg, rev)
    if args.client_credentials:
        metadata.grant_types_supported = [*(metadata.grant_types_supported or []), "client_credentials"]
    replaced = []
    for r in routes:
        if r.path == "/token":
            replaced.append(Route("/token", token, methods=["POST"]))
        elif r.path == "/.well-known/oauth-authorization-server":
            replaced.append(Route(r.path, MetadataHandler(metadata).handle, methods=["GET"]))
        else:
            replaced.append(r)

    async def approve_page(request: Request) -> Response:
        txn = request.path_params["txn"]
        if txn not in provider.pending:
            return HTMLResponse("<p>unknown request</p>", 404)
        client, params = provider.pending[txn]
        forms = "".join(
            f'<form method="post" action="/lab/approve/{txn}"><input type="hidden" name="decision" '
            f'value="{d}"><button type="submit">{d}</button></form>\n' for d in ("approve", "deny"))
        return HTMLResponse(f"<!doctype html><title>Authorize {client.client_id}</title>\n{forms}")

    async def approve_post(request: Request) -> Response:
        txn = request.path_params["txn"]
        form = await request.form()
        pending = provider.pending.pop(txn, None)
        if pending is None:
            return HTMLResponse("<p>unknown request</p>", 404)
        client, params = pending
        return RedirectResponse(provider.finish(client, params, form.get("decision") == "approve"), 302)

    async def lab_log(_: Request) -> Response:
        return JSONResponse(provider.log)

    async def lab_reset(_: Request) -> Response:
        provider.reset_log()
        return Response(status_code=204)

    async def lab_revoke_all(_: Request) -> Response:
        provider.access.clear()
        provider.refresh.clear()
        return Response(status_code=204)

    replaced += [
        Route("/lab/approve/{txn}", approve_page, methods=["GET"]),
        Route("/lab/approve/{txn}", approve_post, methods=["POST"]),
        Route("/_lab/log", lab_log, methods=["GET"]),
        Route("/_lab/reset", lab_reset, methods=["POST"]),
        Route("/_lab/revoke-all", lab_revoke_all, methods=["POST"]),
    ]
    return Starlette(routes=replaced)


class Verifier:
    def __init__(self, provider: Provider) -> None:
        self.provider = provider

    async def verify_token(self, token: str) -> AccessToken | None:
        return await self.provider.load_access_token(token)


def rs_app(provider: Provider, issuer: Any, url: str, scopes: list[str]) -> Any:
    server = MCPServer("agenthealth-lab-py-sdk-as", version="0.0.1", log_level="WARNING",
                       token_verifier=Verifier(provider),
                       auth=AuthSettings(issuer_url=issuer, resource_server_url=url,
                                         required_scopes=scopes, validate_token_resource=True))

    @server.tool(annotations=ToolAnnotations(read_only_hint=True, destructive_hint=False))
    def echo(text: str) -> str:
        """Answer with the given text."""
        return text

    return server.streamable_http_app(json_response=True, stateless_http=True, host="127.0.0.1")


def bind(port: int) -> socket.socket:
    s = socket.socket(socket.AF_INET, socket.SOCK_STREAM)
    s.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEADDR, 1)
    s.bind(("127.0.0.1", port))
    return s


async def serve(args: argparse.Namespace) -> None:
    import uvicorn

    as_sock, rs_sock = bind(args.as_port), bind(args.rs_port)
    origin = f"http://127.0.0.1:{as_sock.getsockname()[1]}"
    # What the AS metadata says (`issuer`) and what the RS metadata lists (`authorization_servers`).
    as_issuer: AnyHttpUrl = (AuthSettings(issuer_url=origin, resource_server_url=None).issuer_url
                             if args.issuer_style == "string" else AnyHttpUrl(origin))
    rs_issuer: Any = AnyHttpUrl(origin) if args.issuer_style == "example" else origin
    issuer = str(as_issuer)
    url = f"http://127.0.0.1:{rs_sock.getsockname()[1]}/mcp"
    provider = Provider(issuer, args)
    scopes = [s for s in args.scopes.split(",") if s]
    servers = [
        uvicorn.Server(uvicorn.Config(as_app(provider, as_issuer, args), log_level="warning", lifespan="off")),
        uvicorn.Server(uvicorn.Config(rs_app(provider, rs_issuer, url, scopes), log_level="warning", lifespan="on")),
    ]
    tasks = [asyncio.create_task(s.serve(sockets=[sock])) for s, sock in zip(servers, (as_sock, rs_sock))]
    while not all(s.started for s in servers):
        if any(t.done() for t in tasks):
            sys.exit(1)
        await asyncio.sleep(0.01)
    print(f"issuer {issuer}", flush=True)
    print(f"listening on {url}", flush=True)
    await asyncio.gather(*tasks)


def main() -> None:
    p = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    p.add_argument("--approve", choices=("auto", "form"), default="auto")
    p.add_argument("--access-token-ttl", type=int, default=300)
    p.add_argument("--refresh", choices=("always", "never"), default="always")
    p.add_argument("--client-credentials", action="store_true")
    p.add_argument("--issuer-style", choices=("example", "string", "mixed"), default="example",
                   help="example: AS and RS both built from AnyHttpUrl(origin), as the SDK's simple-auth "
                        "example is, so both publish http://127.0.0.1:PORT/ (trailing slash); string: both "
                        "keep the configured string (no slash); mixed: the AS from AnyHttpUrl (slash), the "
                        "RS from a string (no slash) - a deployment no exact-pinning client can use")
    p.add_argument("--scopes", default="read", help="scopes the RS requires, comma-separated")
    p.add_argument("--as-port", type=int, default=0)
    p.add_argument("--rs-port", type=int, default=0)
    args = p.parse_args()
    if os.environ.get("INTEROP_EXIT_ON_STDIN_EOF") == "1":
        def watch() -> None:
            while sys.stdin.buffer.read(4096):
                pass
            os._exit(0)
        threading.Thread(target=watch, daemon=True).start()
    asyncio.run(serve(args))


if __name__ == "__main__":
    main()
