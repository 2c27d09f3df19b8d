"""Reads valgrind memcheck XML reports and fails on every error or definite leak that involves our
code: a frame of the error's stack, or of the stack where an uninitialised value was created
(--track-origins=yes), in one of our libraries (libckw_*) or a ckw_ function.

The Python interpreter this runs under (pyenv's 3.11) reports memcheck errors of its own even for
`python3 -c pass`; those never touch our code and are counted, not failed. Suppressing them with
a suppression file instead would also hide our bugs wherever the interpreter is the one that
reads a value we left uninitialised.

    valgrind_check.py REPORT.xml...
"""

import sys
import xml.etree.ElementTree as ET
from collections import Counter


def ours(frame) -> bool:
    obj = frame.findtext("obj") or ""
    fn = frame.findtext("fn") or ""
    return "/libckw_" in obj or fn.startswith("ckw_")


def describe(error) -> str:
    what = error.findtext("what") or error.findtext("xwhat/text") or error.findtext("kind")
    frames = [f"{f.findtext('fn') or '?'} ({(f.findtext('obj') or '?').rsplit('/', 1)[-1]})"
              for stack in error.findall("stack") for f in stack.findall("frame")]
    return f"{what}\n      " + "\n      ".join(frames[:12])


def main(paths) -> int:
    counts = Counter()
    failures = []
    reports = 0
    for path in paths:
        try:
            root = ET.parse(path).getroot()
        except ET.ParseError as e:  # a child that exec'd another program leaves an empty report
            print(f"valgrind_check: {path}: skipped ({e})")
            continue
        reports += 1
        for error in root.iter("error"):
            kind = error.findtext("kind")
            involved = any(ours(f) for stack in error.findall("stack") for f in stack.findall("frame"))
            counts[(kind, "ours" if involved else "interpreter")] += 1
            if involved:
                failures.append(describe(error))
    if reports == 0:
        print("valgrind_check: no readable report; did valgrind run?")
        return 1
    print(f"{'kind':28} {'ours':>6} {'interpreter':>12}")
    for kind in sorted({k for k, _ in counts}):
        print(f"{kind:28} {counts[(kind, 'ours')]:6d} {counts[(kind, 'interpreter')]:12d}")
    for f in failures:
        print("  " + f)
    print(f"valgrind_check: {len(failures)} errors in our code ({reports} reports)")
    return 1 if failures else 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
