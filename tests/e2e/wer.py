"""Word error counting for tests: the word-level Levenshtein distance."""


def edit_distance(ref: list[str], hyp: list[str]) -> int:
    """Substitutions + deletions + insertions that turn the words `ref` into `hyp`."""
    row = list(range(len(hyp) + 1))
    for i, r in enumerate(ref, 1):
        prev, row[0] = row[0], i
        for j, h in enumerate(hyp, 1):
            prev, row[j] = row[j], min(row[j] + 1, row[j - 1] + 1, prev + (r != h))
    return row[-1]
