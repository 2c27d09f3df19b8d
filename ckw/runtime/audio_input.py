"""Audio file -> WAV bytes for the C frontend.

WAV goes to the frontend untouched (it parses, downmixes and resamples itself). Other
containers (flac, ogg/opus, mp3, ...) are decoded to PCM with `soundfile` and wrapped as an
in-memory float32 WAV, so every input takes the same path through the generated frontend.
"""

import errno
import io
import struct

import numpy as np

WAVE_FORMAT_IEEE_FLOAT = 3
# Containers whose header states the exact frame count: fewer decoded frames mean a cut-off file.
_EXACT_FRAME_COUNT = {"FLAC"}


class AudioInputError(ValueError):
    """`reason`: what is wrong with the file, without its name (`path`); str() joins both."""

    def __init__(self, path: str, reason: str):
        super().__init__(f"{path}: {reason}")
        self.path = path
        self.reason = reason


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


def _unreadable(path: str, e: OSError) -> AudioInputError:
    """The one-line reason a file cannot be opened or read."""
    if isinstance(e, FileNotFoundError):
        return AudioInputError(path, "no such file; pass an existing audio file")
    if isinstance(e, IsADirectoryError):
        return AudioInputError(path, "is a directory; pass an audio file")
    if isinstance(e, PermissionError):
        return AudioInputError(path, "permission denied; make the file readable (chmod +r) or copy it")
    return AudioInputError(path, f"cannot be read ({e.strerror or errno.errorcode.get(e.errno, e)})")


def read_head(path: str, n: int) -> bytes:
    """The first n bytes (fewer for a shorter file); AudioInputError for an empty or unreadable one."""
    try:
        with open(path, "rb") as f:
            data = f.read(n)
    except OSError as e:
        raise _unreadable(path, e) from None
    if not data:
        raise AudioInputError(path, "the file is empty")
    return data


def read_file(path: str) -> bytes:
    """The file's bytes; AudioInputError with a one-line reason when it cannot be read."""
    return read_head(path, -1)


def decode_other(path: str, data: bytes) -> bytes:
    """A non-WAV container decoded with soundfile, as float32 WAV bytes."""
    import soundfile  # only needed for non-WAV containers

    try:
        info = soundfile.info(io.BytesIO(data))
    except Exception as e:  # soundfile raises LibsndfileError/RuntimeError/TypeError by format
        reason = str(e).split(": ", 1)[-1]
        raise AudioInputError(
            path, f"neither a RIFF/WAVE file nor a format soundfile can decode ({reason}); convert it to WAV"
        ) from e
    try:
        samples, rate = soundfile.read(io.BytesIO(data), dtype="float32", always_2d=True)
    except Exception as e:
        reason = str(e).split(": ", 1)[-1].strip()
        raise AudioInputError(
            path, f"a {info.format} file that does not decode to its end ({reason}); it is truncated or damaged"
        ) from e
    if info.format in _EXACT_FRAME_COUNT and 0 < samples.shape[0] < info.frames:
        raise AudioInputError(
            path,
            f"decodes to {samples.shape[0]} of the {info.frames} frames its {info.format} "
            "header declares; the file is truncated",
        )
    if samples.shape[0] == 0:
        raise AudioInputError(path, "decodes to no audio samples")
    return float_wav_bytes(samples, int(rate))


def load_audio_bytes(path: str) -> bytes:
    """Reads `path`; returns WAV bytes. Raises AudioInputError with a one-line reason."""
    data = read_file(path)
    return data if is_wav(data) else decode_other(path, data)
