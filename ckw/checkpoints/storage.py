"""Which tensors of the fp32 checkpoint are stored as f16, and only where that is exact.

Whisper's weights were trained and published in float16, so the float32 values a conversion
produces are float16 values widened. The GEMM weights and the token embedding (also the logits'
weight) are what every encoder GEMM and every decode step reads: stored as f16 they cost half the
bytes, and the kernels that read them (kernels/gemm/f16w_gemm_nt*, kernels/embedding/
f16_embedding_positions) widen each value back exactly, so the fp32 build computes on the very
same numbers and gives the same bits. A tensor is narrowed only if every value survives the
round trip float32 -> float16 -> float32 bit for bit (NaN and -0 included); any other tensor
stays f32 and its kernels are the f32 ones. The compiler picks the kernels from the manifest's
dtypes, so nothing else needs to know.

A checkpoint packs with one of two STORAGES, so that its layout is one a library can be built
for ahead of time (layout.py): "f16", every candidate in float16 (published checkpoints, and
fine-tunes trained in float16); or "f32", every tensor float32 (a checkpoint trained in float32,
which float16 cannot hold: the first inexact candidate moves the whole checkpoint to f32).
"""

from __future__ import annotations

import fnmatch

import numpy as np

# fnmatch globs over tensor names (`*` also crosses dots).
F16_CANDIDATES = (
    "model.encoder.layers.*.self_attn.*_proj.weight",
    "model.encoder.layers.*.fc1.weight",
    "model.encoder.layers.*.fc2.weight",
    "model.decoder.layers.*.self_attn.*_proj.weight",
    "model.decoder.layers.*.encoder_attn.*_proj.weight",
    "model.decoder.layers.*.fc1.weight",
    "model.decoder.layers.*.fc2.weight",
    "model.decoder.embed_tokens.weight",
)


def f16_exact(arr: np.ndarray) -> np.ndarray | None:
    """`arr` (float32) as float16 when every value round-trips bit for bit, else None."""
    a = np.ascontiguousarray(arr, dtype="<f4")
    narrow = a.astype("<f2")
    if np.array_equal(narrow.astype("<f4").view("<u4"), a.view("<u4")):
        return narrow
    return None


def is_f16_candidate(name: str) -> bool:
    """Whether tensor `name` is stored as f16 when f16 holds it exactly (F16_CANDIDATES)."""
    return any(fnmatch.fnmatchcase(name, p) for p in F16_CANDIDATES)


STORAGES = ("f16", "f32")


class NotF16Exact(ValueError):
    """A candidate tensor that float16 cannot hold, met while packing with "f16" storage."""

    def __init__(self, name: str):
        super().__init__(f"tensor '{name}' has values float16 cannot hold exactly")
        self.name = name


def dtype_for(name: str, storage: str) -> str:
    """The manifest dtype of tensor `name` in a checkpoint packed with `storage` (STORAGES)."""
    if storage not in STORAGES:
        raise ValueError(f"storage {storage!r}: use one of {', '.join(STORAGES)}")
    return "f16" if storage == "f16" and is_f16_candidate(name) else "f32"


def stored_as(name: str, arr: np.ndarray, storage: str) -> tuple[str, np.ndarray]:
    """(manifest dtype, data) of tensor `name` with `storage`; NotF16Exact for an "f16" candidate
    that float16 cannot hold."""
    if dtype_for(name, storage) == "f32":
        return "f32", arr
    narrow = f16_exact(arr)
    if narrow is None:
        raise NotF16Exact(name)
    return "f16", narrow


def stored(name: str, arr: np.ndarray) -> tuple[str, np.ndarray]:
    """(manifest dtype, data) for tensor `name` of the fp32 checkpoint: f16 if it is a candidate
    and f16 holds it exactly, else f32 as it is."""
    if is_f16_candidate(name):
        narrow = f16_exact(arr)
        if narrow is not None:
            return "f16", narrow
    return "f32", arr
