"""storage.py: a candidate tensor is stored as f16 exactly when every value round-trips, and the
packed reader gives back the float32 values bit for bit; anything else stays f32."""

import os
import tempfile

import numpy as np
import pytest

from ckw.checkpoints import pack, storage
from ckw.checkpoints.packed import PackedCheckpoint

EMBED = "model.decoder.embed_tokens.weight"
FC1 = "model.encoder.layers.3.fc1.weight"
LN = "model.encoder.layers.0.self_attn_layer_norm.weight"


def f16_values(rng, shape):
    """float32 values that are float16 values: normals, subnormals, the largest, -0, inf, NaN."""
    a = rng.standard_normal(shape).astype(np.float16)
    flat = a.reshape(-1)
    flat[:6] = np.array([0x0001, 0x83FF, 0x7BFF, 0x8000, 0x7C00, 0x7E00], np.uint16).view(np.float16)
    return a.astype(np.float32)


def bits(a):
    return np.ascontiguousarray(a, np.float32).view(np.uint32)


def test_exact_candidates_become_f16():
    a = f16_values(np.random.default_rng(0), (7, 5))
    for name in (EMBED, FC1, "model.decoder.layers.1.encoder_attn.v_proj.weight"):
        dtype, stored = storage.stored(name, a)
        assert dtype == "f16" and stored.dtype == np.dtype("<f2")
        np.testing.assert_array_equal(bits(stored.astype(np.float32)), bits(a))


def test_one_inexact_value_keeps_the_tensor_f32():
    a = f16_values(np.random.default_rng(1), (4, 9))
    a[3, 8] = np.nextafter(a[3, 8], np.float32(np.inf))  # between two float16 values
    dtype, stored = storage.stored(FC1, a)
    assert dtype == "f32" and stored is a
    big = np.array([70000.0], np.float32)  # past float16's range: would become inf
    assert storage.stored(EMBED, big)[0] == "f32"
    nan_payload = np.array([0x7FC00001], np.uint32).view(np.float32)  # payload bits f16 cannot hold
    assert storage.stored(EMBED, nan_payload)[0] == "f32"


def test_non_candidates_stay_f32():
    a = f16_values(np.random.default_rng(2), (6,))
    for name in (
        LN,
        "model.encoder.conv1.weight",
        "model.decoder.layers.0.fc1.bias",
        "model.encoder.embed_positions.weight",
    ):
        assert storage.stored(name, a)[0] == "f32", name


def test_packed_reader_widens_f16_bit_for_bit():
    rng = np.random.default_rng(3)
    tensors = {EMBED: f16_values(rng, (11, 4)), LN: rng.standard_normal(4).astype(np.float32)}
    with tempfile.TemporaryDirectory() as d:
        rows = [(n, *storage.stored(n, a)) for n, a in tensors.items()]
        entries, nbytes, sha = pack.write_weights(rows, os.path.join(d, "weights.bin"))
        assert [e["dtype"] for e in entries] == ["f16", "f32"]
        assert entries[0]["nbytes"] == 11 * 4 * 2
        manifest = pack.manifest_for(entries, nbytes, sha, "tiny")
        pack.dump(os.path.join(d, "manifest.json"), manifest)
        pack.dump(os.path.join(d, "model_config.json"), {"manifest_sha256": manifest["manifest_sha256"]})
        ckpt = PackedCheckpoint(d, verify=True)
        for name, a in tensors.items():
            got = ckpt.tensor(name)
            assert got.dtype == np.float32
            np.testing.assert_array_equal(bits(got), bits(a))


if __name__ == "__main__":
    raise SystemExit(pytest.main([__file__]))
