"""Transcription options, checked in one place for every caller (the CLI, the corpus worker, the
Python API, the server): openai-whisper's `transcribe()` keywords as `TranscribeOptions`.

A wrong value is an `OptionError` whose one-line message starts with the option's name
(`beam_size=9 is more than ...`); the CLI prints it as the flag (`--beam_size=9 ...`). Checks
that need the model (language and task against the checkpoint, group sizes against the decoder's
`max_beams`) are `TranscribeOptions.check_model`, which the engine runs before any audio.
"""

import dataclasses
from collections.abc import Mapping, Sequence
from typing import Optional, Union

from ckw.runtime.errors import OptionError  # noqa: F401 (callers import it from here)
from ckw.runtime.speech_timestamps import VadOptions, vad_options

DEFAULT_TEMPERATURES = (0.0, 0.2, 0.4, 0.6, 0.8, 1.0)
FRAMES_PER_SECOND = 100  # log-mel frames (10 ms each)
TASKS = ("transcribe", "translate")
BATCH_CHUNK_SECONDS = 30  # batch_size: faster-whisper's chunk_length, the longest chunk


def _number(
    name: str,
    value,
    low: float | None = None,
    high: float | None = None,
    *,
    integer: bool = False,
    allow_none: bool = True,
):
    """`value` checked to be a number (an int with `integer`) in [low, high]; None when allowed."""
    if value is None:
        if allow_none:
            return None
        raise OptionError(name, " must be given")
    kind = (int,) if integer else (int, float)
    if isinstance(value, bool) or not isinstance(value, kind):
        raise OptionError(name, f"={value!r} is not {'a whole number' if integer else 'a number'}")
    if low is not None and high is not None and not low <= value <= high:
        raise OptionError(name, f"={value} must be between {low:g} and {high:g}")
    if low is not None and value < low:
        raise OptionError(name, f"={value} must be at least {low:g}")
    return value


def check_search(temperature: float, best_of, beam_size, patience, length_penalty) -> None:
    """The sequence-search options every decode shares (one window's or a whole recording's)."""
    _number("temperature", temperature, 0.0, 1.0, allow_none=False)
    _number("best_of", best_of, 1, integer=True)
    _number("beam_size", beam_size, 1, integer=True)
    if _number("patience", patience) is not None:
        if patience <= 0:
            raise OptionError("patience", f"={patience} must be positive")
        if beam_size is None:
            raise OptionError("patience", " needs beam_size (it applies to beam search only)")
    _number("length_penalty", length_penalty, 0.0, 1.0)


def parse_clip_timestamps(clip_timestamps: Union[str, Sequence[float]], content_frames: int) -> list[tuple[int, int]]:
    """(start, end) frame pairs of openai-whisper's clip_timestamps; the last end defaults to the
    end of the audio."""
    if isinstance(clip_timestamps, str):
        try:
            clip_timestamps = [float(t) for t in clip_timestamps.split(",")] if clip_timestamps else []
        except ValueError:
            raise OptionError(
                "clip_timestamps",
                f"={clip_timestamps!r} is not a comma-separated list of seconds (start,end,start,end,...)",
            ) from None
    if any(t < 0 for t in clip_timestamps):
        raise OptionError("clip_timestamps", f"={list(clip_timestamps)} has a negative time; give seconds from 0")
    points = [round(t * FRAMES_PER_SECOND) for t in clip_timestamps]
    if not points:
        points.append(0)
    if len(points) % 2 == 1:
        points.append(content_frames)
    return list(zip(points[::2], points[1::2]))


def parse_token_ids(name: str, spec) -> list[int]:
    """Token ids from "1,2,3" or a sequence of ints."""
    if isinstance(spec, str):
        try:
            return [int(t) for t in spec.split(",")] if spec.strip() else []
        except ValueError:
            raise OptionError(name, f"={spec!r} is not a comma-separated list of token ids") from None
    return [int(t) for t in spec or []]


TokenSpec = Optional[Union[str, Sequence[int]]]


# openai-whisper's transcribe() defaults: marks merged into the next / the previous word.
PREPEND_PUNCTUATIONS = "\"'“¿([{-"
APPEND_PUNCTUATIONS = "\"'.。,，!！?？:：”)]}、"
# An engine's builds: fp32, the converted checkpoint (the parity build); bf16 and int8, weights
# derived from it by models/whisper/precision_<precision>.json (libraries ckw_<variant>_<precision>_<part>).
PRECISIONS = ("fp32", "bf16", "int8")


@dataclasses.dataclass(frozen=True)
class TranscribeOptions:
    """openai-whisper's transcribe() keywords; every value is checked when the options are made."""

    language: Optional[str] = None  # None: detect (multilingual) or "en" (English-only)
    task: str = "transcribe"
    temperature: Union[float, Sequence[float]] = DEFAULT_TEMPERATURES  # one, or the fallback schedule
    compression_ratio_threshold: Optional[float] = 2.4
    logprob_threshold: Optional[float] = -1.0
    no_speech_threshold: Optional[float] = 0.6
    condition_on_previous_text: bool = True
    initial_prompt: Optional[str] = None
    carry_initial_prompt: bool = False
    clip_timestamps: Union[str, Sequence[float]] = "0"
    without_timestamps: bool = False
    max_initial_timestamp: Optional[float] = 1.0
    suppress_tokens: TokenSpec = "-1"
    suppress_blank: bool = True
    sample_len: Optional[int] = None
    best_of: Optional[int] = None  # samples per window at temperature > 0
    beam_size: Optional[int] = None  # beam search for attempts at temperature 0
    patience: Optional[float] = None
    length_penalty: Optional[float] = None
    seed: int = 0  # for sampling at temperature > 0
    word_timestamps: bool = False  # words with start, end, probability per segment (ckw/runtime/word_timing.py)
    prepend_punctuations: str = PREPEND_PUNCTUATIONS
    append_punctuations: str = APPEND_PUNCTUATIONS
    # faster-whisper's VAD filter: only the speech Silero VAD finds is transcribed, the times mapped
    # back to the recording (ckw/runtime/speech_timestamps.py); vad_parameters: a VadOptions or a dict
    # of its fields, made VadOptions here (the defaults when vad_filter is on and it is None).
    vad_filter: bool = False
    vad_parameters: Optional[Union[VadOptions, Mapping]] = None
    # faster-whisper's BatchedInferencePipeline (ckw/runtime/batched.py; a different mode from the
    # sequential transcribe() above): the speech in VAD chunks of at most 30 s, each decoded alone
    # at the first temperature, up to batch_size at once. None or 0: the sequential transcribe().
    batch_size: Optional[int] = None

    def __post_init__(self):
        if self.task not in TASKS:
            raise OptionError("task", f"={self.task!r} is not one of {', '.join(TASKS)}")
        if self.language is not None and (not isinstance(self.language, str) or not self.language.strip()):
            raise OptionError(
                "language", f"={self.language!r} is not a language code; give one (en, de, ...) or None to detect it"
            )
        if not self.temperatures:
            raise OptionError("temperature", "=() is an empty schedule; give at least one temperature (0 = greedy)")
        for t in self.temperatures:
            check_search(t, self.best_of, self.beam_size, self.patience, self.length_penalty)
        for name in (
            "compression_ratio_threshold",
            "logprob_threshold",
            "no_speech_threshold",
            "max_initial_timestamp",
        ):
            _number(name, getattr(self, name))
        _number("sample_len", self.sample_len, 1, integer=True)
        _number("seed", self.seed, integer=True, allow_none=False)
        parse_clip_timestamps(self.clip_timestamps, 0)
        parse_token_ids("suppress_tokens", self.suppress_tokens)
        if _number("batch_size", self.batch_size, 0, integer=True) == 0:
            object.__setattr__(self, "batch_size", None)
        if self.batch_size is not None:
            self._check_batched()
        else:
            self._check_vad()

    def _check_batched(self) -> None:
        """batch_size: always VAD chunks (vad_filter may be True or left out), with faster-whisper's
        batched defaults: vad_parameters None -> max_speech_duration_s 30 (the chunk length) and
        min_silence_duration_ms 160; a dict -> its values with max_speech_duration_s 30; a
        VadOptions -> as given."""
        if not isinstance(self.vad_filter, bool):
            raise OptionError("vad_filter", f"={self.vad_filter!r} is not True or False")
        if parse_clip_timestamps(self.clip_timestamps, 1) != [(0, 1)]:
            raise OptionError(
                "batch_size",
                f"={self.batch_size} with clip_timestamps={self.clip_timestamps!r}: "
                "batched transcription decodes the VAD's speech chunks; use one or the other",
            )
        params = self.vad_parameters
        if params is None:
            params = VadOptions(max_speech_duration_s=BATCH_CHUNK_SECONDS, min_silence_duration_ms=160)
        elif isinstance(params, Mapping):
            params = vad_options({**params, "max_speech_duration_s": BATCH_CHUNK_SECONDS})
        object.__setattr__(self, "vad_parameters", vad_options(params))

    def _check_vad(self) -> None:
        if not isinstance(self.vad_filter, bool):
            raise OptionError("vad_filter", f"={self.vad_filter!r} is not True or False")
        if not self.vad_filter:
            if self.vad_parameters is not None:
                raise OptionError(
                    "vad_parameters",
                    " is given without vad_filter=True; turn the filter on, or leave vad_parameters out",
                )
            return
        object.__setattr__(self, "vad_parameters", vad_options(self.vad_parameters))
        if parse_clip_timestamps(self.clip_timestamps, 1) != [(0, 1)]:
            raise OptionError(
                "vad_filter",
                f"=True with clip_timestamps={self.clip_timestamps!r}: the VAD filter "
                "chooses the parts of the whole recording (faster-whisper ignores it when "
                "clip_timestamps is given); use one or the other",
            )

    @property
    def temperatures(self) -> tuple[float, ...]:
        t = self.temperature
        return (t,) if isinstance(t, (int, float)) else tuple(t)

    def check_model(self, tokenizer, max_beams: int) -> None:
        """The checks that need the model: ValueError for a language or task the checkpoint cannot
        honour (e.g. German on tiny.en), OptionError for more sequences than the decoder runs."""
        if self.language is not None:
            tokenizer.sot_sequence(self.language, self.task)
        elif self.task != "transcribe" and not tokenizer.is_multilingual:
            tokenizer.sot_sequence("en", self.task)
        if self.beam_size is not None:
            group_size(self.beam_size, max_beams, "beam_size")
        if self.best_of is not None:
            group_size(self.best_of, max_beams, "best_of")


def group_size(n: int, limit: int, what: str) -> int:
    """n sequences decoded side by side, checked against the decoder's `limit` (max_beams)."""
    _number(what, n, 1, integer=True, allow_none=False)
    if n > limit:
        raise OptionError(
            what,
            f"={n} is more than the {limit} sequences this decoder runs side by side "
            "(max_beams, fixed when the library was built); lower it",
        )
    return n


def temperature_schedule(start: float, increment: Optional[float]) -> tuple[float, ...]:
    """openai-whisper's CLI: start, start + increment, ... up to 1.0 (just `start` without increment)."""
    if increment is None or increment <= 0:
        return (float(start),)
    import numpy as np  # here, not at import: the CLI's --help loads no numpy

    return tuple(float(t) for t in np.arange(start, 1.0 + 1e-6, increment)) or (float(start),)


OPTION_NAMES = tuple(f.name for f in dataclasses.fields(TranscribeOptions))


def options_from(**kwargs) -> TranscribeOptions:
    """TranscribeOptions from keywords; OptionError naming an unknown one."""
    unknown = sorted(set(kwargs) - set(OPTION_NAMES))
    if unknown:
        raise OptionError(unknown[0], f" is not a transcribe option; known: {', '.join(OPTION_NAMES)}")
    return TranscribeOptions(**kwargs)
