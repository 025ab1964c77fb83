# Sourced, never run: `find_python` prints a CPython 3.12 interpreter: $PYTHON,
# python3.12 on the PATH, or pyenv's. Shared by clients/recipe.sh and
# scripts/bench-side-by-side.sh.
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
