"""Greedy tokens from the generated C equal openai-whisper's, token for token, plus EOS.

Same converted weights, fp16=False, temperature 0, without timestamps, on jfk.wav and every
LibriSpeech clip in @test_audio (flac and wav, 16 kHz). Both sides take the log-mel of the whole
clip with 30 s of padding (as openai-whisper's transcribe does) and decode its first window.
openai-whisper's tokens come from the greedy reference set (references.py), computed once per
variant by a build action. The variant comes from CKW_VARIANT (one Bazel target per variant);
CKW_CLIPS (comma-separated @test_audio paths), when set, names the clips to run instead of all
(the portable path's target: its encoder takes half a minute a window).
"""

import os
import sys

import numpy as np
import pytest

from ckw import runfiles
from ckw.runtime import audio_input
from ckw.runtime.decoding import DecodingOptions, greedy_decode
from ckw.runtime.engine import N_FRAMES, Engine
from tests.e2e import references
from tests.e2e.clips import shard, shared_clips

VARIANT = os.environ["CKW_VARIANT"]
CLIPS = [c for c in os.environ.get("CKW_CLIPS", "").split(",") if c]


@pytest.fixture(scope="module")
def engine():
    return Engine.from_runfiles(VARIANT)


@pytest.fixture(scope="module")
def reference():
    return references.load("greedy", VARIANT)


@pytest.mark.parametrize("clip", shard(CLIPS or shared_clips()))
def test_greedy_tokens_equal_openai_whisper(engine, reference, clip):
    ref = reference[clip]
    path = runfiles.locate("test_audio", clip)
    mel = engine.frontend.log_mel(audio_input.load_audio_bytes(path))
    ours = greedy_decode(
        engine.decoder, engine.tokenizer, engine.encoder.run(mel[:, :N_FRAMES]), DecodingOptions(language="en")
    )

    sample_len = engine.decoder.n_text_ctx // 2
    ref_ended = len(ref["tokens"]) < sample_len
    print(f"{clip}: {len(ours.tokens)} tokens: {ours.text}", file=sys.stderr)
    assert ours.tokens == ref["tokens"], f"{clip}: ours {ours.text!r} vs openai-whisper {ref['text']!r}"
    assert ours.ended_with_eot == ref_ended
    assert ours.text == ref["text"]
    np.testing.assert_allclose(ours.avg_logprob, ref["avg_logprob"], atol=1e-3)
