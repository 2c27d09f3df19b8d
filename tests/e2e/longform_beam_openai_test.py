"""Long-form transcription with beam search over the generated C engine equals openai-whisper's
`transcribe(beam_size=5, best_of=5)` (its CLI's defaults) on a recording longer than 60 s.

Both sides: tiny.en with the same converted weights, fp16=False, the default temperature
schedule (beams at 0, best_of samples above), thresholds 2.4 / -1.0 / 0.6, conditioning on the
previous text, timestamps. The comparison needs windows that both sides decode at temperature
0 (sampling draws differ: torch's RNG there, numpy's here), so the test first checks that
openai-whisper fell back on no window of the clip, then compares text, every segment's seek,
start, end, text and tokens, and the log-probabilities to 2e-3. openai-whisper's side is
references.py's longform_beam set, computed by a build action.
"""

import sys
import time

import pytest

from ckw import runfiles
from ckw.runtime import audio_input, longform
from ckw.runtime.engine import Engine
from tests.e2e import references

TEMPERATURES = references.TEMPERATURES
CLIP = references.SONNETS  # 159 s
VARIANT = "tiny"


def test_beam_transcribe_equals_openai_whisper():
    want = references.load("longform_beam", VARIANT)["sonnets beam 5"]
    ref, ref_seconds = want["result"], want["seconds"]
    temperatures = [a["temperature"] for a in want["attempts"]]
    assert set(temperatures) == {0.0}, "openai-whisper fell back to sampling: this clip cannot be compared"

    engine = Engine.from_runfiles(VARIANT)
    wav = audio_input.load_audio_bytes(runfiles.locate("test_audio", CLIP))
    t0 = time.perf_counter()
    got = engine.transcribe_long(
        wav, longform.TranscribeOptions(language="en", temperature=TEMPERATURES, beam_size=5, best_of=5)
    )
    seconds = time.perf_counter() - t0
    print(
        f"\n{CLIP} beam 5: {len(got['segments'])} segments; ckw {seconds:.2f} s, openai-whisper {ref_seconds:.2f} s",
        file=sys.stderr,
    )
    assert [len(w["attempts"]) for w in got["windows"]] == [1] * len(got["windows"])
    assert len(got["segments"]) == len(ref["segments"])
    for s, r in zip(got["segments"], ref["segments"], strict=True):
        for key in ("id", "seek", "start", "end", "text", "tokens", "temperature"):
            assert s[key] == r[key], f"segment {r['id']} {key}: ours {s[key]!r}, openai-whisper {r[key]!r}"
        assert s["avg_logprob"] == pytest.approx(r["avg_logprob"], abs=2e-3)
        assert s["no_speech_prob"] == pytest.approx(r["no_speech_prob"], abs=2e-3)
    assert got["text"] == ref["text"]
    assert got["segments"][-1]["end"] > 60.0
