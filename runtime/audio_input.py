"""Audio file -> WAV bytes for the C frontend.

WAV goes to the frontend untouched (it parses, downmixes and resamples itself). Other
containers (flac, ogg/opus, mp3, ...) are decoded to PCM with `soundfile` and wrapped as an
in-memory float32 WAV, so every input takes the same path through the generated frontend.
"""

import io
import os
import struct

import numpy as np

WAVE_FORMAT_IEEE_FLOAT = 3


class AudioInputError(ValueError):
    pass


def is_wav(data: bytes) -> bool:
    return len(data) >= 12 and data[:4] == b"RIFF" and data[8:12] == b"WAVE"


def float_wav_bytes(samples: np.ndarray, sample_rate: int) -> bytes:
    """A WAVE_FORMAT_IEEE_FLOAT file holding `samples` [frames] or [frames, channels]."""
    pcm = np.ascontiguousarray(samples, dtype="<f4")
    channels = 1 if pcm.ndim == 1 else pcm.shape[1]
    payload = pcm.tobytes()
    block = 4 * channels
    fmt = struct.pack("<HHIIHH", WAVE_FORMAT_IEEE_FLOAT, channels, sample_rate, sample_rate * block, block, 32)
    body = b"WAVE" + b"fmt " + struct.pack("<I", len(fmt)) + fmt + b"data" + struct.pack("<I", len(payload)) + payload
    return b"RIFF" + struct.pack("<I", len(body)) + body


def load_audio_bytes(path: str) -> bytes:
    """Reads `path`; returns WAV bytes. Raises AudioInputError with a one-line reason."""
    if not os.path.isfile(path):
        raise AudioInputError(f"{path}: no such file; pass an existing audio file to --wav")
    with open(path, "rb") as f:
        data = f.read()
    if not data:
        raise AudioInputError(f"{path}: the file is empty")
    if is_wav(data):
        return data
    import soundfile  # only needed for non-WAV containers

    try:
        samples, rate = soundfile.read(io.BytesIO(data), dtype="float32", always_2d=True)
    except Exception as e:  # soundfile raises LibsndfileError/RuntimeError/TypeError by format
        reason = str(e).split(": ", 1)[-1]
        raise AudioInputError(
            f"{path}: neither a RIFF/WAVE file nor a format soundfile can decode ({reason}); convert it to WAV"
        ) from e
    if samples.shape[0] == 0:
        raise AudioInputError(f"{path}: decodes to no audio samples")
    return float_wav_bytes(samples, int(rate))
