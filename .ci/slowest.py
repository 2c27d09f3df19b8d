#!/usr/bin/env python3
"""Prints the slowest actions of a Bazel JSON trace profile, and the time per kind of action.

Usage: slowest.py PROFILE[.gz] [N]. CI prints this after its test phase: where the minutes went.
"""

import collections
import gzip
import json
import sys


def main(argv):
    if len(argv) not in (2, 3):
        sys.exit("usage: slowest.py PROFILE[.gz] [N]")
    path, count = argv[1], int(argv[2]) if len(argv) == 3 else 20
    opener = gzip.open if path.endswith(".gz") else open
    try:
        with opener(path, "rt") as f:
            trace = json.load(f)
    except (OSError, ValueError) as e:
        sys.exit(f"slowest.py: cannot read the profile {path}: {e}")
    events = trace["traceEvents"] if isinstance(trace, dict) else trace
    actions = [e for e in events if e.get("cat") == "action processing" and e.get("ph") == "X"]
    by_kind = collections.defaultdict(lambda: [0, 0.0])
    for e in actions:
        kind = by_kind[e["name"].split(" ")[0]]
        kind[0] += 1
        kind[1] += e["dur"] / 1e6
    print(f"\n{'action kind':<24} {'count':>6} {'seconds':>9}")
    for name, (n, secs) in sorted(by_kind.items(), key=lambda kv: -kv[1][1])[:8]:
        print(f"{name:<24} {n:>6} {secs:>9.1f}")
    print(f"\n{'seconds':>8}  slowest actions")
    for e in sorted(actions, key=lambda e: -e["dur"])[:count]:
        print(f"{e['dur'] / 1e6:>8.1f}  {e['name']}")


if __name__ == "__main__":
    main(sys.argv)
