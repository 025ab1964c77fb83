#!/usr/bin/env bash
# Catch rates of the reference server's race faults, and the clean server's false failures.
# Each race fault is run against its case RUNS times (default 100; each run is the case's
# 20 rounds over every transport it lists); a run that fails is a catch. The clean server
# runs every race case until ROUNDS rounds per case and transport have passed (default
# 1000, that is 50 runs of 20 rounds). Figures go in BENCHMARKS.md.
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
            0) ;;
            1) caught=$((caught + 1)) ;;
            *) echo "harness run exited $code" >&2; exit "$code" ;;
        esac
    done
    echo "$fault ($filter): caught in $caught of $runs runs"
}
catch race-sig-nonce races.client_signature_nonce
catch race-signed-nonce races.signed_header_nonce
catch race-refresh races.refresh_connection_token
clean_runs=$(((rounds + 19) / 20))
failed=0
for _ in $(seq "$clean_runs"); do
    code=0
    "$harness" run --filter races. --add-cases scripts/races --out "$out" >/dev/null 2>&1 || code=$?
    case $code in
        0) ;;
        1) failed=$((failed + 1)) ;;
        *) echo "harness run exited $code" >&2; exit "$code" ;;
    esac
done
echo "clean: $failed failing runs of $clean_runs ($((clean_runs * 20)) rounds per case and transport)"
