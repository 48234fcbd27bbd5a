"""Interop fixture: a small MCP server built on the official Python SDK (`mcp` 2.x).

One tool (`echo`), one resource (`interop://greeting`) and one prompt (`summarize`).

    py_server.py --transport stdio [--pin REV]
    py_server.py --transport http [--mode sse|json|stateless|stateless-sse] [--pin REV] [--port N]

Without `--pin` the SDK serves every revision it knows: the initialize handshake
(2024-11-05 … 2025-11-25) and the stateless 2026-07-28 revision (`server/discover`).

`--pin REV` (a handshake revision) turns it into a server of that one revision, the
way an older deployment looks from outside: `initialize` is always answered with REV
whatever the client offered, and 2026-07-28 requests get the answer an old server
gives (HTTP: 400 with JSON-RPC -32600; stdio: the handshake-only loop, so
`server/discover` gets -32601). Only the negotiated version changes: result shapes
stay the SDK's (e.g. `title`, `outputSchema`, `structuredContent` even at 2025-03-26).

HTTP modes (Streamable HTTP on /mcp):
    sse            stateful (Mcp-Session-Id), POST answers as text/event-stream
    json           stateful, POST answers as application/json
    stateless      no sessions, application/json
    stateless-sse  no sessions, text/event-stream

HTTP binds 127.0.0.1 only, on an ephemeral port unless `--port` is given, and prints
`listening on http://127.0.0.1:PORT/mcp` on stdout once the server accepts requests.
That line is the readiness signal the Rust harness waits for. With
INTEROP_EXIT_ON_STDIN_EOF=1 (set by the harness) the HTTP server exits when its stdin
closes, so a test process that dies without cleaning up leaves no server behind.
"""

from __future__ import annotations

import argparse
import json
import os
import socket
import sys
import threading

from mcp.server.mcpserver import MCPServer
from mcp.types import ToolAnnotations
from mcp_types.version import HANDSHAKE_PROTOCOL_VERSIONS

SERVER_NAME = "agenthealth-interop-py"
SERVER_VERSION = "1.0.0"
HTTP_MODES = {
    # mode: (json_response, stateless_http)
    "sse": (False, False),
    "json": (True, False),
    "stateless": (True, True),
    "stateless-sse": (False, True),
}


def build_server(**settings) -> MCPServer:
    """The fixture server; `settings` go to `MCPServer` (py_oauth_server.py passes its auth pieces)."""
    server = MCPServer(SERVER_NAME, version=SERVER_VERSION, log_level="WARNING", **settings)

    @server.tool(
        title="Echo",
        annotations=ToolAnnotations(read_only_hint=True, destructive_hint=False, idempotent_hint=True, open_world_hint=False),
    )
    def echo(text: str) -> str:
        """Answer with the given text, unchanged."""
        return text

    @server.resource("interop://greeting", name="greeting", mime_type="text/plain")
    def greeting() -> str:
        """A fixed text resource."""
        return "hello from agenthealth-interop-py"

    @server.prompt(title="Summarize")
    def summarize(text: str) -> str:
        """A one-message prompt asking for a summary of the text."""
        return f"Summarize in one sentence:\n{text}"

    return server


def pin_handshake(revision: str) -> None:
    """Make every `initialize` answer with `revision`, whatever the client offered.

    The SDK has no public switch for this; the one place that picks the negotiated
    version is `ServerRunner._negotiate_initialize`. The versions are pinned exactly
    in requirements.txt, so wrapping that private method is stable here; if an
    upgrade removes it we fail at start-up instead of silently serving every revision.
    """
    from mcp.server import runner

    original = runner.ServerRunner.__dict__.get("_negotiate_initialize")
    if not isinstance(original, staticmethod):
        sys.exit("py_server.py: --pin needs mcp 2.3.x (ServerRunner._negotiate_initialize not found)")
    negotiate = original.__func__

    def pinned(params):
        init, _ = negotiate(params)  # keeps the SDK's validation of the params
        return init, revision

    runner.ServerRunner._negotiate_initialize = staticmethod(pinned)


def refuse_modern_headers(app, revision: str):
    """ASGI wrapper for a pinned HTTP server: answer any request whose
    MCP-Protocol-Version header is not a handshake revision the way a pre-2026 SDK
    does (400, JSON-RPC -32600, no modern error code), instead of letting the SDK route
    it to its 2026-07-28 path."""

    async def wrapped(scope, receive, send):
        if scope["type"] == "http":
            version = dict(scope["headers"]).get(b"mcp-protocol-version")
            if version is not None and version.decode("latin-1") not in HANDSHAKE_PROTOCOL_VERSIONS:
                message = f"Bad Request: Unsupported protocol version: {version.decode('latin-1')}. Supported versions: {revision}"
                body = json.dumps({"jsonrpc": "2.0", "id": None, "error": {"code": -32600, "message": message}}).encode()
                await send({
                    "type": "http.response.start",
                    "status": 400,
                    "headers": [(b"content-type", b"application/json"), (b"content-length", str(len(body)).encode())],
                })
                await send({"type": "http.response.body", "body": body})
                return
        await app(scope, receive, send)

    return wrapped


def run_stdio(server: MCPServer, pinned: bool) -> None:
    if not pinned:
        server.run("stdio")  # dual-era loop: the first request picks the era
        return
    # Handshake-only loop: what the SDK's HTTP transport uses for its legacy leg.
    import anyio
    from mcp.server.runner import serve_loop
    from mcp.server.stdio import stdio_server

    lowlevel = server._lowlevel_server

    async def main() -> None:
        async with stdio_server() as (read_stream, write_stream), lowlevel.lifespan(lowlevel) as state:
            await serve_loop(
                lowlevel, read_stream, write_stream,
                lifespan_state=state, init_options=lowlevel.create_initialization_options(),
            )

    anyio.run(main)


def exit_on_stdin_eof() -> None:
    """Exit as soon as stdin reaches end-of-file (the parent went away)."""

    def watch() -> None:
        while sys.stdin.buffer.read(4096):
            pass
        os._exit(0)

    threading.Thread(target=watch, daemon=True).start()


def run_http(server: MCPServer, mode: str, port: int, pin: str | None) -> None:
    import uvicorn

    if os.environ.get("INTEROP_EXIT_ON_STDIN_EOF") == "1":
        exit_on_stdin_eof()

    json_response, stateless = HTTP_MODES[mode]
    app = server.streamable_http_app(json_response=json_response, stateless_http=stateless, host="127.0.0.1")
    if pin is not None:
        app = refuse_modern_headers(app, pin)

    # Bind before uvicorn so an ephemeral port is known, and announce only after
    # uvicorn's start-up (the SDK's session manager starts in the app lifespan).
    sock = socket.socket(socket.AF_INET, socket.SOCK_STREAM)
    sock.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEADDR, 1)
    sock.bind(("127.0.0.1", port))
    url = f"http://127.0.0.1:{sock.getsockname()[1]}/mcp"

    class AnnouncingServer(uvicorn.Server):
        async def startup(self, sockets=None):
            await super().startup(sockets=sockets)
            if not self.should_exit:
                print(f"listening on {url}", flush=True)

    config = uvicorn.Config(app, log_level="warning", lifespan="on")
    AnnouncingServer(config).run(sockets=[sock])


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--transport", choices=("http", "stdio"), required=True)
    parser.add_argument("--mode", choices=tuple(HTTP_MODES), default="sse", help="HTTP only")
    parser.add_argument("--pin", choices=HANDSHAKE_PROTOCOL_VERSIONS, help="serve only this handshake revision")
    parser.add_argument("--port", type=int, default=0, help="HTTP only; 0 = ephemeral (default)")
    args = parser.parse_args()

    if args.pin is not None:
        pin_handshake(args.pin)
    server = build_server()
    if args.transport == "stdio":
        run_stdio(server, pinned=args.pin is not None)
    else:
        run_http(server, args.mode, args.port, args.pin)


if __name__ == "__main__":
    main()
