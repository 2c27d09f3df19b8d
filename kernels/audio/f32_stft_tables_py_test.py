"""ckw_f32_stft_tables against torch.hann_window(400) and numpy's roots of unity."""

import numpy as np
import torch

from kernels.audio import audio_testlib as lib
from kernels.common import tolerance


def test_window_matches_torch():
    window, _ = lib.stft_tables()
    ref = torch.hann_window(400).numpy()  # periodic, as openai-whisper uses it
    # torch evaluates cos in float32; ours is rounded from double: ulp-level differences.
    tolerance.assert_close(window, ref, c=2.0, k=1, what="hann window vs torch")
    exact = 0.5 - 0.5 * np.cos(2 * np.pi * np.arange(400) / 400)
    np.testing.assert_array_equal(window, exact.astype(np.float32))


def test_twiddles_are_roots_of_unity():
    _, twiddles = lib.stft_tables()
    ref = np.exp(-2j * np.pi * np.arange(400) / 400)
    got = twiddles[0::2].astype(np.float64) + 1j * twiddles[1::2]
    assert np.max(np.abs(got - ref)) <= 0.5 * np.finfo(np.float32).eps * 1.0001
