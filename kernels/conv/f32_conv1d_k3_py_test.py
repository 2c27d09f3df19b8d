"""conv1d / conv1d_gelu through ctypes against torch.nn.functional.conv1d (float64), c from
the maps: Whisper's stem (conv1 stride 1 + GELU, conv2 stride 2 + GELU, token-major out)
at reduced width, odd sizes."""

import ctypes
import unittest

import numpy as np
import torch
import torch.nn.functional as F

from kernels.common import kernel_testing as kt
from kernels.common import tolerance

LIB = kt.Library("kernels/conv/f32_conv1d_k3.json", "kernels/conv/f32_conv1d_k3_gelu.json")
I64 = ctypes.c_int64
# The scratch size the C side asks for (not a map entry point: the map states its own bound,
# which //kernels:contract_test checks against this function).
SCRATCH_BYTES = LIB.kernels[0].lib.ckw_f32_conv1d_k3_scratch_bytes
SCRATCH_BYTES.argtypes, SCRATCH_BYTES.restype = [ctypes.c_int64] * 2, ctypes.c_int64


def conv(x, w, b, stride, gelu):
    cin, tin = x.shape
    cout = w.shape[0]
    tout = (tin - 1) // stride + 1
    y = np.full((tout, cout), np.nan, np.float32)
    scratch = np.empty(SCRATCH_BYTES(cin, tout) // 4, np.float32)
    f = LIB.ckw_f32_conv1d_k3_gelu if gelu else LIB.ckw_f32_conv1d_k3
    f(kt.ptr(y), kt.ptr(x), kt.ptr(w), kt.ptr(b), kt.ptr(scratch), cin, cout, tin, 0, tout, stride)
    return y


def reference(x, w, b, stride, gelu):
    def t(a):
        return torch.from_numpy(a.astype(np.float64))

    y = F.conv1d(t(x)[None], t(w), t(b), stride=stride, padding=1)[0]
    return (F.gelu(y) if gelu else y).T.numpy()


class ConvTest(unittest.TestCase):
    def test_against_torch(self):
        rng = np.random.default_rng(9)
        for name in ("f32_conv1d_k3", "f32_conv1d_k3_gelu"):
            c = LIB.tol_c(name)
            gelu = name.endswith("gelu")
            for cin, cout, tin, stride in [
                (80, 64, 300, 1),
                (64, 64, 300, 2),
                (3, 5, 1, 1),
                (7, 9, 2, 2),
                (5, 33, 31, 2),
            ]:
                x = kt.f32(rng.standard_normal((cin, tin)))
                w = kt.f32(rng.standard_normal((cout, cin, 3)))
                b = kt.f32(rng.standard_normal(cout))
                tolerance.assert_close(
                    conv(x, w, b, stride, gelu),
                    reference(x, w, b, stride, gelu),
                    c,
                    3 * cin,
                    f"{name} {cin}->{cout} T={tin} s={stride}",
                )

    def test_whisper_stem(self):
        # mel [n_mels, 2T] -> conv1+GELU (token-major [2T, d]) -> transpose -> conv2+GELU -> [T, d]
        rng = np.random.default_rng(10)
        n_mels, d, t2 = 80, 48, 200
        mel = kt.f32(rng.standard_normal((n_mels, t2)))
        w1, b1 = kt.f32(rng.standard_normal((d, n_mels, 3)) * 0.1), kt.f32(rng.standard_normal(d))
        w2, b2 = kt.f32(rng.standard_normal((d, d, 3)) * 0.1), kt.f32(rng.standard_normal(d))
        h = conv(mel, w1, b1, 1, True)
        tokens = conv(kt.f32(h.T), w2, b2, 2, True)
        ref = reference(reference(mel, w1, b1, 1, True).T, w2, b2, 2, True)
        self.assertEqual(tokens.shape, (t2 // 2, d))
        tolerance.assert_close(tokens, ref, 2 * LIB.tol_c("f32_conv1d_k3_gelu"), 3 * d, "stem")


if __name__ == "__main__":
    unittest.main()
