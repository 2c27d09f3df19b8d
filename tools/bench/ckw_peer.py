"""ckw, this project, as one engine of //tools:benchmark_e2e: the engine's entry points
(`Engine.transcribe_window` for one 30 s window, `Engine.transcribe_long` for a whole recording)
with counters on the encoder, prefill and decoder-step calls, so stage times can be given per window
and per step. With beams, one decoder step is one call for every beam's next token."""

import functools
import json
import os
import time
from typing import Dict, Optional

from ckw.runtime.decoding import DecodingOptions
from ckw.runtime.engine import Engine
from ckw.runtime.options import TranscribeOptions
from tools.bench import floors


class CkwPeer:
    def __init__(self, variant: str, threads: int, beam_size: Optional[int] = None, precision: str = "fp32"):
        """beam_size: beam search on the one-window clip (None: greedy); precision: the fp32 build or
        the bf16 one (labelled ckw-bf16)."""
        self.label = (
            "ckw" + ("" if precision == "fp32" else f"-{precision}") + ("" if beam_size is None else f"-b{beam_size}")
        )
        self.beam_size = beam_size
        self.engine = Engine.from_runfiles(variant, precision=precision, threads=threads)
        self.calls = {"encoder": 0, "prefill": 0, "decode": 0}
        self.prompt_tokens = 0  # of the last prefill: the one-window rows' prompt
        self._count(self.engine.encoder, "run", "encoder")
        open_group = self.engine.paged.open_group

        def counted_group():  # each transcription's decoder (ckw/runtime/paged_decoder.py)
            group = open_group()
            self._count(group, "prefill", "prefill")
            self._count(group, "decode_batch", "decode")  # greedy's decode() goes through it
            return group

        self.engine.paged.open_group = counted_group
        with open(os.path.join(self.engine.checkpoint_dir, "manifest.json"), encoding="utf-8") as f:
            self.manifest = json.load(f)  # the weights as this build stores them (f16, bf16)
        self.state_bytes = floors.state_bytes(self.manifest)

    def _count(self, obj, method: str, key: str) -> None:
        inner = getattr(obj, method)

        @functools.wraps(inner)
        def counted(*args, **kwargs):
            self.calls[key] += 1
            if key == "prefill":
                self.prompt_tokens = len(args[0])
            return inner(*args, **kwargs)

        setattr(obj, method, counted)  # an instance attribute: this engine only

    def run(self, clip) -> Dict:
        """One transcription of `clip` (tools/bench/clips.py): text, token count and stage times (ms)."""
        self.calls = dict.fromkeys(self.calls, 0)
        t0 = time.perf_counter()
        if clip.long_form:
            # openai-whisper transcribe()'s defaults: timestamps, temperature fallback, conditioning
            # on the previous text, greedy at temperature 0 (the CLI's --beam_size 0).
            result = self.engine.transcribe_long(clip.wav, TranscribeOptions(language="en"))
        else:
            result = self.engine.transcribe_window(clip.wav, DecodingOptions(beam_size=self.beam_size))  # no timestamps
        wall = 1000 * (time.perf_counter() - t0)
        ms = result["timings_ms"]
        windows = max(self.calls["encoder"], 1)
        # One window: the bytes of its average decoder step (beams: every beam's K/V); long-form
        # windows' prompts vary, so no floor there.
        step_bytes = (
            None
            if clip.long_form
            else floors.decode_bytes_per_step(
                self.manifest,
                self.engine.config,
                self.prompt_tokens,
                self.calls["decode"] + 1,
                self.state_bytes,
                rows=self.beam_size or 1,
            )
        )
        return {
            "decode_bytes_per_step": step_bytes,
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
