"""Timestamp decoding and long-form transcription against openai-whisper's own code, without
any neural network:

- TimestampRules against openai-whisper's ApplyTimestampRules on random logits and histories;
- `decode` with timestamps, prompts, prefixes and the no-speech probability against
  openai-whisper's DecodingTask driven by the same scripted logits;
- `longform.transcribe` against `whisper.transcribe` with a stub model whose `decode` returns
  scripted window results (a function of the window's log-mel, the temperature and the
  prompt): the seek loop, segment splitting, single-timestamp endings, temperature fallback,
  no-speech skipping, prompts (conditioning, reset above 0.5, initial and carried prompts),
  clip_timestamps, language detection;
- sampling at temperature > 0 (distribution and seeding), best_of ranking, the CLI's
  temperature schedule, and the txt/srt/vtt/tsv writers against openai-whisper's.
The real model is in tests/e2e/longform_openai_test.py.
"""

import dataclasses
import functools
import hashlib
import io
import math
import types
from typing import List

import numpy as np
import pytest
import torch
import whisper
from hypothesis import event, given, settings
from hypothesis import strategies as st
from whisper.decoding import ApplyTimestampRules
from whisper.decoding import DecodingOptions as OpenAIOptions
from whisper.decoding import DecodingResult as OpenAIResult
from whisper.tokenizer import get_tokenizer
from whisper.utils import WriteSRT, WriteTSV, WriteTXT, WriteVTT

from ckw.runtime import decoding, longform, output_formats, subtitles, token_choice
from ckw.runtime.decoding import DecodingOptions, DecodingResult
from ckw.runtime.options import TranscribeOptions, temperature_schedule
from ckw.runtime.testing.doubles import checkpoint_tokenizer, openai_decode, scripted_decoder_for, step_script
from ckw.runtime.timestamp_rules import TimestampRules, max_initial_timestamp_index
from ckw.runtime.tokenizer import WhisperTokenizer

VARIANTS = ["tiny", "base"]


tokenizer = checkpoint_tokenizer


def num_languages(tok: WhisperTokenizer) -> int:
    return tok.n_vocab - 51765 - int(tok.is_multilingual)


@functools.lru_cache(maxsize=None)
def openai_tokenizer(variant: str, language: str = "en"):
    tok = tokenizer(variant)
    return get_tokenizer(tok.is_multilingual, num_languages=num_languages(tok), language=language, task="transcribe")


# ---------------------------------------------------------------------------------------------
# TimestampRules vs ApplyTimestampRules


@st.composite
def histories(draw, tok: WhisperTokenizer):
    """Sampled tokens so far: text, timestamps (pairs, lone ones, repeats), maybe out of order."""
    n = draw(st.integers(0, 12))
    tb = tok.timestamp_begin
    out: List[int] = []
    for _ in range(n):
        kind = draw(st.sampled_from(["text", "text", "ts", "ts", "repeat"]))
        if kind == "text":
            out.append(draw(st.integers(0, tok.eot - 1)))
        elif kind == "ts":
            out.append(tb + draw(st.integers(0, 1500)))
        elif out:
            out.append(out[-1])
    return out


@settings(max_examples=300, deadline=None, database=None, derandomize=True)
@given(
    data=st.data(),
    variant=st.sampled_from(VARIANTS),
    seed=st.integers(0, 2**32 - 1),
    max_initial=st.sampled_from([None, 0, 1.0, 0.5, 30.0]),
    ts_offset=st.floats(-12.0, 6.0),
)
def test_timestamp_rules_equal_openai(data, variant, seed, max_initial, ts_offset):
    tok = tokenizer(variant)
    sampled = data.draw(histories(tok))
    rng = np.random.default_rng(seed)
    logits = (rng.standard_normal(tok.n_vocab) * 3).astype(np.float32)
    # Shift the timestamps so that "all timestamps together beat the best other token" goes both ways.
    logits[tok.timestamp_begin :] += np.float32(ts_offset)
    if rng.random() < 0.3:
        logits[rng.integers(0, tok.n_vocab, 20)] = -np.inf  # already suppressed tokens
    index = max_initial_timestamp_index(max_initial)
    prompt = [tok.sot] if not tok.is_multilingual else [tok.sot, tok.language_token("en"), tok.transcribe]

    ours = logits.copy()
    TimestampRules.for_tokenizer(tok, index).apply(ours, sampled)

    theirs = torch.from_numpy(logits.copy())[None]
    ApplyTimestampRules(openai_tokenizer(variant), len(prompt), index).apply(theirs, torch.tensor([prompt + sampled]))
    theirs = theirs[0].numpy()
    np.testing.assert_array_equal(np.isneginf(ours), np.isneginf(theirs))
    np.testing.assert_array_equal(ours, theirs)
    forced = np.isneginf(ours[: tok.timestamp_begin]).all() and not np.isneginf(ours[tok.timestamp_begin :]).all()
    event("timestamp forced" if forced else "text allowed")


def test_max_initial_timestamp_index():
    assert max_initial_timestamp_index(1.0) == 50
    assert max_initial_timestamp_index(None) is None and max_initial_timestamp_index(0.0) is None


# ---------------------------------------------------------------------------------------------
# decode() with timestamps vs DecodingTask


class Script:
    """Logits for sampled position `step` after `previous`, and for the start-of-transcript row."""

    def __init__(self, tok: WhisperTokenizer, seed: int, eot_rate: float, ts_rate: float):
        self.tok, self.seed, self.eot_rate, self.ts_rate = tok, seed, eot_rate, ts_rate
        self.text = tok.encode(" so thou through windows of thy age shall see, despite of wrinkles")

    def __call__(self, step: int, previous: int) -> np.ndarray:
        tok = self.tok
        rng = np.random.default_rng([self.seed, step, previous])
        logits = (rng.standard_normal(tok.n_vocab) * 2.0).astype(np.float32)
        for _ in range(int(rng.integers(1, 4))):
            logits[self.text[int(rng.integers(len(self.text)))]] = np.float32(8.0 + 4.0 * rng.random())
        if rng.random() < self.ts_rate:  # a band of timestamps around a cursor that moves with the step
            cursor = min(1500, 5 * step + int(rng.integers(0, 30)))
            band = tok.timestamp_begin + np.clip(cursor + np.arange(-20, 20), 0, 1500)
            logits[band] = np.float32(4.0 + 6.0 * rng.random()) + rng.standard_normal(band.size).astype(np.float32)
        if rng.random() < self.eot_rate:
            logits[tok.eot] = np.float32(14.0)
        if rng.random() < 0.1:
            logits[tok.no_timestamps] = np.float32(30.0)  # must never be sampled with timestamps on
        return logits

    def sot_row(self) -> np.ndarray:
        rng = np.random.default_rng([self.seed, 999_999])
        logits = (rng.standard_normal(self.tok.n_vocab) * 2.0).astype(np.float32)
        if self.tok.no_speech is not None:
            logits[self.tok.no_speech] = np.float32(rng.uniform(0.0, 14.0))
        return logits


def scripted(tok: WhisperTokenizer, script: Script):
    """A ScriptedDecoder (ckw/runtime/testing) over the step script and its start-of-transcript row."""
    return scripted_decoder_for(tok, step_script(script), sot_logits=lambda prompt: script.sot_row())


def openai_window(tok: WhisperTokenizer, script: Script, options: OpenAIOptions):
    return openai_decode(tok, options, step_script(script), sot_logits=lambda prompt: script.sot_row())


@settings(max_examples=80, deadline=None, database=None, derandomize=True)
@given(
    variant=st.sampled_from(VARIANTS),
    seed=st.integers(0, 2**32 - 1),
    eot_rate=st.sampled_from([0.02, 0.1, 0.3]),
    ts_rate=st.sampled_from([0.2, 0.5, 0.9]),
    prompt=st.sampled_from([None, "", "Sonnets by Shakespeare.", "long" * 300]),
    prefix=st.sampled_from([None, "From fairest"]),
    without_timestamps=st.sampled_from([False, False, True]),
    max_initial=st.sampled_from([1.0, None, 0.3]),
    language=st.sampled_from(["en", "de"]),
)
def test_decode_with_timestamps_equals_openai_decoding_task(
    variant, seed, eot_rate, ts_rate, prompt, prefix, without_timestamps, max_initial, language
):
    tok = tokenizer(variant)
    if not tok.is_multilingual:
        language = "en"
    script = Script(tok, seed, eot_rate, ts_rate)
    prompt_tokens = tok.encode(" " + prompt.strip()) if prompt else prompt  # openai: tokens or text
    kwargs = dict(
        language=language,
        without_timestamps=without_timestamps,
        max_initial_timestamp=max_initial,
        prompt=prompt_tokens,
        prefix=prefix,
    )
    task, ref = openai_window(tok, script, OpenAIOptions(temperature=0.0, fp16=False, **kwargs))
    dec = scripted(tok, script)
    got = decoding.decode(dec, tok, np.zeros(1), DecodingOptions(**kwargs))

    assert got.prefix == list(task.initial_tokens)
    assert dec.prefills == [got.prefix]
    if ref is None:
        assert got.tokens == []
        return
    assert got.tokens == ref.tokens
    assert got.text == ref.text
    assert got.avg_logprob == pytest.approx(ref.avg_logprob, rel=1e-4, abs=1e-4)
    assert got.compression_ratio == ref.compression_ratio
    assert got.temperature == ref.temperature == 0.0
    if tok.no_speech is None:
        assert math.isnan(got.no_speech_prob)
    else:
        assert got.no_speech_prob == pytest.approx(ref.no_speech_prob, rel=1e-5, abs=1e-7)
    n_ts = sum(t >= tok.timestamp_begin for t in got.tokens)
    if not without_timestamps and got.tokens:
        assert tok.no_timestamps not in got.tokens
        assert got.tokens[0] >= tok.timestamp_begin
        if max_initial is not None:
            assert got.tokens[0] <= tok.timestamp_begin + max_initial_timestamp_index(max_initial)
    event(f"{n_ts // 4 * 4}+ timestamps")
    event("prompt truncated" if prompt and len(prompt) > 1000 else "short or no prompt")


def test_language_detection_keeps_only_language_tokens():
    tok = tokenizer("base")

    def after_sot(prompt, history):
        assert prompt == (tok.sot,) and history == ()
        logits = np.zeros(tok.n_vocab, np.float32)
        logits[tok.eot] = 50.0  # not a language: ignored
        logits[tok.language_token("de")] = 3.0
        logits[tok.language_token("fr")] = 2.0
        return logits

    language, probs = decoding.detect_language(scripted_decoder_for(tok, after_sot), tok, np.zeros(1))
    assert language == "de"
    assert sum(probs.values()) == pytest.approx(1.0)
    assert probs["de"] / probs["fr"] == pytest.approx(math.e)
    with pytest.raises(ValueError, match="English-only"):
        decoding.detect_language(scripted_decoder_for(tok, after_sot), tokenizer("tiny"), np.zeros(1))


def test_sampling_follows_softmax_over_temperature_and_is_seeded():
    logits = np.array([2.0, 1.0, 0.0, -np.inf, 0.5], np.float32)
    for temperature in (0.2, 0.7, 1.0):
        rng = np.random.default_rng(123)
        draws = np.array([token_choice.sample(logits, temperature, rng) for _ in range(20000)])
        want = np.exp((logits - logits.max()) / temperature)
        want /= want.sum()
        got = np.bincount(draws, minlength=logits.size) / draws.size
        assert got[3] == 0.0  # suppressed tokens are never drawn
        np.testing.assert_allclose(got, want, atol=0.015)
    a = [token_choice.sample(logits, 1.0, np.random.default_rng(5)) for _ in range(50)]
    b = [token_choice.sample(logits, 1.0, np.random.default_rng(5)) for _ in range(50)]
    assert a == b


def test_sampled_decode_is_reproducible_and_best_of_is_one_group():
    tok = tokenizer("tiny")
    script = Script(tok, 11, 0.15, 0.6)
    options = DecodingOptions(temperature=0.8, without_timestamps=False)
    one = decoding.decode(scripted(tok, script), tok, np.zeros(1), options, np.random.default_rng(3))
    two = decoding.decode(scripted(tok, script), tok, np.zeros(1), options, np.random.default_rng(3))
    assert one.tokens == two.tokens and one.temperature == 0.8
    dec = scripted(tok, script)
    best = decoding.decode(dec, tok, np.zeros(1), dataclasses.replace(options, best_of=5), np.random.default_rng(3))
    assert len(dec.prefills) == 1 and {len(t) for t in dec.fed} == {5}  # one prompt run, five rows a step
    again = decoding.decode(
        scripted(tok, script), tok, np.zeros(1), dataclasses.replace(options, best_of=5), np.random.default_rng(3)
    )
    assert again.tokens == best.tokens and again.sum_logprob == best.sum_logprob
    with pytest.raises(ValueError, match="best_of"):
        DecodingOptions(best_of=2)


# ---------------------------------------------------------------------------------------------
# transcribe() loop vs whisper.transcribe with scripted windows


def window_key(mel_window: np.ndarray) -> bytes:
    return hashlib.sha1(np.ascontiguousarray(mel_window[:, ::7], dtype=np.float32).tobytes()).digest()


class WindowScript:
    """A scripted window result for (log-mel window, temperature, prompt)."""

    def __init__(self, tok: WhisperTokenizer, seed: int, fail_rate: float, silence_rate: float):
        self.tok, self.seed, self.fail_rate, self.silence_rate = tok, seed, fail_rate, silence_rate
        self.words = tok.encode(" when forty winters shall besiege thy brow and dig deep trenches in thy field")

    def tokens(self, rng) -> List[int]:
        tb = self.tok.timestamp_begin

        def text():
            return [self.words[i] for i in rng.integers(0, len(self.words), int(rng.integers(1, 6)))]

        shape = rng.choice(["pairs", "pairs", "pairs", "none", "lone", "empty", "repeat", "zero"])
        if shape == "none":
            return text()
        if shape == "empty":
            return []
        if shape == "repeat":  # compresses well: triggers the compression-ratio fallback
            return [tb] + [self.words[0]] * 60 + [tb + 300]
        if shape == "zero":  # a starting timestamp only, <|0.00|>, or a lone later one
            return [tb + int(rng.choice([0, 0, 40]))] + text()
        if shape == "lone":  # one segment, one closing timestamp, no pair
            return [tb + int(rng.integers(0, 50))] + text() + [tb + int(rng.integers(50, 1500))]
        out: List[int] = []
        t = int(rng.integers(0, 50))
        n = int(rng.integers(1, 5))
        for i in range(n):
            # At least 1 s per segment so that the seek loop moves on (the timestamp rules
            # guarantee progress with real models); a zero-length segment now and then.
            zero = i + 1 < n and rng.random() < 0.15
            end = t if zero else min(1500, t + int(rng.integers(50, 500)))
            out += [tb + t] + text() + [tb + end]
            t = min(1500, end + int(rng.integers(0, 60)))
        ending = rng.choice(["single", "unfinished", "double"])
        if ending == "unfinished":
            out += [tb + t] + text()
        elif ending == "double":
            out += [tb + t]
        return out

    def result(self, window: np.ndarray, temperature: float, prompt) -> dict:
        key = window_key(window) + repr((round(temperature, 6), list(prompt or []))).encode()
        rng = np.random.default_rng([self.seed, int.from_bytes(hashlib.sha1(key).digest()[:8], "little")])
        tokens = self.tokens(rng)
        fail = rng.random() < self.fail_rate
        avg_logprob = float(rng.uniform(-3.0, -1.01) if fail else rng.uniform(-0.99, -0.05))
        silent = rng.random() < self.silence_rate
        no_speech = float(rng.uniform(0.61, 0.99) if silent else rng.uniform(0.0, 0.59))
        text = self.tok.decode(tokens).strip()
        return dict(
            tokens=tokens,
            text=text,
            avg_logprob=avg_logprob,
            no_speech_prob=no_speech,
            temperature=temperature,
            compression_ratio=decoding.compression_ratio(text),
        )

    def language_logits(self, window: np.ndarray) -> np.ndarray:
        rng = np.random.default_rng([self.seed, int.from_bytes(window_key(window)[:8], "little")])
        return rng.standard_normal(len(self.tok.language_ids))


class StubModel:
    """What whisper.transcribe reads from a model, with scripted decode() and detect_language()."""

    def __init__(self, tok: WhisperTokenizer, script: WindowScript):
        self.tok, self.script = tok, script
        self.dims = types.SimpleNamespace(n_mels=80, n_audio_ctx=1500, n_text_ctx=448)
        self.is_multilingual = tok.is_multilingual
        self.num_languages = num_languages(tok)
        self.device = torch.device("cpu")
        self.calls = []

    def decode(self, mel, options):
        window = mel.numpy()
        self.calls.append((window_key(window), options.temperature, list(options.prompt or [])))
        r = self.script.result(window, options.temperature, options.prompt)
        return OpenAIResult(audio_features=None, language=options.language, **r)

    def detect_language(self, mel):
        logits = self.script.language_logits(mel.numpy())
        codes = sorted(self.tok.language_ids, key=self.tok.language_ids.get)
        p = np.exp(logits - logits.max())
        p /= p.sum()
        return None, {c: float(v) for c, v in zip(codes, p)}


class StubDecoder:
    n_text_ctx = 448

    def __init__(self, tok, script):
        self.tok, self.script = tok, script

    def set_encoder_memory(self, memory):
        self.memory = memory

    def prefill(self, tokens, rows=(-1,)):
        assert list(tokens) == [self.tok.sot]  # only language detection reaches the decoder here
        logits = np.full((1, self.tok.n_vocab), -5.0, np.float32)
        ids = [self.tok.language_ids[c] for c in sorted(self.tok.language_ids, key=self.tok.language_ids.get)]
        logits[0, ids] = self.script.language_logits(self.memory)
        return logits


def scripted_decode_fn(script: WindowScript, calls: list):
    def fn(decoder, tok, memory, options, rng):
        calls.append((window_key(memory), options.temperature, list(options.prompt or [])))
        r = script.result(memory, options.temperature, options.prompt)
        return DecodingResult(prefix=[], sum_logprob=math.nan, ended_with_eot=True, language=options.language, **r)

    return fn


@settings(max_examples=60, deadline=None, database=None, derandomize=True)
@given(
    variant=st.sampled_from(VARIANTS),
    seed=st.integers(0, 2**32 - 1),
    seconds=st.sampled_from([61.3, 137.0, 29.5, 30.0, 4.0]),
    fail_rate=st.sampled_from([0.3, 0.7, 0.0]),
    silence_rate=st.sampled_from([0.3, 0.0]),
    temperature=st.sampled_from([(0.0, 0.2, 0.4, 0.6, 0.8, 1.0), 0.0, (0.0, 0.6, 1.0), (0.3,)]),
    thresholds=st.sampled_from([(2.4, -1.0, 0.6), (None, -1.0, 0.6), (2.4, None, 0.6), (2.4, -1.0, None)]),
    condition=st.booleans(),
    initial_prompt=st.sampled_from([None, "Shakespeare's sonnets.", "thy " * 240]),
    carry=st.booleans(),
    clip=st.sampled_from([(0.0,), (0.1, 0.5, 0.7), (0.3,), (), (0.0, 0.2, 0.6, 0.9), (1.2,)]),
    detect=st.booleans(),
)
def test_transcribe_loop_equals_openai_transcribe(
    variant,
    seed,
    seconds,
    fail_rate,
    silence_rate,
    temperature,
    thresholds,
    condition,
    initial_prompt,
    carry,
    clip,
    detect,
):
    tok = tokenizer(variant)
    script = WindowScript(tok, seed, fail_rate, silence_rate)
    rng = np.random.default_rng(seed)
    audio = (rng.standard_normal(int(seconds * 16000)) * 0.1).astype(np.float32)
    compression, logprob, no_speech = thresholds
    # Clip points as fractions of the duration (openai-whisper may loop forever on a clip that
    # ends after the audio; see test_a_clip_past_the_end_of_the_audio_ends_there).
    clip = ",".join(f"{f * seconds:.2f}" for f in clip)
    language = None if detect else "en"
    kwargs = dict(
        temperature=temperature,
        compression_ratio_threshold=compression,
        logprob_threshold=logprob,
        no_speech_threshold=no_speech,
        condition_on_previous_text=condition,
        initial_prompt=initial_prompt,
        carry_initial_prompt=carry,
        clip_timestamps=clip,
    )

    model = StubModel(tok, script)
    ref = whisper.transcribe(model, audio, verbose=None, fp16=False, language=language, **kwargs)

    mel = whisper.log_mel_spectrogram(torch.from_numpy(audio), 80, padding=whisper.audio.N_SAMPLES).numpy()
    calls = []
    got = longform.transcribe(
        mel,
        lambda window: window,
        StubDecoder(tok, script),
        tok,
        TranscribeOptions(language=language, **kwargs),
        decode_fn=scripted_decode_fn(script, calls),
    )

    assert calls == model.calls  # the same windows, temperatures and prompts, in order
    assert got["language"] == ref["language"]
    assert got["text"] == ref["text"]
    want = [{k: v for k, v in s.items() if k != "words"} for s in ref["segments"]]
    assert got["segments"] == want
    assert sum(len(w["attempts"]) for w in got["windows"]) == len(calls)
    event(f"{len(want) // 10 * 10}+ segments")
    event("initial prompt" if initial_prompt else "no initial prompt")
    event("prompt reset by a high temperature" if any(s["temperature"] > 0.5 for s in want) else "no reset")
    event("fell back" if any(len(w["attempts"]) > 1 for w in got["windows"]) else "no fallback")
    event("skipped silence" if any(w["skipped"] for w in got["windows"]) else "no silence")


def test_a_clip_past_the_end_of_the_audio_ends_there():
    tok = tokenizer("tiny")
    script = WindowScript(tok, 88413125, 0.3, 0.3)
    mel = np.random.default_rng(1).standard_normal((80, 2950 + 3000)).astype(np.float32)
    calls = []
    got = longform.transcribe(
        mel,
        lambda window: window,
        StubDecoder(tok, script),
        tok,
        TranscribeOptions(language="en", clip_timestamps="3.5,40,61"),
        decode_fn=scripted_decode_fn(script, calls),
    )
    assert got["windows"] and all(350 <= w["seek"] < 2950 for w in got["windows"])


def test_transcribe_rejects_a_mel_without_padding():
    tok = tokenizer("tiny")
    with pytest.raises(ValueError, match="padding"):
        longform.transcribe(np.zeros((80, 100), np.float32), lambda w: w, StubDecoder(tok, None), tok)
    with pytest.raises(ValueError, match="clip_timestamps"):
        longform.transcribe(
            np.zeros((80, 3100), np.float32),
            lambda w: w,
            StubDecoder(tok, None),
            tok,
            TranscribeOptions(clip_timestamps="1,x"),
        )


def test_temperature_schedule_equals_openai_cli():
    assert temperature_schedule(0.0, 0.2) == tuple(np.arange(0.0, 1.0 + 1e-6, 0.2))
    assert temperature_schedule(0.5, 0.25) == tuple(np.arange(0.5, 1.0 + 1e-6, 0.25))
    assert temperature_schedule(0.3, None) == (0.3,)


# ---------------------------------------------------------------------------------------------
# Writers


def sample_result():
    return {
        "text": " one two",
        "language": "en",
        "segments": [
            {"id": 0, "start": 0.0, "end": 7.6000000000000005, "text": " And so --> my\tfellow"},
            {"id": 1, "start": 7.6, "end": 3725.4449, "text": ""},
            {"id": 2, "start": 59.9996, "end": 61.0, "text": " ask not.  "},
        ],
    }


@pytest.mark.parametrize("fmt,writer", [("txt", WriteTXT), ("srt", WriteSRT), ("vtt", WriteVTT), ("tsv", WriteTSV)])
def test_writers_equal_openai(fmt, writer):
    buffer = io.StringIO()
    writer(".").write_result(sample_result(), file=buffer)
    assert output_formats.render(sample_result(), fmt) == buffer.getvalue()


def test_format_timestamp_equals_openai():
    for seconds in (0.0, 0.0004, 0.0005, 59.9995, 3599.9996, 3725.4449, 7.6000000000000005):
        for hours in (False, True):
            for marker in (".", ","):
                assert subtitles.format_timestamp(seconds, hours, marker) == whisper.utils.format_timestamp(
                    seconds, hours, marker
                )
    with pytest.raises(ValueError, match="negative"):
        subtitles.format_timestamp(-1.0)
