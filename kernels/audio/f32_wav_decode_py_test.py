"""ckw_f32_wav_decode against libsndfile (soundfile) and Python's wave module.

soundfile writes every PCM/float subtype as plain WAV and as WAVE_FORMAT_EXTENSIBLE into
memory; the C decoder must return libsndfile's channel mean. The shipped WAVs (16 kHz mono,
8 kHz mono, 16 kHz stereo) must decode to what soundfile reads.
"""

import io
import wave

import numpy as np
import pytest
import soundfile as sf

from kernels.audio import audio_testlib as lib
from kernels.common import tolerance

PCM_SUBTYPES = ["PCM_U8", "PCM_16", "PCM_24", "PCM_32"]
FLOAT_SUBTYPES = ["FLOAT", "DOUBLE"]


def _reference(data: bytes) -> np.ndarray:
    x, _ = sf.read(io.BytesIO(data), dtype="float64", always_2d=True)
    return (x.sum(axis=1) / x.shape[1]).astype(np.float32)


@pytest.mark.parametrize("container", ["WAV", "WAVEX"])
@pytest.mark.parametrize("subtype", PCM_SUBTYPES + FLOAT_SUBTYPES)
@pytest.mark.parametrize("channels", [1, 2, 5])
def test_matches_soundfile(container, subtype, channels):
    rng = np.random.default_rng(channels * 100 + len(subtype))
    frames = 3001  # odd: 8-bit mono data gets a pad byte
    x = rng.uniform(-1.0, 1.0, (frames, channels))
    buf = io.BytesIO()
    sf.write(buf, x, 22050 + channels, format=container, subtype=subtype)
    data = buf.getvalue()
    got, sr = lib.wav_decode(data)
    assert sr == 22050 + channels
    ref = _reference(data)
    assert got.shape == ref.shape
    if subtype in PCM_SUBTYPES:
        # Integer samples: the exact channel mean, rounded once, on both sides.
        np.testing.assert_array_equal(got, ref)
    else:
        tolerance.assert_close(got, ref, c=1.0, k=channels, what=f"{subtype} x{channels}")


@pytest.mark.parametrize(
    "relpath, rate, channels",
    [
        ("jfk.wav", 16000, 1),
        ("formats/OSR_us_000_0034_8k.wav", 8000, 1),
        ("formats/stereo_diarization.wav", 16000, 2),
        ("formats/michaelandsickmichael.wav", 16000, 2),
    ],
)
def test_shipped_files(relpath, rate, channels):
    data = lib.read_test_audio(relpath)
    got, sr = lib.wav_decode(data)
    assert sr == rate
    with wave.open(io.BytesIO(data)) as w:  # independent of libsndfile
        assert w.getnchannels() == channels
        pcm = np.frombuffer(w.readframes(w.getnframes()), "<i2").reshape(-1, channels)
    ref = (pcm.astype(np.float64).sum(axis=1) / (32768.0 * channels)).astype(np.float32)
    np.testing.assert_array_equal(got, ref)
    np.testing.assert_array_equal(got, _reference(data))


def test_jfk_matches_whisper_scaling():
    # whisper.load_audio reads s16le from ffmpeg and divides by 32768: same numbers.
    data = lib.read_test_audio("jfk.wav")
    got, _ = lib.wav_decode(data)
    with wave.open(io.BytesIO(data)) as w:
        pcm = np.frombuffer(w.readframes(w.getnframes()), np.int16)
    np.testing.assert_array_equal(got, pcm.flatten().astype(np.float32) / 32768.0)


def test_errors_carry_messages():
    data = lib.read_test_audio("jfk.wav")
    with pytest.raises(lib.AudioError, match="truncated") as e:
        lib.wav_decode(data[:1000])
    assert e.value.code == -20
    with pytest.raises(lib.AudioError, match="RIFF") as e:
        lib.wav_decode(b"fLaC" + bytes(100))
    assert e.value.code == -3
    with pytest.raises(lib.AudioError, match="12-byte") as e:
        lib.wav_decode(b"RIFF")
    assert e.value.code == -2
    messages = {lib.wav_strerror(c) for c in range(-24, 1)}
    assert len(messages) == 25, "every code needs its own message"
