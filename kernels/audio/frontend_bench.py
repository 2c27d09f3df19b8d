"""The C frontend against openai-whisper's log_mel_spectrogram (torch, CPU), same run.

Smoke test by default (one call of each, results compared); with --benchmark, a timing
table with ratios: `./bazelw run //kernels/audio:frontend_bench -- --benchmark`.
"""

import io
import sys
import time
import wave

import numpy as np
import torch
import whisper
from whisper.audio import N_SAMPLES

from kernels.audio import audio_testlib as lib


def best_of(fn, full: bool) -> float:
    if not full:
        t = time.perf_counter()
        fn()
        return time.perf_counter() - t
    fn()  # warm-up
    times = []
    for _ in range(7):
        t = time.perf_counter()
        fn()
        times.append(time.perf_counter() - t)
    return min(times)


def main() -> int:
    full = "--benchmark" in sys.argv[1:]
    cases = [
        ("jfk.wav", "30 s window"),
        ("jfk.wav", "whole + 30 s pad"),
        ("formats/michaelandsickmichael.wav", "whole + 30 s pad"),
    ]
    rows = []
    for relpath, mode in cases:
        data = lib.read_test_audio(relpath)
        with wave.open(io.BytesIO(data)) as w:
            ch = w.getnchannels()
            pcm = np.frombuffer(w.readframes(w.getnframes()), np.int16).reshape(-1, ch)
        audio = (pcm.astype(np.float64).sum(axis=1) / (32768.0 * ch)).astype(np.float32)
        if mode == "30 s window":

            def peer(audio=audio):
                return whisper.audio.log_mel_spectrogram(torch.from_numpy(whisper.pad_or_trim(audio))).numpy()

            def ours(data=data):
                return lib.frontend(data, n_samples=N_SAMPLES)
        else:

            def peer(audio=audio):
                return whisper.audio.log_mel_spectrogram(torch.from_numpy(audio), padding=N_SAMPLES).numpy()

            def ours(data=data):
                return lib.frontend(data, extra_padding=N_SAMPLES)

        max_abs, _ = lib.report(f"{relpath} {mode}", ours(), peer())
        if max_abs > 5e-4:
            print(f"FAILED: {relpath} {mode}: C frontend differs from whisper by {max_abs:.3g}")
            return 1
        t_peer, t_ours = best_of(peer, full), best_of(ours, full)
        rows.append((f"{relpath} ({len(audio) / 16000:.1f} s), {mode}", t_peer, t_ours))
    if full:
        print(f"torch threads: {torch.get_num_threads()}; C frontend: 1 thread, WAV bytes in (whisper: samples in)")
        print(f"{'case':58s} {'whisper ms':>11s} {'ckw ms':>9s} {'speedup':>8s}")
        for what, t_peer, t_ours in rows:
            print(f"{what:58s} {1e3 * t_peer:11.2f} {1e3 * t_ours:9.2f} {t_peer / t_ours:7.1f}x")
    else:
        print("frontend_bench smoke test passed (run with --benchmark for timings)")
    return 0


if __name__ == "__main__":
    sys.exit(main())
