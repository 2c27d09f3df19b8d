"""Hostile input through the built CLI (//tools:transcribe in a subprocess, tiny.en).

Every case runs `transcribe --wav FILE --output_format json --output OUT` as a user without the
root-only right to read or write anything (CAP_DAC_OVERRIDE and CAP_DAC_READ_SEARCH are dropped
when the test runs as root), and expects exactly one of:

  error(status, text): exit status 1 (bad input) or 2 (wrong usage), no signal, stderr exactly
    one line `transcribe: error: <name>: ...` containing `text` (the name is the file as given,
    or the flag), no traceback, nothing on stdout, and no file (not even a temporary one) in
    OUT's folder;
  same_text: exit 0 and the same transcript text as jfk.wav itself gives (the input is jfk.wav
    in another valid form);
  near_text(n): exit 0 and a transcript at most n words (edits, punctuation aside) away from
    jfk.wav's (a lossy form of it);
  silent: exit 0 and an empty transcript (no speech in the input);
  complete: exit 0 and a well-formed transcript whose segments lie in order within the
    recording (20 minutes of digital silence: Whisper, and openai-whisper's transcribe() whose
    semantics we match, hallucinates words there, so its text is no measure).

The cases (file -> expected outcome):

  empty.wav                   empty file                                -> error 1 "the file is empty"
  text.wav                    not RIFF (a text file)                    -> error 1 "nor a format FFmpeg can read"
  header_only.wav             44-byte header declaring 1 s, no samples  -> error 1 "declared size runs past the end"
  no_samples.wav              header with an empty data chunk           -> silent (openai-whisper: empty transcript)
  data_short.wav              jfk with its last 1001 bytes cut off      -> error 1 "declared size runs past the end"
  chunk_4gib.wav              a LIST chunk declaring 0xFFFFFFF0 bytes   -> error 1 "a chunk's declared size runs past"
  data_4gib.wav               jfk's data chunk declaring 0xFFFFFFF0     -> error 1 "declared size runs past the end"
  data_streamed.wav           data size 0xFFFFFFFF ("to the end")       -> same_text
  zero_channels.wav           'fmt ' with 0 channels                    -> error 1 "'fmt ' declares 0 channels"
  zero_rate.wav               'fmt ' with 0 Hz                          -> error 1 "sample rate of 0 Hz"
  rate_1hz.wav                30 samples at 1 Hz (30 s of near-DC)      -> silent
  rate_384khz.wav             jfk upsampled to 384 kHz                  -> same_text
  rate_1mhz.wav               1 MHz (above the resampler's 768 kHz)     -> error 1
                              "sample rate outside 1 Hz .. 768000 Hz"
  bits_7.wav                  7-bit PCM                                 -> error 1 "unsupported bits per sample"
  bits_8.wav                  jfk as 8-bit unsigned PCM                 -> near_text(2) (-48 dB of quantization noise)
  bits_24.wav                 jfk as 24-bit PCM                         -> same_text
  float_nan.wav               float32 jfk with one NaN                  -> error 1 "NaN, infinity"
  float_inf.wav               float32 jfk with one +Inf                 -> error 1 "NaN, infinity"
  float64_overflow.wav        float64 with 1e300 (Inf as float32)       -> error 1 "NaN, infinity"
  float_huge.wav              float32 jfk with one 1e30 sample          -> error 1 "magnitudes above 2^24"
  six_channels.wav            jfk in six channels                       -> same_text
  rifx.wav                    big-endian RIFX (soundfile decodes it)    -> same_text
  silence_20min.wav           1200 s of digital silence, 16 kHz         -> complete (greedy: --beam_size 0
                              --temperature_increment_on_fallback none; each window would otherwise be
                              beam-searched and sampled again five times, as openai-whisper does, for
                              nothing more about long input)
  a_folder/                   a directory                               -> error 1 "is a directory"
  missing.wav                 no such file                              -> error 1 "no such file"
  unreadable.wav              jfk without read permission               -> error 1 "permission denied"
  junk.mp3 / junk.ogg / junk.flac  magic bytes then zeros               -> error 1 "nor a format FFmpeg can read"
  truncated.flac              jfk as FLAC, cut in half                  -> error 1 "truncated or damaged"
  --output into a missing folder                                        -> error 1 "does not exist"
  --output into a read-only folder                                      -> error 1 "cannot write into"
  --output naming a directory                                           -> error 1 "is a directory"
  an unknown flag / --beam_size=x / --model=huge / --best_of=0         -> error 2
"""

import ctypes
import io
import json
import os
import shutil
import stat
import subprocess
import sys

import numpy as np
import pytest

from tests.hostile import wav_builder as wb
from tools.bench.wer import edit_distance

ROOT = os.environ["TEST_SRCDIR"]
CLI = os.path.join(ROOT, "ckw", "ckw", "cli", "transcribe")
JFK = os.path.join(ROOT, "test_audio", "jfk.wav")
LIST_CHUNK = wb.chunk(b"LIST", b"INFOjunk")
PR_CAPBSET_DROP, CAP_DAC_OVERRIDE, CAP_DAC_READ_SEARCH = 24, 1, 2


def drop_root_file_rights():
    """In the child before exec: without these capabilities root obeys file permissions too."""
    if os.geteuid() == 0:
        libc = ctypes.CDLL(None, use_errno=True)
        for cap in (CAP_DAC_OVERRIDE, CAP_DAC_READ_SEARCH):
            if libc.prctl(PR_CAPBSET_DROP, cap, 0, 0, 0) != 0:
                raise OSError(ctypes.get_errno(), "prctl(PR_CAPBSET_DROP)")


def transcribe(*args, timeout=900):
    env = dict(os.environ, RUNFILES_DIR=ROOT)
    return subprocess.run(
        [CLI, *args],
        capture_output=True,
        text=True,
        env=env,
        timeout=timeout,
        preexec_fn=drop_root_file_rights,
        check=False,
    )


@pytest.fixture(scope="module")
def jfk():
    return wb.pcm16(JFK)


@pytest.fixture(scope="module")
def jfk_text(tmp_path_factory):
    out = tmp_path_factory.mktemp("reference") / "jfk.json"
    proc = transcribe("--wav", JFK, "--output_format", "json", "--output", str(out))
    assert proc.returncode == 0, proc.stderr
    text = json.loads(out.read_text())["text"]
    assert "ask not what your country can do for you" in text
    return text


def flac(x, rate):
    import soundfile

    buf = io.BytesIO()
    soundfile.write(buf, x, rate, format="FLAC")
    return buf.getvalue()


def with_value(x, index, value):
    y = np.array(x, dtype=np.float64)
    y[index] = value
    return y


def rifx(x, rate):
    """A big-endian RIFX file (a real container this reader does not support)."""
    import struct

    data = (np.round(x * 32767).astype(">i2")).tobytes()
    fmt = struct.pack(">HHIIHH", 1, 1, rate, rate * 2, 2, 16)
    body = b"WAVE" + b"fmt " + struct.pack(">I", 16) + fmt + b"data" + struct.pack(">I", len(data)) + data
    return b"RIFX" + struct.pack(">I", len(body)) + body


# name -> (bytes of the file from jfk's samples and rate, expected outcome)
FILES = {
    "empty.wav": (lambda x, r: b"", ("error", 1, "the file is empty")),
    "text.wav": (lambda x, r: b"This is not audio at all.\n" * 20, ("error", 1, "nor a format FFmpeg can read")),
    "header_only.wav": (
        lambda x, r: wb.wav(np.zeros(0), 16000, declared_data=32000),
        ("error", 1, "declared size runs past the end"),
    ),
    "no_samples.wav": (lambda x, r: wb.wav(np.zeros(0), 16000), ("silent",)),
    "data_short.wav": (lambda x, r: wb.wav(x, r)[:-1001], ("error", 1, "declared size runs past the end")),
    "chunk_4gib.wav": (
        lambda x, r: wb.wav(x, r, extra_chunks=(wb.chunk(b"LIST", b"INFO", 0xFFFFFFF0),)),
        ("error", 1, "a chunk's declared size runs past the end"),
    ),
    "data_4gib.wav": (
        lambda x, r: wb.wav(x, r, declared_data=0xFFFFFFF0),
        ("error", 1, "declared size runs past the end"),
    ),
    "data_streamed.wav": (
        lambda x, r: wb.wav(x, r, declared_data=0xFFFFFFFF, extra_chunks=(LIST_CHUNK,)),
        ("same_text",),
    ),
    "zero_channels.wav": (
        lambda x, r: wb.riff(wb.fmt_chunk(1, 0, r, 16, 2), wb.chunk(b"data", b"\0" * 64)),
        ("error", 1, "'fmt ' declares 0 channels"),
    ),
    "zero_rate.wav": (
        lambda x, r: wb.riff(wb.fmt_chunk(1, 1, 0, 16), wb.chunk(b"data", b"\0" * 64)),
        ("error", 1, "sample rate of 0 Hz"),
    ),
    "rate_1hz.wav": (lambda x, r: wb.wav(0.5 * np.sin(np.arange(30)), 1), ("silent",)),
    "rate_384khz.wav": (lambda x, r: wb.wav(np.clip(wb.upsample(x, 24), -1, 1), r * 24), ("same_text",)),
    "rate_1mhz.wav": (lambda x, r: wb.wav(x[:20000], 1_000_000), ("error", 1, "sample rate outside 1 Hz .. 768000 Hz")),
    "bits_7.wav": (
        lambda x, r: wb.riff(wb.fmt_chunk(1, 1, r, 7, 1), wb.chunk(b"data", b"\0" * 64)),
        ("error", 1, "unsupported bits per sample"),
    ),
    "bits_8.wav": (lambda x, r: wb.wav(x, r, bits=8), ("near_text", 2)),
    "bits_24.wav": (lambda x, r: wb.wav(x, r, bits=24), ("same_text",)),
    "float_nan.wav": (
        lambda x, r: wb.wav(with_value(x, 5000, np.nan), r, 32, wb.IEEE_FLOAT),
        ("error", 1, "NaN, infinity"),
    ),
    "float_inf.wav": (
        lambda x, r: wb.wav(with_value(x, 70000, np.inf), r, 32, wb.IEEE_FLOAT),
        ("error", 1, "NaN, infinity"),
    ),
    "float64_overflow.wav": (
        lambda x, r: wb.wav(with_value(x, 100, 1e300), r, 64, wb.IEEE_FLOAT),
        ("error", 1, "NaN, infinity"),
    ),
    "float_huge.wav": (
        lambda x, r: wb.wav(with_value(x, 100, 1e30), r, 32, wb.IEEE_FLOAT),
        ("error", 1, "magnitudes above 2^24"),
    ),
    "six_channels.wav": (lambda x, r: wb.wav(np.repeat(x[:, None], 6, axis=1), r), ("same_text",)),
    "rifx.wav": (lambda x, r: rifx(x, r), ("same_text",)),
    # 40 windows of nothing (where Whisper hallucinates): every segment inside the recording.
    "silence_20min.wav": (
        lambda x, r: wb.riff(wb.fmt_chunk(wb.PCM, 1, 16000, 16), wb.chunk(b"data", bytes(1200 * 32000))),
        ("complete", 1200.0),
    ),
    "junk.mp3": (
        lambda x, r: b"ID3\x03\x00\x00\x00\x00\x00\x00" + bytes(400),
        ("error", 1, "nor a format FFmpeg can read"),
    ),
    "junk.ogg": (lambda x, r: b"OggS" + bytes(400), ("error", 1, "nor a format FFmpeg can read")),
    "junk.flac": (lambda x, r: b"fLaC" + bytes(400), ("error", 1, "nor a format FFmpeg can read")),
    "truncated.flac": (lambda x, r: flac(x, r)[: len(flac(x, r)) // 2], ("error", 1, "truncated or damaged")),
}


def assert_outcome(proc, expected, out, name, jfk_text):
    assert proc.returncode >= 0, f"{name}: killed by signal {-proc.returncode}\n{proc.stderr}"
    assert "Traceback" not in proc.stderr, f"{name}:\n{proc.stderr}"
    folder = os.path.dirname(out)
    if expected[0] == "error":
        _, status, text = expected
        lines = proc.stderr.splitlines()
        assert len(lines) == 1, f"{name}: want one line on stderr, got:\n{proc.stderr}"
        assert lines[0].startswith(f"transcribe: error: {name}") and text in lines[0], f"{name}: {lines[0]}"
        assert proc.returncode == status, f"{name}: exit {proc.returncode}, want {status}: {lines[0]}"
        assert proc.stdout == "", f"{name}: stdout {proc.stdout!r}"
        assert not os.listdir(folder), f"{name}: left {os.listdir(folder)} in the output folder"
        return
    assert proc.returncode == 0, f"{name}: exit {proc.returncode}\n{proc.stderr}"
    assert os.listdir(folder) == [os.path.basename(out)], os.listdir(folder)
    with open(out, encoding="utf-8") as f:
        result = json.load(f)
    if expected[0] == "same_text":
        assert result["text"] == jfk_text, f"{name}: {result['text']!r}"
    elif expected[0] == "near_text":
        edits = word_edits(result["text"], jfk_text)
        assert edits <= expected[1], f"{name}: {edits} word edits: {result['text']!r}"
    elif expected[0] == "silent":
        assert result["text"] == "" and result["segments"] == [], f"{name}: {result['text']!r}"
    else:
        ends = [(s["start"], s["end"]) for s in result["segments"]]
        assert all(0 <= a <= b <= expected[1] for a, b in ends), f"{name}: segments outside the recording"
        assert ends == sorted(ends) and isinstance(result["text"], str), name


def word_edits(a: str, b: str) -> int:
    """Levenshtein distance between the word sequences of a and b (case kept; punctuation, which
    beam search places by small margins, dropped)."""
    x, y = ([w.strip(".,;:!?") for w in t.split()] for t in (a, b))
    return edit_distance(x, y)


def run_case(tmp_path, name, args, expected, jfk_text):
    out_dir = tmp_path / "out"
    out_dir.mkdir()
    out = str(out_dir / "result.json")
    proc = transcribe(*args, "--output_format", "json", "--output", out)
    print(f"{name}: exit {proc.returncode}: {proc.stderr.strip()[-200:]}", file=sys.stderr)
    assert_outcome(proc, expected, out, name, jfk_text)


def shard(names):
    """Bazel test sharding: each shard runs every n-th case."""
    total = int(os.environ.get("TEST_TOTAL_SHARDS", "1"))
    if total > 1:
        open(os.environ["TEST_SHARD_STATUS_FILE"], "a").close()
    return names[int(os.environ.get("TEST_SHARD_INDEX", "0")) :: total]


SPECIAL = [
    "a_folder",
    "missing.wav",
    "unreadable.wav",
    "output_missing_folder",
    "output_read_only_folder",
    "output_is_a_directory",
    "usage_unknown_flag",
    "usage_bad_number",
    "usage_bad_model",
    "usage_bad_best_of",
]


@pytest.mark.parametrize("name", shard(sorted(FILES) + SPECIAL))
def test_case(tmp_path, monkeypatch, jfk, jfk_text, name):
    monkeypatch.chdir(tmp_path)  # names on the command line are as a user types them
    if name in FILES:
        build, expected = FILES[name]
        with open(name, "wb") as f:
            f.write(build(*jfk))
        greedy = ["--temperature_increment_on_fallback", "none", "--beam_size", "0"]
        extra = greedy if name == "silence_20min.wav" else []
        run_case(tmp_path, name, ["--wav", name, *extra], expected, jfk_text)
    elif name == "a_folder":
        os.mkdir(name)
        run_case(tmp_path, name, ["--wav", name], ("error", 1, "is a directory"), jfk_text)
    elif name == "missing.wav":
        run_case(tmp_path, name, ["--wav", name], ("error", 1, "no such file"), jfk_text)
    elif name == "unreadable.wav":
        shutil.copy(JFK, name)
        os.chmod(name, 0)
        run_case(tmp_path, name, ["--wav", name], ("error", 1, "permission denied"), jfk_text)
    elif name.startswith("output_"):
        target = {
            "output_missing_folder": "nowhere/result.json",
            "output_read_only_folder": "read_only/result.json",
            "output_is_a_directory": "read_only",
        }[name]
        os.mkdir("read_only")
        os.chmod("read_only", stat.S_IRUSR | stat.S_IXUSR)
        proc = transcribe("--wav", JFK, "--output", target)
        text = {
            "output_missing_folder": "does not exist",
            "output_read_only_folder": "cannot write into",
            "output_is_a_directory": "is a directory",
        }[name]
        lines = proc.stderr.splitlines()
        assert (
            len(lines) == 1 and lines[0].startswith(f"transcribe: error: --output {target}: ") and text in lines[0]
        ), proc.stderr
        assert proc.returncode == 1 and proc.stdout == "" and os.listdir("read_only") == []
        assert not os.path.exists("nowhere")
    else:
        args = {
            "usage_unknown_flag": ["--wav", JFK, "--no_such_flag=1"],
            "usage_bad_number": ["--wav", JFK, "--beam_size=x"],
            "usage_bad_model": ["--wav", JFK, "--model=huge"],
            "usage_bad_best_of": ["--wav", JFK, "--best_of=0"],
        }[name]
        proc = transcribe(*args)
        lines = proc.stderr.splitlines()
        assert proc.returncode == 2 and len(lines) == 1 and lines[0].startswith("transcribe: error: "), (
            proc.returncode,
            proc.stderr,
        )
        assert proc.stdout == ""
