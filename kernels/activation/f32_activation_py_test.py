"""gelu, softmax, add, relu and sigmoid through ctypes against torch / numpy in float64 under the
tolerance policy, c read from the kernel maps (add and relu bit for bit)."""

import unittest

import numpy as np
import torch

from kernels.common import kernel_testing as kt
from kernels.common import tolerance

LIB = kt.Library(
    "kernels/activation/f32_add.json",
    "kernels/activation/f32_gelu.json",
    "kernels/activation/f32_softmax.json",
    "kernels/activation/f32_relu.json",
    "kernels/activation/f32_sigmoid.json",
)
SHAPES = [(1, 1), (1, 7), (3, 17), (2, 64), (5, 37), (1, 1500), (4, 384)]


def unary(name):
    f = getattr(LIB, name)
    return f


class ActivationTest(unittest.TestCase):
    def test_gelu_matches_torch(self):
        c = LIB.tol_c("f32_gelu")
        rng = np.random.default_rng(1)
        for isa in kt.cpu_isas():
            f = unary("ckw_f32_gelu" + isa)
            for t, d in SHAPES:
                x = kt.f32(rng.uniform(-10, 10, (t, d)))
                x.flat[: min(4, x.size)] = [0.0, -1.7677669, 1.7677670, -30.0][: min(4, x.size)]
                y = np.empty_like(x)
                f(kt.ptr(y), kt.ptr(x), t, d)
                ref = torch.nn.functional.gelu(torch.from_numpy(x.astype(np.float64))).numpy()
                tolerance.assert_close(y, ref, c, 1, f"gelu{isa} {t}x{d}")
                # and against torch's own float32 kernel, the model's reference
                tolerance.assert_close(y, torch.nn.functional.gelu(torch.from_numpy(x)).numpy(), c, 1, "vs torch f32")

    def test_softmax_matches_torch(self):
        c = LIB.tol_c("f32_softmax")
        rng = np.random.default_rng(2)
        for isa in kt.cpu_isas():
            f = unary("ckw_f32_softmax" + isa)
            for t, d in SHAPES:
                x = kt.f32(rng.uniform(-30, 30, (t, d)) + 100.0)  # +100: exp(x) alone would overflow
                y = np.empty_like(x)
                f(kt.ptr(y), kt.ptr(x), t, d)
                ref = torch.softmax(torch.from_numpy(x.astype(np.float64)), dim=-1).numpy()
                tolerance.assert_close(y, ref, c, d, f"softmax{isa} {t}x{d}")
                self.assertTrue(np.all(np.isfinite(y)))

    def test_relu_is_exact(self):
        # relu(x) = x > 0 ? x : +0.0 bit for bit: -0.0 and NaN (any sign, any payload) give +0.0.
        rng = np.random.default_rng(5)
        special = np.array(
            [
                0x00000000,
                0x80000000,
                0x7FC00000,
                0xFFC00000,
                0x7FA00001,
                0xFF812345,
                0x7F800000,
                0xFF800000,
                0x00000001,
                0x80000001,
                0x00800000,
                0x80800000,
                0x7F7FFFFF,
                0xFF7FFFFF,
            ],
            np.uint32,
        ).view(np.float32)
        for isa in kt.cpu_isas():
            f = getattr(LIB, "ckw_f32_relu" + isa)
            for t, d in SHAPES + [(1, special.size)]:
                x = kt.f32(rng.standard_normal((t, d)) * 4)
                n = min(special.size, x.size)
                x.flat[:n] = special[:n]
                y = np.full_like(x, 7.0)
                f(kt.ptr(y), kt.ptr(x), t, d)
                with np.errstate(invalid="ignore"):  # comparing or widening a signalling NaN
                    want = np.where(x > 0, x, np.float32(0.0))
                    finite = ~np.isnan(x)
                    ref = torch.relu(torch.from_numpy(x.astype(np.float64))).numpy()
                np.testing.assert_array_equal(y.view(np.uint32), want.view(np.uint32), err_msg=f"relu{isa} {t}x{d}")
                np.testing.assert_array_equal(y[finite], ref[finite].astype(np.float32))
                f(kt.ptr(x), kt.ptr(x), t, d)  # in place
                np.testing.assert_array_equal(x.view(np.uint32), want.view(np.uint32), err_msg=f"relu{isa} in place")

    def test_sigmoid_matches_torch(self):
        c = LIB.tol_c("f32_sigmoid")
        rng = np.random.default_rng(6)
        sweep = kt.f32(np.linspace(-100, 100, 200001))[None, :]
        for isa in kt.cpu_isas():
            f = getattr(LIB, "ckw_f32_sigmoid" + isa)
            for x in [kt.f32(rng.uniform(-30, 30, (t, d))) for t, d in SHAPES] + [sweep]:
                x.flat[: min(6, x.size)] = [100.0, -100.0, 88.5, -88.5, 0.0, -0.0][: min(6, x.size)]
                t, d = x.shape
                y = np.empty_like(x)
                f(kt.ptr(y), kt.ptr(x), t, d)
                ref = torch.sigmoid(torch.from_numpy(x.astype(np.float64))).numpy()
                self.assertTrue(np.all(np.isfinite(y)), f"sigmoid{isa}: non-finite output")
                tolerance.assert_close(y, ref, c, 1, f"sigmoid{isa} {t}x{d}")
                tolerance.assert_close(y, torch.sigmoid(torch.from_numpy(x)).numpy(), c, 1, "vs torch f32")
                if x is sweep:
                    err = np.max(np.abs(y.astype(np.float64) - ref)) / tolerance.EPS32
                    print(f"sigmoid{isa or ' (dispatch)'}: max abs err {err:.3f} FLT_EPSILON over [-100, 100]")
            x = kt.f32([[100.0, -100.0, np.inf, -np.inf, np.nan, 1e-30]])
            y = np.empty_like(x)
            f(kt.ptr(y), kt.ptr(x), 1, x.shape[1])
            self.assertEqual(y[0, 0], 1.0)
            self.assertTrue(0.0 <= y[0, 1] < 1e-40)
            self.assertEqual(y[0, 2], 1.0)
            self.assertEqual(y[0, 3], 0.0)
            self.assertTrue(np.isnan(y[0, 4]))
            self.assertEqual(y[0, 5], 0.5)
            f(kt.ptr(x), kt.ptr(x), 1, x.shape[1])  # in place
            np.testing.assert_array_equal(x, y)

    def test_add_is_exact(self):
        rng = np.random.default_rng(3)
        for isa in kt.cpu_isas():
            f = getattr(LIB, "ckw_f32_add" + isa)
            for t, d in SHAPES:
                a = kt.f32(rng.standard_normal((t, d)))
                b = kt.f32(rng.standard_normal((t, d)))
                y = np.empty_like(a)
                f(kt.ptr(y), kt.ptr(a), kt.ptr(b), t, d)
                np.testing.assert_array_equal(y, a + b)

    def test_add_sinusoids_table(self):
        # The encoder adds embed_positions.weight, which equals Whisper's sinusoids(); check
        # the add against that formula so the map's claim is backed by a test.
        length, channels = 1500, 384
        inc = np.log(10000) / (channels // 2 - 1)
        inv = np.exp(-inc * np.arange(channels // 2))
        scaled = np.arange(length)[:, None] * inv[None, :]
        table = kt.f32(np.concatenate([np.sin(scaled), np.cos(scaled)], axis=1))
        x = kt.f32(np.random.default_rng(4).standard_normal((length, channels)))
        y = np.empty_like(x)
        LIB.ckw_f32_add(kt.ptr(y), kt.ptr(x), kt.ptr(table), length, channels)
        np.testing.assert_array_equal(y, x + table)


if __name__ == "__main__":
    unittest.main()
