"""Language detection and translation with base against openai-whisper on the same converted
weights (fp16=False).

- Every clip of multilingual/: the language `Engine.transcribe` detects (the logits after
  <|startoftranscript|> over the first 30 s of the padded log-mel, as `transcribe()` calls
  `detect_language`) equals openai-whisper's, and so does its probability, given the same
  16 kHz samples; decoding an opus file itself (through PyAV's FFmpeg, not soundfile's
  libopus) detects the same language.
- Translating the German clips to English: every window's greedy attempt equals
  `whisper.transcribe(..., task="translate")`'s (tokens) and falls back exactly where it falls
  back, up to the first window that falls back; where every window stays greedy (fleurs-de-000)
  the segments are equal (tokens, times, text, temperature). Sampled text itself is not compared,
  nor anything after it: the RNGs differ, and a sampled window's text is the next window's
  prompt and may move its start.

openai-whisper's side is references.py's language set, computed by a build action.
"""

import functools

import pytest

from ckw import runfiles
from ckw.runtime.engine import Engine
from ckw.runtime.longform import TranscribeOptions
from models.whisper.reference import openai_reference
from tests.e2e import references
from tests.e2e.clips import audio_root

TEMPERATURES = references.TEMPERATURES
CLIPS = references.multilingual_clips(audio_root())
# clip: the first window that falls back
GERMAN = {"fleurs-de-000.ogg": None, "fleurs-de-001.ogg": 0, "test_de.wav": 0}
assert list(GERMAN) == references.GERMAN


@functools.cache
def engine() -> Engine:
    return Engine.from_runfiles("base")


@functools.cache
def reference() -> references.References:
    return references.load("language", "base")


def audio_path(clip: str) -> str:
    return runfiles.locate("test_audio", f"{references.MULTILINGUAL}/{clip}")


def audio_16k(clip: str):
    """The samples openai-whisper's side decoded (its loader: soundfile, without ffmpeg)."""
    return openai_reference.read_audio_16k(audio_path(clip))


def test_every_multilingual_clip_is_there():
    assert len(CLIPS) == 18 and {"test_de.wav", "mini_zh_mid.wav", "fleurs-pt-001.ogg"} <= set(CLIPS)


@pytest.mark.parametrize("clip", CLIPS)
def test_detected_language_equals_openai_whisper(clip):
    detected = reference()[f"detect {clip}"]
    want, want_probs = detected["language"], detected["probs"]
    audio = audio_16k(clip)
    _, info = engine().transcribe(audio)  # detection happens before the first segment is asked for
    assert info.language == want, f"{clip}: ours {info.language}, openai-whisper {want}"
    assert info.language_probability == pytest.approx(want_probs[want], abs=2e-3)
    assert set(info.all_language_probs) == set(want_probs)
    if not clip.endswith(".wav"):  # opus through FFmpeg's decoder, not the reference's libopus
        _, from_file = engine().transcribe(audio_path(clip))
        assert from_file.language == want


def reference_translation(clip):
    """openai-whisper's result and its decode() attempts grouped per window."""
    want = reference()[f"translate {clip}"]
    attempts = []
    for a in want["attempts"]:
        if a["temperature"] == 0.0:
            attempts.append([])
        attempts[-1].append((a["temperature"], a["tokens"]))
    return want["result"], attempts


@pytest.mark.parametrize("clip", list(GERMAN))
def test_translation_equals_openai_whisper(clip):
    audio = audio_16k(clip)
    want, want_windows = reference_translation(clip)
    got = engine().transcribe_long(audio, TranscribeOptions(task="translate", temperature=TEMPERATURES))
    assert got["language"] == want["language"] == "de"
    first_fallback = next((i for i, w in enumerate(want_windows) if len(w) > 1), None)
    assert first_fallback == GERMAN[clip]
    deterministic = want_windows if first_fallback is None else want_windows[: first_fallback + 1]
    assert len(got["windows"]) >= len(deterministic)
    for i, (ours, theirs) in enumerate(zip(got["windows"], deterministic)):
        assert ours["attempts"][0]["tokens"] == theirs[0][1], f"{clip} window {i}: greedy attempt"
        assert (len(ours["attempts"]) > 1) == (len(theirs) > 1), f"{clip} window {i}: fallback decision"
    if first_fallback is not None:
        return
    assert len(got["windows"]) == len(want_windows)
    assert len(got["segments"]) == len(want["segments"])
    for ours, theirs in zip(got["segments"], want["segments"], strict=True):
        for key in ("seek", "start", "end", "text", "tokens", "temperature"):
            assert ours[key] == theirs[key], f"{clip} segment {theirs['id']} {key}: {ours[key]!r} vs {theirs[key]!r}"
    assert got["text"] == want["text"]
    assert got["text"].isascii()  # English, not German
