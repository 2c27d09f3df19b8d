"""Word error counting for tests: the word-level Levenshtein distance, and the paired bootstrap
that says whether one system's errors over a set of clips are worse than another's."""

import dataclasses
import functools

import numpy as np


def edit_distance(ref: list[str], hyp: list[str]) -> int:
    """Substitutions + deletions + insertions that turn the words `ref` into `hyp`."""
    return sum(edit_counts(ref, hyp))


def edit_counts(ref: list[str], hyp: list[str]) -> tuple[int, int, int]:
    """(substitutions, deletions, insertions) of one minimal alignment of `ref` to `hyp`."""
    # cost[i][j]: edits turning ref[:i] into hyp[:j]; the backtrace prefers a match or substitution.
    cost = [[0] * (len(hyp) + 1) for _ in range(len(ref) + 1)]
    for i in range(len(ref) + 1):
        for j in range(len(hyp) + 1):
            if i == 0 or j == 0:
                cost[i][j] = i + j
            else:
                cost[i][j] = min(
                    cost[i - 1][j] + 1, cost[i][j - 1] + 1, cost[i - 1][j - 1] + (ref[i - 1] != hyp[j - 1])
                )
    subs = dels = ins = 0
    i, j = len(ref), len(hyp)
    while i or j:
        if i and j and cost[i][j] == cost[i - 1][j - 1] + (ref[i - 1] != hyp[j - 1]):
            subs += ref[i - 1] != hyp[j - 1]
            i, j = i - 1, j - 1
        elif i and cost[i][j] == cost[i - 1][j] + 1:
            dels, i = dels + 1, i - 1
        else:
            ins, j = ins + 1, j - 1
    return subs, dels, ins


@functools.lru_cache(maxsize=1)
def _normalizer():
    from whisper.normalizers import EnglishTextNormalizer  # test-only: imported when used

    return EnglishTextNormalizer()


def normalized_words(text: str) -> list[str]:
    """`text`'s words after openai-whisper's EnglishTextNormalizer."""
    return _normalizer()(text).split()


def clip_word_errors(texts, references) -> list[tuple[int, int]]:
    """Per pair, (word edits, reference words), text and reference as normalized_words."""
    out = []
    for text, reference in zip(texts, references, strict=True):
        ref = normalized_words(reference)
        out.append((edit_distance(ref, normalized_words(text)), len(ref)))
    return out


def corpus_word_errors(texts, references) -> tuple[int, int]:
    """(word edits summed over the pairs, reference words summed): clip_word_errors summed."""
    pairs = clip_word_errors(texts, references)
    return sum(e for e, _ in pairs), sum(w for _, w in pairs)


@dataclasses.dataclass(frozen=True)
class PairedGap:
    """System B's corpus WER minus system A's over the same clips, in percentage points, with
    what a paired bootstrap over the clips makes of it."""

    gap: float
    low: float  # the 2.5th and 97.5th percentiles of the resampled gaps: a 95% interval
    high: float
    p_worse: float  # share of resampled clip sets on which B made more errors than A
    clips: int
    words: int

    def __str__(self) -> str:
        return (
            f"{self.gap:+.2f} points, 95% interval [{self.low:+.2f}, {self.high:+.2f}], "
            f"P(worse) {self.p_worse:.3f} over {self.clips} clips, {self.words} words"
        )


def paired_bootstrap(errors_a, errors_b, words, resamples: int = 10000, seed: int = 0) -> PairedGap:
    """Bisani and Ney (2004): the clips are resampled with replacement `resamples` times (a fixed
    seed: the same verdict on every run) and the corpus WER gap B - A is taken on each sample, so
    the spread says how much of the gap a different draw of clips would move."""
    a, b, n = (np.asarray(x, dtype=np.int64) for x in (errors_a, errors_b, words))
    if not (a.shape == b.shape == n.shape) or a.ndim != 1 or n.sum() <= 0:
        raise ValueError(f"paired_bootstrap: {a.shape}, {b.shape} and {n.shape} errors and words of no words")
    picks = np.random.default_rng(seed).integers(0, n.size, size=(resamples, n.size))
    diff, total = (b - a)[picks].sum(axis=1), n[picks].sum(axis=1)
    gaps = 100.0 * diff / np.maximum(total, 1)
    low, high = np.percentile(gaps, [2.5, 97.5])
    return PairedGap(
        gap=100.0 * float((b - a).sum()) / float(n.sum()),
        low=float(low),
        high=float(high),
        p_worse=float((diff > 0).mean()),
        clips=int(n.size),
        words=int(n.sum()),
    )


def word_error_rate(text: str, reference: str) -> float:
    """Percent: word edit distance over reference words, both normalized (corpus_word_errors)."""
    errors, words = corpus_word_errors([text], [reference])
    return 100.0 * errors / max(1, words)
