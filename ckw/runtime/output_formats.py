"""Transcript files as openai-whisper's writers produce them (cues: ckw/runtime/subtitles.py).

txt: one stripped segment text per line. vtt: `WEBVTT`, then `MM:SS.mmm --> MM:SS.mmm` cues
(hours when non-zero). srt: numbered cues, `HH:MM:SS,mmm`. tsv: `start end text` in integer
milliseconds, tabs in the text become spaces. json: the result dictionary.
"""

import json

from ckw.runtime import subtitles

FORMATS = ("txt", "json", "srt", "vtt", "tsv")
# What a transcript file holds of a result (Engine.transcribe_long's or transcription.collect's).
TRANSCRIPT_KEYS = ("text", "segments", "tokens", "language", "model", "timings_ms")


def render(result: dict, output_format: str, **layout) -> str:
    """The file contents for `output_format` (one of FORMATS). layout: how word-timed srt and vtt
    cues are laid out (ckw/runtime/subtitles.py word_cues: highlight_words, max_line_width,
    max_line_count, max_words_per_line)."""
    if output_format == "txt":
        lines = [s["text"].strip() + "\n" for s in result["segments"]]
    elif output_format == "vtt":
        lines = ["WEBVTT\n\n"] + [f"{a} --> {b}\n{t}\n\n" for a, b, t in subtitles.cues(result, False, ".", **layout)]
    elif output_format == "srt":
        lines = [
            f"{i}\n{a} --> {b}\n{t}\n\n"
            for i, (a, b, t) in enumerate(subtitles.cues(result, True, ",", **layout), start=1)
        ]
    elif output_format == "tsv":
        lines = ["start\tend\ttext\n"]
        lines += [
            f"{round(1000 * s['start'])}\t{round(1000 * s['end'])}\t{s['text'].strip().replace(chr(9), ' ')}\n"
            for s in result["segments"]
        ]
    elif output_format == "json":
        return json.dumps(result, ensure_ascii=False, indent=2) + "\n"
    else:
        raise ValueError(f"output format {output_format!r} is not one of {', '.join(FORMATS)}")
    return "".join(lines)


def render_transcript(result: dict, output_format: str, **layout) -> str:
    """The output file of a transcription result: its TRANSCRIPT_KEYS in `output_format`."""
    return render({k: result[k] for k in TRANSCRIPT_KEYS}, output_format, **layout)
