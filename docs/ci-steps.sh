#!/usr/bin/env bash
# The conformance gate's shell steps, shared by the GitHub Actions workflow and the GitLab
# CI job of docs/ci.md (copy this file into your repository), and run by .ci/run against
# the reference server. It starts your server if asked, waits until it listens, runs the
# suite with your known failures, and writes a Markdown diff against a baseline run.
#
# Environment:
#   TARGET      target file describing your server (required; see README.md)
#   HARNESS     the harness binary (default: harness on PATH)
#   SERVER_CMD  command that starts your server in the background (default: none, it runs)
#   EXPECT      known failures (default: conformance/expect.toml; not used when absent)
#   OUT         report directory (default: reports/conformance)
#   BASELINE    an earlier run's report.json to diff against (default: none)
#   WAIT_S      seconds to wait for the server to listen (default: 60)
#
# Exit status: harness run's (0 pass, 1 a new failure, 2 bad input, 3 harness error,
# 4 interrupted). The reports and $OUT/diff.md are written whatever it is.
set -euo pipefail

HARNESS=${HARNESS:-harness}
EXPECT=${EXPECT:-conformance/expect.toml}
OUT=${OUT:-reports/conformance}
WAIT_S=${WAIT_S:-60}
: "${TARGET:?set TARGET to your target file}"

server_pid=
if [ -n "${SERVER_CMD:-}" ]; then
  bash -c "$SERVER_CMD" &
  server_pid=$!
  trap 'kill "$server_pid" 2>/dev/null || true' EXIT
fi

# Wait until the target file names a host and port that accept connections.
ready=
for _ in $(seq 1 "$((WAIT_S * 4))"); do
  if [ -f "$TARGET" ]; then
    base_url=$(sed -n 's/^base_url *= *"\([^"]*\)".*/\1/p' "$TARGET" | head -n 1)
    authority=${base_url#*://}
    authority=${authority%%/*}
    host=${authority%:*}
    port=${authority##*:}
    if [ "$host" = "$authority" ]; then
      if [ "${base_url%%://*}" = https ]; then port=443; else port=80; fi
    fi
    if [ -n "$base_url" ] && (exec 3<>"/dev/tcp/$host/$port") 2>/dev/null; then
      ready=yes
      break
    fi
  fi
  sleep 0.25
done
if [ -z "$ready" ]; then
  echo "ci-steps: the server of $TARGET did not listen within $WAIT_S s" >&2
  exit 3
fi

# The gate: known failures are xfail, a new failure fails, a fixed one is reported.
args=(run --quiet --target "$TARGET" --out "$OUT")
if [ -f "$EXPECT" ]; then
  args+=(--expect "$EXPECT")
fi
status=0
"$HARNESS" "${args[@]}" || status=$?

# The pull-request comment: what changed since the baseline run.
mkdir -p "$OUT"
if [ -n "${BASELINE:-}" ] && [ -f "$BASELINE" ] && [ -f "$OUT/report.json" ]; then
  "$HARNESS" diff --format markdown "$BASELINE" "$OUT/report.json" >"$OUT/diff.md" || true
else
  echo "### Conformance: no baseline run to compare with" >"$OUT/diff.md"
fi
exit "$status"
