"""Speech chunks from voice-activity probabilities, with faster-whisper's `vad_filter` semantics.

faster-whisper (1.2.1, faster_whisper/vad.py and transcribe.py) transcribes with `vad_filter=True`
in three steps, which this module reproduces exactly from the same probabilities:

1. `speech_timestamps`: Silero VAD's probability for each 512-sample window (16 kHz; the
   recording padded with 1 to 512 zeros to whole windows: ckw/runtime/vad.py computes them) becomes
   speech chunks [start, end) in samples. A window at or above `threshold` opens a chunk; one
   below `neg_threshold` starts a silence, which closes the chunk once it has lasted
   `min_silence_duration_ms` (the chunk then ends where the silence began; a chunk not longer
   than `min_speech_duration_ms` is dropped). A chunk growing past `max_speech_duration_s` is cut
   at the start of its last silence longer than 98 ms, or else where it stands. Finally each
   chunk is widened by `speech_pad_ms` on both sides, or by half the gap when two chunks are
   closer than twice that.
2. `collect_speech`: the chunks' samples concatenated, in order: the audio that is transcribed.
3. `SpeechTimeline`: a time in the concatenated speech -> the time in the original recording
   (seconds, rounded to 2 decimals as faster-whisper rounds). A time exactly at the end of a
   chunk belongs to that chunk when it is a segment's end, else to the next one; a word's start
   and end both go to the chunk of its middle, and a segment with words takes its first word's
   start and last word's end (`SpeechTimeline.segment`).

Options are `VadOptions` (faster-whisper's fields and defaults), each value checked when made
(`OptionError` naming the field). Nothing here loads numpy until it is used (the CLI's --help).
"""

import bisect
import dataclasses
import math
from collections.abc import Mapping, Sequence
from typing import Optional

from ckw.runtime.errors import OptionError

SAMPLE_RATE = 16000
WINDOW_SAMPLES = 512  # Silero VAD's window at 16 kHz
SPLIT_SILENCE_MS = 98  # a silence longer than this is where an over-long chunk may be cut
DECIMALS = 2  # faster-whisper's restored timestamps are rounded to 10 ms


def _check(name: str, value, low: float, high: float = math.inf, *, above_low: bool = False) -> None:
    """`value` a number (not a bool) in [low, high] ((low, high] with above_low), NaN refused."""
    if isinstance(value, bool) or not isinstance(value, (int, float)):
        raise OptionError(name, f"={value!r} is not a number")
    inside = (value > low if above_low else value >= low) and value <= high
    if not inside:
        if high != math.inf:
            raise OptionError(name, f"={value!r} must be between {low:g} and {high:g}")
        raise OptionError(name, f"={value!r} must be {'more than' if above_low else 'at least'} {low:g}")


@dataclasses.dataclass(frozen=True)
class VadOptions:
    """faster-whisper's VadOptions: its fields, defaults and meanings (module docstring)."""

    threshold: float = 0.5  # a window at or above it is speech
    neg_threshold: Optional[float] = None  # below it, silence; None: max(threshold - 0.15, 0.01)
    min_speech_duration_ms: int = 0  # chunks not longer than this are dropped
    max_speech_duration_s: float = math.inf  # longer chunks are cut
    min_silence_duration_ms: int = 2000  # silence that ends a chunk
    speech_pad_ms: int = 400  # added on both sides of each chunk

    def __post_init__(self):
        _check("threshold", self.threshold, 0.0, 1.0)
        if self.neg_threshold is not None:
            _check("neg_threshold", self.neg_threshold, 0.0, 1.0)
        _check("min_speech_duration_ms", self.min_speech_duration_ms, 0.0)
        _check("max_speech_duration_s", self.max_speech_duration_s, 0.0, above_low=True)
        _check("min_silence_duration_ms", self.min_silence_duration_ms, 0.0)
        _check("speech_pad_ms", self.speech_pad_ms, 0.0)

    @property
    def silence_threshold(self) -> float:
        """neg_threshold, or faster-whisper's default for it."""
        return self.neg_threshold if self.neg_threshold is not None else max(self.threshold - 0.15, 0.01)


VAD_FIELDS = tuple(f.name for f in dataclasses.fields(VadOptions))


def vad_options(value, name: str = "vad_parameters") -> VadOptions:
    """faster-whisper's `vad_parameters` as VadOptions: None (the defaults), a VadOptions, a
    mapping of its fields, or any dataclass with those fields (faster-whisper's own VadOptions).
    OptionError named `name` for an unknown key, a wrong type or a bad value."""
    if value is None:
        return VadOptions()
    if isinstance(value, VadOptions):
        return value
    if dataclasses.is_dataclass(value) and not isinstance(value, type):
        value = {f.name: getattr(value, f.name) for f in dataclasses.fields(value)}
    if not isinstance(value, Mapping):
        raise OptionError(name, f"={value!r} is not a VadOptions or a dict of its fields ({', '.join(VAD_FIELDS)})")
    unknown = [k for k in value if k not in VAD_FIELDS]
    if unknown:
        raise OptionError(name, f": {unknown[0]!r} is not a VAD option; use {', '.join(VAD_FIELDS)}")
    try:
        return VadOptions(**value)
    except OptionError as e:
        raise OptionError(name, f": {e}") from None


def n_windows(n_samples: int) -> int:
    """Windows of a recording of n_samples, padded with 1 to 512 zeros as faster-whisper pads it."""
    return n_samples // WINDOW_SAMPLES + 1


def speech_timestamps(
    probs, n_samples: int, options: VadOptions = VadOptions(), sample_rate: int = SAMPLE_RATE
) -> list[dict]:
    """Speech chunks [{"start": sample, "end": sample}, ...] (ascending, end exclusive) of a
    recording of `n_samples` samples, from its per-window speech probabilities (`n_windows` of
    them, window i covering samples 512 i .. 512 i + 511): faster-whisper's get_speech_timestamps
    given the same probabilities. The comparisons with the thresholds are made in the
    probabilities' own dtype (float32 from either model), as faster-whisper makes them."""
    import numpy as np

    p = np.asarray(probs).reshape(-1)
    if p.size != n_windows(n_samples):
        raise ValueError(
            f"{p.size} probabilities for {n_samples} samples; expected {n_windows(n_samples)} "
            f"(one per {WINDOW_SAMPLES}-sample window, the last one padded)"
        )
    speech = p >= options.threshold  # array against a Python float: the same rounding as per element
    silence = p < options.silence_threshold

    pad = sample_rate * options.speech_pad_ms / 1000
    shortest = sample_rate * options.min_speech_duration_ms / 1000
    longest = sample_rate * options.max_speech_duration_s - WINDOW_SAMPLES - 2 * pad
    closing_silence = sample_rate * options.min_silence_duration_ms / 1000
    cutting_silence = sample_rate * SPLIT_SILENCE_MS / 1000

    found: list[list[int]] = []
    start = None  # the open chunk's first sample; None between chunks
    # Sample positions, 0 meaning "none" (no chunk can need position 0 here):
    quiet_since = 0  # where the open chunk's current silence began
    cut_at = 0  # the start of its last silence longer than 98 ms: where to cut it if it grows too long
    resumed_at = 0  # where speech came back after that silence

    for i in range(p.size):
        at = i * WINDOW_SAMPLES
        if speech[i] and quiet_since:
            quiet_since = 0  # the silence was a pause
            if resumed_at < cut_at:
                resumed_at = at
        if speech[i] and start is None:
            start = at
            continue
        if start is not None and at - start > longest:
            if cut_at:  # cut at the last long-enough silence; speech after it opens the next chunk
                found.append([start, cut_at])
                start = resumed_at if resumed_at >= cut_at else None
                quiet_since = cut_at = resumed_at = 0
            else:  # no such silence: cut here
                found.append([start, at])
                start = None
                quiet_since = cut_at = resumed_at = 0
                continue
        if start is not None and silence[i]:
            if not quiet_since:
                quiet_since = at
            if at - quiet_since > cutting_silence:
                cut_at = quiet_since
            if at - quiet_since >= closing_silence:  # long enough: the chunk ended where it began
                if quiet_since - start > shortest:
                    found.append([start, quiet_since])
                start = None
                quiet_since = cut_at = resumed_at = 0
    if start is not None and n_samples - start > shortest:
        found.append([start, n_samples])

    # Padding: `pad` on both sides, or half of a gap too short for two pads.
    for k, chunk in enumerate(found):
        if k == 0:
            chunk[0] = int(max(0, chunk[0] - pad))
        if k + 1 < len(found):
            after = found[k + 1]
            gap = after[0] - chunk[1]
            if gap < 2 * pad:
                chunk[1] += int(gap // 2)
                after[0] = int(max(0, after[0] - gap // 2))
            else:
                chunk[1] = int(min(n_samples, chunk[1] + pad))
                after[0] = int(max(0, after[0] - pad))
        else:
            chunk[1] = int(min(n_samples, chunk[1] + pad))
    return [{"start": s, "end": e} for s, e in found]


class SpeechTimeline:
    """Where each chunk's samples sit in the concatenated speech, and the way back to the
    original recording's time (faster-whisper's restore_speech_timestamps)."""

    def __init__(self, chunks: Sequence[Mapping[str, int]], n_samples: int, sample_rate: int = SAMPLE_RATE):
        self.chunks = [(int(c["start"]), int(c["end"])) for c in chunks]
        self.n_samples = n_samples  # of the original recording
        self.sample_rate = sample_rate
        self.offsets: list[int] = []  # each chunk's first sample in the speech
        self.speech_ends: list[int] = []  # each chunk's end in the speech (exclusive)
        self.removed_before: list[float] = []  # seconds of the recording removed before each chunk
        removed, previous_end = 0, 0
        for start, end in self.chunks:
            removed += start - previous_end
            previous_end = end
            self.offsets.append(start - removed)
            self.speech_ends.append(end - removed)
            self.removed_before.append(removed / sample_rate)

    @property
    def speech_samples(self) -> int:
        return self.speech_ends[-1] if self.speech_ends else 0

    @property
    def duration(self) -> float:
        """Seconds of the original recording."""
        return self.n_samples / self.sample_rate

    @property
    def speech_duration(self) -> float:
        """Seconds of speech kept (faster-whisper's duration_after_vad)."""
        return self.speech_samples / self.sample_rate

    def chunk_of(self, seconds: float, is_end: bool = False) -> int:
        """The chunk a speech time falls in: the first chunk ending after it (the last chunk for
        later times); a segment's end exactly at a chunk's end stays in that chunk."""
        sample = int(seconds * self.sample_rate)
        if is_end:
            for k, end in enumerate(self.speech_ends):
                if end == sample:
                    return k
        return min(bisect.bisect_right(self.speech_ends, sample), len(self.speech_ends) - 1)

    def original(self, seconds: float, chunk: int | None = None, is_end: bool = False) -> float:
        """A speech time in seconds on the original recording's timeline, rounded to 10 ms."""
        if chunk is None:
            chunk = self.chunk_of(seconds, is_end)
        return round(self.removed_before[chunk] + seconds, DECIMALS)

    def segment(self, start: float, end: float, words: list[dict] | None) -> tuple[float, float, list[dict] | None]:
        """A segment's (start, end, words) on the original timeline. Each word's start and end go to
        the chunk of its middle, and a segment with words spans them; a segment without words maps
        its start, and its end as an end."""
        if not words:
            return self.original(start), self.original(end, is_end=True), words
        mapped = []
        for w in words:
            k = self.chunk_of((w["start"] + w["end"]) / 2)
            mapped.append({**w, "start": self.original(w["start"], k), "end": self.original(w["end"], k)})
        return mapped[0]["start"], mapped[-1]["end"], mapped


def collect_speech(audio, chunks: Sequence[Mapping[str, int]]):
    """(the chunks' samples concatenated as float32, their SpeechTimeline); no chunks: no samples."""
    import numpy as np

    audio = np.asarray(audio, dtype=np.float32).reshape(-1)
    timeline = SpeechTimeline(chunks, audio.size)
    if not timeline.chunks:
        return np.zeros(0, np.float32), timeline
    return np.concatenate([audio[s:e] for s, e in timeline.chunks]), timeline
