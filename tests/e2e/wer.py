"""Word error counting for tests: the word-level Levenshtein distance."""


def edit_distance(ref: list[str], hyp: list[str]) -> int:
    """Substitutions + deletions + insertions that turn the words `ref` into `hyp`."""
    row = list(range(len(hyp) + 1))
    for i, r in enumerate(ref, 1):
        prev, row[0] = row[0], i
        for j, h in enumerate(hyp, 1):
            prev, row[j] = row[j], min(row[j] + 1, row[j - 1] + 1, prev + (r != h))
    return row[-1]


def corpus_word_errors(texts, references) -> tuple[int, int]:
    """(word edits summed over the pairs, reference words summed), each text and reference
    normalized with openai-whisper's EnglishTextNormalizer (test-only: imported when measured)."""
    from whisper.normalizers import EnglishTextNormalizer

    normalize = EnglishTextNormalizer()
    errors = words = 0
    for text, reference in zip(texts, references, strict=True):
        ref = normalize(reference).split()
        errors += edit_distance(ref, normalize(text).split())
        words += len(ref)
    return errors, words


def word_error_rate(text: str, reference: str) -> float:
    """Percent: word edit distance over reference words, both normalized (corpus_word_errors)."""
    errors, words = corpus_word_errors([text], [reference])
    return 100.0 * errors / max(1, words)
