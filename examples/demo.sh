#!/usr/bin/env bash
# make demo: start the bundled fake MCP server on loopback, run `agenthealth doctor` against
# one healthy target and one with a deliberately failing requirement, then stop the server.
# usage: demo.sh AGENTHEALTH FAKE_MCP_SERVER
set -uo pipefail
bin=$1 fake=$2
coproc FAKE { exec "$fake" --route /mcp=healthy --route /broken=missing-tool; }
trap 'exec {FAKE[1]}>&-; wait "$FAKE_PID" 2>/dev/null' EXIT
read -r line <&"${FAKE[0]}" || { echo "demo: fake server did not start" >&2; exit 1; }
base=${line#listening on }
cfg=$(mktemp -t agenthealth-demo-XXXXXX.yaml)
sed "s|http://127.0.0.1:PORT|$base|g" "$(dirname "$0")/mcp-check/agenthealth.yaml" > "$cfg"
echo "\$ agenthealth doctor examples/mcp-check/agenthealth.yaml   # against $base"
"$bin" doctor "$cfg"
code=$?
rm -f "$cfg"
echo "exit code: $code (2 = UNHEALTHY: the second target's required tool is missing)"
