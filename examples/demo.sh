#!/usr/bin/env bash
# make demo / make demo-graph: start the bundled fake MCP server as the README's tour does (on
# 127.0.0.1:3000, the address the example files use), run `agenthealth doctor` on an example
# configuration, unchanged, against it, then stop the server.
# usage: demo.sh AGENTHEALTH FAKE_MCP_SERVER [EXAMPLE [AGENTHEALTH-OPTIONS...]]
#   EXAMPLE: a directory under examples/ with an agenthealth.yaml (default: mcp-check)
set -uo pipefail
bin=$1 fake=$2 example=${3:-mcp-check}
shift $(( $# < 3 ? $# : 3 ))
# A pipe on its stdin: the server stops when this script closes it (or exits).
coproc FAKE { exec "$fake"; }
trap 'exec {FAKE[1]}>&-; wait "$FAKE_PID" 2>/dev/null' EXIT
read -r line <&"${FAKE[0]}" || { echo "demo: the fake server did not start (its error is above)" >&2; exit 1; }
cfg=examples/$example/agenthealth.yaml
echo "\$ agenthealth doctor $cfg $*  # against the fake server, ${line}"
"$bin" doctor "$(dirname "$0")/$example/agenthealth.yaml" "$@"
code=$?
statuses=(HEALTHY DEGRADED UNHEALTHY UNREACHABLE MISCONFIGURED UNKNOWN "tool failure")
echo "exit code: $code (${statuses[$code]:-?})"
