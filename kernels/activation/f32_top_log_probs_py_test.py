"""ckw_f32_top_log_probs through ctypes against ckw/runtime/token_choice.py's top_log_probs (the numpy
ranking of a whole log_softmax row that the beam search ran before the decoders' rank phase): the
same tokens and float32 log-probabilities on rows shaped like a decoder's, with the logit filters'
masks."""

import unittest

import numpy as np

from ckw.runtime import token_choice
from kernels.common import kernel_testing as kt

LIB = kt.Library("kernels/activation/f32_top_log_probs.json")
VOCAB = 51865


def rows(rng, n):
    """Decoder-like rows: a few tokens far above a wide bulk (confident and unsure steps), some with
    a suppress list, the text or timestamp half masked, or nearly everything masked."""
    out = []
    for i in range(n):
        x = rng.normal(-8.0, 3.0, VOCAB).astype(np.float32)
        lead = rng.integers(0, VOCAB, rng.integers(1, 12))
        x[lead] += rng.uniform(5.0, 25.0, lead.size).astype(np.float32)
        kind = i % 5
        if kind == 1:
            x[rng.integers(0, VOCAB, 90)] = -np.inf
        elif kind == 2:
            x[:50364] = -np.inf  # timestamps only
        elif kind == 3:
            x[50364:] = -np.inf
        elif kind == 4:
            keep = rng.integers(0, VOCAB, 3)
            masked = np.full(VOCAB, -np.inf, np.float32)
            masked[keep] = x[keep]
            x = masked
        out.append(x)
    return np.stack(out)


def top(x, k):
    tokens = np.empty((x.shape[0], k), np.int32)
    logprobs = np.empty((x.shape[0], k), np.float32)
    code = LIB.ckw_f32_top_log_probs(tokens, logprobs, x, x.shape[0], x.shape[1], k)
    return code, tokens, logprobs


class TopLogProbsTest(unittest.TestCase):
    def test_equals_the_numpy_ranking_on_decoder_like_rows(self):
        x = rows(np.random.default_rng(5), 60)
        for k in (1, 2, 6, 9):
            code, tokens, logprobs = top(x, k)
            self.assertEqual(code, 0)
            for r, row in enumerate(x):
                want_t, want_lp = token_choice.top_log_probs(row, k)
                np.testing.assert_array_equal(tokens[r], want_t, err_msg=f"row {r} k {k}")
                np.testing.assert_array_equal(
                    logprobs[r].view(np.uint32), want_lp.view(np.uint32), err_msg=f"row {r} k {k}"
                )

    def test_a_fully_masked_row_is_refused_with_its_reason(self):
        x = rows(np.random.default_rng(6), 2)
        x[1] = -np.inf
        code, _, _ = top(x, 3)
        self.assertEqual(code, -1)
        self.assertIn("masked", LIB.ckw_f32_top_log_probs_strerror(code).decode())


if __name__ == "__main__":
    unittest.main()
