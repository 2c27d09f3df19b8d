"""Attention through ctypes against torch scaled_dot_product_attention (float64) for the
four Whisper cases, c from f32_attention.json; decode steps must agree with the matching
rows of a full causal prefill."""

import ctypes
import unittest

import numpy as np
import torch
import torch.nn.functional as F

from kernels.common import kernel_testing as kt
from kernels.common import tolerance

LIB = kt.Library("kernels/attention/f32_attention.json")
I64 = ctypes.c_int64
# The scratch size the C side asks for (not a map entry point: the map states its own bound,
# which //kernels:contract_test checks against this function).
SCRATCH_BYTES = LIB.kernels[0].lib.ckw_f32_attention_scratch_bytes
SCRATCH_BYTES.argtypes, SCRATCH_BYTES.restype = [ctypes.c_int64] * 4, ctypes.c_int64


def attend(isa, q, k, v, tk, q_pos=0, causal=False):
    """q [Tq, H*Dh]; k, v [H, cap, Dh]."""
    f = getattr(LIB, "ckw_f32_attention" + isa)
    h, cap, dh = k.shape
    tq = q.shape[0]
    o = np.full_like(q, np.nan)
    scratch = np.empty(SCRATCH_BYTES(tq, tk, h, dh) // 4 + 1, np.float32)
    f(
        kt.ptr(o),
        kt.ptr(q),
        kt.ptr(k),
        kt.ptr(v),
        kt.ptr(scratch),
        tq,
        tk,
        h,
        dh,
        h * dh,
        cap,
        q_pos,
        int(causal),
        1.0 / np.sqrt(dh),
    )
    return o


def reference(q, k, v, tk, q_pos=0, causal=False):
    h, _, dh = k.shape
    tq = q.shape[0]
    qh = torch.from_numpy(q.astype(np.float64)).reshape(tq, h, dh).transpose(0, 1)
    kh = torch.from_numpy(k[:, :tk].astype(np.float64))
    vh = torch.from_numpy(v[:, :tk].astype(np.float64))
    mask = None
    if causal:
        mask = torch.arange(tk)[None, :] <= (q_pos + torch.arange(tq))[:, None]
    out = F.scaled_dot_product_attention(qh, kh, vh, attn_mask=mask)
    return out.transpose(0, 1).reshape(tq, h * dh).numpy()


class AttentionTest(unittest.TestCase):
    def setUp(self):
        self.rng = np.random.default_rng(11)
        self.c = LIB.tol_c("f32_attention")

    def qkv(self, tq, h, cap, dh):
        q = kt.f32(self.rng.standard_normal((tq, h * dh)))
        k = kt.f32(self.rng.standard_normal((h, cap, dh)))
        v = kt.f32(self.rng.standard_normal((h, cap, dh)))
        return q, k, v

    def test_cases(self):
        # name, Tq, Tk, H, Dh, cap, q_pos, causal
        cases = [
            ("encoder", 40, 40, 2, 64, 40, 0, False),
            ("cross", 3, 1500, 2, 64, 1500, 0, False),
            ("prefill", 4, 4, 3, 64, 448, 0, True),
            ("prefill after cache", 3, 12, 2, 64, 448, 9, True),
            ("decode", 1, 448, 2, 64, 448, 17, True),
            ("odd head size", 5, 19, 3, 20, 23, 0, False),
            ("blocked encoder", 37, 37, 2, 64, 40, 0, False),
            ("blocked prefill", 21, 30, 2, 64, 448, 9, True),
            ("blocked odd head", 19, 11, 1, 24, 11, 0, True),
        ]
        for isa in kt.cpu_isas():
            for name, tq, tk, h, dh, cap, q_pos, causal in cases:
                q, k, v = self.qkv(tq, h, cap, dh)
                got = attend(isa, q, k, v, tk, q_pos, causal)
                ref = reference(q, k, v, min(tk, q_pos + tq) if causal else tk, q_pos, causal)
                tolerance.assert_close(got, ref, self.c, dh + tk, f"{name}{isa}")

    def test_decode_steps_match_prefill(self):
        # Whisper's incremental self-attention attends pos + 1 cached rows: each decode step
        # must reproduce row pos of one causal pass over the whole sequence.
        h, dh, cap, t = 2, 64, 32, 9
        q, k, v = self.qkv(t, h, cap, dh)
        full = attend("", q, k, v, cap, 0, True)
        for pos in range(t):
            step = attend("", kt.f32(q[pos : pos + 1]), k, v, cap, pos, True)
            tolerance.assert_close(step[0], full[pos], self.c, dh + pos + 1, f"decode pos {pos}")

    def test_keys_past_pos_are_not_read(self):
        h, dh, cap = 1, 64, 16
        q, k, v = self.qkv(1, h, cap, dh)
        k[:, 6:] = np.nan
        v[:, 6:] = np.nan
        got = attend("", q, k, v, cap, 5, True)
        self.assertTrue(np.all(np.isfinite(got)))
        tolerance.assert_close(got, reference(q, k, v, 6, 5, True), self.c, dh + 6, "decode pos 5")


if __name__ == "__main__":
    unittest.main()
