"""The audio kernels through ctypes (declared from their maps) and test-data paths, shared by the
audio py_tests."""

import ctypes
import os

import numpy as np

from kernels.common import kernel_testing as kt

_F32 = np.ctypeslib.ndpointer(np.float32, flags="C_CONTIGUOUS")
_I64 = ctypes.c_int64
_P_I64 = ctypes.POINTER(ctypes.c_int64)

N_FFT = 400
HOP = 160
N_FREQ = 201


def runfile(*parts: str) -> str:
    """Path of a runfile under the test's runfiles tree (workspace `ckw`)."""
    root = os.environ.get("TEST_SRCDIR") or os.environ.get("RUNFILES_DIR")
    if not root:
        raise RuntimeError("TEST_SRCDIR is not set: run this through `./bazelw test`")
    return os.path.join(root, *parts)


def test_audio(relpath: str) -> str:
    """Path of a file of the @test_audio repository (declared in the test's data)."""
    for candidate in (runfile("test_audio", relpath), runfile("ckw", "external", "test_audio", relpath)):
        if os.path.exists(candidate):
            return candidate
    raise FileNotFoundError(f"@test_audio//:{relpath} is not in the runfiles; add it to the test's data")


def read_test_audio(relpath: str) -> bytes:
    with open(test_audio(relpath), "rb") as f:
        return f.read()


def kernel_dir() -> str:
    return runfile("ckw", "kernels", "audio")


class AudioError(RuntimeError):
    def __init__(self, code: int, message: str):
        super().__init__(f"{message} (code {code})")
        self.code = code


class _Library:
    """The audio kernels' entry points, declared from their kernel maps (kernels/common/kernel_testing.py)."""

    def __init__(self):
        for name in (
            "wav_decode",
            "resample",
            "pad_or_truncate",
            "stft_tables",
            "stft_power",
            "mel_filters",
            "log_mel",
        ):
            k = kt.Kernel(f"kernels/audio/f32_{name}.json")
            setattr(self, k.name, k.function())
            for fn_name, fn in k.queries().items():
                setattr(self, fn_name, fn)
            if k.strerror_function:
                setattr(self, k.strerror_function, getattr(kt.Library(k.path), k.strerror_function))
            if name == "log_mel":  # the two halves of the kernel, tested on their own
                self.ckw_f32_log_mel_project = k.lib.ckw_f32_log_mel_project
                self.ckw_f32_log_mel_project.argtypes = [
                    _F32,
                    _I64,
                    _F32,
                    _I64,
                    _F32,
                    _I64,
                    _I64,
                    _I64,
                    ctypes.POINTER(ctypes.c_float),
                ]
                self.ckw_f32_log_mel_project.restype = None
                self.ckw_f32_log_mel_normalize = k.lib.ckw_f32_log_mel_normalize
                self.ckw_f32_log_mel_normalize.argtypes = [_F32, _I64, _I64, _I64, ctypes.c_float]
                self.ckw_f32_log_mel_normalize.restype = None


LIB = _Library()


def wav_strerror(code: int) -> str:
    return LIB.ckw_f32_wav_decode_strerror(code).decode()


def wav_decode(data: bytes):
    """(mono float32 samples, sample rate); raises AudioError with the kernel's message."""
    n, sr = ctypes.c_int64(), ctypes.c_int64()
    rc = LIB.ckw_f32_wav_decode_query(data, len(data), ctypes.byref(n), ctypes.byref(sr))
    if rc != 0:
        raise AudioError(rc, wav_strerror(rc))
    y = np.empty(n.value, np.float32)
    rc = LIB.ckw_f32_wav_decode(y, n.value, data, len(data))
    if rc != 0:
        raise AudioError(rc, wav_strerror(rc))
    return y, sr.value


def resample(x: np.ndarray, sr_in: int, sr_out: int = 16000) -> np.ndarray:
    x = np.ascontiguousarray(x, np.float32)
    n_out = LIB.ckw_f32_resample_output_length(len(x), sr_in, sr_out)
    if n_out < 0:
        raise AudioError(n_out, LIB.ckw_f32_resample_strerror(int(n_out)).decode())
    nbytes = LIB.ckw_f32_resample_scratch_bytes(len(x), sr_in, sr_out)
    scratch = np.empty(max(nbytes, 4) // 4, np.float32)
    y = np.empty(n_out, np.float32)
    rc = LIB.ckw_f32_resample(y, n_out, x, len(x), sr_in, sr_out, scratch, nbytes)
    if rc != 0:
        raise AudioError(rc, LIB.ckw_f32_resample_strerror(rc).decode())
    return y


def pad_or_truncate(x: np.ndarray, n_out: int) -> np.ndarray:
    x = np.ascontiguousarray(x, np.float32)
    y = np.empty(n_out, np.float32)
    LIB.ckw_f32_pad_or_truncate(y, n_out, x, len(x))
    return y


def stft_tables():
    window = np.empty(N_FFT, np.float32)
    twiddles = np.empty(2 * N_FFT, np.float32)
    LIB.ckw_f32_stft_tables(window, twiddles)
    return window, twiddles


def stft_power(x: np.ndarray, n_frames: int | None = None, frame_begin: int = 0) -> np.ndarray:
    """Power [201, n_frames] (default: Whisper's n_samples // 160 frames)."""
    x = np.ascontiguousarray(x, np.float32)
    if n_frames is None:
        n_frames = len(x) // HOP
    window, twiddles = stft_tables()
    power = np.empty((N_FREQ, n_frames), np.float32)
    LIB.ckw_f32_stft_power(power, n_frames, x, len(x), frame_begin, n_frames, window, twiddles)
    return power


def mel_filters(n_mels: int, n_fft: int = N_FFT, sample_rate: int = 16000) -> np.ndarray:
    filters = np.empty((n_mels, n_fft // 2 + 1), np.float32)
    LIB.ckw_f32_mel_filters(filters, n_mels, n_fft, sample_rate)
    return filters


def log_mel(power: np.ndarray, filters: np.ndarray) -> np.ndarray:
    power = np.ascontiguousarray(power, np.float32)
    filters = np.ascontiguousarray(filters, np.float32)
    n_mels, n_freq = filters.shape
    y = np.empty((n_mels, power.shape[1]), np.float32)
    LIB.ckw_f32_log_mel(y, power, filters, n_mels, n_freq, power.shape[1])
    return y


def frontend(wav: bytes, n_samples: int | None = None, extra_padding: int = 0, n_mels: int = 80) -> np.ndarray:
    """The whole C chain: decode -> resample to 16 kHz -> pad/truncate -> STFT -> log-mel.

    n_samples fixes the window (Whisper's pad_or_trim); otherwise the whole recording plus
    extra_padding zeros is used (Whisper's log_mel_spectrogram(audio, padding=...)).
    """
    audio, sr = wav_decode(wav)
    audio = resample(audio, sr, 16000)
    n_out = n_samples if n_samples is not None else len(audio) + extra_padding
    audio = pad_or_truncate(audio, n_out)
    return log_mel(stft_power(audio), mel_filters(n_mels))


def report(what: str, got: np.ndarray, ref: np.ndarray) -> tuple:
    """(max abs error, RMSE) in float64, printed for the test log."""
    err = got.astype(np.float64) - ref.astype(np.float64)
    max_abs = float(np.max(np.abs(err))) if err.size else 0.0
    rmse = float(np.sqrt(np.mean(err**2))) if err.size else 0.0
    print(f"{what}: max_abs {max_abs:.3g} rmse {rmse:.3g} over {err.size} values")
    return max_abs, rmse
