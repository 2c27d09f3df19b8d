"""Beam search over the generated C decoder gives openai-whisper's `whisper.decode(beam_size=5)`
tokens, token for token, on jfk.wav and the LibriSpeech clips in @test_audio (tiny: every one,
base: every third; first 30 s window of the log-mel with 30 s of padding, fp16=False, without
timestamps, same weights); on a few clips also with patience 2 and with a length penalty (the
cases: references.py's beam set, computed once per variant by build actions). The variant comes
from CKW_VARIANT (one Bazel target per variant, sharded over cases).
"""

import os
import sys

import pytest

from ckw import runfiles
from ckw.runtime import audio_input
from ckw.runtime.decoding import DecodingOptions, decode
from ckw.runtime.engine import N_FRAMES, Engine
from tests.e2e import references
from tests.e2e.clips import audio_root, shard

VARIANT = os.environ["CKW_VARIANT"]
CASES = references.cases("beam", VARIANT, audio_root())


@pytest.fixture(scope="module")
def engine():
    return Engine.from_runfiles(VARIANT)


@pytest.fixture(scope="module")
def reference():
    return references.load("beam", VARIANT)


@pytest.mark.parametrize("case", shard(CASES), ids=lambda case: case.id)
def test_beam_tokens_equal_openai_whisper(engine, reference, case):
    ref = reference[case.id]
    path = runfiles.locate("test_audio", case.clip)
    mel = engine.frontend.log_mel(audio_input.load_audio_bytes(path))
    memory = engine.encoder.run(mel[:, :N_FRAMES])
    ours = decode(engine.decoder, engine.tokenizer, memory, DecodingOptions(**case.options))

    print(f"{case.id}: {len(ours.tokens)} tokens: {ours.text}", file=sys.stderr)
    assert ours.tokens == ref["tokens"], f"{case.id}: ours {ours.text!r} vs openai-whisper {ref['text']!r}"
    assert ours.text == ref["text"]
    assert abs(ours.avg_logprob - ref["avg_logprob"]) < 2e-3
    assert abs(ours.no_speech_prob - ref["no_speech_prob"]) < 1e-3
