"""Long recordings made from the shared LibriSpeech clips (no audio is committed: tests and
benchmarks build what they need): the clips in MANIFEST.tsv order, 0.5 s of silence between
them, repeated from the start until the recording is long enough."""

import numpy as np
import soundfile

from tools.testing import audio_manifest

SAMPLE_RATE = 16000
GAP_SECONDS = 0.5


def librispeech_clips(folder: str, seconds: float, gap_seconds: float = GAP_SECONDS) -> list[tuple[np.ndarray, str]]:
    """(mono float32 samples at 16 kHz, reference transcript) of the clips in MANIFEST.tsv order,
    repeated from the start, until they and a gap of gap_seconds after each but the last reach
    `seconds`. folder: the LibriSpeech folder of the test audio (with its MANIFEST.tsv)."""
    rows = audio_manifest.rows(folder)
    out, total = [], 0
    while total < seconds * SAMPLE_RATE:
        for row in rows:
            transcript = row["transcript"]
            audio, rate = soundfile.read(row["path"], dtype="float32", always_2d=True)
            if rate != SAMPLE_RATE:
                raise ValueError(f"{row['path']}: {rate} Hz; the LibriSpeech clips are 16 kHz")
            out.append((audio.mean(axis=1), transcript))
            total += audio.shape[0] + int(gap_seconds * SAMPLE_RATE)
            if total >= seconds * SAMPLE_RATE:
                break
    return out


def librispeech_joined(folder: str, seconds: float) -> np.ndarray:
    """Mono float32 at 16 kHz, at least `seconds` long (whole clips only): librispeech_clips with
    0.5 s of silence between them."""
    gap = np.zeros(int(GAP_SECONDS * SAMPLE_RATE), np.float32)
    parts = [part for audio, _ in librispeech_clips(folder, seconds) for part in (audio, gap)]
    return np.concatenate(parts[:-1])


def write_wav(path: str, samples: np.ndarray) -> None:
    """16-bit PCM: the LibriSpeech samples are 16-bit, so nothing is lost."""
    soundfile.write(path, samples, SAMPLE_RATE, subtype="PCM_16")
