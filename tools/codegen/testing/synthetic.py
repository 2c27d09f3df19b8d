"""A synthetic checkpoint for any circuits: every weight they name, random f32, packed 64-byte
aligned with a manifest in the checkpoint format (tensors, layout_sha256, manifest_sha256).

`write_manifest` writes the manifest alone (no weights file; per-tensor hashes are zero
placeholders): enough for the compiler to lower real-sized models (tiny, base) without writing
hundreds of megabytes."""

import hashlib
import json
import os

import numpy as np
import xxhash

from ckw.checkpoints.packed import layout_digest
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


def _layout(shapes):
    """(name, shape, offset, nbytes) of every tensor, sorted by name, 64-byte aligned."""
    offset = 0
    for name, shape in sorted(shapes.items()):
        offset += -offset % 64
        nbytes = 4 * int(np.prod(shape, dtype=np.int64))
        yield name, shape, offset, nbytes
        offset += nbytes


def _write_manifest(out_dir, entries):
    digest = hashlib.sha256(json.dumps(entries, sort_keys=True, separators=(",", ":")).encode()).hexdigest()
    size = max((e["offset"] + e["nbytes"] for e in entries), default=0)
    manifest = {
        "tensors": entries,
        "manifest_sha256": digest,
        "weights_nbytes": size,
        "layout_sha256": layout_digest(entries, size),
    }
    with open(os.path.join(out_dir, "manifest.json"), "w") as f:
        json.dump(manifest, f, indent=2, sort_keys=True)
    return manifest


def write_checkpoint(out_dir, circuit_paths, config_path, seed=0, scale=0.2):
    """Writes weights.bin and manifest.json into out_dir; returns the manifest dict."""
    rng = np.random.default_rng(seed)
    entries = []
    os.makedirs(out_dir, exist_ok=True)
    with open(os.path.join(out_dir, "weights.bin"), "wb") as f:
        for name, shape, offset, nbytes in _layout(weight_shapes(circuit_paths, config_path)):
            data = (rng.standard_normal(shape) * scale).astype("<f4").tobytes()
            assert len(data) == nbytes
            f.write(b"\0" * (offset - f.tell()))
            f.write(data)
            entries.append(
                {
                    "name": name,
                    "dtype": "f32",
                    "shape": shape,
                    "offset": offset,
                    "nbytes": nbytes,
                    "sha256": hashlib.sha256(data).hexdigest(),
                    "xxh64": xxhash.xxh64_hexdigest(data),
                }
            )
    return _write_manifest(out_dir, entries)


def write_manifest(out_dir, circuit_paths, config_path):
    """Writes only manifest.json into out_dir (the tensors' names, shapes and offsets as
    write_checkpoint would lay them out; no data, so no sha256 and a zero xxh64); returns the manifest."""
    os.makedirs(out_dir, exist_ok=True)
    entries = [
        {"name": name, "dtype": "f32", "shape": shape, "offset": offset, "nbytes": nbytes, "xxh64": "0" * 16}
        for name, shape, offset, nbytes in _layout(weight_shapes(circuit_paths, config_path))
    ]
    return _write_manifest(out_dir, entries)
