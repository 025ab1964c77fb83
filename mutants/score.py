#!/usr/bin/env python3
"""The mutation score per module of a cargo-mutants run (MUTANTS.md).

    python3 mutants/score.py mutants.out [rerun/mutants.out ...] [--config .cargo/mutants.toml] [--markdown]

Reads the run's outcomes.json, leaves out the mutants the configuration excludes now
(a run made before an exclusion was added still scores as today's configuration would), and
counts per source file: mutants, unviable (they do not build), caught, time-outs that hang
the server (counted as caught), missed (time-outs that only slow the suite included), of
the missed how many mutants/equivalents.toml lists as equivalent; the score, caught and
hanging over viable less equivalent; and `decided`, caught, hanging and equivalent over
viable. Prints the missed mutants that no entry lists: each is a gap (mutants/gaps.md).

`--killed FILE` names (one cargo-mutants name with line and column a line) missed mutants
that tests written after the run kill, each checked by hand against its mutant: they count
as caught, in a column of their own. A file the configuration no longer examines (its
`examine_globs` and `exclude_globs` as they are now) is left out like an excluded mutant.
"""

import argparse
import fnmatch
import json
import re
import sys
import tomllib
from collections import defaultdict
from pathlib import Path


def key(name, root):
    """A mutant's name without line and column, its source line's text, and its column."""
    m = re.match(r"^(?P<file>[^:]+):(?P<line>\d+):(?P<column>\d+): (?P<what>.*)$", name)
    if not m:
        return name, "", 0
    try:
        text = (root / m["file"]).read_text().splitlines()[int(m["line"]) - 1]
    except (OSError, IndexError):
        text = ""
    return f"{m['file']}: {m['what']}", " ".join(text.split()), int(m["column"])


def is_listed(k, listed):
    """Whether an entry lists the mutant: the same name, and the same line text and column
    where the entry gives them."""
    name, text, column = k
    return any(
        e["mutant"] == name
        and (not e.get("line") or " ".join(e["line"].split()) == text)
        and (not e.get("column") or e["column"] == column)
        for e in listed
    )


def main():
    parser = argparse.ArgumentParser()
    parser.add_argument(
        "out",
        nargs="+",
        help="the mutants.out directory of a run; of several (a run, then reruns of some of "
        "its mutants), a later one's outcome of a mutant replaces an earlier one's",
    )
    parser.add_argument("--config", default=".cargo/mutants.toml")
    parser.add_argument("--equivalents", default="mutants/equivalents.toml")
    parser.add_argument(
        "--root", default=".", help="the tree the run mutated (for the source lines)"
    )
    parser.add_argument(
        "--killed",
        help="a file of missed mutants killed since by tests written for them (checked by hand)",
    )
    parser.add_argument("--markdown", action="store_true")
    args = parser.parse_args()
    root = Path(args.root)
    latest = {}
    for out in args.out:
        for outcome in json.loads((Path(out) / "outcomes.json").read_text())["outcomes"]:
            if outcome["scenario"] != "Baseline":
                latest[outcome["scenario"]["Mutant"]["name"]] = outcome
    outcomes = list(latest.values())
    config = tomllib.loads(Path(args.config).read_text())
    excluded = [re.compile(r) for r in config.get("exclude_re", [])]
    killed_since = set()
    if args.killed:
        killed_since = {
            l.strip()
            for l in Path(args.killed).read_text().splitlines()
            if l.strip() and not l.startswith("#")
        }

    def glob(path, patterns):
        # `**/` also matches no directory at all, as in cargo-mutants' globs.
        return any(
            fnmatch.fnmatchcase(path, p) or fnmatch.fnmatchcase(path, p.replace("**/", ""))
            for p in patterns
        )

    def examined(path):
        examine = config.get("examine_globs")
        return (not examine or glob(path, examine)) and not glob(
            path, config.get("exclude_globs", [])
        )
    listed = tomllib.loads(Path(args.equivalents).read_text()).get("mutant", [])

    rows = defaultdict(lambda: defaultdict(int))
    unlisted = []
    for outcome in outcomes:
        scenario = outcome["scenario"]
        if scenario == "Baseline":
            continue
        mutant = scenario["Mutant"]
        name = mutant["name"] if "name" in mutant else None
        if name is None:
            span = mutant["span"]["start"]
            name = f"{mutant['file']}:{span['line']}:{span['column']}: {mutant['description'] if 'description' in mutant else ''}"
        if any(r.search(name) for r in excluded) or not examined(name.split(":")[0]):
            continue
        row = rows[name.split(":")[0]]
        row["mutants"] += 1
        summary = outcome["summary"]
        if summary == "CaughtMutant":
            row["caught"] += 1
        elif summary == "Timeout":
            # A time-out counts as caught only where the mutant hangs the server; one that
            # only slows the suite (e.g. one-entry pages, paced) is listed as equivalent.
            if is_listed(key(name, root), listed):
                row["equivalent"] += 1
                row["slow"] += 1
            else:
                row["timeouts"] += 1
        elif summary == "Unviable":
            row["unviable"] += 1
        elif summary == "MissedMutant" and name in killed_since:
            row["killed since"] += 1
        elif summary == "MissedMutant":
            row["missed"] += 1
            if is_listed(key(name, root), listed):
                row["equivalent"] += 1
            else:
                unlisted.append(name)
        else:
            row["other"] += 1

    total = defaultdict(int)
    lines = []
    header = ["module", "mutants", "unviable", "caught", "timeouts", "killed since", "missed", "equivalent", "score", "decided"]
    for module in sorted(rows):
        row = rows[module]
        for k, v in row.items():
            total[k] += v
        lines.append((module.removeprefix("server/src/"), row))
    lines.append(("all", total))
    out = []
    if args.markdown:
        out.append("| " + " | ".join(header) + " |")
        out.append("|" + "---|" * len(header))
    for module, row in lines:
        viable = row["mutants"] - row["unviable"]
        killed = row["caught"] + row["timeouts"] + row["killed since"]
        missed = row["missed"] + row["slow"]
        # The score leaves out the equivalent mutants (no test could kill them).
        judged = viable - row["equivalent"]
        score = f"{100 * killed / judged:.1f}%" if judged else "-"
        decided = f"{100 * (killed + row['equivalent']) / viable:.1f}%" if viable else "-"
        cells = [module, row["mutants"], row["unviable"], row["caught"], row["timeouts"], row["killed since"], missed, row["equivalent"], score, decided]
        if args.markdown:
            out.append("| " + " | ".join(str(c) for c in cells) + " |")
        else:
            out.append("  ".join(f"{c!s:>10}" for c in cells))
    print("\n".join(out))
    if unlisted:
        print(f"\nmissed and not in {args.equivalents}:", file=sys.stderr)
        for name in unlisted:
            print(f"  {name}", file=sys.stderr)


if __name__ == "__main__":
    main()
