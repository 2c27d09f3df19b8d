"""vad_filter end to end (tiny.en): a recording of shared speech with long silences and noise between
the clips (ckw/runtime/testing/speech_gaps.py) transcribed with faster-whisper's VAD filter.

- On the recording's timeline: every word and every segment with words lies inside a speech chunk,
  and every chunk covers speech (its clip, widened by the 400 ms pad); nothing is transcribed in
  the silences and the noise; info.duration is the recording's, duration_after_vad the speech's.
- The text equals the text without VAD of the speech alone (the chunks' samples concatenated,
  which is what the filter transcribes): the same tokens, and the same times once mapped back.
- faster-whisper itself (faster_whisper.WhisperModel on its CTranslate2 tiny.en, the weights ckw
  converts) with vad_filter=True against ckw.WhisperModel: the speech chunks are equal (ckw's
  compiled Silero VAD against faster-whisper's ONNX one), duration_after_vad equal, the texts
  equal, segment starts and ends within SECONDS and words within WORD_SECONDS after mapping.
- No speech at all: no segments, duration_after_vad 0 (faster-whisper's behaviour, checked).
- Several requests with vad_filter at once (ckw/runtime/streams.py) each equal a solo transcription.
"""

import dataclasses

import faster_whisper
import faster_whisper.vad as fw_vad
import pytest

import ckw
from ckw import runfiles
from ckw.runtime import speech_timestamps
from ckw.runtime.engine import Engine
from ckw.runtime.streams import Streams
from ckw.runtime.testing import speech_gaps
from ckw.runtime.testing.offline_cache import offline_cache  # noqa: F401 (autouse fixture)
from tools.bench.faster_whisper_peer import ctranslate2_model_dir  # faster-whisper's own tiny.en

# Boundaries: both engines' timestamps are on the 20 ms grid of the speech, then rounded to 10 ms
# on the recording's (the same rounding); they differ by a timestamp step at most, as without VAD
# (ckw/faster_whisper_calls_test.py's tolerances). Words come from cross-attention, the most
# sensitive to the engines' arithmetic.
SECONDS = 0.02
WORD_SECONDS = 0.1
PAD = 0.4  # VadOptions.speech_pad_ms
WORD_SLACK = 0.3  # how far a word's timing may run past the end of its chunk (word timing's precision)
CLIPS = (
    "jfk.wav",
    "librispeech/1089-134686-0000.flac",
    "librispeech/2830-3980-0043.wav",
    "librispeech/4507-16021-0012.wav",
)
PHRASES = (
    "ask not what your country can do for you",
    "stew for dinner",
    "experience proves this",
    "why should one halt on the way",
)


@pytest.fixture(scope="module")
def recording() -> speech_gaps.Recording:
    return speech_gaps.with_gaps([speech_gaps.read_16k(runfiles.locate("test_audio", p)) for p in CLIPS])


@pytest.fixture(scope="module")
def engine():
    with Engine.from_runfiles("tiny", threads=2) as e:
        yield e


@pytest.fixture(scope="module")
def models():
    """(faster-whisper's WhisperModel, ckw's) on the same weights."""
    theirs = faster_whisper.WhisperModel(
        ctranslate2_model_dir("tiny", ""), device="cpu", compute_type="float32", cpu_threads=2
    )
    with ckw.WhisperModel("tiny.en", device="cpu", compute_type="float32", cpu_threads=2) as ours:
        yield theirs, ours


def text(segments) -> str:
    return "".join(s.text for s in segments).lower().replace(",", "")


def inside(a: float, b: float, spans, slack: float) -> bool:
    return any(s - slack <= a and b <= e + slack for s, e in spans)


def test_words_and_segments_lie_in_the_speech_on_the_recordings_timeline(engine, recording):
    segments, info = engine.transcribe(recording.samples, vad_filter=True, word_timestamps=True, beam_size=5)
    segments = [s for s in segments if s.text.strip()]
    assert info.duration == pytest.approx(recording.duration, abs=1e-9)
    chunks = [(c["start"] / 16000, c["end"] / 16000) for c in info.speech_chunks]
    assert info.duration_after_vad == pytest.approx(sum(e - s for s, e in chunks), abs=1e-9)
    assert info.duration_after_vad < 0.6 * info.duration  # the gaps are gone
    clips = speech_gaps.merged(recording.speech, 2.0)  # the 1 s pause stays inside a chunk
    assert len(chunks) == len(clips)
    for s, e in chunks:  # each chunk is speech, with its pad
        assert inside(s, e, clips, PAD + 0.04), (s, e)
    words = [w for s in segments for w in s.words]
    assert len(words) > 60
    for w in words:  # on the recording's timeline (10 ms rounding): in its clip, and in the chunk of its middle
        assert inside(w["start"], w["end"], clips, PAD + 0.01), w
        middle = (w["start"] + w["end"]) / 2
        (chunk,) = [(s, e) for s, e in chunks if s - 0.01 <= middle <= e + 0.01]
        # a word at a chunk's end may run on past it: its timing comes from the speech, where the next
        # chunk follows at once (faster-whisper maps it alike); measured here: up to 0.13 s
        assert inside(w["start"], w["end"], [chunk], WORD_SLACK), (w, chunk)
    for s in segments:  # a segment with words spans them
        assert (s.start, s.end) == (s.words[0]["start"], s.words[-1]["end"])
    assert [w["start"] for w in words] == sorted(w["start"] for w in words)
    for phrase in PHRASES:
        assert phrase in text(segments)


@pytest.mark.parametrize("word_timestamps", [False, True])
def test_the_text_equals_the_speech_alone_transcribed_without_vad(engine, recording, word_timestamps):
    segments, info = engine.transcribe(recording.samples, vad_filter=True, word_timestamps=word_timestamps)
    segments = list(segments)
    speech, timeline = speech_timestamps.collect_speech(recording.samples, info.speech_chunks)
    plain, plain_info = engine.transcribe(speech, word_timestamps=word_timestamps)
    plain = list(plain)
    assert plain_info.duration == info.duration_after_vad
    assert [s.tokens for s in segments] == [s.tokens for s in plain] and info.text == plain_info.text
    assert [s.seek for s in segments] == [s.seek for s in plain]  # seeks count frames of the speech
    for s, p in zip(segments, plain):
        assert (s.start, s.end, s.words) == timeline.segment(p.start, p.end, p.words)
    assert info.windows == plain_info.windows


@pytest.mark.parametrize("vad_parameters", [None, {"max_speech_duration_s": 5.0, "min_silence_duration_ms": 500}])
def test_faster_whisper_with_vad_filter_gives_the_same_chunks_and_times(models, engine, recording, vad_parameters):
    theirs, ours = models
    options = fw_vad.VadOptions(**(vad_parameters or {}))
    want_chunks = fw_vad.get_speech_timestamps(recording.samples, options)  # what its transcribe() cuts
    _, info = ours.engine.transcribe(recording.samples, vad_filter=True, vad_parameters=vad_parameters)
    assert info.speech_chunks == want_chunks, "the compiled Silero VAD's chunks differ from faster-whisper's"
    for word_timestamps in (False, True):
        kwargs = {"vad_filter": True, "vad_parameters": vad_parameters, "word_timestamps": word_timestamps}
        a_segments, a_info = theirs.transcribe(recording.samples, **kwargs)
        b_segments, b_info = ours.transcribe(recording.samples, **kwargs)
        a_segments, b_segments = list(a_segments), list(b_segments)
        assert (b_info.duration, b_info.duration_after_vad) == (a_info.duration, a_info.duration_after_vad)
        assert dataclasses.asdict(b_info.vad_options) == dataclasses.asdict(a_info.vad_options)
        assert [s.text for s in b_segments] == [s.text for s in a_segments]
        deltas = [
            abs(b - a) for sa, sb in zip(a_segments, b_segments) for a, b in ((sa.start, sb.start), (sa.end, sb.end))
        ]
        assert max(deltas) <= SECONDS + 1e-9, deltas
        word_deltas = [
            abs(b - a)
            for sa, sb in zip(a_segments, b_segments)
            for wa, wb in zip(sa.words or [], sb.words or [])
            for a, b in ((wa.start, wb.start), (wa.end, wb.end))
        ]
        assert [w.word for s in b_segments for w in s.words or []] == [
            w.word for s in a_segments for w in s.words or []
        ]
        assert max(word_deltas, default=0.0) <= WORD_SECONDS + 1e-9
        print(
            f"vad_parameters={vad_parameters} word_timestamps={word_timestamps}: {len(want_chunks)} chunks equal; "
            f"{len(a_segments)} segments, boundaries within {max(deltas):.3f} s, "
            f"words within {max(word_deltas, default=0.0):.3f} s"
        )


def test_no_speech_gives_no_segments_as_faster_whisper(models, recording):
    theirs, ours = models
    quiet = speech_gaps.with_gaps([], gaps=(speech_gaps.Gap(12.0, noise=0.002, hum=0.01),)).samples
    a_segments, a_info = theirs.transcribe(quiet, vad_filter=True)
    b_segments, b_info = ours.transcribe(quiet, vad_filter=True)
    assert list(a_segments) == [] and list(b_segments) == []
    assert (b_info.duration, b_info.duration_after_vad) == (a_info.duration, a_info.duration_after_vad) == (12.0, 0.0)
    segments, info = ours.engine.transcribe(quiet, vad_filter=True)
    assert list(segments) == [] and info.speech_chunks == [] and info.text == ""


def test_requests_side_by_side_equal_solo(engine, recording):
    solo = engine.transcribe_long(recording.samples, ckw_options(vad_filter=True, beam_size=5))
    other = engine.transcribe_long(recording.samples[: 16000 * 20], ckw_options(vad_filter=True))
    streams = Streams(Engine.from_runfiles("tiny", threads=2), max_streams=4)
    try:
        requests = [
            streams.submit(recording.samples, vad_filter=True, beam_size=5),
            streams.submit(recording.samples[: 16000 * 20], vad_filter=True),
            streams.submit(recording.samples, vad_filter=True, beam_size=5),
        ]
        results = [r.result() for r in requests]
    finally:
        streams.close()
    for got, want in zip(results, (solo, other, solo)):
        assert got["segments"] == want["segments"] and got["text"] == want["text"]


def ckw_options(**kwargs):
    from ckw.runtime.options import TranscribeOptions

    return TranscribeOptions(**kwargs)
