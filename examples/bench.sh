#!/usr/bin/env bash
# make bench: wall-time median and peak RSS of `agenthealth ping` against local servers, with
# curl doing the same exchange as the floor. usage: bench.sh AGENTHEALTH FAKE_MCP_SERVER
set -uo pipefail
bin=$1 fake=$2 runs=${RUNS:-20}
coproc FAKE { exec "$fake"; }
trap 'exec {FAKE[1]}>&-; wait "$FAKE_PID" 2>/dev/null' EXIT
read -r line <&"${FAKE[0]}" || { echo "bench: fake server did not start" >&2; exit 1; }
base=${line#listening on }

# median wall ms and max peak RSS KiB of a command over $runs runs
measure() {
  local walls=() rss=0 t0 t1 r tmp
  tmp=$(mktemp)
  for _ in $(seq "$runs"); do
    t0=$(date +%s%N)
    /usr/bin/time -f '%M' -o "$tmp" "$@" >/dev/null 2>&1
    t1=$(date +%s%N)
    r=$(tail -n1 "$tmp")
    walls+=($(( (t1 - t0) / 1000 )))
    [[ $r =~ ^[0-9]+$ ]] && (( r > rss )) && rss=$r
  done
  local med
  med=$(printf '%s\n' "${walls[@]}" | sort -n | awk '{a[NR]=$1} END {print a[int((NR+1)/2)]}')
  rm -f "$tmp"
  awk -v l="$label" -v m="$med" -v r="$rss" 'BEGIN { printf "%-44s %10.2f ms %8d KiB\n", l, m / 1000, r }'

}

init='{"jsonrpc":"2.0","id":1,"method":"initialize","params":{"protocolVersion":"2025-11-25","capabilities":{},"clientInfo":{"name":"curl","version":"0"}}}'
curl_floor() {
  curl -s -o /dev/null -I "$base/mcp" &&
  curl -s -o /dev/null -H 'Content-Type: application/json' -H 'Accept: application/json, text/event-stream' -d "$init" "$base/mcp"
}
export -f curl_floor; export base init

printf '%-44s %13s %12s\n' "case (median of $runs runs)" "wall" "peak RSS"
label="agenthealth ping mcp (fake, legacy json)"; measure "$bin" ping mcp "$base/mcp"
label="agenthealth ping http (fake /health)";     measure "$bin" ping http "$base/health"
label="curl HEAD + initialize (floor)";          measure bash -c curl_floor
