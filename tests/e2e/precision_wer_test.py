"""The precision gate: on every shared LibriSpeech clip, a narrower build's WER (bf16, int8) is
within 0.3 points (absolute) of the fp32 build's, and both are printed.

Both builds transcribe each clip the way //tools:transcribe does (Engine.transcribe, English,
greedy at temperature 0 only, so the run is deterministic and the two builds take the same
decisions wherever their logits agree). Reference and hypothesis are normalized with
openai-whisper's EnglishTextNormalizer (test-only); WER is the corpus WER: word-level edit
distance summed over clips / reference words summed over clips. The variant and precision come
from CKW_VARIANT and CKW_PRECISION (one Bazel target per pair).
"""

import os
import sys

import pytest
from whisper.normalizers import EnglishTextNormalizer

from runtime import runfiles
from runtime.engine import Engine
from tests.e2e.wer import edit_distance

VARIANT = os.environ["CKW_VARIANT"]
PRECISION = os.environ["CKW_PRECISION"]
MAX_WER_GAP = 0.3  # percentage points, |WER_precision - WER_fp32|


def librispeech() -> list[tuple[str, str]]:
    """(path, reference transcript) of every clip in @test_audio//:librispeech's MANIFEST.tsv."""
    root = runfiles.locate("test_audio", "librispeech")
    with open(os.path.join(root, "MANIFEST.tsv"), encoding="utf-8") as f:
        rows = [line.split("\t") for line in f.read().splitlines()[1:] if line.strip()]
    return [(os.path.join(root, r[0]), r[3]) for r in rows]


def test_edit_distance():
    abc = ["a", "b", "c"]
    assert edit_distance(abc, abc) == 0
    assert edit_distance(abc, ["a", "x", "c", "d"]) == 2  # one substitution, one insertion
    assert edit_distance(abc, []) == 3 and edit_distance([], ["a"]) == 1


def corpus_wer(precision: str, clips, normalize) -> float:
    errors = words = 0
    with Engine.from_runfiles(VARIANT, precision=precision) as engine:
        for path, reference in clips:
            segments, _ = engine.transcribe(path, language="en", temperature=0.0)
            text = "".join(s.text for s in segments)
            ref, hyp = normalize(reference).split(), normalize(text).split()
            errors += edit_distance(ref, hyp)
            words += len(ref)
            print(f"{VARIANT} {precision} {os.path.basename(path)}: {text.strip()}", file=sys.stderr)
    return 100.0 * errors / words


def test_wer_is_within_0_3_points_of_fp32():
    clips = librispeech()
    assert len(clips) >= 40  # every shared clip, not a sample
    normalize = EnglishTextNormalizer()
    wer = {p: corpus_wer(p, clips, normalize) for p in ("fp32", PRECISION)}
    gap = wer[PRECISION] - wer["fp32"]
    report = (f"{VARIANT}: WER fp32 {wer['fp32']:.2f}%, {PRECISION} {wer[PRECISION]:.2f}% ({PRECISION} - fp32 = "
              f"{gap:+.2f} points, gate |gap| <= {MAX_WER_GAP}) over {len(clips)} LibriSpeech clips")
    print(report)
    print(report, file=sys.stderr)
    assert abs(gap) <= MAX_WER_GAP, report


if __name__ == "__main__":
    sys.exit(pytest.main([__file__, "-q", "-s"]))
