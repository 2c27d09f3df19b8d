"""Writes a packed checkpoint of a published model's exact layout (layout.py) holding seeded random
weights scaled like trained ones, for parity tests of sizes whose real weights this build cannot
download: the same values load into our libraries and into openai-whisper's own model.

    seeded --model small --out_dir DIR [--seed 0] [--layers ENCODER,DECODER] [--storage f32]

Scales (standard deviations, values then rounded to float16 as published weights are, unless
the storage is f32: float32 values as a checkpoint trained in float32 has them): linear
and conv weights 1/sqrt(fan_in), so every projection keeps its input's scale; biases 0.02; the
key biases zero (Whisper has none); norm gains 1 +- 0.1, offsets 0.02; the token embedding 0.02
(logits of about unit scale); the decoder's positions 0.01; the encoder's positions the sinusoids
openai-whisper computes. The checkpoint packs to layout.layout(dims, storage) exactly.
"""

from __future__ import annotations

import argparse
import os
import sys

import numpy as np

from ckw.checkpoints import layout, pack, storage
from ckw.checkpoints.canonical import canonical_tensors, is_key_bias
from ckw.checkpoints.synthetic import tokenizer_json


def sinusoids(length: int, channels: int, max_timescale: float = 10000.0) -> np.ndarray:
    """openai-whisper's encoder positions (whisper/model.py sinusoids), in float32."""
    increment = np.log(max_timescale) / (channels // 2 - 1)
    inv_timescales = np.exp(-increment * np.arange(channels // 2, dtype=np.float32))
    scaled = np.arange(length, dtype=np.float32)[:, None] * inv_timescales[None, :]
    return np.concatenate([np.sin(scaled), np.cos(scaled)], axis=1).astype(np.float32)


def seeded_value(name: str, shape: tuple[int, ...], rng: np.random.Generator, kind: str = "f16") -> np.ndarray:
    """The seeded float32 tensor `name` of `shape` (module docstring: the scales), float16 values
    unless storage `kind` is "f32"."""
    if name == "model.encoder.embed_positions.weight":
        return sinusoids(*shape)
    if is_key_bias(name):
        return np.zeros(shape, np.float32)
    if name.endswith("layer_norm.weight"):
        values = 1.0 + 0.1 * rng.standard_normal(shape)
    elif name.endswith(".bias"):
        values = 0.02 * rng.standard_normal(shape)
    elif name == "model.decoder.embed_tokens.weight":
        values = 0.02 * rng.standard_normal(shape)
    elif name == "model.decoder.embed_positions.weight":
        values = 0.01 * rng.standard_normal(shape)
    else:  # linear [out, in] and conv [out, in, k] weights
        values = rng.standard_normal(shape) / np.sqrt(np.prod(shape[1:]))
    if kind == "f32":
        return values.astype(np.float32)
    return values.astype(np.float16).astype(np.float32)


def write_seeded(name: str, out_dir: str, seed: int = 0, layers: str = "", kind: str = "f16") -> dict:
    """Writes weights.bin, manifest.json, model_config.json and tokenizer.json (a placeholder: no
    text is decoded) of the seeded `name` (at `layers`, layout.model_dims) into `out_dir`; returns
    the manifest."""
    dims = layout.model_dims(name, layers)
    rng = np.random.default_rng(seed)
    stored = (
        (n, *storage.stored_as(n, seeded_value(n, shape, rng, kind), kind)) for n, shape in canonical_tensors(dims)
    )
    with pack.staged(out_dir) as tmp:
        entries, nbytes, weights_sha = pack.write_weights(stored, os.path.join(tmp, "weights.bin"))
        manifest = pack.manifest_for(entries, nbytes, weights_sha, f"{name} (seeded {seed})")
        config = {
            **dims.to_dict(),
            "variant": manifest["variant"],
            "alignment_heads": [],
            "manifest_sha256": manifest["manifest_sha256"],
        }
        pack.dump(os.path.join(tmp, "model_config.json"), config)
        pack.dump(os.path.join(tmp, "tokenizer.json"), tokenizer_json())
        pack.dump(os.path.join(tmp, "audit.json"), {"seeded": {"model": name, "seed": seed}})
        pack.dump(os.path.join(tmp, "manifest.json"), manifest)
    return manifest


def main(argv=None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n", maxsplit=1)[0])
    parser.add_argument("--model", required=True, choices=sorted(layout.STANDARD), help="the published model")
    parser.add_argument("--out_dir", required=True)
    parser.add_argument("--seed", type=int, default=0)
    parser.add_argument("--layers", default="", help="ENCODER,DECODER layer counts (default: the model's)")
    parser.add_argument("--storage", default="f16", choices=storage.STORAGES, help="f16: float16 values (default)")
    args = parser.parse_args(argv)
    try:
        write_seeded(args.model, args.out_dir, args.seed, args.layers, args.storage)
    except ValueError as e:
        parser.error(str(e))
    return 0


if __name__ == "__main__":
    sys.exit(main())
