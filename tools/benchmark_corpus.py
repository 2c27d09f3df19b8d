"""Corpus throughput on this machine: //tools:transcribe_corpus with 1 and 2 workers against one
engine transcribing the same files one after another in one process, measured in the same run.

    ./bazelw run //tools:benchmark_corpus -- --models tiny,base

Prints, per model and worker count, audio seconds per wall second (whole batch: Ray start
excluded, engine loading included, as a user waits for it), the ratio to the in-process loop
with the same number of threads, and the Ray + driver overhead per file (median of: the
driver's time from handing the file out to journaling it, minus the worker's own time on it;
the round trip, the output write and the fsyncs). Over the shared LibriSpeech clips by
default. Timings on a shared machine are noisy: read the ratios.
"""

import json
import os
import re
import statistics
import subprocess
import sys
import tempfile
import time

from absl import app, flags

from ckw import runfiles
from ckw.cli import transcribe
from ckw.corpus import inputs
from ckw.runtime.engine import Engine
from ckw.runtime.transcription import collect

FLAGS = flags.FLAGS
flags.DEFINE_list("models", ["tiny", "base"], "Variants to measure.")
flags.DEFINE_string("input", None, "Folder or list of audio files (default: the shared LibriSpeech clips).")
flags.DEFINE_list("workers", ["1", "2"], "Worker counts for the corpus runs (1 thread each).")
flags.DEFINE_integer("rounds", 1, "Repeat every measurement this often and report medians.")

SUMMARY = re.compile(r"([0-9.]+) s of audio in ([0-9.]+) s wall")


def in_process_loop(model: str, paths, threads: int):
    """One engine, the files in turn: (audio seconds, wall seconds), engine loading included."""
    os.environ["CKW_NUM_THREADS"] = str(threads)  # read when the handles are created
    t0 = time.perf_counter()
    engine = Engine.from_runfiles(model)
    audio = 0.0
    options = transcribe.options_from_flags()  # the CLI defaults, as the corpus runs use
    for path in paths:
        segments, info = engine.transcribe(path, **options)
        collect(segments, info, engine.tokenizer.eot)
        audio += info.duration
    return audio, time.perf_counter() - t0


def corpus_run(model: str, input_path: str, workers: int, scratch: str):
    """(audio seconds, batch wall seconds, overhead per file in s) of one //tools:transcribe_corpus run."""
    out = os.path.join(scratch, f"{model}-{workers}")  # a fresh output folder: nothing to skip
    cmd = [
        runfiles.locate("ckw", "ckw/cli/transcribe_corpus"),
        f"--input={input_path}",
        f"--output_dir={out}",
        f"--model={model}",
        f"--workers={workers}",
        "--threads_per_worker=1",
    ]
    result = subprocess.run(cmd, stderr=subprocess.PIPE, text=True, check=False)
    match = SUMMARY.search(result.stderr)
    if result.returncode != 0 or not match:
        raise SystemExit(f"benchmark_corpus: {' '.join(cmd)} failed ({result.returncode}): {result.stderr[-2000:]}")
    audio, wall = float(match.group(1)), float(match.group(2))
    with open(os.path.join(out, "journal.jsonl"), encoding="utf-8") as f:
        records = [r for r in map(json.loads, f) if "file" in r]
    started = {(r["file"], r["attempt"]): r["time"] for r in records if r["status"] == "started"}
    # Per file: the driver's dispatch-to-journaled time minus the worker's own time on the file.
    overhead = statistics.median(
        r["time"] - started[r["file"], r["attempt"]] - r["wall_seconds"] for r in records if r["status"] == "done"
    )
    return audio, wall, overhead


def main(argv):
    del argv
    input_path = FLAGS.input or os.path.dirname(runfiles.locate("test_audio", "librispeech/MANIFEST.tsv"))
    paths = [f.path for f in inputs.list_inputs(input_path)]
    configs = [(model, workers) for model in FLAGS.models for workers in map(int, FLAGS.workers)]
    loop, batch, overhead = ({c: [] for c in configs} for _ in range(3))
    with tempfile.TemporaryDirectory(prefix="ckw-bench-corpus-") as scratch:
        for round_ in range(FLAGS.rounds):  # each pair back to back, so load drift hits both alike
            for model, workers in configs:
                audio, wall = in_process_loop(model, paths, threads=workers)
                loop[model, workers].append(audio / wall)
                audio, wall, idle = corpus_run(model, input_path, workers, os.path.join(scratch, str(round_)))
                batch[model, workers].append(audio / wall)
                overhead[model, workers].append(idle)
    print(
        f"\n{len(paths)} files from {input_path}; CPU: {_cpu_name()}, {os.cpu_count()} CPUs; medians of "
        f"{FLAGS.rounds} rounds"
    )
    print(
        f"{'model':6} {'workers':>7} {'loop audio s/s':>15} {'corpus audio s/s':>17} {'corpus/loop':>12} "
        f"{'overhead/file':>14}"
    )
    for model, workers in configs:
        peer, ours = statistics.median(loop[model, workers]), statistics.median(batch[model, workers])
        print(
            f"{model:6} {workers:7d} {peer:15.2f} {ours:17.2f} {ours / peer:11.2f}x "
            f"{1000 * statistics.median(overhead[model, workers]):11.0f} ms"
        )
    print(
        "loop: one engine with as many threads as the corpus has workers, the files in turn, in one process; "
        "corpus: that many Ray actors x 1 thread"
    )
    sys.stdout.flush()


def _cpu_name() -> str:
    with open("/proc/cpuinfo", encoding="utf-8") as f:
        return next((line.split(":", 1)[1].strip() for line in f if line.startswith("model name")), "unknown")


if __name__ == "__main__":
    app.run(main)
