"""ckw_f32_pad_or_truncate against whisper.audio.pad_or_trim (numpy path)."""

import numpy as np
import pytest
import whisper

from kernels.audio import audio_testlib as lib


@pytest.mark.parametrize("n_in", [0, 1, 159, 176000, 480000, 480001, 600000])
def test_matches_whisper(n_in):
    x = np.random.default_rng(n_in).uniform(-1, 1, n_in).astype(np.float32)
    got = lib.pad_or_truncate(x, whisper.audio.N_SAMPLES)
    ref = whisper.audio.pad_or_trim(x)
    assert got.dtype == ref.dtype == np.float32
    np.testing.assert_array_equal(got, ref)


def test_other_lengths():
    x = np.arange(1, 11, dtype=np.float32)
    np.testing.assert_array_equal(lib.pad_or_truncate(x, 4), x[:4])
    np.testing.assert_array_equal(lib.pad_or_truncate(x, 13), np.concatenate([x, np.zeros(3, np.float32)]))
    assert lib.pad_or_truncate(x, 0).shape == (0,)
