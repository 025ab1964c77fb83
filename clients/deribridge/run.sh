#!/usr/bin/env bash
# Points the public deribridge library (its WebSocket client) at
# `harness judge` and records what the judge finds; see README.md and clients/recipe.sh.
#
#   clients/deribridge/run.sh                                 # default scenario, reports in reports/deribridge/default
#   SCENARIO=short-pages clients/deribridge/run.sh
#   HARNESS=target/debug/harness clients/deribridge/run.sh    # use a harness binary already built
set -euo pipefail
source "$(dirname "$0")/../recipe.sh"
here=$root/clients/deribridge
scenario=${SCENARIO:-default}
out=${OUT:-reports/deribridge/$scenario}
venv=${VENV:-$here/.venv}

make_venv "$here"
start_judge
client_status=0
"$venv/bin/python" "$here/judge_deribridge.py" "$target" || client_status=$?
stop_judge "$client_status"
