"""The canonical tensor set every source is converted into, and the plan/audit bookkeeping.

Canonical names are Hugging Face `WhisperForConditionalGeneration` names (`model.encoder...`,
`model.decoder...`), all float32, in a fixed order (encoder stem, encoder blocks, decoder
embeddings, decoder blocks). Two deliberate differences from a Hugging Face state dict:
  * every attention has a `k_proj.bias`, synthesized as zeros: Whisper's key projection has no
    bias, and giving all four projections the same shape keeps the compiler free of special
    cases (a key bias shifts every score of a query by the same amount, so zeros are exact);
  * there is no `proj_out.weight`: Whisper ties the output projection to `embed_tokens`.

A converter produces a `Conversion`: the ordered `PlannedTensor`s (each knows how to load its
float32 data on demand, so packing streams one tensor at a time), plus a `Ledger` that accounts
for every source entry (used, or ignored with a reason) for the audit.
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import asdict, dataclass, field

import numpy as np

from ckw.checkpoints.errors import CheckpointError

DIM_KEYS = (
    "n_mels",
    "n_audio_ctx",
    "n_audio_state",
    "n_audio_head",
    "n_audio_layer",
    "n_vocab",
    "n_text_ctx",
    "n_text_state",
    "n_text_head",
    "n_text_layer",
)

KEY_BIAS_REASON = (
    "Whisper's key projection has no bias; a zero bias is exact (it shifts all scores of a "
    "query equally) and gives every attention projection the same shape"
)


@dataclass(frozen=True)
class ModelDims:
    """openai-whisper's ModelDimensions, same keys."""

    n_mels: int
    n_audio_ctx: int
    n_audio_state: int
    n_audio_head: int
    n_audio_layer: int
    n_vocab: int
    n_text_ctx: int
    n_text_state: int
    n_text_head: int
    n_text_layer: int

    def to_dict(self) -> dict:
        return asdict(self)

    def validate(self, where: str) -> None:
        for key in DIM_KEYS:
            value = getattr(self, key)
            if not isinstance(value, int) or value <= 0:
                raise CheckpointError(f"{where}: dimension {key} = {value!r} must be a positive integer")
        if self.n_audio_state != self.n_text_state:
            raise CheckpointError(
                f"{where}: encoder width {self.n_audio_state} differs from decoder width "
                f"{self.n_text_state}; Whisper's cross-attention needs them equal"
            )
        for state, head, side in (
            (self.n_audio_state, self.n_audio_head, "encoder"),
            (self.n_text_state, self.n_text_head, "decoder"),
        ):
            if state % head:
                raise CheckpointError(
                    f"{where}: {side} width {state} is not divisible by its {head} heads; "
                    "the checkpoint's dimensions are inconsistent"
                )


def attention_names(prefix: str) -> list[str]:
    return [
        f"{prefix}.{proj}.{kind}" for proj in ("q_proj", "k_proj", "v_proj", "out_proj") for kind in ("weight", "bias")
    ]


def canonical_tensors(dims: ModelDims) -> list[tuple[str, tuple[int, ...]]]:
    """Every canonical tensor with its shape, in packing order."""
    out: list[tuple[str, tuple[int, ...]]] = []
    d = dims.n_audio_state

    def attention(prefix: str, width: int) -> None:
        for name in attention_names(prefix):
            out.append((name, (width, width) if name.endswith("weight") else (width,)))

    def norm(prefix: str, width: int) -> None:
        out.append((f"{prefix}.weight", (width,)))
        out.append((f"{prefix}.bias", (width,)))

    def mlp(prefix: str, width: int) -> None:
        out.append((f"{prefix}.fc1.weight", (4 * width, width)))
        out.append((f"{prefix}.fc1.bias", (4 * width,)))
        out.append((f"{prefix}.fc2.weight", (width, 4 * width)))
        out.append((f"{prefix}.fc2.bias", (width,)))

    out.append(("model.encoder.conv1.weight", (d, dims.n_mels, 3)))
    out.append(("model.encoder.conv1.bias", (d,)))
    out.append(("model.encoder.conv2.weight", (d, d, 3)))
    out.append(("model.encoder.conv2.bias", (d,)))
    out.append(("model.encoder.embed_positions.weight", (dims.n_audio_ctx, d)))
    for i in range(dims.n_audio_layer):
        p = f"model.encoder.layers.{i}"
        attention(f"{p}.self_attn", d)
        norm(f"{p}.self_attn_layer_norm", d)
        mlp(p, d)
        norm(f"{p}.final_layer_norm", d)
    norm("model.encoder.layer_norm", d)

    t = dims.n_text_state
    out.append(("model.decoder.embed_tokens.weight", (dims.n_vocab, t)))
    out.append(("model.decoder.embed_positions.weight", (dims.n_text_ctx, t)))
    for i in range(dims.n_text_layer):
        p = f"model.decoder.layers.{i}"
        attention(f"{p}.self_attn", t)
        norm(f"{p}.self_attn_layer_norm", t)
        attention(f"{p}.encoder_attn", t)
        norm(f"{p}.encoder_attn_layer_norm", t)
        mlp(p, t)
        norm(f"{p}.final_layer_norm", t)
    norm("model.decoder.layer_norm", t)
    return out


def is_key_bias(name: str) -> bool:
    return name.endswith(".k_proj.bias")


_CHUNK = 1 << 20


def widen_to_f32(raw: bytes, dtype: str, shape: tuple[int, ...], what: str) -> np.ndarray:
    """Source bytes -> float32, proving the widening exact by narrowing back bit for bit."""
    if dtype == "float32":
        out = np.frombuffer(raw, dtype="<f4").reshape(shape).copy()
    elif dtype == "float16":
        src = np.frombuffer(raw, dtype="<f2")
        out = np.empty(src.shape, dtype="<f4")
        # In chunks, so the checks' temporaries stay small next to a 100 MB embedding.
        for i in range(0, src.size, _CHUNK):
            s, o = src[i : i + _CHUNK], out[i : i + _CHUNK]
            o[...] = s
            # Every float16 is a float32; the round trip checks the claim on the actual bits.
            if not np.array_equal(o.astype("<f2").view("<u2"), s.view("<u2")):
                raise CheckpointError(f"{what}: float16 -> float32 is not bit-exact (NaN payload?)")
        out = out.reshape(shape)
    elif dtype == "bfloat16":
        bits = np.frombuffer(raw, dtype="<u2")
        out = (bits.astype("<u4") << 16).view("<f4").reshape(shape)
    else:
        raise CheckpointError(
            f"{what}: stored as {dtype}; only float32, float16 and bfloat16 convert exactly "
            "(re-convert a quantized model without quantization)"
        )
    if not all(np.isfinite(out.reshape(-1)[i : i + _CHUNK]).all() for i in range(0, out.size, _CHUNK)):
        raise CheckpointError(f"{what}: contains NaN or Inf; the checkpoint is corrupt")
    return out


@dataclass
class PlannedTensor:
    """One canonical tensor: its name, shape, where it comes from and how to load it."""

    name: str
    shape: tuple[int, ...]
    origin: str  # human-readable provenance for the audit, e.g. "model.bin:x/weight rows 0:384"
    load: Callable[[], np.ndarray] = field(repr=False)  # -> float32 array of `shape`
    synthesized: str | None = None  # the reason, when the tensor is not in the source


def zeros(name: str, shape: tuple[int, ...], reason: str) -> PlannedTensor:
    """A synthesized all-zero tensor (the canonical key bias)."""
    return PlannedTensor(name, shape, "synthesized zeros", lambda: np.zeros(shape, "<f4"), synthesized=reason)


@dataclass
class SourceEntry:
    name: str
    dtype: str
    shape: tuple[int, ...]
    alias_of: str | None = None
    disposition: str | None = None  # "used" | "ignored"
    targets: list[str] = field(default_factory=list)
    reason: str | None = None


class Ledger:
    """Accounts for every entry of the source checkpoint; nothing may be left unexplained."""

    def __init__(self, source_label: str):
        self.source_label = source_label
        self.entries: dict[str, SourceEntry] = {}

    def add(self, name: str, dtype: str, shape: tuple[int, ...], alias_of: str | None = None) -> None:
        self.entries[name] = SourceEntry(name, dtype, tuple(shape), alias_of)

    def use(self, name: str, target: str | None = None, reason: str | None = None) -> None:
        e = self.entries[name]
        if e.disposition == "ignored":
            raise AssertionError(f"{name} both used and ignored")
        e.disposition = "used"
        if target and target not in e.targets:
            e.targets.append(target)
        if reason and not e.reason:
            e.reason = reason

    def ignore(self, name: str, reason: str) -> None:
        e = self.entries[name]
        if e.disposition == "used":
            raise AssertionError(f"{name} both used and ignored")
        e.disposition = "ignored"
        e.reason = reason

    def require_complete(self, hint: str) -> None:
        for e in self.entries.values():
            if e.disposition is None:
                raise CheckpointError(
                    f"{self.source_label}: unknown tensor '{e.name}' {e.dtype} {list(e.shape)}: "
                    f"the converter cannot account for it; {hint}"
                )


@dataclass
class Conversion:
    """What a converter hands to the packer."""

    dims: ModelDims
    tensors: list[PlannedTensor]
    ledger: Ledger
    checks: list[tuple[str, Callable[[], None]]]  # run before anything is written
    suppress_tokens: list[int]
    begin_suppress_tokens: list[int]
    alignment_heads: list[list[int]]
    source_lang_ids: list[int] | None  # language ids the source config lists, for cross-checking
    source_format: str  # e.g. "CTranslate2 WhisperSpec rev 3, float16"
    notes: list[str] = field(default_factory=list)
    # The tokenizer kind (tokenizer_kinds.py) when the checkpoint has no tokenizer of its own
    tokenizer_kind: str | None = None


def check_plan_against_canonical(tensors: list[PlannedTensor], dims: ModelDims, where: str) -> None:
    """The plan must be exactly the canonical list (names, order, shapes)."""
    want = canonical_tensors(dims)
    got = [(t.name, tuple(t.shape)) for t in tensors]
    if got != want:
        missing = [n for n, _ in want if n not in {g for g, _ in got}]
        raise CheckpointError(
            f"{where}: internal error: planned tensors differ from the canonical set (first missing: {missing[:1]})"
        )
