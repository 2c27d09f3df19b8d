"""Layer norm through ctypes against torch.nn.functional.layer_norm (float64) under the
tolerance policy, c from f32_layer_norm.json; in-place and large-offset rows included."""

import unittest

import numpy as np
import torch

from kernels.common import kernel_testing as kt
from kernels.common import tolerance

KERNEL = kt.Kernel("kernels/norm/f32_layer_norm.json")


class LayerNormTest(unittest.TestCase):
    def test_matches_torch(self):
        c = KERNEL.tol_c
        rng = np.random.default_rng(7)
        for isa in kt.cpu_isas():
            f = KERNEL.function(isa)
            for t, d, offset in [(1, 1, 0), (3, 17, 0), (2, 384, 50.0), (5, 512, 0), (1, 1000, -20.0), (4, 7, 3.0)]:
                x = kt.f32(rng.standard_normal((t, d)) * 2 + offset)
                g = kt.f32(rng.standard_normal(d))
                b = kt.f32(rng.standard_normal(d))
                ref = torch.nn.functional.layer_norm(
                    torch.from_numpy(x.astype(np.float64)),
                    (d,),
                    torch.from_numpy(g.astype(np.float64)),
                    torch.from_numpy(b.astype(np.float64)),
                    eps=1e-5,
                ).numpy()
                y = np.empty_like(x)
                f(kt.ptr(y), kt.ptr(x), kt.ptr(g), kt.ptr(b), t, d, 1e-5)
                tolerance.assert_close(y, ref, c, d, f"layer_norm{isa} {t}x{d}")
                f(kt.ptr(x), kt.ptr(x), kt.ptr(g), kt.ptr(b), t, d, 1e-5)  # in place
                tolerance.assert_close(x, ref, c, d, f"layer_norm in place{isa} {t}x{d}")

    def test_constant_row_is_beta(self):
        # Zero variance: eps keeps it finite and the output is exactly beta.
        d = 20
        x = np.full((2, d), 3.25, np.float32)
        g = np.ones(d, np.float32)
        b = kt.f32(np.arange(d))
        y = np.empty_like(x)
        KERNEL.function()(kt.ptr(y), kt.ptr(x), kt.ptr(g), kt.ptr(b), 2, d, 1e-5)
        np.testing.assert_array_equal(y, np.broadcast_to(b, (2, d)))


if __name__ == "__main__":
    unittest.main()
