"""Word-timed srt/vtt cues (ckw/runtime/subtitles.py through output_formats.render) equal
openai-whisper's WriteSRT/WriteVTT on generated results, for every combination of
highlight_words, max_line_width, max_line_count and max_words_per_line."""

import io
import itertools

import numpy as np
import pytest
from whisper.utils import WriteSRT, WriteVTT

from ckw.runtime import output_formats

WORDS = [
    " And",
    " so,",
    " my",
    " fellow",
    " Americans,",
    " ask",
    " not",
    " what",
    " your",
    " country",
    " can",
    " do",
    " for",
    " you,",
    " ask",
    " what",
    " you",
    " can",
    " do",
    " for",
    " your",
    " country.",
    " -->",
    "!",
]


def result(seed: int) -> dict:
    rng = np.random.default_rng(seed)
    t, segments = float(rng.random()), []
    for _ in range(int(rng.integers(1, 4))):
        words = []
        for _ in range(int(rng.integers(1, 9))):
            d = round(float(rng.choice([0.0, 0.12, 0.4, 0.9])), 2)
            words.append(
                {
                    "word": str(rng.choice(WORDS)),
                    "start": round(t, 2),
                    "end": round(t + d, 2),
                    "probability": float(rng.random()),
                }
            )
            t += d + float(rng.choice([0.0, 0.1, 3.5]))
        segments.append(
            {
                "start": words[0]["start"],
                "end": words[-1]["end"],
                "text": "".join(w["word"] for w in words),
                "words": words,
            }
        )
    return {"text": "".join(s["text"] for s in segments), "segments": segments, "language": "en"}


OPTIONS = [
    dict(zip(("highlight_words", "max_line_width", "max_line_count", "max_words_per_line"), v))
    for v in itertools.product([False, True], [None, 12, 30], [None, 1, 2], [None, 1, 3])
]


@pytest.mark.parametrize("seed", range(8))
@pytest.mark.parametrize("fmt,writer", [("srt", WriteSRT), ("vtt", WriteVTT)])
def test_word_cues_equal_openai_writers(seed, fmt, writer):
    res = result(seed)
    for options in OPTIONS:
        expected = io.StringIO()
        writer(".").write_result(res, expected, options)
        assert output_formats.render(res, fmt, **options) == expected.getvalue(), options
