"""A synthetic checkpoint for any circuits: every weight they name, random f32, packed 64-byte
aligned with a manifest in the checkpoint format (tensors + manifest_sha256)."""

import hashlib
import json
import os

import numpy as np

from tools.codegen import expr, graph, load


def weight_shapes(circuit_paths, config_path):
    shapes = {}
    config = load.load_config(config_path)
    for path in circuit_paths:
        g = graph.build(load.load_circuit(path), config)
        for op in g.ops:
            for w in op.weights.values():
                shapes[w.tensor] = [expr.evaluate(d, g.dims, w.tensor) for d in w.shape]
    return shapes


def write_checkpoint(out_dir, circuit_paths, config_path, seed=0, scale=0.2):
    """Writes weights.bin and manifest.json into out_dir; returns the manifest dict."""
    rng = np.random.default_rng(seed)
    entries, offset = [], 0
    os.makedirs(out_dir, exist_ok=True)
    with open(os.path.join(out_dir, "weights.bin"), "wb") as f:
        for name, shape in sorted(weight_shapes(circuit_paths, config_path).items()):
            data = (rng.standard_normal(shape) * scale).astype("<f4").tobytes()
            pad = -offset % 64
            f.write(b"\0" * pad)
            offset += pad
            f.write(data)
            entries.append({"name": name, "dtype": "f32", "shape": shape, "offset": offset, "nbytes": len(data),
                            "sha256": hashlib.sha256(data).hexdigest()})
            offset += len(data)
    digest = hashlib.sha256(json.dumps(entries, sort_keys=True, separators=(",", ":")).encode()).hexdigest()
    manifest = {"tensors": entries, "manifest_sha256": digest, "weights_nbytes": offset}
    with open(os.path.join(out_dir, "manifest.json"), "w") as f:
        json.dump(manifest, f, indent=2, sort_keys=True)
    return manifest
