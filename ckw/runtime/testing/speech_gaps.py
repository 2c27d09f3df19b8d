"""A recording with long silences and noise between shared speech clips, for the VAD filter's tests
(ckw/runtime/speech_timestamps_test.py, tests/e2e/vad_filter_test.py): no audio is committed, it is
made from the shared test audio each time, the same samples every time."""

import dataclasses

import numpy as np
import soundfile

SAMPLE_RATE = 16000


@dataclasses.dataclass(frozen=True)
class Gap:
    seconds: float
    noise: float = 0.0  # standard deviation of white noise (0: digital silence)
    hum: float = 0.0  # amplitude of a 50 Hz hum under it


# What goes between the clips: digital silence long enough to end a chunk (the VAD's default
# min_silence_duration_ms is 2 s), a pause too short to (1 s), and noise the VAD should not take for
# speech (white noise, a mains hum).
GAPS = (Gap(4.0), Gap(6.0, noise=0.003), Gap(1.0), Gap(8.0, noise=0.001, hum=0.01), Gap(3.0))


@dataclasses.dataclass
class Recording:
    samples: np.ndarray  # mono float32, 16 kHz
    speech: list[tuple[float, float]]  # (start, end) seconds of each clip in the recording

    @property
    def duration(self) -> float:
        return self.samples.size / SAMPLE_RATE


def read_16k(path: str) -> np.ndarray:
    audio, rate = soundfile.read(path, dtype="float32", always_2d=True)
    if rate != SAMPLE_RATE:
        raise ValueError(f"{path}: {rate} Hz; give 16 kHz clips")
    return audio.mean(axis=1).astype(np.float32)


def with_gaps(clips: list[np.ndarray], gaps=GAPS, seed: int = 0) -> Recording:
    """gaps[0], clips[0], gaps[1], clips[1], ..., then the gap after the last clip (len(gaps) must be
    len(clips) + 1)."""
    if len(gaps) != len(clips) + 1:
        raise ValueError(f"{len(clips)} clips need {len(clips) + 1} gaps, not {len(gaps)}")
    rng = np.random.default_rng(seed)
    parts, speech, at = [], [], 0
    for k, gap in enumerate(gaps):
        n = int(round(gap.seconds * SAMPLE_RATE))
        t = np.arange(at, at + n) / SAMPLE_RATE
        parts.append((gap.noise * rng.standard_normal(n) + gap.hum * np.sin(2 * np.pi * 50 * t)).astype(np.float32))
        at += n
        if k < len(clips):
            parts.append(np.asarray(clips[k], np.float32))
            speech.append((at / SAMPLE_RATE, (at + clips[k].size) / SAMPLE_RATE))
            at += clips[k].size
    return Recording(np.concatenate(parts), speech)


def merged(spans, gap: float) -> list[tuple[float, float]]:
    """Spans closer than `gap` seconds joined: the VAD keeps a pause shorter than
    min_silence_duration_ms inside one chunk."""
    out = []
    for s, e in spans:
        if out and s - out[-1][1] < gap:
            out[-1] = (out[-1][0], e)
        else:
            out.append((s, e))
    return out
