"""What `Engine.transcribe(audio, **options)` returns, in the manner of faster-whisper's
`WhisperModel.transcribe`: an iterator of `Segment`s, decoded as it is consumed, and a
`TranscriptionInfo` known before the first segment (language, its probability, duration).

The options are openai-whisper's `transcribe()` keywords (ckw/runtime/options.py
`TranscribeOptions`, which checks them and names a wrong one).
"""

import dataclasses
from collections.abc import Iterator

from ckw.runtime.options import TranscribeOptions


@dataclasses.dataclass(frozen=True)
class Segment:
    """One segment, as openai-whisper's result["segments"] entries."""

    id: int
    seek: int  # the window's first mel frame (10 ms each)
    start: float  # seconds
    end: float
    text: str
    tokens: list[int]  # text and timestamp tokens
    temperature: float  # of the attempt the window kept
    avg_logprob: float
    compression_ratio: float
    no_speech_prob: float
    words: list[dict] | None = None  # with word_timestamps: word, start, end, probability

    def as_dict(self) -> dict:
        """openai-whisper's segment dictionary (`words` only when word timestamps were asked)."""
        d = dataclasses.asdict(self)
        if d["words"] is None:
            del d["words"]
        return d


@dataclasses.dataclass
class TranscriptionInfo:
    """Known when `transcribe` returns: language (given, or detected on the first 30 s),
    language_probability and all_language_probs (None unless detected), duration (seconds of
    audio), options and model; with vad_filter, duration_after_vad (seconds of speech kept, as
    faster-whisper's; else the duration) and speech_chunks (the VAD's chunks, {"start", "end"} in
    16 kHz samples of the recording; None without the filter). Filled in once the segments are
    exhausted: windows (every decoded window and its attempts; with vad_filter their seeks count
    frames of the speech kept, as segments' seeks do), text and timings_ms."""

    language: str
    language_probability: float | None
    all_language_probs: dict[str, float] | None
    duration: float
    options: TranscribeOptions
    model: dict
    windows: list[dict] = dataclasses.field(default_factory=list)
    text: str | None = None
    timings_ms: dict[str, float] = dataclasses.field(default_factory=dict)
    duration_after_vad: float | None = None  # None when made: the duration
    speech_chunks: list[dict] | None = None

    def __post_init__(self):
        if self.duration_after_vad is None:
            self.duration_after_vad = self.duration


def collect(segments: Iterator[Segment], info: TranscriptionInfo, eot: int) -> dict:
    """Consumes the segments; openai-whisper's result dictionary (text, segments, language) plus
    tokens (every text token: ids below `eot`), windows, model and timings_ms."""
    done = [s.as_dict() for s in segments]
    return {
        "text": info.text,
        "segments": done,
        "tokens": [t for s in done for t in s["tokens"] if t < eot],
        "language": info.language,
        "windows": info.windows,
        "model": info.model,
        "timings_ms": info.timings_ms,
    }
