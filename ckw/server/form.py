"""openai's audio API request, read from its multipart fields, and its error shape.

POST /v1/audio/transcriptions and /v1/audio/translations carry `file`, `model`, `prompt`,
`response_format`, `temperature`, `timestamp_granularities[]`, `stream` and (transcriptions only)
`language`. Extension fields: any other option of Engine.transcribe (ckw/runtime/options.py
TranscribeOptions: beam_size, best_of, word_timestamps, condition_on_previous_text, patience, ...)
by its name, plus the CLI's `temperature_increment_on_fallback`; faster-whisper's `vad_filter`
(true or false) and `vad_parameters` (a JSON object of VadOptions' fields: {"threshold": 0.6,
"min_silence_duration_ms": 500}). The decoding defaults are the CLI's (beam_size 5, best_of 5), so
a request without extensions gets the CLI's text and segments.
"""

import dataclasses
import json
import typing

from ckw.runtime.options import OPTION_NAMES, OptionError, TranscribeOptions, options_from, temperature_schedule

RESPONSE_FORMATS = ("json", "text", "srt", "verbose_json", "vtt")
GRANULARITIES = ("segment", "word")
CLI_DEFAULTS = {"beam_size": 5, "best_of": 5}  # ckw/cli/transcribe.py's --beam_size and --best_of
INCREMENT = "temperature_increment_on_fallback"
DEFAULT_INCREMENT = 0.2  # ckw/cli/transcribe.py's default
OPENAI_FIELDS = (
    "file",
    "model",
    "language",
    "prompt",
    "response_format",
    "temperature",
    "timestamp_granularities[]",
    "stream",
)
# Options the openai fields or the endpoint set: not extension fields.
NOT_EXTENSIONS = {"language", "task", "temperature", "initial_prompt"}
EXTENSIONS = tuple(n for n in OPTION_NAMES if n not in NOT_EXTENSIONS) + (INCREMENT,)


class ApiError(Exception):
    """An answer in openai's error shape: {"error": {"message", "type", "param", "code"}}."""

    def __init__(
        self,
        status: int,
        message: str,
        param: str | None = None,
        code: str | None = None,
        kind: str = "invalid_request_error",
        headers: dict | None = None,
    ):
        super().__init__(message)
        self.status, self.message, self.param, self.code, self.kind = status, message, param, code, kind
        self.headers = headers or {}

    def __reduce__(self):  # crosses from a Ray Serve replica to the ingress whole (ckw/server/replicas.py)
        return ApiError, (self.status, self.message, self.param, self.code, self.kind, self.headers)

    def body(self) -> dict:
        return {"error": {"message": self.message, "type": self.kind, "param": self.param, "code": self.code}}


@dataclasses.dataclass(frozen=True)
class Ask:
    """One request: which model, Engine.transcribe's options, how to answer."""

    model: str
    options: dict
    response_format: str
    stream: bool
    words: bool  # word timestamps asked for (verbose_json's `words`)


def _bool(name: str, text: str) -> bool:
    value = text.strip().lower()
    if value in ("true", "1", "yes"):
        return True
    if value in ("false", "0", "no"):
        return False
    raise ApiError(400, f"{name}={text!r} is not a boolean; send true or false", name, "invalid_value")


def _number(name: str, text: str, kind: type):
    if text.strip().lower() == "none":
        return None
    try:
        return kind(text)
    except ValueError:
        raise ApiError(
            400, f"{name}={text!r} is not {'an integer' if kind is int else 'a number'}", name, "invalid_value"
        ) from None


_FIELD_TYPES = {f.name: f.type for f in dataclasses.fields(TranscribeOptions)}


def _json_object(name: str, text: str) -> dict:
    try:
        value = json.loads(text)
    except ValueError as e:
        raise ApiError(
            400,
            f'{name}={text!r} is not JSON ({e}); send an object such as {{"threshold": 0.6}}',
            name,
            "invalid_value",
        ) from None
    if not isinstance(value, dict):
        raise ApiError(
            400, f'{name}={text!r} is not a JSON object; send one such as {{"threshold": 0.6}}', name, "invalid_value"
        )
    return value


def _extension(name: str, text: str):
    """An extension field's value, by the type TranscribeOptions declares for it."""
    if name == INCREMENT:
        return _number(name, text, float)
    if name == "vad_parameters":
        return _json_object(name, text)
    kinds = typing.get_args(_FIELD_TYPES[name]) or (_FIELD_TYPES[name],)
    if bool in kinds:
        return _bool(name, text)
    for kind in (int, float):
        if kind in kinds:
            return _number(name, text, kind)
    return text


def parse(fields: list[tuple[str, str]], task: str) -> Ask:
    """The request's non-file fields (name, value; repeated names allowed) -> Ask; ApiError (400)
    naming the first wrong field."""
    values: dict[str, str] = {}
    granularities = []
    for name, value in fields:
        if name in ("timestamp_granularities[]", "timestamp_granularities"):
            granularities.append(value)
        elif name in values:
            raise ApiError(400, f"{name} is given twice; give it once", name, "invalid_value")
        else:
            values[name] = value
    allowed = set(OPENAI_FIELDS) | set(EXTENSIONS)
    if task == "translate":
        allowed.discard("language")  # openai's translations translate from any language into English
    for name in values:
        if name not in allowed:
            raise ApiError(
                400,
                f"unknown field {name!r}; this endpoint takes {', '.join(OPENAI_FIELDS)} and the "
                f"extension fields {', '.join(EXTENSIONS)}",
                name,
                "unknown_parameter",
            )
    if not values.get("model"):
        raise ApiError(
            400,
            "model is missing; give one of the served models (GET /v1/models)",
            "model",
            "missing_required_parameter",
        )
    response_format = values.get("response_format", "json")
    if response_format not in RESPONSE_FORMATS:
        raise ApiError(
            400,
            f"response_format={response_format!r} is not one of {', '.join(RESPONSE_FORMATS)}",
            "response_format",
            "invalid_value",
        )
    for g in granularities:
        if g not in GRANULARITIES:
            raise ApiError(
                400,
                f"timestamp_granularities[]={g!r} is not one of {', '.join(GRANULARITIES)}",
                "timestamp_granularities[]",
                "invalid_value",
            )
    options = dict(CLI_DEFAULTS, task=task)
    language = values.get("language", "").strip()
    options["language"] = language or None  # none: detected (multilingual models)
    if values.get("prompt"):
        options["initial_prompt"] = values["prompt"]
    extensions = {n: _extension(n, values[n]) for n in EXTENSIONS if n in values}
    increment = extensions.pop(INCREMENT, DEFAULT_INCREMENT)
    start = _number("temperature", values["temperature"], float) if "temperature" in values else 0.0
    if start is None or not 0.0 <= start <= 1.0:
        raise ApiError(
            400, f"temperature={values['temperature']!r} must be between 0 and 1", "temperature", "invalid_value"
        )
    options["temperature"] = temperature_schedule(start, increment)
    options.update(extensions)
    if "word" in granularities:
        options["word_timestamps"] = True
    try:
        options_from(**options)
    except OptionError as e:
        raise ApiError(400, str(e), e.name, "invalid_value") from None
    stream = _bool("stream", values["stream"]) if "stream" in values else False
    return Ask(
        model=values["model"],
        options=options,
        response_format=response_format,
        stream=stream,
        words=bool(options.get("word_timestamps")),
    )
