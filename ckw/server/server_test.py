"""//tools:serve started as users start it, called with the openai SDK over 127.0.0.1.

- Every response format equals the CLI's file for the same audio and decoding (json's text,
  verbose_json's segments, text = txt, srt, vtt); translation on base (an Ogg upload); word
  timestamps; streaming (one delta per segment, then the whole text); vad_filter and
  vad_parameters (a recording with long silences) as the CLI's --vad_* flags, on both endpoints.
- Errors in openai's shape: bad audio, an unknown model or field, a bad value (VAD fields too), an English-only
  model asked to translate, upload too large (413), queue full (429 + Retry-After), audio too long,
  a missing or wrong API key (401).
- /health answers 503 while the models load, then 200; /v1/models; /metrics.
- A client that disconnects frees its request at once; concurrent requests each get their solo
  answer, and every one gets exactly one.
"""

import concurrent.futures
import json
import os
import re
import socket
import struct
import subprocess
import time

import openai
import pytest

from ckw import runfiles
from ckw.server.running import KEY, SERVE, Server, get

CLI = runfiles.locate("ckw", "ckw/cli/transcribe")
JFK = runfiles.locate("test_audio", "jfk.wav")
GERMAN = runfiles.locate("test_audio", "multilingual/fleurs-de-001.ogg")
LONG = runfiles.locate("test_audio", "long/shakespeare_sonnets_I-III_concat.flac")
HARVARD = runfiles.locate("test_audio", "formats/OSR_us_000_0034_8k.wav")
CLIPS = sorted(
    os.path.join(os.path.dirname(runfiles.locate("test_audio", "librispeech/MANIFEST.tsv")), f)
    for f in os.listdir(os.path.dirname(runfiles.locate("test_audio", "librispeech/MANIFEST.tsv")))
    if f.endswith(".flac")
)[:4]


@pytest.fixture(scope="module")
def server(tmp_path_factory):
    s = Server(tmp_path_factory.mktemp("serve"), "--model=tiny.en", "--model=base", f"--api_key={KEY}")
    yield s
    s.stop()


@pytest.fixture(scope="module")
def cli_files(tmp_path_factory):
    """The CLI's output files for a file and flags: {format: text}."""
    cache = {}

    def run(path, *flags):
        if (path, flags) not in cache:
            out = tmp_path_factory.mktemp("cli")
            subprocess.run(
                [CLI, "--wav", path, "--output_format=all", f"--output_dir={out}", "--noverbose", *flags],
                check=True,
                capture_output=True,
            )
            stem = os.path.splitext(os.path.basename(path))[0]
            cache[path, flags] = {
                fmt: (out / f"{stem}.{fmt}").read_text(encoding="utf-8") for fmt in ("txt", "json", "srt", "vtt")
            }
        return cache[path, flags]

    return run


def transcribe(server, path, **kwargs):
    with open(path, "rb") as f:
        return server.client().audio.transcriptions.create(file=(os.path.basename(path), f.read()), **kwargs)


def error_of(call) -> openai.APIStatusError:
    with pytest.raises(openai.APIStatusError) as e:
        call()
    body = e.value.body
    assert set(body) == {"message", "type", "param", "code"} and body["message"], body  # openai's shape
    return e.value


def test_health_is_503_while_loading_then_200(server):
    assert server.health[-1] == (200, {"status": "ok", "models": ["tiny.en", "base"]})
    assert all(status == 503 and body["status"] == "loading" for status, body in server.health[:-1])
    assert server.health[0][0] == 503, "the first answer came after both models were loaded"
    models = server.client().models.list()
    assert [m.id for m in models.data] == ["tiny.en", "base"]


@pytest.mark.parametrize("fmt,cli_fmt", [("text", "txt"), ("srt", "srt"), ("vtt", "vtt")])
def test_text_formats_equal_the_cli_files(server, cli_files, fmt, cli_fmt):
    got = transcribe(server, JFK, model="tiny.en", response_format=fmt)
    assert got == cli_files(JFK)[cli_fmt]


def test_json_and_verbose_json_equal_the_cli(server, cli_files):
    want = json.loads(cli_files(JFK)["json"])
    assert transcribe(server, JFK, model="whisper-1").text == want["text"]  # the alias: the first model
    verbose = transcribe(server, JFK, model="tiny.en", response_format="verbose_json")
    assert verbose.task == "transcribe" and verbose.language == "en" and verbose.text == want["text"]
    assert abs(verbose.duration - 11.0) < 0.01
    fields = (
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
    assert [{k: getattr(s, k) for k in fields} for s in verbose.segments] == [
        {k: s[k] for k in fields} for s in want["segments"]
    ]
    assert not getattr(verbose, "words", None)


def test_word_timestamps_equal_the_cli(server, cli_files):
    want = json.loads(cli_files(JFK, "--word_timestamps=True")["json"])
    got = transcribe(
        server, JFK, model="tiny.en", response_format="verbose_json", timestamp_granularities=["word", "segment"]
    )
    assert [w.model_dump(exclude_none=True) for w in got.words] == [w for s in want["segments"] for w in s["words"]]
    assert [s.end for s in got.segments] == [s["end"] for s in want["segments"]]


def test_translation_of_an_ogg_upload_equals_the_cli(server, cli_files):
    want = cli_files(GERMAN, "--model=base", "--task=translate")
    with open(GERMAN, "rb") as f:
        got = server.client().audio.translations.create(
            file=("de.ogg", f.read()), model="base", response_format="verbose_json"
        )
    assert got.task == "translate" and got.language == "de"
    assert got.text == json.loads(want["json"])["text"]
    with open(GERMAN, "rb") as f:
        srt = server.client().audio.translations.create(file=("de.ogg", f.read()), model="base", response_format="srt")
    assert srt == want["srt"]


def test_streaming_sends_each_segment_then_the_text(server, cli_files):
    want = json.loads(cli_files(LONG)["json"])
    with open(LONG, "rb") as f:
        stream = server.client().audio.transcriptions.create(file=("long.flac", f.read()), model="tiny.en", stream=True)
        events = list(stream)
    assert [e.type for e in events] == ["transcript.text.delta"] * len(want["segments"]) + ["transcript.text.done"]
    assert [e.delta for e in events[:-1]] == [s["text"] for s in want["segments"]]
    assert events[-1].text == want["text"]


def test_options_and_values_are_checked(server):
    e = error_of(lambda: transcribe(server, JFK, model="large-v9"))
    assert e.status_code == 400 and e.body["code"] == "model_not_found" and "tiny.en, base" in e.body["message"]
    e = error_of(lambda: transcribe(server, JFK, model="tiny.en", extra_body={"beam_width": "3"}))
    assert e.status_code == 400 and e.body["param"] == "beam_width" and "beam_size" in e.body["message"]
    e = error_of(lambda: transcribe(server, JFK, model="tiny.en", extra_body={"beam_size": "99"}))
    assert e.status_code == 400 and e.body["param"] == "beam_size"
    e = error_of(lambda: transcribe(server, JFK, model="tiny.en", temperature=1.5))
    assert e.status_code == 400 and e.body["param"] == "temperature"
    e = error_of(lambda: transcribe(server, JFK, model="tiny.en", language="de"))
    assert e.status_code == 400 and "tiny.en" in e.body["message"] or "English" in e.body["message"]
    with open(JFK, "rb") as f:
        data = f.read()
    e = error_of(lambda: server.client().audio.translations.create(file=("jfk.wav", data), model="tiny.en"))
    assert e.status_code == 400
    e = error_of(
        lambda: server.client().audio.transcriptions.create(
            file=("notes.wav", b"RIFF\0\0\0\0WAVEjunk"), model="tiny.en"
        )
    )
    assert e.status_code == 400 and e.body["code"] == "invalid_audio" and "notes.wav" in e.body["message"]


def test_an_extension_field_changes_the_decoding_as_the_cli_flag(server, cli_files):
    want = cli_files(JFK, "--beam_size=0")
    assert (
        transcribe(server, JFK, model="tiny.en", response_format="srt", extra_body={"beam_size": "none"}) == want["srt"]
    )


@pytest.fixture(scope="module")
def gaps_wav(tmp_path_factory):
    """jfk.wav twice between long silences and noise (ckw/runtime/testing/speech_gaps.py), as a WAV file."""
    import soundfile

    from ckw.runtime.testing import speech_gaps

    clip = speech_gaps.read_16k(JFK)
    recording = speech_gaps.with_gaps([clip, clip], gaps=speech_gaps.GAPS[:3])
    path = str(tmp_path_factory.mktemp("vad") / "gaps.wav")
    soundfile.write(path, recording.samples, 16000, subtype="FLOAT")
    return path


def test_vad_filter_and_parameters_equal_the_cli_flags(server, cli_files, gaps_wav):
    want = json.loads(cli_files(gaps_wav, "--vad_filter=True", "--vad_min_silence_duration_ms=1000")["json"])
    got = transcribe(
        server,
        gaps_wav,
        model="tiny.en",
        response_format="verbose_json",
        extra_body={"vad_filter": "true", "vad_parameters": json.dumps({"min_silence_duration_ms": 1000})},
    )
    assert got.text == want["text"] and got.text.lower().count("ask not what your country") == 2
    assert [(s.start, s.end, s.text) for s in got.segments] == [
        (s["start"], s["end"], s["text"]) for s in want["segments"]
    ]
    assert got.duration == pytest.approx(33.0, abs=0.01) and got.segments[0].start > 3.5  # the recording's timeline
    plain = transcribe(
        server, gaps_wav, model="tiny.en", response_format="verbose_json", extra_body={"vad_filter": "0"}
    )
    assert plain.duration == got.duration


def test_translation_with_vad_filter_equals_the_cli(server, cli_files):
    want = json.loads(cli_files(GERMAN, "--model=base", "--task=translate", "--vad_filter")["json"])
    with open(GERMAN, "rb") as f:
        got = server.client().audio.translations.create(
            file=("de.ogg", f.read()), model="base", response_format="verbose_json", extra_body={"vad_filter": "true"}
        )
    assert got.task == "translate" and got.language == "de" and got.text == want["text"]


@pytest.mark.parametrize(
    "fields,param,message",
    [
        (
            {"vad_filter": "true", "vad_parameters": '{"threshold": 2}'},
            "vad_parameters",
            "vad_parameters: threshold=2 must be between 0 and 1",
        ),
        (
            {"vad_filter": "true", "vad_parameters": '{"window_size_samples": 512}'},
            "vad_parameters",
            "vad_parameters: 'window_size_samples' is not a VAD option",
        ),
        (
            {"vad_filter": "true", "vad_parameters": "threshold=0.6"},
            "vad_parameters",
            "vad_parameters='threshold=0.6' is not JSON",
        ),
        (
            {"vad_filter": "true", "vad_parameters": "[0.6]"},
            "vad_parameters",
            "vad_parameters='[0.6]' is not a JSON object",
        ),
        ({"vad_parameters": '{"threshold": 0.6}'}, "vad_parameters", "vad_parameters is given without vad_filter=True"),
        ({"vad_filter": "maybe"}, "vad_filter", "vad_filter='maybe' is not a boolean"),
        ({"vad_filter": "true", "clip_timestamps": "1,3"}, "vad_filter", "vad_filter=True with clip_timestamps='1,3'"),
    ],
)
def test_bad_vad_fields_are_400_naming_the_field(server, fields, param, message):
    e = error_of(lambda: transcribe(server, JFK, model="tiny.en", extra_body=fields))
    assert e.status_code == 400 and e.body["param"] == param and e.body["message"].startswith(message), e.body


def test_the_api_key_is_required(server):
    e = error_of(lambda: server.client(key="wrong").models.list())
    assert e.status_code == 401 and e.body["code"] == "invalid_api_key"
    assert get(server.url + "/v1/models")[0] == 401
    assert get(server.url + "/v1/models", KEY)[0] == 200


def test_concurrent_requests_each_get_their_solo_answer(server):
    solo = {p: transcribe(server, p, model="tiny.en").text for p in CLIPS}
    jobs = CLIPS * 3
    with concurrent.futures.ThreadPoolExecutor(len(jobs)) as pool:
        got = list(pool.map(lambda p: transcribe(server, p, model="tiny.en").text, jobs))
    assert got == [solo[p] for p in jobs]


def metric(server, name: str, default: float | None = None, **labels) -> float:
    """A sample of /metrics; `default` for a labelled series not created yet (none: an error)."""
    _, text = get(server.url + "/metrics")
    want = ",".join(f'{k}="{v}"' for k, v in labels.items())
    for line in text.splitlines():
        m = re.fullmatch(rf"{re.escape(name)}\{{([^}}]*)\}} (\S+)", line)
        if m and all(part in m.group(1).split(",") for part in want.split(",")):
            return float(m.group(2))
    if default is not None:
        return default
    raise AssertionError(f"{name}{{{want}}} not in /metrics:\n{text}")


def test_metrics(server):
    transcribe(server, JFK, model="tiny.en")
    assert metric(server, "ckw_audio_seconds_total", model="tiny.en") >= 11.0
    assert metric(server, "ckw_request_seconds_count", path="/v1/audio/transcriptions", status="200") >= 1
    assert metric(server, "ckw_queue_depth", model="tiny.en") == 0
    assert metric(server, "ckw_active_sequences", model="base") == 0


def test_a_disconnected_client_frees_its_request(server):
    with open(LONG, "rb") as f:
        data = f.read()
    boundary = "ckwtestboundary"
    body = (
        (
            f'--{boundary}\r\nContent-Disposition: form-data; name="model"\r\n\r\ntiny.en\r\n'
            f'--{boundary}\r\nContent-Disposition: form-data; name="file"; filename="long.flac"\r\n'
            f"Content-Type: application/octet-stream\r\n\r\n"
        ).encode()
        + data
        + f"\r\n--{boundary}--\r\n".encode()
    )
    sock = socket.create_connection(("127.0.0.1", server.port))
    sock.sendall(
        (
            f"POST /v1/audio/transcriptions HTTP/1.1\r\nHost: x\r\nAuthorization: Bearer {KEY}\r\n"
            f"Content-Type: multipart/form-data; boundary={boundary}\r\nContent-Length: {len(body)}\r\n\r\n"
        ).encode()
        + body
    )
    deadline = time.monotonic() + 30
    while metric(server, "ckw_active_sequences", model="tiny.en") == 0:
        assert time.monotonic() < deadline, "the request never started decoding"
        time.sleep(0.05)
    answered = metric(server, "ckw_requests_total", 0, model="tiny.en", outcome="answered")
    sock.close()
    t0 = time.monotonic()
    while metric(server, "ckw_running_requests", model="tiny.en") > 0:
        assert time.monotonic() - t0 < 3, "the request kept decoding after its client left"
        time.sleep(0.05)
    assert metric(server, "ckw_requests_total", 0, model="tiny.en", outcome="cancelled") == 1
    assert metric(server, "ckw_requests_total", 0, model="tiny.en", outcome="answered") == answered


def silence_wav(seconds: int, rate: int = 8000) -> bytes:
    """A mono 16-bit WAV of zeros: long audio in few bytes."""
    n = 2 * rate * seconds
    return (
        b"RIFF"
        + struct.pack("<I", 36 + n)
        + b"WAVEfmt "
        + struct.pack("<IHHIIHH", 16, 1, 1, rate, 2 * rate, 2, 16)
        + b"data"
        + struct.pack("<I", n)
        + bytes(n)
    )


def test_limits_answer_in_openais_shape(tmp_path):
    s = Server(
        tmp_path,
        "--model=tiny.en",
        "--max_streams=1",
        "--max_queue=0",
        "--max_upload_mb=1",
        "--max_audio_seconds=40",
        "--alias=",
        "--api_key=",
    )
    try:
        with open(LONG, "rb") as f:
            big = f.read()
        assert len(big) > 2**20
        e = error_of(lambda: s.client().audio.transcriptions.create(file=("long.flac", big), model="tiny.en"))
        assert e.status_code == 413 and e.body["code"] == "file_too_large"
        e = error_of(lambda: transcribe(s, JFK, model="whisper-1"))
        assert e.status_code == 400 and e.body["code"] == "model_not_found"
        e = error_of(
            lambda: s.client().audio.transcriptions.create(file=("silence.wav", silence_wav(41)), model="tiny.en")
        )
        assert e.status_code == 400 and e.body["code"] == "audio_too_long" and "silence.wav" in e.body["message"]
        # One slot, no queue: a second request while one decodes (35 s of speech) is refused.
        first = concurrent.futures.ThreadPoolExecutor(1).submit(lambda: transcribe(s, HARVARD, model="tiny.en"))
        while metric(s, "ckw_running_requests", model="tiny.en") == 0:
            assert not first.done(), first.result()
            time.sleep(0.01)
        e = error_of(lambda: transcribe(s, JFK, model="tiny.en"))
        assert e.status_code == 429 and e.response.headers["retry-after"] == "1"
        assert "ring will please most any girl" in first.result().text  # the accepted one is answered
        assert transcribe(s, JFK, model="tiny.en").text  # and the slot is free again
    finally:
        s.stop()


def test_every_flag_is_documented():
    out = subprocess.run([SERVE, "--helpshort"], capture_output=True, text=True).stdout
    names = re.findall(r"^\s+--(?:\[no\])?([a-z_]+):", out, re.M)
    assert "max_queue" in names, out
    with open(runfiles.locate("ckw", "docs/serve.md"), encoding="utf-8") as f:
        doc = f.read()
    missing = [n for n in names if f"`--{n}" not in doc]
    assert not missing, f"docs/serve.md does not document {missing}"
