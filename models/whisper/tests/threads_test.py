"""The handles' worker threads (tiny): the same bits for any thread count, and several handles
running at once in several Python threads (ctypes releases the GIL during a call).

Calls whose kernel map declares a split run in chunks over outputs only (tools/codegen/README.md,
"Threads"), so the encoder memory and every decoder logit must be byte-identical for 1, 2 and 3
threads: the encoder's GEMMs split over rows, its attention over query rows; the decoder's
prefill of a long prompt does the same, a one-token step splits its GEMMs (and the vocabulary
projection) over output columns.
"""

import os
import sys
import threading
import unittest

import numpy as np

from ckw.runtime import abi

ARGS = dict(a.split("=", 1) for a in sys.argv[1:] if "=" in a)


def run_model(threads: int, mel: np.ndarray):
    """Encoder memory, then decoder logits for a long prompt, a short one, a one-token prompt and
    decode steps; every handle with `threads` threads."""
    enc = abi.Library.for_model(os.path.abspath(ARGS["encoder"]), "tiny", "encoder")
    dec = abi.Library.for_model(os.path.abspath(ARGS["decoder"]), "tiny", "decoder")
    eh = abi.Handle(enc, ARGS["weights"], threads=threads)
    dh = abi.Handle(dec, ARGS["weights"], threads=threads)
    try:
        assert eh.num_threads == threads and dh.num_threads == threads, (eh.num_threads, dh.num_threads)
        memory = np.empty((enc.dim("n_ctx"), enc.dim("d_model")), np.float32)
        eh("run", mel, memory)
        dh("set_encoder_memory", memory)
        vocab = dec.dim("n_vocab")
        out = {"memory": memory}
        rng = np.random.default_rng(7)
        # >= 2 chunks of rows; one chunk; the one-row (column split) path. The logits of every
        # prompt row for 70 tokens, of two rows (reversed) for 3.
        for n, rows in ((70, np.arange(70)), (3, np.array([2, 0])), (1, np.array([0]))):
            tokens = rng.integers(0, vocab - 1000, n).astype(np.int32)
            logits = np.empty((rows.size, vocab), np.float32)
            dh("reset")
            dh("prefill", tokens, rows.astype(np.int32), rows.size, n, None, logits)
            out[f"prefill{n}"] = logits
            for k, t in enumerate((11, 220, 1000)):
                step = np.empty((1, vocab), np.float32)
                dh("decode", np.array([t], np.int32), 1, step)
                out[f"prefill{n}_decode{k}"] = step
            # Five beams at once (every GEMM with M = 5), after copying the prompt's K/V to them.
            dh("reorder", np.zeros(5, np.int32), 5)
            beams = np.empty((5, vocab), np.float32)
            dh("decode", np.array([11, 220, 1000, 13, 0], np.int32), 5, beams)
            out[f"prefill{n}_beams"] = beams
        return out
    finally:
        eh.close()
        dh.close()


class ThreadsTest(unittest.TestCase):
    @classmethod
    def setUpClass(cls):
        enc = abi.Library.for_model(os.path.abspath(ARGS["encoder"]), "tiny", "encoder")
        rng = np.random.default_rng(0)
        cls.mel = (rng.standard_normal((enc.dim("n_mels"), 2 * enc.dim("n_ctx"))) * 0.5).astype(np.float32)
        cls.one = run_model(1, cls.mel)

    def assert_same_bits(self, got, label):
        self.assertEqual(sorted(got), sorted(self.one))
        for name, want in self.one.items():
            self.assertTrue(np.isfinite(want).all(), name)
            self.assertEqual(want.tobytes(), got[name].tobytes(), f"{label}: {name} differs from 1 thread")

    def test_two_and_three_threads_give_the_same_bits(self):
        for threads in (2, 3):
            self.assert_same_bits(run_model(threads, self.mel), f"{threads} threads")

    def test_handles_in_two_python_threads_at_once(self):
        results, errors = {}, []

        def work(i):
            try:
                results[i] = run_model(2, self.mel)
            except BaseException as e:  # noqa: BLE001 (reported below)
                errors.append(e)

        workers = [threading.Thread(target=work, args=(i,)) for i in range(2)]
        for w in workers:
            w.start()
        for w in workers:
            w.join()
        self.assertEqual(errors, [])
        for i in range(2):
            self.assert_same_bits(results[i], f"concurrent handle {i}")

    def test_default_thread_count(self):
        lib = abi.Library.for_model(os.path.abspath(ARGS["decoder"]), "tiny", "decoder")
        old = os.environ.pop("CKW_NUM_THREADS", None)
        try:
            h = abi.Handle(lib, ARGS["weights"])
            self.assertEqual(h.num_threads, min(len(os.sched_getaffinity(0)), 8))
            h.close()
            os.environ["CKW_NUM_THREADS"] = "1"
            h = abi.Handle(lib, ARGS["weights"])
            self.assertEqual(h.num_threads, 1)
            h.close()
        finally:
            os.environ.pop("CKW_NUM_THREADS", None)
            if old is not None:
                os.environ["CKW_NUM_THREADS"] = old
        with self.assertRaises(abi.AbiError) as e:
            abi.Handle(lib, ARGS["weights"], threads=-1)
        self.assertEqual(e.exception.code, abi.E_ARGUMENT)


if __name__ == "__main__":
    unittest.main(argv=sys.argv[:1])
