"""ckw_f32_mel_filters against the filterbanks openai-whisper ships (assets/mel_filters.npz)."""

import os

import numpy as np
import pytest
import whisper

from kernels.audio import audio_testlib as lib
from kernels.common import tolerance


@pytest.mark.parametrize("n_mels", [80, 128])
def test_matches_whisper_npz(n_mels):
    path = os.path.join(os.path.dirname(whisper.audio.__file__), "assets", "mel_filters.npz")
    with np.load(path) as f:
        ref = f[f"mel_{n_mels}"]
    got = lib.mel_filters(n_mels)
    assert got.shape == ref.shape == (n_mels, 201)
    tolerance.assert_close(got, ref, c=1.0, k=1, what=f"mel_{n_mels}")
    # librosa's float32 steps are reproduced, so (libm permitting) the bits agree.
    exact = float(np.mean(got == ref))
    print(f"mel_{n_mels}: {exact:.2%} bit-exact")
    assert exact >= 0.99
