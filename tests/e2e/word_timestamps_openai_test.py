"""Word timestamps over the generated C engine equal openai-whisper's
`transcribe(word_timestamps=True)`: the same words, each start and end within 0.02 s (one
alignment step), on every LibriSpeech clip of @test_audio and the long recording, per variant.

Both sides: the same converted weights, fp16=False, language en, the default temperature
schedule (greedy first), thresholds, conditioning and punctuation sets. openai-whisper aligns
with its PyTorch model's cross-attention; we with the generated decoder's optional `cross_qk`
output, the checkpoint's alignment heads and runtime/word_timing.py. A window that falls back
to sampling cannot be compared (the draws differ): where openai-whisper falls back on a clip,
both sides decode it again at temperature 0 alone (no fallback) and those words are compared.
"""

import os
import sys

import numpy as np
import pytest
import whisper

from models.whisper.reference import openai_reference
from runtime import audio_input, longform, runfiles
from runtime.engine import Engine
from tests.e2e.clips import shard, shared_clips

VARIANT = os.environ["CKW_VARIANT"]
TEMPERATURES = (0.0, 0.2, 0.4, 0.6, 0.8, 1.0)
TOLERANCE = 0.02 + 1e-9  # seconds: one 20 ms alignment step
LONG = "long/shakespeare_sonnets_I-III_concat.flac"


def _cases():
    return shard([c for c in shared_clips() if c.startswith("librispeech/")] + [LONG])


@pytest.fixture(scope="module")
def engine():
    return Engine.from_runfiles(VARIANT)


def reference(clip: str, schedule):
    """openai-whisper's transcribe(word_timestamps=True) and the temperature of each decode."""
    audio = openai_reference.read_audio_16k(runfiles.locate("test_audio", clip))
    result, calls = openai_reference.transcribe_recording(VARIANT, audio, temperature=schedule, language="en",
                                                          word_timestamps=True)
    return result, [options.temperature for options, _ in calls]


def test_alignment_heads_are_openai_whispers(engine):
    name = {"tiny": "tiny.en", "base": "base"}[VARIANT]
    d = engine.config
    import base64
    import gzip
    mask = np.frombuffer(gzip.decompress(base64.b85decode(whisper._ALIGNMENT_HEADS[name])), dtype=bool)
    expected = [[int(a), int(b)] for a, b in np.argwhere(mask.reshape(d["n_text_layer"], d["n_text_head"]))]
    assert sorted(d["alignment_heads"]) == expected


@pytest.mark.parametrize("clip", _cases())
def test_words_equal_openai_whisper(engine, clip):
    schedule = TEMPERATURES
    ref, temperatures = reference(clip, schedule)
    if set(temperatures) != {0.0}:
        schedule = (0.0,)
        print(f"{clip}: openai-whisper fell back to sampling; both sides decode at temperature 0 alone",
              file=sys.stderr)
        ref, temperatures = reference(clip, schedule)
    wav = audio_input.load_audio_bytes(runfiles.locate("test_audio", clip))
    got = engine.transcribe_long(wav, longform.TranscribeOptions(language="en", temperature=schedule,
                                                                 word_timestamps=True))
    ours = [w for s in got["segments"] for w in s["words"]]
    theirs = [w for s in ref["segments"] for w in s["words"]]
    worst = max((max(abs(a["start"] - b["start"]), abs(a["end"] - b["end"])) for a, b in zip(ours, theirs)),
                default=0.0)
    print(f"{clip}: {len(ours)} words, worst start/end difference {worst:.3f} s", file=sys.stderr)
    assert [w["word"] for w in ours] == [w["word"] for w in theirs]
    for a, b in zip(ours, theirs):
        assert abs(a["start"] - b["start"]) <= TOLERANCE and abs(a["end"] - b["end"]) <= TOLERANCE, (a, b)
        assert a["probability"] == pytest.approx(b["probability"], abs=2e-3)
    assert [s["text"] for s in got["segments"]] == [s["text"] for s in ref["segments"]]
    for s, r in zip(got["segments"], ref["segments"]):
        assert abs(s["start"] - r["start"]) <= TOLERANCE and abs(s["end"] - r["end"]) <= TOLERANCE
