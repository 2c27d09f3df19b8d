"""Speech probabilities of a long recording: libckw_silero_vad.so against faster-whisper's
onnxruntime session on the same model, same run.

    ./bazelw run //models/silero_vad:benchmark_vad -- [--minutes 10] [--runs 5]

The shared 159 s recording is repeated to --minutes; each engine computes the probabilities of
every window --runs times (min and median wall time), ours at 1 and 2 threads, onnxruntime as
faster-whisper configures it (one thread). Read the ratios and say which CPU.
"""

import os
import statistics
import time

import numpy as np
from absl import app, flags

from ckw import runfiles
from ckw.runtime import audio_stream
from ckw.runtime.engine import Frontend
from ckw.runtime.vad import SileroVad

FLAGS = flags.FLAGS
flags.DEFINE_float("minutes", 10.0, "Length of the recording.", lower_bound=0.1)
flags.DEFINE_integer("runs", 5, "Timed runs per engine.", lower_bound=1)


def recording() -> np.ndarray:
    frontend = Frontend(runfiles.locate("ckw", "models/whisper/libckw_whisper_frontend.so"))
    path = runfiles.locate("test_audio", "long/shakespeare_sonnets_I-III_concat.flac")
    one = np.concatenate(
        list(audio_stream.resample_16k(frontend.handle, audio_stream.open_source(frontend.handle, path)))
    )
    n = int(FLAGS.minutes * 60 * 16000)
    return np.tile(one, n // len(one) + 1)[:n]


def timed(fn) -> tuple[list[float], np.ndarray]:
    out, times = None, []
    for _ in range(FLAGS.runs):
        t0 = time.perf_counter()
        out = fn()
        times.append(time.perf_counter() - t0)
    return times, out


def main(argv):
    del argv
    from faster_whisper.vad import get_vad_model  # the peer, as faster-whisper runs it

    audio = recording()
    padded = np.pad(audio, (0, 512 - len(audio) % 512))
    model = get_vad_model()
    model(padded[: 512 * 150].copy())  # warm-up
    rows = []
    peer_times, peer = timed(lambda: model(padded.copy()))
    for threads in (1, 2):
        with SileroVad.from_runfiles(threads=threads) as vad:
            vad.speech_probabilities(audio[: 16000 * 5])  # warm-up
            times, ours = timed(lambda: vad.speech_probabilities(audio))
        rows.append((f"ckw, {threads} thread{'s' if threads > 1 else ''}", times, float(np.abs(ours - peer).max())))
    rows.append(("onnxruntime (faster-whisper), 1 thread", peer_times, 0.0))
    cpu = next((line.split(":", 1)[1].strip() for line in open("/proc/cpuinfo") if line.startswith("model name")), "?")
    print(
        f"{len(audio) / 16000:.0f} s of audio, {len(peer)} windows; "
        f"CPU: {cpu}, {os.cpu_count()} CPUs; {FLAGS.runs} runs"
    )
    print(
        f"{'engine':40} {'min s':>7} {'median s':>9} {'x realtime':>10} {'vs onnxruntime':>14} {'max |p - p_ort|':>15}"
    )
    base = min(peer_times)
    for name, times, err in rows:
        print(
            f"{name:40} {min(times):7.3f} {statistics.median(times):9.3f} {len(audio) / 16000 / min(times):10.0f} "
            f"{min(times) / base:13.2f}x {err:15.1e}"
        )


if __name__ == "__main__":
    app.run(main)
