"""The generated ABI, end to end on the toy decoder (naive test kernels): manifest check,
cross-K/V cache facts, self-KV incremental decode equal to a full prefill, error codes."""

import ctypes
import json
import os
import shutil
import sys
import tempfile
import unittest

import numpy as np

HERE = "tools/codegen/testdata/toy"
OK, E_MANIFEST, E_MISSING, E_CROSS, E_FULL = 0, -3, -6, -7, -8


def load():
    lib = ctypes.CDLL(os.path.abspath(f"{HERE}/libckw_toy_decoder.so"))
    P = "ckw_toy_decoder_"
    h = ctypes.c_void_p
    f32 = np.ctypeslib.ndpointer(np.float32, flags="C_CONTIGUOUS")
    i32 = np.ctypeslib.ndpointer(np.int32, flags="C_CONTIGUOUS")
    sig = {
        "create": ([ctypes.c_char_p, ctypes.c_char_p, ctypes.POINTER(h)], ctypes.c_int),
        "free": ([h], None),
        "set_memory": ([h, f32], ctypes.c_int),
        "prefill": ([h, i32, ctypes.c_int64, f32], ctypes.c_int),
        "decode": ([h, ctypes.c_int32, f32], ctypes.c_int),
        "reset": ([h], ctypes.c_int),
        "position": ([h], ctypes.c_int64),
        "cross_kv_projections": ([h], ctypes.c_int64),
        "strerror": ([ctypes.c_int], ctypes.c_char_p),
        "dim": ([ctypes.c_char_p], ctypes.c_int64),
    }
    for name, (args, res) in sig.items():
        fn = getattr(lib, P + name)
        fn.argtypes, fn.restype = args, res
    return lib, P


class ToyAbiTest(unittest.TestCase):
    @classmethod
    def setUpClass(cls):
        cls.lib, cls.P = load()
        cls.tmp = tempfile.mkdtemp()
        manifest = json.load(open(f"{HERE}/manifest.json"))
        size = max(t["offset"] + t["nbytes"] for t in manifest["tensors"])
        rng = np.random.default_rng(0)
        weights = (rng.standard_normal(size // 4).astype(np.float32) * 0.5).tobytes()
        cls.weights = os.path.join(cls.tmp, "weights.bin")
        open(cls.weights, "wb").write(weights)
        shutil.copy(f"{HERE}/manifest.json", os.path.join(cls.tmp, "manifest.json"))
        bad = dict(manifest, manifest_sha256="0" * 64)
        cls.bad_manifest = os.path.join(cls.tmp, "bad.json")
        json.dump(bad, open(cls.bad_manifest, "w"))

    @classmethod
    def tearDownClass(cls):
        shutil.rmtree(cls.tmp)

    def call(self, name, *args):
        return getattr(self.lib, self.P + name)(*args)

    def handle(self):
        h = ctypes.c_void_p()
        self.assertEqual(self.call("create", self.weights.encode(), None, ctypes.byref(h)), OK)
        self.addCleanup(self.call, "free", h)
        return h

    def test_manifest_mismatch_is_refused(self):
        h = ctypes.c_void_p()
        rc = self.call("create", self.weights.encode(), self.bad_manifest.encode(), ctypes.byref(h))
        self.assertEqual(rc, E_MANIFEST)
        self.assertIn(b"manifest_sha256", self.call("strerror", rc))
        self.assertFalse(h.value)

    def test_cross_cache_lifecycle(self):
        h = self.handle()
        V = self.call("dim", b"n_vocab")
        logits = np.zeros((6, V), np.float32)
        memory = np.random.default_rng(1).standard_normal((5, 8)).astype(np.float32)
        tokens = np.array([1, 2, 3], np.int32)
        self.assertEqual(self.call("prefill", h, tokens, 3, logits), E_MISSING)
        self.assertEqual(self.call("decode", h, 4, logits), E_CROSS)
        self.assertEqual(self.call("set_memory", h, memory), OK)
        self.assertEqual(self.call("decode", h, 4, logits), E_CROSS)  # fact 4: no stale read
        self.assertEqual(self.call("prefill", h, tokens, 3, logits), OK)
        self.assertEqual(self.call("cross_kv_projections", h), 1)
        for t in (4, 5, 6):
            self.assertEqual(self.call("decode", h, t, logits), OK)
        self.assertEqual(self.call("cross_kv_projections", h), 1)  # decode reuses the cache
        self.assertEqual(self.call("position", h), 6)
        self.assertEqual(self.call("decode", h, 7, logits), E_FULL)
        self.call("reset", h)
        self.assertEqual(self.call("prefill", h, tokens, 3, logits), OK)
        self.assertEqual(self.call("cross_kv_projections", h), 1)  # same memory: still valid
        self.assertEqual(self.call("set_memory", h, memory * 2), OK)
        self.assertEqual(self.call("decode", h, 4, logits), E_CROSS)
        self.assertEqual(self.call("prefill", h, tokens, 3, logits), OK)
        self.assertEqual(self.call("cross_kv_projections", h), 2)

    def test_incremental_decode_equals_full_prefill(self):
        V = self.call("dim", b"n_vocab")
        memory = np.random.default_rng(2).standard_normal((5, 8)).astype(np.float32)
        seq = np.array([3, 1, 4, 1, 5], np.int32)
        full = np.zeros((5, V), np.float32)
        a = self.handle()
        self.call("set_memory", a, memory)
        self.assertEqual(self.call("prefill", a, seq, 5, full), OK)
        b = self.handle()  # a second handle in the same process: no shared state
        self.call("set_memory", b, memory)
        step = np.zeros((2, V), np.float32)
        self.assertEqual(self.call("prefill", b, seq[:2], 2, step), OK)
        np.testing.assert_allclose(step, full[:2], rtol=1e-5, atol=1e-5)
        for i in range(2, 5):
            one = np.zeros((1, V), np.float32)
            self.assertEqual(self.call("decode", b, int(seq[i]), one), OK)
            np.testing.assert_allclose(one[0], full[i], rtol=1e-5, atol=1e-5)
        self.assertTrue(np.abs(full).max() > 0)


if __name__ == "__main__":
    sys.exit(unittest.main())
