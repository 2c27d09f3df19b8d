"""Subtitle cues from word timestamps, as openai-whisper's SubtitlesWriter.iterate_result.

Words are laid out into lines of at most `max_line_width` characters (default 1000) and
`max_words_per_line` words, a cue holding up to `max_line_count` lines; without both a width
and a line count every segment stays its own cue. A pause of more than 3 s starts a new cue
(when segments are not preserved). `highlight_words` emits one cue per word with that word
underlined (`<u>word</u>`), plus the gaps between words as plain cues.
"""

import re
from collections.abc import Iterator

from runtime.output_formats import format_timestamp


def _lines(result: dict, max_line_width: int, max_line_count: int | None, max_words_per_line: int,
           preserve_segments: bool) -> Iterator[list[dict]]:
    line_len, line_count = 0, 1
    subtitle: list[dict] = []
    segments = result["segments"]
    last = next((w["start"] for s in segments for w in s["words"]), segments[0]["start"] if segments else None) or 0.0
    for segment in segments:
        chunk_index, words_count = 0, max_words_per_line
        while chunk_index < len(segment["words"]):
            remaining = len(segment["words"]) - chunk_index
            if max_words_per_line > remaining:
                words_count = remaining
            for i, original in enumerate(segment["words"][chunk_index: chunk_index + words_count]):
                timing = dict(original)
                long_pause = not preserve_segments and timing["start"] - last > 3.0
                has_room = line_len + len(timing["word"]) <= max_line_width
                seg_break = i == 0 and len(subtitle) > 0 and preserve_segments
                if line_len > 0 and has_room and not long_pause and not seg_break:
                    line_len += len(timing["word"])  # the line continues
                else:
                    timing["word"] = timing["word"].strip()
                    if len(subtitle) > 0 and max_line_count is not None and (
                            long_pause or line_count >= max_line_count) or seg_break:
                        yield subtitle  # a new cue
                        subtitle, line_count = [], 1
                    elif line_len > 0:
                        line_count += 1  # a new line in this cue
                        timing["word"] = "\n" + timing["word"]
                    line_len = len(timing["word"].strip())
                subtitle.append(timing)
                last = timing["start"]
            chunk_index += max_words_per_line
    if len(subtitle) > 0:
        yield subtitle


def word_cues(result: dict, always_include_hours: bool, decimal_marker: str, *, highlight_words: bool = False,
              max_line_width: int | None = None, max_line_count: int | None = None,
              max_words_per_line: int | None = None) -> Iterator[tuple[str, str, str]]:
    """(start, end, text) cues of a result whose segments carry `words`."""
    def stamp(seconds: float) -> str:
        return format_timestamp(seconds, always_include_hours, decimal_marker)

    preserve_segments = max_line_count is None or max_line_width is None
    lines = _lines(result, max_line_width or 1000, max_line_count, max_words_per_line or 1000, preserve_segments)
    for subtitle in lines:
        start, end = stamp(subtitle[0]["start"]), stamp(subtitle[-1]["end"])
        text = "".join(word["word"] for word in subtitle)
        if not highlight_words:
            yield start, end, text
            continue
        last = start
        words = [timing["word"] for timing in subtitle]
        for i, this in enumerate(subtitle):
            word_start, word_end = stamp(this["start"]), stamp(this["end"])
            if last != word_start:
                yield last, word_start, text
            yield word_start, word_end, "".join(re.sub(r"^(\s*)(.*)$", r"\1<u>\2</u>", w) if j == i else w
                                                for j, w in enumerate(words))
            last = word_end
