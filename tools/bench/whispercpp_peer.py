"""whisper.cpp (the pywhispercpp wheel) as a peer of //tools:benchmark_e2e, on a ggml file that
tools/bench/ggml_convert.py writes from the same packed checkpoint ckw loads (f16, or quantized q8_0 or
q5_1; the label names the type: whisper.cpp-f16).

Stages come from whisper.cpp's own counters (whisper_print_timings, read from its stderr after each
run): frontend = mel time; encoder = encode time per run (one run per 30 s window; whisper.cpp's
encode also projects the cross-attention K/V, which ckw counts in prefill); prefill = batched and
prompt decoder time per window; decode per token = single-token decoder time per run (logits
included, sampling not). Total is the wall time of the transcribe call."""

import contextlib
import os
import re
import tempfile
import time
from typing import Dict

_TIMING = re.compile(r"whisper_print_timings:\s+(\w+) time =\s*([0-9.]+) ms(?: /\s*(\d+) runs)?")


@contextlib.contextmanager
def captured_stderr(into: list):
    """C code's writes to file descriptor 2 inside the block, appended to `into` as one string."""
    with tempfile.TemporaryFile(mode="w+b") as tmp:
        saved = os.dup(2)
        try:
            os.dup2(tmp.fileno(), 2)
            yield
        finally:
            os.dup2(saved, 2)
            os.close(saved)
            tmp.seek(0)
            into.append(tmp.read().decode("utf-8", "replace"))


def parse_timings(text: str) -> Dict[str, tuple]:
    """{'mel': (ms, runs), 'encode': (ms, runs), ...} from whisper_print_timings' lines."""
    return {m.group(1): (float(m.group(2)), int(m.group(3) or 1)) for m in _TIMING.finditer(text)}


class WhisperCppPeer:
    def __init__(self, ggml_path: str, threads: int, ftype: str = "f16"):
        from pywhispercpp.model import Model

        self.label = f"whisper.cpp-{ftype}"
        log = []
        with captured_stderr(log):  # the loader's report; kept for the JSON
            self.model = Model(
                ggml_path, n_threads=threads, print_progress=False, print_realtime=False, print_timestamps=False
            )
        self.load_log = log[0]
        self.threads = threads

    def _params(self, long_form: bool) -> Dict:
        common = dict(
            n_threads=self.threads,
            language="en",
            translate=False,
            print_progress=False,
            print_realtime=False,
            print_timestamps=False,
            token_timestamps=False,
            greedy={"best_of": 1},
            beam_search={"beam_size": -1, "patience": -1.0},
        )
        if long_form:
            # whisper.cpp's defaults (timestamps, temperature fallback by 0.2, thresholds: entropy 2.4,
            # log-probability -1.0, no-speech 0.6), greedy, conditioned on the previous text
            # (no_context=False, as openai-whisper; pywhispercpp's own default is True).
            return dict(
                common,
                no_context=False,
                no_timestamps=False,
                single_segment=False,
                temperature=0.0,
                temperature_inc=0.2,
            )
        # One window, greedy at temperature 0 without fallback or timestamps, as ckw's short path.
        return dict(
            common, no_context=True, no_timestamps=True, single_segment=True, temperature=0.0, temperature_inc=0.0
        )

    def run(self, clip) -> Dict:
        import _pywhispercpp as pw

        params = self._params(clip.long_form)
        pw.whisper_reset_timings(self.model._ctx)
        t0 = time.perf_counter()
        segments = self.model.transcribe(clip.audio, **params)
        total = 1000 * (time.perf_counter() - t0)
        log = []
        with captured_stderr(log):
            self.model.print_timings()
        t = parse_timings(log[0])
        windows = max(t["encode"][1], 1)
        return {
            "text": " ".join(s.text.strip() for s in segments),
            "tokens": self._text_tokens(),
            "windows": t["encode"][1],
            "decode_steps": t["decode"][1],
            "stages": {
                "frontend": t["mel"][0],
                "encoder": t["encode"][0] / windows,
                "prefill": (t["batchd"][0] + t["prompt"][0]) / windows,
                "decode_per_token": t["decode"][0] / max(t["decode"][1], 1),
                "total": total,
            },
        }

    def _text_tokens(self) -> int:
        """Text tokens of the last transcription's segments (timestamps and special tokens left out)."""
        import _pywhispercpp as pw

        ctx = self.model._ctx
        eot = pw.whisper_token_eot(ctx)
        return sum(
            1
            for i in range(pw.whisper_full_n_segments(ctx))
            for j in range(pw.whisper_full_n_tokens(ctx, i))
            if pw.whisper_full_get_token_id(ctx, i, j) < eot
        )

    def close(self) -> None:
        del self.model
