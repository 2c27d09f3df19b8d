"""Long-form transcription speed and memory against openai-whisper and faster-whisper, measured
in the same run on the same file.

    ./bazelw run //tools:benchmark_longform -- --minutes 10            # wall time table
    ./bazelw run //tools:benchmark_longform -- --rss_minutes 60 --peers= # peak RSS, one hour

The file is joined from the shared LibriSpeech clips (repeated to length; tools/testing/
joined_audio.py) and written as 16-bit WAV. ckw runs as the CLI would (`tools.transcribe` in a
child process, srt output: wall time and peak RSS include loading the model); the peers run
in-process on the same samples once their model is loaded, with openai-whisper's transcribe()
defaults (greedy, temperature fallback 0.0-1.0, thresholds 2.4 / -1.0 / 0.6, conditioning on
the previous text, the language detected on multilingual models as ckw's CLI does; fp16=False;
faster-whisper: beam_size=1, the same options, float32 and int8, no VAD). Peak RSS of the CLI comes from the kernel (ru_maxrss) and from sampling
/proc/<pid>/status (RssAnon: memory beyond the mapped weights file, which counts as RssFile).
Timings on a shared machine are noisy: `--repeats N` interleaves N rounds and keeps each
engine's fastest; read the ratios.
"""

import os
import resource
import subprocess
import sys
import tempfile
import threading
import time

from absl import app, flags

from runtime import runfiles
from tools.bench.faster_whisper_peer import ctranslate2_model_dir
from tools.testing.joined_audio import librispeech_joined, write_wav

FLAGS = flags.FLAGS
flags.DEFINE_float("minutes", 10.0, "Length of the timed recording (0: skip the timing table).")
flags.DEFINE_float("rss_minutes", 0.0, "Also measure the CLI's peak RSS on a recording this long (0: skip).")
flags.DEFINE_list("models", ["tiny", "base"], "Variants to measure.")
flags.DEFINE_integer("threads", 2, "Threads for every engine (ckw's --threads, torch's and faster-whisper's cpu_threads).",
                     lower_bound=1)
flags.DEFINE_list("peers", ["openai-whisper", "faster-whisper"], "Peers to time (empty: ckw only).")
flags.DEFINE_integer("repeats", 1, "Rounds over all engines (interleaved, so load from elsewhere hits them alike); "
                     "the table shows each engine's fastest.")
flags.DEFINE_string("keep", None, "Directory to keep the recordings and ckw's srt files in (default: a temporary one).")

TEMPERATURES = (0.0, 0.2, 0.4, 0.6, 0.8, 1.0)


def _status_kb(pid: int, key: str) -> int:
    try:
        with open(f"/proc/{pid}/status", encoding="ascii") as f:
            for line in f:
                if line.startswith(key + ":"):
                    return int(line.split()[1])
    except OSError:
        pass
    return 0


def _cpu_name() -> str:
    with open("/proc/cpuinfo", encoding="ascii") as f:
        flags_line, name = "", "unknown CPU"
        for line in f:
            if line.startswith("flags"):
                flags_line = line
            if line.startswith("model name"):
                name = line.split(":", 1)[1].strip()
        isa = "AVX-512" if " avx512f" in flags_line else "AVX2" if " avx2" in flags_line else "baseline x86-64"
    return f"{name} ({isa})"


def run_cli(variant: str, wav: str, out_dir: str, threads: int) -> dict:
    """ckw's CLI in a child process: wall seconds, peak RSS (MB) total and anonymous, srt cues."""
    env = dict(os.environ, PYTHONPATH=os.pathsep.join(p for p in sys.path if p))
    # Greedy, as the peers' transcribe() defaults (the CLI's own default is beam search, 5 beams).
    cmd = [sys.executable, "-m", "tools.transcribe", f"--wav={wav}", f"--model={variant}", "--output_format=srt",
           f"--output_dir={out_dir}", "--noverbose", f"--threads={threads}", "--beam_size=0"]
    t0 = time.perf_counter()
    proc = subprocess.Popen(cmd, env=env, stdout=subprocess.DEVNULL, stderr=subprocess.PIPE, text=True)
    peak = {"anon": 0, "file": 0}

    def sample():
        while proc.poll() is None:
            peak["anon"] = max(peak["anon"], _status_kb(proc.pid, "RssAnon"))
            peak["file"] = max(peak["file"], _status_kb(proc.pid, "RssFile"))
            time.sleep(0.2)

    sampler = threading.Thread(target=sample, daemon=True)
    sampler.start()
    _, status, usage = os.wait4(proc.pid, 0)
    seconds = time.perf_counter() - t0
    proc.returncode = os.waitstatus_to_exitcode(status)
    sampler.join()
    err = proc.stderr.read()
    if proc.returncode != 0:
        raise SystemExit(f"benchmark_longform: the CLI failed on {wav} ({variant}):\n{err}")
    srt_path = os.path.join(out_dir, os.path.splitext(os.path.basename(wav))[0] + ".srt")
    with open(srt_path, encoding="utf-8") as f:
        cues = sum(1 for line in f if " --> " in line)
    return {"seconds": seconds, "rss_mb": usage.ru_maxrss / 1024, "anon_mb": peak["anon"] / 1024,
            "file_mb": peak["file"] / 1024, "segments": cues}


def time_openai(variant: str, audio, threads: int) -> dict:
    from models.whisper.reference import openai_reference  # test-only: PyTorch, loaded only when timed

    result, seconds = openai_reference.timed_transcribe(variant, audio, threads, temperature=TEMPERATURES)
    return {"seconds": seconds, "segments": len(result["segments"])}


def time_faster_whisper(variant: str, audio, threads: int, scratch: str, compute_type: str) -> dict:
    from faster_whisper import WhisperModel

    # One CTranslate2 folder per variant serves both compute types (converted when loaded).
    model = WhisperModel(ctranslate2_model_dir(variant, scratch), device="cpu",
                         compute_type=compute_type, cpu_threads=threads)
    t0 = time.perf_counter()
    segments, _ = model.transcribe(audio, beam_size=1, temperature=list(TEMPERATURES),
                                   compression_ratio_threshold=2.4, log_prob_threshold=-1.0, no_speech_threshold=0.6,
                                   condition_on_previous_text=True, vad_filter=False)
    n = sum(1 for _ in segments)  # lazy: decoding happens here
    return {"seconds": time.perf_counter() - t0, "segments": n}


def _row(variant: str, engine: str, r: dict, ours: dict, audio_seconds: float) -> None:
    """One line of the table."""
    print(f"{variant:<6} {engine:<24} {r['seconds']:8.1f} {audio_seconds / r['seconds']:11.1f} "
          f"{r['seconds'] / ours['seconds']:7.2f} {r['segments']:9d}", flush=True)


def main(argv):
    del argv
    folder = os.path.dirname(runfiles.locate("test_audio", "librispeech/MANIFEST.tsv"))
    scratch_dir = tempfile.TemporaryDirectory()
    work = os.path.abspath(FLAGS.keep) if FLAGS.keep else scratch_dir.name
    os.makedirs(work, exist_ok=True)
    print(f"{_cpu_name()}, {os.cpu_count()} CPUs, {FLAGS.threads} threads per engine")
    if FLAGS.minutes > 0:
        audio = librispeech_joined(folder, FLAGS.minutes * 60)
        wav = os.path.join(work, f"librispeech_{FLAGS.minutes:g}min.wav")
        write_wav(wav, audio)
        seconds = audio.size / 16000
        print(f"\n{os.path.basename(wav)}: {seconds:.1f} s of audio; ratio = peer / ckw wall time (> 1: ckw is faster)")
        print(f"{'model':<6} {'engine':<24} {'wall s':>8} {'x realtime':>11} {'ratio':>7} {'segments':>9}", flush=True)
        for variant in FLAGS.models:
            engines = {"ckw CLI (srt)": lambda v=variant: run_cli(v, wav, work, FLAGS.threads)}
            if "openai-whisper" in FLAGS.peers:
                engines["openai-whisper"] = lambda v=variant: time_openai(v, audio, FLAGS.threads)
            if "faster-whisper" in FLAGS.peers:
                for compute in ("float32", "int8"):
                    engines[f"faster-whisper {compute}"] = \
                        lambda v=variant, c=compute: time_faster_whisper(v, audio, FLAGS.threads, work, c)
            best = {}
            for _ in range(FLAGS.repeats):
                for name, measure in engines.items():
                    r = measure()
                    best[name] = r if name not in best or r["seconds"] < best[name]["seconds"] else best[name]
            for name, r in best.items():
                _row(variant, name, r, best["ckw CLI (srt)"], seconds)
    if FLAGS.rss_minutes > 0:
        audio = librispeech_joined(folder, FLAGS.rss_minutes * 60)
        wav = os.path.join(work, f"librispeech_{FLAGS.rss_minutes:g}min.wav")
        write_wav(wav, audio)
        del audio
        print(f"\npeak RSS of the CLI on {os.path.basename(wav)} ({os.path.getsize(wav) / 2**20:.0f} MB of WAV)")
        print(f"{'model':<6} {'weights MB':>10} {'peak RSS MB':>12} {'anon MB':>8} {'file MB':>8} {'wall s':>8}",
              flush=True)
        for variant in FLAGS.models:
            weights = os.path.getsize(runfiles.locate(f"whisper_{variant}", "weights.bin")) / 2**20
            r = run_cli(variant, wav, work, FLAGS.threads)
            print(f"{variant:<6} {weights:10.0f} {r['rss_mb']:12.0f} {r['anon_mb']:8.0f} {r['file_mb']:8.0f} "
                  f"{r['seconds']:8.1f}", flush=True)
    print(f"(this process: peak RSS {resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024:.0f} MB)")
    sys.stdout.flush()


if __name__ == "__main__":
    app.run(main)
