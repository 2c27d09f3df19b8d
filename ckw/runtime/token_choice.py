"""How a group of sequences picks its next tokens: openai-whisper's token decoders (its
decoding.py: `GreedyDecoder` over `n_group` rows, `BeamSearchDecoder`), as numpy over float32
logits that the logit filters have already masked.

`Sampler` is greedy decoding (temperature 0: the argmax) and best-of-N sampling (temperature > 0:
a draw from softmax(logits / T) per row); each row is frozen at its end of text. `BeamSearch`
keeps `beam_size` beams: every beam proposes its `beam_size + 1` likeliest next tokens, the
candidates are ranked by cumulative log-probability (float32 sums, as openai-whisper keeps them),
those ending in end of text join the finished list (at most `round(beam_size * patience)`), the
best `beam_size` others continue and say which row each came from (the decoder's self-K/V follow
them). Both keep float32 sums of log-probabilities, as openai-whisper's torch tensors do.

Draws come from a numpy Generator (one per step and row, in row order), reproducible for a seed
but not openai-whisper's torch draws.
"""

import numpy as np

from ckw.runtime.options import OptionError, group_size


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


def top_log_probs_rows(scores: np.ndarray, k: int) -> tuple[np.ndarray, np.ndarray]:
    """top_log_probs of every row of scores [n, V]: tokens [n, k] and log-probabilities [n, k]."""
    ranked = [top_log_probs(row, k) for row in scores]
    return np.array([t for t, _ in ranked]), np.array([lp for _, lp in ranked])


def softmax(logits: np.ndarray) -> np.ndarray:
    x = logits.astype(np.float64)
    x = np.exp(x - x.max())
    return x / x.sum()


def sample(scores: np.ndarray, temperature: float, rng: np.random.Generator) -> int:
    """One draw from softmax(scores / temperature) (openai-whisper: torch Categorical)."""
    cdf = np.cumsum(softmax(scores / np.float32(temperature)))
    return int(min(np.searchsorted(cdf, rng.random() * cdf[-1], side="right"), scores.size - 1))


Candidate = tuple[list[int], float, bool]  # sampled tokens (no end of text), sum_logprob, ended with eot


class Sampler:
    """openai-whisper's GreedyDecoder over n rows: the argmax at temperature 0, else a draw."""

    def __init__(self, n: int, eot: int, temperature: float, rng: np.random.Generator | None):
        self.n, self.eot, self.temperature, self.rng = n, eot, temperature, rng
        self.rows: list[list[int]] = [[] for _ in range(n)]  # sampled tokens, end of text included
        self.sums = np.zeros(n, np.float32)

    def histories(self) -> list[list[int]]:
        """Each row's tokens for the logit filters (end of text left out: a frozen row repeats it)."""
        return [r[:-1] if r and r[-1] == self.eot else r for r in self.rows]

    def update(self, scores: np.ndarray) -> list[int] | None:
        """Picks each row's next token; the rows to continue from (None: each its own)."""
        for j, row in enumerate(self.rows):
            if row and row[-1] == self.eot:
                continue  # frozen at its end of text
            if self.temperature == 0:
                token = int(np.argmax(scores[j]))
            else:
                token = sample(scores[j], self.temperature, self.rng)
            self.sums[j] += log_probs(scores[j], np.array([token]), log_softmax_parts(scores[j]))[0]
            row.append(token)
        return None

    @property
    def done(self) -> bool:
        return all(r[-1] == self.eot for r in self.rows)

    def next_tokens(self) -> list[int]:
        return [r[-1] for r in self.rows]

    def finish(self) -> list[Candidate]:
        return [
            (r[: r.index(self.eot)] if self.eot in r else list(r), float(s), self.eot in r)
            for r, s in zip(self.rows, self.sums)
        ]


class BeamSearch:
    """openai-whisper's BeamSearchDecoder (temperature 0) for one window."""

    def __init__(self, beam_size: int, eot: int, patience: float | None, rank=top_log_probs_rows):
        self.n, self.eot, self.rank = beam_size, eot, rank  # rank: top_log_probs_rows or a decoder's own
        self.max_candidates = round(beam_size * (patience or 1.0))
        if self.max_candidates <= 0:
            raise OptionError(
                "patience", f"={patience} with beam_size={beam_size} keeps no candidate; use a larger patience"
            )
        self.beams: list[list[int]] = [[] for _ in range(beam_size)]
        self.sums = np.zeros(beam_size, np.float32)
        self.finished: dict = {}  # tuple(sampled + [eot]) -> sum_logprob, in the order openai-whisper adds them

    def histories(self) -> list[list[int]]:
        return self.beams

    def update(self, scores: np.ndarray) -> list[int] | None:
        """Ranks every beam's candidates; the rows the new beams continue from (None: unmoved)."""
        ranked, sources = {}, {}
        tokens, logprobs = self.rank(scores, self.n + 1)
        for j in range(self.n):
            for token, logprob in zip(tokens[j], logprobs[j]):
                sequence = tuple(self.beams[j]) + (int(token),)
                ranked[sequence] = float(self.sums[j] + logprob)  # float32 sum, as torch
                sources[sequence] = j
        continuing, source, new_finished = [], [], {}
        for sequence in sorted(ranked, key=ranked.get, reverse=True):
            if sequence[-1] == self.eot:
                new_finished[sequence] = ranked[sequence]
            else:
                self.sums[len(continuing)] = ranked[sequence]
                continuing.append(list(sequence))
                source.append(sources[sequence])
                if len(continuing) == self.n:
                    break
        self.beams = continuing
        for sequence in sorted(new_finished, key=new_finished.get, reverse=True):
            if len(self.finished) >= self.max_candidates:
                break
            self.finished[sequence] = new_finished[sequence]
        return None if source == list(range(self.n)) else source

    @property
    def done(self) -> bool:
        return len(self.finished) >= self.max_candidates

    def next_tokens(self) -> list[int]:
        return [b[-1] for b in self.beams]

    def finish(self) -> list[Candidate]:
        ended = set(self.finished)
        finished = dict(self.finished)
        if len(finished) < self.n:  # not enough finished: the likeliest unfinished beams join
            for j in np.argsort(self.sums)[::-1]:
                finished[tuple(self.beams[j]) + (self.eot,)] = float(self.sums[j])
                if len(finished) >= self.n:
                    break
        return [(list(seq[: seq.index(self.eot)]), logprob, seq in ended) for seq, logprob in finished.items()]


def chooser(options, eot: int, max_beams: int, rng: np.random.Generator | None, rank=top_log_probs_rows):
    """The token chooser of a window's DecodingOptions: beams (ranked by `rank`, as
    top_log_probs_rows), best_of samples or one sequence."""
    if options.beam_size is not None:
        return BeamSearch(group_size(options.beam_size, max_beams, "beam_size"), eot, options.patience, rank)
    n = (options.best_of or 1) if options.temperature > 0 else 1
    if options.temperature > 0 and rng is None:
        rng = np.random.default_rng(0)
    return Sampler(group_size(n, max_beams, "best_of"), eot, options.temperature, rng)
