# Shared by the recipes under clients/: sourced by each run.sh, never run on its own.
#
# A recipe installs one public client library into a virtualenv, starts `harness judge`
# on loopback, runs a realistic session of the library against it, stops the judge and
# exits with the judge's code (0 clean, 1 a must clause broken, 3 no request arrived).
#
# Environment a recipe honours:
#   HARNESS   a harness binary already built (default: `cargo run --release`)
#   SCENARIO  the judge's scenario (default: default)
#   OUT       where the judge writes its reports (default: reports/<recipe>/<scenario>)
#   VENV      the virtualenv (default: clients/<recipe>/.venv)
#   PYTHON    the interpreter that makes the virtualenv (default: a CPython 3.12)
#   PROXY     when 1, the library talks to `harness proxy` in front of the judge instead:
#             the proxy's report (client: and server: results) goes to OUT, the judge's
#             to OUT/judge, and the recipe exits with the proxy's code

# The repository root, whatever the caller's directory.
root=$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)

# find_python: a CPython 3.12 interpreter (scripts/find-python.sh).
source "$root/scripts/find-python.sh"

# Makes the virtualenv $venv (once) and installs the recipe's requirements.txt into it.
make_venv() {
    local here=$1
    if [ ! -x "$venv/bin/python" ]; then
        "$(find_python)" -m venv "$venv"
    fi
    "$venv/bin/python" -m pip install -q --disable-pip-version-check -r "$here/requirements.txt"
}

# Starts `harness judge` in the background with the given extra arguments; sets $judge
# (its pid) and $target (its target file), and waits until the target file is written.
start_judge() {
    work=$(mktemp -d)
    target=$work/target.toml
    local harness=${HARNESS:-}
    if [ -z "$harness" ]; then
        (cd "$root" && cargo build --release -q --bin harness)
        harness=$root/target/release/harness
    fi
    local judge_out=$out
    [ "${PROXY:-0}" = 1 ] && judge_out=$out/judge
    (cd "$root" && exec "$harness" judge --listen 127.0.0.1:0 --scenario "$scenario" \
        --target-out "$target" --out "$judge_out" --for 600 "$@") > "$work/judge.out" 2> "$work/judge.err" &
    judge=$!
    for _ in $(seq 1 300); do
        if [ -s "$target" ]; then
            [ "${PROXY:-0}" = 1 ] || return 0
            start_proxy "$harness"
            return $?
        fi
        kill -0 "$judge" 2>/dev/null || break
        sleep 0.1
    done
    cat "$work/judge.err" >&2
    echo "harness judge did not start" >&2
    return 3
}

# Starts `harness proxy` in front of the judge (PROXY=1): the judge's reports move to
# $out/judge, the proxy's go to $out, and $target becomes the proxy's target file. The
# judge accepts any scheme name of the signed header, so the proxy does too.
start_proxy() {
    local harness=$1 judge_target=$target
    target=$work/proxy-target.toml
    (cd "$root" && exec "$harness" proxy --target "$judge_target" --listen 127.0.0.1:0 \
        --any-signature-scheme --target-out "$target" --out "$out" --for 600) \
        > "$work/proxy.out" 2> "$work/proxy.err" &
    proxy=$!
    for _ in $(seq 1 300); do
        [ -s "$target" ] && return 0
        kill -0 "$proxy" 2>/dev/null || break
        sleep 0.1
    done
    cat "$work/proxy.err" >&2
    echo "harness proxy did not start" >&2
    return 3
}

# Stops the judge (and the proxy in front of it, first), prints their summaries, and exits
# with the judge's code, or the proxy's under PROXY=1.
stop_judge() {
    local client_status=$1 judge_status=0 proxy_status=0
    if [ -n "${proxy:-}" ]; then
        kill -TERM "$proxy"
        wait "$proxy" || proxy_status=$?
        cat "$work/proxy.out"
    fi
    kill -TERM "$judge"
    wait "$judge" || judge_status=$?
    cat "$work/judge.out"
    if [ -n "${proxy:-}" ]; then
        echo "client exit $client_status; proxy exit $proxy_status; judge exit $judge_status; reports in $out"
        rm -rf "$work"
        exit "$proxy_status"
    fi
    echo "client exit $client_status; judge exit $judge_status; reports in $out"
    rm -rf "$work"
    exit "$judge_status"
}
