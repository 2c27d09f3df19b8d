"""batch_size end to end (tiny.en): faster-whisper's BatchedInferencePipeline semantics
(ckw/runtime/batched.py) on a recording with long silences (ckw/runtime/testing/speech_gaps.py) and the
159 s sonnets recording.

- Against faster-whisper itself (faster_whisper.BatchedInferencePipeline on its CTranslate2
  tiny.en, the weights ckw converts, float32) and ckw.BatchedInferencePipeline with the same
  keywords: the same speech chunks (faster-whisper's get_speech_timestamps with the batched VAD
  defaults) and the same merged 30 s chunks (offsets and durations), equal segment texts (or
  at most TEXT_MISMATCHES segments differing, printed), starts and ends within SECONDS.
- With timestamps, a chunk whose window ends before its speech does is decoded on from there by
  ckw (faster-whisper drops the rest): each chunk's segments start with faster-whisper's, and the
  further ones come after them.
- On LibriSpeech clips joined into a recording: batched with timestamps deletes no more of the
  reference's words than batched without them (MORE_DELETIONS), and each chunk's words with
  timestamps lose at most CHUNK_DELETIONS of its words without them; other edits between the two
  stay under TIMESTAMP_WORD_EDITS of the chunk's words (the timestamp tokens between a chunk's
  segments change what the decoder reads, and with it a few words: measured up to 7%).
- The multi-stream guarantee: each chunk's segments in a batch of 8 equal the chunk decoded alone
  (a batch of 1), tokens included, and equal openai-whisper's sequential transcribe() of the
  chunk's samples alone at temperature 0 with no skipping and no previous text.
- Language (base): each chunk detects its own on the window it decodes, one encoder run per chunk.
- Options: batch_size -1 and batch_size with clip_timestamps are one-line errors naming
  batch_size; 0 is the sequential default.
"""

import dataclasses

import faster_whisper
import faster_whisper.vad as fw_vad
import numpy as np
import pytest

import ckw
from ckw import runfiles
from ckw.runtime import batched
from ckw.runtime.engine import Engine
from ckw.runtime.options import OptionError, options_from
from ckw.runtime.testing import speech_gaps
from ckw.runtime.testing.offline_cache import offline_cache  # noqa: F401 (autouse fixture)
from tools.bench.faster_whisper_peer import ctranslate2_model_dir  # faster-whisper's own tiny.en
from tools.bench.wer import edit_counts, normalized_words
from tools.testing import joined_audio

# Both engines put timestamps on the 20 ms grid of a chunk, then add the chunk's offset and map it
# back to the recording rounded to 10 ms; they differ by a timestamp step at most. Without
# timestamps a segment's end is its chunk's end: faster-whisper's exact duration, ckw's whole
# 10 ms frames (< 0.01 s shorter).
SECONDS = 0.02
# Segments whose text may differ from faster-whisper's: CTranslate2's beam search and arithmetic
# are not openai-whisper's (ckw), and a near-tie between two beams can go either way. Measured 0.
TEXT_MISMATCHES = 0
CLIPS = (
    "jfk.wav",
    "librispeech/1089-134686-0000.flac",
    "librispeech/2830-3980-0043.wav",
    "librispeech/4507-16021-0012.wav",
)
SONNETS = "long/shakespeare_sonnets_I-III_concat.flac"
MORE_DELETIONS = 2  # reference words batched with timestamps may delete beyond batched without
CHUNK_DELETIONS = 2  # of a chunk's words without timestamps, missing with them
TIMESTAMP_WORD_EDITS = 0.10  # of each chunk's words, with timestamps against without
BATCHED_VAD = dict(max_speech_duration_s=30, min_silence_duration_ms=160)


@pytest.fixture(scope="module")
def recordings() -> dict:
    gaps = speech_gaps.with_gaps([speech_gaps.read_16k(runfiles.locate("test_audio", p)) for p in CLIPS])
    sonnets = faster_whisper.decode_audio(runfiles.locate("test_audio", SONNETS))
    return {"gaps": gaps.samples, "sonnets": np.asarray(sonnets, np.float32)}


@pytest.fixture(scope="module")
def models():
    theirs = faster_whisper.WhisperModel(
        ctranslate2_model_dir("tiny", ""), device="cpu", compute_type="float32", cpu_threads=2
    )
    with ckw.WhisperModel("tiny.en", device="cpu", compute_type="float32", cpu_threads=2) as ours:
        yield faster_whisper.BatchedInferencePipeline(theirs), ckw.BatchedInferencePipeline(ours)


@pytest.mark.parametrize("name", ["gaps", "sonnets"])
@pytest.mark.parametrize("without_timestamps", [True, False])
def test_faster_whisper_batched_gives_the_same_chunks_texts_and_times(models, recordings, name, without_timestamps):
    theirs, ours = models
    audio = recordings[name]
    want_chunks = fw_vad.get_speech_timestamps(audio, fw_vad.VadOptions(**BATCHED_VAD))
    _, want_meta = fw_vad.collect_chunks(audio, want_chunks, max_duration=30)
    kwargs = {"batch_size": 8, "without_timestamps": without_timestamps}
    a_segments, a_info = theirs.transcribe(audio, **kwargs)
    b_segments, b_info = ours.transcribe(audio, **kwargs)
    a_segments, b_segments = list(a_segments), list(b_segments)

    segments, info = ours.model.engine.transcribe(audio, batch_size=8, without_timestamps=without_timestamps)
    list(segments)
    assert info.speech_chunks == want_chunks, "the compiled Silero VAD's chunks differ from faster-whisper's"
    got_meta = batched.merge_chunks(
        np.zeros(sum(c["end"] - c["start"] for c in want_chunks), np.float32),
        [(c["start"], c["end"]) for c in want_chunks],
    )
    assert [(c.offset, c.duration) for c in got_meta] == [
        (m["offset"], m["duration"]) for m in want_meta if m["duration"] > 0
    ]
    assert (b_info.duration, b_info.duration_after_vad) == (a_info.duration, a_info.duration_after_vad)
    assert dataclasses.asdict(b_info.vad_options) == dataclasses.asdict(a_info.vad_options)

    theirs_by_chunk, ours_by_chunk = {}, {}
    for segments, by_chunk in ((a_segments, theirs_by_chunk), (b_segments, ours_by_chunk)):
        for s in segments:
            by_chunk.setdefault(s.seek, []).append(s)
    assert ours_by_chunk.keys() == theirs_by_chunk.keys()
    further = [s.text for seek, ours_ in ours_by_chunk.items() for s in ours_[len(theirs_by_chunk[seek]) :]]
    assert not (without_timestamps and further), further
    print(f"{name}: {len(further)} segments decoded after a chunk's first window: {further}")
    b_segments = [s for seek in theirs_by_chunk for s in ours_by_chunk[seek][: len(theirs_by_chunk[seek])]]
    assert len(b_segments) == len(a_segments)
    differing = [(a.text, b.text) for a, b in zip(a_segments, b_segments) if a.text != b.text]
    for a, b in differing:
        print(f"{name}: faster-whisper {a!r}\n{' ' * len(name)}  ckw            {b!r}")
    assert len(differing) <= TEXT_MISMATCHES
    deltas = [abs(b - a) for sa, sb in zip(a_segments, b_segments) for a, b in ((sa.start, sb.start), (sa.end, sb.end))]
    assert max(deltas) <= SECONDS + 1e-9, deltas
    assert [s.seek for s in b_segments] == [s.seek for s in a_segments]
    print(
        f"{name} without_timestamps={without_timestamps}: {len(want_chunks)} speech chunks and "
        f"{len(got_meta)} batched chunks equal; {len(a_segments)} segments, {len(differing)} texts differ, "
        f"boundaries within {max(deltas):.3f} s"
    )


@pytest.fixture(scope="module")
def engine():
    with Engine.from_runfiles("tiny", threads=2) as e:
        yield e


@pytest.mark.parametrize("name", ["gaps", "sonnets"])
@pytest.mark.parametrize("without_timestamps", [True, False])
def test_batched_equals_each_chunk_alone(engine, recordings, name, without_timestamps):
    audio = recordings[name]
    options = dict(batch_size=8, beam_size=5, without_timestamps=without_timestamps)
    segments, info = engine.transcribe(audio, **options)
    together = list(segments)
    opts = engine.check_options(**options)
    speech = np.concatenate([audio[c["start"] : c["end"]] for c in info.speech_chunks])
    chunks = batched.merge_chunks(speech, [(c["start"], c["end"]) for c in info.speech_chunks])
    assert len(chunks) >= (2 if name == "sonnets" else 1)
    alone = batched._Runner(engine, opts, 1)
    by_seek = {}
    for s in together:
        by_seek.setdefault(s.seek, []).append(s)
    for chunk in chunks:
        solo, _ = alone.run(chunk)
        got = by_seek.pop(int(chunk.offset * 100))
        assert [(s.tokens, s.text, s.avg_logprob) for s in got] == [(s.tokens, s.text, s.avg_logprob) for s in solo]
        # openai-whisper's transcribe() of the chunk alone, nothing carried, nothing skipped
        plain, _ = engine.transcribe(
            chunk.samples,
            beam_size=5,
            without_timestamps=without_timestamps,
            temperature=0.0,
            no_speech_threshold=None,
            condition_on_previous_text=False,
            compression_ratio_threshold=None,
            logprob_threshold=None,
        )
        assert [s.tokens for s in plain] == [s.tokens for s in solo]
    assert not by_seek


def test_timestamps_keep_every_word_of_a_joined_recording(engine):
    clips = joined_audio.librispeech_clips(runfiles.locate("test_audio", "librispeech"), 150.0)
    gap = np.zeros(int(joined_audio.GAP_SECONDS * joined_audio.SAMPLE_RATE), np.float32)
    audio = np.concatenate([part for samples, _ in clips for part in (samples, gap)])
    reference = normalized_words(" ".join(transcript for _, transcript in clips))
    chunks, deletions = {}, {}
    for without in (True, False):
        segments, _ = engine.transcribe(audio, batch_size=8, without_timestamps=without)
        segments = list(segments)
        chunks[without] = {}
        for s in segments:
            chunks[without].setdefault(s.seek, []).append(s.text)
        deletions[without] = edit_counts(reference, normalized_words("".join(s.text for s in segments)))[1]
    assert chunks[True].keys() == chunks[False].keys() and len(chunks[True]) >= 4
    for seek, texts in chunks[True].items():
        plain, stamped = normalized_words("".join(texts)), normalized_words("".join(chunks[False][seek]))
        subs, dels, ins = edit_counts(plain, stamped)
        print(
            f"chunk at {seek / 100:.2f} s: {len(plain)} words without timestamps; with them {subs} substituted, "
            f"{dels} deleted, {ins} inserted"
        )
        assert dels <= CHUNK_DELETIONS and subs + dels + ins <= TIMESTAMP_WORD_EDITS * len(plain), (
            seek,
            " ".join(plain),
            " ".join(stamped),
        )
    print(f"{len(reference)} reference words: {deletions[True]} deleted without timestamps, {deletions[False]} with")
    assert deletions[False] <= deletions[True] + MORE_DELETIONS, deletions


def test_options():
    with pytest.raises(OptionError, match=r"^batch_size=-1 must be at least 0$"):
        options_from(batch_size=-1)
    with pytest.raises(OptionError, match=r"^batch_size=8 with clip_timestamps='1,5'"):
        options_from(batch_size=8, clip_timestamps="1,5")
    assert options_from(batch_size=0).batch_size is None
    params = options_from(batch_size=4).vad_parameters
    assert (params.max_speech_duration_s, params.min_silence_duration_ms) == (30, 160)
    params = options_from(batch_size=4, vad_parameters={"max_speech_duration_s": 5, "threshold": 0.6}).vad_parameters
    assert (params.max_speech_duration_s, params.threshold, params.min_silence_duration_ms) == (30, 0.6, 2000)


def test_each_chunk_detects_its_language_on_the_window_it_decodes():
    """base, no language given: three French clips then two German ones (about 25 s and 20 s of
    speech by the batched VAD, so a French chunk and a German one). The encoder runs once per
    chunk (detection shares the decoded window), info has the first chunk's language, and the
    German chunk decodes as with language="de" given."""
    names = ("fleurs-fr-001.ogg", "fleurs-fr-000.ogg", "test_fr.wav", "fleurs-de-000.ogg", "fleurs-de-001.ogg")
    clips = [speech_gaps.read_16k(runfiles.locate("test_audio", f"multilingual/{name}")) for name in names]
    audio = speech_gaps.with_gaps(clips, [speech_gaps.Gap(1.0)] * (len(clips) + 1)).samples
    with Engine.from_runfiles("base", threads=2) as e:
        encode, runs = e.encoder.run, []
        e.encoder.run = lambda window: runs.append(1) or encode(window)
        segments, info = e.transcribe(audio, batch_size=2, without_timestamps=True)
        detected = list(segments)
        print([(s.start, s.end, s.text) for s in detected])
        assert len(runs) == 2 and info.language == "fr" and len(detected) == 2, (runs, info.language)
        segments, _ = e.transcribe(audio, batch_size=2, without_timestamps=True, language="de")
        assert list(segments)[1].tokens == detected[1].tokens
