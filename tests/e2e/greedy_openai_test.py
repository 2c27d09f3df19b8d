"""The decoding policy, proven on the reference model: `greedy_decode` driving openai-whisper's
PyTorch decoder (TorchTextDecoder) returns exactly the tokens and text of openai-whisper's own
`whisper.decode()` (fp32, temperature 0, without timestamps), clip by clip.

Both sides use the same log-mel (the first window of the padded log-mel, as transcribe() takes
it) and encoder, so any difference is in the decoding policy or the cached decoder adapter.
`whisper.decode()`'s results are the greedy reference set's (references.py, a build action
shared with token_equality_test). One Bazel target per variant selects its cases with `-k`.
"""

import pytest

from ckw import runfiles
from ckw.checkpoints.packed import runfiles_checkpoint_dir
from ckw.runtime.decoding import DecodingOptions, greedy_decode
from ckw.runtime.tokenizer import WhisperTokenizer
from models.whisper.reference import openai_reference
from models.whisper.reference.torch_text_decoder import TorchTextDecoder
from tests.e2e import references

# jfk.wav and four LibriSpeech utterances: test-clean and test-other, wav and flac.
CLIPS = [
    "jfk.wav",
    "librispeech/1089-134691-0001.flac",
    "librispeech/1221-135766-0002.wav",
    "librispeech/1688-142285-0003.flac",
    "librispeech/1998-15444-0001.flac",
]

# (variant, clip, task, the greedy set's case id)
CASES = [pytest.param("tiny", clip, "transcribe", clip, id=f"tiny-{clip}") for clip in CLIPS]
CASES += [pytest.param("base", clip, "transcribe", clip, id=f"base-{clip}") for clip in CLIPS]
CASES += [pytest.param("base", "jfk.wav", "translate", "translate jfk.wav", id="base-translate-jfk.wav")]

KNOWN = {
    ("tiny", "jfk.wav"): "And so my fellow Americans ask not what your country can do for you, "
    "ask what you can do for your country.",
    ("base", "jfk.wav"): "And so my fellow Americans, ask not what your country can do for you, "
    "ask what you can do for your country.",
}


@pytest.mark.parametrize("variant,clip,task,case_id", CASES)
def test_greedy_decode_equals_openai_whisper(variant, clip, task, case_id):
    model = openai_reference.model(variant)
    tok = WhisperTokenizer.from_checkpoint(runfiles_checkpoint_dir(variant))
    audio = openai_reference.read_audio_16k(runfiles.locate("test_audio", clip))

    reference = references.load("greedy", variant)[case_id]

    memory = openai_reference.encoder_memory(model, openai_reference.first_window(model, audio))
    got = greedy_decode(TorchTextDecoder(model), tok, memory, DecodingOptions(language="en", task=task))

    print(f"{variant} {clip} {task}: {len(got.tokens)} tokens: {got.text!r}")
    assert got.tokens == reference["tokens"]
    assert got.text == reference["text"]
    assert got.ended_with_eot
    assert got.avg_logprob == pytest.approx(reference["avg_logprob"], abs=1e-3)
    assert tok.eot not in got.tokens and len(got.tokens) >= 5
    if task == "transcribe" and (variant, clip) in KNOWN:
        assert got.text == KNOWN[(variant, clip)]
