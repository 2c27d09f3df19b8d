"""Beam search and best-of ranking against openai-whisper's DecodingTask on scripted logits.

Both sides see the same logits: a pseudo-random function of each sequence's sampled tokens
(so a beam's logits depend on its whole history), with strong text, end-of-text and timestamp
candidates. openai-whisper's `DecodingTask.run` (BeamSearchDecoder, its logit filters,
MaximumLikelihoodRanker) drives a scripted inference over all beams; `decode` drives a scripted
decoder (ckw/runtime/testing) that keeps each sequence's history the way the generated decoder keeps its self-K/V:
`decode_batch` appends a token per sequence, `reorder` rearranges the histories. A policy that
forgot or misapplied a reorder would read another beam's logits and diverge. No neural network
runs here: the real model is in tests/e2e/beam_openai_test.py.
"""

import zlib

import numpy as np
import pytest
import torch
from hypothesis import event, given, settings
from hypothesis import strategies as st
from whisper.decoding import DecodingOptions as OpenAIOptions
from whisper.decoding import MaximumLikelihoodRanker

from ckw.runtime import decoding, token_choice
from ckw.runtime.decoding import DecodingOptions, decode
from ckw.runtime.testing.doubles import checkpoint_tokenizer, openai_decode, scripted_decoder_for
from ckw.runtime.tokenizer import WhisperTokenizer

tokenizer = checkpoint_tokenizer


class Script:
    """Logits after the sampled tokens `history`; deterministic in `seed`."""

    def __init__(self, tok: WhisperTokenizer, seed: int, eot_rate: float):
        self.tok, self.seed, self.eot_rate = tok, seed, eot_rate
        self.text = tok.encode(" the quick brown fox jumps over the lazy dog, and then?")
        self.stamps = [tok.timestamp_begin + i for i in (0, 3, 17, 40, 90)]
        self.base = (np.random.default_rng(seed).standard_normal(tok.n_vocab) * 2.0).astype(np.float32)
        self.memo = {}

    def __call__(self, history) -> np.ndarray:
        key = tuple(history)
        if key not in self.memo:
            self.memo[key] = self.logits(key)
        return self.memo[key].copy()

    def logits(self, history) -> np.ndarray:
        rng = np.random.default_rng([self.seed, len(history), zlib.crc32(np.asarray(history, np.int64).tobytes())])
        logits = self.base.copy()
        logits[rng.integers(0, self.tok.n_vocab, 64)] += np.float32(3.0)  # the background moves too
        for _ in range(int(rng.integers(2, 7))):  # competing strong candidates: beams diverge
            pool = self.text if rng.random() < 0.8 else self.stamps
            logits[pool[int(rng.integers(len(pool)))]] = np.float32(7.0 + rng.random() * 4.0)
        if rng.random() < self.eot_rate:
            logits[self.tok.eot] = np.float32(7.0 + rng.random() * 5.0)
        return logits


def history_script(script: Script):
    return lambda prompt, history: script(history)


@settings(max_examples=40, deadline=None, database=None, derandomize=True)
@given(
    variant=st.sampled_from(["tiny", "base"]),
    seed=st.integers(0, 2**32 - 1),
    beam_size=st.integers(1, 6),
    patience=st.sampled_from([None, 0.5, 2.0]),
    length_penalty=st.sampled_from([None, 0.0, 0.6, 1.0]),
    eot_rate=st.sampled_from([0.05, 0.2, 0.5]),
    without_timestamps=st.booleans(),
    sample_len=st.integers(1, 30),  # the 224 default costs time, not coverage
    n_text_ctx=st.sampled_from([448, 14]),
)
def test_beam_search_equals_openai_decoding_task(
    variant, seed, beam_size, patience, length_penalty, eot_rate, without_timestamps, sample_len, n_text_ctx
):
    tok = tokenizer(variant)
    if patience is not None and round(beam_size * patience) == 0:
        patience = None
    script = Script(tok, seed, eot_rate)
    kwargs = {
        "language": "en",
        "sample_len": sample_len,
        "beam_size": beam_size,
        "patience": patience,
        "length_penalty": length_penalty,
        "without_timestamps": without_timestamps,
    }
    _, ref = openai_decode(
        tok, OpenAIOptions(temperature=0.0, fp16=False, **kwargs), history_script(script), n_text_ctx
    )
    dec = scripted_decoder_for(tok, history_script(script), n_text_ctx)
    got = decode(dec, tok, np.zeros((1, 1), np.float32), DecodingOptions(**kwargs))
    if ref is None:
        assert got.tokens == []
        return
    assert got.tokens == ref.tokens
    assert got.text == ref.text
    assert got.avg_logprob == pytest.approx(ref.avg_logprob, rel=1e-5, abs=1e-5)
    assert got.no_speech_prob == pytest.approx(ref.no_speech_prob, rel=1e-5)
    event(f"{len(got.tokens) // 10 * 10}+ tokens")
    event("reordered" if dec.reorders > 1 else "never reordered")


def test_rank_is_openai_maximum_likelihood_ranker():
    rng = np.random.default_rng(3)
    for penalty in (None, 0.0, 0.3, 1.0):
        for _ in range(50):
            lengths = rng.integers(1, 30, 5)
            candidates = [(list(range(n)), float(-rng.random() * n)) for n in lengths]
            ref = MaximumLikelihoodRanker(penalty).rank(
                [[torch.tensor(t) for t, _ in candidates]], [[lp for _, lp in candidates]]
            )[0]
            assert decoding.rank(candidates, penalty) == ref


def test_group_larger_than_the_decoder_is_refused_with_its_limit():
    tok = tokenizer("tiny")
    dec = scripted_decoder_for(tok, history_script(Script(tok, 0, 0.2)))
    with pytest.raises(ValueError, match="beam_size=9 is more than the 8 sequences"):
        decode(dec, tok, np.zeros((1, 1), np.float32), DecodingOptions(beam_size=9))
    with pytest.raises(ValueError, match="best_of=9 is more than the 8 sequences"):
        decode(dec, tok, np.zeros((1, 1), np.float32), DecodingOptions(best_of=9, temperature=0.5))
    with pytest.raises(ValueError, match="beam_size needs temperature 0"):
        decode(dec, tok, np.zeros((1, 1), np.float32), DecodingOptions(beam_size=2, best_of=2, temperature=0.5))
    with pytest.raises(ValueError, match="patience needs beam_size"):
        decode(dec, tok, np.zeros((1, 1), np.float32), DecodingOptions(patience=2.0))


def test_best_of_samples_side_by_side_and_ranks_like_openai():
    """best_of N at temperature > 0: N sequences in one decode_batch per step, each frozen at its
    end of text; the winner is the ranker's choice among them, reproducible for a seed."""
    tok = tokenizer("tiny")
    script = history_script(Script(tok, 11, 0.3))
    runs = []
    for _ in range(2):
        dec = scripted_decoder_for(tok, script)
        got = decode(
            dec,
            tok,
            np.zeros((1, 1), np.float32),
            DecodingOptions(temperature=0.7, best_of=4, without_timestamps=True, sample_len=30),
            np.random.default_rng(5),
        )
        assert {len(tokens) for tokens in dec.fed} == {4}
        runs.append((got, [list(h) for h in dec.histories]))
    (a, histories), (b, _) = runs
    assert a.tokens == b.tokens and a.sum_logprob == b.sum_logprob
    finals = [h[: h.index(tok.eot)] if tok.eot in h else h for h in histories]
    assert a.tokens in finals


def _full_row_top(row: np.ndarray, k: int):
    """The whole row's float64 log_softmax, rounded to float32, ranked (ties: lower index)."""
    x = row.astype(np.float64)
    m = x.max()
    with np.errstate(invalid="ignore"):
        lp = ((x - m) - np.log(np.exp(x - m).sum())).astype(np.float32)
    order = np.lexsort((np.arange(row.size), -lp))[:k]
    return order, lp[order]


def test_top_log_probs_equal_ranking_the_whole_log_softmax_row():
    """Beam search ranks a few candidates per row, not the whole row: same tokens, same float32
    log-probabilities, same tie order, with masked tokens and with ties wider than the margin."""
    rng = np.random.default_rng(7)
    n_vocab, fallbacks = 51865, 0
    for case in range(60):
        row = (rng.standard_normal(n_vocab) * rng.choice([0.5, 3.0, 20.0])).astype(np.float32)
        row[rng.integers(0, n_vocab, 90)] = -np.inf  # suppressed tokens
        if case % 3 == 0:
            row[50364:] = -np.inf  # timestamp rules: text only
        elif case % 3 == 1:
            row[:50257] = -np.inf  # timestamps and end of text only
        if case % 4 == 0:  # exact ties at the top, some wider than k + margin
            row[rng.choice(np.flatnonzero(np.isfinite(row)), 3 + case % 13, replace=False)] = row.max()
        if case % 5 == 0:  # logits that differ but round to one float32 log-probability
            top = row.max()
            row[rng.choice(np.flatnonzero(np.isfinite(row)), 8, replace=False)] = top - np.float32(1e-6) * rng.integers(
                0, 4, 8
            ).astype(np.float32)
        k = int(rng.integers(1, 9))
        tokens, lps = token_choice.top_log_probs(row, k)
        ref_tokens, ref_lps = _full_row_top(row, k)
        assert tokens.tolist() == ref_tokens.tolist(), case
        assert lps.tobytes() == ref_lps.tobytes(), case
        fallbacks += int(len(set(ref_lps.tolist())) < k)
    assert fallbacks > 0  # the tie cases were exercised
    # Fewer finite logits than candidates (masked ones are ranked too: the whole row is partially
    # sorted), and far more exact ties at the top than candidates.
    few = np.full(n_vocab, -np.inf, np.float32)
    few[[5, 70, 9000]] = [1.0, 3.0, 2.0]
    many = (rng.standard_normal(n_vocab) - 10).astype(np.float32)
    many[rng.choice(n_vocab, 900, replace=False)] = 4.0
    for row in (few, many):
        for k in (1, 5, 8):
            tokens, lps = token_choice.top_log_probs(row, k)
            ref_tokens, ref_lps = _full_row_top(row, k)
            assert tokens.tolist() == ref_tokens.tolist() and lps.tobytes() == ref_lps.tobytes()


def test_a_row_with_nothing_left_to_sample_is_refused():
    with pytest.raises(ValueError, match="every token of a row is suppressed"):
        token_choice.top_log_probs(np.full(10, -np.inf, np.float32), 2)
