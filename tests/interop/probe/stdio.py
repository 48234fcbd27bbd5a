#!/usr/bin/env python3
"""Era probe for a stdio MCP server (newline-delimited JSON-RPC on stdin/stdout).

Each exchange runs in a fresh server process: `initialize` offering each revision,
then `server/discover` with the 2026-07-28 envelope as the opening request. Prints
one line per exchange: the negotiated protocolVersion / supportedVersions, or the
JSON-RPC error. Python stdlib only.

    usage: tests/interop/probe/stdio.py -- COMMAND [ARGS...]
"""
import json
import subprocess
import sys
import threading

CLIENT = {"name": "agenthealth-interop-probe", "version": "0"}
META = {
    "io.modelcontextprotocol/protocolVersion": "2026-07-28",
    "io.modelcontextprotocol/clientCapabilities": {},
    "io.modelcontextprotocol/clientInfo": CLIENT,
}


def exchange(cmd, request, timeout=10.0):
    """Send one request to a fresh process; return the reply with the same id, or None."""
    proc = subprocess.Popen(cmd, stdin=subprocess.PIPE, stdout=subprocess.PIPE, stderr=subprocess.DEVNULL, text=True)
    reply = []

    def read():
        for line in proc.stdout:
            try:
                message = json.loads(line)
            except ValueError:
                continue
            if message.get("id") == request["id"]:
                reply.append(message)
                return

    reader = threading.Thread(target=read, daemon=True)
    reader.start()
    proc.stdin.write(json.dumps(request) + "\n")
    proc.stdin.flush()
    reader.join(timeout)
    proc.kill()
    proc.wait()
    return reply[0] if reply else None


def summary(message):
    if message is None:
        return "no reply"
    if "error" in message:
        error = message["error"]
        data = error.get("data")
        extra = f" data.supported={data['supported']}" if isinstance(data, dict) and "supported" in data else ""
        return f"error {error.get('code')} {error.get('message', '')[:90]!r}{extra}"
    result = message["result"]
    if "protocolVersion" in result:
        return "ok protocolVersion=" + result["protocolVersion"]
    if "supportedVersions" in result:
        return f"ok supportedVersions={result['supportedVersions']}"
    return "ok"


def main():
    cmd = sys.argv[sys.argv.index("--") + 1:]
    for version in ("2024-11-05", "2025-03-26", "2025-06-18", "2025-11-25", "2026-07-28"):
        request = {"jsonrpc": "2.0", "id": 1, "method": "initialize",
                   "params": {"protocolVersion": version, "capabilities": {}, "clientInfo": CLIENT}}
        print(f"{'initialize ' + version:34} -> {summary(exchange(cmd, request))}", flush=True)
    request = {"jsonrpc": "2.0", "id": 2, "method": "server/discover", "params": {"_meta": META}}
    print(f"{'server/discover 2026-07-28':34} -> {summary(exchange(cmd, request))}", flush=True)


if __name__ == "__main__":
    main()
