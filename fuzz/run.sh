#!/usr/bin/env bash
# Runs every fuzz target for FUZZ_SECONDS (default 10) from its seed corpus, on the stable
# toolchain with --sanitizer none. New inputs go to fuzz/target/corpus/<target>, never into
# the seeds kept in fuzz/corpus. A crash prints its log and fails; otherwise one line a target.
set -euo pipefail
cd "$(dirname "${BASH_SOURCE[0]}")"
seconds="${FUZZ_SECONDS:-10}"
targets=(sse jsonrpc config schema rfc3339 header oauth_metadata oauth_token http_head lines)
if ! cargo fuzz --help > /dev/null 2>&1; then
  echo "cargo-fuzz is not installed: cargo install cargo-fuzz --locked" >&2
  exit 1
fi
cargo fuzz build --sanitizer none
for t in "${targets[@]}"; do
  mkdir -p "target/corpus/$t"
  log="target/fuzz-$t.log"
  if ! cargo fuzz run --sanitizer none "$t" "target/corpus/$t" "corpus/$t" -- \
      -max_total_time="$seconds" -rss_limit_mb=1024 > "$log" 2>&1; then
    cat "$log" >&2
    echo "fuzz target $t failed; the input is under fuzz/artifacts/$t" >&2
    exit 1
  fi
  printf '%-15s %s\n' "$t" "$(grep -o 'Done [0-9]* runs in [0-9]* second(s)' "$log" | tail -n 1)"
done
