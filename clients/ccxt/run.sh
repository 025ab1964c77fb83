#!/usr/bin/env bash
# Points the public ccxt library (its `deribit` exchange, REST and ccxt.pro WebSocket) at
# `harness judge` and records what the judge finds; see README.md and clients/recipe.sh.
#
#   clients/ccxt/run.sh                                 # default scenario, reports in reports/ccxt/default
#   SCENARIO=short-pages clients/ccxt/run.sh
#   HARNESS=target/debug/harness clients/ccxt/run.sh    # use a harness binary already built
set -euo pipefail
source "$(dirname "$0")/../recipe.sh"
here=$root/clients/ccxt
scenario=${SCENARIO:-default}
out=${OUT:-reports/ccxt/$scenario}
venv=${VENV:-$here/.venv}

make_venv "$here"
start_judge
client_status=0
"$venv/bin/python" "$here/judge_ccxt.py" "$target" || client_status=$?
stop_judge "$client_status"
