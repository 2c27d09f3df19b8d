"""Computes openai-whisper's results for one part of a reference set (tests/e2e/references.py)
and writes them as JSON: the build action of references.bzl's openai_reference.

    make_references --set beam --variant tiny --audio_root external/test_audio \
        --part 0 --parts 3 --out beam_tiny_openai.part0.openai.json

Part i of n is every n-th case from the i-th; --case restricts the set to the named cases first.
The oracle (models/whisper/reference/openai_reference.py) is called exactly as the tests called
it: the same audio loader, weights (the checkpoint in this binary's runfiles), options, and one
PyTorch thread (which it sets itself, so Bazel's strict action environment changes nothing).
"""

import argparse
import json
import os
import sys
import tempfile
import time

from models.whisper.reference import openai_reference as oracle
from tests.e2e import references


def compute(variant: str, case: references.Case, audio_path: str) -> dict:
    """openai-whisper's result for one case as JSON values, with the wall seconds it took (the
    model loaded before the clock starts)."""
    audio = oracle.read_audio_16k(audio_path)
    oracle.model(variant)
    t0 = time.perf_counter()
    if case.kind == "window":
        out = oracle.decoding_result_json(oracle.decode_window(variant, audio, **case.options))
    elif case.kind == "language":
        language, probs = oracle.detect_language(variant, audio)
        out = {"language": language, "probs": probs}
    elif case.kind in ("transcribe", "transcribe_greedy"):
        out = transcribe(variant, audio, case.options)
        if case.kind == "transcribe_greedy" and any(a["temperature"] > 0 for a in out["attempts"]):
            out = transcribe(variant, audio, {**case.options, "temperature": (0.0,)})
    else:
        raise ValueError(f"{case.id}: unknown kind {case.kind!r}")
    out["seconds"] = time.perf_counter() - t0
    return out


def transcribe(variant, audio, options) -> dict:
    """whisper.transcribe's result, its decode() attempts in order and the temperature schedule."""
    result, calls = oracle.transcribe_recording(variant, audio, **options)
    return {
        "result": result,
        "attempts": [oracle.decoding_result_json(r) for _, r in calls],
        "temperature": list(options["temperature"]),
    }


def _number(value):
    if hasattr(value, "item"):  # numpy scalars
        return value.item()
    raise TypeError(f"{type(value).__name__} is not JSON: {value!r}")


def main(argv=None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--set", required=True, choices=sorted(references.SETS))
    parser.add_argument("--variant", required=True, choices=["tiny", "base"])
    parser.add_argument("--audio_root", required=True, help="the @test_audio directory")
    parser.add_argument("--case", action="append", default=[], help="only this case id (repeatable)")
    parser.add_argument("--part", type=int, default=0)
    parser.add_argument("--parts", type=int, default=1)
    parser.add_argument("--out", required=True)
    args = parser.parse_args(argv)

    cases = references.cases(args.set, args.variant, args.audio_root)
    unknown = set(args.case) - {c.id for c in cases}
    if unknown:
        parser.error(f"no case {sorted(unknown)} in the {args.set} set for {args.variant}")
    if args.case:
        cases = [c for c in cases if c.id in args.case]
    cases = cases[args.part :: args.parts]
    if not cases:
        parser.error(f"part {args.part} of {args.parts} of the {args.set} set for {args.variant} has no case")

    results = {}
    with tempfile.TemporaryDirectory() as tmp:
        for case in cases:
            if case.clip == references.JOINED:
                path = references.joined_wav(args.audio_root, tmp)
            else:
                path = os.path.join(args.audio_root, case.clip)
            results[case.id] = compute(args.variant, case, path)
    # Python floats print their shortest repr, so every float reads back with the same bits.
    with open(args.out, "w", encoding="utf-8") as f:
        json.dump(
            {"set": args.set, "variant": args.variant, "part": args.part, "parts": args.parts, "results": results},
            f,
            sort_keys=True,
            default=_number,
        )
        f.write("\n")
    return 0


if __name__ == "__main__":
    sys.exit(main())
