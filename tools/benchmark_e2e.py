"""The speed table: ckw against faster-whisper (CTranslate2, fp32 and int8) and whisper.cpp
(pywhispercpp, on ggml files converted from the same checkpoint: f16, and q8_0 and q5_1 as
whisper.cpp's quantize makes them), measured in the same run.

    ./bazelw run //tools:benchmark_e2e -- --runs 5 [--json FILE]

Rows per model: the clip (default jfk.wav: one 30 s window, greedy, no timestamps), the clip with
beam search (`--beam_size`, 5: ckw's decode/token is then one decoder step for all beams, against
ckw greedy and faster-whisper with the same beam size) and a 10-minute recording joined from the
shared LibriSpeech clips (long-form transcription with each engine's default options, greedy).
whisper.cpp's quantized files run on the greedy clip rows only (fp32, bf16, int8), beside the f16
file, which also runs the long-form row; no whisper.cpp runs the beam row.
Every engine runs once to warm up (the long-form row: on its first minute) and then `--runs`
times, interleaved: each round runs every engine once (the order rotated from round to round),
the OpenBLAS sgemm probe and the memory-read bandwidth probe, so load on a shared machine hits all
alike. Printed: per-stage medians (frontend, encoder per window, prefill per window, decode per
token, total), ckw's ratio to every peer, the CPU model and ISA flags, the path ckw dispatches
to, sgemm GFLOPS and the encoder's share of it, and on the one-window rows the bytes of ckw's
decoder step, its floor at the measured read bandwidth and the step's share of that bandwidth.
`--json FILE` writes all of it, every run included.

The engines live in tools/bench/ (ckw_peer, faster_whisper_peer, whispercpp_peer); the ggml
converter, the clips and the yardsticks (sgemm.py, bandwidth.py, floors.py) too. Timings on a
shared machine are noisy: read the ratios.
"""

import json
import logging
import os
import statistics
import sys
import tempfile
import time
from typing import Optional

from absl import app, flags

from ckw import runfiles
from ckw.checkpoints.packed import runfiles_checkpoint_dir
from ckw.runtime.engine import PRECISIONS
from tools.bench import bandwidth, clips, isa, report, sgemm
from tools.bench.ckw_peer import CkwPeer
from tools.bench.faster_whisper_peer import FasterWhisperPeer, ctranslate2_model_dir
from tools.bench.ggml_convert import convert
from tools.bench.whispercpp_peer import WhisperCppPeer

FLAGS = flags.FLAGS
flags.DEFINE_string(
    "wav",
    None,
    "Clip for the one-window row, 16 kHz (default: jfk.wav from @test_audio); relative to where you run the command.",
)
flags.DEFINE_integer("runs", 5, "Timed runs per engine and row, after one warm-up run.", lower_bound=1)
flags.DEFINE_list("models", ["tiny", "base"], "Variants to time.")
flags.DEFINE_integer(
    "threads",
    2,
    "Threads for every engine (ckw's CKW_NUM_THREADS, faster-whisper's cpu_threads, "
    "whisper.cpp's n_threads) and for the sgemm probe.",
    lower_bound=1,
)
flags.DEFINE_float(
    "long_minutes",
    10.0,
    "Length of the joined LibriSpeech recording for the long-form row; 0: no long-form row.",
    lower_bound=0.0,
)
flags.DEFINE_list(
    "peers",
    ["fw-fp32", "fw-int8", "whisper.cpp", "whisper.cpp-q8_0", "whisper.cpp-q5_1"],
    "Peers to time against ckw: fw-fp32, fw-int8 (faster-whisper compute_type float32 / int8), "
    "whisper.cpp (the --ggml_type file), whisper.cpp-q8_0, whisper.cpp-q5_1 (quantized files, on the "
    "greedy clip rows).",
)
flags.DEFINE_enum(
    "ggml_type",
    "f16",
    ["f16", "f32"],
    "Weight type of the ggml file the whisper.cpp peer runs (f16: "
    "whisper.cpp's usual models; lossless for the packaged checkpoints, whose weights are float16).",
)
flags.DEFINE_integer(
    "beam_size",
    5,
    "Also a row with beam search on the clip: ckw with this many beams (all in one "
    "decoder call per step), ckw greedy, faster-whisper with beam_size this; 0 or 1: no beam row.",
    lower_bound=0,
)
flags.DEFINE_list(
    "precisions",
    ["fp32", "bf16", "int8"],
    "Builds of ckw to time: fp32 (every row), bf16 and int8 "
    "(one more row each on the clip, greedy: that build against the peers and ckw fp32).",
)
flags.DEFINE_integer(
    "pause_ms",
    300,
    "Idle time before each run, so the previous engine's spinning worker threads "
    "(OpenMP, OpenBLAS) are asleep when the next starts.",
    lower_bound=0,
)
flags.DEFINE_string(
    "from_json",
    None,
    "Measure nothing: print the table of an earlier --json file (a stopped run's too, its unfinished row marked).",
)
flags.DEFINE_enum(
    "isa",
    "best",
    isa.CHOICES,
    "Instruction set for the whole run. avx2: on a machine with "
    "AVX-512, ckw's AVX2 path (CKW_ISA=avx2), faster-whisper's (CT2_FORCE_CPU_ISA=AVX2) and OpenBLAS's "
    "Haswell kernels for the sgemm probe (OPENBLAS_CORETYPE); whisper.cpp runs what its wheel was built "
    "for either way.",
)
flags.DEFINE_string(
    "json",
    None,
    "Also write everything (machine, every run, medians, ratios) to this JSON file; "
    "relative to where you run the command.",
)

PEERS = ("fw-fp32", "fw-int8", "whisper.cpp", "whisper.cpp-q8_0", "whisper.cpp-q5_1")
QUANTIZED = {"whisper.cpp-q8_0": "q8_0", "whisper.cpp-q5_1": "q5_1"}  # peer -> its ggml file's type
LOAD_SEEN = []  # the 1-minute load average after every round
_MADE = {}  # model files written into the scratch folder, made once per run


def ggml_model_file(variant: str, scratch: str, ftype: str) -> tuple:
    """whisper.cpp's model: the packed checkpoint ckw loads, converted (path, what was written)."""
    out = os.path.join(scratch, f"ggml-{variant}-{ftype}.bin")
    return out, convert(runfiles_checkpoint_dir(variant), out, ftype)


def load_engines(
    variant: str,
    scratch: str,
    threads: int,
    peers,
    ggml_type: str,
    beam_size: Optional[int] = None,
    precision: str = "fp32",
    long_form: bool = False,
):
    """ckw first, then the peers asked for; the ggml conversions' summaries by type. With beam_size:
    ckw with that many beams, ckw greedy (the cost of the beams) and faster-whisper with that many,
    no whisper.cpp. With precision bf16 or int8: that build first, then ckw fp32 beside the peers.
    whisper.cpp's quantized files only on the greedy clip rows (not long_form)."""
    engines, ggml = [CkwPeer(variant, threads, beam_size, precision)], {}
    if beam_size or precision != "fp32":
        engines.append(CkwPeer(variant, threads))
    for peer in peers:
        if peer in ("fw-fp32", "fw-int8"):
            key = ("ct2", variant, scratch)
            if key not in _MADE:
                _MADE[key] = ctranslate2_model_dir(variant, scratch)
            engines.append(
                FasterWhisperPeer(_MADE[key], "float32" if peer == "fw-fp32" else "int8", threads, beam_size or 1)
            )
        elif (peer == "whisper.cpp" or peer in QUANTIZED and not long_form) and not beam_size:
            ftype = QUANTIZED.get(peer, ggml_type)
            key = ("ggml", variant, scratch, ftype)
            if key not in _MADE:
                _MADE[key] = ggml_model_file(variant, scratch, ftype)
            path, ggml[ftype] = _MADE[key]
            engines.append(WhisperCppPeer(path, threads, ftype))
    return engines, ggml


def interleaved(
    engines, clip, runs: int, probe=None, pause_s: float = 0.3, warmup_clip=None, on_round=None, read_probe=None
):
    """A warm-up round (on `warmup_clip` if given, else on `clip`) and `runs` timed rounds; each
    round runs every engine once, starting one engine later than the round before, then the sgemm
    probe and the read-bandwidth probe; on_round(samples, gflops, reads) after each timed round.
    ({label: [run, ...]}, [GFLOPS, ...], [read probe results, ...])."""
    samples, gflops, reads = {e.label: [] for e in engines}, [], []
    for r in range(runs + 1):
        order = engines[r % len(engines) :] + engines[: r % len(engines)]
        for engine in order:
            time.sleep(pause_s)
            result = engine.run(clip if r or warmup_clip is None else warmup_clip)
            if r:
                samples[engine.label].append(result)
        for measure, out in ((probe, gflops), (read_probe, reads)):
            if measure is not None:
                time.sleep(pause_s)
                value = measure.run() if measure is probe else measure.best()
                if r:
                    out.append(value)
        LOAD_SEEN.append(_loadavg())
        if r and on_round is not None:
            on_round(samples, gflops, reads)
    return samples, gflops, reads


def measure_row(
    variant: str,
    clip,
    engines,
    config,
    runs: int,
    threads: int,
    pause_s: float,
    on_round=None,
    beam_size: Optional[int] = None,
    precision: str = "fp32",
):
    """One table: every engine on `clip`, interleaved, with the sgemm probe at the encoder's MLP shape
    and the memory-read bandwidth probe; on_round(row so far) after every timed round."""
    d = config["n_audio_state"]
    probe = sgemm.Sgemm(config["n_audio_ctx"], d, 4 * d, threads)
    read_probe = bandwidth.ReadBandwidth(threads)
    # The long-form row warms up on its first minute (long-form too): a warm-up round on the whole
    # recording would cost as much as a timed one.
    warmup = clips.head(clip, 60.0) if clip.long_form else None

    def build(samples, gflops, reads):
        return build_row(variant, clip, engines, config, probe, runs, samples, gflops, beam_size, precision, reads)

    def progress(samples, gflops, reads):
        on_round(build(samples, gflops, reads))

    return build(*interleaved(engines, clip, runs, probe, pause_s, warmup, progress if on_round else None, read_probe))


def _mode(clip, beam_size: Optional[int], precision: str = "fp32") -> str:
    if precision != "fp32":
        return f"one 30 s window, greedy, no timestamps, {precision} weights"
    if clip.long_form:
        return "long-form, default options, greedy"
    if beam_size:
        return f"one 30 s window, {beam_size} beams, no timestamps; decode/token: one step of all beams"
    return "one 30 s window, greedy, no timestamps"


def build_row(
    variant: str,
    clip,
    engines,
    config,
    probe,
    runs_planned: int,
    samples,
    gflops,
    beam_size: Optional[int] = None,
    precision: str = "fp32",
    reads=(),
):
    """The row's medians, ratios, GFLOPS and decode floors from the timed runs so far."""
    summaries = {label: report.summarise(runs_) for label, runs_ in samples.items()}
    flop = sgemm.encoder_flops(config)
    encoder_gflops = {
        label: flop / s["median_ms"]["encoder"] / 1e6 for label, s in summaries.items() if s["median_ms"]["encoder"]
    }
    sgemm_gflops = statistics.median(gflops)
    ours = engines[0].label
    return {
        "model": variant,
        "clip": clip.name,
        "seconds": clip.seconds,
        "mode": _mode(clip, beam_size, precision),
        "precision": precision,
        "long_form": clip.long_form,
        "beam_size": beam_size,
        "runs": len(gflops),
        "runs_planned": runs_planned,
        "engines": summaries,
        "ratios": {
            label: {
                stage: report.ratio(summaries[ours]["median_ms"][stage], s["median_ms"][stage])
                for stage in report.STAGES
            }
            for label, s in summaries.items()
            if label != ours
        },
        "encoder_gflop": flop / 1e9,
        "encoder_gflops": encoder_gflops,
        "encoder_fraction_of_sgemm": encoder_gflops.get(ours, 0.0) / sgemm_gflops,
        "sgemm": {
            "shape": "x".join(map(str, probe.shape)),
            "threads": probe.threads,
            "gflops": sgemm_gflops,
            "gflops_per_round": gflops,
        },
        **report.decode_floors(summaries, reads, probe.threads),
    }


def _loadavg() -> float:
    try:
        with open("/proc/loadavg", encoding="utf-8") as f:
            return float(f.read().split()[0])
    except OSError:
        return float("nan")


def main(argv):
    del argv
    isa.reexec_for(FLAGS.isa)
    if FLAGS.from_json:
        with open(runfiles.user_path(FLAGS.from_json), encoding="utf-8") as f:
            print(report.render_saved(json.load(f)))
        return
    for name in ("faster_whisper", "pywhispercpp"):  # their per-call INFO lines would bury the progress rows
        logging.getLogger(name).setLevel(logging.WARNING)
    unknown = [p for p in FLAGS.peers if p not in PEERS]
    if unknown:
        raise app.UsageError(f"--peers: unknown {', '.join(unknown)}; choose from {', '.join(PEERS)}")
    bad = [p for p in FLAGS.precisions if p not in PRECISIONS]
    if bad or "fp32" not in FLAGS.precisions:
        raise app.UsageError(
            f"--precisions: {', '.join(bad) or 'no fp32'}; list fp32 and optionally bf16, int8 (fp32 is "
            "every row's reference)"
        )
    machine = sgemm.cpu_info()
    load_start = _loadavg()
    short = clips.from_file(runfiles.user_path(FLAGS.wav) if FLAGS.wav else runfiles.locate("test_audio", "jfk.wav"))
    # (clip, beam size, precision) per row: greedy, each other build and beams on the clip, then long-form
    # (greedy on every engine).
    rows_plan = [(short, None, "fp32")] + [(short, None, p) for p in FLAGS.precisions if p != "fp32"]
    rows_plan += [(short, FLAGS.beam_size, "fp32")] if FLAGS.beam_size > 1 else []
    rows_plan += [(clips.librispeech_joined(60 * FLAGS.long_minutes), None, "fp32")] if FLAGS.long_minutes else []
    ggml_types = [QUANTIZED.get(p, FLAGS.ggml_type) for p in PEERS if p in FLAGS.peers and p.startswith("whisper.cpp")]
    result = {
        "machine": machine,
        "ckw_isa": sgemm.ckw_isa(machine["flags"], os.environ.get("CKW_ISA")),
        "isa_env": isa.ISA_ENV.get(FLAGS.isa, {}),
        "threads": FLAGS.threads,
        "runs": FLAGS.runs,
        "ggml_type": ", ".join(ggml_types) or "none",
        "blas": sgemm.blas_info(),
        "ggml": {},
        "rows": [],
        "loadavg": {"start": load_start, "per_round": LOAD_SEEN},
    }
    with tempfile.TemporaryDirectory() as scratch:
        # Every model's clip row first, then the long-form rows: the short rows are done early.
        for clip, beam_size, precision in rows_plan:
            for variant in FLAGS.models:
                engines, ggml = load_engines(
                    variant, scratch, FLAGS.threads, FLAGS.peers, FLAGS.ggml_type, beam_size, precision, clip.long_form
                )
                result["ggml"].setdefault(variant, {}).update(ggml)
                config = engines[0].engine.config

                def partial(row):  # each round as soon as it is measured: a stopped run keeps it
                    result["unfinished_row"] = row
                    _write_json(result)

                try:
                    row = measure_row(
                        variant,
                        clip,
                        engines,
                        config,
                        FLAGS.runs,
                        FLAGS.threads,
                        FLAGS.pause_ms / 1000,
                        partial,
                        beam_size,
                        precision,
                    )
                finally:
                    for engine in engines:
                        engine.close()
                result.pop("unfinished_row", None)
                result["rows"].append(row)
                print("\n".join(report.render_row(row)) + "\n", file=sys.stderr)  # progress
                _write_json(result)
    result["loadavg"] = report.loadavg_summary(load_start, LOAD_SEEN, _loadavg(), FLAGS.threads)
    print(report.render(result))
    sys.stdout.flush()
    _write_json(result)


def _write_json(result) -> None:
    if FLAGS.json:
        path = runfiles.user_path(FLAGS.json)
        with open(path + ".partial", "w", encoding="utf-8") as f:
            json.dump(result, f, indent=1, default=float)
            f.write("\n")
        os.replace(path + ".partial", path)


if __name__ == "__main__":
    app.run(main)
