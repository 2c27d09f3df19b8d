"""openai-whisper (PyTorch, CPU) as the parity oracle, loaded with the very same converted weights."""

import functools
import io
import time

import numpy as np
import soundfile
import torch
import whisper

from models.whisper.checkpoint.packed import runfiles_checkpoint_dir
from models.whisper.reference.openai_whisper_ref import load_openai_whisper

SAMPLE_RATE = 16000


@functools.lru_cache(maxsize=None)
def model(variant: str) -> "whisper.model.Whisper":
    """The reference model for `variant` (needs data = ["@whisper_<variant>//:checkpoint"]).

    Sets PyTorch to one thread: decode steps are small ops that run slower on two threads of
    this two-core machine than on one, and one thread lets Bazel run two tests at once."""
    torch.set_num_threads(1)
    return load_openai_whisper(runfiles_checkpoint_dir(variant))


def read_audio_16k(path: str) -> np.ndarray:
    """Mono float32 at 16 kHz without ffmpeg (the reference's own loader needs it)."""
    with open(path, "rb") as f:
        samples, rate = soundfile.read(io.BytesIO(f.read()), dtype="float32", always_2d=True)
    if rate != SAMPLE_RATE:
        raise ValueError(f"{path}: {rate} Hz; the token-equality sets are 16 kHz only")
    return samples.mean(axis=1).astype(np.float32)


def log_mel(m: "whisper.model.Whisper", audio: np.ndarray) -> torch.Tensor:
    """Log-mel of one 30 s window, [n_mels, 3000]: the audio padded or cut to 30 s first, as
    `whisper.decode()` users do (`transcribe()` instead slices the log-mel of the whole
    recording, which differs slightly near the end of the audio)."""
    return whisper.log_mel_spectrogram(whisper.pad_or_trim(torch.from_numpy(audio)), n_mels=m.dims.n_mels)


def encoder_memory(m: "whisper.model.Whisper", mel: torch.Tensor) -> np.ndarray:
    """The encoder output for one window, float32 [n_audio_ctx, n_audio_state]."""
    with torch.no_grad():
        return m.encoder(mel[None].float())[0].numpy()


def greedy_tokens(variant: str, audio: np.ndarray, language: str = "en", task: str = "transcribe"):
    """openai-whisper's DecodingResult for one 30 s window: greedy, fp32, no timestamps."""
    m = model(variant)
    options = whisper.DecodingOptions(
        fp16=False, temperature=0.0, without_timestamps=True,
        language=language if m.is_multilingual else "en", task=task,
    )
    return whisper.decode(m, log_mel(m, audio), options)


def transcribe_recording(variant: str, audio: np.ndarray, **options):
    """whisper.transcribe() on the reference model (fp16=False, quiet) with `options`, and every
    decode() call it made, in order: (result, [(DecodingOptions, DecodingResult), ...])."""
    m = model(variant)
    calls = []

    def recording_decode(mel, decode_options):
        result = whisper.decode(m, mel, decode_options)
        calls.append((decode_options, result))
        return result

    m.decode = recording_decode  # an instance attribute: whisper.transcribe calls model.decode
    try:
        return whisper.transcribe(m, audio, fp16=False, verbose=None, **options), calls
    finally:
        del m.decode


def timed_transcribe(variant: str, audio: np.ndarray, threads: int, **options):
    """whisper.transcribe() on the reference model (fp16=False, quiet) on `threads` torch threads,
    the model loaded before the clock starts: (result, wall seconds)."""
    torch.set_num_threads(threads)
    m = model(variant)
    t0 = time.perf_counter()
    result = whisper.transcribe(m, audio, fp16=False, verbose=None, **options)
    return result, time.perf_counter() - t0
