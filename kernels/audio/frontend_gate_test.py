"""Gate for the audio frontend: the whole C chain against openai-whisper on jfk.wav.

C: WAV bytes -> decode -> resample (identity at 16 kHz) -> pad/truncate -> STFT power ->
log-mel. Reference: whisper.audio.log_mel_spectrogram on samples read by Python's wave
module (whisper.load_audio needs ffmpeg; for 16-bit PCM it yields the same numbers).
Thresholds: max abs error <= 5e-4 and RMSE <= 1e-5, for the 30 s window
(pad_or_trim) and for the whole recording padded by N_SAMPLES as whisper.transcribe does.
"""

import ctypes
import io
import wave

import numpy as np
import pytest
import torch
import whisper
from whisper.audio import N_SAMPLES

from kernels.audio import audio_testlib as lib

MAX_ABS = 5e-4
RMSE = 1e-5


def _jfk():
    data = lib.read_test_audio("jfk.wav")
    with wave.open(io.BytesIO(data)) as w:
        audio = np.frombuffer(w.readframes(w.getnframes()), np.int16).astype(np.float32) / 32768.0
    return data, audio


@pytest.mark.parametrize("n_mels", [80, 128])
def test_30s_window(n_mels):
    data, audio = _jfk()
    got = lib.frontend(data, n_samples=N_SAMPLES, n_mels=n_mels)
    ref = whisper.audio.log_mel_spectrogram(torch.from_numpy(whisper.pad_or_trim(audio)), n_mels=n_mels).numpy()
    assert got.shape == ref.shape == (n_mels, 3000)
    max_abs, rmse = lib.report(f"jfk 30 s window, {n_mels} mels", got, ref)
    assert max_abs <= MAX_ABS and rmse <= RMSE


def test_whole_recording_long_form():
    data, audio = _jfk()
    got = lib.frontend(data, extra_padding=N_SAMPLES)
    ref = whisper.audio.log_mel_spectrogram(torch.from_numpy(audio), padding=N_SAMPLES).numpy()
    assert got.shape == ref.shape == (80, (len(audio) + N_SAMPLES) // 160)
    max_abs, rmse = lib.report("jfk whole recording + N_SAMPLES", got, ref)
    assert max_abs <= MAX_ABS and rmse <= RMSE


def test_streamed_long_form_is_identical():
    # A long recording in chunks of frames (STFT chunk -> log-mel pass 1 with a running max),
    # then one normalisation pass: bit-identical to the one-shot chain.
    _, audio = _jfk()
    long_audio = np.concatenate([audio] * 3)  # 33 s: more than one 30 s window
    x = lib.pad_or_truncate(long_audio, len(long_audio) + N_SAMPLES)
    frames = len(x) // 160
    filters = lib.mel_filters(80)
    window, twiddles = lib.stft_tables()
    y = np.empty((80, frames), np.float32)
    running = ctypes.c_float(-np.inf)
    chunk = 1000
    for t0 in range(0, frames, chunk):
        nt = min(chunk, frames - t0)
        power = np.empty((201, nt), np.float32)
        lib.LIB.ckw_f32_stft_power(power, nt, x, len(x), t0, nt, window, twiddles)
        out = np.empty((80, nt), np.float32)
        lib.LIB.ckw_f32_log_mel_project(out, nt, power, nt, filters, 80, 201, nt, ctypes.byref(running))
        y[:, t0 : t0 + nt] = out
    lib.LIB.ckw_f32_log_mel_normalize(y, frames, 80, frames, running.value)
    whole = lib.log_mel(lib.stft_power(x), filters)
    np.testing.assert_array_equal(y, whole)
    ref = whisper.audio.log_mel_spectrogram(torch.from_numpy(long_audio), padding=N_SAMPLES).numpy()
    max_abs, rmse = lib.report("33 s streamed + N_SAMPLES", y, ref)
    assert max_abs <= MAX_ABS and rmse <= RMSE
