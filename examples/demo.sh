#!/usr/bin/env bash
# make demo / make demo-graph: start the bundled fake MCP server on loopback (a healthy MCP
# server at /mcp, one missing its `echo` tool at /broken, 200 at /health, 404 elsewhere), run
# `agenthealth doctor` on an example configuration against it, then stop the server.
# usage: demo.sh AGENTHEALTH FAKE_MCP_SERVER [EXAMPLE [AGENTHEALTH-OPTIONS...]]
#   EXAMPLE: a directory under examples/ with an agenthealth.yaml (default: mcp-check)
set -uo pipefail
bin=$1 fake=$2 example=${3:-mcp-check}
shift $(( $# < 3 ? $# : 3 ))
coproc FAKE { exec "$fake" --route /mcp=healthy --route /broken=missing-tool; }
trap 'exec {FAKE[1]}>&-; wait "$FAKE_PID" 2>/dev/null' EXIT
read -r line <&"${FAKE[0]}" || { echo "demo: fake server did not start" >&2; exit 1; }
base=${line#listening on }
cfg=$(mktemp -t agenthealth-demo-XXXXXX.yaml)
sed "s|http://127.0.0.1:PORT|$base|g" "$(dirname "$0")/$example/agenthealth.yaml" > "$cfg"
echo "\$ agenthealth doctor examples/$example/agenthealth.yaml $*  # against $base"
"$bin" doctor "$cfg" "$@"
code=$?
rm -f "$cfg"
statuses=(HEALTHY DEGRADED UNHEALTHY UNREACHABLE MISCONFIGURED UNKNOWN "tool failure")
echo "exit code: $code (${statuses[$code]:-?})"
