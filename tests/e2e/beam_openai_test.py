"""Beam search over the generated C decoder gives openai-whisper's `whisper.decode(beam_size=5)`
tokens, token for token, on jfk.wav and every LibriSpeech clip in @test_audio (first 30 s
window of the log-mel with 30 s of padding, fp16=False, without timestamps, same weights); on
a few clips also with patience 2 and with a length penalty. The variant comes from CKW_VARIANT
(one Bazel target per variant, sharded over clips).
"""

import os
import sys

import pytest
import torch
import whisper

from models.whisper.reference import openai_reference
from runtime import audio_input, runfiles
from runtime.decoding import DecodingOptions, decode
from runtime.engine import N_FRAMES, Engine
from tests.e2e.clips import shard, shared_clips

VARIANT = os.environ["CKW_VARIANT"]
# (beam_size, patience, length_penalty) on the first clips of the list; beam 5 alone on all.
EXTRA = [(5, 2.0, None), (5, None, 0.6)]
EXTRA_CLIPS = 3


def _cases():
    clips = shared_clips()
    cases = [(clip, 5, None, None) for clip in clips]
    cases += [(clip, *extra) for clip in clips[:EXTRA_CLIPS] for extra in EXTRA]
    return shard(cases)


@pytest.fixture(scope="module")
def engine():
    return Engine.from_runfiles(VARIANT)


@pytest.mark.parametrize("clip,beam_size,patience,length_penalty", _cases())
def test_beam_tokens_equal_openai_whisper(engine, clip, beam_size, patience, length_penalty):
    path = runfiles.locate("test_audio", clip)
    audio = openai_reference.read_audio_16k(path)
    ref_model = openai_reference.model(VARIANT)
    ref_mel = whisper.log_mel_spectrogram(torch.from_numpy(audio), n_mels=ref_model.dims.n_mels,
                                          padding=whisper.audio.N_SAMPLES)[:, :N_FRAMES]
    ref = whisper.decode(ref_model, ref_mel, whisper.DecodingOptions(
        fp16=False, temperature=0.0, without_timestamps=True, language="en", beam_size=beam_size,
        patience=patience, length_penalty=length_penalty))

    mel = engine.frontend.log_mel(audio_input.load_audio_bytes(path))
    memory = engine.encoder.run(mel[:, :N_FRAMES])
    ours = decode(engine.decoder, engine.tokenizer, memory, DecodingOptions(
        language="en", beam_size=beam_size, patience=patience, length_penalty=length_penalty))

    print(f"{clip} beam {beam_size} patience {patience} length_penalty {length_penalty}: "
          f"{len(ours.tokens)} tokens: {ours.text}", file=sys.stderr)
    assert ours.tokens == ref.tokens, f"{clip}: ours {ours.text!r} vs openai-whisper {ref.text!r}"
    assert ours.text == ref.text
    assert abs(ours.avg_logprob - ref.avg_logprob) < 2e-3
    assert abs(ours.no_speech_prob - ref.no_speech_prob) < 1e-3
