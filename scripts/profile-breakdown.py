#!/usr/bin/env python3
"""Where the CPU of a profiled run goes, from `perf script` text on standard input.

Each sample is given to one side (the reference server, the harness's client, the async
runtime between them, or other work such as loading the corpus) by the frames on its
stack, and to one activity: the kernel when the sample is in it; else the innermost frame
that names one (parsing JSON, writing JSON, schema validation, copying or freeing values,
signing); else the allocator when the sample is in it; else the innermost caller (the
server's code, the harness's own code, HTTP or WebSocket framing, scheduling).
Prints two tables in Markdown: side by activity, and the heaviest harness functions
(inclusive). See BENCHMARKS.md, "Profiles", for how to record the input.

Usage: perf script -i perf.data | scripts/profile-breakdown.py [--from REGEX]
"""
import collections
import re
import sys

SIDES = [
    ("server", re.compile(r"harness::serve::|axum::serve|hyper::proto::h1::dispatch::Server|hyper_util::server")),
    ("client", re.compile(r"harness::run::|harness::transport::|reqwest::|hyper::client|hyper_util::client|tokio_tungstenite::|bench::raw_")),
    ("runtime", re.compile(r"tokio::runtime")),
]
# Activities, most specific first; the innermost frame matching any of them decides.
ACTIVITIES = [
    ("schema validation", re.compile(r"jsonschema::")),
    ("JSON parse", re.compile(r"serde_json::de::|serde_json::value::de::|Received::from_bytes")),
    ("JSON write", re.compile(r"serde_json::ser::|serde_core::ser::|jsonrpc::to_text")),
    ("copying values", re.compile(r"serde_json::value::Value as core::clone::Clone|indexmap::Bucket<K,V> as core::clone::Clone")),
    ("freeing values", re.compile(r"drop_in_place<serde_json::")),
    ("signing", re.compile(r"sha2::|hmac::|harness::auth::sign")),
]
ALLOCATOR = re.compile(r"malloc|free|realloc|^mi_|_mi_|_int_|memmove|memcpy|memset")
# Code that calls the activities above: the innermost of these decides what is left.
CALLERS = [
    ("server's own code", re.compile(r"harness::serve::")),
    ("harness's own code", re.compile(r"harness::")),
    ("HTTP framing", re.compile(r"hyper::|httparse::|http::header::|reqwest::")),
    ("WebSocket framing", re.compile(r"tungstenite::")),
    ("scheduling", re.compile(r"tokio::")),
]


def samples(lines):
    """Yields each sample's frames, innermost first, as (symbol, dso)."""
    stack = []
    for line in lines:
        if not line.strip():
            if stack:
                yield stack
            stack = []
            continue
        if line[0] in " \t":
            parts = line.strip().split(" ", 1)
            if len(parts) == 2:
                symbol, _, dso = parts[1].rpartition(" (")
                stack.append((re.sub(r"\+0x[0-9a-f]+$", "", symbol), dso.rstrip(")")))
    if stack:
        yield stack


def side_of(stack):
    for name, pattern in SIDES:
        if any(pattern.search(symbol) for symbol, _ in stack):
            return name
    return "other"


def innermost(stack, patterns):
    for symbol, _ in stack:
        for name, pattern in patterns:
            if pattern.search(symbol):
                return name
    return None


def activity_of(stack):
    leaf, dso = stack[0]
    if "kernel" in dso:
        return "kernel (sockets, wake-ups)"
    activity = innermost(stack, ACTIVITIES)
    if activity:
        return activity
    if ALLOCATOR.search(leaf):
        return "allocator"
    return innermost(stack, CALLERS) or "other"


def main():
    # `--from REGEX`: count only the samples from the first whose stack matches REGEX on
    # (e.g. `run_until` to leave out the raw client's half of `--example bench`).
    start = re.compile(sys.argv[2]) if len(sys.argv) > 2 and sys.argv[1] == "--from" else None
    table = collections.Counter()
    functions = collections.Counter()
    total = 0
    for stack in samples(sys.stdin):
        if start is not None:
            if not any(start.search(symbol) for symbol, _ in stack):
                continue
            start = None
        total += 1
        table[(side_of(stack), activity_of(stack))] += 1
        seen = set()
        for symbol, _ in stack:
            name = re.sub(r"::\{\{closure\}\}", "", symbol)
            if name.startswith("harness::") and name not in seen:
                seen.add(name)
                functions[name] += 1
    if total == 0:
        sys.exit("no samples on standard input (is it `perf script` output?)")
    sides = ["server", "client", "runtime", "other"]
    activities = sorted({activity for _, activity in table}, key=lambda a: -sum(table[(s, a)] for s in sides))
    print(f"{total} samples\n")
    print("| activity | " + " | ".join(sides) + " | all |")
    print("|---|" + "---:|" * (len(sides) + 1))
    for activity in activities:
        cells = [100 * table[(side, activity)] / total for side in sides]
        print(f"| {activity} | " + " | ".join(f"{c:.1f}%" for c in cells) + f" | {sum(cells):.1f}% |")
    columns = [100 * sum(table[(side, a)] for a in activities) / total for side in sides]
    print("| all | " + " | ".join(f"{c:.1f}%" for c in columns) + " | 100% |\n")
    print("| harness function (inclusive) | share |")
    print("|---|---:|")
    for name, count in functions.most_common(25):
        print(f"| `{name[:110]}` | {100 * count / total:.1f}% |")


if __name__ == "__main__":
    main()
