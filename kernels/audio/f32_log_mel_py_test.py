"""ckw_f32_log_mel against openai-whisper's normalisation written in torch on the same power."""

import ctypes

import numpy as np
import pytest
import torch
import whisper

from kernels.audio import audio_testlib as lib
from kernels.common import tolerance


def whisper_log_mel(power: np.ndarray, filters: np.ndarray) -> np.ndarray:
    """The tail of whisper.audio.log_mel_spectrogram, verbatim."""
    mel_spec = torch.from_numpy(filters) @ torch.from_numpy(power)
    log_spec = torch.clamp(mel_spec, min=1e-10).log10()
    log_spec = torch.maximum(log_spec, log_spec.max() - 8.0)
    return ((log_spec + 4.0) / 4.0).numpy()


@pytest.mark.parametrize("n_mels", [80, 128])
@pytest.mark.parametrize("frames", [1, 257, 3000])
def test_matches_whisper(n_mels, frames):
    rng = np.random.default_rng(frames)
    power = (10.0 ** rng.uniform(-9, 4, (201, frames))).astype(np.float32)
    filters = whisper.audio.mel_filters("cpu", n_mels).numpy()
    got = lib.log_mel(power, filters)
    tolerance.assert_close(got, whisper_log_mel(power, filters), c=2.0, k=201, what=f"log_mel {n_mels}x{frames}")


def test_two_pass_api_matches_one_shot():
    rng = np.random.default_rng(5)
    power = (10.0 ** rng.uniform(-12, 3, (201, 1000))).astype(np.float32)
    filters = lib.mel_filters(80)
    whole = lib.log_mel(power, filters)
    y = np.empty((80, 1000), np.float32)
    running = ctypes.c_float(-np.inf)
    for t0 in range(0, 1000, 300):
        nt = min(300, 1000 - t0)
        chunk = np.ascontiguousarray(power[:, t0 : t0 + nt])
        out = np.empty((80, nt), np.float32)
        lib.LIB.ckw_f32_log_mel_project(out, nt, chunk, nt, filters, 80, 201, nt, ctypes.byref(running))
        y[:, t0 : t0 + nt] = out
    lib.LIB.ckw_f32_log_mel_normalize(y, 1000, 80, 1000, running.value)
    np.testing.assert_array_equal(y, whole)
    # 15 decades of power: the quietest bands sit on the floor, 8 decades (2.0 after /4)
    # below the loudest.
    assert abs(float(whole.min()) - (float(whole.max()) - 2.0)) < 1e-6
