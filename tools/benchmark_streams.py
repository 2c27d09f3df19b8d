"""Many transcriptions in one engine against one at a time, measured in the same run.

    ./bazelw run //tools:benchmark_streams -- --models tiny,base --streams 1,2,4,8,16

Per model: audio seconds per wall second of a workload (the shared LibriSpeech clips and the long
recording, at the CLI's decoding defaults: beam 5, temperature fallback) transcribed by one engine
one file at a time, by ckw/runtime/streams.py with N requests in flight, and by today's best corpus
setup: two worker processes (--workers) with a single-thread engine each, pulling files from one
queue (tools/bench/workers.py); the ratio of each to the one-at-a-time loop and to the workers;
every other run's texts compared with the loop's (they must be equal). Then per number of rows in
a decode step (over the stream runs): the steps, their median requests and time, and the step's
floor, max(bytes it must read / read bandwidth, FLOPs / sgemm rate), both probes run on every CPU
after the stream runs (tools/bench/floors.py paged_step: the decoder weights once, each request's
cross-K/V, each row's self-K/V at the mean position, estimated from the loop's windows since steps
record no positions), and the median time as a multiple of it. Then the memory a request holds
(its cross-K/V entry and the self-K/V of one block), and the newcomer bound: the shortest file's
latency submitted while the longest decodes, against its latency alone on the same engine
(docs/multi-stream.md states the policy; about 2x at most is the target). Engines are loaded
before the clock starts. Timings on a shared machine are noisy: read the ratios, and say which CPU.
"""

import json
import os
import statistics
import sys
import time
from collections import defaultdict

from absl import app, flags

from ckw import runfiles
from ckw.cli import transcribe  # noqa: F401 (the CLI's flags: its decoding defaults)
from ckw.corpus import inputs
from ckw.runtime.engine import Engine
from ckw.runtime.kv_pool import bytes_per_block
from ckw.runtime.streams import Streams
from ckw.runtime.transcription import collect
from tools.bench import bandwidth, floors, sgemm, workers

FLAGS = flags.FLAGS
flags.DEFINE_list("models", ["tiny"], "Variants to measure (tiny, base).")
flags.DEFINE_list("streams", ["1", "2", "4", "8"], "Requests in flight for the stream runs.")
flags.DEFINE_string(
    "input", None, "Folder or list of audio files (default: the shared LibriSpeech clips and the long recording)."
)
flags.DEFINE_integer("files", 0, "Use only the first N files (0: all).")
flags.DEFINE_integer("workers", 2, "Worker processes (one single-thread engine each) of the peer row.", lower_bound=1)

START_TOKENS = 3  # about: sot, language, task (and sot_prev before a prompt) precede the decoded tokens


def workload() -> list[str]:
    if FLAGS.input:
        paths = [f.path for f in inputs.list_inputs(FLAGS.input)]
    else:
        clips = os.path.dirname(runfiles.locate("test_audio", "librispeech/MANIFEST.tsv"))
        paths = [f.path for f in inputs.list_inputs(clips)]
        paths.append(runfiles.locate("test_audio", "long/shakespeare_sonnets_I-III_concat.flac"))
    return paths[: FLAGS.files] if FLAGS.files else paths


def one_at_a_time(engine: Engine, paths: list[str], options: dict):
    """(audio seconds, wall seconds, texts, durations, each file's windows) of one engine, file by file."""
    t0 = time.perf_counter()
    texts, durations, windows = [], [], []
    for path in paths:
        segments, info = engine.transcribe(path, **options)
        texts.append(collect(segments, info, engine.tokenizer.eot)["text"])
        durations.append(info.duration)
        windows.append(info.windows)
    return sum(durations), time.perf_counter() - t0, texts, durations, windows


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


def compare(got: list[str], want: list[str]) -> str:
    """The check column: every engine must give the loop's texts, whatever its speed."""
    return "identical texts" if got == want else f"{sum(a != b for a, b in zip(got, want))} texts differ"


def checkpoint(model: str) -> tuple[dict, dict]:
    """The built-in checkpoint's manifest and config: the floors count its decoder tensors as stored."""

    def load(name):
        with open(runfiles.locate(f"whisper_{model}", name), encoding="utf-8") as f:
            return json.load(f)

    return load("manifest.json"), load("model_config.json")


def mean_position(files: list[list[dict]], n_text_ctx: int, conditioned: bool) -> float:
    """The mean number of tokens a decode step's row attends, estimated from the loop's windows
    (the steps do not record positions): each attempt decodes its tokens after the start tokens
    and the prompt, the file's earlier windows' kept tokens (at most n_text_ctx // 2 - 1; none
    after a window kept above temperature 0.5, or without condition_on_previous_text), as
    ckw/runtime/longform.py builds it."""
    total = steps = 0
    for windows in files:
        previous = 0
        for window in windows:
            for attempt in window["attempts"]:
                start = START_TOKENS + min(previous, n_text_ctx // 2 - 1)
                n = len(attempt["tokens"])
                total += n * start + n * (n + 1) / 2  # step i attends start + i tokens
                steps += n
            kept = window["attempts"][-1]
            if not window["skipped"]:  # a window skipped as silence leaves the prompt as it was
                previous = 0 if not conditioned or kept["temperature"] > 0.5 else previous + len(kept["tokens"])
    return total / steps if steps else 0.0


def threads_used() -> int:
    """The CPUs this process may use: what the engines run on (threads=None)."""
    return len(os.sched_getaffinity(0))


def probes(config: dict, threads: int) -> tuple[float, float]:
    """(read GB/s, sgemm GFLOPS) on `threads` threads: the rates a decode step's floor is held to
    (bandwidth.best_of keeps the best thread count; sgemm at the encoder MLP's shape)."""
    read = bandwidth.best_of(threads)["gbps"]
    d = config["n_audio_state"]
    return read, sgemm.Sgemm(config["n_audio_ctx"], d, 4 * d, threads).run()


def print_rates(rows: list[tuple], peer: str) -> None:
    """The throughput table: each run against the loop (row 0) and against the worker processes."""
    base = rows[0][1]
    peer_rate = next(rate for name, rate, _, _ in rows if name == peer)
    vs = f"vs {FLAGS.workers} workers"
    print(f"{'engine':28} {'audio s/s':>10} {'ratio':>7} {vs:>12} {'in steps':>9}  check")
    for name, rate, share, same in rows:
        print(f"{name:28} {rate:10.2f} {rate / base:6.2f}x {rate / peer_rate:11.2f}x {share:>9}  {same}")
    print(
        "in steps: the share of wall time inside the decoder's step calls (the rest: encoder windows, prefills, Python)"
    )


def print_steps(steps: dict, manifest: dict, config: dict, position: float, read_gbps: float, gflops: float) -> None:
    """Decode-step time by rows in the step, against the step's floor at the measured rates."""
    print(
        f"\n{'rows in step':>12} {'steps':>7} {'requests':>9} {'median ms':>10} {'ms per row':>11} "
        f"{'floor ms':>9} {'x floor':>8}  bound"
    )
    for r in sorted(steps):
        requests = statistics.median(q for q, _ in steps[r])
        ms = 1000 * statistics.median(s for _, s in steps[r])
        step = floors.paged_step(manifest, config, r, requests, position, floors.state_bytes(manifest))
        read_ms, compute_ms = step["bytes"] / read_gbps / 1e6, step["flops"] / gflops / 1e6
        floor = max(read_ms, compute_ms)
        print(
            f"{r:12d} {len(steps[r]):7d} {requests:9g} {ms:10.2f} {ms / r:11.2f} {floor:9.2f} {ms / floor:7.1f}x  "
            f"{'read' if read_ms >= compute_ms else 'FLOPs'}"
        )
    print(
        f"floor: max(bytes / {read_gbps:.1f} GB/s read, FLOPs / {gflops:.1f} GFLOPS sgemm), both probed on "
        f"{threads_used()} threads after the stream runs; bytes: the decoder weights once, the cross-K/V per "
        f"request, self-K/V per row at the mean position {position:.0f} (estimated from the one-at-a-time "
        "windows: steps record no positions)"
    )


def main(argv):
    del argv
    options = transcribe.options_from_flags()
    paths = workload()
    counts = [int(n) for n in FLAGS.streams]
    peer = f"{FLAGS.workers} single-thread workers"
    print(
        f"{len(paths)} files; CPU: {sgemm.cpu_info()['model']}, {os.cpu_count()} CPUs; decoding: beam_size="
        f"{options.get('beam_size')}, temperature={options.get('temperature')}"
    )
    for model in FLAGS.models:
        manifest, config = checkpoint(model)
        engine = Engine.from_runfiles(model)
        audio, wall, want, durations, windows = one_at_a_time(engine, paths, options)
        rows = [("one at a time", audio / wall, "", "")]
        steps = defaultdict(list)  # rows in the step -> [(requests, seconds)]
        memory = None
        for n in counts:
            with Streams.from_runfiles(model, max_streams=n) as s:
                got_audio, got_wall, got = streamed(s, paths, options)
                in_steps = sum(seconds for _, _, seconds in s.paged.steps) / got_wall
                for r, q, seconds in s.paged.steps:
                    steps[r].append((q, seconds))
                d, width = s.paged.lib.dim, floors.state_bytes(manifest)
                memory = (
                    bytes_per_block(
                        d("n_audio"), d("n_layers"), d("n_heads"), d("d_model") // d("n_heads"), width["cross"]
                    ),
                    bytes_per_block(
                        d("block_rows"), d("n_layers"), d("n_heads"), d("d_model") // d("n_heads"), width["self"]
                    ),
                )
            held = "" if s.max_streams == n else f" (holds {s.max_streams})"  # the decoder's max_groups
            rows.append((f"streams {n}{held}", got_audio / got_wall, f"{100 * in_steps:.0f}%", compare(got, want)))
        engine.close()
        read_gbps, gflops = probes(config, threads_used())
        got_audio, got_wall, got = workers.transcribe(model, paths, options, FLAGS.workers)
        rows.append((peer, got_audio / got_wall, "", compare(got, want)))
        short, long = paths[durations.index(min(durations))], paths[durations.index(max(durations))]
        with Streams.from_runfiles(model, max_streams=2) as s:
            alone, during = newcomer(s, short, long, options)
        print(f"\n{model}: {audio:.0f} s of audio")
        print_rates(rows, peer)
        print_steps(
            steps,
            manifest,
            config,
            mean_position(windows, config["n_text_ctx"], options["condition_on_previous_text"]),
            read_gbps,
            gflops,
        )
        if memory:
            print(
                f"memory per request: cross-K/V entry {memory[0] / 2**20:.1f} MiB; self-K/V "
                f"{memory[1] / 2**10:.0f} KiB per block of 16 rows per sequence (K and V, every layer)"
            )
        print(
            f"newcomer: {os.path.basename(short)} ({min(durations):.1f} s) alone {alone:.2f} s, submitted while "
            f"{os.path.basename(long)} ({max(durations):.0f} s) decodes {during:.2f} s: {during / alone:.2f}x"
        )
    sys.stdout.flush()


if __name__ == "__main__":
    app.run(main)
