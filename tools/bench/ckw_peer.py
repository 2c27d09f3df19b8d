"""ckw, this project, as one engine of //tools:benchmark_e2e: the same entry points the CLI uses
(`Engine.transcribe` for one 30 s window, `Engine.transcribe_long` for a whole recording) with
counters on the encoder, prefill and decode calls, so stage times can be given per window and per
token."""

import functools
import os
import time
from typing import Dict

from runtime.decoding import DecodingOptions
from runtime.engine import Engine
from runtime.longform import TranscribeOptions


class CkwPeer:
    label = "ckw"

    def __init__(self, variant: str, threads: int):
        os.environ["CKW_NUM_THREADS"] = str(threads)  # read when the handles are created
        self.engine = Engine.from_runfiles(variant)
        self.calls = {"encoder": 0, "prefill": 0, "decode": 0}
        self._count(self.engine.encoder, "run", "encoder")
        self._count(self.engine.decoder, "prefill", "prefill")
        self._count(self.engine.decoder, "decode", "decode")

    def _count(self, obj, method: str, key: str) -> None:
        inner = getattr(obj, method)

        @functools.wraps(inner)
        def counted(*args, **kwargs):
            self.calls[key] += 1
            return inner(*args, **kwargs)

        setattr(obj, method, counted)  # an instance attribute: this engine only

    def run(self, clip) -> Dict:
        """One transcription of `clip` (tools/bench/clips.py): text, token count and stage times (ms)."""
        self.calls = dict.fromkeys(self.calls, 0)
        t0 = time.perf_counter()
        if clip.long_form:
            # The CLI's defaults (//tools:transcribe): timestamps, temperature fallback, conditioning
            # on the previous text, greedy at temperature 0.
            result = self.engine.transcribe_long(clip.wav, TranscribeOptions(language="en"))
        else:
            result = self.engine.transcribe(clip.wav, DecodingOptions())  # greedy, no timestamps
        wall = 1000 * (time.perf_counter() - t0)
        ms = result["timings_ms"]
        windows = max(self.calls["encoder"], 1)
        return {
            "text": result["text"],
            "tokens": len(result["tokens"]),
            "windows": self.calls["encoder"],
            "decode_steps": self.calls["decode"],
            "stages": {
                "frontend": ms["frontend"],
                "encoder": ms["encoder"] / windows,
                "prefill": ms["prefill"] / windows,
                "decode_per_token": ms["decode"] / max(self.calls["decode"], 1),
                "total": wall,
            },
        }

    def close(self) -> None:
        self.engine.close()
