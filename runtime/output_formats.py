"""Transcript files as openai-whisper's writers produce them (word-timed srt/vtt cues: runtime/subtitles.py).

txt: one stripped segment text per line. vtt: `WEBVTT`, then `MM:SS.mmm --> MM:SS.mmm` cues
(hours when non-zero). srt: numbered cues, `HH:MM:SS,mmm`. tsv: `start end text` in integer
milliseconds. json: the result dictionary. Cue text is stripped, "-->" becomes "->" (it would
end the cue line) and tabs become spaces in tsv.
"""

import json
from typing import Dict, List

FORMATS = ("txt", "json", "srt", "vtt", "tsv")


def format_timestamp(seconds: float, always_include_hours: bool = False, decimal_marker: str = ".") -> str:
    if seconds < 0:
        raise ValueError(f"timestamp {seconds} s is negative")
    ms = round(seconds * 1000.0)
    hours, ms = divmod(ms, 3_600_000)
    minutes, ms = divmod(ms, 60_000)
    secs, ms = divmod(ms, 1_000)
    hours_marker = f"{hours:02d}:" if always_include_hours or hours > 0 else ""
    return f"{hours_marker}{minutes:02d}:{secs:02d}{decimal_marker}{ms:03d}"


def _cues(result: Dict, always_include_hours: bool, decimal_marker: str):
    for s in result["segments"]:
        yield (format_timestamp(s["start"], always_include_hours, decimal_marker),
               format_timestamp(s["end"], always_include_hours, decimal_marker),
               s["text"].strip().replace("-->", "->"))


def render(result: Dict, output_format: str, **word_options) -> str:
    """The file contents for `output_format` (one of FORMATS). When the segments carry word
    timestamps, srt and vtt cues are laid out from the words (runtime/subtitles.py; word_options:
    highlight_words, max_line_width, max_line_count, max_words_per_line)."""
    from runtime import subtitles  # it formats with this module's format_timestamp

    def cues(hours: bool, marker: str):
        if result["segments"] and "words" in result["segments"][0]:
            return subtitles.word_cues(result, hours, marker, **word_options)
        return _cues(result, hours, marker)

    lines: List[str] = []
    if output_format == "txt":
        lines = [s["text"].strip() + "\n" for s in result["segments"]]
    elif output_format == "vtt":
        lines = ["WEBVTT\n\n"] + [f"{a} --> {b}\n{t}\n\n" for a, b, t in cues(False, ".")]
    elif output_format == "srt":
        lines = [f"{i}\n{a} --> {b}\n{t}\n\n" for i, (a, b, t) in enumerate(cues(True, ","), start=1)]
    elif output_format == "tsv":
        lines = ["start\tend\ttext\n"]
        lines += [f"{round(1000 * s['start'])}\t{round(1000 * s['end'])}\t{s['text'].strip().replace(chr(9), ' ')}\n"
                  for s in result["segments"]]
    elif output_format == "json":
        return json.dumps(result, ensure_ascii=False, indent=2) + "\n"
    else:
        raise ValueError(f"output format {output_format!r} is not one of {', '.join(FORMATS)}")
    return "".join(lines)
