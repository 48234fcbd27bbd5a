#!/usr/bin/env bash
# Prints a generated dependency graph of HTTP nodes (for `make bench` and scale experiments):
# ROOTS services, each with KIDS dependencies of GRAND dependencies each, so
# ROOTS × (1 + KIDS × (1 + GRAND)) nodes; every service also references the next service's
# KIDS dependencies through optional edges, so those nodes are shared. Endpoints take turns
# among the URLs. Every node has `budget_ms: BUDGET_MS` (default 20000).
# usage: generate.sh ROOTS KIDS GRAND URL [URL...]
#   e.g. generate.sh 10 9 10 http://127.0.0.1:8080/health   # 1,000 nodes
set -euo pipefail
roots=$1 kids=$2 grand=$3
shift 3
awk -v roots="$roots" -v kids="$kids" -v grand="$grand" -v urls="$*" \
    -v budget="${BUDGET_MS:-20000}" '
function node(indent, name, id,    line) {
  line = indent "- name: " name "\n"
  if (id != "") line = line indent "  id: " id "\n"
  line = line indent "  type: http\n" indent "  endpoint: " u[(n++ % nu) + 1] "\n"
  return line indent "  budget_ms: " budget "\n"
}
BEGIN {
  nu = split(urls, u, " ")
  print "version: v1"
  print "targets:"
  for (r = 0; r < roots; r++) {
    printf "%s", node("  ", "svc" r, "")
    if (kids > 0) print "    dependencies:"
    for (k = 0; k < kids; k++) {
      printf "%s", node("      ", "svc" r "-dep" k, "s" r "k" k)
      if (grand > 0) print "        dependencies:"
      for (g = 0; g < grand; g++) printf "%s", node("          ", "svc" r "-dep" k "-" g, "")
    }
    for (k = 0; k < kids && roots > 1; k++) {
      print "      - ref: s" (r + 1) % roots "k" k
      print "        critical: false"
      print "        relationship: supporting"
    }
  }
}'
