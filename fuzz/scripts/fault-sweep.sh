#!/usr/bin/env bash
# Runs `harness fuzz` once against the reference server with each fault of `harness faults`
# and prints which faults it finds on its own. Bounded: REQUESTS requests per fault.
# Usage: fuzz/scripts/fault-sweep.sh [REQUESTS] [SEED]
set -euo pipefail
cd "$(dirname "$0")/../.."
requests=${1:-3000}
seed=${2:-1}
harness=${HARNESS:-target/release/harness}
out=$(mktemp -d)
found=0
total=0
for fault in $("$harness" faults | awk '{print $1}'); do
    total=$((total + 1))
    set +e
    summary=$(timeout 120 "$harness" fuzz --requests "$requests" --seed "$seed" --fault "$fault" --out "$out/$fault" 2>&1)
    code=$?
    set -e
    if [ "$code" = 1 ]; then
        found=$((found + 1))
        clauses=$(grep '^FAIL' <<<"$summary" | awk '{print $2}' | sort -u | tr '\n' ' ')
        echo "found   $fault: $clauses"
    else
        echo "missed  $fault (exit $code)"
    fi
done
echo "fault sweep: $found of $total faults found with $requests requests each (seed $seed)"
rm -rf "$out"
