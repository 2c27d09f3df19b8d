"""The BPE merges a shipped tokenizer.json lacks, restored when the checkpoint is packed (so a
run loads the file as it is) or, for a directory packed before, when the runtime loads it.

openai-whisper's vocabularies are rank-ordered byte-level BPE (tiktoken): every multi-byte token
is made by merging two lower-ranked tokens, and Hugging Face's `merges` list holds one merge per
token in rank (= id) order. Some shipped files drop one (the multilingual base tokenizer.json
lacks "Ġ t", so " the" encodes as " " + "the" where openai-whisper has " the").
"""

from typing import Dict, List

# model_config.json key: the merges the packer restored (present, even empty, once it checked).
RESTORED_KEY = "tokenizer_restored_merges"


def _merge_parts(merge) -> List[str]:
    return merge.split(" ") if isinstance(merge, str) else list(merge)


def restore_missing_merges(data: Dict) -> List[str]:
    """Adds the merges a parsed tokenizer.json lacks, in place; returns them ("left right"). A token
    with no merge whose split into two lower-ranked tokens is unique gets its merge back, at its
    rank position."""
    model = data.get("model") or {}
    if model.get("type") != "BPE" or not model.get("merges"):
        return []
    vocab: Dict[str, int] = model["vocab"]
    merges = model["merges"]
    added = {t["id"] for t in data.get("added_tokens") or []}
    made = {"".join(_merge_parts(m)) for m in merges}
    repaired = []
    for token, rank in sorted(vocab.items(), key=lambda kv: kv[1]):
        if len(token) < 2 or token in made or rank in added:
            continue
        splits = [
            (token[:k], token[k:])
            for k in range(1, len(token))
            if vocab.get(token[:k], rank) < rank and vocab.get(token[k:], rank) < rank
        ]
        if len(splits) != 1:
            continue
        ranks = [vocab.get("".join(_merge_parts(m)), -1) for m in merges]
        at = next((i for i, r in enumerate(ranks) if r > rank), len(merges))
        merge = " ".join(splits[0]) if isinstance(merges[0], str) else list(splits[0])
        merges.insert(at, merge)
        repaired.append(" ".join(splits[0]))
    return repaired
