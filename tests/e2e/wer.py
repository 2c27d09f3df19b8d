"""Word error counting for tests: the word-level Levenshtein distance."""


def edit_distance(ref: list[str], hyp: list[str]) -> int:
    """Substitutions + deletions + insertions that turn the words `ref` into `hyp`."""
    row = list(range(len(hyp) + 1))
    for i, r in enumerate(ref, 1):
        prev, row[0] = row[0], i
        for j, h in enumerate(hyp, 1):
            prev, row[j] = row[j], min(row[j] + 1, row[j - 1] + 1, prev + (r != h))
    return row[-1]


def word_error_rate(text: str, reference: str) -> float:
    """Percent: word edit distance over reference words, both normalized with openai-whisper's
    EnglishTextNormalizer (test-only: imported when measured)."""
    from whisper.normalizers import EnglishTextNormalizer

    normalize = EnglishTextNormalizer()
    ref, hyp = normalize(reference).split(), normalize(text).split()
    return 100.0 * edit_distance(ref, hyp) / max(1, len(ref))
