"""One recording's transcription over given parts (a frontend handle, an encoder, a decoder), so
that it runs the same code on an engine's own handles (ckw/runtime/engine.py), as one of many requests
(ckw/runtime/streams.py) or as one chunk of a batched transcription (ckw/runtime/batched.py)."""

import contextlib
import dataclasses
import time
from collections.abc import Callable, Iterator
from typing import Dict

import numpy as np

from ckw.runtime import abi, audio_stream, longform, speech_timestamps
from ckw.runtime.errors import EngineError
from ckw.runtime.options import TranscribeOptions
from ckw.runtime.tokenizer import WhisperTokenizer
from ckw.runtime.transcription import Segment, TranscriptionInfo


@contextlib.contextmanager
def _closed_on_error(resource):
    """Closes `resource` when the block raises; a library status becomes EngineError."""
    try:
        yield
    except abi.AbiError as e:
        resource.close()
        raise EngineError(str(e)) from e
    except BaseException:
        resource.close()
        raise


def speech_only(
    frontend: abi.Handle,
    source: audio_stream.Source,
    options: speech_timestamps.VadOptions,
    speech_probabilities: Callable[[np.ndarray], np.ndarray],
) -> tuple[audio_stream.Source, speech_timestamps.SpeechTimeline]:
    """faster-whisper's vad_filter: the whole recording decoded to 16 kHz samples in memory (as
    faster-whisper decodes it), Silero VAD's chunks (ckw/runtime/speech_timestamps.py), and their
    samples concatenated as the source to transcribe, with the timeline back to the recording."""
    samples = list(audio_stream.resample_16k(frontend, source))
    audio = np.concatenate(samples) if samples else np.zeros(0, np.float32)
    chunks = speech_timestamps.speech_timestamps(speech_probabilities(audio), audio.size, options)
    speech, timeline = speech_timestamps.collect_speech(audio, chunks)
    return audio_stream.ArraySource(speech, name=source.name), timeline


def transcription(
    audio: audio_stream.Audio,
    opts: TranscribeOptions,
    frontend: abi.Handle,
    encoder: Callable[[np.ndarray], np.ndarray],
    decoder,
    tokenizer: WhisperTokenizer,
    config: Dict,
    model: Dict,
    on_progress: Callable[[float], None] | None = None,
    hold: Callable[[], contextlib.AbstractContextManager] = contextlib.nullcontext,
    speech_probabilities: Callable[[np.ndarray], np.ndarray] | None = None,
    detect_in_first_window: bool = False,
) -> tuple[Iterator[Segment], TranscriptionInfo]:
    """Engine.transcribe's body over given parts, so one recording runs the same code on an
    engine's own handles or as one of many requests (ckw/runtime/streams.py): a frontend handle,
    `encoder` (a 30 s mel window -> memory), a decoder (decoding.TextDecoder with `align` and
    `calls`), `hold`, entered while the segments are consumed, and `speech_probabilities`
    (16 kHz samples -> Silero VAD's probability per window, ckw/runtime/vad.py) for opts.vad_filter;
    detect_in_first_window: the language detected on the first decoded window's memory
    (longform.detect_language first_window; batched chunks)."""
    t0 = time.perf_counter()
    source = audio_stream.open_source(frontend, audio)
    timeline = None
    with _closed_on_error(source):
        if opts.vad_filter:
            if speech_probabilities is None:
                raise EngineError("vad_filter: no voice activity detector was given to this transcription")
            whole = source
            source, timeline = speech_only(frontend, whole, opts.vad_parameters, speech_probabilities)
            whole.close()
    t_vad = time.perf_counter() - t0
    with _closed_on_error(source):
        mel = audio_stream.MelStream(frontend, source)
    times = {"frontend": time.perf_counter() - t0, "encoder": 0.0}
    if timeline is not None:
        times["vad"] = t_vad  # the decoding to 16 kHz and the VAD, also counted in `frontend`

    def encode(window: np.ndarray) -> np.ndarray:
        t = time.perf_counter()
        memory = encoder(window)
        times["encoder"] += time.perf_counter() - t
        return memory

    decoder.calls = {"prefill": 0.0, "decode": 0.0}
    windows = longform.EncodedWindows(mel, encode)
    probability = probs = None
    with _closed_on_error(mel):
        language = opts.language
        if language is None and tokenizer.is_multilingual:
            language, probs = longform.detect_language(windows, decoder, tokenizer, first_window=detect_in_first_window)
            probability = probs[language]
        language = language or "en"
    opts = dataclasses.replace(opts, language=language)
    info = TranscriptionInfo(
        language=language,
        language_probability=probability,
        all_language_probs=probs,
        duration=mel.duration,
        options=opts,
        model=model,
    )
    if timeline is not None:  # the recording's duration; the speech's after the filter
        info.duration, info.duration_after_vad = timeline.duration, mel.duration
        info.speech_chunks = [{"start": s, "end": e} for s, e in timeline.chunks]
    seconds_per_frame = longform.HOP_LENGTH / longform.SAMPLE_RATE

    def segments() -> Iterator[Segment]:
        # Held while the segments are consumed (released when they end or are dropped).
        try:
            with hold():
                run = longform.iter_segments(
                    windows,
                    decoder,
                    tokenizer,
                    opts,
                    n_audio_ctx=config.get("n_audio_ctx", 1500),
                    on_progress=(lambda frames: on_progress(frames * seconds_per_frame)) if on_progress else None,
                    alignment_heads=config.get("alignment_heads") or (),
                )
                while True:
                    try:
                        segment = next(run)
                    except StopIteration as done:
                        result = done.value
                        break
                    if timeline is not None and timeline.chunks:  # back on the recording's timeline
                        start, end, words = timeline.segment(segment["start"], segment["end"], segment.get("words"))
                        segment = {**segment, "start": start, "end": end}
                        if words is not None:
                            segment["words"] = words
                    yield Segment(**segment)
        except abi.AbiError as e:
            raise EngineError(str(e)) from e
        finally:
            mel.close()
        info.windows, info.text = result["windows"], result["text"]
        seconds = {**times, **decoder.calls, "total": time.perf_counter() - t0}
        info.timings_ms = {k: round(1000.0 * v, 2) for k, v in seconds.items()}

    return segments(), info
