"""greedy_decode against openai-whisper's DecodingTask on scripted logits.

Both sides see the same logits: a pseudo-random function of (step, previous token) that is
built to hit every rule of the policy (blank suppression at the first sampled position, the
suppress list, end of text, exact ties, timestamps and language tokens that greedy decoding
without timestamp rules may pick, `sample_len`, the text-context limit). openai-whisper's
`DecodingTask.run` drives a stub inference; `greedy_decode` drives a stub `TextDecoder`.
No neural network runs here: the real model is in tests/e2e/greedy_openai_test.py.
"""

import functools
import types
from typing import List, Optional, Sequence

import numpy as np
import pytest
import torch
from hypothesis import event, given, settings
from hypothesis import strategies as st
from whisper.decoding import DecodingOptions as OpenAIOptions
from whisper.decoding import DecodingTask

from models.whisper.checkpoint.packed import runfiles_checkpoint_dir
from runtime.decoding import DecodingOptions, greedy_decode, initial_tokens
from runtime.tokenizer import WhisperTokenizer


@functools.lru_cache(maxsize=None)
def tokenizer(variant: str) -> WhisperTokenizer:
    return WhisperTokenizer.from_checkpoint(runfiles_checkpoint_dir(variant))


class Script:
    """Logits for sampled position `step` after `previous` token; deterministic in `seed`."""

    def __init__(self, tok: WhisperTokenizer, seed: int, eot_rate: float, tie_rate: float):
        self.tok = tok
        self.seed = seed
        self.eot_rate = eot_rate
        self.tie_rate = tie_rate
        text = tok.encode(" the quick brown fox jumps over the lazy dog, and then?")
        lang = list(tok.language_ids.values())[:5]
        self.pools = [
            text,
            tok.blank_tokens()[:-1],  # the space; end of text comes from eot_rate
            tok.suppress_tokens(),
            [tok.timestamp_begin, tok.timestamp_begin + 50, tok.n_vocab - 1],
            lang + [tok.no_timestamps],
        ]

    def __call__(self, step: int, previous: int) -> np.ndarray:
        rng = np.random.default_rng([self.seed, step, previous])
        logits = (rng.standard_normal(self.tok.n_vocab) * 2.0).astype(np.float32)
        # A handful of strong candidates from the pools; the first legal one should win.
        for _ in range(int(rng.integers(1, 5))):
            pool = self.pools[int(rng.integers(len(self.pools)))]
            logits[pool[int(rng.integers(len(pool)))]] = np.float32(8.0 + rng.random() * 4.0)
        if rng.random() < self.eot_rate:
            logits[self.tok.eot] = np.float32(20.0)
        if rng.random() < self.tie_rate:
            top = int(np.argmax(logits))
            twin = int(rng.integers(self.tok.eot))
            logits[twin] = logits[top]  # an exact tie: the lower id must win on both sides
        return logits


class ScriptedDecoder:
    """TextDecoder over a Script; records what the policy asked for."""

    def __init__(self, script: Script, n_text_ctx: int, n_prefix: int):
        self.script = script
        self.n_text_ctx = n_text_ctx
        self.n_prefix = n_prefix
        self.memory = None
        self.prefills: List[List[int]] = []
        self.decoded: List[int] = []

    def set_encoder_memory(self, memory) -> None:
        self.memory = memory

    def prefill(self, tokens: Sequence[int], rows: Sequence[int] = (-1,)) -> np.ndarray:
        assert self.memory is not None
        self.prefills.append(list(tokens))
        return np.stack([self.script(0, int(tokens[-1]))] * len(rows))  # every row alike: no-speech unused

    def decode(self, token: int) -> np.ndarray:
        self.decoded.append(int(token))
        assert self.n_prefix + len(self.decoded) <= self.n_text_ctx, "decoded past the text context"
        return self.script(len(self.decoded), int(token))


class ScriptedInference:
    """openai-whisper's Inference interface over the same Script."""

    def __init__(self, script: Script, n_prefix: int):
        self.script = script
        self.n_prefix = n_prefix

    def logits(self, tokens: torch.Tensor, audio_features: torch.Tensor) -> torch.Tensor:
        n = tokens.shape[-1]
        step = n - self.n_prefix
        rows = n if step == 0 else 1  # the first call sees the whole prefix (no_speech reads row sot)
        out = torch.zeros(tokens.shape[0], rows, self.script.tok.n_vocab)
        out[:, -1] = torch.from_numpy(self.script(step, int(tokens[0, -1])))
        return out

    def cleanup_caching(self) -> None:
        pass


def openai_run(variant: str, script: Script, language: Optional[str], task: str, sample_len: Optional[int],
               suppress_blank: bool, n_text_ctx: int):
    tok = tokenizer(variant)
    dims = types.SimpleNamespace(n_text_ctx=n_text_ctx, n_audio_ctx=1500, n_vocab=tok.n_vocab)
    stub_model = types.SimpleNamespace(
        dims=dims,
        is_multilingual=tok.is_multilingual,
        num_languages=tok.n_vocab - 51765 - int(tok.is_multilingual),
        decoder=types.SimpleNamespace(blocks=[]),
    )
    options = OpenAIOptions(task=task, language=language, temperature=0.0, sample_len=sample_len,
                            suppress_blank=suppress_blank, without_timestamps=True, fp16=False)
    t = DecodingTask(stub_model, options)
    t.inference = ScriptedInference(script, len(t.initial_tokens))
    t._get_audio_features = lambda mel: torch.zeros(1, 1, 1)
    try:
        (result,) = t.run(torch.zeros(1, 1, 1))
    except ZeroDivisionError:
        # openai-whisper's MaximumLikelihoodRanker divides by the sampled length: end of text at
        # the first position (possible only with suppress_blank=False) crashes it.
        return t, None
    return t, result


def run_both(variant, seed, eot_rate, tie_rate, language, task, sample_len, suppress_blank, n_text_ctx):
    tok = tokenizer(variant)
    script = Script(tok, seed, eot_rate, tie_rate)
    task_, ref = openai_run(variant, script, language, task, sample_len, suppress_blank, n_text_ctx)
    options = DecodingOptions(language=language, task=task, sample_len=sample_len, suppress_blank=suppress_blank)
    dec = ScriptedDecoder(script, n_text_ctx, len(task_.initial_tokens))
    got = greedy_decode(dec, tok, np.zeros((1, 1), np.float32), options)
    return tok, task_, ref, dec, got


def assert_same(tok, task_, ref, dec, got):
    assert got.prefix == list(task_.initial_tokens)
    assert dec.prefills == [got.prefix]
    if ref is None:  # openai-whisper crashed on end of text at the first position
        assert got.tokens == [] and got.ended_with_eot and got.text == "" and dec.decoded == []
        return
    assert got.tokens == ref.tokens
    assert got.text == ref.text
    assert got.avg_logprob == pytest.approx(ref.avg_logprob, rel=1e-4, abs=1e-4)
    # Without end of text the loop stops at sample_len tokens or once prefix + sampled exceeds n_ctx.
    limit = min(task_.sample_len, task_.n_ctx - len(task_.initial_tokens) + 1)
    assert got.ended_with_eot == (len(got.tokens) < limit)
    # Every sampled token but a last one that hit a limit was fed back to the decoder.
    assert dec.decoded == got.tokens[: len(dec.decoded)]
    assert len(dec.decoded) >= len(got.tokens) - 1


@settings(max_examples=60, deadline=None, database=None, derandomize=True)
@given(
    variant=st.sampled_from(["tiny", "base"]),
    seed=st.integers(0, 2**32 - 1),
    eot_rate=st.sampled_from([0.0, 0.03, 0.15, 0.5]),
    tie_rate=st.sampled_from([0.0, 0.5]),
    language_task=st.sampled_from([("en", "transcribe"), ("de", "transcribe"), ("fr", "translate")]),
    sample_len=st.one_of(st.none(), st.integers(1, 40)),
    suppress_blank=st.booleans(),
    n_text_ctx=st.sampled_from([448, 12, 6]),
)
def test_greedy_decode_equals_openai_decoding_task(variant, seed, eot_rate, tie_rate, language_task, sample_len,
                                                    suppress_blank, n_text_ctx):
    language, task = language_task
    if variant == "tiny":
        language, task = "en", "transcribe"
    if n_text_ctx != 448 and sample_len is None:
        sample_len = 40  # reach the context limit
    if sample_len is None and eot_rate == 0.0:
        eot_rate = 0.03  # the default 224-token limit is test_sample_len_and_context_limits_stop_without_eot's
    tok, task_, ref, dec, got = run_both(variant, seed, eot_rate, tie_rate, language, task, sample_len,
                                         suppress_blank, n_text_ctx)
    assert_same(tok, task_, ref, dec, got)
    event("stopped at end of text" if got.ended_with_eot else "stopped at a length limit")
    event(f"sampled {min(len(got.tokens) // 10 * 10, 100)}+ tokens")
    event("sampled a special or timestamp token" if any(t >= tok.eot for t in got.tokens) else "text tokens only")


@pytest.mark.parametrize("variant", ["tiny", "base"])
def test_blank_is_suppressed_only_at_the_first_position(variant):
    tok = tokenizer(variant)
    space, eot = tok.blank_tokens()
    word = tok.encode(" word")[0]

    class Blanky(ScriptedDecoder):
        def prefill(self, tokens, rows=(-1,)):
            self.prefills.append(list(tokens))
            logits = np.zeros(tok.n_vocab, np.float32)
            logits[[space, eot, word]] = [10.0, 9.0, 1.0]
            return np.stack([logits] * len(rows))

        def decode(self, token):
            self.decoded.append(int(token))
            logits = np.zeros(tok.n_vocab, np.float32)
            logits[[space, eot]] = [10.0, 9.0] if len(self.decoded) == 1 else [0.0, 9.0]
            return logits

    dec = Blanky(None, 448, 0)
    got = greedy_decode(dec, tok, np.zeros(1), DecodingOptions())
    assert got.tokens == [word, space] and got.ended_with_eot
    assert got.text == "word"
    dec = Blanky(None, 448, 0)
    got = greedy_decode(dec, tok, np.zeros(1), DecodingOptions(suppress_blank=False))
    assert got.tokens == [space, space] and got.ended_with_eot


@pytest.mark.parametrize("variant", ["tiny", "base"])
def test_suppressed_tokens_never_win(variant):
    tok = tokenizer(variant)
    suppressed = tok.suppress_tokens()
    word = tok.encode(" ok")[0]

    class Loud(ScriptedDecoder):
        def _logits(self):
            logits = np.zeros(tok.n_vocab, np.float32)
            logits[suppressed] = 50.0
            logits[word] = 1.0
            logits[tok.eot] = 2.0 if len(self.decoded) == 2 else 0.0
            return logits

        def prefill(self, tokens, rows=(-1,)):
            self.prefills.append(list(tokens))
            return np.stack([self._logits()] * len(rows))

        def decode(self, token):
            self.decoded.append(int(token))
            return self._logits()

    got = greedy_decode(Loud(None, 448, 0), tok, np.zeros(1), DecodingOptions())
    assert got.tokens == [word, word] and got.ended_with_eot
    assert got.sum_logprob < 0


def test_sample_len_and_context_limits_stop_without_eot():
    tok = tokenizer("tiny")
    word = tok.encode(" la")[0]

    class Forever(ScriptedDecoder):
        def _logits(self):
            logits = np.zeros(tok.n_vocab, np.float32)
            logits[word] = 5.0
            return logits

        def prefill(self, tokens, rows=(-1,)):
            self.prefills.append(list(tokens))
            return np.stack([self._logits()] * len(rows))

        def decode(self, token):
            self.decoded.append(int(token))
            assert self.n_prefix + len(self.decoded) <= self.n_text_ctx
            return self._logits()

    dec = Forever(None, 448, 2)
    got = greedy_decode(dec, tok, np.zeros(1), DecodingOptions(sample_len=5))
    assert got.tokens == [word] * 5 and not got.ended_with_eot
    assert len(dec.decoded) == 4  # no decode step for a token that is never sampled from
    dec = Forever(None, 448, 2)
    assert len(greedy_decode(dec, tok, np.zeros(1), DecodingOptions()).tokens) == 224  # n_text_ctx // 2
    dec = Forever(None, 8, 2)
    got = greedy_decode(dec, tok, np.zeros(1), DecodingOptions(sample_len=100))
    # openai-whisper stops once prefix + sampled exceeds the context: 2 + 7 > 8.
    assert len(got.prefix) + len(got.tokens) == 9


def test_initial_tokens_end_with_no_timestamps():
    for variant in ("tiny", "base"):
        tok = tokenizer(variant)
        assert initial_tokens(tok, DecodingOptions())[-1] == tok.no_timestamps
        assert initial_tokens(tok, DecodingOptions())[0] == tok.sot
