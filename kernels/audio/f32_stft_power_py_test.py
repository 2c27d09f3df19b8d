"""ckw_f32_stft_power against openai-whisper's torch.stft power and numpy's float64 rfft."""

import numpy as np
import pytest
import torch

from kernels.audio import audio_testlib as lib
from kernels.common import tolerance

TOLERANCE_C = 1.0  # f32_stft_power.json contract.tolerance_c (K = 400)


def whisper_power(x: np.ndarray) -> np.ndarray:
    """The exact expression in whisper.audio.log_mel_spectrogram."""
    stft = torch.stft(torch.from_numpy(x), 400, 160, window=torch.hann_window(400), return_complex=True)
    return (stft[..., :-1].abs() ** 2).numpy()


def numpy_power(x: np.ndarray) -> np.ndarray:
    xp = np.pad(x.astype(np.float64), 200, mode="reflect")
    frames = np.lib.stride_tricks.sliding_window_view(xp, 400)[::160][: len(x) // 160]
    window = 0.5 - 0.5 * np.cos(2 * np.pi * np.arange(400) / 400)
    return (np.abs(np.fft.rfft(frames * window, axis=1)) ** 2).T


@pytest.mark.parametrize("n", [201, 400, 401, 16000 + 37, 480000])
def test_random_signals(n):
    x = np.random.default_rng(n).uniform(-1, 1, n).astype(np.float32)
    got = lib.stft_power(x)
    assert got.shape == (201, n // 160)
    tolerance.assert_close(got, numpy_power(x).astype(np.float32), c=TOLERANCE_C, k=400, what=f"vs numpy n={n}")
    # torch's float32 FFT has its own rounding, so allow both sides' error.
    tolerance.assert_close(got, whisper_power(x), c=2 * TOLERANCE_C, k=400, what=f"vs torch n={n}")


def test_jfk_window():
    audio, _ = lib.wav_decode(lib.read_test_audio("jfk.wav"))
    x = lib.pad_or_truncate(audio, 480000)
    got = lib.stft_power(x)
    tolerance.assert_close(got, whisper_power(x), c=2 * TOLERANCE_C, k=400, what="jfk vs torch")


def test_chunks_match_one_call():
    x = np.random.default_rng(3).uniform(-1, 1, 40000).astype(np.float32)
    whole = lib.stft_power(x)
    parts = [lib.stft_power(x, n_frames=min(37, 250 - t0), frame_begin=t0) for t0 in range(0, 250, 37)]
    np.testing.assert_array_equal(np.concatenate(parts, axis=1), whole)
