"""The transcription engine: generated frontend, encoder and decoder libraries plus decoding.

Audio (any length, WAV or any container FFmpeg reads) -> frontend (log-mel in blocks, two
passes: ckw/runtime/audio_stream.py) -> 30 s windows -> encoder memory -> decoder (prefill, then
one token per step) -> openai-whisper's transcribe() loop (ckw/runtime/longform.py) -> segments.

    engine = Engine.from_runfiles("base")                  # precision="bf16": bf16 weights
    segments, info = engine.transcribe("meeting.m4a", language=None)   # None: detect
    for s in segments:                                                 # decoded as consumed
        print(f"[{s.start:.2f} -> {s.end:.2f}] {s.text}")
"""

import contextlib
import dataclasses
import functools
import os
import threading
import time
from collections.abc import Callable, Iterator
from typing import Dict, Self, Sequence

import numpy as np

from ckw import runfiles
from ckw.checkpoints import packed
from ckw.runtime import abi, audio_stream, batched, checkpoint_check, libraries, recording
from ckw.runtime.decoding import DecodingOptions, greedy_decode, prompt_rows
from ckw.runtime.errors import AudioError, EngineError  # callers import them from here too
from ckw.runtime.options import PRECISIONS, TranscribeOptions, options_from
from ckw.runtime.paged_decoder import PagedDecoder
from ckw.runtime.tokenizer import WhisperTokenizer
from ckw.runtime.transcription import Segment, TranscriptionInfo, collect

N_FRAMES = 3000  # one 30 s window of log-mel frames
# Values of CKW_ISA, the cap on the kernels' run-time ISA choice (kernels/common/cpu.h); unset or
# empty: the best the CPU has. The libraries read it once, at their first kernel call.
ISA_CAPS = ("amx", "avx512bf16", "avx512vnni", "avx512", "avxvnni", "avx2", "scalar")  # kernels/common/cpu.h


def check_isa_cap() -> None:
    """EngineError for a CKW_ISA the kernels would silently ignore."""
    value = os.environ.get("CKW_ISA", "")
    if value and value not in ISA_CAPS:
        raise EngineError(
            f"CKW_ISA={value!r} in the environment: use one of {', '.join(ISA_CAPS)}, or unset it "
            "for the best path this CPU has"
        )


# The variants whose checkpoints the build packs (@whisper_<variant>) -> the model each one is.
BUILT_IN = {variant: model for model, variant in packed.BUILT_IN.items()}


def _build_name(variant: str, precision: str) -> str:
    """The libraries' name (libckw_<name>_<part>.so, symbols ckw_<name>_<part>_*); EngineError for
    an unknown precision."""
    if precision not in PRECISIONS:
        raise EngineError(f"unknown precision {precision!r}; use {', '.join(PRECISIONS[:-1])} or {PRECISIONS[-1]}")
    return variant if precision == "fp32" else f"{variant}_{precision}"


class Frontend:
    def __init__(self, path: str):
        # The naming policy: libckw_<name>_frontend.so exports ckw_<name>_frontend_* (whisper: 80 mel
        # bands, whisper_128), so the file name is the symbol prefix.
        name = os.path.basename(path)
        if not (name.startswith("libckw_") and name.endswith("_frontend.so")):
            raise EngineError(f"{path}: not a frontend library (libckw_<name>_frontend.so)")
        prefix = name[3:-3]
        self.handle = abi.Handle(abi.Library(path, prefix, "frontend"))

    def log_mel(self, wav: bytes) -> np.ndarray:
        """[n_mels, n_frames] for the whole recording plus 30 s of padding. AudioError when the
        frontend refuses the bytes (its kernels' own message: what is wrong with the file)."""
        data = np.frombuffer(wav, dtype=np.uint8)
        shape = (abi.ctypes.c_int64 * 2)()
        try:
            self.handle("run_shape", data, data.size, shape)
            mel = np.empty((shape[0], shape[1]), np.float32)
            self.handle("run", data, data.size, mel, mel.size)
        except abi.AbiError as e:
            if e.code == abi.E_KERNEL:
                raise AudioError(e.reason) from e
            if e.code == abi.E_NO_MEMORY:
                raise AudioError(f"too long to decode in memory ({data.size} bytes)") from e
            raise
        except MemoryError as e:
            raise AudioError(f"too long to decode in memory ({data.size} bytes)") from e
        return mel


class Encoder:
    def __init__(self, path: str, variant: str, weights: str, threads: int | None = None):
        self.lib = abi.Library.for_model(path, variant, "encoder")
        self.handle = abi.Handle(self.lib, weights, threads=threads)
        self.n_ctx = self.lib.dim("n_ctx")
        self.memory_shape = (self.n_ctx, self.lib.dim("d_model"))

    def run(self, mel_window: np.ndarray) -> np.ndarray:
        """The window's encoder memory [n_ctx, d_model], a new array per call: a SequenceGroup
        knows the memory it projected by identity (the same array set again is not projected)."""
        memory = np.empty(self.memory_shape, np.float32)
        self.handle("run", np.ascontiguousarray(mel_window, dtype=np.float32), memory)
        return memory


class Decoder:
    """The generated decoder as runtime.decoding.TextDecoder."""

    def __init__(self, path: str, variant: str, weights: str, threads: int | None = None):
        self.lib = abi.Library.for_model(path, variant, "decoder")
        self.handle = abi.Handle(self.lib, weights, threads=threads)
        self.n_vocab = self.lib.dim("n_vocab")
        self.n_text_ctx = self.lib.dim("n_ctx")
        self.max_beams = self.lib.dim("max_beams")
        self._steps = np.empty((self.max_beams, self.n_vocab), np.float32)
        self.calls = {"prefill": 0.0, "decode": 0.0}

    def set_encoder_memory(self, memory: np.ndarray) -> None:
        self.handle("set_encoder_memory", np.ascontiguousarray(memory, dtype=np.float32))

    def prefill(self, tokens: Sequence[int], rows: Sequence[int] = (-1,)) -> np.ndarray:
        """Logits after the prompt positions `rows` (negative counts from the end), [len(rows),
        n_vocab]; the C prefill projects those rows onto the vocabulary and no others."""
        t0 = time.perf_counter()
        ids = np.asarray(tokens, dtype=np.int32)
        picked = prompt_rows(rows, ids.size)
        logits = np.empty((picked.size, self.n_vocab), np.float32)
        self._run_prefill(ids, picked, None, logits)
        self.calls["prefill"] += time.perf_counter() - t0
        return logits

    def _run_prefill(self, ids: np.ndarray, rows: np.ndarray, cross_qk, logits: np.ndarray) -> None:
        """A new sequence from position 0: the logits of prompt positions `rows` (int32, each in
        [0, ids.size)) into `logits`, the cross-attention logits into `cross_qk` unless None."""
        self.handle("reset")
        self.handle.call_named(
            "prefill",
            tokens=ids,
            n_tokens=ids.size,
            logit_rows=rows,
            n_logit_rows=rows.size,
            cross_qk=cross_qk,
            prompt_logits=logits,
        )

    def decode(self, token: int) -> np.ndarray:
        return self.decode_batch([token])[0]

    def decode_batch(self, tokens: Sequence[int]) -> np.ndarray:
        """One token for each of len(tokens) sequences (beams) at the current position, in one
        call; logits [len(tokens), n_vocab] (a buffer the next call reuses)."""
        t0 = time.perf_counter()
        ids = np.asarray(tokens, dtype=np.int32)
        if not 1 <= ids.size <= self.max_beams:
            raise abi.AbiError(
                f"decode_batch: {ids.size} sequences; this decoder runs 1 to {self.max_beams} at once "
                "(max_beams, fixed when the library was built)",
                abi.E_ARGUMENT,
            )
        out = self._steps[: ids.size]
        self.handle("decode", ids, ids.size, out)
        self.calls["decode"] += time.perf_counter() - t0
        return out

    def align(self, tokens: Sequence[int]):
        """A teacher-forced run of `tokens` from position 0 with the cross-attention logits on
        (word timestamps): logits [T, n_vocab], cross_qk [n_layers, n_heads, T, n_audio]."""
        t0 = time.perf_counter()
        ids = np.asarray(tokens, dtype=np.int32)
        logits = np.empty((ids.size, self.n_vocab), np.float32)
        qk = np.empty(
            (self.lib.dim("n_layers"), self.lib.dim("n_heads"), ids.size, self.lib.dim("n_audio")), np.float32
        )
        self._run_prefill(ids, np.arange(ids.size, dtype=np.int32), qk, logits)
        self.calls["prefill"] += time.perf_counter() - t0
        return logits, qk

    def reorder(self, source: Sequence[int]) -> None:
        """Sequence b continues from sequence source[b] (self-K/V rearranged in C, in place)."""
        ids = np.asarray(source, dtype=np.int32)
        self.handle("reorder", ids, ids.size)

    @property
    def cross_kv_projections(self) -> int:
        return self.handle.query("cross_kv_projections")


@contextlib.contextmanager
def _in_use(engine: "Engine", what: str):
    """Holds the engine for one call (its handles and buffers serve one transcription at a time);
    refuses while another thread holds it or after close()."""
    if not engine._lock.acquire(blocking=False):
        raise EngineError(f"{what}: the engine is in use by another thread; give each thread its own Engine")
    try:
        if engine.closed:
            raise EngineError(f"{what}: the engine was closed; create a new one")
        yield
    finally:
        engine._lock.release()


def _one_call_at_a_time(method):
    """An Engine method run under _in_use."""

    @functools.wraps(method)
    def guarded(self, *args, **kwargs):
        with _in_use(self, f"Engine.{method.__name__}"):
            return method(self, *args, **kwargs)

    return guarded


class Engine:
    """One model: its frontend, encoder and decoder handles. A checkpoint is refused here, never
    half-used (ckw/runtime/checkpoint_check.py says what is checked when); one engine serves one
    thread at a time (give each thread its own: they share nothing); close() frees it. threads:
    the encoder's and decoder's worker threads, the caller's included (None: CKW_NUM_THREADS, else
    the CPUs this process may use). checkpoint: its directory, or its files already opened."""

    def __init__(
        self,
        variant: str,
        frontend: str,
        encoder: str,
        decoder: str,
        decoder_paged: str,
        checkpoint: "str | checkpoint_check.CheckpointFiles",
        verify_weights: bool = False,
        threads: int | None = None,
        precision: str = "fp32",
        rebuild: str | None = None,
        model: str | None = None,
    ):
        if threads is not None and threads < 1:
            raise EngineError(f"threads={threads}: give at least 1 (or None for every CPU)")
        check_isa_cap()
        symbols = _build_name(variant, precision)
        self.variant = variant
        self.precision = precision
        self.handles = []
        self._group = None  # the request of the last transcribe, until its segments end
        self._vad = None  # ckw/runtime/vad.py's SileroVad, loaded on the first vad_filter
        self._vad_lock = threading.Lock()  # one VAD handle for every request (ckw/runtime/streams.py)
        self._lock = threading.RLock()  # reentrant: transcribe_long runs transcribe
        if isinstance(checkpoint, checkpoint_check.CheckpointFiles):  # opened by from_checkpoint
            ckpt = checkpoint
        else:
            ckpt = checkpoint_check.CheckpointFiles(checkpoint, variant, precision, rebuild)
        self.checkpoint_dir = ckpt.directory
        self.weights_path = ckpt.weights
        self.model = model or ckpt.config.get("variant", variant)
        self.config: Dict = ckpt.config
        self.manifest_sha256 = ckpt.manifest["manifest_sha256"]
        self.weights_sha256 = ckpt.manifest["weights_sha256"]
        if verify_weights:
            ckpt.verify_weights()
        try:
            self.tokenizer = WhisperTokenizer(ckpt.tokenizer, self.config)
        except (ValueError, KeyError) as e:
            raise EngineError(ckpt.refusal(str(e))) from e
        try:
            self.frontend = Frontend(frontend)
            self.handles.append(self.frontend.handle)
            self.encoder = Encoder(encoder, symbols, ckpt.weights, threads)
            self.handles.append(self.encoder.handle)
            # What transcribe runs: one request here, many through ckw/runtime/streams.py. A request
            # holds as many sequences as the single-request decoder (`decoder`) builds beams for.
            self._decoder_lib = abi.Library.for_model(decoder, symbols, "decoder")
            self.paged = PagedDecoder(
                decoder_paged, symbols, ckpt.weights, threads, max_beams=self._decoder_lib.dim("max_beams")
            )
            self.handles.append(self.paged.handle)
            self._threads, self._symbols = threads, symbols
        except abi.AbiError as e:
            self.close()
            raise EngineError(ckpt.create_refusal(e, variant)) from e

    @classmethod
    def from_runfiles(
        cls, variant: str, precision: str = "fp32", verify_weights: bool = False, threads: int | None = None
    ) -> "Engine":
        """The libraries and checkpoint of `variant` (tiny, base) at `precision` (fp32, bf16) from
        the runfiles (//ckw/runtime:engine_data_<variant>[_bf16] in the target's data)."""
        if variant not in BUILT_IN:
            raise EngineError(f"unknown model {variant!r}; use tiny or base")
        name = _build_name(variant, precision)

        def lib(stem):
            return runfiles.locate("ckw", f"models/whisper/libckw_{stem}.so")

        try:
            if precision == "fp32":
                weights = runfiles.locate(f"whisper_{variant}", "weights.bin")
            else:
                weights = runfiles.locate("ckw", f"models/whisper/{name}_checkpoint/weights.bin")
            paths = (
                lib("whisper_frontend"),
                lib(f"{name}_encoder"),
                lib(f"{name}_decoder"),
                lib(f"{name}_decoder_paged"),
            )
        except FileNotFoundError as e:  # a target without //ckw/runtime:engine_data_<variant>[_<precision>]
            raise EngineError(f"{variant} {precision}: {e}") from e
        return cls(
            variant,
            *paths,
            weights.rsplit("/", 1)[0],
            verify_weights=verify_weights,
            threads=threads,
            precision=precision,
            model=BUILT_IN[variant],
        )

    @classmethod
    def from_checkpoint(
        cls,
        checkpoint_dir: str,
        verify_weights: bool = False,
        threads: int | None = None,
        rebuild: str | None = None,
        model: str | None = None,
    ) -> "Engine":
        """A packed checkpoint directory of any architecture this build has libraries for (a
        fine-tune, one converted from the Hub or a local directory: ckw/checkpoints/
        store.py finds and packs them), run on the libraries of its layout (ckw/runtime/libraries.py).
        `rebuild`: how to replace the directory, for messages; `model`: its name, for results."""
        files = checkpoint_check.CheckpointFiles(
            checkpoint_dir, "", rebuild=rebuild or f"delete {checkpoint_dir} and convert the checkpoint again"
        )
        libs = libraries.for_checkpoint(files.manifest, files.manifest_path)
        return cls(
            libs.variant,
            libs.frontend,
            libs.encoder,
            libs.decoder,
            libs.decoder_paged,
            files,
            verify_weights=verify_weights,
            threads=threads,
            precision=libs.precision,
            model=model,
        )

    @functools.cached_property
    def decoder(self) -> Decoder:
        """The single-request decoder library (`decoder`, loaded on first use): the paged one
        equals it bit for bit; its own tests and tools call it directly."""
        if self.paged.handle.closed:  # close() frees them all
            raise EngineError("Engine.decoder: the engine was closed; create a new one")
        decoder = Decoder(self._decoder_lib.path, self._symbols, self.weights_path, self._threads)
        self.handles.append(decoder.handle)
        return decoder

    def speech_probabilities(self, samples: np.ndarray) -> np.ndarray:
        """Silero VAD's speech probability per 512-sample window of 16 kHz `samples` (faster-whisper's
        framing; ckw/runtime/vad.py), on the VAD library loaded at the first call (data:
        //models/silero_vad:libckw_silero_vad.so and :checkpoint). Callable from any thread: calls
        take turns on the one handle."""
        with self._vad_lock:
            if self.paged.handle.closed:
                raise EngineError("vad_filter: the engine was closed; create a new one")
            if self._vad is None:
                from ckw.runtime.vad import SileroVad

                try:
                    self._vad = SileroVad.from_runfiles()
                except FileNotFoundError as e:
                    raise EngineError(f"vad_filter: the Silero VAD is missing ({e})") from None
                except abi.AbiError as e:
                    raise EngineError(f"vad_filter: the Silero VAD cannot be loaded ({e})") from None
                self.handles.append(self._vad.handle)
            try:
                return self._vad.speech_probabilities(samples)
            except abi.AbiError as e:
                raise EngineError(f"vad_filter: {e}") from None

    def _open_request(self):
        """A SequenceGroup for one call, the previous call's closed first (its segments may never
        have been consumed)."""
        self._close_request()
        self._group = self.paged.open_group()
        return self._group

    def _close_request(self) -> None:
        if self._group is not None:
            group, self._group = self._group, None
            group.close()

    @contextlib.contextmanager
    def _request_held(self, what: str):
        """_in_use while a transcription's segments are consumed; its request closed after."""
        with _in_use(self, what):
            try:
                yield
            finally:
                self._close_request()

    @property
    def closed(self) -> bool:
        return any(h.closed for h in self.handles)

    def close(self) -> None:
        """Frees the handles (again: nothing to do); using the engine afterwards raises EngineError.
        EngineError while another thread is transcribing with it."""
        if not self._lock.acquire(blocking=False):
            raise EngineError("Engine.close: the engine is in use by another thread; close it when that call returns")
        try:
            if not self.closed:
                self._close_request()
            for h in self.handles:
                if not h.closed:
                    h.close()
        finally:
            self._lock.release()

    def __enter__(self) -> Self:
        return self

    def __exit__(self, *exc) -> None:
        self.close()

    @_one_call_at_a_time
    def transcribe_window(self, wav: bytes, options: DecodingOptions = DecodingOptions()) -> Dict:
        """The first 30 s of a WAV file only, at temperature 0 (greedy, or beams with options.beam_size),
        text only (one window, no timestamps)."""
        t0 = time.perf_counter()
        try:
            mel = self.frontend.log_mel(wav)
            t1 = time.perf_counter()
            memory = self.encoder.run(mel[:, :N_FRAMES])
            t2 = time.perf_counter()
            decoder = self._open_request()
            result = greedy_decode(decoder, self.tokenizer, memory, options)
        except abi.AbiError as e:
            raise EngineError(str(e)) from e
        finally:
            self._close_request()
        t3 = time.perf_counter()

        def ms(s):
            return round(1000.0 * s, 2)

        return {
            "text": result.text,
            "tokens": result.tokens,
            "language": options.language if self.tokenizer.is_multilingual else "en",
            "model": self.model_info(),
            "timings_ms": {
                "frontend": ms(t1 - t0),
                "encoder": ms(t2 - t1),
                "prefill": ms(decoder.calls["prefill"]),
                "decode": ms(decoder.calls["decode"]),
                "total": ms(t3 - t0),
            },
        }

    def model_info(self) -> Dict:
        """What a result's `model` entry says: variant, precision, checkpoint source and hashes."""
        return {
            "model": self.model,
            "variant": self.variant,
            "precision": self.precision,
            "checkpoint_source": self.config.get("source", "unknown"),
            # create() refused any weights whose manifest differs from the one baked into C.
            "weights_sha256": self.weights_sha256,
            "manifest_sha256": self.manifest_sha256,
        }

    def check_options(self, **options) -> TranscribeOptions:
        """openai-whisper's transcribe() keywords checked once, against this model too: OptionError
        (a ValueError naming the option) for a wrong value or more sequences than the decoder
        runs side by side, ValueError for a language or task the checkpoint cannot honour."""
        opts = options_from(**options)
        opts.check_model(self.tokenizer, self.paged.max_beams)
        return opts

    @_one_call_at_a_time
    def transcribe(
        self, audio: audio_stream.Audio, *, on_progress: Callable[[float], None] | None = None, **options
    ) -> tuple[Iterator[Segment], TranscriptionInfo]:
        """The whole recording with openai-whisper's transcribe() semantics.

        audio: a file path (WAV, or any container FFmpeg reads: m4a, mp4, webm, opus, aac, flac,
        ogg, mp3, ...), a file's bytes, or mono float32 samples at 16 kHz. options: openai-whisper's
        transcribe() keywords (ckw/runtime/options.py TranscribeOptions; language None detects it
        on multilingual checkpoints), and faster-whisper's vad_filter and vad_parameters: only the
        speech Silero VAD finds is transcribed (the whole recording decoded to 16 kHz samples in
        memory first), every segment's and word's times mapped back to the recording. batch_size
        N: faster-whisper's BatchedInferencePipeline instead (ckw/runtime/batched.py), N chunks at once.
        on_progress: called with the seconds of audio (of speech, with vad_filter) each decoded
        window advanced.

        Returns (segments, info): segments decode as they are consumed; info holds the language
        (detected here when not given) and duration at once, and windows, text and timings_ms
        once the segments are exhausted. Raises AudioInputError, ValueError (a bad option:
        check_options) or EngineError with a one-line message."""
        opts = self.check_options(**options)
        if opts.batch_size is not None:  # faster-whisper's BatchedInferencePipeline (ckw/runtime/batched.py)
            self._close_request()
            return batched.transcribe(
                self, audio, opts, on_progress, hold=lambda: _in_use(self, "Engine.transcribe segments")
            )
        group = self._open_request()
        try:
            return recording.transcription(
                audio,
                opts,
                self.frontend.handle,
                self.encoder.run,
                group,
                self.tokenizer,
                self.config,
                self.model_info(),
                on_progress,
                hold=lambda: self._request_held("Engine.transcribe segments"),
                speech_probabilities=self.speech_probabilities,
            )
        except BaseException:
            self._close_request()
            raise

    @_one_call_at_a_time
    def transcribe_long(
        self,
        audio: audio_stream.Audio,
        options: TranscribeOptions | None = None,
        on_segment: Callable[[dict], None] | None = None,
    ) -> dict:
        """`transcribe` consumed at once: openai-whisper's result dictionary (`text`, `segments`,
        `language`) plus `tokens` (every text token of the segments), `windows`, `model`,
        `timings_ms`."""
        options = options or TranscribeOptions()
        fields = {f.name: getattr(options, f.name) for f in dataclasses.fields(options)}
        segments, info = self.transcribe(audio, **fields)

        def reported() -> Iterator[Segment]:
            for s in segments:
                if on_segment is not None:
                    on_segment(s.as_dict())
                yield s

        return collect(reported(), info, self.tokenizer.eot)
