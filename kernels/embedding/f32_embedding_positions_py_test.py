"""Token embedding + learned positions through ctypes: bit-exact against numpy at an offset,
full Whisper vocab sizes, and every error code with y left untouched; the _rows maps (a
position per sequence) against the scalar-offset maps of their dtype."""

import unittest

import numpy as np

from kernels.common import kernel_testing as kt

LIB = kt.Library("kernels/embedding/f32_embedding_positions.json")
F = LIB.ckw_f32_embedding_positions


def run(tokens, table, pos, offset, t=None):
    t = len(tokens) if t is None else t
    y = np.full((max(t, 1), table.shape[1]), -7.0, np.float32)
    rc = F(
        kt.ptr(y),
        kt.ptr(tokens),
        kt.ptr(table),
        kt.ptr(pos),
        1,
        t,
        table.shape[1],
        table.shape[0],
        pos.shape[0],
        offset,
    )
    return rc, y


class EmbeddingTest(unittest.TestCase):
    def test_exact_at_offset(self):
        rng = np.random.default_rng(3)
        for vocab in (51864, 51865):
            table = kt.f32(rng.standard_normal((vocab, 8)))
            pos = kt.f32(rng.standard_normal((448, 8)))
            tokens = np.array([vocab - 1, 0, 50257, 220], np.int32)
            for offset in (0, 17, 444):
                rc, y = run(tokens, table, pos, offset)
                self.assertEqual(rc, 0)
                np.testing.assert_array_equal(y, table[tokens] + pos[offset : offset + 4])

    def test_errors_leave_y_untouched(self):
        table = kt.f32(np.ones((10, 4)))
        pos = kt.f32(np.ones((6, 4)))
        cases = [([10], 0, -1), ([-1], 0, -1), ([1, 2], 5, -2), ([1], -1, -2), ([1] * 7, 0, -2)]
        for toks, offset, want in cases:
            rc, y = run(np.array(toks, np.int32), table, pos, offset)
            self.assertEqual(rc, want, (toks, offset))
            self.assertTrue(np.all(y == -7.0))
            self.assertIn(b"n", LIB.ckw_f32_embedding_positions_strerror(rc))

    def test_map_declares_error_codes(self):
        m = kt.kernel_map("kernels/embedding/f32_embedding_positions.json")
        self.assertEqual(m["provides"], "embedding_positions")
        self.assertEqual(m["ports"]["tokens"]["dtype"], "i32")
        self.assertEqual(set(m["returns"]["errors"]), {"-1", "-2", "-3"})

    def test_rows_maps_differ_only_by_the_position_per_sequence(self):
        for dtype in ("f32", "f16", "bf16"):
            base = kt.kernel_map(f"kernels/embedding/{dtype}_embedding_positions.json")
            rows = kt.kernel_map(f"kernels/embedding/{dtype}_embedding_positions_rows.json")
            self.assertEqual(rows["provides"], "embedding_positions_rows")
            self.assertEqual(rows["ports"]["pos"]["dtype"], "i32")
            self.assertEqual(rows["ports"]["pos"]["shape"], ["B"])
            self.assertEqual([d for d in base["dims"] if d != "offset"], rows["dims"])
            self.assertEqual({k: v for k, v in rows["ports"].items() if k != "pos"}, base["ports"])
            for key in ("header", "library"):
                self.assertEqual(rows[key], base[key])
            self.assertEqual(rows["returns"]["strerror"], base["returns"]["strerror"])


if __name__ == "__main__":
    unittest.main()
