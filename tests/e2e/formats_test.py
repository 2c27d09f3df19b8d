"""Recordings as people have them: m4a, mp4 (with a video track), webm, opus, aac, mp3, flac,
alac. The test makes each file itself with PyAV (FFmpeg) from jfk.wav, at the codec's usual
rate (so our C resampler brings it back to 16 kHz), and transcribes it with tiny through
`Engine.transcribe`: lossless encodes give the WAV's tokens, high-bitrate lossy ones its words
(raw ADTS .aac keeps the encoder's 1024 priming samples, which no container records, and ends
with a period the WAV's transcript lacks). A file without an audio stream is a one-line error."""

import fractions
import functools
import re

import av
import numpy as np
import pytest
import soundfile

from ckw import runfiles
from ckw.runtime.audio_input import AudioInputError
from ckw.runtime.engine import Engine

JFK = "jfk.wav"

# name: (container, encoder, sample rate, channels, bit rate or None, lossless, with a video track, decoder)
FORMATS = {
    "m4a": ("ipod", "aac", 44100, 1, 192_000, False, False, "aac"),
    "mp4": ("mp4", "aac", 48000, 2, 192_000, False, True, "aac"),
    "webm": ("webm", "libopus", 48000, 2, 160_000, False, False, "opus"),
    "opus": ("ogg", "libopus", 48000, 1, 128_000, False, False, "opus"),
    "aac": ("adts", "aac", 22050, 1, 128_000, False, False, "aac"),
    "mp3": ("mp3", "libmp3lame", 44100, 1, 192_000, False, False, "mp3float"),
    "flac": ("flac", "flac", 16000, 1, None, True, False, "flac"),
    "alac.m4a": ("ipod", "alac", 16000, 2, None, True, False, "alac"),
}


@functools.cache
def engine() -> Engine:
    return Engine.from_runfiles("tiny")


@functools.cache
def wav_result():
    return engine().transcribe_long(runfiles.locate("test_audio", JFK))


def _frames(samples: np.ndarray, rate: int, channels: int, fmt: str):
    """16 kHz mono float32 (from 16-bit PCM) -> audio frames at `rate` in the encoder's sample
    format, the channels copies of each other (FFmpeg's resampler: this only makes the test file;
    at 16 kHz it changes no sample value)."""
    layout = "mono" if channels == 1 else "stereo"
    pcm = np.clip(np.round(samples * 32768.0), -32768, 32767).astype(np.int16)
    frame = av.AudioFrame.from_ndarray(np.repeat(pcm[None, :], channels, axis=0), format="s16p", layout=layout)
    frame.sample_rate = 16000
    resampler = av.AudioResampler(format=fmt, layout=layout, rate=rate)
    return resampler.resample(frame) + resampler.resample(None)


def make_file(path, name: str, samples: np.ndarray) -> None:
    container, codec, rate, channels, bit_rate, _, video, _ = FORMATS[name]
    with av.open(str(path), mode="w", format=container) as out:
        stream = out.add_stream(codec, rate=rate)
        stream.layout = "mono" if channels == 1 else "stereo"
        if bit_rate:
            stream.bit_rate = bit_rate
        picture = None
        if video:
            picture = out.add_stream("mpeg4", rate=10)
            picture.width, picture.height, picture.pix_fmt = 64, 48, "yuv420p"
        fmt = stream.codec_context.format.name
        n_video = n_audio = 0
        for frame in _frames(samples, rate, channels, fmt):
            # Sample-exact timestamps let the muxer record the encoder's priming (an mp4 edit list).
            frame.pts, frame.time_base = n_audio, fractions.Fraction(1, rate)
            n_audio += frame.samples
            for packet in stream.encode(frame):
                out.mux(packet)
            while picture is not None and n_video * rate < n_audio * 10:
                image = av.VideoFrame.from_ndarray(np.full((48, 64, 3), n_video % 255, np.uint8), format="rgb24")
                image.pts, image.time_base = n_video, fractions.Fraction(1, 10)
                for packet in picture.encode(image):
                    out.mux(packet)
                n_video += 1
        for packet in stream.encode(None):
            out.mux(packet)
        if picture is not None:
            for packet in picture.encode(None):
                out.mux(packet)


def words(text: str) -> list:
    return re.sub(r"[^\w\s']", " ", text.lower()).split()


@pytest.fixture(scope="module")
def samples() -> np.ndarray:
    audio, rate = soundfile.read(runfiles.locate("test_audio", JFK), dtype="float32")
    assert rate == 16000
    return audio


@pytest.mark.parametrize("name", list(FORMATS))
def test_container_transcript_equals_the_wav(name, samples, tmp_path):
    path = tmp_path / f"jfk.{name}"
    make_file(path, name, samples)
    with av.open(str(path)) as probe:  # the file is what it claims to be
        (audio,) = probe.streams.audio
        assert audio.codec_context.name == FORMATS[name][7]
        assert audio.codec_context.sample_rate == FORMATS[name][2]
        assert bool(probe.streams.video) == FORMATS[name][6]
    got = engine().transcribe_long(str(path))
    want = wav_result()
    assert words(got["text"]) == words(want["text"]), f"{name}: {got['text']!r}"
    if FORMATS[name][5]:  # lossless: the very same samples, the very same tokens
        assert [s["tokens"] for s in got["segments"]] == [s["tokens"] for s in want["segments"]]
        assert got["text"] == want["text"]
    segments, info = engine().transcribe(path.read_bytes())  # the same from the file's bytes
    assert info.duration == pytest.approx(11.0, abs=0.1)  # lossy codecs pad to whole frames
    assert " ".join(s.text for s in segments) == " ".join(s["text"] for s in got["segments"])


def test_a_file_without_audio_is_a_one_line_error(tmp_path):
    path = tmp_path / "silent_film.mp4"
    with av.open(str(path), mode="w", format="mp4") as out:
        picture = out.add_stream("mpeg4", rate=10)
        picture.width, picture.height, picture.pix_fmt = 64, 48, "yuv420p"
        for i in range(10):
            image = av.VideoFrame.from_ndarray(np.zeros((48, 64, 3), np.uint8), format="rgb24")
            for packet in picture.encode(image):
                out.mux(packet)
        for packet in picture.encode(None):
            out.mux(packet)
    with pytest.raises(AudioInputError) as e:
        engine().transcribe(str(path))
    message = str(e.value)
    assert message.startswith(f"{path}: no audio stream (the file holds video)") and "\n" not in message


@pytest.mark.parametrize(
    "content,reason", [(b"plain text, not media\n" * 10, "neither WAV nor a format FFmpeg"), (b"", "empty")]
)
def test_unreadable_files_are_one_line_errors(tmp_path, content, reason):
    path = tmp_path / "notes.m4a"
    path.write_bytes(content)
    with pytest.raises(AudioInputError, match=reason) as e:
        engine().transcribe(str(path))
    assert str(e.value).startswith(str(path)) and "\n" not in str(e.value)
