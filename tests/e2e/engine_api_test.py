"""Engine.transcribe(audio, **options), the Python API the CLI is a thin layer over: lazy
segments and info in faster-whisper's manner, any input kind (path, bytes, samples), progress in
seconds, options checked by name, one-line errors."""

import functools
import inspect

import numpy as np
import pytest
import soundfile

from ckw import runfiles
from ckw.runtime.engine import Engine, EngineError
from ckw.runtime.options import TranscribeOptions
from ckw.runtime.transcription import Segment


@functools.cache
def engine(variant: str = "tiny") -> Engine:
    return Engine.from_runfiles(variant)


def jfk() -> str:
    return runfiles.locate("test_audio", "jfk.wav")


def test_segments_are_lazy_and_info_fills_in_when_they_are_exhausted():
    seconds = []
    segments, info = engine().transcribe(jfk(), on_progress=seconds.append)
    assert inspect.isgenerator(segments)
    assert (info.language, info.language_probability, info.all_language_probs) == ("en", None, None)  # tiny.en
    assert info.duration == 11.0 and info.model["variant"] == "tiny"
    assert info.windows == [] and info.text is None and seconds == []  # nothing decoded yet
    first = next(segments)
    assert isinstance(first, Segment) and first.start == 0.0 and first.text.startswith(" And so my fellow")
    rest = list(segments)
    assert len(info.windows) == 1 and info.text.strip().endswith("for your country")
    assert set(info.timings_ms) == {"frontend", "encoder", "prefill", "decode", "total"}
    assert sum(seconds) == pytest.approx(11.0)
    assert [s.as_dict() for s in [first, *rest]] == engine().transcribe_long(jfk())["segments"]


def test_bytes_and_samples_give_the_file_transcript():
    want = [s.as_dict() for s in engine().transcribe(jfk())[0]]
    with open(jfk(), "rb") as f:
        from_bytes = [s.as_dict() for s in engine().transcribe(f.read())[0]]
    samples, _ = soundfile.read(jfk(), dtype="float32")
    from_samples = [s.as_dict() for s in engine().transcribe(samples)[0]]
    assert from_bytes == want and from_samples == want


def test_options_are_openai_whisper_keywords():
    segments, info = engine().transcribe(
        jfk(), without_timestamps=True, temperature=0.0, condition_on_previous_text=False
    )
    (segment,) = list(segments)
    assert segment.end == 11.0 and info.options == TranscribeOptions(
        language="en", without_timestamps=True, temperature=0.0, condition_on_previous_text=False
    )


@pytest.mark.parametrize(
    "options,message",
    [
        ({"beam_sise": 5}, "beam_sise is not a transcribe option"),
        ({"beam_size": 9}, "beam_size=9 is more than the 8 sequences"),
        ({"temperature": (0.0, 1.5)}, "temperature=1.5 must be between 0 and 1"),
        ({"patience": 2.0}, "patience needs beam_size"),
        ({"language": "de"}, "needs a multilingual checkpoint"),
        ({"task": "translate"}, "needs a multilingual checkpoint"),
    ],
)
def test_bad_options_are_one_line_errors(options, message):
    with pytest.raises(ValueError, match=message) as e:
        engine().transcribe(jfk(), **options)
    assert "\n" not in str(e.value)


def test_base_detects_the_language_with_its_probability():
    _, info = engine("base").transcribe(np.asarray(soundfile.read(jfk(), dtype="float32")[0]))
    assert info.language == "en" and info.language_probability > 0.9
    assert sum(info.all_language_probs.values()) == pytest.approx(1.0, abs=1e-6)


def test_precision_selects_the_build_and_a_bad_one_is_one_line():
    with Engine.from_runfiles("tiny", precision="bf16") as bf16:
        assert bf16.model_info()["precision"] == "bf16" and bf16.model_info()["variant"] == "tiny"
        assert bf16.manifest_sha256 != engine().manifest_sha256  # its own checkpoint and libraries
        assert bf16.encoder.lib.prefix.startswith("ckw_tiny_bf16_encoder")
    assert engine().model_info()["precision"] == "fp32"
    with pytest.raises(EngineError, match=r"^unknown precision 'fp16'; use fp32, bf16 or int8$"):
        Engine.from_runfiles("tiny", precision="fp16")
