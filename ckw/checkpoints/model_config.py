"""model_config.json: dimensions plus everything decoding needs, read from the checkpoint.

Special token ids come from `tokenizer.json`'s added tokens by their text, never from a table:
tiny.en and multilingual models number them differently (`<|endoftext|>` is 50256 in tiny.en,
50257 in base). Language tokens are the added tokens between `<|startoftranscript|>` and
`<|translate|>`. Timestamp tokens are not in tokenizer.json; they are the ids from
`<|notimestamps|>` + 1 to the end of the vocabulary, 0.02 s apart (1501 of them: 0.00 .. 30.00 s).
"""

from __future__ import annotations

import json
import re

from ckw.checkpoints import alignment_heads
from ckw.checkpoints.canonical import DIM_KEYS, Conversion
from ckw.checkpoints.errors import CheckpointError

N_TIMESTAMPS = 1501  # 30 s window / 0.02 s + 1

_SPECIALS = {
    "eot": ("<|endoftext|>",),
    "sot": ("<|startoftranscript|>",),
    "sot_prev": ("<|startofprev|>",),
    "sot_lm": ("<|startoflm|>",),
    "no_timestamps": ("<|notimestamps|>",),
    "no_speech": ("<|nospeech|>", "<|nocaptions|>"),  # renamed in later Whisper releases
    "transcribe": ("<|transcribe|>",),
    "translate": ("<|translate|>",),
}
_LANGUAGE_TOKEN = re.compile(r"^<\|([a-z]{2,3}(?:_[a-z]+)?)\|>$")


def load_tokenizer(path: str) -> dict:
    try:
        with open(path, encoding="utf-8") as f:
            tok = json.load(f)
    except (OSError, ValueError) as e:
        raise CheckpointError(f"{path}: unreadable tokenizer.json ({e}); re-download it") from e
    if not isinstance(tok.get("added_tokens"), list):
        raise CheckpointError(f"{path}: no 'added_tokens' list; not a Whisper tokenizer.json")
    return tok


def special_tokens(tokenizer: dict, n_vocab: int, path: str) -> dict:
    """Special ids, `timestamp_begin` and `language_ids` from a parsed tokenizer.json."""
    by_text = {t.get("content"): t.get("id") for t in tokenizer["added_tokens"]}
    out: dict = {}
    for key, texts in _SPECIALS.items():
        ids = [by_text[t] for t in texts if t in by_text]
        if not ids:
            raise CheckpointError(f"{path}: special token {texts[0]} is missing; not a Whisper tokenizer")
        out[key] = int(ids[0])
    out["timestamp_begin"] = out["no_timestamps"] + 1
    if n_vocab - out["timestamp_begin"] != N_TIMESTAMPS:
        raise CheckpointError(
            f"{path}: <|notimestamps|> is {out['no_timestamps']} so timestamps would start at "
            f"{out['timestamp_begin']}, leaving {n_vocab - out['timestamp_begin']} ids of the "
            f"{n_vocab}-token vocabulary for timestamps, expected {N_TIMESTAMPS}; the tokenizer "
            "does not belong to these weights"
        )
    languages = {}
    for t in tokenizer["added_tokens"]:
        m = _LANGUAGE_TOKEN.match(t.get("content", ""))
        if m and out["sot"] < t["id"] < out["translate"]:
            languages[m.group(1)] = int(t["id"])
    if not languages or sorted(languages.values()) != list(range(out["sot"] + 1, out["translate"])):
        raise CheckpointError(
            f"{path}: the ids between <|startoftranscript|> and <|translate|> are not all language "
            "tokens; not a Whisper tokenizer"
        )
    out["language_ids"] = dict(sorted(languages.items(), key=lambda kv: kv[1]))
    return out


def build(
    variant: str,
    source: str,
    conversion: Conversion,
    tokenizer: dict,
    tokenizer_path: str,
    *,
    model: str | None = None,
) -> tuple[dict, list[str]]:
    """The model_config.json document and notes for the audit. `model` is the openai-whisper model
    (e.g. "tiny.en") the user asked for: it picks the alignment heads of a checkpoint without its
    own (alignment_heads.select)."""
    dims = conversion.dims
    cfg: dict = {k: getattr(dims, k) for k in DIM_KEYS}
    cfg["variant"] = variant
    cfg["source"] = source
    cfg["source_format"] = conversion.source_format
    cfg["is_multilingual"] = dims.n_vocab >= 51865  # openai-whisper's own rule
    specials = special_tokens(tokenizer, dims.n_vocab, tokenizer_path)
    cfg.update(specials)
    notes = []
    for key in ("suppress_tokens", "begin_suppress_tokens"):
        ids = getattr(conversion, key)
        bad = [i for i in ids if not 0 <= i < dims.n_vocab]
        if bad:
            raise CheckpointError(
                f"{tokenizer_path}: {key} has id {bad[0]} outside the {dims.n_vocab}-token vocabulary"
            )
        cfg[key] = list(ids)
    for layer, head in conversion.alignment_heads:
        if not (0 <= layer < dims.n_text_layer and 0 <= head < dims.n_text_head):
            raise CheckpointError(
                f"alignment head [{layer}, {head}] is outside the decoder's "
                f"{dims.n_text_layer} layers x {dims.n_text_head} heads"
            )
    if model is not None:
        alignment_heads.check_model(model)
    if conversion.alignment_heads:  # a checkpoint's own heads always win
        heads, heads_source = [list(h) for h in conversion.alignment_heads], alignment_heads.SOURCE_CHECKPOINT
    else:
        heads, heads_source, heads_notes = alignment_heads.select(dims, model)
        notes += heads_notes
    cfg["alignment_heads"] = heads
    cfg["alignment_heads_source"] = heads_source
    notes.append(f"alignment heads ({len(heads)}) from {heads_source}")
    if conversion.source_lang_ids is not None:
        ours = sorted(specials["language_ids"].values())
        theirs = sorted(conversion.source_lang_ids)
        if ours != theirs:
            notes.append(
                f"the source config lists {len(theirs)} language ids ({_span(theirs)}) but "
                f"tokenizer.json has {len(ours)} language tokens ({_span(ours)}); language_ids "
                "follow tokenizer.json"
            )
    return cfg, notes


def _span(ids: list[int]) -> str:
    return f"{ids[0]}..{ids[-1]}" if ids else "none"
