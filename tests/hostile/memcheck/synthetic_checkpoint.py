"""Writes a packed checkpoint (ckw/checkpoints/packed.py) for a synthetic model: every
weight the given circuits read at the config's dims, seeded random values that float16 holds
exactly, stored as the real packer stores them (f16 where storage.py narrows a tensor of a real
checkpoint, f32 elsewhere), so the compiler picks the real models' kernels; the precision policies
(//ckw/checkpoints/precision:derive) apply to it as to a converted checkpoint.

    synthetic_checkpoint --config CONFIG.json --circuit ENCODER.json --circuit DECODER.json --out_dir DIR

Writes weights.bin, manifest.json, model_config.json (the config's dims and the manifest's
digest) and tokenizer.json (a placeholder: the drivers decode no text).
"""

import argparse
import json
import os

import numpy as np

from ckw.checkpoints import pack, storage
from ckw.checkpoints.synthetic import tokenizer_json
from tools.codegen.testing.synthetic import weight_shapes

SCALE = 0.2  # standard deviation of the weights (every norm keeps the activations in range)


def tensors(shapes: dict, seed: int):
    rng = np.random.default_rng(seed)
    for name, shape in sorted(shapes.items()):
        values = (rng.standard_normal(shape) * SCALE).astype("<f2").astype("<f4")
        yield (name, *storage.stored(name, values))


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n", maxsplit=1)[0])
    parser.add_argument("--config", required=True, help="model dims (JSON)")
    parser.add_argument("--circuit", action="append", required=True, help="a circuit JSON (repeat for each part)")
    parser.add_argument("--variant", default="synthetic", help="the manifest's variant")
    parser.add_argument("--out_dir", required=True)
    parser.add_argument("--seed", type=int, default=0)
    args = parser.parse_args()
    os.makedirs(args.out_dir, exist_ok=True)
    shapes = weight_shapes(args.circuit, args.config)
    entries, nbytes, weights_sha = pack.write_weights(
        tensors(shapes, args.seed), os.path.join(args.out_dir, "weights.bin")
    )
    manifest = pack.manifest_for(entries, nbytes, weights_sha, args.variant)
    with open(args.config, encoding="utf-8") as f:
        config = dict(json.load(f), variant=args.variant, manifest_sha256=manifest["manifest_sha256"])
    pack.dump(os.path.join(args.out_dir, "model_config.json"), config)
    pack.dump(os.path.join(args.out_dir, "tokenizer.json"), tokenizer_json())
    pack.dump(os.path.join(args.out_dir, "manifest.json"), manifest)


if __name__ == "__main__":
    main()
