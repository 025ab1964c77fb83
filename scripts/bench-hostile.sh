#!/usr/bin/env bash
# Issue 49 (BENCHMARKS.md): `harness run` and `harness fuzz` against each hostile behaviour
# of the issue, each served alone by `--example hostile` (the integration tests' hostile
# server: the reference behind listeners that misbehave one way, each listener's first
# request answered as it should), at the commands' default
# concurrency and timeouts. Prints, per behaviour and command: exit code, wall time, peak
# resident memory (`/usr/bin/time -v`) and the size of report.json (fuzz.json for fuzz).
# Exits 1 when a figure breaks the bound: within 30 s, exit 1 or 3, peak RSS <= 256 MB,
# report <= 16 MB and written.
#
#   cargo build --release --bin harness --example hostile
#   scripts/bench-hostile.sh [BEHAVIOUR...]        # default: the behaviours
#
# FUZZ_REQUESTS (default 300) bounds each fuzz run; HARNESS and HOSTILE name the binaries
# (default target/release/harness and target/release/examples/hostile).
set -euo pipefail
behaviours=("$@")
[ ${#behaviours[@]} -eq 0 ] && behaviours=(body-1mb gzip-1mb endless-chunked endless-close
  empty-continuations silent tls-garbage long-integer duplicate-members binary-frames)
bin=${HARNESS:-target/release/harness}
hostile=${HOSTILE:-target/release/examples/hostile}
requests=${FUZZ_REQUESTS:-300}
max_wall_s=30
max_rss_kb=$((256 * 1000))
max_report_bytes=$((16 * 1000 * 1000))
[ -x /usr/bin/time ] || { echo "needs /usr/bin/time (Debian: apt-get install -y time)" >&2; exit 2; }
work=$(mktemp -d)
broken=0
server=
trap '[ -n "$server" ] && kill "$server" 2>/dev/null; true' EXIT
printf '| behaviour | command | exit | wall s | peak RSS MB | report KB | bound |\n'
printf '|---|---|---|---|---|---|---|\n'
for behaviour in "${behaviours[@]}"; do
  for command in run fuzz; do
    dir="$work/$behaviour-$command"
    mkdir -p "$dir"
    "$hostile" "$behaviour" --honest-first --target-out "$dir/target.toml" > "$dir/server.log" 2>&1 &
    server=$!
    for _ in $(seq 100); do [ -f "$dir/target.toml" ] && break; sleep 0.1; done
    case $command in
      run) args=(run --quiet); report=report.json ;;
      fuzz) args=(fuzz --quiet --requests "$requests" --seed 49); report=fuzz.json ;;
    esac
    set +e
    /usr/bin/time -v -o "$dir/time.txt" "$bin" "${args[@]}" --target "$dir/target.toml" \
      --out "$dir/out" > "$dir/stdout.txt" 2> "$dir/stderr.txt"
    code=$?
    set -e
    kill "$server" 2>/dev/null || true
    wait "$server" 2>/dev/null || true
    server=
    wall=$(awk -F': ' '/Elapsed \(wall clock\)/ {n = split($2, p, ":"); s = 0;
      for (i = 1; i <= n; i++) s = s * 60 + p[i]; printf "%.1f", s}' "$dir/time.txt")
    rss_kb=$(awk -F': ' '/Maximum resident set size/ {print $2}' "$dir/time.txt")
    if [ -f "$dir/out/$report" ]; then
      size=$(stat -c %s "$dir/out/$report")
    else
      size=-1
    fi
    verdict=ok
    if [ "$code" -ne 1 ] && [ "$code" -ne 3 ]; then verdict="exit $code"; fi
    if awk "BEGIN {exit !($wall > $max_wall_s)}"; then verdict="wall > ${max_wall_s} s"; fi
    if [ "$rss_kb" -gt "$max_rss_kb" ]; then verdict="RSS > 256 MB"; fi
    if [ "$size" -lt 0 ]; then verdict="no $report"; fi
    if [ "$size" -gt "$max_report_bytes" ]; then verdict="$report > 16 MB"; fi
    [ "$verdict" = ok ] || broken=1
    printf '| %s | %s | %s | %s | %s | %s | %s |\n' "$behaviour" "$command" "$code" "$wall" \
      "$((rss_kb / 1000))" "$((size < 0 ? -1 : size / 1000))" "$verdict"
  done
done
echo "work files: $work" >&2
exit "$broken"
