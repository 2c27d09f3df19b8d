"""The packed layout of a Whisper model from its dimensions alone: what its libraries are built for.

A published checkpoint (float16 weights) packs to one layout that its dimensions decide: the
canonical tensors in packing order (canonical.py), stored as f16 where storage.py's candidates
are (exact for published weights) and f32 elsewhere, each at the next multiple of ALIGNMENT
(pack.write_weights). So the layout_sha256 of every published checkpoint of a size, and of its
fine-tunes, is `layout_sha256(dims)`: a size's libraries can be generated before any of its
checkpoints exists, and serve each of them. A checkpoint whose candidates float16 cannot hold
(trained in float32) packs those as f32: another layout, refused by the f16-storage libraries.

STANDARD holds openai-whisper's dimensions of each published model (its ModelDimensions).
"""

from __future__ import annotations

import argparse
import json
import os
import sys

import numpy as np

from ckw.checkpoints import storage
from ckw.checkpoints.canonical import ModelDims, canonical_tensors
from ckw.checkpoints.packed import ALIGNMENT, DTYPE_STORAGE, FORMAT, LAYOUT_RULE, layout_digest


def _dims(n_mels, n_vocab, state, heads, audio_layers, text_layers) -> ModelDims:
    return ModelDims(
        n_mels=n_mels,
        n_audio_ctx=1500,
        n_audio_state=state,
        n_audio_head=heads,
        n_audio_layer=audio_layers,
        n_vocab=n_vocab,
        n_text_ctx=448,
        n_text_state=state,
        n_text_head=heads,
        n_text_layer=text_layers,
    )


# Vocabulary sizes: English-only, multilingual, and large-v3's (one more language token).
_EN, _MULTI, _V3 = 51864, 51865, 51866
STANDARD = {
    "tiny.en": _dims(80, _EN, 384, 6, 4, 4),
    "tiny": _dims(80, _MULTI, 384, 6, 4, 4),
    "base.en": _dims(80, _EN, 512, 8, 6, 6),
    "base": _dims(80, _MULTI, 512, 8, 6, 6),
    "small.en": _dims(80, _EN, 768, 12, 12, 12),
    "small": _dims(80, _MULTI, 768, 12, 12, 12),
    "medium.en": _dims(80, _EN, 1024, 16, 24, 24),
    "medium": _dims(80, _MULTI, 1024, 16, 24, 24),
    "large-v1": _dims(80, _MULTI, 1280, 20, 32, 32),
    "large-v2": _dims(80, _MULTI, 1280, 20, 32, 32),
    "large-v3": _dims(128, _V3, 1280, 20, 32, 32),
    "large-v3-turbo": _dims(128, _V3, 1280, 20, 32, 4),
    "distil-large-v3": _dims(128, _V3, 1280, 20, 32, 2),
}


def layout(dims: ModelDims, kind: str = "f16") -> tuple[list[dict], int]:
    """(manifest entries with the layout keys name, dtype, shape, offset, nbytes; weights file
    size) of a checkpoint of `dims` packed with storage `kind` (storage.STORAGES; "f16": a
    published checkpoint)."""
    dims.validate("layout")
    entries, offset = [], 0
    for name, shape in canonical_tensors(dims):
        dtype = storage.dtype_for(name, kind)
        offset += -offset % ALIGNMENT
        nbytes = int(np.prod(shape)) * np.dtype(DTYPE_STORAGE[dtype]).itemsize
        entries.append({"name": name, "dtype": dtype, "shape": list(shape), "offset": offset, "nbytes": nbytes})
        offset += nbytes
    return entries, offset


def layout_sha256(dims: ModelDims, kind: str = "f16") -> str:
    """The manifest's layout_sha256 of every checkpoint of `dims` packed with storage `kind`
    (packed.LAYOUT_RULE)."""
    return layout_digest(*layout(dims, kind))


def model_dims(name: str, layers: str = "") -> ModelDims:
    """The dimensions of the published model `name`, or of it at other depths: `layers` "E,D" gives
    E encoder and D decoder layers at the model's real widths (tests of large sizes)."""
    dims = STANDARD[name]
    if not layers:
        return dims
    try:
        audio, text = (int(n) for n in layers.split(","))
    except ValueError:
        raise ValueError(f"--layers {layers!r}: expected ENCODER,DECODER layer counts, e.g. 2,2") from None
    return ModelDims(**{**dims.to_dict(), "n_audio_layer": audio, "n_text_layer": text})


def write_layout_files(name: str, out_dir: str, layers: str = "", kind: str = "f16") -> None:
    """`out_dir`/model_config.json (the dimensions) and `out_dir`/manifest.json (the layout, no
    weights: format, alignment, weights_nbytes, the tensors' layout keys, layout_sha256) of the
    published model `name` (at `layers`, model_dims) with storage `kind`: what the compiler builds
    its libraries from."""
    dims = model_dims(name, layers)
    entries, nbytes = layout(dims, kind)
    manifest = {
        "format": FORMAT,
        "variant": name,
        "alignment": ALIGNMENT,
        "byte_order": "little",
        "weights_file": "weights.bin",
        "weights_nbytes": nbytes,
        "tensors": entries,
        "layout_sha256": layout_digest(entries, nbytes),
        "layout_sha256_covers": LAYOUT_RULE,
    }
    os.makedirs(out_dir, exist_ok=True)
    config = {"model": name, "storage": kind, **dims.to_dict()}
    for file_name, doc in (("model_config.json", config), ("manifest.json", manifest)):
        with open(os.path.join(out_dir, file_name), "w", encoding="utf-8") as f:
            json.dump(doc, f, indent=2, sort_keys=True, ensure_ascii=True)
            f.write("\n")


def main(argv=None) -> int:
    parser = argparse.ArgumentParser(
        description="Writes a published Whisper model's layout (model_config.json, "
        "manifest.json without weights) for the compiler."
    )
    parser.add_argument("--model", required=True, choices=sorted(STANDARD), help="the published model")
    parser.add_argument("--layers", default="", help="ENCODER,DECODER layer counts (default: the model's)")
    parser.add_argument(
        "--storage",
        default="f16",
        choices=storage.STORAGES,
        help="f16: published checkpoints (default); f32: every tensor float32",
    )
    parser.add_argument("--out_dir", required=True, help="directory to write the two files into")
    args = parser.parse_args(argv)
    try:
        write_layout_files(args.model, args.out_dir, args.layers, args.storage)
    except ValueError as e:
        parser.error(str(e))
    return 0


if __name__ == "__main__":
    sys.exit(main())
