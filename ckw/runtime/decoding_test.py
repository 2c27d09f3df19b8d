"""greedy_decode against openai-whisper's DecodingTask on scripted logits (ckw/runtime/testing).

Both sides see the same logits: a pseudo-random function of (step, previous token) that is
built to hit every rule of the policy (blank suppression at the first sampled position, the
suppress list, end of text, exact ties, timestamps and language tokens that greedy decoding
without timestamp rules may pick, `sample_len`, the text-context limit). openai-whisper's
`DecodingTask.run` drives a scripted inference; `greedy_decode` a scripted `TextDecoder`.
No neural network runs here: the real model is in tests/e2e/greedy_openai_test.py.
"""

import numpy as np
import pytest
from hypothesis import event, given, settings
from hypothesis import strategies as st
from whisper.decoding import DecodingOptions as OpenAIOptions

from ckw.runtime.decoding import DecodingOptions, greedy_decode, initial_tokens
from ckw.runtime.testing.doubles import checkpoint_tokenizer, openai_decode, scripted_decoder_for, step_script
from ckw.runtime.tokenizer import WhisperTokenizer

tokenizer = checkpoint_tokenizer


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


def run_both(variant, seed, eot_rate, tie_rate, language, task, sample_len, suppress_blank, n_text_ctx):
    tok = tokenizer(variant)
    script = step_script(Script(tok, seed, eot_rate, tie_rate))
    ref_options = OpenAIOptions(
        task=task,
        language=language,
        temperature=0.0,
        sample_len=sample_len,
        suppress_blank=suppress_blank,
        without_timestamps=True,
        fp16=False,
    )
    task_, ref = openai_decode(tok, ref_options, script, n_text_ctx)
    options = DecodingOptions(language=language, task=task, sample_len=sample_len, suppress_blank=suppress_blank)
    dec = scripted_decoder_for(tok, script, n_text_ctx)
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
def test_greedy_decode_equals_openai_decoding_task(
    variant, seed, eot_rate, tie_rate, language_task, sample_len, suppress_blank, n_text_ctx
):
    language, task = language_task
    if variant == "tiny":
        language, task = "en", "transcribe"
    if n_text_ctx != 448 and sample_len is None:
        sample_len = 40  # reach the context limit
    if sample_len is None and eot_rate == 0.0:
        eot_rate = 0.03  # the default 224-token limit is test_sample_len_and_context_limits_stop_without_eot's
    tok, task_, ref, dec, got = run_both(
        variant, seed, eot_rate, tie_rate, language, task, sample_len, suppress_blank, n_text_ctx
    )
    assert_same(tok, task_, ref, dec, got)
    event("stopped at end of text" if got.ended_with_eot else "stopped at a length limit")
    event(f"sampled {min(len(got.tokens) // 10 * 10, 100)}+ tokens")
    event("sampled a special or timestamp token" if any(t >= tok.eot for t in got.tokens) else "text tokens only")


def scripted(tok, rows):
    """A decoder whose logits after `history` are zeros but for rows(history): {token: logit}."""

    def next_logits(prompt, history):
        logits = np.zeros(tok.n_vocab, np.float32)
        for token, value in rows(history).items():
            logits[token] = value
        return logits

    return scripted_decoder_for(tok, next_logits)


@pytest.mark.parametrize("variant", ["tiny", "base"])
def test_blank_is_suppressed_only_at_the_first_position(variant):
    tok = tokenizer(variant)
    space, eot = tok.blank_tokens()
    word = tok.encode(" word")[0]

    def rows(history):
        if not history:
            return {space: 10.0, eot: 9.0, word: 1.0}
        return {space: 10.0, eot: 9.0} if len(history) == 1 else {space: 0.0, eot: 9.0}

    got = greedy_decode(scripted(tok, rows), tok, np.zeros(1), DecodingOptions())
    assert got.tokens == [word, space] and got.ended_with_eot
    assert got.text == "word"
    got = greedy_decode(scripted(tok, rows), tok, np.zeros(1), DecodingOptions(suppress_blank=False))
    assert got.tokens == [space, space] and got.ended_with_eot


@pytest.mark.parametrize("variant", ["tiny", "base"])
def test_suppressed_tokens_never_win(variant):
    tok = tokenizer(variant)
    word = tok.encode(" ok")[0]

    def rows(history):
        return {**{t: 50.0 for t in tok.suppress_tokens()}, word: 1.0, tok.eot: 2.0 if len(history) == 2 else 0.0}

    got = greedy_decode(scripted(tok, rows), tok, np.zeros(1), DecodingOptions())
    assert got.tokens == [word, word] and got.ended_with_eot
    assert got.sum_logprob < 0


def test_sample_len_and_context_limits_stop_without_eot():
    tok = tokenizer("tiny")
    word = tok.encode(" la")[0]
    dec = scripted(tok, lambda history: {word: 5.0})
    got = greedy_decode(dec, tok, np.zeros(1), DecodingOptions(sample_len=5))
    assert got.tokens == [word] * 5 and not got.ended_with_eot
    assert len(dec.decoded) == 4  # no decode step for a token that is never sampled from
    dec = scripted(tok, lambda history: {word: 5.0})
    assert len(greedy_decode(dec, tok, np.zeros(1), DecodingOptions()).tokens) == 224  # n_text_ctx // 2
    dec = scripted(tok, lambda history: {word: 5.0})
    dec.n_text_ctx = 8
    got = greedy_decode(dec, tok, np.zeros(1), DecodingOptions(sample_len=100))
    # openai-whisper stops once prefix + sampled exceeds the context: 2 + 7 > 8.
    assert len(got.prefix) + len(got.tokens) == 9


def test_initial_tokens_end_with_no_timestamps():
    for variant in ("tiny", "base"):
        tok = tokenizer(variant)
        assert initial_tokens(tok, DecodingOptions())[-1] == tok.no_timestamps
        assert initial_tokens(tok, DecodingOptions())[0] == tok.sot
