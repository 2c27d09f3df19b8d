"""//tools:benchmark_longform at its smallest (tiny, 40 s recordings, faster-whisper as the peer):
both recordings, every mode's rows in order with ckw's builds and the peer, the ckw fp32 row of each mode the
ratios' base, and WERs only a working transcription gives (the rows are parsed from the
printed table, the only output)."""

import subprocess

import pytest

from ckw import runfiles

ROWS = [
    ("sequential", "ckw fp32 CLI"),
    ("sequential", "ckw int8 CLI"),
    ("sequential", "faster-whisper float32"),
    ("sequential", "faster-whisper int8"),
    ("vad", "ckw fp32 CLI"),
    ("vad", "ckw int8 CLI"),
    ("vad", "faster-whisper int8"),
    ("batched", "ckw fp32 CLI"),
    ("batched", "ckw int8 CLI"),
    ("batched", "faster-whisper int8"),
    ("batched-ts", "ckw fp32 CLI"),
    ("batched-ts", "ckw int8 CLI"),
    ("batched-ts", "faster-whisper int8"),
]


@pytest.fixture(scope="module")
def tables() -> dict:
    cmd = [
        runfiles.locate("ckw", "tools/benchmark_longform"),
        "--minutes=0.67",
        "--models=tiny",
        "--peers=faster-whisper",
        "--batch_size=4",
    ]
    result = subprocess.run(cmd, capture_output=True, text=True, timeout=900, check=False)
    print(result.stdout, result.stderr[-3000:])
    assert result.returncode == 0
    out, recording = {}, None
    for line in result.stdout.splitlines():
        if line.startswith("librispeech_"):
            recording = line.split(":")[0]
            out[recording] = []
        elif line.startswith("tiny "):
            fields = line.split()
            mode, engine, numbers = fields[1], " ".join(fields[2:-5]), [float(x) for x in fields[-5:]]
            out[recording].append(
                (mode, engine, dict(zip(("seconds", "realtime", "ratio", "segments", "wer"), numbers)))
            )
    return out


def test_every_mode_on_both_recordings(tables):
    assert list(tables) == ["librispeech_joined_0.67min.wav", "librispeech_gaps_0.67min.wav"]
    for rows in tables.values():
        assert [(mode, engine) for mode, engine, _ in rows] == ROWS
        for mode, engine, r in rows:
            assert r["seconds"] > 0 and r["segments"] >= 1
            assert r["wer"] < 25.0, (mode, engine, r)  # tiny.en on clean LibriSpeech: a few percent
            if engine == "ckw fp32 CLI":
                assert r["ratio"] == 1.0
