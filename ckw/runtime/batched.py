"""Batched transcription (`batch_size`): faster-whisper's BatchedInferencePipeline.transcribe
semantics on the multi-stream decoder. A different mode from openai-whisper's sequential
transcribe() (the default, batch_size None), which conditions each window on the previous text
and falls back to higher temperatures.

1. The recording is decoded to 16 kHz samples and Silero VAD finds its speech chunks with the
   batched defaults (options.py `_check_batched`: max_speech_duration_s 30, min_silence 160 ms).
2. Consecutive speech chunks are merged, in order, into chunks of at most 30 s of speech
   (faster-whisper's collect_chunks with max_duration=chunk_length): a speech chunk that would
   take the current chunk past 30 s starts the next one. Each chunk's offset is the seconds of
   speech before it.
3. Every chunk is decoded alone, as openai-whisper's transcribe() of the chunk's samples
   (recording.transcription): its own log-mel zero-padded to 30 s, no previous text, the first
   temperature only, no fallback, no window skipped as silence; its initial_prompt, its own language
   detection when the model is multilingual and no language is given, on the window it decodes
   (one encoder run), as faster-whisper's multilingual=True (which otherwise detects once: see
   docs/vad.md). With timestamps the window is cut at its timestamp pairs; when it ends with a
   pair before the chunk's audio does (the decoder leaves the rest to a next window), a second
   window decodes the chunk from that timestamp on, as transcribe() would, so no speech is left
   out (faster-whisper's pipeline decodes one window and loses those words). Without timestamps
   the window is one segment over the chunk.
4. Up to batch_size chunks run at once, each on a SequenceGroup of the engine's shared paged
   decoder (ckw/runtime/paged_decoder.py), their decode steps in one call, as ckw/runtime/streams.py
   requests: each chunk's tokens equal the chunk transcribed alone.
5. Segment times (chunk offset added, rounded to 1 ms) are mapped back to the recording by the
   VAD's timeline (ckw/runtime/speech_timestamps.py SpeechTimeline), as faster-whisper's
   restore_speech_timestamps; segments come in chunk order.

Differences from faster-whisper: with timestamps, a chunk whose first window ends before its
speech does is decoded on from there (above); an empty chunk (faster-whisper makes one when the first speech
chunk alone exceeds 30 s) is not decoded; beam search is openai-whisper's (ckw/runtime/decoding.py),
not CTranslate2's.
"""

import concurrent.futures
import contextlib
import dataclasses
import threading
import time
from collections.abc import Callable, Iterator

import numpy as np

from ckw.runtime import abi, audio_stream, recording
from ckw.runtime.errors import EngineError
from ckw.runtime.options import BATCH_CHUNK_SECONDS, TranscribeOptions
from ckw.runtime.transcription import Segment, TranscriptionInfo

SAMPLE_RATE = 16000


@dataclasses.dataclass(frozen=True)
class Chunk:
    """One batched chunk: its samples (the speech chunks' concatenated) and where they sit in
    the concatenated speech (offset, duration: seconds; as faster-whisper's chunks_metadata)."""

    samples: np.ndarray
    offset: float
    duration: float
    speech_chunks: tuple  # (start, end) in samples of the recording


def merge_chunks(speech: np.ndarray, chunks, max_seconds: float = BATCH_CHUNK_SECONDS) -> list[Chunk]:
    """faster-whisper's collect_chunks(max_duration=max_seconds) over the concatenated `speech` of
    the (start, end) sample ranges `chunks` (its empty first chunk, when the first range alone
    exceeds the limit, left out)."""
    limit = max_seconds * SAMPLE_RATE
    out, current, size, before = [], [], 0, 0
    for start, end in chunks:
        if size + (end - start) > limit and current:
            out.append(Chunk(speech[before : before + size], before / SAMPLE_RATE, size / SAMPLE_RATE, tuple(current)))
            before += size
            current, size = [], 0
        current.append((start, end))
        size += end - start
    if current:
        out.append(Chunk(speech[before : before + size], before / SAMPLE_RATE, size / SAMPLE_RATE, tuple(current)))
    return out


def chunk_options(opts: TranscribeOptions) -> TranscribeOptions:
    """What each chunk is decoded with: the first temperature, nothing carried, nothing skipped."""
    return dataclasses.replace(
        opts,
        batch_size=None,
        vad_filter=False,
        vad_parameters=None,
        temperature=opts.temperatures[0],
        condition_on_previous_text=False,
        carry_initial_prompt=False,
        no_speech_threshold=None,
        compression_ratio_threshold=None,
        logprob_threshold=None,
        clip_timestamps="0",
    )


class _Runner:
    """Chunks decoded as independent requests on the engine's paged decoder, `workers` at once."""

    def __init__(self, engine, opts: TranscribeOptions, workers: int):
        self.engine, self.opts = engine, chunk_options(opts)
        self.workers = workers
        self.groups: set = set()
        self.lock = threading.Lock()
        self.cancelled = False

    def run(self, chunk: Chunk) -> tuple[list, TranscriptionInfo]:
        e = self.engine
        paged = e.paged
        if self.cancelled:
            raise EngineError("batched transcription: stopped")
        group = paged.open_group()
        with self.lock:
            self.groups.add(group)
        frontend = abi.Handle(e.frontend.handle.lib)

        def encode(window: np.ndarray) -> np.ndarray:
            paged._leave_loop(group)  # the other chunks' steps do not wait for this window
            return paged._call(lambda: e.encoder.run(window), group)

        try:
            segments, info = recording.transcription(
                chunk.samples,
                self.opts,
                frontend,
                encode,
                group,
                e.tokenizer,
                e.config,
                e.model_info(),
                detect_in_first_window=True,
            )
            return list(segments), info
        finally:
            with self.lock:
                self.groups.discard(group)
            group.close()
            frontend.close()

    def cancel(self) -> None:
        self.cancelled = True
        with self.lock:
            for g in self.groups:
                g.cancel()


def transcribe(
    engine,
    audio: audio_stream.Audio,
    opts: TranscribeOptions,
    on_progress: Callable[[float], None] | None = None,
    hold: Callable[[], contextlib.AbstractContextManager] = contextlib.nullcontext,
) -> tuple[Iterator[Segment], TranscriptionInfo]:
    """Engine.transcribe with opts.batch_size (module docstring): (segments, info) as there."""
    t0 = time.perf_counter()
    source = audio_stream.open_source(engine.frontend.handle, audio)
    try:
        speech_source, timeline = recording.speech_only(
            engine.frontend.handle, source, opts.vad_parameters, engine.speech_probabilities
        )
    except abi.AbiError as e:
        raise EngineError(str(e)) from e
    finally:
        source.close()
    chunks = merge_chunks(speech_source.samples, timeline.chunks)
    t_vad = time.perf_counter() - t0
    workers = min(opts.batch_size, engine.paged.max_groups)
    runner = _Runner(engine, opts, workers)
    first = None
    language, probability, probs = opts.language, None, None
    if language is None and not engine.tokenizer.is_multilingual:
        language = "en"
    if language is None:  # the first chunk's (each chunk detects its own); "en" when there is no speech
        if chunks:
            try:
                first = runner.run(chunks[0])
            except abi.AbiError as e:
                raise EngineError(str(e)) from e
            language = first[1].language
            probability, probs = first[1].language_probability, first[1].all_language_probs
        else:
            language = "en"
    info = TranscriptionInfo(
        language=language,
        language_probability=probability,
        all_language_probs=probs,
        duration=timeline.duration,
        options=dataclasses.replace(opts, language=language),
        model=engine.model_info(),
        duration_after_vad=timeline.speech_duration,
        speech_chunks=[{"start": s, "end": e} for s, e in timeline.chunks],
    )

    def segments() -> Iterator[Segment]:
        texts, windows = [], []
        pool = concurrent.futures.ThreadPoolExecutor(max_workers=workers, thread_name_prefix="ckw-batch")
        try:
            with hold():
                futures = [
                    None if (i == 0 and first is not None) else pool.submit(runner.run, c) for i, c in enumerate(chunks)
                ]
                n = 0
                for i, (chunk, future) in enumerate(zip(chunks, futures)):
                    done, chunk_info = first if future is None else future.result()
                    windows.extend({**w, "seek": w["seek"] + round(chunk.offset * 100)} for w in chunk_info.windows)
                    for s in done:
                        start, end, words = _shifted(s, chunk.offset)
                        start, end, words = timeline.segment(start, end, words)
                        texts.append(s.text)
                        yield dataclasses.replace(
                            s, id=n, seek=int(chunk.offset * 100), start=start, end=end, words=words
                        )
                        n += 1
                    if on_progress is not None:
                        on_progress(chunk.duration)
        except abi.AbiError as e:
            raise EngineError(str(e)) from e
        finally:
            runner.cancel()
            pool.shutdown(wait=True, cancel_futures=True)
        info.windows, info.text = windows, "".join(texts)
        info.timings_ms = {"vad": round(1000.0 * t_vad, 2), "total": round(1000.0 * (time.perf_counter() - t0), 2)}

    return segments(), info


def _shifted(s: Segment, offset: float):
    """The segment's start, end (rounded to 1 ms, as faster-whisper's) and words on the concatenated
    speech's timeline: the chunk's offset added."""
    words = (
        None if s.words is None else [{**w, "start": w["start"] + offset, "end": w["end"] + offset} for w in s.words]
    )
    return round(offset + s.start, 3), round(offset + s.end, 3), words
