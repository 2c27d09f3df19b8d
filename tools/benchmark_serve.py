"""Load on //tools:serve over loopback: the multi-stream server against one request at a time.

    ./bazelw run //tools:benchmark_serve -- --clients 1,4,16 --requests 48

A fixed list of requests (the shared LibriSpeech clips, and every --long_every-th request the
long recording) is sent by N concurrent clients (the openai SDK, one thread each) to two servers
started here on 127.0.0.1: the server as shipped (--max_streams 8: requests share decode steps),
and the same server with --max_streams 1, which serves one request at a time as whisper.cpp's
server does; with --ray_replicas N, also the server on Ray Serve (N engine replicas of one thread,
behind the same HTTP API). Per server and client count: requests per second, audio seconds per wall second,
p50/p95/p99 latency of the short and the long requests, and the short requests' p95 against their
latency alone (one client, no long request running); every answer is compared with the one-client
answer for the same file (they must be equal). Timings on a shared machine are noisy: read the
ratios, and say which CPU.
"""

import concurrent.futures
import os
import statistics
import sys
import tempfile
import time

import openai
from absl import app, flags

from ckw import runfiles
from ckw.corpus import inputs
from ckw.server import running
from tools.bench import sgemm

FLAGS = flags.FLAGS
flags.DEFINE_string("model", "tiny.en", "The served model.")
flags.DEFINE_list("clients", ["1", "4", "16"], "Concurrent clients per run.")
flags.DEFINE_integer("requests", 48, "Requests per run (the same list for every run).", lower_bound=1)
flags.DEFINE_integer("long_every", 12, "Every N-th request is the long recording (0: none).", lower_bound=0)
flags.DEFINE_integer("max_streams", 8, "--max_streams of the multi-stream server.", lower_bound=1)
flags.DEFINE_integer(
    "ray_replicas",
    0,
    "Also the server on Ray Serve (a local Ray instance) with this many engine "
    "replicas of one thread each, --max_streams each (0: not run).",
    lower_bound=0,
)


def transcribe(client: openai.OpenAI, path: str, data: bytes) -> tuple[float, str, float]:
    """(latency s, text, audio s) of one request."""
    t0 = time.perf_counter()
    r = client.audio.transcriptions.create(
        file=(os.path.basename(path), data), model=FLAGS.model, response_format="verbose_json"
    )
    return time.perf_counter() - t0, r.text, r.duration


def workload() -> list[tuple[str, bytes, bool]]:
    """(path, bytes, is long) per request, the clips in turn with the long recording interleaved."""
    clips = os.path.dirname(runfiles.locate("test_audio", "librispeech/MANIFEST.tsv"))
    short = [f.path for f in inputs.list_inputs(clips)]
    long = runfiles.locate("test_audio", "long/shakespeare_sonnets_I-III_concat.flac")
    data = {p: open(p, "rb").read() for p in short + [long]}
    jobs, k = [], 0
    for i in range(FLAGS.requests):
        if FLAGS.long_every and i % FLAGS.long_every == FLAGS.long_every - 1:
            jobs.append((long, data[long], True))
        else:
            jobs.append((short[k % len(short)], data[short[k % len(short)]], False))
            k += 1
    return jobs


def percentiles(values: list[float]) -> str:
    if not values:
        return f"{'-':>20}"
    q = statistics.quantiles(values, n=100, method="inclusive") if len(values) > 1 else values * 99
    return f"{q[49]:6.2f} {q[94]:6.2f} {q[98]:6.2f}"


def run(client: openai.OpenAI, jobs: list, clients: int):
    """(wall s, [(latency, text, audio s, is long)]) with `clients` threads sending `jobs` in order."""
    t0 = time.perf_counter()
    with concurrent.futures.ThreadPoolExecutor(clients) as pool:
        done = list(pool.map(lambda job: transcribe(client, job[0], job[1]) + (job[2],), jobs))
    return time.perf_counter() - t0, done


def main(argv):
    del argv
    jobs = workload()
    counts = [int(n) for n in FLAGS.clients]
    print(
        f"{len(jobs)} requests ({sum(j[2] for j in jobs)} long) per run, model {FLAGS.model}; CPU: "
        f"{sgemm.cpu_info()['model']}, {os.cpu_count()} CPUs"
    )
    rows = []
    with tempfile.TemporaryDirectory(prefix="ckw-benchmark-serve-") as logs:
        servers = [("one at a time", ["--max_streams=1"]), ("multi-stream", [f"--max_streams={FLAGS.max_streams}"])]
        if FLAGS.ray_replicas:
            servers.append(
                (
                    f"ray {FLAGS.ray_replicas}x1",
                    ["--ray", f"--replicas={FLAGS.ray_replicas}", "--threads=1", f"--max_streams={FLAGS.max_streams}"],
                )
            )
        for name, server_flags in servers:
            server = running.Server(logs, f"--model={FLAGS.model}", "--max_queue=10000", *server_flags, timeout=300)
            client = server.client(key="-", timeout=3600)
            try:
                transcribe(client, jobs[0][0], jobs[0][1])  # warm-up
                solo = {
                    path: transcribe(client, path, data)
                    for path, data, _ in dict.fromkeys((j[0], j[1], j[2]) for j in jobs)
                }
                solo_short = [solo[p][0] for p, _, is_long in jobs if not is_long]
                for n in counts:
                    wall, done = run(client, jobs, n)
                    same = sum(text != solo[job[0]][1] for (_, text, _, _), job in zip(done, jobs))
                    short = [lat for lat, _, _, is_long in done if not is_long]
                    rows.append(
                        (
                            name,
                            n,
                            len(done) / wall,
                            sum(a for _, _, a, _ in done) / wall,
                            percentiles(short),
                            percentiles([lat for lat, _, _, is_long in done if is_long]),
                            statistics.quantiles(short, n=100, method="inclusive")[94]
                            / statistics.quantiles(solo_short, n=100, method="inclusive")[94],
                            "identical texts" if not same else f"{same} texts differ",
                        )
                    )
            finally:
                server.stop()
    base = {n: audio for name, n, _, audio, *_ in rows if name == "one at a time"}
    print(
        f"\n{'server':14} {'clients':>7} {'req/s':>6} {'audio s/s':>9} {'vs 1-at-a-time':>14}   "
        f"{'short p50/p95/p99 s':>20}   {'long p50/p95/p99 s':>20} {'short p95 / solo':>16}  check"
    )
    for name, n, rps, audio, short, long, ratio, check in rows:
        print(
            f"{name:14} {n:7d} {rps:6.2f} {audio:9.1f} {audio / base[n]:13.2f}x   {short:>20}   {long:>20} "
            f"{ratio:15.2f}x  {check}"
        )
    sys.stdout.flush()


if __name__ == "__main__":
    app.run(main)
