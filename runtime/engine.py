"""The transcription engine: generated frontend, encoder and decoder libraries plus decoding.

WAV bytes -> frontend (log-mel of the whole recording) -> 30 s window -> encoder memory ->
decoder (prefill, then one token per step) -> greedy decoding -> text.
"""

import json
import time
from typing import Dict, Sequence

import numpy as np

from runtime import abi, longform, runfiles
from runtime.decoding import DecodingOptions, greedy_decode
from runtime.tokenizer import WhisperTokenizer

N_FRAMES = 3000  # one 30 s window of log-mel frames


class EngineError(RuntimeError):
    pass


class Frontend:
    def __init__(self, path: str):
        self.handle = abi.Handle(abi.Library(path, "ckw_whisper_frontend", "frontend"))

    def log_mel(self, wav: bytes) -> np.ndarray:
        """[n_mels, n_frames] for the whole recording plus 30 s of padding."""
        data = np.frombuffer(wav, dtype=np.uint8)
        shape = (abi.ctypes.c_int64 * 2)()
        self.handle("run_shape", data, data.size, shape)
        mel = np.empty((shape[0], shape[1]), np.float32)
        self.handle("run", data, data.size, mel, mel.size)
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
        self.max_beams = self.lib.dim("max_beams")
        self._steps = np.empty((self.max_beams, self.n_vocab), np.float32)
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
        self.handle("prefill", ids, ids.size, None, logits)
        self.calls["prefill"] += time.perf_counter() - t0
        return logits[list(rows)]

    def decode(self, token: int) -> np.ndarray:
        return self.decode_batch([token])[0]

    def decode_batch(self, tokens: Sequence[int]) -> np.ndarray:
        """One token for each of len(tokens) sequences (beams) at the current position, in one
        call; logits [len(tokens), n_vocab] (a buffer the next call reuses)."""
        t0 = time.perf_counter()
        ids = np.asarray(tokens, dtype=np.int32)
        if not 1 <= ids.size <= self.max_beams:
            raise abi.AbiError(f"decode_batch: {ids.size} sequences; this decoder runs 1 to {self.max_beams} at once "
                               "(max_beams, fixed when the library was built)", abi.E_ARGUMENT)
        out = self._steps[:ids.size]
        self.handle("decode", ids, ids.size, out)
        self.calls["decode"] += time.perf_counter() - t0
        return out

    def align(self, tokens: Sequence[int]):
        """A teacher-forced run of `tokens` from position 0 with the cross-attention logits on
        (word timestamps): logits [T, n_vocab], cross_qk [n_layers, n_heads, T, n_audio]."""
        t0 = time.perf_counter()
        ids = np.asarray(tokens, dtype=np.int32)
        logits = np.empty((ids.size, self.n_vocab), np.float32)
        qk = np.empty((self.lib.dim("n_layers"), self.lib.dim("n_heads"), ids.size, self.lib.dim("n_audio")),
                      np.float32)
        self.handle("reset")
        self.handle("prefill", ids, ids.size, qk, logits)
        self.calls["prefill"] += time.perf_counter() - t0
        return logits, qk

    def reorder(self, source: Sequence[int]) -> None:
        """Sequence b continues from sequence source[b] (self-K/V rearranged in C, in place)."""
        ids = np.asarray(source, dtype=np.int32)
        self.handle("reorder", ids, ids.size)

    @property
    def cross_kv_projections(self) -> int:
        return self.handle.query("cross_kv_projections")


class Engine:
    def __init__(self, variant: str, frontend: str, encoder: str, decoder: str, checkpoint_dir: str):
        self.variant = variant
        weights = f"{checkpoint_dir}/weights.bin"
        with open(f"{checkpoint_dir}/model_config.json", encoding="utf-8") as f:
            self.config: Dict = json.load(f)
        with open(f"{checkpoint_dir}/manifest.json", encoding="utf-8") as f:
            manifest = json.load(f)
        self.manifest_sha256 = manifest["manifest_sha256"]
        self.weights_sha256 = manifest["weights_sha256"]
        try:
            self.tokenizer = WhisperTokenizer(f"{checkpoint_dir}/tokenizer.json", self.config)
            self.frontend = Frontend(frontend)
            self.encoder = Encoder(encoder, variant, weights)
            self.decoder = Decoder(decoder, variant, weights)
        except abi.AbiError as e:
            raise EngineError(str(e)) from e

    @classmethod
    def from_runfiles(cls, variant: str) -> "Engine":
        if variant not in ("tiny", "base"):
            raise EngineError(f"unknown model {variant!r}; use tiny or base")
        lib = lambda name: runfiles.locate("ckw", f"models/whisper/libckw_{name}.so")  # noqa: E731
        checkpoint = runfiles.locate(f"whisper_{variant}", "weights.bin").rsplit("/", 1)[0]
        return cls(variant, lib("whisper_frontend"), lib(f"{variant}_encoder"), lib(f"{variant}_decoder"), checkpoint)

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
                                         n_audio_ctx=self.config.get("n_audio_ctx", 1500), on_segment=on_segment,
                                         alignment_heads=self.config.get("alignment_heads") or ())
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
