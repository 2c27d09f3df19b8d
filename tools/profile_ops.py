"""Where each phase's time goes, op by op: a real transcription with the CLI's decoding, every
generated library's phase calls timed, and each phase call split between the circuit's ops.

    ./bazelw run //tools:profile_ops -- --model tiny [--precision int8] [--wav F] [--json F]

The split uses the libraries' own edge tap (<prefix>_set_tap, the X-ray's hook): the generated code
calls it after every kernel call, so the time between two taps is the time of the op between them.
A call with no f32 output is not tapped and counts with the next one that is; "(entry and exit)"
is the rest of the phase call (argument checks, the Python side of ctypes, after the last op).
Ops of repeated blocks are summed over the blocks ("blocks.*.fc1"). The recording is transcribed
twice: untapped, for each phase's own time, then tapped, for the split; the table gives both per
call, so the tap's cost is in view (a few microseconds per kernel call: small against a prefill or
an encoder window, not against a decode step of tiny).
"""

import collections
import json
import os
import re
import sys
import time

from absl import app, flags

from ckw import runfiles
from ckw.runtime import abi
from ckw.runtime.engine import BUILT_IN, Engine
from tools.bench import sgemm
from tools.testing import audio_manifest

FLAGS = flags.FLAGS
flags.DEFINE_enum("model", "tiny", sorted(BUILT_IN), "Built-in model to profile.")
flags.DEFINE_enum("precision", "fp32", ["fp32", "bf16", "int8"], "Build of the model.")
flags.DEFINE_string(
    "wav",
    None,
    "Recording to transcribe (default: the shared 159 s long-form recording, "
    "@test_audio//:long); relative to where you run it.",
)
flags.DEFINE_string("language", "en", "Language of the recording; empty: detect it (adds the detection's calls).")
flags.DEFINE_integer("threads", 2, "Threads of every library (CKW_NUM_THREADS).", lower_bound=1)
flags.DEFINE_string("json", None, "Also write the profile to this JSON file; relative to where you run it.")

ENTRY = "(entry and exit)"
NOT_PHASES = {
    "set_tap",
    "dim",
    "strerror",
    "last_error",
    "abi_json",
    "num_threads",
    "create",
    "create_with_threads",
    "free",
}


def op_of(edge: str) -> str:
    """`blocks.3.fc1.y` -> `blocks.*.fc1`: the node of an edge, its block index summed over."""
    node = edge.rsplit(".", 1)[0]
    return re.sub(r"\.\d+(?=\.|$)", ".*", node)


class PhaseTimer:
    """Times every phase call of the libraries it is attached to; with `split`, also the ops of
    each call through the edge tap. Per (library, phase): calls, seconds, and per op seconds."""

    def __init__(self, split: bool):
        self.split = split
        self.calls = collections.Counter()
        self.seconds = collections.Counter()
        self.ops = collections.defaultdict(collections.Counter)
        self._current = None
        self._last = 0.0
        self._attached = []

    def attach(self, name: str, handle: abi.Handle) -> None:
        lib, plain = handle.lib, handle.lib.call

        def timed(fn, *args):
            if fn in NOT_PHASES:
                return plain(fn, *args)
            key = (name, fn)
            outer, self._current = self._current, key
            t0 = self._last = time.perf_counter()
            try:
                return plain(fn, *args)
            finally:
                end = time.perf_counter()
                self.calls[key] += 1
                self.seconds[key] += end - t0
                if self.split:
                    self.ops[key][ENTRY] += end - self._last
                self._current = outer

        lib.call = timed  # shadows Library.call on this library only
        self._attached.append(lib)
        if self.split:

            def tap(_user, edge, _data, _rank, _shape):
                now = time.perf_counter()
                if self._current is not None:
                    self.ops[self._current][op_of(edge.decode())] += now - self._last
                self._last = now

            handle._profile_tap = abi.TAP_FN(tap)  # kept alive with the handle: C holds only the pointer
            handle("set_tap", handle._profile_tap, None)

    def detach(self) -> None:
        for lib in self._attached:
            del lib.call


def transcribe(engine: Engine, path: str, split: bool) -> PhaseTimer:
    timer = PhaseTimer(split)
    handles = {"frontend": engine.frontend.handle, "encoder": engine.encoder.handle, "decoder": engine.paged.handle}
    for name, handle in handles.items():
        timer.attach(name, handle)
    try:
        segments, _ = engine.transcribe(path, language=FLAGS.language or None)
        text = "".join(s.text for s in segments)
    finally:
        timer.detach()
        if split:
            for handle in handles.values():
                handle("set_tap", abi.TAP_FN(), None)
    timer.text = text
    return timer


def profile(engine: Engine, path: str) -> dict:
    cpu = sgemm.cpu_info()
    transcribe(engine, path, split=False)  # warm-up: pages in the weights, spins up the threads
    plain = transcribe(engine, path, split=False)
    tapped = transcribe(engine, path, split=True)
    if plain.text != tapped.text:
        raise SystemExit("profile_ops: the tapped run transcribed differently from the untapped one; report it")
    phases = []
    for key, n in sorted(tapped.calls.items(), key=lambda kv: -tapped.seconds[kv[0]]):
        ops = tapped.ops.get(key, {})
        total = tapped.seconds[key]
        phases.append(
            {
                "library": key[0],
                "phase": key[1],
                "calls": n,
                "ms_per_call": 1e3 * plain.seconds[key] / max(plain.calls[key], 1),
                "ms_per_call_tapped": 1e3 * total / n,
                "ops": [
                    {"op": op, "ms_per_call": 1e3 * s / n, "share": s / total if total else 0.0}
                    for op, s in ops.items()
                ],  # in the order the phase first ran them
            }
        )
    return {
        "model": FLAGS.model,
        "precision": FLAGS.precision,
        "threads": FLAGS.threads,
        "wav": path,
        "cpu": cpu["model"],
        "ckw_isa": sgemm.ckw_isa(cpu["flags"], os.environ.get("CKW_ISA")),
        "text": plain.text.strip(),
        "phases": phases,
    }


def print_table(result: dict, out=sys.stdout) -> None:
    print(
        f"{result['model']} {result['precision']}, {result['threads']} threads, {result['cpu']} (ckw path "
        f"{result['ckw_isa']}), {os.path.basename(result['wav'])}",
        file=out,
    )
    for p in result["phases"]:
        if p["ms_per_call"] * p["calls"] < 1.0:  # under a millisecond in all: setters, resets
            continue
        print(
            f"\n{p['library']}.{p['phase']}: {p['calls']} calls, {p['ms_per_call']:.3f} ms per call "
            f"({p['ms_per_call_tapped']:.3f} tapped)",
            file=out,
        )
        for o in p["ops"]:
            print(f"  {o['op']:36} {o['ms_per_call']:9.3f} ms {100 * o['share']:6.1f}%", file=out)


def main(argv):
    del argv
    os.environ["CKW_NUM_THREADS"] = str(FLAGS.threads)
    if FLAGS.wav:
        path = runfiles.user_path(FLAGS.wav)
        if not os.path.isfile(path):
            raise SystemExit(
                f"profile_ops: --wav {FLAGS.wav}: no such file; give a recording (16 kHz WAV or any "
                "container FFmpeg reads)"
            )
    else:
        path = audio_manifest.rows(runfiles.locate("test_audio", "long"))[0]["path"]
    with Engine.from_runfiles(FLAGS.model, precision=FLAGS.precision, threads=FLAGS.threads) as engine:
        result = profile(engine, path)
    print_table(result)
    if FLAGS.json:
        target = runfiles.user_path(FLAGS.json)
        tmp = target + ".tmp"
        with open(tmp, "w", encoding="utf-8") as f:
            json.dump(result, f, indent=1)
        os.replace(tmp, target)


if __name__ == "__main__":
    app.run(main)
