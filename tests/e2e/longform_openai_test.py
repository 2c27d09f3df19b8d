"""Long-form transcription over the generated C engine equals openai-whisper's `transcribe()`.

Both sides: the same converted weights, fp16=False, the default temperature schedule
(0.0, 0.2, ..., 1.0), thresholds 2.4 / -1.0 / 0.6, conditioning on previous text, timestamps.
Ours is `Engine.transcribe_long` (generated frontend, encoder and decoder; ckw/runtime/longform.py);
theirs is `whisper.transcribe(model, audio, ...)`, whose `model.decode` calls are recorded so
that every window attempt can be compared, not only the final segments (references.py's
longform set: a build action per case computes it).

Cases: the sonnets (long/, 159 s) with tiny and base; a recording of 75 s joined from the
LibriSpeech clips (tools/testing/joined_audio.py, written as WAV by the test) with tiny and
base, and with tiny again without conditioning on the previous text and with an initial prompt;
michaelandsickmichael.wav (tiny) and jfk.wav (base, language detected).

A comparison is meaningful only where both sides decoded greedily: openai-whisper samples at
temperature > 0 with torch's RNG, we with numpy's. Per case the test pins the windows that fall
back (on michaelandsickmichael.wav the last window, 2.4 s holding only "thanks", fails at
temperature 0 on both sides; none elsewhere): each window's greedy attempt is equal and falls
back on both sides or on neither; segments (seek, start, end, text, tokens, temperature) are
equal and log-probabilities agree to 2e-3.

The `policy` case runs the same loop over openai-whisper's own PyTorch encoder and decoder
(TorchTextDecoder): every greedy attempt has openai-whisper's tokens, and log-probabilities
within 2e-4 (torch's float32 log_softmax is that far from float64; the logits themselves are
bit-identical), proving the policy independently of the C numerics.
"""

import functools
import os
import sys
import tempfile
import time

import numpy as np
import pytest
import srt
import torch
import webvtt
import whisper
from whisper.utils import get_writer

from ckw import runfiles
from ckw.checkpoints.packed import runfiles_checkpoint_dir
from ckw.runtime import longform, output_formats
from ckw.runtime.engine import Engine
from ckw.runtime.tokenizer import WhisperTokenizer
from models.whisper.reference import openai_reference
from models.whisper.reference.torch_text_decoder import TorchTextDecoder
from tests.e2e import references
from tests.e2e.clips import audio_root

TEMPERATURES = references.TEMPERATURES
# name: (variant, clip, options besides the defaults): references.LONGFORM, whose results
# openai-whisper's side reads (a build action per case).
CASES = references.LONGFORM
# Windows (by index) that fall back to temperature > 0 on openai-whisper's side; none elsewhere.
FALLBACK = {"michael": [2]}


# One Bazel target per case (tests/e2e/BUILD.bazel sets it); all of them when run by hand.
SELECTED = [os.environ["CKW_LONGFORM_CASE"]] if os.environ.get("CKW_LONGFORM_CASE") else list(CASES)


@functools.cache
def clip_path(clip: str) -> str:
    if clip == references.JOINED:
        return references.joined_wav(audio_root(), os.environ.get("TEST_TMPDIR", tempfile.gettempdir()))
    return runfiles.locate("test_audio", clip)


@functools.cache
def reference(case: str):
    """openai-whisper's transcribe() result, its decode() attempts in order, and its wall time."""
    want = references.load("longform", CASES[case][0])[case]
    return want["result"], want["attempts"], want["seconds"]


def windows_of(attempts):
    """openai-whisper's attempts grouped per window (each window starts at temperature 0)."""
    windows = []
    for a in attempts:
        if a["temperature"] == TEMPERATURES[0]:
            windows.append([])
        windows[-1].append(a)
    return windows


def check_against_reference(case, got, abs_logprob):
    fallback = FALLBACK.get(case, [])
    ref, ref_attempts, _ = reference(case)
    ref_windows = windows_of(ref_attempts)
    assert [i for i, w in enumerate(ref_windows) if len(w) > 1] == fallback, (
        "openai-whisper fell back on other windows than this test expects: the comparison needs greedy windows"
    )
    assert all(i == len(ref_windows) - 1 for i in fallback), "a sampled window mid-clip would make the rest random"
    ours_windows = got["windows"]
    assert [i for i, w in enumerate(ours_windows) if len(w["attempts"]) > 1] == fallback
    assert len(ours_windows) == len(ref_windows)
    for i, (ours, theirs) in enumerate(zip(ours_windows, ref_windows, strict=True)):
        a, b = ours["attempts"][0], theirs[0]  # the greedy attempt: equal even where it was rejected
        assert a["temperature"] == b["temperature"] == 0.0
        assert a["tokens"] == b["tokens"], f"window {i} (seek {ours['seek']})"
        assert a["avg_logprob"] == pytest.approx(b["avg_logprob"], abs=abs_logprob)
        assert a["no_speech_prob"] == pytest.approx(b["no_speech_prob"], abs=abs_logprob)
        assert a["compression_ratio"] == pytest.approx(b["compression_ratio"], rel=1e-12)
        assert not ours["skipped"]

    greedy = [s for s in ref["segments"] if s["temperature"] == 0.0]
    assert len(greedy) == len(ref["segments"]) or fallback
    ours_greedy = [s for s in got["segments"] if s["temperature"] == 0.0]
    assert len(ours_greedy) == len(greedy), f"{len(ours_greedy)} greedy segments, openai-whisper {len(greedy)}"
    assert got["segments"][: len(greedy)] == ours_greedy, "a sampled segment before a greedy one"
    for s, r in zip(ours_greedy, greedy, strict=True):
        for key in ("id", "seek", "start", "end", "text", "tokens", "temperature"):
            assert s[key] == r[key], f"segment {r['id']} {key}: ours {s[key]!r}, openai-whisper {r[key]!r}"
        assert s["avg_logprob"] == pytest.approx(r["avg_logprob"], abs=abs_logprob)
        assert s["no_speech_prob"] == pytest.approx(r["no_speech_prob"], abs=abs_logprob)
        assert s["compression_ratio"] == r["compression_ratio"]
    assert all(s["temperature"] > 0 for s in got["segments"][len(greedy) :])
    assert got["language"] == ref["language"]
    if not fallback:
        assert len(got["segments"]) == len(ref["segments"])
        assert got["text"] == ref["text"]


@pytest.fixture(scope="module")
def engines():
    return {}


@pytest.mark.parametrize("case", SELECTED)
def test_c_engine_transcribe_equals_openai_whisper(case, engines):
    variant, clip, options = CASES[case]
    if variant not in engines:
        engines[variant] = Engine.from_runfiles(variant)
    engine = engines[variant]
    t0 = time.perf_counter()
    got = engine.transcribe_long(
        clip_path(clip), longform.TranscribeOptions(language=None, temperature=TEMPERATURES, **options)
    )
    seconds = time.perf_counter() - t0
    ref, _, ref_seconds = reference(case)
    print(
        f"\n{case} ({variant}, {clip}): {len(got['segments'])} segments, {len(got['windows'])} windows; "
        f"ckw {seconds:.2f} s (timings_ms {got['timings_ms']}), openai-whisper {ref_seconds:.2f} s, "
        f"ratio {seconds / ref_seconds:.2f}",
        file=sys.stderr,
    )
    for s in got["segments"]:
        print(f"  [{s['start']:7.2f} -> {s['end']:7.2f}] T={s['temperature']} {s['text']}", file=sys.stderr)
    check_against_reference(case, got, abs_logprob=2e-3)
    assert got["tokens"] == [t for s in got["segments"] for t in s["tokens"] if t < engine.tokenizer.eot]
    if case not in FALLBACK:
        check_writers(got, ref)
    if case == "jfk":
        assert got["language"] == "en"
        assert got["text"].strip().startswith("And so my fellow Americans")


def check_writers(got, ref):
    """Our transcript files equal openai-whisper's writers' on its own result, byte for byte; srt
    and vtt parse with the srt and webvtt-py packages, and their cues are our segments."""
    with tempfile.TemporaryDirectory() as out:
        for fmt in ("txt", "tsv", "srt", "vtt"):
            get_writer(fmt, out)(ref, "ref.wav")
            with open(os.path.join(out, f"ref.{fmt}"), encoding="utf-8") as f:
                theirs = f.read()
            assert output_formats.render(got, fmt) == theirs, f"{fmt} differs from openai-whisper's writer"
        cues = list(srt.parse(output_formats.render(got, "srt")))
        captions = webvtt.from_string(output_formats.render(got, "vtt")).captions
    assert len(cues) == len(captions) == len(got["segments"])
    for s, cue, caption in zip(got["segments"], cues, captions, strict=True):
        text = s["text"].strip().replace("-->", "->")
        assert cue.content == caption.text == text
        for start, end in (
            (cue.start.total_seconds(), cue.end.total_seconds()),
            (caption.start_time.in_milliseconds() / 1000, caption.end_time.in_milliseconds() / 1000),
        ):
            assert start == pytest.approx(s["start"], abs=5e-4) and end == pytest.approx(s["end"], abs=5e-4)


if "michael" in SELECTED:  # collected in the michael target only, where its clip is in the data

    def test_michael_policy_on_the_reference_model_equals_openai_whisper():
        """The same loop over openai-whisper's PyTorch encoder and decoder: float-rounding agreement."""
        variant, clip, _ = CASES["michael"]
        model = openai_reference.model(variant)
        tok = WhisperTokenizer.from_checkpoint(runfiles_checkpoint_dir(variant))
        audio = openai_reference.read_audio_16k(runfiles.locate("test_audio", clip))
        mel = whisper.log_mel_spectrogram(torch.from_numpy(audio), model.dims.n_mels, padding=whisper.audio.N_SAMPLES)

        def encode(window):
            return openai_reference.encoder_memory(model, torch.from_numpy(window))

        got = longform.transcribe(
            mel.numpy(),
            encode,
            TorchTextDecoder(model),
            tok,
            longform.TranscribeOptions(language=None, temperature=TEMPERATURES),
        )
        # torch's float32 log_softmax is off by up to ~7e-5 from float64 on these logits; ours is not.
        check_against_reference("michael", got, abs_logprob=2e-4)
        assert np.isfinite([s["no_speech_prob"] for s in got["segments"]]).all()
