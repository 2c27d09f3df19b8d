"""//models/silero_vad:benchmark_vad at its smallest (6 s of the long recording, one run): it runs to
the end, its table has the rows it promises (ckw at 1 and 2 threads, onnxruntime), onnxruntime's
own ratio is 1.00x, and ckw's probabilities stay within 1e-4 of onnxruntime's on every window.
Not timed: the numbers are a benchmark's, this only proves the tool works."""

import subprocess

from ckw import runfiles


def test_smallest_run_prints_the_table():
    cmd = [runfiles.locate("ckw", "models/silero_vad/benchmark_vad"), "--minutes=0.1", "--runs=1"]
    done = subprocess.run(cmd, capture_output=True, text=True, timeout=600, check=False)
    print(done.stdout, done.stderr[-3000:])
    assert done.returncode == 0
    rows = {
        line[:40].strip(): line[40:].split() for line in done.stdout.splitlines() if line.startswith(("ckw,", "onnx"))
    }
    assert list(rows) == ["ckw, 1 thread", "ckw, 2 threads", "onnxruntime (faster-whisper), 1 thread"], rows
    assert rows["onnxruntime (faster-whisper), 1 thread"][3] == "1.00x"
    for name, (best, median, realtime, ratio, err) in rows.items():
        assert 0 < float(best) <= float(median) and float(realtime) > 0 and ratio.endswith("x"), (name, rows[name])
        assert float(err) <= 1e-4, (name, err)
