"""tiny and base, encoder and decoder: four generated libraries in one process, each exporting
only its own prefix, each refusing the other variant's layout, each with its own handle state."""

import os
import subprocess
import sys
import unittest

import numpy as np

from ckw.runtime import abi

ARGS = dict(a.split("=", 1) for a in sys.argv[1:] if "=" in a)
VARIANTS = ("tiny", "base")


def lib_path(variant, part):
    return os.path.abspath(ARGS[f"{variant}_{part}"])


class LibrariesTest(unittest.TestCase):
    @classmethod
    def setUpClass(cls):
        cls.libs = {
            (v, p): abi.Library.for_model(lib_path(v, p), v, p) for v in VARIANTS for p in ("encoder", "decoder")
        }

    def handle(self, variant, part):
        rc, h = self.libs[(variant, part)].create(ARGS[f"{variant}_weights"])
        self.assertEqual(rc, abi.OK, self.libs[(variant, part)].call("strerror", rc))
        self.addCleanup(self.libs[(variant, part)].call, "free", h)
        return h

    def test_only_prefixed_symbols_are_exported(self):
        for v, p in self.libs:
            out = subprocess.run(
                ["nm", "-D", "--defined-only", lib_path(v, p)], check=True, capture_output=True, text=True
            ).stdout
            names = [line.split()[-1] for line in out.splitlines() if line.strip()]
            self.assertTrue(names)
            self.assertEqual([n for n in names if not n.startswith(f"ckw_{v}_{p}_")], [], f"{v}_{p}")

    def test_other_variants_weights_are_refused(self):
        for v, other in (("tiny", "base"), ("base", "tiny")):
            lib = self.libs[(v, "decoder")]
            rc, _ = lib.create(ARGS[f"{other}_weights"])
            self.assertEqual(rc, abi.E_LAYOUT_MISMATCH, lib.call("strerror", rc))
            self.assertNotEqual(lib.call("layout_sha256"), self.libs[(other, "decoder")].call("layout_sha256"))

    def test_all_four_run_in_one_process(self):
        rng = np.random.default_rng(0)
        for v in VARIANTS:
            enc, dec = self.libs[(v, "encoder")], self.libs[(v, "decoder")]
            n_ctx, d = enc.dim("n_ctx"), enc.dim("d_model")
            mel = (rng.standard_normal((enc.dim("n_mel"), enc.dim("n_frames"))) * 0.5).astype(np.float32)
            memory = np.zeros((n_ctx, d), np.float32)
            eh = self.handle(v, "encoder")
            self.assertEqual(enc.call("run", eh, mel, memory), abi.OK)
            self.assertTrue(np.isfinite(memory).all() and np.abs(memory).max() > 0)

            dh = self.handle(v, "decoder")
            vocab = dec.dim("n_vocab")
            logits = np.zeros((4, vocab), np.float32)
            self.assertEqual(dec.call("decode", dh, np.zeros(1, np.int32), 1, logits), abi.E_CROSS_KV_INVALID)
            self.assertEqual(dec.call("set_encoder_memory", dh, memory), abi.OK)
            tokens = np.array([vocab - 1000, 10, 20], np.int32)
            last = np.array([2], np.int32)
            self.assertEqual(
                dec.call("prefill", dh, tokens, np.array([3], np.int32), 1, 3, None, logits),
                abi.E_KERNEL,
                "a logits row past the prompt is refused",
            )
            self.assertIn("outside", dec.call("last_error", dh).decode())
            self.assertEqual(dec.call("prefill", dh, tokens, last, 1, 3, None, logits), abi.OK)
            for t in (30, 40):
                self.assertEqual(dec.call("decode", dh, np.array([t], np.int32), 1, logits), abi.OK)
            self.assertEqual(dec.call("cross_kv_projections", dh), 1)
            self.assertEqual(dec.call("position", dh), 5)
            self.assertTrue(np.isfinite(logits).all())


if __name__ == "__main__":
    unittest.main(argv=sys.argv[:1])
