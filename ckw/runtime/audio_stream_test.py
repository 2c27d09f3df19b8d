"""ckw/runtime/audio_stream.py over the generated frontend: streamed log-mel frames equal the
whole-file `run` phase bit for bit (16 kHz, 8 kHz, stereo, 44.1 kHz 24-bit and 48 kHz float WAV
written by the test, FLAC through PyAV, a long file over many blocks, any window order), memory
stays bounded on a 30-minute file where the whole-file path needs hundreds of MB, and bad input
gets a one-line error naming the file."""

import json
import os
import subprocess
import sys

import numpy as np
import pytest
import soundfile

from ckw import runfiles
from ckw.runtime import audio_stream
from ckw.runtime.audio_input import AudioInputError, float_wav_bytes, load_audio_bytes
from ckw.runtime.engine import Frontend

FRONTEND = "models/whisper/libckw_whisper_frontend.so"


@pytest.fixture(scope="module")
def frontend() -> Frontend:
    return Frontend(runfiles.locate("ckw", FRONTEND))


def clip(name: str) -> str:
    return runfiles.locate("test_audio", name)


def check_stream_equals_whole(frontend, audio, whole_wav: bytes, starts=None):
    whole = frontend.log_mel(whole_wav)
    source = audio_stream.open_source(frontend.handle, audio)
    mel = audio_stream.MelStream(frontend.handle, source)
    try:
        assert mel.n_frames == whole.shape[1]
        starts = starts if starts is not None else range(0, mel.n_frames, 1777)
        for start in starts:
            size = min(3000, mel.n_frames - start)
            np.testing.assert_array_equal(
                mel.window(start, size), whole[:, start : start + size], err_msg=f"frames {start}..{start + size}"
            )
    finally:
        mel.close()
    return mel


@pytest.mark.parametrize(
    "name",
    [
        "jfk.wav",
        "formats/OSR_us_000_0034_8k.wav",
        "formats/stereo_diarization.wav",
        "formats/michaelandsickmichael.wav",
    ],
)
def test_wav_files_stream_to_the_whole_file_frames(frontend, name):
    path = clip(name)
    mel = check_stream_equals_whole(frontend, path, load_audio_bytes(path))
    assert mel.duration == pytest.approx(soundfile.info(path).duration, abs=1e-3)


def test_flac_through_pyav_streams_to_the_frames_of_its_samples(frontend):
    path = clip("long/shakespeare_sonnets_I-III_concat.flac")  # 159 s: six source blocks
    samples, rate = soundfile.read(path, dtype="float32")
    check_stream_equals_whole(frontend, path, float_wav_bytes(samples, rate))


@pytest.mark.parametrize("rate,subtype,channels", [(44100, "PCM_24", 2), (48000, "FLOAT", 1), (22050, "PCM_16", 3)])
def test_other_rates_resample_in_spans_as_the_whole_file(frontend, tmp_path, rate, subtype, channels):
    samples, _ = soundfile.read(clip("formats/michaelandsickmichael.wav"), dtype="float32")
    x = np.resize(samples[:, 0], (channels, 40 * rate)).T * np.linspace(1.0, 0.5, channels)  # 40 s: two blocks
    path = tmp_path / f"x{rate}.wav"
    soundfile.write(path, x, rate, subtype=subtype)
    check_stream_equals_whole(frontend, str(path), path.read_bytes())


def test_windows_in_any_order_and_from_bytes_and_arrays(frontend):
    path = clip("formats/michaelandsickmichael.wav")
    data = load_audio_bytes(path)
    check_stream_equals_whole(frontend, data, data, starts=[5000, 100, 2999, 2999, 0, 5243])
    samples, _ = soundfile.read(clip("jfk.wav"), dtype="float32")
    check_stream_equals_whole(frontend, samples, float_wav_bytes(samples, 16000))


def test_an_empty_recording_is_30_s_of_padding(frontend):
    mel = audio_stream.MelStream(
        frontend.handle, audio_stream.open_source(frontend.handle, float_wav_bytes(np.zeros(0, np.float32), 16000))
    )
    assert mel.n_frames == 3000 and mel.duration == 0.0
    assert np.all(mel.window(0, 3000) == -1.5)  # log10(1e-10) on the max - 8 floor, (x + 4) / 4


@pytest.mark.parametrize(
    "content,message",
    [
        (b"RIFF\x04\x00\x00\x00WAVE", "no 'fmt ' chunk"),
        (
            (
                b"RIFF\x24\x00\x00\x00WAVEfmt \x10\x00\x00\x00\x02\x00\x01\x00\x80\x3e\x00\x00\x00\x7d\x00\x00\x02\x00"
                b"\x10\x00data\x00\x00\x00\x00"
            ),
            "format tag is not PCM",
        ),
        (b"\x00" * 100, "neither WAV nor a format FFmpeg can read"),
        (b"", "the file is empty"),
    ],
)
def test_bad_files_are_one_line_errors(frontend, tmp_path, content, message):
    path = tmp_path / "bad.wav"
    path.write_bytes(content)
    with pytest.raises(AudioInputError) as e:
        audio_stream.open_source(frontend.handle, str(path))
    assert str(e.value).startswith(str(path)) and message in str(e.value) and "\n" not in str(e.value)
    with pytest.raises(AudioInputError, match="no such file"):
        audio_stream.open_source(frontend.handle, str(tmp_path / "missing.wav"))


MEMORY_SCRIPT = r"""
import json, resource, sys
import numpy as np
from ckw.runtime import audio_stream
from ckw.runtime.engine import Frontend
frontend = Frontend(sys.argv[1])
before = resource.getrusage(resource.RUSAGE_SELF).ru_maxrss
if sys.argv[3] == "stream":
    mel = audio_stream.MelStream(frontend.handle, audio_stream.open_source(frontend.handle, sys.argv[2]))
    for start in range(0, mel.n_frames - 3000, 2900):
        assert mel.window(start, 3000).shape == (80, 3000)
    mel.close()
else:
    with open(sys.argv[2], "rb") as f:
        frames = frontend.log_mel(f.read()).shape[1]
print(json.dumps({"before_kb": before, "peak_kb": resource.getrusage(resource.RUSAGE_SELF).ru_maxrss}))
"""


def peak_growth_mb(path: str, how: str) -> float:
    env = dict(os.environ, PYTHONPATH=os.pathsep.join(p for p in sys.path if p))
    proc = subprocess.run(
        [sys.executable, "-c", MEMORY_SCRIPT, runfiles.locate("ckw", FRONTEND), path, how],
        env=env,
        capture_output=True,
        text=True,
        timeout=600,
        check=True,
    )
    r = json.loads(proc.stdout.strip().splitlines()[-1])
    return (r["peak_kb"] - r["before_kb"]) / 1024


def test_memory_stays_bounded_on_a_long_file(tmp_path):
    """30 minutes at 44.1 kHz (159 MB of 16-bit WAV): the stream's peak grows by a few MB; the
    whole-file phase holds the decoded, resampled, padded signal and its spectrogram at once."""
    samples, _ = soundfile.read(clip("long/shakespeare_sonnets_I-III_concat.flac"), dtype="float32")
    path = tmp_path / "half_hour.wav"
    with soundfile.SoundFile(path, "w", samplerate=44100, channels=1, subtype="PCM_16") as f:
        block = np.resize(samples, 44100 * 60)
        for _ in range(30):
            f.write(block)
    stream_mb = peak_growth_mb(str(path), "stream")
    whole_mb = peak_growth_mb(str(path), "whole")
    print(
        f"peak RSS growth over a 30-minute 44.1 kHz WAV: stream {stream_mb:.0f} MB, whole file {whole_mb:.0f} MB",
        file=sys.stderr,
    )
    assert stream_mb < 64, stream_mb
    assert whole_mb > 5 * stream_mb  # the comparison can fail: it measures what the stream saves


def test_a_wav_file_is_mapped_and_released(frontend):
    """A WAV file is mapped, not read: nothing of its data stays referenced after close()."""
    source = audio_stream.open_source(frontend.handle, clip("jfk.wav"))
    assert isinstance(source, audio_stream.WavSource) and source.sample_rate == 16000 and source.n_frames == 176000
    n = sum(b.size for b in source.blocks())
    source.close()
    assert n == 176000 and source._map is None
