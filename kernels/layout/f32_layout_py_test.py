"""Layout converters through ctypes: bit-exact against numpy transposes, in-place KV-cache
append at row pos, capacity errors; each converter's map declares an exact conversion."""

import unittest

import numpy as np

from kernels.common import kernel_testing as kt

LIB = kt.Library(
    *(
        f"kernels/layout/f32_{m}.json"
        for m in ("token_to_head_major", "head_to_token_major", "channel_to_token_major", "token_to_channel_major")
    )
)


class LayoutTest(unittest.TestCase):
    def test_kv_cache_append(self):
        rng = np.random.default_rng(0)
        h, dh, cap = 6, 64, 448
        cache = np.zeros((h, cap, dh), np.float32)
        seq = kt.f32(rng.standard_normal((5, h * dh)))
        self.assertEqual(LIB.ckw_f32_token_to_head_major(kt.ptr(cache), kt.ptr(seq), 4, h, dh, cap, 0), 0)
        self.assertEqual(LIB.ckw_f32_token_to_head_major(kt.ptr(cache), kt.ptr(seq[4:]), 1, h, dh, cap, 4), 0)
        want = np.zeros_like(cache)
        want[:, :5] = seq.reshape(5, h, dh).transpose(1, 0, 2)
        np.testing.assert_array_equal(cache, want)
        back = np.empty_like(seq)
        self.assertEqual(LIB.ckw_f32_head_to_token_major(kt.ptr(back), kt.ptr(cache), 5, h, dh, cap, 0), 0)
        np.testing.assert_array_equal(back, seq)
        # The cache is full at row cap: appending there must fail without writing.
        before = cache.copy()
        self.assertEqual(LIB.ckw_f32_token_to_head_major(kt.ptr(cache), kt.ptr(seq), 1, h, dh, cap, cap), -1)
        np.testing.assert_array_equal(cache, before)

    def test_transposes(self):
        rng = np.random.default_rng(1)
        for c, t in [(80, 3000), (384, 1500), (1, 7), (33, 65)]:
            cm = kt.f32(rng.standard_normal((c, t)))
            tm = np.empty((t, c), np.float32)
            LIB.ckw_f32_channel_to_token_major(kt.ptr(tm), kt.ptr(cm), c, t)
            np.testing.assert_array_equal(tm, cm.T)
            cm2 = np.empty_like(cm)
            LIB.ckw_f32_token_to_channel_major(kt.ptr(cm2), kt.ptr(tm), t, c)
            np.testing.assert_array_equal(cm2, cm)

    def test_maps_are_exact_conversions(self):
        for name, frm, to in [
            ("f32_token_to_head_major", "token_major", "head_major"),
            ("f32_head_to_token_major", "head_major", "token_major"),
            ("f32_channel_to_token_major", "channel_major", "token_major"),
            ("f32_token_to_channel_major", "token_major", "channel_major"),
        ]:
            m = kt.kernel_map(f"kernels/layout/{name}.json")
            conv = m["layout_conversion"]
            self.assertEqual((conv["from_layout"], conv["to_layout"], conv["value_semantics"]), (frm, to, "exact"))
            self.assertEqual(m["provides"], f"{frm}_to_{to}")
            self.assertEqual(m["ports"]["src"]["layout"], frm)
            self.assertEqual(m["ports"]["dst"]["layout"], to)


if __name__ == "__main__":
    unittest.main()
