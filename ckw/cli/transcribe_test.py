"""//tools:transcribe in-process: output formats and files, several inputs, the progress bar,
the long-form flags, language detection by default on base, one-line errors."""

import itertools
import json
import os
import pathlib
import sys

import pytest
import srt
import webvtt
from absl import flags

from ckw import runfiles
from ckw.cli import transcribe

FLAGS = flags.FLAGS
KEYS = {
    "id",
    "seek",
    "start",
    "end",
    "text",
    "tokens",
    "temperature",
    "avg_logprob",
    "compression_ratio",
    "no_speech_prob",
}


def run(capsys, *args):
    FLAGS.unparse_flags()
    argv = transcribe.parse_flags(["transcribe", *args])
    rc = transcribe.main(argv)
    out, err = capsys.readouterr()
    return rc, out, err


def error_lines(err):
    return [line for line in err.splitlines() if line.startswith("transcribe: error:")]


@pytest.fixture(scope="module")
def jfk():
    return runfiles.locate("test_audio", "jfk.wav")


def test_json_to_stdout_has_segments_and_the_old_keys(capsys, jfk):
    rc, out, _ = run(capsys, f"--wav={jfk}", "--output_format=json", "--output=-")
    assert rc == 0
    result = json.loads(out)
    assert set(result) == {"text", "segments", "tokens", "language", "model", "timings_ms"}
    assert result["text"].replace(",", "").strip().startswith("And so my fellow Americans")  # beam 5 adds a comma
    assert result["language"] == "en" and result["model"]["variant"] == "tiny"
    assert len(result["segments"]) >= 1 and result["segments"][-1]["end"] <= 11.0
    for segment in result["segments"]:
        assert set(segment) == KEYS
    text_tokens = [t for s in result["segments"] for t in s["tokens"] if t < 50256]
    assert result["tokens"] == text_tokens
    assert set(result["timings_ms"]) >= {"frontend", "encoder", "prefill", "decode", "total"}


@pytest.mark.parametrize(
    "fmt,start",
    [
        ("txt", "And so, my fellow Americans"),
        ("srt", "1\n00:00:00,000 --> "),
        ("vtt", "WEBVTT\n\n00:00.000 --> "),
        ("tsv", "start\tend\ttext\n0\t"),
    ],
)
def test_subtitle_and_text_formats(capsys, jfk, fmt, start):
    rc, out, _ = run(capsys, f"--wav={jfk}", f"--output_format={fmt}", "--output=-")
    assert rc == 0 and out.startswith(start)


def test_all_formats_in_output_dir_and_subtitles_parse_to_the_segments(capsys, jfk, tmp_path):
    rc, out, err = run(capsys, f"--wav={jfk}", f"--output_dir={tmp_path / 'out'}")  # default: all, verbose
    assert rc == 0 and out == ""
    assert sorted(os.listdir(tmp_path / "out")) == [f"jfk.{f}" for f in ("json", "srt", "tsv", "txt", "vtt")]
    segments = json.loads((tmp_path / "out" / "jfk.json").read_text(encoding="utf-8"))["segments"]
    assert len(segments) == 2
    assert err.count("-->") == len(segments)  # --verbose (the default) prints each segment
    cues = list(srt.parse((tmp_path / "out" / "jfk.srt").read_text(encoding="utf-8")))
    vtt = webvtt.read(str(tmp_path / "out" / "jfk.vtt"))
    assert len(cues) == len(vtt.captions) == len(segments)
    for s, cue, caption in zip(segments, cues, vtt.captions):
        assert cue.start.total_seconds() == pytest.approx(s["start"], abs=5e-4)
        assert cue.end.total_seconds() == pytest.approx(s["end"], abs=5e-4)
        assert cue.content == caption.text == s["text"].strip()
        assert caption.start_time.in_milliseconds() / 1000 == pytest.approx(s["start"], abs=5e-4)
        assert caption.end_time.in_milliseconds() / 1000 == pytest.approx(s["end"], abs=5e-4)
    lines = (tmp_path / "out" / "jfk.txt").read_text(encoding="utf-8").splitlines()
    assert lines == [s["text"].strip() for s in segments]


def test_several_inputs_one_bad_the_others_written(capsys, jfk, tmp_path):
    bad = tmp_path / "notes.dat"
    bad.write_text("not audio\n", encoding="utf-8")
    demo = runfiles.locate("ckw", transcribe.DEMO_CLIP)
    rc, _, err = run(
        capsys,
        f"--wav={jfk}",
        f"--wav={bad}",
        f"--wav={demo}",
        "--output_format=txt",
        f"--output_dir={tmp_path}",
        "--noverbose",
    )
    assert rc == 1
    (line,) = error_lines(err)
    assert str(bad) in line and "FFmpeg" in line
    assert "1 of 3 files failed" in err
    assert (tmp_path / "jfk.txt").read_text(encoding="utf-8").replace(",", "").startswith("And so my fellow Americans")
    assert (tmp_path / "demo_clip.txt").read_text(encoding="utf-8").strip()
    assert not (tmp_path / "notes.txt").exists()  # nothing written for the failed input
    assert not [p for p in os.listdir(tmp_path) if ".tmp" in p]


def test_outputs_that_would_collide_are_refused(capsys, jfk, tmp_path):
    other = tmp_path / "jfk.wav"
    other.write_bytes(pathlib.Path(jfk).read_bytes())
    rc, _, err = run(capsys, f"--wav={jfk}", f"--wav={other}", f"--output_dir={tmp_path / 'o'}")
    assert rc == 2 and "would both write jfk.*" in error_lines(err)[0]


def test_an_output_never_replaces_an_input(capsys, tmp_path, jfk):
    odd = tmp_path / "talk.txt"  # audio under a transcript's name
    odd.write_bytes(pathlib.Path(jfk).read_bytes())
    rc, _, err = run(capsys, f"--wav={odd}", "--output_format=txt", f"--output_dir={tmp_path}")
    assert rc == 2 and "would overwrite the input" in error_lines(err)[0]
    assert odd.read_bytes() == pathlib.Path(jfk).read_bytes()


def test_progress_bar_on_a_terminal_only(capsys, jfk, monkeypatch, tmp_path):
    rc, _, err = run(capsys, f"--wav={jfk}", "--noverbose", "--output_format=txt", f"--output_dir={tmp_path}")
    assert rc == 0 and err == ""  # not a terminal: quiet
    monkeypatch.setattr(sys.stderr, "isatty", lambda: True)
    rc, _, err = run(capsys, f"--wav={jfk}", "--noverbose", "--output_format=txt", f"--output_dir={tmp_path}")
    assert rc == 0 and "11.0/11.0 s" in err and "100%" in err


def test_without_timestamps_flags_threads_and_output_file(capsys, jfk, tmp_path):
    target = tmp_path / "out.json"
    rc, out, err = run(
        capsys,
        f"--wav={jfk}",
        "--output_format=json",
        f"--output={target}",
        "--without_timestamps",
        "--temperature_increment_on_fallback=none",
        "--nocondition_on_previous_text",
        "--initial_prompt=President Kennedy.",
        "--threads=1",
    )
    assert rc == 0 and out == ""
    result = json.loads(target.read_text(encoding="utf-8"))
    (segment,) = result["segments"]  # one window, no timestamps: one segment over the clip
    assert segment["start"] == 0.0 and segment["end"] == 11.0
    assert all(t < 50256 for t in segment["tokens"])
    assert "-->" in err
    assert not [p for p in os.listdir(tmp_path) if ".tmp" in p]


def test_language_is_detected_by_default_on_base(capsys, jfk):
    rc, out, err = run(capsys, f"--wav={jfk}", "--model=base", "--output_format=json", "--output=-")
    assert rc == 0
    assert json.loads(out)["language"] == "en"
    assert "detected language: en" in err


@pytest.mark.parametrize(
    "args,message,status",
    [
        (["--logprob_threshold=low"], "--logprob_threshold='low' is not a number", 2),
        (["--language=de"], "needs a multilingual checkpoint", 1),
        (["--task=translate"], "needs a multilingual checkpoint", 1),
        (["--wav=/nonexistent.wav"], "/nonexistent.wav: no such file", 1),
        (["--clip_timestamps=1,x"], "clip_timestamps", 2),
        (["--temperature=1.5"], "--temperature=1.5 must be between 0 and 1", 2),
        (["--threads=-1"], "--threads=-1", 2),
        (["--output_format=all", "--output=x"], "--output takes one input", 2),
        (["--beam_size=9"], "--beam_size=9 is more than the 8 sequences", 2),
        (["--length_penalty=2"], "--length_penalty=2.0 must be between 0 and 1", 2),
        (["--patience=x"], "--patience='x' is not a number", 2),
        (["--highlight_words"], "--highlight_words needs word_timestamps", 2),
        (["--best_of=0"], "--best_of=0 must be at least 1", 2),
        (["--suppress_tokens=1,a"], "--suppress_tokens='1,a' is not a comma-separated list", 2),
        (["--word_timestamps", "--max_line_width=0"], "--max_line_width=0 must be at least 1", 2),
    ],
)
def test_errors_are_one_line(capsys, jfk, args, message, status):
    wav = [] if any(a.startswith("--wav") for a in args) else [f"--wav={jfk}"]
    rc, out, err = run(capsys, *wav, *args)
    assert rc == status and out == ""
    lines = error_lines(err)
    assert len(lines) == 1 and message in lines[0], err


@pytest.mark.parametrize("flag", ["--help", "-h", "--helpfull"])
def test_help_exits_0_with_the_usage_line_and_the_flags(capsys, flag):
    FLAGS.unparse_flags()
    with pytest.raises(SystemExit) as exit_:
        transcribe.parse_flags(["transcribe", flag])
    out, _ = capsys.readouterr()
    assert exit_.value.code == 0
    assert out.startswith("usage: transcribe [flags] [audio ...]\n")
    assert "--model:" in out and "--output_format:" in out and "--word_timestamps:" in out
    assert ("--flagfile:" in out) == (flag == "--helpfull")  # absl's own flags in the full help only


def test_an_unknown_isa_cap_is_one_line_error(capsys, jfk, monkeypatch):
    monkeypatch.setenv("CKW_ISA", "avx3")
    rc, out, err = run(capsys, f"--wav={jfk}")
    assert rc == 1 and out == ""
    lines = error_lines(err)
    assert len(lines) == 1 and "CKW_ISA='avx3'" in lines[0], err


def test_precision_bf16_derives_the_bf16_build(capsys, jfk):
    rc, out, _ = run(capsys, f"--wav={jfk}", "--precision=bf16", "--output_format=json", "--output=-")
    assert rc == 0
    result = json.loads(out)
    assert result["model"]["precision"] == "bf16" and result["model"]["variant"] == "tiny"
    assert result["text"].replace(",", "").strip().startswith("And so my fellow Americans")
    with open(runfiles.locate("ckw", "models/whisper/tiny_bf16_checkpoint/manifest.json")) as f:
        assert result["model"]["manifest_sha256"] == json.load(f)["manifest_sha256"]


def test_precision_bf16_of_a_model_without_bf16_libraries_is_one_usage_line(capsys, jfk):
    rc, out, err = run(capsys, f"--wav={jfk}", "--precision=bf16", "--model=small")
    lines = error_lines(err)
    assert rc == 2 and out == "" and len(lines) == 1, err
    assert (
        "--precision bf16: this build has bf16 libraries for base, tiny.en (and their fine-tunes, as --model_dir), "
        "not for --model small; use --precision fp32"
    ) in lines[0]


@pytest.mark.parametrize("value", ["fp16", "BF16", ""])
def test_a_bad_precision_is_one_usage_line_naming_the_flag(capsys, value):
    FLAGS.unparse_flags()
    with pytest.raises(SystemExit) as e:
        transcribe.parse_flags(["transcribe", f"--precision={value}"])
    _, err = capsys.readouterr()
    lines = error_lines(err)
    assert e.value.code == 2 and len(lines) == 1 and len(err.splitlines()) == 1, err
    assert "--precision" in lines[0] and "fp32" in lines[0] and "bf16" in lines[0], err
    FLAGS.unparse_flags()


def test_word_timestamps_in_json_and_word_timed_subtitles(capsys, jfk):
    rc, out, _ = run(capsys, f"--wav={jfk}", "--output_format=json", "--output=-", "--word_timestamps")
    assert rc == 0
    segments = json.loads(out)["segments"]
    words = [w for s in segments for w in s["words"]]
    assert "".join(w["word"] for w in words).replace(",", "").strip().startswith("And so my fellow Americans")
    for s in segments:
        assert set(s["words"][0]) == {"word", "start", "end", "probability"}
        assert s["start"] <= s["words"][0]["start"] and s["words"][-1]["end"] <= s["end"] + 1e-9
    assert all(a["end"] <= b["start"] + 1e-9 for a, b in itertools.pairwise(words))
    rc, out, _ = run(
        capsys,
        f"--wav={jfk}",
        "--output_format=srt",
        "--output=-",
        "--word_timestamps",
        "--max_line_width=20",
        "--max_line_count=2",
    )
    assert rc == 0
    cues = [c.split("\n")[2:] for c in out.strip().split("\n\n")]
    assert all(1 <= len(lines) <= 2 and all(len(line) <= 21 for line in lines) for lines in cues), cues
    rc, out, _ = run(
        capsys, f"--wav={jfk}", "--output_format=vtt", "--output=-", "--word_timestamps", "--highlight_words"
    )
    assert rc == 0 and out.count("<u>") >= len(words)


def test_openai_whisper_command_lines_run_unchanged(capsys, jfk, tmp_path):
    """Audio files as positional arguments and `--flag True/False`, as openai-whisper's CLI takes them."""
    rc, out, _ = run(
        capsys,
        jfk,
        "--word_timestamps",
        "True",
        "--condition_on_previous_text",
        "False",
        "--output_format",
        "json",
        "--output_dir",
        str(tmp_path),
        "--verbose",
        "False",
    )
    assert rc == 0 and out == ""
    result = json.loads((tmp_path / "jfk.json").read_text(encoding="utf-8"))
    assert all("words" in s for s in result["segments"])
    assert not FLAGS.condition_on_previous_text and not FLAGS.verbose
    rc, out, _ = run(capsys, "--word_timestamps", "false", jfk, "--output_format=txt", "--output=-")
    assert rc == 0 and out.replace(",", "").startswith("And so my fellow Americans") and not FLAGS.word_timestamps


def test_positional_and_flag_inputs_are_transcribed_together(capsys, jfk, tmp_path):
    other = tmp_path / "copy.wav"
    other.write_bytes(pathlib.Path(jfk).read_bytes())
    rc, _, err = run(
        capsys, str(other), f"--wav={jfk}", "--output_format=txt", f"--output_dir={tmp_path}", "--beam_size=0"
    )
    assert rc == 0, err
    assert (tmp_path / "copy.txt").read_text(encoding="utf-8") == (tmp_path / "jfk.txt").read_text(encoding="utf-8")


@pytest.fixture(scope="module")
def gaps_wav(tmp_path_factory):
    """Shared speech with long silences and noise between the clips (ckw/runtime/testing/speech_gaps.py)."""
    import soundfile

    from ckw.runtime.testing import speech_gaps

    clips = [speech_gaps.read_16k(runfiles.locate("test_audio", p)) for p in ("jfk.wav", "jfk.wav")]
    recording = speech_gaps.with_gaps(clips, gaps=speech_gaps.GAPS[:3])
    path = tmp_path_factory.mktemp("vad") / "gaps.wav"
    soundfile.write(str(path), recording.samples, 16000, subtype="FLOAT")
    return str(path), recording


VAD_ARGS = [
    "--vad_threshold",
    "0.55",
    "--vad_neg_threshold",
    "0.3",
    "--vad_min_speech_duration_ms",
    "100",
    "--vad_max_speech_duration_s",
    "20",
    "--vad_min_silence_duration_ms",
    "1500",
    "--vad_speech_pad_ms",
    "300",
]


@pytest.mark.parametrize("spelling", [["--vad_filter"], ["--vad_filter", "True"], ["--vad_filter=true"]])
def test_vad_flags_reach_the_engine(capsys, jfk, monkeypatch, spelling):
    from ckw.runtime.engine import Engine
    from ckw.runtime.speech_timestamps import VadOptions

    seen = []
    original = Engine.transcribe

    def spy(self, audio, **options):  # records what the CLI asks for, transcribes without the VAD
        seen.append(options)
        return original(self, audio, **{k: v for k, v in options.items() if not k.startswith("vad_")})

    monkeypatch.setattr(Engine, "transcribe", spy)
    rc, _, err = run(capsys, jfk, *spelling, *VAD_ARGS, "--output_format=txt", "--output=-", "--beam_size=0")
    assert rc == 0, err
    (options,) = seen
    assert options["vad_filter"] is True
    assert options["vad_parameters"] == VadOptions(
        threshold=0.55,
        neg_threshold=0.3,
        min_speech_duration_ms=100,
        max_speech_duration_s=20.0,
        min_silence_duration_ms=1500,
        speech_pad_ms=300,
    )
    seen.clear()
    rc, _, _ = run(capsys, jfk, "--novad_filter", "--output_format=txt", "--output=-", "--beam_size=0")
    assert rc == 0 and seen[0]["vad_filter"] is False and seen[0]["vad_parameters"] is None


def test_vad_filter_transcribes_the_speech_on_the_recordings_timeline(capsys, gaps_wav):
    path, recording = gaps_wav
    rc, out, err = run(
        capsys, path, "--vad_filter", "True", "--word_timestamps", "True", "--output_format=json", "--output=-"
    )
    assert rc == 0, err
    result = json.loads(out)
    assert "gaps.wav: VAD filter kept" in err and "(2 speech chunks)" in err
    assert result["text"].lower().count("ask not what your country") == 2
    words = [w for s in result["segments"] for w in s["words"]]
    for w in words:  # in a clip (with the VAD's 0.4 s pad), never in the silences or the noise
        assert any(s - 0.41 <= w["start"] and w["end"] <= e + 0.41 for s, e in recording.speech), w
    assert words[0]["start"] > recording.speech[0][0] - 0.41 and words[-1]["start"] > recording.speech[1][0]
    rc, out, err = run(capsys, path, "--vad_filter", *VAD_ARGS, "--output_format=srt", "--output=-")
    assert rc == 0 and out.startswith("1\n00:00:0"), err


@pytest.mark.parametrize(
    "args,message",
    [
        (["--vad_filter", "--vad_threshold", "2"], "--vad_threshold=2.0 must be between 0 and 1"),
        (["--vad_filter", "--vad_neg_threshold=x"], "--vad_neg_threshold='x' is not a number"),
        (["--vad_filter", "--vad_neg_threshold=1.5"], "--vad_neg_threshold=1.5 must be between 0 and 1"),
        (["--vad_filter", "--vad_min_speech_duration_ms=-250"], "--vad_min_speech_duration_ms=-250 must be at least 0"),
        (["--vad_filter", "--vad_max_speech_duration_s=0"], "--vad_max_speech_duration_s=0.0 must be more than 0"),
        (["--vad_filter", "--vad_min_silence_duration_ms=-1"], "--vad_min_silence_duration_ms=-1 must be at least 0"),
        (["--vad_filter", "--vad_speech_pad_ms=-400"], "--vad_speech_pad_ms=-400 must be at least 0"),
        (["--vad_threshold=0.6"], "--vad_threshold needs --vad_filter"),
        (["--vad_filter", "--clip_timestamps=1,3"], "--vad_filter=True with clip_timestamps='1,3'"),
        (["--batch_size=-1"], "--batch_size=-1 must be at least 0"),
        (["--batch_size=4", "--clip_timestamps=1,3"], "--batch_size=4 with clip_timestamps='1,3'"),
        (["--batch_size=4", "--vad_threshold=2"], "--vad_threshold=2.0 must be between 0 and 1"),
    ],
)
def test_bad_vad_flags_are_one_usage_line(capsys, jfk, args, message):
    rc, out, err = run(capsys, f"--wav={jfk}", *args)
    lines = error_lines(err)
    assert rc == 2 and out == "" and len(lines) == 1 and len(err.splitlines()) == 1, err
    assert lines[0].startswith(f"transcribe: error: {message}"), err


def test_batch_size_reaches_the_engine_and_transcribes_batched(capsys, gaps_wav, monkeypatch):
    from ckw.runtime.engine import Engine

    path, recording = gaps_wav
    seen = []
    original = Engine.transcribe

    def spy(self, audio, **options):
        seen.append(options)
        return original(self, audio, **options)

    monkeypatch.setattr(Engine, "transcribe", spy)
    rc, out, err = run(capsys, path, "--batch_size", "4", "--output_format=json", "--output=-")
    assert rc == 0, err
    assert seen[0]["batch_size"] == 4 and seen[0]["vad_parameters"] is None
    result = json.loads(out)
    assert result["text"].lower().count("ask not what your country") == 2
    for s in result["segments"]:  # starts and ends in a clip (with the VAD's 0.4 s pad), never in the silences
        for t in (s["start"], s["end"]):
            assert any(a - 0.41 <= t <= b + 0.41 for a, b in recording.speech), s
    seen.clear()
    rc, _, err = run(
        capsys, path, "--batch_size=2", "--vad_min_silence_duration_ms=500", "--output_format=txt", "--output=-"
    )
    assert rc == 0 and seen[0]["vad_parameters"] == {"min_silence_duration_ms": 500}, err
