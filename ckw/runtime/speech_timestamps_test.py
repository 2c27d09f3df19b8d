"""ckw/runtime/speech_timestamps.py against faster-whisper 1.2.1's own VAD code (faster_whisper/vad.py).

- Speech chunks: for every shared recording (jfk, LibriSpeech, the sonnets, formats/ with its 8 kHz
  and stereo files, multilingual/) and a recording of shared speech with long silences and noise
  between the clips (ckw/runtime/testing/speech_gaps.py), each decoded to 16 kHz by the runtime's own
  resampler, and for several VadOptions (the defaults, max_speech_duration_s small enough to split,
  min_speech_duration_ms, neg_threshold, ...), `speech_timestamps` equals faster-whisper's
  get_speech_timestamps exactly, both given the same probabilities: faster-whisper's ONNX model's
  over the padded audio, as get_speech_timestamps computes them (and once unpatched: the very
  call faster-whisper makes). Random probability sequences (thresholds hit exactly, long speech
  cut) cover the state machine's corners.
- Compiled model: ckw/runtime/vad.py's SileroVad (libckw_silero_vad.so) gives probabilities from which
  every chunk of every recording and option set equals faster-whisper's own (ONNX) chunks.
- Chunk collection and the timeline: the concatenated speech equals collect_chunks'; times map
  back as SpeechTimestampsMap.get_original_time maps them (every 1 ms, chunk ends exactly, as
  starts and as ends); segments and words as restore_speech_timestamps restores them.
- VadOptions: faster-whisper's fields and defaults; a bad value is a one-line OptionError naming
  the field; vad_parameters as a dict, faster-whisper's VadOptions or None.
"""

import dataclasses
import glob
import math
import os

import faster_whisper.transcribe as fw_transcribe
import faster_whisper.vad as fw_vad
import numpy as np
import pytest

from ckw import runfiles
from ckw.runtime import audio_stream
from ckw.runtime import speech_timestamps as st
from ckw.runtime.engine import Frontend
from ckw.runtime.options import OptionError
from ckw.runtime.testing import speech_gaps

AUDIO = (".wav", ".flac", ".ogg", ".mp3")
OPTION_SETS = {
    "defaults": {},
    "max_speech 5 s": {"max_speech_duration_s": 5.0},
    "max_speech 2 s, pad 100 ms": {"max_speech_duration_s": 2.0, "speech_pad_ms": 100},
    "min_speech 1.5 s, min_silence 300 ms": {"min_speech_duration_ms": 1500, "min_silence_duration_ms": 300},
    "threshold 0.6, neg_threshold 0.2, min_silence 100 ms": {
        "threshold": 0.6,
        "neg_threshold": 0.2,
        "min_silence_duration_ms": 100,
    },
    "neg_threshold 0.45, no pad, no min_silence": {
        "neg_threshold": 0.45,
        "speech_pad_ms": 0,
        "min_silence_duration_ms": 0,
    },
    "threshold 0.9, max_speech 1 s, min_speech 250 ms": {
        "threshold": 0.9,
        "max_speech_duration_s": 1.0,
        "min_speech_duration_ms": 250,
    },
}
# The gaps recording: clips of the shared speech (16 kHz) between silences and noise.
GAP_CLIPS = (
    "jfk.wav",
    "librispeech/1089-134686-0000.flac",
    "librispeech/2830-3980-0043.wav",
    "librispeech/4507-16021-0012.wav",
)


def shared(path: str) -> str:
    return runfiles.locate("test_audio", path)


def recording_names() -> list[str]:
    root = os.path.dirname(shared("jfk.wav"))
    names = ["jfk.wav"]
    for folder in ("librispeech", "long", "formats", "multilingual"):
        names += sorted(
            os.path.relpath(p, root) for p in glob.glob(os.path.join(root, folder, "*")) if p.endswith(AUDIO)
        )
    return names + ["speech with gaps"]


@pytest.fixture(scope="module")
def frontend():
    handle = Frontend(runfiles.locate("ckw", "models/whisper/libckw_whisper_frontend.so")).handle
    yield handle
    handle.close()


def gaps_recording() -> speech_gaps.Recording:
    return speech_gaps.with_gaps([speech_gaps.read_16k(shared(p)) for p in GAP_CLIPS])


_cache: dict[str, tuple[np.ndarray, np.ndarray]] = {}


def audio_and_probs(frontend, name: str) -> tuple[np.ndarray, np.ndarray]:
    """The recording at 16 kHz (the runtime's decoding and resampler, as vad_filter decodes it) and
    faster-whisper's ONNX probabilities for it, computed as get_speech_timestamps computes them."""
    if name not in _cache:
        if name == "speech with gaps":
            audio = gaps_recording().samples
        else:
            source = audio_stream.open_source(frontend, shared(name))
            try:
                audio = np.concatenate(list(audio_stream.resample_16k(frontend, source)))
            finally:
                source.close()
        padded = np.pad(audio, (0, st.WINDOW_SAMPLES - audio.shape[0] % st.WINDOW_SAMPLES))
        _cache[name] = audio, fw_vad.get_vad_model()(padded)
    return _cache[name]


def faster_whispers(monkeypatch, audio: np.ndarray, probs: np.ndarray, options: dict) -> list[dict]:
    """faster-whisper's get_speech_timestamps on `audio`, its VAD model answering with `probs`."""
    asked = []

    def model(padded):
        asked.append(padded.size)
        return probs

    with monkeypatch.context() as m:
        m.setattr(fw_vad, "get_vad_model", lambda: model)
        chunks = fw_vad.get_speech_timestamps(audio, fw_vad.VadOptions(**options))
    assert asked == [st.n_windows(audio.size) * st.WINDOW_SAMPLES]  # the framing speech_timestamps assumes
    return chunks


@pytest.mark.parametrize("name", recording_names())
def test_chunks_equal_faster_whispers_from_the_same_probabilities(frontend, monkeypatch, name):
    audio, probs = audio_and_probs(frontend, name)
    assert probs.size == st.n_windows(audio.size)
    counts = {}
    for label, options in OPTION_SETS.items():
        theirs = faster_whispers(monkeypatch, audio, probs, options)
        ours = st.speech_timestamps(probs, audio.size, st.VadOptions(**options))
        assert ours == theirs, label
        counts[label] = len(ours)
    # the very call faster-whisper makes (its model run inside): the same probabilities, the same chunks
    assert st.speech_timestamps(probs, audio.size) == fw_vad.get_speech_timestamps(audio, fw_vad.VadOptions())
    print(f"{name}: {audio.size / 16000:.1f} s, chunks per option set {list(counts.values())}")
    if name in ("long/shakespeare_sonnets_I-III_concat.flac", "speech with gaps"):
        # the option sets do what they are for: split long speech, drop short speech
        assert counts["max_speech 5 s"] > counts["defaults"] >= 2
        assert counts["min_speech 1.5 s, min_silence 300 ms"] < counts["neg_threshold 0.45, no pad, no min_silence"]


def test_the_8_khz_and_stereo_files_are_resampled_and_mixed_first(frontend):
    audio, _ = audio_and_probs(frontend, "formats/OSR_us_000_0034_8k.wav")
    assert audio.size == pytest.approx(35.548 * 16000, abs=2)  # 16 kHz, as faster-whisper's decode_audio gives
    stereo, _ = audio_and_probs(frontend, "formats/stereo_diarization.wav")
    assert stereo.ndim == 1 and stereo.size == 5 * 16000


def test_the_gaps_recording_keeps_the_speech_and_drops_the_silences_and_noise(frontend):
    rec = gaps_recording()
    audio, probs = audio_and_probs(frontend, "speech with gaps")
    chunks = st.speech_timestamps(probs, audio.size)
    pad = 0.4
    for c in chunks:  # every chunk is speech (with its padding), none is a gap's noise alone
        assert any(
            s - pad - 0.04 <= c["start"] / 16000 and c["end"] / 16000 <= e + pad + 0.04
            for s, e in speech_gaps.merged(rec.speech, 2.0)
        ), c
    for s, e in rec.speech:  # and every clip is kept (but for the clips' own silence at their edges)
        assert any(c["start"] / 16000 <= s + 0.5 and e - 0.5 <= c["end"] / 16000 for c in chunks), (s, e)
    assert sum(c["end"] - c["start"] for c in chunks) < 0.7 * audio.size


def random_probabilities(rng: np.random.Generator, n: int) -> np.ndarray:
    """Runs of speech and silence of random lengths, with values exactly at the default thresholds
    (0.5 and 0.35 as float32) and between them."""
    levels = np.array([0.02, 0.2, 0.35, 0.349, 0.4, 0.45, 0.5, 0.499, 0.6, 0.9, 0.99], np.float32)
    out = np.empty(n, np.float32)
    i = 0
    while i < n:
        length = int(rng.choice([1, 2, 3, 5, 10, 40, 120, 400]))
        out[i : i + length] = rng.choice(levels, size=min(length, n - i)) if rng.random() < 0.3 else rng.choice(levels)
        i += length
    return out


@pytest.mark.parametrize("seed", range(40))
def test_random_probabilities_give_faster_whispers_chunks(monkeypatch, seed):
    rng = np.random.default_rng(seed)
    n_samples = int(rng.integers(1, 6000)) * 512 + int(rng.integers(0, 512))
    probs = random_probabilities(rng, st.n_windows(n_samples))
    audio = np.zeros(n_samples, np.float32)
    for label, options in OPTION_SETS.items():
        theirs = faster_whispers(monkeypatch, audio, probs, options)
        assert st.speech_timestamps(probs, n_samples, st.VadOptions(**options)) == theirs, label


def test_wrong_number_of_probabilities_is_refused():
    with pytest.raises(ValueError, match=r"^3 probabilities for 2048 samples; expected 5 "):
        st.speech_timestamps(np.zeros(3, np.float32), 2048)


@pytest.fixture(scope="module")
def vad():
    from ckw.runtime.vad import SileroVad

    with SileroVad.from_runfiles() as v:
        yield v


@pytest.mark.parametrize("name", recording_names())
def test_compiled_vad_gives_faster_whispers_chunks(frontend, vad, name):
    """libckw_silero_vad.so's probabilities (ckw/runtime/vad.py) against faster-whisper end to end: its
    own chunks from its ONNX model, for every option set."""
    audio, onnx = audio_and_probs(frontend, name)
    ours = vad.speech_probabilities(audio)
    assert ours.shape == onnx.shape and ours.dtype == np.float32
    agree = total = 0
    for label, options in OPTION_SETS.items():
        theirs = st.speech_timestamps(onnx, audio.size, st.VadOptions(**options))  # = faster-whisper's (above)
        mine = st.speech_timestamps(ours, audio.size, st.VadOptions(**options))
        agree += sum(1 for c in mine if c in theirs)
        total += max(len(mine), len(theirs))
    print(f"{name}: max |p - p_onnx| {np.abs(ours - onnx).max():.2e}; {agree} of {total} chunks equal")
    assert agree == total


def test_collected_speech_equals_faster_whispers(frontend):
    audio, probs = audio_and_probs(frontend, "speech with gaps")
    for options in OPTION_SETS.values():
        chunks = st.speech_timestamps(probs, audio.size, st.VadOptions(**options))
        speech, timeline = st.collect_speech(audio, chunks)
        pieces, metadata = fw_vad.collect_chunks(audio, chunks)
        assert np.array_equal(speech, np.concatenate(pieces)) and speech.dtype == np.float32
        assert timeline.speech_duration == speech.size / 16000 == metadata[0]["duration"]
        for (start, end), offset in zip(timeline.chunks, timeline.offsets):
            assert np.array_equal(speech[offset : offset + end - start], audio[start:end])
        assert timeline.duration == audio.size / 16000
    speech, timeline = st.collect_speech(audio, [])
    assert speech.size == 0 and speech.dtype == np.float32 and timeline.speech_duration == 0.0
    assert np.concatenate(fw_vad.collect_chunks(audio, [])[0]).size == 0


@pytest.mark.parametrize("label", ["defaults", "max_speech 2 s, pad 100 ms"])
def test_times_map_back_as_faster_whispers(frontend, label):
    audio, probs = audio_and_probs(frontend, "speech with gaps")
    chunks = st.speech_timestamps(probs, audio.size, st.VadOptions(**OPTION_SETS[label]))
    assert len(chunks) >= 3
    timeline = st.SpeechTimeline(chunks, audio.size)
    theirs = fw_vad.SpeechTimestampsMap(chunks, 16000)
    ends = [e / 16000 for e in timeline.speech_ends]
    times = (
        [float(t) for t in np.arange(0, timeline.speech_duration + 1, 0.001)]
        + ends
        + [round(t, 2) for t in ends]
        + [e + 1e-9 for e in ends]
        + [e - 1e-9 for e in ends]
    )
    for t in times:
        for is_end in (False, True):
            assert timeline.chunk_of(t, is_end) == theirs.get_chunk_index(t, is_end), (t, is_end)
            assert timeline.original(t, is_end=is_end) == theirs.get_original_time(t, is_end=is_end), (t, is_end)


def test_segments_and_words_map_back_as_restore_speech_timestamps(frontend):
    audio, probs = audio_and_probs(frontend, "speech with gaps")
    chunks = st.speech_timestamps(probs, audio.size, st.VadOptions(max_speech_duration_s=3.0))
    timeline = st.SpeechTimeline(chunks, audio.size)
    rng = np.random.default_rng(0)
    ends = [e / 16000 for e in timeline.speech_ends]
    segments = []
    for i in range(300):  # times on the 20 ms timestamp grid, words on the 10 ms grid, some at chunk ends
        start = round(float(rng.uniform(0, timeline.speech_duration)) / 0.02) * 0.02
        end = float(ends[i % len(ends)]) if i % 5 == 0 else start + round(float(rng.uniform(0, 6)) / 0.02) * 0.02
        words = None
        if i % 3:
            edges = np.sort(
                np.round(rng.uniform(start, max(end, start + 0.01), size=2 * int(rng.integers(1, 8))), 2)
            ).tolist()
            words = [
                {"word": f" w{k}", "start": edges[2 * k], "end": edges[2 * k + 1], "probability": 0.5}
                for k in range(len(edges) // 2)
            ]
        segments.append((start, end, words))
    fw_segments = [
        fw_transcribe.Segment(
            id=i,
            seek=0,
            start=s,
            end=e,
            text="",
            tokens=[],
            avg_logprob=0.0,
            compression_ratio=1.0,
            no_speech_prob=0.0,
            words=[
                fw_transcribe.Word(start=w["start"], end=w["end"], word=w["word"], probability=w["probability"])
                for w in words
            ]
            if words
            else None,
            temperature=0.0,
        )
        for i, (s, e, words) in enumerate(segments)
    ]
    restored = list(fw_transcribe.restore_speech_timestamps(fw_segments, chunks, 16000))
    for (s, e, words), want in zip(segments, restored):
        start, end, mapped = timeline.segment(s, e, words)
        assert (start, end) == (want.start, want.end)
        assert [(w["start"], w["end"]) for w in mapped or []] == [(w.start, w.end) for w in want.words or []]


def test_vad_options_are_faster_whispers():
    ours = [(f.name, f.default) for f in dataclasses.fields(st.VadOptions)]
    theirs = [(f.name, f.default) for f in dataclasses.fields(fw_vad.VadOptions)]
    assert ours == theirs
    assert st.VadOptions().silence_threshold == 0.35 and st.VadOptions(threshold=0.1).silence_threshold == 0.01
    assert st.VadOptions(neg_threshold=0.2).silence_threshold == 0.2
    with pytest.raises(dataclasses.FrozenInstanceError):
        st.VadOptions().threshold = 0.3


@pytest.mark.parametrize(
    "field,value,message",
    [
        ("threshold", 2, "threshold=2 must be between 0 and 1"),
        ("threshold", -0.1, "threshold=-0.1 must be between 0 and 1"),
        ("threshold", math.nan, "threshold=nan must be between 0 and 1"),
        ("threshold", "high", "threshold='high' is not a number"),
        ("neg_threshold", 1.5, "neg_threshold=1.5 must be between 0 and 1"),
        ("min_speech_duration_ms", -250, "min_speech_duration_ms=-250 must be at least 0"),
        ("max_speech_duration_s", 0, "max_speech_duration_s=0 must be more than 0"),
        ("max_speech_duration_s", -1.0, "max_speech_duration_s=-1.0 must be more than 0"),
        ("min_silence_duration_ms", -1, "min_silence_duration_ms=-1 must be at least 0"),
        ("speech_pad_ms", True, "speech_pad_ms=True is not a number"),
    ],
)
def test_bad_values_are_one_line_errors_naming_the_field(field, value, message):
    with pytest.raises(OptionError) as e:
        st.VadOptions(**{field: value})
    assert str(e.value) == message and e.value.name == field
    with pytest.raises(OptionError) as e:  # given as faster-whisper's vad_parameters
        st.vad_options({field: value})
    assert str(e.value) == f"vad_parameters: {message}" and e.value.name == "vad_parameters"


def test_vad_parameters_as_faster_whisper_takes_them():
    assert st.vad_options(None) == st.VadOptions()
    assert st.vad_options({"threshold": 0.6, "speech_pad_ms": 30}) == st.VadOptions(threshold=0.6, speech_pad_ms=30)
    assert st.vad_options(fw_vad.VadOptions(min_silence_duration_ms=500)) == st.VadOptions(min_silence_duration_ms=500)
    given = st.VadOptions(threshold=0.7)
    assert st.vad_options(given) is given
    with pytest.raises(
        OptionError,
        match=r"^vad_parameters: 'window_size_samples' is not a VAD option; use threshold, "
        r"neg_threshold, min_speech_duration_ms, max_speech_duration_s, "
        r"min_silence_duration_ms, speech_pad_ms$",
    ):
        st.vad_options({"window_size_samples": 512})
    with pytest.raises(OptionError, match=r"^vad_parameters=0.5 is not a VadOptions or a dict of its fields"):
        st.vad_options(0.5)
