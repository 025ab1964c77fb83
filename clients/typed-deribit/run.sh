#!/usr/bin/env bash
# Points the public typed-deribit library (HTTP with a token and with its HMAC header, and WebSocket) at
# `harness judge` and records what the judge finds; see README.md and clients/recipe.sh.
#
#   clients/typed-deribit/run.sh                                 # default scenario, reports in reports/typed-deribit/default
#   SCENARIO=short-pages clients/typed-deribit/run.sh
#   HARNESS=target/debug/harness clients/typed-deribit/run.sh    # use a harness binary already built
set -euo pipefail
source "$(dirname "$0")/../recipe.sh"
here=$root/clients/typed-deribit
scenario=${SCENARIO:-default}
out=${OUT:-reports/typed-deribit/$scenario}
venv=${VENV:-$here/.venv}

make_venv "$here"
start_judge
client_status=0
"$venv/bin/python" "$here/judge_typed_deribit.py" "$target" || client_status=$?
stop_judge "$client_status"
