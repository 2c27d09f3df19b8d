"""The LSTM through ctypes against torch.nn.LSTM in float64 under the tolerance policy (c from
f32_lstm.json, K = H), on every ISA path the CPU has (kt.cpu_isas: scalar, the dispatching entry,
avx2, avx512).

The kernel is fed gx = x W_ih^T + b_ih + b_hh (torch's two biases folded into the projection) and
w = weight_hh_l0, both with torch's gate blocks i, f, g, o. x, W_ih and the biases are dyadic
(multiples of 2^-6 and 2^-8 with few bits), so that fold is exact in float32 and the comparison
measures the kernel alone; W_hh and the state are ordinary float32 values. Also: N == 0 copies
the state; two calls of N1 and N2 steps carrying h and c give one call's N1 + N2 bits on the same
path; h_out and c_out aliasing h and c (the circuit's persistent state) give the out-of-place bits.
"""

import ctypes
import unittest

import numpy as np
import torch

from kernels.common import kernel_testing as kt
from kernels.common import tolerance

KERNEL = kt.Kernel("kernels/recurrent/f32_lstm.json")
SCRATCH = KERNEL.lib.ckw_f32_lstm_scratch_bytes
SCRATCH.argtypes, SCRATCH.restype = [ctypes.c_int64], ctypes.c_int64

HS = [128, 1, 17]
NS = [0, 1, 7, 300]
IN = 64  # input features of the projection (Silero's LSTM reads 128; any size checks the fold)


class Problem:
    """An LSTM layer and a sequence, with the torch float64 reference."""

    def __init__(self, rng, n, h, gx_scale=1.0):
        self.n, self.h = n, h
        # Dyadic x, W_ih, b_ih, b_hh: every product and bias a multiple of 2^-12 and every sum below
        # 2^9 (21 significant bits), so x W_ih^T + b_ih + b_hh is exact in float32; gx is about
        # 0.7 * gx_scale in size.
        self.x = rng.integers(-64, 65, (n, IN)) / 64.0 * gx_scale
        self.w_ih = rng.integers(-16, 17, (4 * h, IN)) / 64.0
        self.b_ih = rng.integers(-256, 257, 4 * h) / 256.0
        self.b_hh = rng.integers(-256, 257, 4 * h) / 256.0
        bound = 1.0 / np.sqrt(h)  # torch.nn.LSTM's initialization
        self.w = kt.f32(rng.uniform(-bound, bound, (4 * h, h)))
        self.h0 = kt.f32(rng.uniform(-1, 1, h))
        self.c0 = kt.f32(rng.uniform(-2, 2, h))
        gx = self.x @ self.w_ih.T + self.b_ih + self.b_hh
        self.gx = kt.f32(gx).reshape(n, 4 * h)
        assert np.array_equal(self.gx.astype(np.float64), gx.reshape(n, 4 * h)), "the fold is not exact"
        self.ref = self.torch_lstm(torch.float64)

    def torch_lstm(self, dtype):
        """y [N, H], h_n [H], c_n [H] of torch.nn.LSTM in `dtype` with the same weights (as float64)."""
        if self.n == 0:
            return np.zeros((0, self.h)), self.h0.astype(np.float64), self.c0.astype(np.float64)
        lstm = torch.nn.LSTM(IN, self.h).to(dtype)

        def t(a):
            return torch.from_numpy(np.asarray(a, np.float64)).to(dtype)

        with torch.no_grad():
            lstm.weight_ih_l0.copy_(t(self.w_ih))
            lstm.weight_hh_l0.copy_(t(self.w))
            lstm.bias_ih_l0.copy_(t(self.b_ih))
            lstm.bias_hh_l0.copy_(t(self.b_hh))
            state = (t(self.h0).view(1, 1, self.h), t(self.c0).view(1, 1, self.h))
            y, (hn, cn) = lstm(t(self.x).view(self.n, 1, IN), state)
        shapes = ((y, (self.n, self.h)), (hn, self.h), (cn, self.h))
        return tuple(a.reshape(shape).double().numpy() for a, shape in shapes)


def need_c(got, ref, hidden):
    """The tolerance_c this output needs against ref (its error in units of the policy's bound at c = 1)."""
    if not ref.size:
        return 0.0
    return float(np.max(np.abs(np.asarray(got, np.float64) - ref))) / tolerance.bound(1.0, hidden, np.max(np.abs(ref)))


def run(f, gx, w, h, c, n, hidden, h_out=None, c_out=None):
    """One call; h_out/c_out given: they may be h/c themselves (in place)."""
    y = np.full((n, hidden), np.nan, np.float32)
    h_out = np.full(hidden, np.nan, np.float32) if h_out is None else h_out
    c_out = np.full(hidden, np.nan, np.float32) if c_out is None else c_out
    scratch = np.full(max(SCRATCH(hidden), 4) // 4, np.nan, np.float32)
    f(y, h_out, c_out, gx, w, h, c, scratch, n, hidden)
    return y, h_out, c_out


class LstmTest(unittest.TestCase):
    def test_matches_torch_lstm(self):
        c = KERNEL.tol_c
        rng = np.random.default_rng(11)
        worst = {}
        for hidden in HS:
            for n in NS:
                for gx_scale in (1.0, 16.0):  # 16: gates saturated for most steps
                    p = Problem(rng, n, hidden, gx_scale)
                    # torch's own float32 LSTM on the same problem: the error float32 state costs anyway
                    worst["torch float32"] = max(
                        [worst.get("torch float32", 0.0)]
                        + [need_c(g, r, hidden) for g, r in zip(p.torch_lstm(torch.float32), p.ref)]
                    )
                    for isa in kt.cpu_isas():
                        f = KERNEL.function(isa)
                        gx_before = p.gx.copy()
                        got = run(f, p.gx, p.w, p.h0, p.c0, n, hidden)
                        np.testing.assert_array_equal(p.gx, gx_before)
                        what = f"lstm{isa} N={n} H={hidden} gx*{gx_scale}"
                        for port, g, r in zip(("y", "h_out", "c_out"), got, p.ref):
                            self.assertTrue(np.all(np.isfinite(g)), f"{what} {port}: not finite")
                            tolerance.assert_close(g, r, c, hidden, f"{what} {port}")
                            worst[isa] = max(worst.get(isa, 0.0), need_c(g, r, hidden))
                        if n == 0:
                            np.testing.assert_array_equal(got[1], p.h0)
                            np.testing.assert_array_equal(got[2], p.c0)
        for isa, need in worst.items():
            name = isa if isa.startswith("torch") else "ckw_f32_lstm" + (isa or " (dispatch)")
            print(f"{name}: largest error {need:.2f} x FLT_EPSILON sqrt(H) max(|ref|, 1), map's c = {c}")

    def test_streaming_equals_one_call(self):
        rng = np.random.default_rng(12)
        for hidden in HS:
            p = Problem(rng, 300, hidden)
            for isa in kt.cpu_isas():
                f = KERNEL.function(isa)
                y, h_n, c_n = run(f, p.gx, p.w, p.h0, p.c0, 300, hidden)
                for n1 in (0, 1, 7, 150, 299, 300):
                    y1, h1, c1 = run(f, p.gx[:n1].copy(), p.w, p.h0, p.c0, n1, hidden)
                    y2, h2, c2 = run(f, p.gx[n1:].copy(), p.w, h1, c1, 300 - n1, hidden)
                    what = f"lstm{isa} H={hidden} {n1} + {300 - n1} steps"
                    np.testing.assert_array_equal(np.concatenate([y1, y2]), y, err_msg=what)
                    np.testing.assert_array_equal(h2, h_n, err_msg=what)
                    np.testing.assert_array_equal(c2, c_n, err_msg=what)
                # step by step, the state carried in place (the circuit's persistent h and c)
                hs, cs = p.h0.copy(), p.c0.copy()
                for step in range(300):
                    ys, _, _ = run(f, p.gx[step : step + 1].copy(), p.w, hs, cs, 1, hidden, hs, cs)
                    np.testing.assert_array_equal(ys[0], y[step], err_msg=f"lstm{isa} H={hidden} step {step}")
                np.testing.assert_array_equal(hs, h_n)
                np.testing.assert_array_equal(cs, c_n)

    def test_in_place_state(self):
        rng = np.random.default_rng(13)
        for hidden in HS:
            for n in NS:
                p = Problem(rng, n, hidden)
                for isa in kt.cpu_isas():
                    f = KERNEL.function(isa)
                    y, h_n, c_n = run(f, p.gx, p.w, p.h0, p.c0, n, hidden)
                    hs, cs = p.h0.copy(), p.c0.copy()
                    y_ip, h_ip, c_ip = run(f, p.gx, p.w, hs, cs, n, hidden, hs, cs)
                    self.assertIs(h_ip, hs)
                    what = f"lstm{isa} N={n} H={hidden} in place"
                    np.testing.assert_array_equal(y_ip, y, err_msg=what)
                    np.testing.assert_array_equal(hs, h_n, err_msg=what)
                    np.testing.assert_array_equal(cs, c_n, err_msg=what)
                    # only h in place, then only c
                    hs = p.h0.copy()
                    run(f, p.gx, p.w, hs, p.c0, n, hidden, h_out=hs)
                    np.testing.assert_array_equal(hs, h_n, err_msg=what + " (h only)")
                    cs = p.c0.copy()
                    run(f, p.gx, p.w, p.h0, cs, n, hidden, c_out=cs)
                    np.testing.assert_array_equal(cs, c_n, err_msg=what + " (c only)")

    def test_extreme_inputs_stay_finite(self):
        # gx of +-100: every gate saturated to exactly 0 or 1, tanh to +-1; no NaN, |h| <= 1.
        rng = np.random.default_rng(14)
        for hidden in HS:
            gx = kt.f32(rng.choice([-100.0, 100.0], (50, 4 * hidden)))
            w = kt.f32(rng.uniform(-1, 1, (4 * hidden, hidden)))
            h0, c0 = np.zeros(hidden, np.float32), np.zeros(hidden, np.float32)
            for isa in kt.cpu_isas():
                y, h_n, c_n = run(KERNEL.function(isa), gx, w, h0, c0, 50, hidden)
                self.assertTrue(np.all(np.isfinite(y)) and np.all(np.abs(y) <= 1.0), f"lstm{isa} H={hidden}")
                self.assertTrue(np.all(np.isfinite(c_n)), f"lstm{isa} H={hidden}")
                self.assertTrue(np.all(np.abs(c_n) <= 50.0), f"lstm{isa} H={hidden}")


if __name__ == "__main__":
    unittest.main()
