#!/usr/bin/env bash
# make bench: wall-time median and peak RSS of `agenthealth ping` against local servers, with
# curl doing the same exchange as the floor; then `agenthealth check` on a generated graph of
# 1,000 HTTP nodes against two fake servers, with its peak thread count.
# usage: bench.sh AGENTHEALTH FAKE_MCP_SERVER   (RUNS, GRAPH_RUNS: repetitions)
set -uo pipefail
bin=$1 fake=$2 runs=${RUNS:-20} graph_runs=${GRAPH_RUNS:-5}
here=$(dirname "$0")
coproc FAKE { exec "$fake"; }
# A second server for the graph; it lives until killed.
exec {FAKE2}< <(exec "$fake" --until-killed)
fake2_pid=$!
tmp=$(mktemp -d -t agenthealth-bench-XXXXXX)
trap 'exec {FAKE[1]}>&-; kill "$fake2_pid" 2>/dev/null; wait "$FAKE_PID" 2>/dev/null; rm -rf "$tmp"' EXIT
read -r line <&"${FAKE[0]}" || { echo "bench: fake server did not start" >&2; exit 1; }
base=${line#listening on }
read -r line2 <&"$FAKE2" || { echo "bench: second fake server did not start" >&2; exit 1; }
base2=${line2#listening on }

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

# Most threads a command had at once, sampled from /proc until it exits (a sample can miss
# a peak, never invent one).
peak_threads() {
  "$@" >/dev/null 2>&1 &
  local pid=$! peak=0 key value
  while [[ -r /proc/$pid/status ]]; do
    while read -r key value _; do
      [[ $key == Threads: && $value =~ ^[0-9]+$ ]] && (( value > peak )) && peak=$value
    done < "/proc/$pid/status" 2>/dev/null
  done
  wait "$pid"
  echo "$peak"
}

graph=$tmp/graph.yaml
"$here/graph/generate.sh" 10 9 10 "$base/health" "$base2/health" > "$graph"
nodes=$(grep -c '^ *- name:' "$graph")
"$bin" check "$graph" --format json > "$tmp/out.json"
code=$?
(( code == 0 )) || echo "bench: the graph run exited $code (expected 0: every node HEALTHY within its budget)" >&2
echo
printf '%-44s %13s %12s\n' "$nodes HTTP nodes, concurrency 16 ($graph_runs runs)" "wall" "peak RSS"
runs=$graph_runs label="agenthealth check --format json"; measure "$bin" check "$graph" --format json
runs=$graph_runs label="agenthealth check (terminal)";    measure "$bin" check "$graph"
printf '%-44s %13s\n' "peak threads (16 workers + main + signals)" "$(peak_threads "$bin" check "$graph" --format json)"
