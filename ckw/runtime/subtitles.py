"""Subtitle cues and their timestamps, as openai-whisper's SubtitlesWriter (utils.py).

Without word timestamps a cue is a segment: its stripped text ("-->" becomes "->": it would end
the cue line). With them (SubtitlesWriter.iterate_result), words are laid out into lines of at
most `max_line_width` characters (default 1000) and `max_words_per_line` words, a cue holding
up to `max_line_count` lines; without both a width
and a line count every segment stays its own cue. A pause of more than 3 s starts a new cue
(when segments are not preserved). `highlight_words` emits one cue per word with that word
underlined (`<u>word</u>`), plus the gaps between words as plain cues.
"""

import re
from collections.abc import Iterator

from ckw.runtime.options import OptionError

# How word-timed cues are laid out (word_cues' keywords).
LAYOUT_OPTIONS = ("highlight_words", "max_line_width", "max_line_count", "max_words_per_line")


def format_timestamp(seconds: float, always_include_hours: bool = False, decimal_marker: str = ".") -> str:
    """openai-whisper's format_timestamp: [HH:]MM:SS.mmm (hours when non-zero or asked for)."""
    if seconds < 0:
        raise ValueError(f"timestamp {seconds} s is negative")
    ms = round(seconds * 1000.0)
    hours, ms = divmod(ms, 3_600_000)
    minutes, ms = divmod(ms, 60_000)
    secs, ms = divmod(ms, 1_000)
    hours_marker = f"{hours:02d}:" if always_include_hours or hours > 0 else ""
    return f"{hours_marker}{minutes:02d}:{secs:02d}{decimal_marker}{ms:03d}"


def _lines(
    result: dict, max_line_width: int, max_line_count: int | None, max_words_per_line: int, preserve_segments: bool
) -> Iterator[list[dict]]:
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
            for i, original in enumerate(segment["words"][chunk_index : chunk_index + words_count]):
                timing = dict(original)
                long_pause = not preserve_segments and timing["start"] - last > 3.0
                has_room = line_len + len(timing["word"]) <= max_line_width
                seg_break = i == 0 and len(subtitle) > 0 and preserve_segments
                if line_len > 0 and has_room and not long_pause and not seg_break:
                    line_len += len(timing["word"])  # the line continues
                else:
                    timing["word"] = timing["word"].strip()
                    if (
                        len(subtitle) > 0
                        and max_line_count is not None
                        and (long_pause or line_count >= max_line_count)
                        or seg_break
                    ):
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


def check_layout(word_timestamps: bool, **layout) -> None:
    """OptionError for a layout option given without word timestamps, or a count below 1."""
    for name, value in layout.items():
        if name not in LAYOUT_OPTIONS:
            raise OptionError(name, f" is not a subtitle layout option; known: {', '.join(LAYOUT_OPTIONS)}")
        if value not in (None, False) and not word_timestamps:
            raise OptionError(name, " needs word_timestamps (the layout is made from the words)")
        if name != "highlight_words" and value is not None and value < 1:
            raise OptionError(name, f"={value} must be at least 1")


def word_cues(
    result: dict,
    always_include_hours: bool,
    decimal_marker: str,
    *,
    highlight_words: bool = False,
    max_line_width: int | None = None,
    max_line_count: int | None = None,
    max_words_per_line: int | None = None,
) -> Iterator[tuple[str, str, str]]:
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
            yield (
                word_start,
                word_end,
                "".join(re.sub(r"^(\s*)(.*)$", r"\1<u>\2</u>", w) if j == i else w for j, w in enumerate(words)),
            )
            last = word_end


def cues(result: dict, always_include_hours: bool, decimal_marker: str, **layout) -> Iterator[tuple[str, str, str]]:
    """(start, end, text) of every cue: laid out from the words when the segments carry them
    (layout: word_cues' options), else one per segment."""
    if result["segments"] and "words" in result["segments"][0]:
        yield from word_cues(result, always_include_hours, decimal_marker, **layout)
        return
    for s in result["segments"]:
        yield (
            format_timestamp(s["start"], always_include_hours, decimal_marker),
            format_timestamp(s["end"], always_include_hours, decimal_marker),
            s["text"].strip().replace("-->", "->"),
        )
