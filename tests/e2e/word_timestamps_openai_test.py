"""Word timestamps over the generated C engine equal openai-whisper's
`transcribe(word_timestamps=True)`: the same words, each start and end within 0.02 s (one
alignment step), per variant on references.py's word_timestamps set: on tiny every LibriSpeech
clip of @test_audio and the long recording, on base every third clip.

Both sides: the same converted weights, fp16=False, language en, the default temperature
schedule (greedy first), thresholds, conditioning and punctuation sets. openai-whisper aligns
with its PyTorch model's cross-attention; we with the generated decoder's optional `cross_qk`
output, the checkpoint's alignment heads and ckw/runtime/word_timing.py. A window that falls back
to sampling cannot be compared (the draws differ): where openai-whisper falls back on a clip,
both sides decode it again at temperature 0 alone (no fallback) and those words are compared.
openai-whisper's side is references.py's word_timestamps set, computed by build actions.
"""

import os
import sys

import numpy as np
import pytest
import whisper

from ckw import runfiles
from ckw.runtime import audio_input, longform
from ckw.runtime.engine import Engine
from tests.e2e import references
from tests.e2e.clips import audio_root, shard

VARIANT = os.environ["CKW_VARIANT"]
TOLERANCE = 0.02 + 1e-9  # seconds: one 20 ms alignment step


@pytest.fixture(scope="module")
def engine():
    return Engine.from_runfiles(VARIANT)


@pytest.fixture(scope="module")
def reference():
    return references.load("word_timestamps", VARIANT)


def test_alignment_heads_are_openai_whispers(engine):
    name = {"tiny": "tiny.en", "base": "base"}[VARIANT]
    d = engine.config
    import base64
    import gzip

    mask = np.frombuffer(gzip.decompress(base64.b85decode(whisper._ALIGNMENT_HEADS[name])), dtype=bool)
    expected = [[int(a), int(b)] for a, b in np.argwhere(mask.reshape(d["n_text_layer"], d["n_text_head"]))]
    assert sorted(d["alignment_heads"]) == expected


@pytest.mark.parametrize(
    "case", shard(references.cases("word_timestamps", VARIANT, audio_root())), ids=lambda case: case.id
)
def test_words_equal_openai_whisper(engine, reference, case):
    clip, want = case.clip, reference[case.id]
    ref, schedule = want["result"], tuple(want["temperature"])
    assert {a["temperature"] for a in want["attempts"]} == {0.0}
    if schedule != case.options["temperature"]:
        print(
            f"{clip}: openai-whisper fell back to sampling; both sides decode at temperature 0 alone", file=sys.stderr
        )
    wav = audio_input.load_audio_bytes(runfiles.locate("test_audio", clip))
    got = engine.transcribe_long(
        wav, longform.TranscribeOptions(language="en", temperature=schedule, word_timestamps=True)
    )
    ours = [w for s in got["segments"] for w in s["words"]]
    theirs = [w for s in ref["segments"] for w in s["words"]]
    worst = max(
        (max(abs(a["start"] - b["start"]), abs(a["end"] - b["end"])) for a, b in zip(ours, theirs)), default=0.0
    )
    print(f"{clip}: {len(ours)} words, worst start/end difference {worst:.3f} s", file=sys.stderr)
    assert [w["word"] for w in ours] == [w["word"] for w in theirs]
    for a, b in zip(ours, theirs, strict=True):
        assert abs(a["start"] - b["start"]) <= TOLERANCE and abs(a["end"] - b["end"]) <= TOLERANCE, (a, b)
        assert a["probability"] == pytest.approx(b["probability"], abs=2e-3)
    assert [s["text"] for s in got["segments"]] == [s["text"] for s in ref["segments"]]
    for s, r in zip(got["segments"], ref["segments"], strict=True):
        assert abs(s["start"] - r["start"]) <= TOLERANCE and abs(s["end"] - r["end"]) <= TOLERANCE
