"""Many transcriptions in one engine (ckw/runtime/streams.py, tiny): requests with different audio,
lengths and options (greedy, beams, best_of sampling at a fixed temperature, word timestamps,
no conditioning with an initial prompt) submitted together give exactly a solo
Engine.transcribe's segments, tokens and words; their decode steps share calls; a cancelled
request stops and frees its blocks and entry; a bad file fails alone."""

import contextlib
import functools

import pytest

from ckw import runfiles
from ckw.runtime.audio_input import AudioInputError
from ckw.runtime.engine import Engine
from ckw.runtime.paged_decoder import Cancelled
from ckw.runtime.streams import Streams

CLIPS = [
    "jfk.wav",
    "librispeech/1089-134686-0000.flac",
    "librispeech/1089-134686-0002.wav",
    "librispeech/1089-134691-0000.flac",
    "librispeech/1089-134691-0001.flac",
]
LONG = "long/shakespeare_sonnets_I-III_concat.flac"
OPTIONS = [
    {},
    {"beam_size": 5},
    {"word_timestamps": True},
    {"temperature": 0.6, "best_of": 3},
    {"condition_on_previous_text": False, "initial_prompt": "Sonnets and stories."},
]


def audio(name: str) -> str:
    return runfiles.locate("test_audio", name)


@functools.cache
def engine() -> Engine:
    return Engine.from_runfiles("tiny")


_solo = {}


def solo(clip: str, **options) -> dict:
    """Engine.transcribe_long alone, on the one-request engine (the beam decoder library)."""
    key = (clip, tuple(sorted(options.items())))
    if key not in _solo:
        _solo[key] = engine().transcribe_long(audio(clip), engine().check_options(**options))
    return _solo[key]


@pytest.fixture(scope="module")
def streams():
    s = Streams.from_runfiles("tiny", max_streams=8)
    yield s
    s.close()


def test_requests_together_equal_their_solo_transcriptions(streams):
    requests = [streams.submit(audio(c), **o) for c, o in zip(CLIPS, OPTIONS)]
    results = [r.result() for r in requests]
    for i, got in enumerate(results):
        want = solo(CLIPS[i], **OPTIONS[i])
        assert got["segments"] == want["segments"], f"{CLIPS[i]} {OPTIONS[i]}"
        assert (got["text"], got["tokens"], got["windows"]) == (want["text"], want["tokens"], want["windows"])
    assert any("words" in s for s in results[2]["segments"])
    assert streams.paged.pool.n_used == 0 and streams.paged.entries.n_used == 0


def test_long_recordings_share_their_decode_steps(streams):
    """Two requests of several windows each: their decode phases overlap, so steps carry both
    (one-window clips mostly do not: a tiny window decodes faster than the next one encodes)."""
    before = len(streams.paged.steps)
    options = [{}, {"condition_on_previous_text": False}]
    requests = [streams.submit(audio(LONG), **o) for o in options]
    for r, o in zip(requests, options):
        assert r.result()["segments"] == solo(LONG, **o)["segments"], o
    shared = sum(requests > 1 for _, requests, _ in list(streams.paged.steps)[before:])
    assert shared > 10, f"{shared} steps ran both requests' rows"


def test_a_newcomer_waits_for_the_step_in_flight_at_most(streams):
    """The policy (paged_decoder.py): no decode step starts while another call on the handle waits,
    so a request submitted while a long one decodes gets its encoder window and prefill after at
    most the step in flight (and the calls queued before it); then they share steps."""
    start = len(streams.paged.events)
    long = streams.submit(audio(LONG))
    next(iter(long.segments()))  # the long request is decoding
    short = streams.submit(audio(CLIPS[0]))
    assert short.result()["segments"] == solo(CLIPS[0])["segments"]
    events = list(streams.paged.events)[start:]
    waiting = {}
    for kind, *ids in events:
        if kind == "wait":
            waiting[ids[0]] = ids[1]
        elif kind == "run":
            del waiting[ids[0]]
        else:
            assert not waiting, f"a step started while calls {sorted(waiting)} waited"
    mine = id(short._group)
    assert sum(kind == "run" and ids[1] == mine for kind, *ids in events) >= 2  # its window and prefill
    assert any(kind == "step" and mine in ids[0] and len(ids[0]) > 1 for kind, *ids in events)
    long.cancel()
    with contextlib.suppress(Cancelled):
        long.result()  # its blocks and entry freed before the next test


def test_segments_stream_while_other_requests_run(streams):
    a = streams.submit(audio(CLIPS[3]))
    b = streams.submit(audio(CLIPS[0]), beam_size=5)
    assert [s.as_dict() for s in b.segments()] == solo(CLIPS[0], beam_size=5)["segments"]
    assert a.result()["segments"] == solo(CLIPS[3])["segments"]


def test_a_cancelled_request_stops_and_frees_its_blocks(streams):
    request = streams.submit(audio(CLIPS[3]))
    other = streams.submit(audio(CLIPS[0]))
    request.cancel()
    with pytest.raises(Cancelled):
        request.result()
    assert other.result()["segments"] == solo(CLIPS[0])["segments"]
    assert streams.paged.pool.n_used == 0 and streams.paged.entries.n_used == 0


def test_a_bad_file_fails_alone(streams, tmp_path):
    bad = tmp_path / "empty.wav"
    bad.write_bytes(b"")
    broken = streams.submit(str(bad))
    good = streams.submit(audio(CLIPS[0]))
    with pytest.raises(AudioInputError):
        broken.result()
    assert good.result()["segments"] == solo(CLIPS[0])["segments"]


def test_bad_options_are_refused_at_submit(streams):
    with pytest.raises(ValueError, match="beam_size"):
        streams.submit(audio(CLIPS[0]), beam_size=0)
