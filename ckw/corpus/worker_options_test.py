"""The corpus tool passes the VAD filter's options to its workers as it passes every decoding option:
the driver's options (options_from over //tools:transcribe's flags, then dataclasses.asdict: plain
data, as the workers receive it) given to a CorpusWorker (ckw/corpus/worker.py, in this process,
no Ray) transcribe a recording with long silences as //tools:transcribe does with the same flags."""

import dataclasses
import json

import pytest
import soundfile
from absl import flags

from ckw import runfiles
from ckw.cli import transcribe
from ckw.corpus.worker import CorpusWorker
from ckw.runtime.options import options_from
from ckw.runtime.testing import speech_gaps

FLAGS = flags.FLAGS
VAD_FLAGS = ["--vad_filter", "--vad_threshold=0.55", "--vad_min_silence_duration_ms=1000", "--vad_speech_pad_ms=300"]


@pytest.fixture(scope="module")
def gaps_wav(tmp_path_factory):
    clip = speech_gaps.read_16k(runfiles.locate("test_audio", "jfk.wav"))
    recording = speech_gaps.with_gaps([clip, clip], gaps=speech_gaps.GAPS[:3])
    path = tmp_path_factory.mktemp("vad") / "gaps.wav"
    soundfile.write(str(path), recording.samples, 16000, subtype="FLOAT")
    return path


def cli_json(tmp_path, wav, *args) -> str:
    out = tmp_path / "single.json"
    FLAGS.unparse_flags()
    FLAGS(["transcribe", f"--wav={wav}", f"--output={out}", "--output_format=json", "--noverbose", *args])
    assert transcribe.main(["transcribe"]) == 0
    return out.read_text(encoding="utf-8")


def test_the_workers_get_the_vad_options_and_write_the_clis_output(gaps_wav, tmp_path):
    FLAGS.unparse_flags()
    FLAGS(["transcribe_corpus", *VAD_FLAGS])
    options = dataclasses.asdict(options_from(**transcribe.options_from_flags()))  # as ckw/cli/transcribe_corpus.py
    assert options["vad_filter"] is True
    assert options["vad_parameters"] == {
        "threshold": 0.55,
        "neg_threshold": None,
        "min_speech_duration_ms": 0,
        "max_speech_duration_s": float("inf"),
        "min_silence_duration_ms": 1000,
        "speech_pad_ms": 300,
    }
    json.loads(json.dumps(options))  # plain data: the journal's batch record, Ray's arguments
    spec = {"checkpoint_dir": runfiles.locate("whisper_tiny", "weights.bin").rsplit("/", 1)[0], "model": "tiny.en"}
    worker = CorpusWorker(spec, options, "json")
    try:
        done = worker.transcribe(str(gaps_wav))
    finally:
        worker.streams.close()
    assert "error" not in done, done
    want = cli_json(tmp_path, gaps_wav, *VAD_FLAGS)
    got = json.loads(done["output"])
    assert got["segments"] == json.loads(want)["segments"] and got["text"] == json.loads(want)["text"]
    assert got["segments"][0]["start"] > 3.5  # on the recording's timeline
    assert done["audio_seconds"] == pytest.approx(33.0)  # the recording's duration
    assert json.loads(cli_json(tmp_path, gaps_wav))["segments"] != got["segments"]  # the filter changed something
