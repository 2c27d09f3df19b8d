"""faster-whisper's API over the ckw engine: `from ckw import WhisperModel`.

    model = WhisperModel("small", device="cpu", compute_type="float32", cpu_threads=4)
    segments, info = model.transcribe("talk.wav", beam_size=5, word_timestamps=True)
    for s in segments:                                   # decoded as they are consumed
        print(f"[{s.start:.2f} -> {s.end:.2f}] {s.text}", s.words[0].word)

The constructor and `transcribe` take faster-whisper 1.2.1's keywords and defaults and return its
`Segment`, `Word`, `TranscriptionInfo` and `TranscriptionOptions` (the same fields, in the same
order). Underneath is ckw/runtime/engine.py's `Engine` (`model.engine`) with openai-whisper's
`transcribe()` semantics: each faster-whisper keyword maps onto the openai-whisper option of the
same meaning, and a value that has none (a repetition penalty, hotwords, CUDA, ...) is a one-line
ValueError that starts with the keyword's name, never silently ignored. vad_filter and
vad_parameters are faster-whisper's (ckw/runtime/speech_timestamps.py: the same speech chunks from the
same probabilities, on ckw's compiled Silero VAD). The table is docs/python-api.md's
"faster-whisper's API".
"""

import dataclasses
import os
import warnings
from collections.abc import Iterable, Iterator
from types import SimpleNamespace
from typing import List, Optional, Tuple, Union

import numpy as np

from ckw import model_spec
from ckw.checkpoints import store
from ckw.runtime import decoding, libraries
from ckw.runtime.engine import EngineError
from ckw.runtime.options import OptionError
from ckw.runtime.speech_timestamps import VadOptions, vad_options

# faster-whisper's defaults (faster_whisper/transcribe.py, 1.2.1).
DEFAULT_TEMPERATURES = [0.0, 0.2, 0.4, 0.6, 0.8, 1.0]
PREPEND_PUNCTUATIONS = "\"'“¿([{-"
APPEND_PUNCTUATIONS = "\"'.。,，!！?？:：”)]}、"

DEVICES = ("cpu", "auto")
DETECTION_SAMPLES = 30 * 16000  # the one window whose language is detected
# compute_type -> the engine's precision. "default" keeps the checkpoint's (float32 compute: the
# f16-stored published weights are widened exactly); "auto" is ckw's choice, float32. int8 and
# int8_float32 (CTranslate2: int8 weights, float32 elsewhere) are ckw's int8 build, which keeps
# everything between its GEMMs in float32 too.
COMPUTE_TYPES = {
    "default": "fp32",
    "auto": "fp32",
    "float32": "fp32",
    "bfloat16": "bf16",
    "int8": "int8",
    "int8_float32": "int8",
}
# openai-whisper's option -> faster-whisper's keyword of the same meaning, where the names differ.
RENAMED = {"logprob_threshold": "log_prob_threshold"}
# BatchedInferencePipeline's VAD when vad_parameters is None (faster-whisper: chunk_length 30 s).
BATCHED_VAD = VadOptions(max_speech_duration_s=30, min_silence_duration_ms=160)
# ctranslate2.models.Whisper's keywords that faster-whisper passes through, at their defaults.
CT2_DEFAULTS = {"max_queued_batches": 0, "flash_attention": False, "tensor_parallel": False}


def _deprecated_asdict(record) -> dict:
    """faster-whisper's `_asdict`, deprecated there in favour of dataclasses.asdict, warning alike."""
    name = type(record).__name__
    warnings.warn(
        f"{name}._asdict() method is deprecated, use dataclasses.asdict({name}) instead", DeprecationWarning, 3
    )
    return dataclasses.asdict(record)


@dataclasses.dataclass
class Word:
    start: float
    end: float
    word: str
    probability: float

    def _asdict(self):
        return _deprecated_asdict(self)


@dataclasses.dataclass
class Segment:
    id: int  # from 1, as faster-whisper counts
    seek: int  # the window's first mel frame (10 ms each)
    start: float
    end: float
    text: str
    tokens: List[int]  # text and timestamp tokens
    avg_logprob: float
    compression_ratio: float
    no_speech_prob: float
    words: Optional[List[Word]]  # with word_timestamps=True
    temperature: Optional[float]

    def _asdict(self):
        return _deprecated_asdict(self)


@dataclasses.dataclass
class TranscriptionOptions:
    """The options of one transcribe() call, as faster-whisper reports them."""

    beam_size: int
    best_of: int
    patience: float
    length_penalty: float
    repetition_penalty: float
    no_repeat_ngram_size: int
    log_prob_threshold: Optional[float]
    no_speech_threshold: Optional[float]
    compression_ratio_threshold: Optional[float]
    condition_on_previous_text: bool
    prompt_reset_on_temperature: float
    temperatures: List[float]
    initial_prompt: Optional[Union[str, Iterable[int]]]
    prefix: Optional[str]
    suppress_blank: bool
    suppress_tokens: Optional[List[int]]  # expanded: -1 becomes the non-speech and control tokens
    without_timestamps: bool
    max_initial_timestamp: float
    word_timestamps: bool
    prepend_punctuations: str
    append_punctuations: str
    multilingual: bool
    max_new_tokens: Optional[int]
    clip_timestamps: Union[str, List[float]]
    hallucination_silence_threshold: Optional[float]
    hotwords: Optional[str]


@dataclasses.dataclass
class TranscriptionInfo:
    language: str
    language_probability: float  # 1 when the language was given or the model is English-only
    duration: float  # seconds of audio
    duration_after_vad: float  # seconds of speech the VAD filter kept (= duration without it)
    all_language_probs: Optional[List[Tuple[str, float]]]  # most probable first; None unless detected
    transcription_options: TranscriptionOptions
    vad_options: VadOptions  # with the filter: the VadOptions used; else vad_parameters as given


def _refused(name: str, value, why: str) -> OptionError:
    return OptionError(name, f"={value!r}: {why}")


# transcribe() keywords whose only honourable value is faster-whisper's default (or one with the
# same effect): name -> (is the value honoured, what ckw supports).
_ONLY_DEFAULT = {
    "repetition_penalty": (lambda v: v == 1, "ckw decodes as openai-whisper does, without a repetition penalty; use 1"),
    "no_repeat_ngram_size": (lambda v: v == 0, "ckw decodes as openai-whisper does, without n-gram blocking; use 0"),
    "prompt_reset_on_temperature": (
        lambda v: v == 0.5,
        "ckw resets the prompt after a fallback above temperature 0.5, as openai-whisper does; use 0.5",
    ),
    "prefix": (lambda v: v is None, "ckw has no decoding prefix; use None (initial_prompt conditions the text)"),
    "hotwords": (lambda v: v is None, "ckw has no hotwords; use None (initial_prompt conditions the text)"),
    "multilingual": (
        lambda v: v is False,
        "ckw detects the language once, on the first 30 s (openai-whisper's transcribe), not per window; use False",
    ),
    "max_new_tokens": (lambda v: v is None, "ckw samples up to openai-whisper's 224 tokens per window; use None"),
    "chunk_length": (lambda v: v in (None, 30), "ckw's libraries take 30 s windows; use None"),
    "hallucination_silence_threshold": (
        lambda v: v is None,
        "ckw does not skip silences around suspected hallucinations; use None",
    ),
    "language_detection_segments": (lambda v: v == 1, "ckw detects the language on the first 30 s only; use 1"),
}


def _search_options(beam_size, patience, length_penalty) -> dict:
    """faster-whisper's beam_size, patience and length_penalty as openai-whisper's options."""
    out = {}
    greedy = beam_size == 1 and not isinstance(beam_size, bool)  # CTranslate2's beam_size=1 is greedy search
    out["beam_size"] = None if greedy else beam_size
    if patience != 1:  # openai-whisper's default patience is 1 too
        if greedy:
            raise _refused("patience", patience, "patience applies to beam search only (beam_size > 1); use 1")
        out["patience"] = patience
    # CTranslate2 ranks beams by score / length**length_penalty, openai-whisper by score / length
    # (length_penalty=None) or score / ((5 + length) / 6)**length_penalty: they agree at 1 (the
    # average) and 0 (the sum) only.
    if isinstance(length_penalty, (int, float)) and not isinstance(length_penalty, bool) and length_penalty in (0, 1):
        out["length_penalty"] = None if length_penalty == 1 else 0.0
    else:
        raise _refused(
            "length_penalty",
            length_penalty,
            "faster-whisper divides a beam's score by length**penalty, "
            "openai-whisper (ckw) by ((5 + length) / 6)**penalty; they agree at 1 (the default: the "
            "average log-probability) and 0 (the sum) only",
        )
    return out


def _vad(vad_filter, vad_parameters, clip_timestamps) -> dict:
    """faster-whisper's vad_filter and vad_parameters as the engine's options: the filter runs when
    vad_filter is true and clip_timestamps is "0" (faster-whisper ignores it, and the parameters,
    otherwise); vad_parameters a dict of VadOptions' fields, a VadOptions (ckw's or
    faster-whisper's) or None."""
    if not (vad_filter and isinstance(clip_timestamps, str) and clip_timestamps == "0"):
        return {"vad_filter": False, "vad_parameters": None}
    return {"vad_filter": True, "vad_parameters": vad_options(vad_parameters)}


def _reported_vad(given, used):
    """info.vad_options as faster-whisper reports it: the VadOptions used (the very object when one
    was given), or vad_parameters as given when the filter did not run."""
    if used is None or (dataclasses.is_dataclass(given) and not isinstance(given, type)):
        return given
    return used


def _audio(audio):
    """faster-whisper's audio argument as Engine.transcribe's: a file-like object is read whole."""
    if hasattr(audio, "read") and not isinstance(audio, (str, bytes, os.PathLike, np.ndarray)):
        return audio.read()
    return audio


class WhisperModel:
    """faster-whisper's `WhisperModel` on a ckw `Engine` (`self.engine`), which it opens once and
    keeps for every transcribe() call; close() (or a `with` block) frees it."""

    def __init__(
        self,
        model_size_or_path: str,
        device: str = "auto",
        device_index: Union[int, List[int]] = 0,
        compute_type: str = "default",
        cpu_threads: int = 0,
        num_workers: int = 1,
        download_root: Optional[str] = None,
        local_files_only: bool = False,
        files: dict = None,
        revision: Optional[str] = None,
        use_auth_token: Optional[Union[str, bool]] = None,
        **model_kwargs,
    ):
        for name, value in model_kwargs.items():
            if name not in CT2_DEFAULTS:
                raise TypeError(f"WhisperModel.__init__() got an unexpected keyword argument '{name}'")
            if value != CT2_DEFAULTS[name]:
                raise ValueError(
                    f"{name}={value!r}: a CTranslate2 setting ckw has no counterpart for; use {CT2_DEFAULTS[name]!r}"
                )
        if isinstance(device, str) and device.split(":")[0] == "cuda":
            raise ValueError(f"device={device!r}: ckw is a CPU engine; use device='cpu'")
        if device not in DEVICES:
            raise ValueError(f"device={device!r}: ckw is a CPU engine; use device='cpu' (or 'auto')")
        if device_index != 0:
            raise ValueError(f"device_index={device_index!r}: ckw runs on the CPU; use 0")
        if not isinstance(compute_type, str) or compute_type not in COMPUTE_TYPES:
            raise ValueError(
                f"compute_type={compute_type!r}: not a type ckw computes in; use one of "
                f"{', '.join(COMPUTE_TYPES)} (bfloat16, int8: tiny.en, base and their fine-tunes)"
            )
        if isinstance(cpu_threads, bool) or not isinstance(cpu_threads, int) or cpu_threads < 0:
            raise ValueError(
                f"cpu_threads={cpu_threads!r}: give 0 (CKW_NUM_THREADS, else every CPU) or a positive count"
            )
        if num_workers != 1:
            raise ValueError(
                f"num_workers={num_workers!r}: a WhisperModel runs one transcription at a time; use 1 "
                "and one WhisperModel per thread (they share the memory-mapped weights)"
            )
        if files is not None:
            raise ValueError(
                "files: ckw loads a model from a directory, not from memory; save the files into one and pass its path"
            )
        if revision is not None:
            raise ValueError(
                f"revision={revision!r}: ckw takes a Hub model at its latest revision; download that "
                "revision and pass its directory"
            )
        if use_auth_token not in (None, True):
            raise ValueError(
                "use_auth_token: ckw sends the Hugging Face token of HF_TOKEN or `huggingface-cli "
                "login`, as use_auth_token=True does; use None or True"
            )
        threads = cpu_threads or None
        path = os.path.expanduser(os.fspath(model_size_or_path))
        local = os.path.isdir(path) or os.path.isfile(path)  # a checkpoint directory, or an openai-whisper .pt
        precision = COMPUTE_TYPES[compute_type]
        if precision != "fp32" and not local and store.ALIASES.get(path, path) not in libraries.models_at(precision):
            raise ValueError(
                f"compute_type={compute_type!r}: this build has {precision} libraries for "
                f"{', '.join(libraries.models_at(precision))} (and their fine-tunes), not for "
                f"{model_size_or_path!r}; use compute_type='float32'"
            )
        try:
            spec = model_spec.engine_spec(
                None if local else path,
                path if local else None,
                precision,
                local_files_only=local_files_only,
                cache_root=download_root,
            )
        except EngineError as e:
            raise ValueError(f"compute_type={compute_type!r}: {e}") from None
        self.engine = model_spec.open_engine(spec, threads=threads)
        self.model_size_or_path = model_size_or_path
        self.device = "cpu"
        self.compute_type = {"fp32": "float32", "bf16": "bfloat16", "int8": "int8"}[precision]

    @property
    def supported_languages(self) -> List[str]:
        """The languages the model transcribes: its language codes in token order (["en"] for an
        English-only model)."""
        tok = self.engine.tokenizer
        return sorted(tok.language_ids, key=tok.language_ids.get) if tok.is_multilingual else ["en"]

    def close(self) -> None:
        self.engine.close()

    def __enter__(self) -> "WhisperModel":
        return self

    def __exit__(self, *exc) -> None:
        self.close()

    def detect_language(
        self,
        audio: Optional[np.ndarray] = None,
        features: Optional[np.ndarray] = None,
        vad_filter: bool = False,
        vad_parameters=None,
        language_detection_segments: int = 1,
        language_detection_threshold: float = 0.5,
    ) -> Tuple[str, float, List[Tuple[str, float]]]:
        """faster-whisper's detect_language(): (language, its probability, every language with its
        probability, most probable first), from the first 30 s of `audio` (anything transcribe()
        takes), or with vad_filter from the first 30 s of its speech, as faster-whisper's. The
        threshold is accepted at any value: with one window the top language is kept."""
        name = "language_detection_segments"
        if not _ONLY_DEFAULT[name][0](language_detection_segments):
            raise _refused(name, language_detection_segments, _ONLY_DEFAULT[name][1])
        if features is not None:
            raise ValueError("features: ckw computes the log-Mel features itself; pass the audio instead")
        if audio is None:
            raise ValueError("audio: give the audio whose language to detect")
        if not self.engine.tokenizer.is_multilingual:
            raise ValueError(
                f"detect_language: {self.model_size_or_path!r} is an English-only model; use a "
                "multilingual one (tiny, base, small, ...)"
            )
        vad = _vad(vad_filter, vad_parameters, "0")
        if isinstance(audio, np.ndarray) and not vad["vad_filter"]:  # only the window that is looked at is read
            audio = audio[:DETECTION_SAMPLES]
        segments, info = self.engine.transcribe(_audio(audio), language=None, **vad)
        segments.close()  # detected at once; nothing is decoded
        probs = sorted(info.all_language_probs.items(), key=lambda kv: -kv[1])
        return info.language, info.language_probability, probs

    def transcribe(
        self,
        audio,
        language: Optional[str] = None,
        task: str = "transcribe",
        log_progress: bool = False,
        beam_size: int = 5,
        best_of: int = 5,
        patience: float = 1,
        length_penalty: float = 1,
        repetition_penalty: float = 1,
        no_repeat_ngram_size: int = 0,
        temperature: Union[float, List[float], Tuple[float, ...]] = DEFAULT_TEMPERATURES,
        compression_ratio_threshold: Optional[float] = 2.4,
        log_prob_threshold: Optional[float] = -1.0,
        no_speech_threshold: Optional[float] = 0.6,
        condition_on_previous_text: bool = True,
        prompt_reset_on_temperature: float = 0.5,
        initial_prompt: Optional[Union[str, Iterable[int]]] = None,
        prefix: Optional[str] = None,
        suppress_blank: bool = True,
        suppress_tokens: Optional[List[int]] = [-1],  # noqa: B006 (faster-whisper's default, never mutated)
        without_timestamps: bool = False,
        max_initial_timestamp: float = 1.0,
        word_timestamps: bool = False,
        prepend_punctuations: str = PREPEND_PUNCTUATIONS,
        append_punctuations: str = APPEND_PUNCTUATIONS,
        multilingual: bool = False,
        vad_filter: bool = False,
        vad_parameters=None,
        max_new_tokens: Optional[int] = None,
        chunk_length: Optional[int] = None,
        clip_timestamps: Union[str, List[float]] = "0",
        hallucination_silence_threshold: Optional[float] = None,
        hotwords: Optional[str] = None,
        language_detection_threshold: Optional[float] = 0.5,
        language_detection_segments: int = 1,
    ) -> Tuple[Iterator[Segment], TranscriptionInfo]:
        """faster-whisper's transcribe(): audio is a path, a file-like object or its bytes (any
        format FFmpeg reads), or mono float32 samples at 16 kHz. Returns (segments, info):
        segments decode as they are consumed. language_detection_threshold is accepted at any
        value: with one detection window (language_detection_segments=1) faster-whisper keeps the
        first window's language whatever the threshold, as ckw does."""
        return self._transcribe(dict(locals()), None)

    def _transcribe(self, given: dict, batch_size: Optional[int]) -> Tuple[Iterator[Segment], TranscriptionInfo]:
        """transcribe()'s body over its keywords `given`; batch_size: BatchedInferencePipeline's."""
        o = SimpleNamespace(**given)  # the keywords, some of them rebound below
        for name, (honoured, why) in _ONLY_DEFAULT.items():
            if batch_size is not None and name == "multilingual":
                continue  # batched: detected per chunk with multilingual=True, as faster-whisper's
            if not honoured(given[name]):
                raise _refused(name, given[name], why)
        if batch_size is not None:
            if not o.vad_filter:
                raise _refused(
                    "vad_filter",
                    o.vad_filter,
                    "ckw's BatchedInferencePipeline decodes the VAD's speech chunks; use True",
                )
            if o.clip_timestamps is not None:
                raise _refused(
                    "clip_timestamps",
                    o.clip_timestamps,
                    "ckw's BatchedInferencePipeline decodes the VAD's speech chunks; use None",
                )
            o.clip_timestamps = "0"
            o.audio = _audio(o.audio)
            if o.language is None and not o.multilingual and self.engine.tokenizer.is_multilingual:
                # faster-whisper: detected once, on the first 30 s of the speech, for every chunk
                o.language = self.detect_language(o.audio, vad_filter=True, vad_parameters=BATCHED_VAD)[0]
        if o.initial_prompt is not None and not isinstance(o.initial_prompt, str):
            raise _refused("initial_prompt", o.initial_prompt, "ckw takes the prompt as text; give a string")
        # None and [] ask for no suppression: as openai-whisper's "", which still suppresses the
        # task and control tokens.
        suppress = o.suppress_tokens if isinstance(o.suppress_tokens, str) else list(o.suppress_tokens or [])
        options = dict(
            language=o.language,
            task=o.task,
            temperature=tuple(o.temperature) if isinstance(o.temperature, (list, tuple)) else o.temperature,
            best_of=o.best_of,
            compression_ratio_threshold=o.compression_ratio_threshold,
            logprob_threshold=o.log_prob_threshold,
            no_speech_threshold=o.no_speech_threshold,
            condition_on_previous_text=o.condition_on_previous_text,
            initial_prompt=o.initial_prompt,
            suppress_blank=o.suppress_blank,
            suppress_tokens=suppress,
            without_timestamps=o.without_timestamps,
            max_initial_timestamp=o.max_initial_timestamp,
            word_timestamps=o.word_timestamps,
            prepend_punctuations=o.prepend_punctuations,
            append_punctuations=o.append_punctuations,
            clip_timestamps=o.clip_timestamps,
            **(
                _vad(o.vad_filter, o.vad_parameters, o.clip_timestamps)
                if batch_size is None
                else {"vad_filter": True, "vad_parameters": o.vad_parameters, "batch_size": batch_size}
            ),
            **_search_options(o.beam_size, o.patience, o.length_penalty),
        )
        progress = {}
        on_progress = (lambda seconds: progress["bar"].update(seconds)) if o.log_progress else None
        try:
            segments, found = self.engine.transcribe(_audio(o.audio), on_progress=on_progress, **options)
        except OptionError as e:  # named as the caller named it
            if e.name not in RENAMED:
                raise
            raise OptionError(RENAMED[e.name], str(e)[len(e.name) :]) from None
        if o.log_progress:
            from tqdm import tqdm

            progress["bar"] = tqdm(total=found.duration_after_vad, unit="seconds")  # faster-whisper's: the speech
        reported = TranscriptionOptions(
            beam_size=o.beam_size,
            best_of=o.best_of,
            patience=o.patience,
            length_penalty=o.length_penalty,
            repetition_penalty=o.repetition_penalty,
            no_repeat_ngram_size=o.no_repeat_ngram_size,
            log_prob_threshold=o.log_prob_threshold,
            no_speech_threshold=o.no_speech_threshold,
            compression_ratio_threshold=o.compression_ratio_threshold,
            condition_on_previous_text=o.condition_on_previous_text,
            prompt_reset_on_temperature=o.prompt_reset_on_temperature,
            temperatures=list(o.temperature) if isinstance(o.temperature, (list, tuple)) else [o.temperature],
            initial_prompt=o.initial_prompt,
            prefix=o.prefix,
            suppress_blank=o.suppress_blank,
            suppress_tokens=(
                tuple(decoding.suppress_tokens(self.engine.tokenizer, suppress))
                if o.suppress_tokens
                else o.suppress_tokens
            ),
            without_timestamps=o.without_timestamps,
            max_initial_timestamp=o.max_initial_timestamp,
            word_timestamps=o.word_timestamps,
            prepend_punctuations=o.prepend_punctuations,
            append_punctuations=o.append_punctuations,
            multilingual=o.multilingual,
            max_new_tokens=o.max_new_tokens,
            clip_timestamps=o.clip_timestamps,
            hallucination_silence_threshold=o.hallucination_silence_threshold,
            hotwords=o.hotwords,
        )
        probs = found.all_language_probs
        info = TranscriptionInfo(
            language=found.language,
            language_probability=1.0 if found.language_probability is None else found.language_probability,
            duration=found.duration,
            duration_after_vad=found.duration_after_vad,
            all_language_probs=sorted(probs.items(), key=lambda kv: -kv[1]) if probs is not None else None,
            transcription_options=reported,
            vad_options=_reported_vad(
                o.vad_parameters, found.options.vad_parameters if batch_size is not None else options["vad_parameters"]
            ),
        )
        return _converted(segments, o.word_timestamps, progress, reported, keep_empty=batch_size is not None), info


def _converted(
    segments, word_timestamps: bool, progress: dict, reported: TranscriptionOptions, keep_empty: bool = False
) -> Iterator[Segment]:
    """The engine's segments as faster-whisper's: numbered from 1, the ones openai-whisper
    cleared (no text, or no duration) left out, as faster-whisper leaves them out (kept with
    keep_empty: its BatchedInferencePipeline keeps them)."""
    n = 0
    if isinstance(reported.clip_timestamps, str):  # faster-whisper's reported options change so once decoding starts
        reported.clip_timestamps = [
            float(t) for t in (reported.clip_timestamps.split(",") if reported.clip_timestamps else [])
        ]
    try:
        for s in segments:
            if not keep_empty and (s.start == s.end or not s.text.strip()):
                continue
            n += 1
            words = (
                [
                    Word(start=w["start"], end=w["end"], word=w["word"], probability=w["probability"])
                    for w in s.words or []
                ]
                if word_timestamps
                else None
            )
            yield Segment(
                id=n,
                seek=s.seek,
                start=s.start,
                end=s.end,
                text=s.text,
                tokens=list(s.tokens),
                avg_logprob=s.avg_logprob,
                compression_ratio=s.compression_ratio,
                no_speech_prob=s.no_speech_prob,
                words=words,
                temperature=s.temperature,
            )
    finally:
        segments.close()  # the engine's audio is released even when the caller stops early
        if "bar" in progress:
            progress["bar"].close()


class BatchedInferencePipeline:
    """faster-whisper's `BatchedInferencePipeline(model)`: transcribe() decodes the speech in VAD
    chunks of at most 30 s, each alone (no previous text, the first temperature only, no
    fallback), `batch_size` at once as independent sequences of the engine's shared decoder
    (ckw/runtime/batched.py). A different mode from WhisperModel.transcribe (openai-whisper's
    sequential transcribe()); the same keywords and defaults as faster-whisper's (beam_size 5,
    without_timestamps True, vad_filter True, batch_size 8)."""

    def __init__(self, model: WhisperModel):
        self.model = model

    def transcribe(
        self,
        audio,
        language: Optional[str] = None,
        task: str = "transcribe",
        log_progress: bool = False,
        beam_size: int = 5,
        best_of: int = 5,
        patience: float = 1,
        length_penalty: float = 1,
        repetition_penalty: float = 1,
        no_repeat_ngram_size: int = 0,
        temperature: Union[float, List[float], Tuple[float, ...]] = DEFAULT_TEMPERATURES,
        compression_ratio_threshold: Optional[float] = 2.4,
        log_prob_threshold: Optional[float] = -1.0,
        no_speech_threshold: Optional[float] = 0.6,
        condition_on_previous_text: bool = True,
        prompt_reset_on_temperature: float = 0.5,
        initial_prompt: Optional[Union[str, Iterable[int]]] = None,
        prefix: Optional[str] = None,
        suppress_blank: bool = True,
        suppress_tokens: Optional[List[int]] = [-1],  # noqa: B006 (faster-whisper's default, never mutated)
        without_timestamps: bool = True,
        max_initial_timestamp: float = 1.0,
        word_timestamps: bool = False,
        prepend_punctuations: str = PREPEND_PUNCTUATIONS,
        append_punctuations: str = APPEND_PUNCTUATIONS,
        multilingual: bool = False,
        vad_filter: bool = True,
        vad_parameters=None,
        max_new_tokens: Optional[int] = None,
        chunk_length: Optional[int] = None,
        clip_timestamps: Optional[List[dict]] = None,
        hallucination_silence_threshold: Optional[float] = None,
        batch_size: int = 8,
        hotwords: Optional[str] = None,
        language_detection_threshold: Optional[float] = 0.5,
        language_detection_segments: int = 1,
    ) -> Tuple[Iterator[Segment], TranscriptionInfo]:
        """faster-whisper's BatchedInferencePipeline.transcribe (class docstring). The unused
        keywords it accepts (compression_ratio_threshold, log_prob_threshold, no_speech_threshold,
        condition_on_previous_text) are accepted and unused here too. max_initial_timestamp: 1.0,
        CTranslate2's own limit (faster-whisper's 0.0 never reaches its decoder)."""
        given = dict(locals())
        if isinstance(batch_size, bool) or not isinstance(batch_size, int) or batch_size < 1:
            raise _refused("batch_size", batch_size, "give a whole number of chunks, at least 1")
        return self.model._transcribe(given, batch_size)
