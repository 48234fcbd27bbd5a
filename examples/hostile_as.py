"""make bench: a hostile authorization server and its protected MCP endpoint on one loopback
port (Python's standard library only).

    hostile_as.py MODE      MODE: silent-token | trickle-token | silent-as-metadata |
                                  trickle-as-metadata | silent-prm | ok

/mcp answers HEAD/POST without a token 401 with a resource_metadata challenge; the protected
resource's and the issuer's metadata are served (issuer = http://127.0.0.1:PORT, PKCE S256,
client_secret_post and public clients, an authorization endpoint for `login`); the chosen step then misbehaves: silent = accepts the
request and never answers; trickle = a 200 head, then one body byte every 200 ms forever. In
`ok` mode every token request gets a token the MCP endpoint accepts. Prints `listening on
http://127.0.0.1:PORT/mcp`; exits when stdin closes.
"""
import json
import socketserver
import sys
import threading
import time
from http.server import BaseHTTPRequestHandler

MODE = sys.argv[1] if len(sys.argv) > 1 else "ok"


class H(BaseHTTPRequestHandler):
    protocol_version = "HTTP/1.1"

    def log_message(self, *a):
        sys.stderr.write("%s %s\n" % (self.command, self.path))

    def origin(self):
        return f"http://127.0.0.1:{self.server.server_address[1]}"

    def send_json(self, doc, status=200, extra=()):
        body = json.dumps(doc).encode()
        self.send_response(status)
        self.send_header("Content-Type", "application/json")
        self.send_header("Content-Length", str(len(body)))
        for k, v in extra:
            self.send_header(k, v)
        self.end_headers()
        if self.command != "HEAD":
            self.wfile.write(body)

    def misbehave(self, step):
        if MODE == f"silent-{step}":
            time.sleep(3600)
        if MODE == f"trickle-{step}":
            self.send_response(200)
            self.send_header("Content-Type", "application/json")
            self.send_header("Content-Length", "100000")
            self.end_headers()
            while True:
                self.wfile.write(b" ")
                self.wfile.flush()
                time.sleep(0.2)

    def challenge(self):
        rm = f"{self.origin()}/.well-known/oauth-protected-resource/mcp"
        self.send_json({"error": "unauthorized"}, 401,
                       [("WWW-Authenticate", f'Bearer resource_metadata="{rm}", scope="read"')])

    def do_HEAD(self):
        self.do_GET()

    def do_GET(self):
        o = self.origin()
        if self.path == "/mcp":
            return self.challenge()
        if self.path == "/.well-known/oauth-protected-resource/mcp":
            self.misbehave("prm")
            return self.send_json({"resource": f"{o}/mcp", "authorization_servers": [o]})
        if self.path in ("/.well-known/oauth-authorization-server", "/.well-known/openid-configuration"):
            self.misbehave("as-metadata")
            return self.send_json({"issuer": o, "token_endpoint": f"{o}/token",
                                   "authorization_endpoint": f"{o}/authorize",
                                   "token_endpoint_auth_methods_supported": ["client_secret_post", "none"],
                                   "code_challenge_methods_supported": ["S256"]})
        self.send_json({}, 404)

    def do_POST(self):
        n = int(self.headers.get("Content-Length") or 0)
        self.rfile.read(n)
        if self.path == "/token":
            self.misbehave("token")
            return self.send_json({"access_token": "ok-token", "token_type": "Bearer", "expires_in": 300})
        if self.path == "/mcp":
            if self.headers.get("Authorization") != "Bearer ok-token":
                return self.challenge()
            return self.send_json({"jsonrpc": "2.0", "id": 1, "error": {"code": -32601, "message": "x"}})
        self.send_json({}, 404)


class S(socketserver.ThreadingMixIn, socketserver.TCPServer):
    daemon_threads = True
    allow_reuse_address = True


srv = S(("127.0.0.1", 0), H)
print(f"listening on http://127.0.0.1:{srv.server_address[1]}/mcp", flush=True)
threading.Thread(target=srv.serve_forever, daemon=True).start()
while sys.stdin.read(1):
    pass
