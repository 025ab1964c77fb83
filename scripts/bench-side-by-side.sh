#!/usr/bin/env bash
# Issue 51, "side by side": `harness fuzz` and Schemathesis in one run, at the same time,
# against the same paced independent server (independent/python: its transaction log paced
# at 1 request per second with a burst of 3 per account), for the same SECONDS.
#
#   scripts/bench-side-by-side.sh [SECONDS] [SEED]        # defaults: 30 s, seed 1
#
# Prints, for each tool: the requests it sent in the shared window of SECONDS, by its own
# count and clock (the harness: fuzz.json's single requests and the events' duration;
# Schemathesis: its HAR's entries and its JSON report's running time), requests per
# second, the paced method's requests against the budget of the account(s) it used, the
# throttled answers (HTTP 429 / error 10429), and the ratio of the two rates (the issue's
# bound: the harness at 30 times Schemathesis or more, with the paced method at its budget
# and 0 throttled answers to the harness); then the harness's whole run (its token-state
# sequences first, alone, then the window), and the server's own counts through a wrapper:
# requests answered, transaction-log calls and throttles by account, sessions it evicted.
# Its files stay in the work directory it prints (fuzz.json and events of the harness;
# Schemathesis's HAR, JSON report and output; the server's counts.json).
#
# What each tool gets:
#   - the harness: independent/python/target.toml on the run's port, all three accounts
#     (main 70001, sub 70002, two_factor 70010); `--duration SECONDS` keeps the paced method
#     at its budget through the window; the single requests stop at `--run-timeout-s SECONDS`
#     (there are more than it can send in that time: REQUESTS, default 6,000 a second), and
#     STATEFUL percent of them (default 10, the harness's own) to the token-state sequences,
#     sent first.
#   - Schemathesis 4.32.5 (a virtualenv under /tmp, Python 3.12 from pyenv): the OpenAPI
#     description docs/openapi/get-endpoints.json, `--max-time SECONDS`, its own defaults
#     otherwise (one worker unless ST_WORKERS says), `--continue-on-failure` so that a
#     failed check does not end an operation's tests early, and HTTP Basic credentials
#     (SPEC.md 5.6) of a key of its own: ix_tfa_sub, user 70011, the 2FA account's
#     subaccount, which the harness's target file holds no key of. The server counts the
#     transaction log's budget per user id (README.md there, open point 49), so
#     Schemathesis's unpaced calls of the paced method drain 70011's bucket, never one the
#     harness draws from; they are sent (not excluded) and its throttled answers counted.
#     The Direct Access path (lock_portfolio) is excluded: it lives at {direct_access_url},
#     which Schemathesis's single --url cannot reach.
#
# Environment: HARNESS (a harness binary; default target/release/harness, built if
# missing), VENV (default /tmp/bench-side-by-side-venv), PYTHON (a CPython 3.12),
# REQUESTS (the harness's --requests; default 6000 per second of the run), STATEFUL (its
# --stateful), ST_WORKERS (Schemathesis's --workers).
# Exit 0 when the bound is met, 1 when not. Bounded: each tool is killed SECONDS + 120 s
# after its start at the latest; the server listens on 127.0.0.1 only and every process
# started here is ended on exit.
set -euo pipefail

seconds=${1:-30}
seed=${2:-1}
case $seconds in '' | *[!0-9]* | 0) echo "SECONDS must be a whole number above 0" >&2; exit 2 ;; esac
case $seed in '' | *[!0-9]*) echo "SEED must be a whole number" >&2; exit 2 ;; esac
root=$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)
requests=${REQUESTS:-$((seconds * 6000))}
stateful=${STATEFUL:-10}
venv=${VENV:-/tmp/bench-side-by-side-venv}
schemathesis_version=4.32.5

# find_python: a CPython 3.12 interpreter (scripts/find-python.sh).
source "$root/scripts/find-python.sh"

harness=${HARNESS:-$root/target/release/harness}
if [ ! -x "$harness" ]; then
    (cd "$root" && cargo build --release -q -p harness)
fi
if [ ! -x "$venv/bin/st" ] || [ "$("$venv/bin/st" --version 2>/dev/null)" != "st, version $schemathesis_version" ]; then
    [ -x "$venv/bin/python" ] || "$(find_python)" -m venv "$venv"
    "$venv/bin/python" -m pip install -q --disable-pip-version-check "schemathesis==$schemathesis_version"
fi

work=$(mktemp -d /tmp/bench-side-by-side.XXXXXX)
pids=()
cleanup() {
    local pid
    for pid in "${pids[@]}"; do
        # A tool's subshell first passes the signal to its `timeout`, which ends the tool.
        pkill -TERM -P "$pid" 2>/dev/null || true
        kill "$pid" 2>/dev/null || true
    done
    for pid in "${pids[@]}"; do
        wait "$pid" 2>/dev/null || true
    done
}
trap cleanup EXIT
trap 'exit 130' INT TERM

port=$(python3 -c 'import socket; s = socket.socket(); s.bind(("127.0.0.1", 0)); print(s.getsockname()[1])')
# The server as independent/check starts it, through a wrapper that counts, by user id, the
# calls its transaction-log bucket saw and those it throttled, and every request it answered
# (its own log hook; a WebSocket upgrade counted apart), into counts.json when it stops: the
# server's side of the figures.
cat > "$work/counting_server.py" <<'PY'
import collections, json, sys
sys.path.insert(0, sys.argv[1])
import server

paced, throttled, answered = collections.Counter(), collections.Counter(), collections.Counter()
rate = server.txlog_rate
def counted_rate(pr):
    paced[pr.user] += 1
    try:
        rate(pr)
    except server.RpcError:
        throttled[pr.user] += 1
        raise
server.txlog_rate = counted_rate
log = server.log
def counted_log(transport, method, outcome, t_in):
    answered["ws upgrade" if method == "upgrade" else transport] += 1
    log(transport, method, outcome, t_in)
server.log = counted_log
# A session opened when its key's slots are full evicts the least recently opened one and
# ends its tokens (README.md there, open point 29): counted by client id.
evicted = collections.Counter()
open_session = server.State.open_session
def counted_open_session(self, key, user, name):
    if (key, user, name) not in self.sessions:
        held = sum(1 for k in self.sessions if k[0] == key and k[1] == user)
        if held >= server.SESSIONS_PER_KEY:
            evicted[key] += 1
    return open_session(self, key, user, name)
server.State.open_session = counted_open_session
code = server.main(["--port", sys.argv[2]])
with open(sys.argv[3], "w") as out:
    json.dump({"paced": paced, "throttled": throttled, "answered": answered, "evicted": evicted}, out)
sys.exit(code)
PY
(cd "$root/independent/python" && exec python3 "$work/counting_server.py" "$root/independent/python" "$port" "$work/counts.json") \
    > "$work/server.log" 2>&1 &
pids+=($!)
for _ in $(seq 1 100); do
    if python3 -c "import socket, sys; socket.create_connection(('127.0.0.1', $port), 0.2)" 2>/dev/null; then
        break
    fi
    sleep 0.1
done
sed "s/127\.0\.0\.1:8812/127.0.0.1:$port/g" "$root/independent/python/target.toml" > "$work/target.toml"

echo "side by side: $seconds s, seed $seed, server 127.0.0.1:$port, work $work"
echo "load before: $(uptime)"
start=$(date +%s.%N)
(
    cd "$work"
    began=$(date +%s.%N)
    code=0
    timeout -k 5 $((seconds + 120)) "$harness" fuzz --target "$work/target.toml" --seed "$seed" \
        --requests "$requests" --stateful "$stateful" --duration "$seconds" --run-timeout-s "$seconds" \
        --out "$work/harness" --events "$work/harness-events.jsonl" --quiet \
        > "$work/harness.out" 2>&1 || code=$?
    echo "{\"began\": $began, \"ended\": $(date +%s.%N), \"exit\": $code}" > "$work/harness.wall.json"
) &
pids+=($!)
harness_job=$!
# The harness sends its token-state sequences first, then its single requests for SECONDS
# (`--run-timeout-s`, `--duration`); Schemathesis starts with the single requests (the
# first request event), so the two windows of SECONDS are the same seconds.
for _ in $(seq 1 $(((seconds + 120) * 20))); do
    if grep -q '"type":"request"' "$work/harness-events.jsonl" 2>/dev/null || ! kill -0 "$harness_job" 2>/dev/null; then
        break
    fi
    sleep 0.05
done
echo "Schemathesis starts $(python3 -c "import time; print(round(time.time() - $start, 1))") s after the harness (its sequences)"
(
    cd "$work"
    began=$(date +%s.%N)
    code=0
    timeout -k 5 $((seconds + 120)) "$venv/bin/st" run "$root/docs/openapi/get-endpoints.json" \
        --url "http://127.0.0.1:$port/api/v2" --max-time "$seconds" --seed "$seed" \
        ${ST_WORKERS:+--workers "$ST_WORKERS"} \
        --auth "ix_tfa_sub:s3cr3t-tfa-sub-0c3d9e" --exclude-operation-id private.lock_portfolio \
        --continue-on-failure --report har,json --report-dir "$work/schemathesis" \
        > "$work/schemathesis.out" 2>&1 || code=$?
    echo "{\"began\": $began, \"ended\": $(date +%s.%N), \"exit\": $code}" > "$work/schemathesis.wall.json"
) &
pids+=($!)
st_job=$!
wait "$harness_job" || true
wait "$st_job" || true
kill "${pids[0]}" 2>/dev/null || true
wait "${pids[0]}" 2>/dev/null || true
echo "load after: $(uptime)"
echo "wall: $(python3 -c "import time; print(round(time.time() - $start, 1))") s for both"

python3 - "$work" <<'EOF'
import glob, json, sys

work = sys.argv[1]
PACED = "private/get_transaction_log"
BURST, RATE = 3, 1.0  # target.toml's [limits], the server's bucket
HARNESS_USERS = {"70001": "main", "70002": "sub", "70010": "two_factor"}

fuzz = json.load(open(f"{work}/harness/fuzz.json"))
finished = [json.loads(line) for line in open(f"{work}/harness-events.jsonl") if '"finished"' in line]
finished = [event for event in finished if event.get("type") == "fuzz"][-1]
stateful = fuzz.get("stateful", {})
h_wall = json.load(open(f"{work}/harness.wall.json"))
h_single, h_single_s = fuzz["sent"], finished["duration_ms"] / 1000
h_all = fuzz["sent"] + fuzz.get("shrink_requests", 0) + stateful.get("sent", 0) + stateful.get("shrink_requests", 0)
h_all_s = h_wall["ended"] - h_wall["began"]
h_throttled = fuzz["rate_limited"] + stateful.get("throttled", 0)
h_findings = len(fuzz.get("findings", [])) + len(stateful.get("findings", []))

st_wall = json.load(open(f"{work}/schemathesis.wall.json"))
har_path = glob.glob(f"{work}/schemathesis/har-*.json")
entries = json.load(open(har_path[0]))["log"]["entries"] if har_path else []
report_path = glob.glob(f"{work}/schemathesis/json-*.json")
st_report = json.load(open(report_path[0])) if report_path else {}
s_requests = len(entries)
s_seconds = st_report.get("running_time", float("nan"))
s_process = st_wall["ended"] - st_wall["began"]
s_paced = sum(1 for e in entries if e["request"]["url"].split("?")[0].endswith("/" + PACED))
s_throttled = sum(1 for e in entries if e["response"]["status"] == 429)
s_failures = st_report.get("test_cases", {}).get("unique_failures", "?")

try:
    counts = json.load(open(f"{work}/counts.json"))
except OSError:
    counts = {"paced": {}, "throttled": {}, "answered": {}}
h_budget = int(BURST + RATE * h_all_s)
s_budget = int(BURST + RATE * s_process)
h_server_paced = sum(counts["paced"].get(user, 0) for user in HARNESS_USERS)
h_server_throttled = sum(counts["throttled"].get(user, 0) for user in HARNESS_USERS)

def rate(n, s):
    return n / s if s and s > 0 else float("nan")

rows = [
    ("harness fuzz: single requests (side by side)", h_single, h_single_s,
     f"{fuzz['paced_sent']} (fuzz.json: one account allowed {fuzz['paced_allowed']})", fuzz["rate_limited"], ""),
    ("Schemathesis (side by side)", s_requests, s_seconds, f"{s_paced} / {s_budget} (its account, 70011)", s_throttled,
     f"{s_failures} unique failures, exit {st_wall['exit']}, {s_process:.1f} s process"),
    ("harness fuzz: whole run (sequences, then the above)", h_all, h_all_s,
     f"{h_server_paced} at the server / {h_budget} each for {len(HARNESS_USERS)} accounts", h_throttled,
     f"{h_findings} findings, exit {h_wall['exit']}; {stateful.get('sent', 0):,} requests in {stateful.get('sequences', 0):,} sequences "
     f"in {finished.get('stateful_duration_ms', 0) / 1000:.1f} s, {fuzz.get('shrink_requests', 0) + stateful.get('shrink_requests', 0)} shrink requests"),
]
print()
print("| run | requests | seconds | req/s | paced sent / budget | throttled | notes |")
print("|---|---|---|---|---|---|---|")
for name, n, s, paced, throttled, notes in rows:
    print(f"| {name} | {n:,} | {s:.2f} | {rate(n, s):,.1f} | {paced} | {throttled} | {notes} |")
ratio = rate(h_single, h_single_s) / rate(s_requests, s_seconds)
ratio_all = rate(h_all, h_all_s) / rate(s_requests, s_seconds)
print()
print(f"ratio (requests per second, harness / Schemathesis): {ratio:.1f}x side by side, "
      f"{ratio_all:.1f}x with the harness's whole run (bound: 30x)")
per_user = ", ".join(f"{HARNESS_USERS.get(user, user)} {n} ({counts['throttled'].get(user, 0)} throttled)"
                     for user, n in sorted(counts["paced"].items()))
answered = ", ".join(f"{k} {v:,}" for k, v in sorted(counts["answered"].items()))
print(f"server: {sum(counts['answered'].values()):,} requests answered ({answered}); transaction-log calls its bucket "
      f"counted by account: {per_user or 'none'}")
evicted = counts.get("evicted", {})
print(f"server: sessions evicted for a full key (16 slots a client id and user): {sum(evicted.values()):,}"
      + (f" ({', '.join(f'{k} {v:,}' for k, v in sorted(evicted.items()))})" if evicted else ""))
for finding in fuzz.get("findings", []) + stateful.get("findings", []):
    print(f"harness finding: {finding.get('clause')}: {str(finding.get('message', ''))[:300]}")
ok = ratio >= 30 and h_throttled == 0 and h_server_throttled == 0
print("verdict: " + ("met" if ok else "NOT met")
      + f" (>= 30x: {ratio >= 30}; harness throttled 0: {h_throttled == 0 and h_server_throttled == 0})")
sys.exit(0 if ok else 1)
EOF
