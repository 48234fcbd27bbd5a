#!/usr/bin/env bash
# make bench: median wall time and peak RSS of `agenthealth ping` against a fast local fake MCP
# server and a real Python `mcp` server, with curl doing the same exchange as the floor; the
# same over HTTPS (TLS 1.3, a private CA), and the cost of loading the system trust store; the
# deadline bound against a silent server; the hostile catalogue (seven behaviours, each with
# --timeout 300 and --deadline 500); then `agenthealth check` on a generated graph of
# 1,000 HTTP nodes against two fake servers, with its peak thread count. Client and agent
# construction are in-process costs: they are the difference between `version` and `ping http`.
# usage: bench.sh AGENTHEALTH FAKE_MCP_SERVER   (RUNS=20, at least 10; GRAPH_RUNS=5)
set -uo pipefail
bin=$1 fake=$2 runs=${RUNS:-20} graph_runs=${GRAPH_RUNS:-5}
interop=${AGENTHEALTH_INTEROP_DIR:-$PWD/target/interop}
here=$(dirname "$0")
tmp=$(mktemp -d -t agenthealth-bench-XXXXXX)

coproc FAKE { exec "$fake" --route /modern=modern --route /hang=hang --route /trickle=trickle \
  --route /stall=stall --route /endless-sse=endless-sse --route /huge=huge; }
read -r line <&"${FAKE[0]}" || { echo "bench: fake server did not start" >&2; exit 1; }
fake_base=${line#listening on }
py_pid=
# A second server for the graph; it lives until killed.
exec {FAKE2}< <(exec "$fake" --until-killed)
fake2_pid=$!
read -r line2 <&"$FAKE2" || { echo "bench: second fake server did not start" >&2; exit 1; }
base2=${line2#listening on }
# The same fake over TLS: its certificate comes from a fresh CA written to $ca.
ca=$tmp/ca.pem
exec {TLS}< <(exec "$fake" --tls "$ca" --route /modern=modern --until-killed)
tls_pid=$!
read -r line3 <&"$TLS" || { echo "bench: TLS fake server did not start" >&2; exit 1; }
tls_base=${line3#listening on }
cleanup() {
  exec {FAKE[1]}>&-; kill "$fake2_pid" "$tls_pid" 2>/dev/null
  [[ -n $py_pid ]] && kill "$py_pid" 2>/dev/null
  wait 2>/dev/null; rm -rf "$tmp"
}
trap cleanup EXIT

py_url=
if [[ -x $interop/venv/bin/python ]]; then
  coproc PY { exec "$interop/venv/bin/python" "$interop/servers/py_server.py" --transport http --mode json; }
  py_pid=$PY_PID
  read -r line <&"${PY[0]}" && py_url=${line#listening on }
fi

# median wall ms over $runs direct runs, and max peak RSS KiB over 3 runs under /usr/bin/time
measure() {
  local label=$1; shift
  local walls=() rss=0 t0 t1 r tmp
  tmp=$(mktemp)
  "$@" >/dev/null 2>&1   # warm-up
  for _ in $(seq "$runs"); do
    t0=$(date +%s%N)
    "$@" >/dev/null 2>&1
    t1=$(date +%s%N)
    walls+=($(( (t1 - t0) / 1000 )))
  done
  for _ in 1 2 3; do
    /usr/bin/time -f '%M' -o "$tmp" "$@" >/dev/null 2>&1
    r=$(tail -n1 "$tmp")
    [[ $r =~ ^[0-9]+$ ]] && (( r > rss )) && rss=$r
  done
  rm -f "$tmp"
  local med
  med=$(printf '%s\n' "${walls[@]}" | sort -n | awk '{a[NR]=$1} END {print a[int((NR+1)/2)]}')
  awk -v l="$label" -v m="$med" -v r="$rss" 'BEGIN { printf "%-52s %9.2f ms %8d KiB\n", l, m / 1000, r }'
}

init='{"jsonrpc":"2.0","id":1,"method":"initialize","params":{"protocolVersion":"2025-11-25","capabilities":{},"clientInfo":{"name":"curl","version":"0"}}}'
list='{"jsonrpc":"2.0","id":2,"method":"tools/list"}'
# The same legacy exchange by curl, in one process: HEAD, initialize, tools/list.
curl_floor() {
  local url=$1 json=(-H 'Content-Type: application/json' -H 'Accept: application/json, text/event-stream')
  floor=(curl -s -o /dev/null -I "$url" --next -s -o /dev/null "${json[@]}" -d "$init" "$url"
         --next -s -o /dev/null "${json[@]}" -d "$list" "$url")
}

printf '%-52s %12s %12s\n' "case (wall: median of $runs runs)" "wall" "peak RSS"
measure "true (process start floor)" /bin/true
measure "agenthealth version" "$bin" version
measure "agenthealth ping mcp: fake, legacy (discover→init)" "$bin" ping mcp "$fake_base/mcp"
measure "agenthealth ping mcp: fake, modern" "$bin" ping mcp "$fake_base/modern"
measure "agenthealth ping http: fake /health" "$bin" ping http "$fake_base/health"
measure "curl HEAD /health: fake (floor)" curl -s -o /dev/null -I "$fake_base/health"
curl_floor "$fake_base/mcp"; measure "curl HEAD+initialize+tools/list: fake (floor)" "${floor[@]}"

# HTTPS: a fresh connection's TLS 1.3 handshake against a store of one certificate (the CA as
# SSL_CERT_FILE); MCP over https keeps one connection alive for the whole check. Then the
# system bundle as the store: the difference is its load, once per process (the private CA is
# not in it, so the certificate is refused).
own_ca=(env -u SSL_CERT_DIR SSL_CERT_FILE="$ca")
measure "agenthealth ping http: https fake /health" "${own_ca[@]}" "$bin" ping http "$tls_base/health"
measure "curl HEAD https /health: fake (floor)" curl -s -o /dev/null -I --cacert "$ca" "$tls_base/health"
measure "agenthealth ping mcp: https, legacy (kept alive)" "${own_ca[@]}" "$bin" ping mcp "$tls_base/mcp"
measure "agenthealth ping mcp: https, modern (kept alive)" "${own_ca[@]}" "$bin" ping mcp "$tls_base/modern"
measure "agenthealth ping http: https, system trust store" env -u SSL_CERT_DIR -u SSL_CERT_FILE "$bin" ping http "$tls_base/health"
# The deadline bound: a server that accepts and never answers, --timeout 300.
coproc SILENT { exec python3 -c '
import socket, sys
s = socket.socket(); s.bind(("127.0.0.1", 0)); s.listen(64)
print(s.getsockname()[1], flush=True); sys.stdin.read()'; }
read -r silent_port <&"${SILENT[0]}"
measure "agenthealth ping http: silent server, --timeout 300" "$bin" ping http "http://127.0.0.1:$silent_port/" --timeout 300
echo "  (the deadline bound: must stay under 400 ms, i.e. timeout + 100 ms)"

# The hostile catalogue: `ping mcp` against each behaviour, with `--timeout 300` (each attempt
# 300 ms; a server that answers partly may cost several attempts) and with `--deadline 500`
# (the whole run). Median and worst wall of 10 runs, and the runs past bound + 100 ms: the
# target is 0 past the run deadline.
hostile() {
  local label=$1 bound=$2; shift 2
  local walls=() t0 t1 over=0 w
  for _ in $(seq 10); do
    t0=$(date +%s%N)
    "$@" >/dev/null 2>&1
    t1=$(date +%s%N)
    w=$(( (t1 - t0) / 1000000 ))
    walls+=("$w")
    (( w > bound + 100 )) && over=$((over + 1))
  done
  printf '%s\n' "${walls[@]}" | sort -n | awk -v l="$label" -v o="$over" \
    '{a[NR]=$1} END { printf "%-44s %7d ms %7d ms %9d\n", l, a[int((NR+1)/2)], a[NR], o }'
}
echo
printf '%-44s %10s %10s %9s\n' "hostile behaviour: ping mcp (10 runs)" "median" "worst" "past+100"
for case in "silent:http://127.0.0.1:$silent_port/" "trickle:$fake_base/trickle" \
    "stall after headers:$fake_base/stall" "endless SSE:$fake_base/endless-sse" \
    "oversized body:$fake_base/huge" "TLS stall:https://127.0.0.1:$silent_port/" \
    "HEAD then silent:$fake_base/hang"; do
  name=${case%%:http*} url=${case#"$name":}
  hostile "$name, --timeout 300" 300 "$bin" ping mcp "$url" --timeout 300
  hostile "$name, --deadline 500" 500 "$bin" ping mcp "$url" --deadline 500
done
exec {SILENT[1]}>&-

if [[ -n $py_url ]]; then
  measure "agenthealth ping mcp: Python mcp 2.x (modern)" "$bin" ping mcp "$py_url"
  curl_floor "$py_url"; measure "curl HEAD+initialize+tools/list: Python (floor)" "${floor[@]}"
else
  echo "(Python mcp server not installed: run .ci/interop-setup for the real-server rows)"
fi

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
"$here/graph/generate.sh" 10 9 10 "$fake_base/health" "$base2/health" > "$graph"
nodes=$(grep -c '^ *- name:' "$graph")
"$bin" check "$graph" --format json > "$tmp/out.json"
code=$?
(( code == 0 )) || echo "bench: the graph run exited $code (expected 0: every node HEALTHY within its budget)" >&2
echo
printf '%-52s %12s %12s\n' "$nodes HTTP nodes, concurrency 16 ($graph_runs runs)" "wall" "peak RSS"
runs=$graph_runs measure "agenthealth check --format json" "$bin" check "$graph" --format json
runs=$graph_runs measure "agenthealth check (terminal)" "$bin" check "$graph"
printf '%-52s %12s\n' "peak threads (16 workers + main + signals)" "$(peak_threads "$bin" check "$graph" --format json)"
runs=$graph_runs measure "agenthealth validate (1,000-node config load)" "$bin" validate "$graph"
