"""A transcription result as openai's audio API answers it.

json: {"text"}; verbose_json: task, language (the code, e.g. "en"), duration, text, segments (openai's
fields) and, with word timestamps, words; text, srt, vtt: the CLI's txt, srt and vtt files
(ckw/runtime/output_formats.py), so the server answers what the CLI writes for the same file. Streams
are server-sent events: one `transcript.text.delta` per decoded segment, then
`transcript.text.done` with the whole text.
"""

import json

from ckw.runtime import output_formats

SEGMENT_FIELDS = (
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
)
MEDIA_TYPES = {
    "json": "application/json",
    "verbose_json": "application/json",
    "text": "text/plain; charset=utf-8",
    "srt": "text/plain; charset=utf-8",
    "vtt": "text/vtt; charset=utf-8",
}
CLI_FORMATS = {"text": "txt", "srt": "srt", "vtt": "vtt"}


def verbose(result: dict, task: str, duration: float, words: bool) -> dict:
    body = {
        "task": task,
        "language": result["language"],
        "duration": duration,
        "text": result["text"],
        "segments": [{k: s[k] for k in SEGMENT_FIELDS} for s in result["segments"]],
    }
    if words:
        body["words"] = [w for s in result["segments"] for w in s.get("words") or ()]
    return body


def body(result: dict, response_format: str, task: str, duration: float, words: bool) -> str:
    """The response body of `result` (transcription.collect's dictionary) in `response_format`."""
    if response_format == "json":
        return json.dumps({"text": result["text"]}, ensure_ascii=False)
    if response_format == "verbose_json":
        return json.dumps(verbose(result, task, duration, words), ensure_ascii=False)
    return output_formats.render(result, CLI_FORMATS[response_format])


def event(kind: str, **fields) -> str:
    """One server-sent event of openai's transcription stream."""
    return "data: " + json.dumps({"type": f"transcript.text.{kind}", **fields}, ensure_ascii=False) + "\n\n"
