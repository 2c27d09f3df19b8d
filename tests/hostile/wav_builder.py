"""WAV files built byte by byte, valid or deliberately broken, for the hostile-input tests and the
fuzzers' seed corpus (nothing here is committed audio: every file is made from numbers)."""

import struct

import numpy as np

PCM, IEEE_FLOAT = 1, 3


def fmt_chunk(tag: int, channels: int, rate: int, bits: int, block_align: int | None = None) -> bytes:
    block = channels * (bits // 8) if block_align is None else block_align
    body = struct.pack("<HHIIHH", tag, channels, rate, rate * block, block, bits)
    return b"fmt " + struct.pack("<I", len(body)) + body


def chunk(tag: bytes, body: bytes, declared: int | None = None) -> bytes:
    """A RIFF chunk; `declared` overrides the size field (a lie about the body's length)."""
    size = len(body) if declared is None else declared
    return tag + struct.pack("<I", size) + body + (b"\0" if len(body) % 2 else b"")


def riff(*chunks: bytes) -> bytes:
    body = b"WAVE" + b"".join(chunks)
    return b"RIFF" + struct.pack("<I", len(body)) + body


def wav(
    samples: np.ndarray,
    rate: int,
    bits: int = 16,
    tag: int = PCM,
    declared_data: int | None = None,
    extra_chunks: tuple = (),
) -> bytes:
    """`samples` [frames] or [frames, channels] in [-1, 1) as a WAV of the given sample type:
    PCM 8 (unsigned), 16, 24 or 32 bits, or IEEE float 32 or 64 bits."""
    x = np.asarray(samples, dtype=np.float64)
    x = x[:, None] if x.ndim == 1 else x
    channels = x.shape[1]
    if tag == IEEE_FLOAT:
        data = x.astype("<f4" if bits == 32 else "<f8").tobytes()
    elif bits == 8:
        data = np.clip(np.round(x * 128 + 128), 0, 255).astype(np.uint8).tobytes()
    else:
        scale = 2.0 ** (bits - 1)
        ints = np.clip(np.round(x * scale), -scale, scale - 1).astype("<i4")
        if bits == 32:
            data = ints.tobytes()
        else:  # the low `bits` of each little-endian int32
            data = ints.view(np.uint8).reshape(-1, 4)[:, : bits // 8].tobytes()
    return riff(fmt_chunk(tag, channels, rate, bits), *extra_chunks, chunk(b"data", data, declared_data))


def pcm16(path: str) -> tuple[np.ndarray, int]:
    """The samples of a mono 16-bit PCM WAV as float64 in [-1, 1), and its rate."""
    import wave

    with wave.open(path, "rb") as w:
        assert (w.getnchannels(), w.getsampwidth()) == (1, 2), path
        pcm = np.frombuffer(w.readframes(w.getnframes()), "<i2")
        return pcm.astype(np.float64) / 32768.0, w.getframerate()


def upsample(x: np.ndarray, factor: int) -> np.ndarray:
    """Band-limited upsampling by an integer factor (zero-padded spectrum): the same audio at
    `factor` times the rate."""
    n = len(x)
    spectrum = np.fft.rfft(x)
    padded = np.zeros(n * factor // 2 + 1, dtype=complex)
    padded[: len(spectrum)] = spectrum
    return np.fft.irfft(padded, n * factor) * factor
