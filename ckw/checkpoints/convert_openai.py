"""openai-whisper `.pt` checkpoint -> canonical Hugging Face-named float32 tensors.

openai-whisper saves `{"dims": ModelDimensions.__dict__, "model_state_dict": Whisper.state_dict()}`
with torch.save (read here by pt_zip_reader, without torch). Shapes are the canonical ones;
only the names differ (`encoder.blocks.0.attn.query.weight` for
`model.encoder.layers.0.self_attn.q_proj.weight`), and the key projection has no bias, so the
canonical `k_proj.bias` is synthesized as zeros. The file has no tokenizer and no decoding
config: the tokenizer is the one of its kind (tokenizer_kinds.py), the suppress lists are
openai-whisper's defaults derived from it, and the alignment heads are left empty (the file does
not carry them).
"""

from __future__ import annotations

import re

import tokenizers

from ckw.checkpoints import canonical
from ckw.checkpoints.canonical import (
    DIM_KEYS,
    KEY_BIAS_REASON,
    Conversion,
    Ledger,
    ModelDims,
    PlannedTensor,
    widen_to_f32,
)
from ckw.checkpoints.errors import CheckpointError
from ckw.checkpoints.model_config import load_tokenizer, special_tokens
from ckw.checkpoints.non_speech import non_speech_tokens
from ckw.checkpoints.pt_zip_reader import TorchTensor, TorchZipCheckpoint
from ckw.checkpoints.tokenizer_kinds import kind_for_n_vocab, tokenizer_path

# Canonical (Hugging Face) name fragments -> openai-whisper, applied in order. The one table of
# the correspondence: the converter inverts it over the canonical names of the model's dims.
_RULES = [
    (r"^model\.encoder\.embed_positions\.weight$", "encoder.positional_embedding"),
    (r"^model\.decoder\.embed_positions\.weight$", "decoder.positional_embedding"),
    (r"^model\.decoder\.embed_tokens\.weight$", "decoder.token_embedding.weight"),
    (r"^model\.encoder\.layer_norm\.", "encoder.ln_post."),
    (r"^model\.decoder\.layer_norm\.", "decoder.ln."),
    (r"^model\.(encoder|decoder)\.layers\.(\d+)\.", r"\1.blocks.\2."),
    (r"^model\.encoder\.conv", "encoder.conv"),
    (r"\.self_attn_layer_norm\.", ".attn_ln."),
    (r"\.encoder_attn_layer_norm\.", ".cross_attn_ln."),
    (r"\.final_layer_norm\.", ".mlp_ln."),
    (r"\.self_attn\.", ".attn."),
    (r"\.encoder_attn\.", ".cross_attn."),
    (r"\.q_proj\.", ".query."),
    (r"\.k_proj\.", ".key."),
    (r"\.v_proj\.", ".value."),
    (r"\.out_proj\.", ".out."),
    (r"\.fc1\.", ".mlp.0."),
    (r"\.fc2\.", ".mlp.2."),
]


def canonical_to_openai(name: str) -> str | None:
    """openai-whisper state-dict key for a canonical name; None for the synthesized key bias,
    which openai-whisper does not have (its key projection is bias-free)."""
    if canonical.is_key_bias(name):
        return None
    out = name
    for pattern, repl in _RULES:
        out = re.sub(pattern, repl, out)
    return out


def _dims(doc: object, where: str) -> ModelDims:
    if not isinstance(doc, dict):
        raise CheckpointError(
            f"{where}: 'dims' is a {type(doc).__name__}, expected openai-whisper's ModelDimensions "
            "dict; re-save the checkpoint as openai-whisper does"
        )
    missing = [k for k in DIM_KEYS if k not in doc]
    if missing:
        raise CheckpointError(
            f"{where}: 'dims' lacks '{missing[0]}'; re-save the checkpoint as openai-whisper does "
            "(dims = ModelDimensions.__dict__)"
        )
    for key in DIM_KEYS:
        if type(doc[key]) is not int:  # bool is an int subclass, and a float would hide a bad export
            raise CheckpointError(f"{where}: dims '{key}' = {doc[key]!r} is not an integer; the checkpoint is corrupt")
    dims = ModelDims(**{k: doc[k] for k in DIM_KEYS})
    dims.validate(where)
    return dims


def convert_openai(ckpt: TorchZipCheckpoint) -> Conversion:
    """Plan the conversion of an open openai-whisper checkpoint; its tokenizer is its kind's."""
    where = ckpt.path
    top = ckpt.load()
    hint = (
        "openai-whisper saves {'dims': ..., 'model_state_dict': ...}; give such a .pt, or a Hugging Face or "
        "CTranslate2 directory"
    )
    if not isinstance(top, dict):
        raise CheckpointError(f"{where}: holds a {type(top).__name__}, not a dict; {hint}")
    for key in ("dims", "model_state_dict"):
        if key not in top:
            raise CheckpointError(f"{where}: no '{key}' entry (has {sorted(map(str, top))[:4]}); {hint}")
    dims = _dims(top["dims"], where)
    state = top["model_state_dict"]
    if not isinstance(state, dict):
        raise CheckpointError(f"{where}: 'model_state_dict' is a {type(state).__name__}, not a dict; {hint}")

    ledger = Ledger(where)
    for name, t in state.items():
        if not isinstance(t, TorchTensor):
            raise CheckpointError(f"{where}: state-dict entry '{name}' is a {type(t).__name__}, not a tensor; {hint}")
        ledger.add(name, t.dtype, t.shape)

    tensors: list[PlannedTensor] = []
    for name, shape in canonical.canonical_tensors(dims):
        key = canonical_to_openai(name)
        if key is None:
            tensors.append(canonical.zeros(name, shape, KEY_BIAS_REASON))
            continue
        t = state.get(key)
        if t is None:
            raise CheckpointError(f"{where}: missing tensor '{key}' (for {name}); the checkpoint is incomplete")
        if t.shape != shape:
            raise CheckpointError(
                f"{where}: wrong shape: tensor '{key}' is {list(t.shape)}, expected {list(shape)} from its 'dims'"
            )
        ledger.use(key, name)
        what = f"{where}: tensor '{key}'"
        tensors.append(
            PlannedTensor(
                name,
                shape,
                f"{where}:{key}",
                lambda t=t, shape=shape, what=what: widen_to_f32(ckpt.read_bytes(t, what), t.dtype, shape, what),
            )
        )
    canonical.check_plan_against_canonical(tensors, dims, where)
    ledger.require_complete("it is not a tensor of openai-whisper's Whisper model")

    kind = kind_for_n_vocab(dims.n_vocab, where)
    suppress, begin = _default_suppress(tokenizer_path(kind), dims.n_vocab)
    notes = [f"{where} carries no alignment heads; word timestamps need them from elsewhere"]
    notes += [
        f"top-level entry '{k}' of {where} ignored: not part of openai-whisper's checkpoint"
        for k in top
        if k not in ("dims", "model_state_dict")
    ]
    stored = sorted({t.dtype for t in state.values()})
    return Conversion(
        dims=dims,
        tensors=tensors,
        ledger=ledger,
        checks=[],  # widen_to_f32 proves each tensor exact as it loads; the file has no fused or tied parts
        suppress_tokens=suppress,
        begin_suppress_tokens=begin,
        alignment_heads=[],
        source_lang_ids=None,
        source_format=f"openai-whisper PyTorch checkpoint, {'/'.join(stored)}",
        notes=notes,
        tokenizer_kind=kind,
    )


def _default_suppress(path: str, n_vocab: int) -> tuple[list[int], list[int]]:
    """openai-whisper's defaults: `suppress_tokens="-1"` (non-speech symbols and the task and
    control tokens) and SuppressBlank's (" " and <|endoftext|>)."""
    ids = special_tokens(load_tokenizer(path), n_vocab, path)
    tok = tokenizers.Tokenizer.from_file(path)

    def encode(text: str) -> list[int]:
        return tok.encode(text, add_special_tokens=False).ids

    controls = {ids[k] for k in ("transcribe", "translate", "sot", "sot_prev", "sot_lm", "no_speech")}
    return sorted(set(non_speech_tokens(encode)) | controls), encode(" ") + [ids["eot"]]
