"""The audio //tools:benchmark_e2e times: one clip (default jfk.wav, one 30 s window) and a long
recording joined from the shared LibriSpeech clips (long-form transcription). Every engine gets the
same samples: ckw the WAV bytes, the peers the same PCM16 samples as float32."""

import dataclasses
import io
import os

import numpy as np
import soundfile

from ckw import runfiles
from tools.testing import joined_audio

SAMPLE_RATE = 16000


@dataclasses.dataclass(frozen=True)
class Clip:
    name: str
    wav: bytes  # 16 kHz mono PCM16 WAV, for ckw's frontend
    audio: np.ndarray  # the same samples, float32 in [-1, 1), for the peers
    long_form: bool  # True: long-form transcription (timestamps, windows); False: one window, no timestamps

    @property
    def seconds(self) -> float:
        return self.audio.size / SAMPLE_RATE


def _clip(name: str, pcm: np.ndarray, long_form: bool) -> Clip:
    buf = io.BytesIO()
    soundfile.write(buf, pcm, SAMPLE_RATE, subtype="PCM_16", format="WAV")
    return Clip(name, buf.getvalue(), pcm.astype(np.float32) / 32768.0, long_form)


def _read_pcm16(path: str) -> np.ndarray:
    samples, rate = soundfile.read(path, dtype="int16", always_2d=True)
    if rate != SAMPLE_RATE:
        raise SystemExit(f"benchmark_e2e: {path} is {rate} Hz; the peers here take 16 kHz audio")
    return samples[:, 0] if samples.shape[1] == 1 else samples.mean(axis=1).astype(np.int16)


def from_file(path: str, long_form: bool = False) -> Clip:
    return _clip(os.path.basename(path), _read_pcm16(path), long_form)


def librispeech_joined(seconds: float) -> Clip:
    """The shared LibriSpeech clips joined as the long-form tests join them
    (tools/testing/joined_audio.py), cut at exactly `seconds`."""
    folder = os.path.dirname(runfiles.locate("test_audio", "librispeech/MANIFEST.tsv"))
    # joined_audio ends on a whole clip without the gap after it: ask for a gap more, then cut.
    joined = joined_audio.librispeech_joined(folder, seconds + joined_audio.GAP_SECONDS)
    joined = joined[: int(round(seconds * SAMPLE_RATE))]
    pcm = np.round(joined * 32768.0).clip(-32768, 32767).astype(np.int16)  # the clips are 16-bit: exact
    return _clip(f"librispeech-joined-{seconds / 60:g}min", pcm, True)


def head(clip: Clip, seconds: float) -> Clip:
    """The first `seconds` of `clip`, transcribed the same way."""
    pcm = np.round(clip.audio[: int(seconds * SAMPLE_RATE)] * 32768.0).astype(np.int16)
    return _clip(f"{clip.name}-head", pcm, clip.long_form)
