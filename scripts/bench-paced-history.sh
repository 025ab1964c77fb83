#!/usr/bin/env bash
# Issue 41 (BENCHMARKS.md): the suite against the reference paced at 1 request per second
# with burst 1 per user, its main account's transaction log holding N entries, for each N
# given (default 1000 10000 100000). Each run gets a fresh server on a free port, killed
# after the run. Extra flags after `--` go to `harness run` (e.g. `-- --full-walks`).
# HARNESS names the binary (default target/release/harness, else target/debug/harness).
set -euo pipefail
sizes=()
while [ $# -gt 0 ] && [ "$1" != "--" ]; do sizes+=("$1"); shift; done
[ "${1:-}" = "--" ] && shift
[ ${#sizes[@]} -eq 0 ] && sizes=(1000 10000 100000)
bin=${HARNESS:-target/release/harness}
[ -x "$bin" ] || bin=target/debug/harness
work=$(mktemp -d)
for n in "${sizes[@]}"; do
  port=$(python3 -c 'import socket; s=socket.socket(); s.bind(("127.0.0.1", 0)); print(s.getsockname()[1])')
  "$bin" serve --variant rate-per-user-burst-1 --log-entries "$n" --listen "127.0.0.1:$port" \
    --target-out "$work/$n.toml" > "$work/$n.serve.log" 2>&1 &
  server=$!
  until grep -q "press Ctrl-C" "$work/$n.serve.log" 2>/dev/null; do sleep 0.5; done
  start=$(date +%s.%N)
  "$bin" run --target "$work/$n.toml" --out "$work/$n" --quiet "$@" > "$work/$n.log" 2>&1 || true
  wall=$(python3 -c "import time; print(round(time.time() - $start, 1))")
  kill "$server"
  echo "$n entries: $(head -1 "$work/$n.log" | cut -c1-120)"
  echo "$n entries: $(grep -m1 ' pass, ' "$work/$n.log"); wall $wall s"
done
