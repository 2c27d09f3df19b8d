"""ckw_f32_resample against a numpy float64 windowed-sinc written from the formula.

The reference evaluates y[n] = sum_k x[k] fc h(fc (t_n - k)) directly with numpy's sinc and
i0 (no phase table), on the shipped 8 kHz file, the stereo file's downmix, and synthetic
signals at common rates; the filter's passband gain and aliasing rejection are checked on
tones.
"""

import numpy as np
import pytest

from kernels.audio import audio_testlib as lib
from kernels.common import tolerance

ZERO_CROSSINGS = 32
ROLLOFF = 0.92
BETA = 8.0
TOLERANCE_C = 1.0  # f32_resample.json contract.tolerance_c


def _params(sr_in, sr_out):
    fc = ROLLOFF * min(1.0, sr_out / sr_in)
    half = int(np.floor(ZERO_CROSSINGS / fc))
    return fc, half, 2 * half + 2


def reference(x, sr_in, sr_out, indices):
    """Outputs y[indices] in float64."""
    fc, half, _ = _params(sr_in, sr_out)
    x = x.astype(np.float64)
    out = np.empty(len(indices))
    for start in range(0, len(indices), 2048):
        n = np.asarray(indices[start : start + 2048], np.int64)
        t = n * sr_in / sr_out
        k = np.floor(t).astype(np.int64)[:, None] + np.arange(-half - 1, half + 3)[None, :]
        u = fc * (t[:, None] - k)
        r = np.clip(1.0 - (u / ZERO_CROSSINGS) ** 2, 0.0, None)
        h = np.where(np.abs(u) < ZERO_CROSSINGS, np.sinc(u) * np.i0(BETA * np.sqrt(r)) / np.i0(BETA), 0.0)
        xs = np.where((k >= 0) & (k < len(x)), x[np.clip(k, 0, len(x) - 1)], 0.0)
        out[start : start + 2048] = np.sum(xs * fc * h, axis=1)
    return out


def _check(x, sr_in, sr_out, what):
    y = lib.resample(x, sr_in, sr_out)
    assert len(y) == -(-len(x) * sr_out // sr_in)
    n = len(y)
    idx = np.unique(
        np.concatenate(
            [np.arange(0, min(n, 3000)), np.arange(n // 2, min(n, n // 2 + 3000)), np.arange(max(0, n - 3000), n)]
        )
    )
    ref = reference(x, sr_in, sr_out, idx)
    tolerance.assert_close(y[idx], ref.astype(np.float32), c=TOLERANCE_C, k=_params(sr_in, sr_out)[2], what=what)
    return y


def test_osr_8k_file():
    x, sr = lib.wav_decode(lib.read_test_audio("formats/OSR_us_000_0034_8k.wav"))
    assert sr == 8000
    y = _check(x, 8000, 16000, "OSR 8k -> 16k")
    # Upsampling by 2 keeps the original samples up to the passband edge (0.85 x 4 kHz): the
    # even outputs differ from the input only by what lies above it.
    diff = np.fft.rfft(y[0::2].astype(np.float64) - x)
    spec = np.fft.rfft(x.astype(np.float64))
    band = np.fft.rfftfreq(len(x), 1 / 8000) < 0.85 * 4000
    assert np.sum(np.abs(diff[band]) ** 2) < 1e-6 * np.sum(np.abs(spec[band]) ** 2)


def test_stereo_downmix_file():
    data = lib.read_test_audio("formats/stereo_diarization.wav")
    x, sr = lib.wav_decode(data)
    assert sr == 16000
    np.testing.assert_array_equal(lib.resample(x, 16000, 16000), x)  # identity is a copy
    _check(x, 16000, 8000, "stereo downmix 16k -> 8k")
    _check(x, 16000, 44100, "stereo downmix 16k -> 44.1k")


@pytest.mark.parametrize("sr_in", [44100, 48000, 22050, 11025, 32000, 12345, 96000])
def test_synthetic_rates(sr_in):
    rng = np.random.default_rng(sr_in)
    n = sr_in // 2 + 7
    t = np.arange(n) / sr_in
    x = (0.5 * np.sin(2 * np.pi * (300 + 4000 * t) * t) + 0.1 * rng.standard_normal(n)).astype(np.float32)
    _check(x, sr_in, 16000, f"{sr_in} -> 16000")


def _interior_rms(y):
    mid = y[len(y) // 4 : 3 * len(y) // 4].astype(np.float64)
    return np.sqrt(np.mean(mid**2))


@pytest.mark.parametrize("sr_in", [44100, 48000, 8000])
def test_passband_tone(sr_in):
    t = np.arange(sr_in) / sr_in
    y = lib.resample(np.sin(2 * np.pi * 1000 * t).astype(np.float32), sr_in, 16000)
    ideal = np.sin(2 * np.pi * 1000 * np.arange(len(y)) / 16000)
    mid = slice(len(y) // 4, 3 * len(y) // 4)
    assert np.max(np.abs(y[mid] - ideal[mid])) < 2e-3


@pytest.mark.parametrize("sr_in, tone", [(48000, 9000), (44100, 12000), (48000, 20000)])
def test_alias_rejection(sr_in, tone):
    # Above the output Nyquist: must vanish, not fold back (>= 80 dB down).
    t = np.arange(sr_in) / sr_in
    y = lib.resample(np.sin(2 * np.pi * tone * t).astype(np.float32), sr_in, 16000)
    assert _interior_rms(y) < 1e-4 * np.sqrt(0.5)


def test_errors():
    with pytest.raises(lib.AudioError, match="sample rate outside") as e:
        lib.resample(np.zeros(10, np.float32), 0, 16000)
    assert e.value.code == -2
