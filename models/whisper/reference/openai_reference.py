"""openai-whisper (PyTorch, CPU) as the parity oracle, loaded with the very same converted weights."""

import functools
import io
import time

import numpy as np
import soundfile
import torch
import whisper

from ckw.checkpoints.packed import runfiles_checkpoint_dir
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


def padded_log_mel(m: "whisper.model.Whisper", audio: np.ndarray) -> torch.Tensor:
    """Log-mel of the whole recording with 30 s of silence after it, [n_mels, frames]: what
    `transcribe()` slices its windows from (and what the generated frontend computes)."""
    return whisper.log_mel_spectrogram(torch.from_numpy(audio), n_mels=m.dims.n_mels, padding=whisper.audio.N_SAMPLES)


def first_window(m: "whisper.model.Whisper", audio: np.ndarray) -> torch.Tensor:
    """The first 30 s window of the padded log-mel, [n_mels, 3000]: transcribe()'s first window."""
    return padded_log_mel(m, audio)[:, : whisper.audio.N_FRAMES]


def decode_window(variant: str, audio: np.ndarray, **options):
    """openai-whisper's DecodingResult for the first 30 s window of the padded log-mel: fp32,
    temperature 0, without timestamps; `options` as whisper.DecodingOptions takes them
    (language, task, beam_size, patience, length_penalty)."""
    m = model(variant)
    options = whisper.DecodingOptions(fp16=False, temperature=0.0, without_timestamps=True, **options)
    return whisper.decode(m, first_window(m, audio), options)


def detect_language(variant: str, audio: np.ndarray):
    """Language detection as `transcribe()` calls it (detect_language on the first 30 s of the
    padded log-mel): (language, {language: probability})."""
    m = model(variant)
    mel = whisper.audio.pad_or_trim(padded_log_mel(m, audio), whisper.audio.N_FRAMES)
    with torch.no_grad():
        _, probs = m.detect_language(mel)
    return max(probs, key=probs.get), probs


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


def decoding_result_json(result) -> dict:
    """A DecodingResult's fields as JSON values (all but the audio features)."""
    return {
        "language": result.language,
        "tokens": list(result.tokens),
        "text": result.text,
        "avg_logprob": result.avg_logprob,
        "no_speech_prob": result.no_speech_prob,
        "temperature": result.temperature,
        "compression_ratio": result.compression_ratio,
    }
