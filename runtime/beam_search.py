"""Decoding a window as a group of sequences side by side: openai-whisper's beam search and
best-of-N sampling (its decoding.py: `BeamSearchDecoder`, `GreedyDecoder` over `n_group` rows,
`MaximumLikelihoodRanker`), with one generated-decoder call per step for the whole group.

The prompt is run once (`prefill`) and its self-K/V copied to every sequence (`reorder` with all
zeros); after that each step is one `decode_batch` of one token per sequence, so every weight is
read once per step whatever the group size. openai-whisper runs the same prompt through all
`n_group` rows instead; the rows are identical, so the first step's candidates are too.

Beam search (temperature 0): every beam proposes its `beam_size + 1` likeliest next tokens;
candidates are ranked by cumulative log-probability (float32 sums, as openai-whisper keeps them);
those ending in end of text join the finished list (at most `round(beam_size * patience)`), the
best `beam_size` others continue and the decoder's self-K/V follow them (`reorder`, skipped when
nothing moved). The search stops when the finished list is full, at `sample_len` tokens or at
the text context; unfinished beams fill the list up to `beam_size`. The winner maximises
sum_logprob / length (or / ((5 + length) / 6) ** length_penalty).

Best-of-N (temperature > 0): N sequences sampled side by side from softmax(logits / T), each
frozen at its end of text; the same ranking picks one. Draws come from a numpy Generator (one
per step and sequence, in sequence order), so they are reproducible for a seed but are not
openai-whisper's torch draws.
"""

import math
from collections.abc import Sequence
from typing import Protocol

import numpy as np

from runtime import decoding
from runtime.decoding import DecodingOptions, DecodingResult
from runtime.timestamp_rules import TimestampRules, max_initial_timestamp_index
from runtime.tokenizer import WhisperTokenizer


class GroupDecoder(Protocol):
    """What group decoding needs from a decoder library handle (runtime.engine.Decoder)."""

    n_text_ctx: int
    max_beams: int

    def set_encoder_memory(self, memory: np.ndarray) -> None: ...

    def prefill(self, tokens: Sequence[int], rows: Sequence[int] = (-1,)) -> np.ndarray: ...

    def decode_batch(self, tokens: Sequence[int]) -> np.ndarray:
        """One token per sequence at the current position; logits [len(tokens), n_vocab]."""

    def reorder(self, source: Sequence[int]) -> None:
        """Sequence b continues from sequence source[b] (its self-K/V, in place)."""


def log_softmax_parts(row: np.ndarray) -> tuple[np.float64, np.float64]:
    """(max, log of the sum of exp(x - max)) of a row of logits, in float64 over its finite
    entries: the masked (-inf) ones add exp(-inf) = 0, and skipping them keeps numpy's exp off
    its slow path for infinities."""
    finite = row[row > -np.inf]
    if finite.size == 0:
        raise ValueError("every token of a row is suppressed: the logit filters left nothing to sample")
    m = np.float64(finite.max())
    e = np.subtract(finite, m, dtype=np.float64)  # exact: float32 - float64 in float64
    return m, np.log(np.exp(e, out=e).sum())


def log_probs(row: np.ndarray, tokens: np.ndarray, parts: tuple[np.float64, np.float64]) -> np.ndarray:
    """log_softmax(row)[tokens]: float64 (x - max) - log sum, rounded to float32 (openai-whisper:
    torch's float32 log_softmax), only where asked."""
    m, log_sum = parts
    return ((row[tokens].astype(np.float64) - m) - log_sum).astype(np.float32)


def _candidates(row: np.ndarray, top: np.float64, n: int) -> np.ndarray:
    """Indices of n of the largest logits (which of equal ones at the n-th is arbitrary): a partial
    sort of the few logits within 16 of the largest (`top`) when n of them are, else of the row."""
    near = np.flatnonzero(row >= np.float32(top - 16.0))
    if near.size < n:
        return np.argpartition(-row, n - 1)[:n]  # kth near the front: fast with many masked (-inf) tokens
    return near[np.argpartition(-row[near], n - 1)[:n]]


def top_log_probs(row: np.ndarray, k: int, margin: int = 4) -> tuple[np.ndarray, np.ndarray]:
    """The k likeliest tokens of a row of logits and their log-probabilities, largest first, ties
    (equal float32 log-probabilities) to the lower index: the same as ranking the whole
    log_softmax row. Rounding to float32 can tie logits that differ, so `margin` more candidates
    are ranked, and the whole row when the tie reaches past them."""
    parts = log_softmax_parts(row)
    part = _candidates(row, parts[0], min(k + margin, row.size))
    lp = log_probs(row, part, parts)
    order = np.lexsort((part, -lp))
    if part.size < row.size and lp[order[-1]] == lp[order[k - 1]]:
        part = np.arange(row.size)
        lp = log_probs(row, part, parts)
        order = np.lexsort((part, -lp))
    return part[order[:k]], lp[order[:k]]


def rank(candidates: Sequence[tuple[list[int], float]], length_penalty: float | None) -> int:
    """openai-whisper's MaximumLikelihoodRanker: the index of the best (tokens, sum_logprob)."""
    scores = []
    for tokens, logprob in candidates:
        length = len(tokens)
        penalty = length if length_penalty is None else ((5 + length) / 6) ** length_penalty
        scores.append(logprob / penalty if penalty else logprob)  # openai-whisper divides by zero here
    return int(np.argmax(scores))


class _LogitFilters:
    """openai-whisper's logit filters for one window, applied to each sequence's row."""

    def __init__(self, tokenizer: WhisperTokenizer, options: DecodingOptions):
        self.blank = np.asarray(tokenizer.blank_tokens(), dtype=np.int64) if options.suppress_blank else None
        self.suppress = np.asarray(decoding.suppress_tokens(tokenizer, options.suppress_tokens), dtype=np.int64)
        self.rules = None
        if not options.without_timestamps:
            index = max_initial_timestamp_index(options.max_initial_timestamp)
            self.rules = TimestampRules.for_tokenizer(tokenizer, index)

    def apply(self, logits: np.ndarray, sampled: Sequence[Sequence[int]]) -> np.ndarray:
        scores = np.array(logits, dtype=np.float32, copy=True)
        for row, tokens in zip(scores, sampled):
            if self.blank is not None and not tokens:
                row[self.blank] = -np.inf
            if self.suppress.size:
                row[self.suppress] = -np.inf
            if self.rules is not None:
                self.rules.apply(row, tokens)
        return scores


def _check_group(decoder: GroupDecoder, n: int, what: str) -> None:
    if n < 1:
        raise ValueError(f"{what} {n}: needs at least 1")
    if n > decoder.max_beams:
        raise ValueError(f"{what} {n} is more than the {decoder.max_beams} sequences this decoder runs side by side "
                         "(max_beams in circuits/audio_transformer_decoder.json, fixed when the library is built)")


class _Window:
    """One window's start: its prompt and logit filters, the prompt run once with its K/V given
    to every one of the n sequences, the logits after it (repeated per sequence) and the
    no-speech probability at the start-of-transcript row; `result` packs the winner."""

    def __init__(self, decoder: GroupDecoder, tokenizer: WhisperTokenizer, memory: np.ndarray,
                 options: DecodingOptions, n: int):
        self.tokenizer, self.options = tokenizer, options
        self.prefix = decoding.initial_tokens(tokenizer, options, decoder.n_text_ctx)
        self.sample_len = options.sample_len or decoder.n_text_ctx // 2
        self.filters = _LogitFilters(tokenizer, options)
        decoder.set_encoder_memory(memory)
        first, last = decoder.prefill(self.prefix, rows=(self.prefix.index(tokenizer.sot), -1))
        decoder.reorder([0] * n)
        self.logits = np.repeat(last[None], n, axis=0)
        self.no_speech_prob = math.nan
        if tokenizer.no_speech is not None:
            p = np.exp(first.astype(np.float64) - first.max())
            self.no_speech_prob = float(p[tokenizer.no_speech] / p.sum())

    def result(self, tokens: list[int], sum_logprob: float, ended: bool) -> DecodingResult:
        text = self.tokenizer.decode(tokens).strip()
        return DecodingResult(
            tokens=tokens, text=text, prefix=self.prefix, sum_logprob=sum_logprob,
            avg_logprob=sum_logprob / (len(tokens) + 1), ended_with_eot=ended, language=self.options.language,
            no_speech_prob=self.no_speech_prob, temperature=float(self.options.temperature),
            compression_ratio=decoding.compression_ratio(text),
        )


def beam_search(decoder: GroupDecoder, tokenizer: WhisperTokenizer, memory: np.ndarray,
                options: DecodingOptions) -> DecodingResult:
    """One window with openai-whisper's BeamSearchDecoder (temperature 0)."""
    beam_size = options.beam_size
    _check_group(decoder, beam_size, "beam_size")
    max_candidates = round(beam_size * (options.patience or 1.0))
    if max_candidates <= 0:
        raise ValueError(f"beam_size {beam_size} with patience {options.patience} keeps no candidate; "
                         "use a positive patience")
    n_ctx = decoder.n_text_ctx
    eot = tokenizer.eot
    window = _Window(decoder, tokenizer, memory, options, beam_size)
    prefix, filters, logits = window.prefix, window.filters, window.logits
    beams: list[list[int]] = [[] for _ in range(beam_size)]  # sampled tokens of each beam
    sums = np.zeros(beam_size, np.float32)
    finished: dict = {}  # tuple(sampled + [eot]) -> sum_logprob, in the order openai-whisper adds them
    for i in range(window.sample_len):
        filtered = filters.apply(logits, beams)
        scores, sources = {}, {}
        for j in range(beam_size):
            for token, logprob in zip(*top_log_probs(filtered[j], beam_size + 1)):
                sequence = tuple(beams[j]) + (int(token),)
                scores[sequence] = float(sums[j] + logprob)  # float32 sum, as torch
                sources[sequence] = j
        continuing, source, new_finished = [], [], {}
        for sequence in sorted(scores, key=scores.get, reverse=True):
            if sequence[-1] == eot:
                new_finished[sequence] = scores[sequence]
            else:
                sums[len(continuing)] = scores[sequence]
                continuing.append(list(sequence))
                source.append(sources[sequence])
                if len(continuing) == beam_size:
                    break
        beams = continuing
        for sequence in sorted(new_finished, key=new_finished.get, reverse=True):
            if len(finished) >= max_candidates:
                break
            finished[sequence] = new_finished[sequence]
        if len(finished) >= max_candidates or len(prefix) + len(beams[0]) > n_ctx or i + 1 == window.sample_len:
            break
        if source != list(range(beam_size)):
            decoder.reorder(source)
        logits = decoder.decode_batch([b[-1] for b in beams])

    ended = set(finished)
    if len(finished) < beam_size:  # not enough finished: the likeliest unfinished beams join
        for j in np.argsort(sums)[::-1]:
            finished[tuple(beams[j]) + (eot,)] = float(sums[j])
            if len(finished) >= beam_size:
                break
    candidates = [(list(seq[: seq.index(eot)]), logprob) for seq, logprob in finished.items()]
    best = rank(candidates, options.length_penalty)
    tokens, sum_logprob = candidates[best]
    return window.result(tokens, sum_logprob, list(finished)[best] in ended)


def sample_best_of(decoder: GroupDecoder, tokenizer: WhisperTokenizer, memory: np.ndarray,
                   options: DecodingOptions, rng: np.random.Generator) -> DecodingResult:
    """One window with openai-whisper's GreedyDecoder sampling `best_of` sequences side by side."""
    n = options.best_of or 1
    _check_group(decoder, n, "best_of")
    n_ctx = decoder.n_text_ctx
    eot = tokenizer.eot
    window = _Window(decoder, tokenizer, memory, options, n)
    prefix, filters, logits = window.prefix, window.filters, window.logits
    rows: list[list[int]] = [[] for _ in range(n)]
    sums = np.zeros(n, np.float32)
    for i in range(window.sample_len):
        scores = filters.apply(logits, [[t for t in r if t != eot] for r in rows])
        for j in range(n):
            if rows[j] and rows[j][-1] == eot:
                rows[j].append(eot)  # frozen at its end of text
                continue
            token = decoding._sample(scores[j], options.temperature, rng)
            sums[j] += log_probs(scores[j], np.array([token]), log_softmax_parts(scores[j]))[0]
            rows[j].append(token)
        if all(r[-1] == eot for r in rows) or len(prefix) + i + 1 > n_ctx or i + 1 == window.sample_len:
            break
        logits = decoder.decode_batch([r[-1] for r in rows])
    candidates = [(r[: r.index(eot)] if eot in r else r, float(s)) for r, s in zip(rows, sums)]
    best = rank(candidates, options.length_penalty)
    tokens, sum_logprob = candidates[best]
    return window.result(tokens, sum_logprob, eot in rows[best])
