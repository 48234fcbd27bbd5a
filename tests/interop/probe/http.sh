#!/usr/bin/env bash
# Era probe for a Streamable HTTP MCP endpoint, with raw curl (how the README table
# was made). One line per exchange: what was sent -> HTTP status, then the negotiated
# protocolVersion / supportedVersions or the JSON-RPC error code and message.
#   usage: tests/interop/probe/http.sh http://127.0.0.1:PORT/mcp
set -uo pipefail
url=$1
tmp=$(mktemp -d); trap 'rm -rf "$tmp"' EXIT
client='{"name":"agenthealth-interop-probe","version":"0"}'

post() { # label, body, extra curl args...
  local label=$1 body=$2; shift 2
  local code
  code=$(curl -sS --max-time 5 -o "$tmp/body" -D "$tmp/head" -w '%{http_code}' -X POST "$url" \
    -H 'Content-Type: application/json' -H 'Accept: application/json, text/event-stream' "$@" -d "$body")
  # SSE or JSON: take the first JSON object carried by the body.
  local json
  json=$(sed -n 's/^data: *//p' "$tmp/body" | grep -m1 '^{' || true)
  [[ -z "$json" ]] && json=$(cat "$tmp/body")
  printf '%-34s -> %s %s\n' "$label" "$code" "$(summary "$json")"
  # A stateful server hands out a session on initialize: close it again.
  local sid
  sid=$(grep -i '^mcp-session-id:' "$tmp/head" | head -1 | cut -d' ' -f2 | tr -d '\r')
  [[ -n "$sid" ]] && curl -sS --max-time 5 -o /dev/null -X DELETE "$url" -H "Mcp-Session-Id: $sid"
}

summary() {
  python3 -c '
import json, sys
try:
    m = json.loads(sys.argv[1])
except Exception:
    print("(not JSON: %r)" % sys.argv[1][:80]); sys.exit()
if "error" in m:
    e = m["error"]; d = e.get("data")
    print("error %s %r%s" % (e.get("code"), e.get("message", "")[:90], " data.supported=%s" % d["supported"] if isinstance(d, dict) and "supported" in d else ""))
elif "result" in m:
    r = m["result"]
    if "protocolVersion" in r: print("ok protocolVersion=" + r["protocolVersion"])
    elif "supportedVersions" in r: print("ok supportedVersions=%s" % r["supportedVersions"])
    else: print("ok")
' "$1"
}

for v in 2024-11-05 2025-03-26 2025-06-18 2025-11-25 2026-07-28; do
  post "initialize $v" \
    '{"jsonrpc":"2.0","id":1,"method":"initialize","params":{"protocolVersion":"'$v'","capabilities":{},"clientInfo":'"$client"'}}'
done
meta='"_meta":{"io.modelcontextprotocol/protocolVersion":"2026-07-28","io.modelcontextprotocol/clientCapabilities":{},"io.modelcontextprotocol/clientInfo":'"$client"'}'
post "server/discover 2026-07-28" '{"jsonrpc":"2.0","id":2,"method":"server/discover","params":{'"$meta"'}}' \
  -H 'MCP-Protocol-Version: 2026-07-28' -H 'Mcp-Method: server/discover'
