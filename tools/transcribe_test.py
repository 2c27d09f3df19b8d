"""//tools:transcribe in-process: every output format, the long-form flags, one-line errors."""

import itertools
import json
import os

import pytest
from absl import flags

from runtime import runfiles
from tools import transcribe

FLAGS = flags.FLAGS


def run(capsys, *args):
    FLAGS.unparse_flags()
    FLAGS(["transcribe", *args])
    rc = transcribe.main(["transcribe"])
    out, err = capsys.readouterr()
    return rc, out, err


@pytest.fixture(scope="module")
def jfk():
    return runfiles.locate("test_audio", "jfk.wav")


def test_json_has_segments_and_the_old_keys(capsys, jfk):
    rc, out, _ = run(capsys, f"--wav={jfk}", "--output_format=json")
    assert rc == 0
    result = json.loads(out)
    assert set(result) == {"text", "segments", "tokens", "language", "model", "timings_ms"}
    assert result["text"].replace(",", "").strip().startswith("And so my fellow Americans")  # beam 5 adds a comma
    assert result["language"] == "en" and result["model"]["variant"] == "tiny"
    assert len(result["segments"]) >= 1 and result["segments"][-1]["end"] <= 11.0
    keys = {"id", "seek", "start", "end", "text", "tokens", "temperature", "avg_logprob", "compression_ratio",
            "no_speech_prob"}
    for segment in result["segments"]:
        assert set(segment) == keys
    text_tokens = [t for s in result["segments"] for t in s["tokens"] if t < 50256]
    assert result["tokens"] == text_tokens
    assert set(result["timings_ms"]) >= {"frontend", "encoder", "prefill", "decode", "total"}


@pytest.mark.parametrize("fmt,start", [("txt", "And so, my fellow Americans"), ("srt", "1\n00:00:00,000 --> "),
                                       ("vtt", "WEBVTT\n\n00:00.000 --> "), ("tsv", "start\tend\ttext\n0\t")])
def test_subtitle_and_text_formats(capsys, jfk, fmt, start):
    rc, out, _ = run(capsys, f"--wav={jfk}", f"--output_format={fmt}")
    assert rc == 0 and out.startswith(start)


def test_without_timestamps_flags_and_output_file(capsys, jfk, tmp_path):
    target = tmp_path / "out.json"
    rc, out, err = run(capsys, f"--wav={jfk}", "--output_format=json", f"--output={target}", "--without_timestamps",
                       "--temperature_increment_on_fallback=none", "--nocondition_on_previous_text",
                       "--initial_prompt=President Kennedy.", "--verbose")
    assert rc == 0 and out == ""
    result = json.loads(target.read_text(encoding="utf-8"))
    (segment,) = result["segments"]  # one window, no timestamps: one segment over the clip
    assert segment["start"] == 0.0 and segment["end"] == 11.0
    assert all(t < 50256 for t in segment["tokens"])
    assert "-->" in err  # --verbose prints segments to stderr
    assert not [p for p in os.listdir(tmp_path) if ".tmp" in p]


@pytest.mark.parametrize("args,message", [
    (["--logprob_threshold=low"], "--logprob_threshold='low' is not a number"),
    (["--language=de"], "needs a multilingual checkpoint"),
    (["--wav=/nonexistent.wav"], "no such file"),
    (["--clip_timestamps=1,x"], "clip_timestamps"),
    (["--temperature=1.5"], "outside [0, 1]"),
    (["--beam_size=9"], "beam_size 9 is more than the 8 sequences"),
    (["--length_penalty=2"], "length_penalty 2.0 must be between 0 and 1"),
    (["--patience=x"], "--patience='x' is not a number"),
    (["--highlight_words"], "--highlight_words needs --word_timestamps"),
    (["--word_timestamps", "--max_line_width=0"], "--max_line_width=0 must be at least 1"),
])
def test_errors_are_one_line(capsys, jfk, args, message):
    rc, out, err = run(capsys, f"--wav={jfk}", *args)
    assert rc == 1 and out == ""
    lines = [line for line in err.splitlines() if line.startswith("transcribe: error:")]
    assert len(lines) == 1 and message in lines[0], err


def test_word_timestamps_in_json_and_word_timed_subtitles(capsys, jfk):
    rc, out, _ = run(capsys, f"--wav={jfk}", "--output_format=json", "--word_timestamps")
    assert rc == 0
    segments = json.loads(out)["segments"]
    words = [w for s in segments for w in s["words"]]
    assert "".join(w["word"] for w in words).replace(",", "").strip().startswith("And so my fellow Americans")
    for s in segments:
        assert set(s["words"][0]) == {"word", "start", "end", "probability"}
        assert s["start"] <= s["words"][0]["start"] and s["words"][-1]["end"] <= s["end"] + 1e-9
    assert all(a["end"] <= b["start"] + 1e-9 for a, b in itertools.pairwise(words))
    rc, out, _ = run(capsys, f"--wav={jfk}", "--output_format=srt", "--word_timestamps", "--max_line_width=20",
                     "--max_line_count=2")
    assert rc == 0
    cues = [c.split("\n")[2:] for c in out.strip().split("\n\n")]
    assert all(1 <= len(lines) <= 2 and all(len(line) <= 21 for line in lines) for lines in cues), cues
    rc, out, _ = run(capsys, f"--wav={jfk}", "--output_format=vtt", "--word_timestamps", "--highlight_words")
    assert rc == 0 and out.count("<u>") >= len(words)

