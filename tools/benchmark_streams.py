"""Many transcriptions in one engine against one at a time, measured in the same run.

    ./bazelw run //tools:benchmark_streams -- --models tiny,base --streams 1,2,4,8,16

Per model: audio seconds per wall second of a workload (the shared LibriSpeech clips and the long
recording, at the CLI's decoding defaults: beam 5, temperature fallback) transcribed by one engine
one file at a time, and by runtime/streams.py with N requests in flight; the ratio of each to the
one-at-a-time loop; every stream run's texts compared with the loop's (they must be equal). Then
the decode-step time against the rows in the step (medians over the stream runs), the memory
a request holds (its cross-K/V entry and the self-K/V of one block), and the newcomer bound: the
shortest file's latency submitted while the longest decodes, against its latency alone on the
same engine (docs/multi-stream.md states the policy; about 2x at most is the target). Engines
are loaded before the clock starts. Timings on a shared machine are noisy: read the ratios, and say which CPU.
"""

import os
import statistics
import sys
import time
from collections import defaultdict

from absl import app, flags

from runtime import runfiles
from runtime.engine import Engine
from runtime.kv_pool import bytes_per_block
from runtime.streams import Streams
from runtime.transcription import collect
from tools.bench import sgemm
from tools import transcribe  # noqa: F401 (the CLI's flags: its decoding defaults)
from tools.corpus import inputs

FLAGS = flags.FLAGS
flags.DEFINE_list("models", ["tiny"], "Variants to measure (tiny, base).")
flags.DEFINE_list("streams", ["1", "2", "4", "8"], "Requests in flight for the stream runs.")
flags.DEFINE_string("input", None, "Folder or list of audio files (default: the shared LibriSpeech clips and "
                                   "the long recording).")
flags.DEFINE_integer("files", 0, "Use only the first N files (0: all).")


def workload() -> list[str]:
    if FLAGS.input:
        paths = [f.path for f in inputs.list_inputs(FLAGS.input)]
    else:
        clips = os.path.dirname(runfiles.locate("test_audio", "librispeech/MANIFEST.tsv"))
        paths = [f.path for f in inputs.list_inputs(clips)]
        paths.append(runfiles.locate("test_audio", "long/shakespeare_sonnets_I-III_concat.flac"))
    return paths[:FLAGS.files] if FLAGS.files else paths


def one_at_a_time(engine: Engine, paths: list[str], options: dict):
    t0 = time.perf_counter()
    texts, durations = [], []
    for path in paths:
        segments, info = engine.transcribe(path, **options)
        texts.append(collect(segments, info, engine.tokenizer.eot)["text"])
        durations.append(info.duration)
    return sum(durations), time.perf_counter() - t0, texts, durations


def streamed(streams: Streams, paths: list[str], options: dict):
    t0 = time.perf_counter()
    requests = [streams.submit(path, **options) for path in paths]  # admission keeps N in flight
    results = [r.result() for r in requests]
    return sum(r.info.duration for r in requests), time.perf_counter() - t0, [r["text"] for r in results]


def newcomer(streams: Streams, short: str, long: str, options: dict) -> tuple[float, float]:
    """(seconds alone, seconds submitted while `long` decodes) for `short` on one engine."""
    t0 = time.perf_counter()
    streams.submit(short, **options).result()
    alone = time.perf_counter() - t0
    running = streams.submit(long, **options)
    next(iter(running.segments()))  # mid-decode
    t0 = time.perf_counter()
    streams.submit(short, **options).result()
    during = time.perf_counter() - t0
    running.result()
    return alone, during


def main(argv):
    del argv
    options = transcribe.options_from_flags()
    paths = workload()
    counts = [int(n) for n in FLAGS.streams]
    print(f"{len(paths)} files; CPU: {sgemm.cpu_info()['model']}, {os.cpu_count()} CPUs; decoding: beam_size="
          f"{options.get('beam_size')}, temperature={options.get('temperature')}")
    for model in FLAGS.models:
        engine = Engine.from_runfiles(model)
        audio, wall, want, durations = one_at_a_time(engine, paths, options)
        rows = [("one at a time", audio / wall, 1.0, "", "")]
        steps = defaultdict(list)
        memory = None
        for n in counts:
            with Streams.from_runfiles(model, max_streams=n) as s:
                got_audio, got_wall, got = streamed(s, paths, options)
                in_steps = sum(seconds for _, _, seconds in s.paged.steps) / got_wall
                for r, _, seconds in s.paged.steps:
                    steps[r].append(seconds)
                d = s.paged.lib.dim
                memory = (bytes_per_block(d("n_audio"), d("n_layers"), d("n_heads"), d("d_model") // d("n_heads"), 4),
                          bytes_per_block(d("block_rows"), d("n_layers"), d("n_heads"),
                                          d("d_model") // d("n_heads"), 4))
            same = "identical texts" if got == want else f"{sum(a != b for a, b in zip(got, want))} texts differ"
            rows.append((f"streams {n}", got_audio / got_wall, (got_audio / got_wall) / (audio / wall),
                         f"{100 * in_steps:.0f}%", same))
        engine.close()
        short, long = paths[durations.index(min(durations))], paths[durations.index(max(durations))]
        with Streams.from_runfiles(model, max_streams=2) as s:
            alone, during = newcomer(s, short, long, options)
        print(f"\n{model}: {audio:.0f} s of audio")
        print(f"{'engine':16} {'audio s/s':>10} {'ratio':>7} {'in steps':>9}  check")
        for name, rate, ratio, share, same in rows:
            print(f"{name:16} {rate:10.2f} {ratio:6.2f}x {share:>9}  {same}")
        print("in steps: the share of wall time inside the decoder's step calls (the rest: encoder windows, "
              "prefills, Python)")
        print(f"\n{'rows in step':>12} {'steps':>7} {'median ms':>10} {'ms per row':>11}")
        for r in sorted(steps):
            ms = 1000 * statistics.median(steps[r])
            print(f"{r:12d} {len(steps[r]):7d} {ms:10.2f} {ms / r:11.2f}")
        if memory:
            print(f"memory per request: cross-K/V entry {memory[0] / 2**20:.1f} MiB; self-K/V "
                  f"{memory[1] / 2**10:.0f} KiB per block of 16 rows per sequence (K and V, every layer)")
        print(f"newcomer: {os.path.basename(short)} ({min(durations):.1f} s) alone {alone:.2f} s, submitted while "
              f"{os.path.basename(long)} ({max(durations):.0f} s) decodes {during:.2f} s: {during / alone:.2f}x")
    sys.stdout.flush()


if __name__ == "__main__":
    app.run(main)
