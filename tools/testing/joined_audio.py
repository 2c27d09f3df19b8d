"""Long recordings made from the shared LibriSpeech clips (no audio is committed: tests and
benchmarks build what they need): the clips in MANIFEST.tsv order, 0.5 s of silence between
them, repeated from the start until the recording is long enough."""

import csv
import os

import numpy as np
import soundfile

SAMPLE_RATE = 16000
GAP_SECONDS = 0.5


def librispeech_joined(folder: str, seconds: float) -> np.ndarray:
    """Mono float32 at 16 kHz, at least `seconds` long (whole clips only). folder: the
    LibriSpeech folder of the test audio (with its MANIFEST.tsv)."""
    with open(os.path.join(folder, "MANIFEST.tsv"), encoding="utf-8") as f:
        names = [row["file"] for row in csv.DictReader(f, delimiter="\t")]
    gap = np.zeros(int(GAP_SECONDS * SAMPLE_RATE), np.float32)
    parts, total = [], 0
    while total < seconds * SAMPLE_RATE:
        for name in names:
            audio, rate = soundfile.read(os.path.join(folder, name), dtype="float32", always_2d=True)
            if rate != SAMPLE_RATE:
                raise ValueError(f"{name}: {rate} Hz; the LibriSpeech clips are 16 kHz")
            parts += [audio.mean(axis=1), gap]
            total += audio.shape[0] + gap.size
            if total >= seconds * SAMPLE_RATE:
                break
    return np.concatenate(parts[:-1])


def write_wav(path: str, samples: np.ndarray) -> None:
    """16-bit PCM: the LibriSpeech samples are 16-bit, so nothing is lost."""
    soundfile.write(path, samples, SAMPLE_RATE, subtype="PCM_16")
