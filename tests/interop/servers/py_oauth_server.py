"""OAuth lab: the fixture MCP server of py_server.py, protected by the Python SDK's own
resource-server pieces (`mcp` 2.3: `AuthSettings` + a `TokenVerifier`).

    py_oauth_server.py --issuer URL [--scopes read[,write…]] [--mode sse|json|stateless|stateless-sse] [--port N]

* `AuthSettings(issuer_url=URL, resource_server_url=http://127.0.0.1:PORT/mcp,
  required_scopes=[…], validate_token_resource=True)`: every request to /mcp (HEAD
  included) without a valid token gets 401 with `WWW-Authenticate: Bearer
  error="invalid_token", …, resource_metadata="…/.well-known/oauth-protected-resource/mcp"`
  (no `scope=`); a token without a required scope gets 403 `insufficient_scope`.
* The SDK serves RFC 9728 metadata at the path-inserted
  `/.well-known/oauth-protected-resource/mcp` only: resource = the MCP URL,
  authorization_servers = [URL], scopes_supported = the required scopes.
* The token verifier checks the authorization server's RFC 9068 JWT access tokens
  with PyJWT against the JWKS named by the issuer's metadata: signature (RS256),
  `typ: at+jwt`, `iss` = URL exactly, `exp`; it reports `aud` as the token's resource,
  so `validate_token_resource` refuses tokens issued for another resource.

Unpinned, like py_server.py: the handshake revisions and 2026-07-28 both work. Binds
127.0.0.1, prints `listening on http://127.0.0.1:PORT/mcp` once ready, and with
INTEROP_EXIT_ON_STDIN_EOF=1 exits when stdin closes.
"""

from __future__ import annotations

import argparse
import json
import os
import socket
import urllib.request

import anyio
import jwt
from mcp.server.auth.provider import AccessToken
from mcp.server.auth.settings import AuthSettings

from py_server import HTTP_MODES, build_server, exit_on_stdin_eof


class JwtVerifier:
    """Verifies the lab AS's JWT access tokens (RFC 9068) through its published JWKS."""

    def __init__(self, issuer: str, resource: str) -> None:
        self.issuer = issuer
        self.resource = resource
        self._jwks: jwt.PyJWKClient | None = None

    def _client(self) -> jwt.PyJWKClient:
        if self._jwks is None:
            # oidc-provider serves its metadata under the issuer, with or without a path.
            url = f"{self.issuer}/.well-known/openid-configuration"
            with urllib.request.urlopen(url, timeout=10) as response:  # noqa: S310 (loopback)
                metadata = json.load(response)
            self._jwks = jwt.PyJWKClient(metadata["jwks_uri"], timeout=10)
        return self._jwks

    def _decode(self, token: str) -> dict:
        if jwt.get_unverified_header(token).get("typ") != "at+jwt":
            raise jwt.InvalidTokenError("not an RFC 9068 access token")
        key = self._client().get_signing_key_from_jwt(token)
        # The audience is checked by the SDK (validate_token_resource), from `resource` below.
        return jwt.decode(
            token,
            key.key,
            algorithms=["RS256"],
            issuer=self.issuer,
            options={"require": ["exp", "iss", "aud"], "verify_aud": False},
        )

    async def verify_token(self, token: str) -> AccessToken | None:
        try:
            claims = await anyio.to_thread.run_sync(self._decode, token)
        except (jwt.PyJWTError, OSError, KeyError, ValueError):
            return None
        audience = claims["aud"]
        if isinstance(audience, list):
            audience = self.resource if self.resource in audience else (audience[0] if audience else None)
        return AccessToken(
            token=token,
            client_id=str(claims.get("client_id", "")),
            scopes=str(claims.get("scope", "")).split(),
            expires_at=int(claims["exp"]),
            resource=audience,
            subject=claims.get("sub"),
            claims={"iss": claims["iss"]},
        )


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--issuer", required=True, help="the authorization server's issuer URL")
    parser.add_argument("--scopes", default="read", help="required scopes, comma-separated ('' for none)")
    parser.add_argument("--mode", choices=tuple(HTTP_MODES), default="stateless")
    parser.add_argument("--port", type=int, default=0, help="0 = ephemeral (default)")
    args = parser.parse_args()

    import uvicorn

    if os.environ.get("INTEROP_EXIT_ON_STDIN_EOF") == "1":
        exit_on_stdin_eof()

    # Bind first: the resource URL (and so the audience the verifier expects) has the port.
    sock = socket.socket(socket.AF_INET, socket.SOCK_STREAM)
    sock.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEADDR, 1)
    sock.bind(("127.0.0.1", args.port))
    url = f"http://127.0.0.1:{sock.getsockname()[1]}/mcp"
    scopes = [s for s in args.scopes.split(",") if s]

    verifier = JwtVerifier(args.issuer, url)
    # Read the issuer's metadata now (the authorization server is up before us), so a test
    # that counts the authorization server's requests sees only the client's afterwards.
    verifier._client()
    server = build_server(
        token_verifier=verifier,
        auth=AuthSettings(
            issuer_url=args.issuer,
            resource_server_url=url,
            required_scopes=scopes,
            validate_token_resource=True,
        ),
    )
    json_response, stateless = HTTP_MODES[args.mode]
    app = server.streamable_http_app(json_response=json_response, stateless_http=stateless, host="127.0.0.1")

    class AnnouncingServer(uvicorn.Server):
        async def startup(self, sockets=None):
            await super().startup(sockets=sockets)
            if not self.should_exit:
                print(f"listening on {url}", flush=True)

    config = uvicorn.Config(app, log_level="warning", lifespan="on")
    AnnouncingServer(config).run(sockets=[sock])


if __name__ == "__main__":
    main()
