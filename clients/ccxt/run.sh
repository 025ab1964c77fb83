#!/usr/bin/env bash
# Points the public ccxt library (its `deribit` exchange, REST and ccxt.pro WebSocket) at
# `harness judge` and records what the judge finds. Needs cargo, python3 with venv, and
# PyPI for `pip install ccxt` (no other network: the judge listens on loopback).
#
#   clients/ccxt/run.sh                      # default scenario, reports in reports/ccxt
#   SCENARIO=short-pages clients/ccxt/run.sh
#   HARNESS=target/debug/harness clients/ccxt/run.sh   # use a harness binary already built
#
# Exit code: the judge's (0 clean, 1 a must clause broken, 3 no request arrived).
set -euo pipefail
cd "$(dirname "$0")/../.."
here=clients/ccxt
scenario=${SCENARIO:-default}
out=${OUT:-reports/ccxt/$scenario}
venv=${VENV:-$here/.venv}

[ -x "$venv/bin/python" ] || python3 -m venv "$venv"
"$venv/bin/pip" install -q -r "$here/requirements.txt"
harness=${HARNESS:-}
if [ -z "$harness" ]; then
    cargo build --release -q --bin harness
    harness=target/release/harness
fi

work=$(mktemp -d)
trap 'rm -rf "$work"' EXIT
"$harness" judge --listen 127.0.0.1:0 --scenario "$scenario" \
    --signature-scheme deri-hmac-sha256 --target-out "$work/target.toml" \
    --out "$out" --for 600 > "$work/judge.out" &
judge=$!
for _ in $(seq 1 200); do
    [ -s "$work/target.toml" ] && break
    sleep 0.1
done
client_status=0
"$venv/bin/python" "$here/judge_ccxt.py" "$work/target.toml" || client_status=$?
kill -TERM "$judge"
judge_status=0
wait "$judge" || judge_status=$?
cat "$work/judge.out"
echo "client exit $client_status; judge exit $judge_status; reports in $out"
exit "$judge_status"
