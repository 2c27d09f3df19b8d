"""Long-form transcription speed and memory against openai-whisper and faster-whisper, measured
in the same run on the same file.

    ./bazelw run //tools:benchmark_longform -- --minutes 10            # wall time and WER table
    ./bazelw run //tools:benchmark_longform -- --modes=batched --recordings=gaps --models=tiny
    ./bazelw run //tools:benchmark_longform -- --rss_minutes 60 --peers= --minutes 0  # peak RSS, one hour

Recordings (--recordings), made from the shared LibriSpeech clips repeated to length
(tools/testing/joined_audio.py) and written as 16-bit WAV: `joined`, the clips 0.5 s apart, and
`gaps`, the same clips between long silences, noise and hum (ckw/runtime/testing/speech_gaps.py; 4.4 s
on average). Modes (--modes): `sequential`, openai-whisper's transcribe();
`vad`, the same on the speech Silero VAD finds (ckw's --vad_filter, faster-whisper's
vad_filter=True); `batched`, faster-whisper's BatchedInferencePipeline (ckw's --batch_size,
--batch_size chunks at once, without timestamps, its default); `batched-ts`, the same with
timestamps (ckw's CLI default, faster-whisper's without_timestamps=False). WER: corpus word errors against the
clips' LibriSpeech transcripts after openai-whisper's EnglishTextNormalizer. Every engine decodes
greedily (beam size 1); ckw runs each of --precisions; in the vad and batched modes the peer is
faster-whisper int8. ckw runs as the CLI would (`ckw.cli.transcribe` in a
child process, srt output: wall time and peak RSS include loading the model); the peers run
in-process on the same samples once their model is loaded, with openai-whisper's transcribe()
defaults (greedy, temperature fallback 0.0-1.0, thresholds 2.4 / -1.0 / 0.6, conditioning on
the previous text, the language detected on multilingual models as ckw's CLI does; fp16=False;
faster-whisper: beam_size=1, the same options, float32 and int8). Peak RSS of the CLI comes
from the kernel (ru_maxrss) and from sampling /proc/<pid>/status (RssAnon: memory beyond the
mapped weights file, which counts as RssFile). Timings on a shared machine are noisy:
`--repeats N` interleaves N rounds and keeps each engine's fastest; read the ratios.
"""

import logging
import os
import resource
import subprocess
import sys
import tempfile
import threading
import time

from absl import app, flags

from ckw import runfiles
from ckw.runtime.engine import BUILT_IN
from ckw.runtime.testing import speech_gaps
from tools.bench import isa, sgemm
from tools.bench.faster_whisper_peer import ctranslate2_model_dir
from tools.bench.wer import word_error_rate  # test-only: openai-whisper's normalizer
from tools.testing.joined_audio import librispeech_clips, librispeech_joined, write_wav

FLAGS = flags.FLAGS
MODES = ("sequential", "vad", "batched", "batched-ts")
MODEL_NAMES = {variant: name for variant, name in BUILT_IN.items()}  # --models' variants as the CLI's --model
RECORDINGS = ("joined", "gaps")
flags.DEFINE_float("minutes", 10.0, "Length of the timed recording (0: skip the timing table).")
flags.DEFINE_float("rss_minutes", 0.0, "Also measure the CLI's peak RSS on a recording this long (0: skip).")
flags.DEFINE_list("models", ["tiny", "base"], "Variants to measure.")
flags.DEFINE_integer(
    "threads", 2, "Threads for every engine (ckw's --threads, torch's and faster-whisper's cpu_threads).", lower_bound=1
)
flags.DEFINE_list("peers", ["openai-whisper", "faster-whisper"], "Peers to time (empty: ckw only).")
flags.DEFINE_integer(
    "repeats",
    1,
    "Rounds over all engines (interleaved, so load from elsewhere hits them alike); "
    "the table shows each engine's fastest.",
)
flags.DEFINE_list("modes", list(MODES), "Modes to time: sequential, vad, batched, batched-ts (module docstring).")
flags.DEFINE_list("recordings", list(RECORDINGS), "Recordings to time them on: joined, gaps (module docstring).")
flags.DEFINE_list("precisions", ["fp32", "int8"], "ckw builds timed in every mode (fp32 always, the ratios' base).")
flags.DEFINE_integer("batch_size", 8, "Chunks at once in the batched mode, for ckw and faster-whisper.", lower_bound=1)
flags.DEFINE_enum(
    "isa",
    "best",
    isa.CHOICES,
    "Instruction set for the whole run. avx2: on a machine with AVX-512, "
    "ckw's and faster-whisper's AVX2 paths (CKW_ISA=avx2, CT2_FORCE_CPU_ISA=AVX2), as benchmark_e2e's.",
)
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
    cpu = sgemm.cpu_info()
    best = "AVX-512" if cpu["flags"]["avx512f"] else "AVX2" if cpu["flags"]["avx2"] else "baseline x86-64"
    capped = " ".join(f"{k}={v}" for k, v in isa.ISA_ENV.get(FLAGS.isa, {}).items())
    return f"{cpu['model']} ({best}{', capped: ' + capped if capped else ''})"


# The CLI's flags per mode (greedy in every mode: the peers' transcribe() default; the CLI's own is
# beam search, 5 beams).
CLI_MODE_FLAGS = {
    "sequential": [],
    "vad": ["--vad_filter=True"],
    "batched": ["--batch_size={batch_size}", "--without_timestamps=True"],
    "batched-ts": ["--batch_size={batch_size}", "--without_timestamps=False"],
}


def run_cli(
    variant: str, wav: str, out_dir: str, threads: int, mode: str = "sequential", precision: str = "fp32"
) -> dict:
    """ckw's CLI in a child process: wall seconds, peak RSS (MB) total and anonymous, srt cues and
    their text."""
    env = dict(os.environ, PYTHONPATH=os.pathsep.join(p for p in sys.path if p))
    cmd = [
        sys.executable,
        "-m",
        "ckw.cli.transcribe",
        f"--wav={wav}",
        f"--model={MODEL_NAMES[variant]}",
        "--output_format=srt",
        f"--output_dir={out_dir}",
        "--noverbose",
        f"--threads={threads}",
        "--beam_size=0",
        f"--precision={precision}",
        *(f.format(batch_size=FLAGS.batch_size) for f in CLI_MODE_FLAGS[mode]),
    ]
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
        cues = [block.splitlines() for block in f.read().split("\n\n") if " --> " in block]
    return {
        "seconds": seconds,
        "rss_mb": usage.ru_maxrss / 1024,
        "anon_mb": peak["anon"] / 1024,
        "file_mb": peak["file"] / 1024,
        "segments": len(cues),
        "text": " ".join(" ".join(lines[2:]) for lines in cues),
    }


def time_openai(variant: str, audio, threads: int) -> dict:
    from models.whisper.reference import openai_reference  # test-only: PyTorch, loaded only when timed

    result, seconds = openai_reference.timed_transcribe(variant, audio, threads, temperature=TEMPERATURES)
    return {"seconds": seconds, "segments": len(result["segments"]), "text": result["text"]}


def time_faster_whisper(
    variant: str, audio, threads: int, scratch: str, compute_type: str, mode: str = "sequential"
) -> dict:
    from faster_whisper import BatchedInferencePipeline, WhisperModel

    # One CTranslate2 folder per variant serves both compute types (converted when loaded).
    model = WhisperModel(
        ctranslate2_model_dir(variant, scratch), device="cpu", compute_type=compute_type, cpu_threads=threads
    )
    t0 = time.perf_counter()
    if mode.startswith("batched"):
        segments, _ = BatchedInferencePipeline(model).transcribe(
            audio, beam_size=1, batch_size=FLAGS.batch_size, without_timestamps=mode == "batched"
        )
    else:
        segments, _ = model.transcribe(
            audio,
            beam_size=1,
            temperature=list(TEMPERATURES),
            compression_ratio_threshold=2.4,
            log_prob_threshold=-1.0,
            no_speech_threshold=0.6,
            condition_on_previous_text=True,
            vad_filter=mode == "vad",
        )
    segments = list(segments)  # lazy: decoding happens here
    return {"seconds": time.perf_counter() - t0, "segments": len(segments), "text": " ".join(s.text for s in segments)}


def engines_of(mode: str, variant: str, wav: str, audio, work: str) -> dict:
    """Name -> a call timing that engine in `mode`; the first is ckw fp32, the row the ratios divide."""
    threads = FLAGS.threads
    precisions = ["fp32"] + [p for p in FLAGS.precisions if p != "fp32"]
    engines = {f"ckw {p} CLI": lambda p=p: run_cli(variant, wav, work, threads, mode, p) for p in precisions}
    if mode == "sequential" and "openai-whisper" in FLAGS.peers:
        engines["openai-whisper"] = lambda: time_openai(variant, audio, threads)
    if "faster-whisper" in FLAGS.peers:
        for compute in ("float32", "int8") if mode == "sequential" else ("int8",):
            engines[f"faster-whisper {compute}"] = lambda c=compute: time_faster_whisper(
                variant, audio, threads, work, c, mode
            )
    return engines


def recording(name: str, folder: str, seconds: float) -> tuple:
    """(samples, reference transcript) of the recording `name` (module docstring)."""
    if name == "joined":
        clips = librispeech_clips(folder, seconds)
        return librispeech_joined(folder, seconds), " ".join(t for _, t in clips)
    # The clips between speech_gaps' kinds of gap in turn (silence, noise, a pause, hum; 4.4 s on average).
    kinds = speech_gaps.GAPS
    clips = librispeech_clips(folder, seconds, gap_seconds=sum(g.seconds for g in kinds) / len(kinds))
    made = speech_gaps.with_gaps([audio for audio, _ in clips], [kinds[k % len(kinds)] for k in range(len(clips) + 1)])
    return made.samples, " ".join(t for _, t in clips)


def _row(variant: str, mode: str, engine: str, r: dict, ours: dict, audio_seconds: float) -> None:
    """One line of the table."""
    print(
        f"{variant:<6} {mode:<10} {engine:<22} {r['seconds']:8.1f} {audio_seconds / r['seconds']:11.1f} "
        f"{r['seconds'] / ours['seconds']:7.2f} {r['segments']:9d} {r['wer']:6.2f}",
        flush=True,
    )


def main(argv):
    del argv
    isa.reexec_for(FLAGS.isa)
    logging.getLogger("faster_whisper").setLevel(logging.WARNING)  # its INFO lines would break up the table
    folder = os.path.dirname(runfiles.locate("test_audio", "librispeech/MANIFEST.tsv"))
    scratch_dir = tempfile.TemporaryDirectory()
    work = os.path.abspath(FLAGS.keep) if FLAGS.keep else scratch_dir.name
    os.makedirs(work, exist_ok=True)
    print(f"{_cpu_name()}, {os.cpu_count()} CPUs, {FLAGS.threads} threads per engine")
    for name in FLAGS.recordings if FLAGS.minutes > 0 else ():
        if name not in RECORDINGS or any(m not in MODES for m in FLAGS.modes):
            raise app.UsageError(f"--recordings takes {', '.join(RECORDINGS)} and --modes {', '.join(MODES)}")
        audio, reference = recording(name, folder, FLAGS.minutes * 60)
        wav = os.path.join(work, f"librispeech_{name}_{FLAGS.minutes:g}min.wav")
        write_wav(wav, audio)
        seconds = audio.size / 16000
        print(
            f"\n{os.path.basename(wav)}: {seconds:.1f} s of audio, {len(reference.split())} reference words; "
            "ratio = engine / ckw fp32 wall time in the same mode (> 1: ckw is faster)"
        )
        print(
            f"{'model':<6} {'mode':<10} {'engine':<22} {'wall s':>8} {'x realtime':>11} {'ratio':>7} "
            f"{'segments':>9} {'WER %':>6}",
            flush=True,
        )
        for variant in FLAGS.models:
            for mode in FLAGS.modes:
                engines = engines_of(mode, variant, wav, audio, work)
                best = {}
                for _ in range(FLAGS.repeats):
                    for engine, measure in engines.items():
                        r = measure()
                        best[engine] = (
                            r if engine not in best or r["seconds"] < best[engine]["seconds"] else best[engine]
                        )
                ours = best[next(iter(engines))]
                for engine, r in best.items():
                    r["wer"] = word_error_rate(r["text"], reference)
                    _row(variant, mode, engine, r, ours, seconds)
    if FLAGS.rss_minutes > 0:
        audio = librispeech_joined(folder, FLAGS.rss_minutes * 60)
        wav = os.path.join(work, f"librispeech_{FLAGS.rss_minutes:g}min.wav")
        write_wav(wav, audio)
        del audio
        print(f"\npeak RSS of the CLI on {os.path.basename(wav)} ({os.path.getsize(wav) / 2**20:.0f} MB of WAV)")
        print(
            f"{'model':<6} {'weights MB':>10} {'peak RSS MB':>12} {'anon MB':>8} {'file MB':>8} {'wall s':>8}",
            flush=True,
        )
        for variant in FLAGS.models:
            weights = os.path.getsize(runfiles.locate(f"whisper_{variant}", "weights.bin")) / 2**20
            r = run_cli(variant, wav, work, FLAGS.threads)
            print(
                f"{variant:<6} {weights:10.0f} {r['rss_mb']:12.0f} {r['anon_mb']:8.0f} {r['file_mb']:8.0f} "
                f"{r['seconds']:8.1f}",
                flush=True,
            )
    print(f"(this process: peak RSS {resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024:.0f} MB)")
    sys.stdout.flush()


if __name__ == "__main__":
    app.run(main)
