"""Speech probabilities from the compiled Silero VAD (libckw_silero_vad.so, circuits/silero_vad.json).

The library keeps the LSTM state and the last window's context samples between calls, so a
recording fed in blocks of whole windows gets the probabilities of one call over all of it.
`SileroVad.feed` takes any number of samples (a partial window waits for the next call);
`speech_probabilities` computes what faster-whisper's `SileroVADModel` returns for a whole
recording (its padding included), which `ckw.runtime.speech_timestamps` turns into speech chunks.
"""

from __future__ import annotations

import os

import numpy as np

from ckw import runfiles
from ckw.runtime import abi

LIBRARY = "models/silero_vad/libckw_silero_vad.so"
CHECKPOINT = "models/silero_vad/checkpoint"
# Windows per library call: bounds the call's working memory (about 20 KB a window) whatever the
# recording's length; the state carried between calls makes the block size invisible.
BLOCK_WINDOWS = 2048


class SileroVad:
    """One VAD stream on its own handle (one thread at a time, as every handle)."""

    def __init__(self, library: str, checkpoint: str, threads: int | None = 1):
        self.lib = abi.Library(library, "ckw_silero_vad", "vad")
        self.handle = abi.Handle(self.lib, os.path.join(checkpoint, "weights.bin"), threads=threads)
        self.window = self.lib.dim("window")
        self.sample_rate = 16000
        self._pending = np.zeros(0, np.float32)

    @classmethod
    def from_runfiles(cls, threads: int | None = 1) -> "SileroVad":
        """The library and checkpoint built by //models/silero_vad (in a target's data)."""
        return cls(runfiles.locate("ckw", LIBRARY), runfiles.locate("ckw", CHECKPOINT), threads)

    def reset(self) -> None:
        """Starts a new recording: zero state and context, no pending samples."""
        self.handle("reset")
        self._pending = np.zeros(0, np.float32)

    def feed(self, samples: np.ndarray) -> np.ndarray:
        """Probabilities of the whole windows completed by `samples` (16 kHz mono float32),
        continuing the recording; the remainder waits for the next call."""
        x = np.concatenate([self._pending, np.asarray(samples, dtype=np.float32).reshape(-1)])
        n = len(x) // self.window
        self._pending = x[n * self.window :].copy()
        out = np.empty(n, np.float32)
        for start in range(0, n, BLOCK_WINDOWS):
            count = min(BLOCK_WINDOWS, n - start)
            block = np.ascontiguousarray(x[start * self.window : (start + count) * self.window])
            self.handle.call_named("run", samples=block, n_windows=count, probs=out[start : start + count])
        return out

    def speech_probabilities(self, audio: np.ndarray) -> np.ndarray:
        """faster-whisper's probabilities for a whole recording: padded with 1..window zeros to
        whole windows, and (as its model wrapper does, by writing through a view) the last 64
        samples of the last window zeroed; from a fresh state."""
        audio = np.asarray(audio, dtype=np.float32).reshape(-1)
        padded = np.pad(audio, (0, self.window - len(audio) % self.window))
        padded[-self.lib.dim("context") :] = 0
        self.reset()
        probs = self.feed(padded)
        self.reset()
        return probs

    def close(self) -> None:
        self.handle.close()

    def __enter__(self) -> "SileroVad":
        return self

    def __exit__(self, *exc) -> None:
        self.close()
