"""The f32_gemm_nt* kernels (linear, linear_gelu, linear_residual, logits) through ctypes,
against numpy/torch in float64 under the tolerance policy with c read from each kernel map."""

import unittest

import numpy as np
import torch

from kernels.common import kernel_testing as kt
from kernels.common import tolerance

LIB = kt.Library(
    *(
        f"kernels/gemm/{m}.json"
        for m in ("f32_gemm_nt", "f32_gemm_nt_bias", "f32_gemm_nt_bias_gelu", "f32_gemm_nt_bias_residual")
    )
)


cpu_isas = kt.cpu_isas
ptr = kt.ptr


def tol_c(kernel):
    return LIB.tol_c(kernel)


def fn(name, nargs_ptr):
    f = getattr(LIB, name)
    return f


# The scratch the maps declare (scratch:1048576): W packed once per column block.
SCRATCH = np.zeros(1 << 18, np.float32)

SHAPES = [(1, 1, 1), (1, 384, 384), (1, 37, 1), (7, 33, 1), (13, 17, 19), (6, 16, 256), (9, 47, 600), (150, 35, 70)]


class GemmTest(unittest.TestCase):
    def setUp(self):
        self.rng = np.random.default_rng(5)

    def data(self, m, n, k):
        x = self.rng.standard_normal((m, k), dtype=np.float32)
        w = self.rng.standard_normal((n, k), dtype=np.float32)
        b = self.rng.standard_normal(n, dtype=np.float32)
        return x, w, b

    def test_linear_and_gelu(self):
        for kernel, gelu in (("f32_gemm_nt_bias", False), ("f32_gemm_nt_bias_gelu", True)):
            c = tol_c(kernel)
            for isa in cpu_isas():
                f = fn("ckw_" + kernel + isa, 4)
                for m, n, k in SHAPES:
                    x, w, b = self.data(m, n, k)
                    ref = x.astype(np.float64) @ w.T.astype(np.float64) + b
                    if gelu:
                        ref = torch.nn.functional.gelu(torch.from_numpy(ref)).numpy()
                    y = np.full((m, n), np.nan, np.float32)
                    f(ptr(y), ptr(x), ptr(w), ptr(b), ptr(SCRATCH), m, n, k, n, 0)
                    tolerance.assert_close(y, ref, c, k, f"{kernel}{isa} {m}x{n}x{k}")

    def test_residual_in_place(self):
        c = tol_c("f32_gemm_nt_bias_residual")
        for isa in cpu_isas():
            f = getattr(LIB, "ckw_f32_gemm_nt_bias_residual" + isa)
            for m, n, k in SHAPES:
                x, w, b = self.data(m, n, k)
                r = self.rng.standard_normal((m, n), dtype=np.float32)
                ref = r + x.astype(np.float64) @ w.T.astype(np.float64) + b
                y = np.full((m, n), np.nan, np.float32)
                f(ptr(y), ptr(x), ptr(w), ptr(b), ptr(r), ptr(SCRATCH), m, n, k, n, 0)
                tolerance.assert_close(y, ref, c, k, f"residual{isa} {m}x{n}x{k}")
                f(ptr(r), ptr(x), ptr(w), ptr(b), ptr(r), ptr(SCRATCH), m, n, k, n, 0)  # y is r: the residual stream
                tolerance.assert_close(r, ref, c, k, f"residual in place{isa} {m}x{n}x{k}")

    def test_logits_full_vocab(self):
        c = tol_c("f32_gemm_nt")
        f = fn("ckw_f32_gemm_nt", 3)
        for vocab in (51864, 51865):
            table = self.rng.standard_normal((vocab, 24), dtype=np.float32)
            x = self.rng.standard_normal((2, 24), dtype=np.float32)
            y = np.empty((2, vocab), np.float32)
            f(ptr(y), ptr(x), ptr(table), ptr(SCRATCH), 2, vocab, 24, vocab, 0)
            tolerance.assert_close(y, x.astype(np.float64) @ table.T.astype(np.float64), c, 24, f"logits {vocab}")
            self.assertEqual(int(np.argmax(y[0])), int(np.argmax(x[0].astype(np.float64) @ table.T.astype(np.float64))))


if __name__ == "__main__":
    unittest.main()
