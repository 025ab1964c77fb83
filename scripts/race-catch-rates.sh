#!/usr/bin/env bash
# Catch rates of the reference server's race faults, and the clean server's false failures.
# Each race fault is run against its case RUNS times (default 100; each run is the case's
# 20 rounds over every transport it lists); a run that fails is a catch. The clean server
# runs every race case until ROUNDS rounds per case and transport have passed (default
# 1000, that is 50 runs of 20 rounds), and the race of closes again under the
# `positions-close-once` variant (the default reference closes again on every call, so that
# race judges nothing there). FAULTS limits the faults measured (a space-separated list).
# CLEAN=0 leaves the clean runs out. Figures go in BENCHMARKS.md.
#   scripts/race-catch-rates.sh [RUNS] [ROUNDS]
set -euo pipefail
cd "$(dirname "$0")/.."
runs=${1:-100}
rounds=${2:-1000}
harness=${HARNESS:-target/debug/harness}
out=$(mktemp -d)
trap 'rm -rf "$out"' EXIT
catch() {
    local fault=$1 filter=$2 caught=0
    for _ in $(seq "$runs"); do
        code=0
        "$harness" run --fault "$fault" --filter "$filter" --add-cases scripts/races \
            --out "$out" >/dev/null 2>&1 || code=$?
        case $code in
            # A fault breaking a rule SPEC.md leaves open is caught by a warning.
            0) if grep -q '"verdict": *"warn"' "$out/report.json"; then caught=$((caught + 1)); fi ;;
            1) caught=$((caught + 1)) ;;
            *) echo "harness run exited $code" >&2; exit "$code" ;;
        esac
    done
    echo "$fault ($filter): caught in $caught of $runs runs"
}
wanted() {
    [ -z "${FAULTS:-}" ] || [[ " $FAULTS " == *" $1 "* ]]
}
while read -r fault filter; do
    if wanted "$fault"; then catch "$fault" "$filter"; fi
done <<'LIST'
race-sig-nonce races.client_signature_nonce
race-signed-nonce races.signed_header_nonce
race-refresh races.refresh_connection_token
race-disable races.disable_ends_sessions
race-logout races.logout_invalidates
race-close races.close_position_once
race-bucket races.transaction_log_burst
LIST
[ "${CLEAN:-1}" = 1 ] || exit 0
clean_runs=$(((rounds + 19) / 20))
clean() {
    local failed=0
    for _ in $(seq "$clean_runs"); do
        code=0
        "$harness" run "$@" --add-cases scripts/races --out "$out" >/dev/null 2>&1 || code=$?
        case $code in
            0) ;;
            1) failed=$((failed + 1)) ;;
            *) echo "harness run exited $code" >&2; exit "$code" ;;
        esac
    done
    echo "clean ($*): $failed failing runs of $clean_runs ($((clean_runs * 20)) rounds per case and transport)"
}
clean --filter races.
clean --filter races.close_position_once --variant positions-close-once
