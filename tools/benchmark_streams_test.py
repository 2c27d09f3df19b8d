"""//tools:benchmark_streams at its smallest (tiny, 3 files, 1 and 2 streams, 1 worker): it runs to
the end (it crashed when its floors lacked the decoder circuit), every run's texts equal the
one-at-a-time loop's, and its tables hold the rows it promises (parsed from the printed output)."""

import subprocess

from ckw import runfiles


def test_smallest_run_prints_every_table():
    cmd = [
        runfiles.locate("ckw", "tools/benchmark_streams"),
        "--models=tiny",
        "--streams=1,2",
        "--files=3",
        "--workers=1",
    ]
    done = subprocess.run(cmd, capture_output=True, text=True, timeout=900, check=False)
    print(done.stdout, done.stderr[-3000:])
    assert done.returncode == 0
    lines = done.stdout.splitlines()
    rows = {
        line[:28].strip(): line[28:].split()
        for line in lines
        if line.startswith(("one at a time", "streams ", "1 single-thread"))
    }
    assert list(rows) == ["one at a time", "streams 1", "streams 2", "1 single-thread workers"], rows
    assert float(rows["one at a time"][0]) > 0 and rows["one at a time"][1] == "1.00x"
    for name in ("streams 1", "streams 2", "1 single-thread workers"):
        assert rows[name][-2:] == ["identical", "texts"], (name, rows[name])  # texts equal the loop's
    steps = [line.split() for line in lines if line.rstrip().endswith(("read", "FLOPs"))]
    assert steps and all(int(row[0]) >= 1 and float(row[-2].rstrip("x")) > 0 for row in steps), steps
    assert any(line.startswith("memory per request: cross-K/V entry") for line in lines)
    assert any(line.startswith("newcomer: ") for line in lines)
