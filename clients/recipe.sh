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

# The repository root, whatever the caller's directory.
root=$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)

# Prints a CPython 3.12 interpreter: $PYTHON, python3.12 on the PATH, or pyenv's.
find_python() {
    local candidate
    for candidate in "${PYTHON:-}" python3.12 "$(pyenv root 2>/dev/null)"/versions/3.12*/bin/python3.12 \
        /root/.pyenv/versions/3.12*/bin/python3.12 /usr/local/bin/python3.12 /usr/bin/python3.12; do
        [ -n "$candidate" ] || continue
        if "$candidate" -c 'import sys; assert sys.version_info[:2] == (3, 12)' 2>/dev/null; then
            echo "$candidate"
            return 0
        fi
    done
    echo "no CPython 3.12 found: set PYTHON to one" >&2
    return 1
}

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
    (cd "$root" && exec "$harness" judge --listen 127.0.0.1:0 --scenario "$scenario" \
        --target-out "$target" --out "$out" --for 600 "$@") > "$work/judge.out" 2> "$work/judge.err" &
    judge=$!
    for _ in $(seq 1 300); do
        [ -s "$target" ] && return 0
        kill -0 "$judge" 2>/dev/null || break
        sleep 0.1
    done
    cat "$work/judge.err" >&2
    echo "harness judge did not start" >&2
    return 3
}

# Stops the judge, prints its summary, and exits with its code.
stop_judge() {
    local client_status=$1 judge_status=0
    kill -TERM "$judge"
    wait "$judge" || judge_status=$?
    cat "$work/judge.out"
    echo "client exit $client_status; judge exit $judge_status; reports in $out"
    rm -rf "$work"
    exit "$judge_status"
}
