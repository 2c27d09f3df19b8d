"""The transcription engine: generated frontend, encoder and decoder libraries plus decoding.

WAV bytes -> frontend (log-mel of the whole recording) -> 30 s window -> encoder memory ->
decoder (prefill, then one token per step) -> greedy decoding -> text.
"""

import functools
import threading
import time
from typing import Dict, Self, Sequence

import numpy as np

from runtime import abi, checkpoint_check, longform, runfiles
from runtime.decoding import DecodingOptions, greedy_decode
from runtime.errors import AudioError, EngineError  # callers import them from here too
from runtime.tokenizer import WhisperTokenizer

N_FRAMES = 3000  # one 30 s window of log-mel frames


class Frontend:
    def __init__(self, path: str):
        self.handle = abi.Handle(abi.Library(path, "ckw_whisper_frontend", "frontend"))

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
    def __init__(self, path: str, variant: str, weights: str):
        self.lib = abi.Library.for_model(path, variant, "encoder")
        self.handle = abi.Handle(self.lib, weights)
        self.n_ctx = self.lib.dim("n_ctx")
        self.memory = np.empty((self.n_ctx, self.lib.dim("d_model")), np.float32)

    def run(self, mel_window: np.ndarray) -> np.ndarray:
        self.handle("run", np.ascontiguousarray(mel_window, dtype=np.float32), self.memory)
        return self.memory


class Decoder:
    """The generated decoder as runtime.decoding.TextDecoder."""

    def __init__(self, path: str, variant: str, weights: str):
        self.lib = abi.Library.for_model(path, variant, "decoder")
        self.handle = abi.Handle(self.lib, weights)
        self.n_vocab = self.lib.dim("n_vocab")
        self.n_text_ctx = self.lib.dim("n_ctx")
        self._step = np.empty((1, self.n_vocab), np.float32)
        self.calls = {"prefill": 0.0, "decode": 0.0}

    def set_encoder_memory(self, memory: np.ndarray) -> None:
        self.handle("set_encoder_memory", np.ascontiguousarray(memory, dtype=np.float32))

    def prefill(self, tokens: Sequence[int], rows: Sequence[int] = (-1,)) -> np.ndarray:
        """Logits after the prompt positions `rows`, [len(rows), n_vocab] (the C prefill returns
        every prompt row)."""
        t0 = time.perf_counter()
        ids = np.asarray(tokens, dtype=np.int32)
        logits = np.empty((ids.size, self.n_vocab), np.float32)
        self.handle("reset")
        self.handle("prefill", ids, ids.size, logits)
        self.calls["prefill"] += time.perf_counter() - t0
        return logits[list(rows)]

    def decode(self, token: int) -> np.ndarray:
        t0 = time.perf_counter()
        self.handle("decode", int(token), self._step)
        self.calls["decode"] += time.perf_counter() - t0
        return self._step[0]

    @property
    def cross_kv_projections(self) -> int:
        return self.handle.query("cross_kv_projections")


def _one_call_at_a_time(method):
    """An Engine method that refuses to run while another thread uses the engine (its handles and
    buffers serve one transcription at a time) or after close()."""

    @functools.wraps(method)
    def guarded(self, *args, **kwargs):
        if not self._lock.acquire(blocking=False):
            raise EngineError(f"Engine.{method.__name__}: the engine is in use by another thread; give each thread "
                              f"its own Engine")
        try:
            if self.closed:
                raise EngineError(f"Engine.{method.__name__}: the engine was closed; create a new one")
            return method(self, *args, **kwargs)
        finally:
            self._lock.release()

    return guarded


class Engine:
    """One model: its frontend, encoder and decoder handles. A checkpoint is refused here, never
    half-used (runtime/checkpoint_check.py says what is checked when); one engine serves one
    thread at a time (give each thread its own: they share nothing); close() frees it."""

    def __init__(self, variant: str, frontend: str, encoder: str, decoder: str, checkpoint_dir: str,
                 verify_weights: bool = False):
        self.variant = variant
        self.handles = []
        self._lock = threading.Lock()
        ckpt = checkpoint_check.CheckpointFiles(checkpoint_dir, variant)
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
            self.encoder = Encoder(encoder, variant, ckpt.weights)
            self.handles.append(self.encoder.handle)
            self.decoder = Decoder(decoder, variant, ckpt.weights)
            self.handles.append(self.decoder.handle)
        except abi.AbiError as e:
            self.close()
            raise EngineError(ckpt.create_refusal(e)) from e

    @classmethod
    def from_runfiles(cls, variant: str, verify_weights: bool = False) -> "Engine":
        if variant not in ("tiny", "base"):
            raise EngineError(f"unknown model {variant!r}; use tiny or base")
        lib = lambda name: runfiles.locate("ckw", f"models/whisper/libckw_{name}.so")  # noqa: E731
        checkpoint = runfiles.locate(f"whisper_{variant}", "weights.bin").rsplit("/", 1)[0]
        return cls(variant, lib("whisper_frontend"), lib(f"{variant}_encoder"), lib(f"{variant}_decoder"), checkpoint,
                   verify_weights=verify_weights)

    @property
    def closed(self) -> bool:
        return any(h.closed for h in self.handles)

    def close(self) -> None:
        """Frees the handles (again: nothing to do); using the engine afterwards raises EngineError.
        EngineError while another thread is transcribing with it."""
        if not self._lock.acquire(blocking=False):
            raise EngineError("Engine.close: the engine is in use by another thread; close it when that call returns")
        try:
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
    def transcribe(self, wav: bytes, options: DecodingOptions = DecodingOptions()) -> Dict:
        t0 = time.perf_counter()
        try:
            mel = self.frontend.log_mel(wav)
            t1 = time.perf_counter()
            memory = self.encoder.run(mel[:, :N_FRAMES])
            t2 = time.perf_counter()
            self.decoder.calls = {"prefill": 0.0, "decode": 0.0}
            result = greedy_decode(self.decoder, self.tokenizer, memory, options)
        except abi.AbiError as e:
            raise EngineError(str(e)) from e
        t3 = time.perf_counter()
        ms = lambda s: round(1000.0 * s, 2)  # noqa: E731
        return {
            "text": result.text,
            "tokens": result.tokens,
            "language": options.language if self.tokenizer.is_multilingual else "en",
            "model": {
                "variant": self.variant,
                "checkpoint_source": self.config.get("source", "unknown"),
                # create() refused any weights whose manifest differs from the one baked into C.
                "weights_sha256": self.weights_sha256,
                "manifest_sha256": self.manifest_sha256,
            },
            "timings_ms": {
                "frontend": ms(t1 - t0),
                "encoder": ms(t2 - t1),
                "prefill": ms(self.decoder.calls["prefill"]),
                "decode": ms(self.decoder.calls["decode"]),
                "total": ms(t3 - t0),
            },
        }

    def model_info(self) -> Dict:
        return {
            "variant": self.variant,
            "checkpoint_source": self.config.get("source", "unknown"),
            # create() refused any weights whose manifest differs from the one baked into C.
            "weights_sha256": self.weights_sha256,
            "manifest_sha256": self.manifest_sha256,
        }

    @_one_call_at_a_time
    def transcribe_long(self, wav: bytes, options: "longform.TranscribeOptions" = longform.TranscribeOptions(),
                        on_segment=None) -> Dict:
        """The whole recording, as openai-whisper's transcribe() (runtime/longform.py): `text`,
        `segments`, `language`, `tokens` (every text token of the segments), `model`, `timings_ms`."""
        t0 = time.perf_counter()
        encoder_s = [0.0]

        def encode(window: np.ndarray) -> np.ndarray:
            t = time.perf_counter()
            memory = self.encoder.run(window)
            encoder_s[0] += time.perf_counter() - t
            return memory

        try:
            mel = self.frontend.log_mel(wav)
            t1 = time.perf_counter()
            self.decoder.calls = {"prefill": 0.0, "decode": 0.0}
            result = longform.transcribe(mel, encode, self.decoder, self.tokenizer, options,
                                         n_audio_ctx=self.config.get("n_audio_ctx", 1500), on_segment=on_segment)
        except abi.AbiError as e:
            raise EngineError(str(e)) from e
        t2 = time.perf_counter()
        ms = lambda s: round(1000.0 * s, 2)  # noqa: E731
        return {
            "text": result["text"],
            "segments": result["segments"],
            "tokens": [t for s in result["segments"] for t in s["tokens"] if t < self.tokenizer.eot],
            "language": result["language"],
            "windows": result["windows"],
            "model": self.model_info(),
            "timings_ms": {
                "frontend": ms(t1 - t0),
                "encoder": ms(encoder_s[0]),
                "prefill": ms(self.decoder.calls["prefill"]),
                "decode": ms(self.decoder.calls["decode"]),
                "total": ms(t2 - t0),
            },
        }
