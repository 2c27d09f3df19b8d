"""The bf16w_gemm_nt* kernels through ctypes: the test helpers' bf16 rounding on its edge cases,
the exact-widening paths giving the f32 kernels' bits on the widened weights, and the full-vocab
logits (every ISA path, vdpbf16ps and AMX tiles included) against float64 under the map's tolerance."""

import unittest

import numpy as np

from kernels.common import kernel_testing as kt
from kernels.common import tolerance

NAMES = ("gemm_nt", "gemm_nt_bias", "gemm_nt_bias_gelu", "gemm_nt_bias_residual")
BF16 = kt.Library(*(f"kernels/gemm/bf16w_{n}.json" for n in NAMES))
F32 = kt.Library(*(f"kernels/gemm/f32_{n}.json" for n in NAMES))
ISAS = kt.cpu_isas(("avx2", "avx512", "avx512bf16", "amx"))
# The scratch the maps declare (scratch:1048576): W packed once per column block.
SCRATCH = np.zeros(1 << 18, np.float32)


class Bf16RoundingTest(unittest.TestCase):
    def test_round_to_nearest_even_and_specials(self):
        bits = np.array(
            [
                0x3F808000,
                0x3F818000,
                0x3F808001,
                0x7F7FFFFF,
                0x7F800000,
                0xFF800000,
                0x80000000,
                0x00000001,
                0x7FC00001,
                0x7F800001,
            ],
            np.uint32,
        )
        want = np.array([0x3F80, 0x3F82, 0x3F81, 0x7F80, 0x7F80, 0xFF80, 0x8000, 0x0000, 0x7FC0, 0x7FC0], np.uint16)
        np.testing.assert_array_equal(kt.bf16_from_f32(bits.view(np.float32)), want)
        self.assertTrue(np.isnan(kt.f32_from_bf16(np.array([0x7FC0], np.uint16))[0]))

    def test_widening_is_exact(self):
        h = np.arange(0, 1 << 16, dtype=np.uint32).astype(np.uint16)
        finite = np.isfinite(kt.f32_from_bf16(h))
        np.testing.assert_array_equal(kt.bf16_from_f32(kt.f32_from_bf16(h))[finite], h[finite])


class Bf16wGemmTest(unittest.TestCase):
    def setUp(self):
        self.rng = np.random.default_rng(11)

    def test_exact_paths_give_the_f32_bits_on_widened_weights(self):
        for m, n, k in ((1, 70, 384), (5, 37, 45), (13, 33, 19), (150, 40, 300)):
            x = kt.f32(self.rng.standard_normal((m, k)))
            w16 = kt.bf16_from_f32(self.rng.standard_normal((n, k)))
            w32 = kt.f32_from_bf16(w16)
            b = kt.f32(self.rng.standard_normal(n))
            for isa in ("__scalar", "__avx2", "__avx512"):
                if isa not in ISAS:
                    continue
                y16, y32 = np.empty((m, n), np.float32), np.empty((m, n), np.float32)
                getattr(BF16, "ckw_bf16w_gemm_nt_bias_gelu" + isa)(y16, x, w16, b, SCRATCH, m, n, k, n, 0)
                getattr(F32, "ckw_f32_gemm_nt_bias_gelu" + isa)(y32, x, w32, b, SCRATCH, m, n, k, n, 0)
                np.testing.assert_array_equal(y16.view(np.uint32), y32.view(np.uint32), err_msg=f"{isa} {m}x{n}x{k}")

    def test_logits_full_vocab(self):
        c = BF16.tol_c("bf16w_gemm_nt")
        for vocab, m in ((51864, 2), (51865, 2), (51865, 12)):  # 12 rows: the tile paths
            table = kt.bf16_from_f32(self.rng.standard_normal((vocab, 24)))
            x = kt.f32(self.rng.standard_normal((m, 24)))
            ref = x.astype(np.float64) @ kt.f32_from_bf16(table).T.astype(np.float64)
            for isa in ISAS:
                y = np.empty((m, vocab), np.float32)
                getattr(BF16, "ckw_bf16w_gemm_nt" + isa)(y, x, table, SCRATCH, m, vocab, 24, vocab, 0)
                tolerance.assert_close(y, ref, c, 24, f"logits{isa} {m}x{vocab}")

    def test_a_wrong_weight_dtype_is_refused(self):
        w = np.zeros((3, 4), np.float32)  # fp32 where the map says bf16
        with self.assertRaises(Exception):
            BF16.ckw_bf16w_gemm_nt(
                np.empty((1, 3), np.float32), np.zeros((1, 4), np.float32), w, SCRATCH, 1, 3, 4, 3, 0
            )


if __name__ == "__main__":
    unittest.main()
