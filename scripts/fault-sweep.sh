#!/usr/bin/env bash
# Runs `harness fuzz` against the embedded reference server once per seeded fault of
# `harness faults`, and prints per fault whether the fuzzer found it (some finding: exit 1),
# then the count. The clean reference gives no finding, so a finding is the fault's.
#
#   HARNESS=target/release/harness scripts/fault-sweep.sh [REQUESTS] [SEED] [fuzz flags...]
#
# FAULTS="name name ..." sweeps only those faults.
# Defaults: 5000 requests, seed 1, the release binary. Each run is bounded by its request
# count and --run-timeout-s.
set -euo pipefail
harness=${HARNESS:-target/release/harness}
requests=${1:-5000}
seed=${2:-1}
shift $(($# < 2 ? $# : 2))
found=0
total=0
faults=${FAULTS:-$("$harness" faults | awk '{print $1}')}
for fault in $faults; do
  out=$(mktemp -d)
  status=0
  "$harness" fuzz --fault "$fault" --requests "$requests" --seed "$seed" --run-timeout-s 120 \
    --out "$out" "$@" >/dev/null 2>&1 || status=$?
  clauses=$(python3 -c 'import json, sys
report = json.load(open(sys.argv[1]))
found = {finding["clause"] for finding in report["findings"]}
found |= {finding["clause"] for finding in report.get("stateful", {}).get("findings", [])}
print(", ".join(sorted(found)))' "$out/fuzz.json" 2>/dev/null || true)
  rm -rf "$out"
  total=$((total + 1))
  case $status in
    1) found=$((found + 1)); echo "found   $fault  $clauses" ;;
    0) echo "missed  $fault" ;;
    *) echo "error   $fault (exit $status)" ;;
  esac
done
echo "found $found of $total faults ($requests requests, seed $seed)"
