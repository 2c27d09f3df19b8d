"""The multi-sequence decoder (decoder_paged; docs/multi-stream.md), on tiny's real weights, and
on every other layout's (bf16, the seeded sizes) the first check alone (`only=`).

- Against the beam decoder (decoder): one sequence, then five beams forked from it and reordered,
  give the old library's logits bit for bit at every step (rows computed alone take the formulas
  the old library uses for up to 8 rows).
- Batched == solo: three requests (their own encoder memories in entries, prompts of different
  lengths, forked beams) advanced together in random subsets and orders, on 2 threads, give each
  sequence the bits it gets alone on 1 thread in a fresh handle with other block ids.
- The rank phase (a beam search's candidates): on real logits of five beams, with a suppress
  list and the timestamp rules' masks, the same tokens and log-probabilities as the numpy ranking
  (ckw/runtime/token_choice.py); a row with every token masked is refused.
- The cache facts per entry: one projection per (entry, memory) whatever the batch; setting one
  entry's memory invalidates that entry alone; a decode naming an invalid or out-of-range entry,
  a position past the context or a block id outside the pool is refused before any kernel runs,
  and changes nothing.
"""

import os
import sys
import unittest

import numpy as np

from ckw.runtime import abi, token_choice
from ckw.runtime.kv_pool import BlockPool

ARGS = dict(a.split("=", 1) for a in sys.argv[1:] if "=" in a)


def lib(part):
    return abi.Library.for_model(os.path.abspath(ARGS[part]), ARGS.get("variant", "tiny"), part)


class Paged:
    """A decoder_paged handle and the block pool that feeds it."""

    def __init__(self, threads=1, first_block=0):
        self.lib = lib("decoder_paged")
        self.h = abi.Handle(self.lib, ARGS["weights"], threads=threads)
        self.vocab = self.lib.dim("n_vocab")
        self.pool = BlockPool(self.lib.dim("n_blocks"), self.lib.dim("block_rows"), self.lib.dim("seq_blocks"))
        if first_block:  # a sequence holding the lowest ids moves every id this handle uses
            filler = [self.pool.new_seq()]
            self.pool.prepare_append(filler, first_block * self.pool.block_rows)
            self.pool.commit_append(filler, first_block * self.pool.block_rows)

    def close(self):
        self.h.close()

    def set_memory(self, entry, memory):
        self.h("set_encoder_memory", entry, memory)

    def append(self, seqs, n, call):
        """Copy-on-write for n new rows in seqs, then `call(pos, table)`; commits on success."""
        src, dst = self.pool.prepare_append(seqs, n)
        try:
            if src.size:
                self.h.call_named("copy_blocks", copy_src=src, copy_dst=dst, n_copies=src.size)
            pos, table = self.pool.tables(seqs)
            out = call(pos, table)
        except BaseException:
            self.pool.abort_append()
            raise
        self.pool.commit_append(seqs, n)
        return out

    def prefill(self, seq, entry, tokens):
        tokens = np.asarray(tokens, np.int32)
        rows = np.array([tokens.size - 1], np.int32)
        logits = np.empty((1, self.vocab), np.float32)

        def call(pos, table):
            self.h.call_named(
                "prefill",
                seq_pos=int(pos[0]),
                tokens=tokens,
                block_table=table,
                seq_entry=entry,
                logit_rows=rows,
                n_logit_rows=1,
                n_tokens=tokens.size,
                cross_qk=None,
                prompt_logits=logits,
            )
            return logits[0].copy()

        return self.append([seq], tokens.size, call)

    def decode(self, seqs, entries, tokens):
        logits = np.full((len(seqs), self.vocab), np.nan, np.float32)

        def call(pos, table):
            self.h.call_named(
                "decode",
                seq_pos=pos,
                tokens=np.asarray(tokens, np.int32),
                block_table=table,
                seq_entry=np.asarray(entries, np.int32).reshape(-1, 1),
                n_seqs=len(seqs),
                logits=logits,
            )
            return logits

        return self.append(seqs, 1, call)


class PagedDecoderTest(unittest.TestCase):
    @classmethod
    def setUpClass(cls):
        enc = lib("encoder")
        eh = abi.Handle(enc, ARGS["weights"])
        rng = np.random.default_rng(3)
        cls.memories = []
        for _ in range(3):  # three requests' encoder memories, from different mels
            mel = (rng.standard_normal((enc.dim("n_mels"), 2 * enc.dim("n_ctx"))) * 0.5).astype(np.float32)
            memory = np.empty((enc.dim("n_ctx"), enc.dim("d_model")), np.float32)
            eh("run", mel, memory)
            cls.memories.append(memory)
        eh.close()
        cls.vocab = lib("decoder").dim("n_vocab")
        cls.prompts = [rng.integers(0, cls.vocab - 1000, n).astype(np.int32) for n in (3, 17, 40)]
        cls.streams = [rng.integers(0, cls.vocab - 1000, 12).astype(np.int32) for _ in range(15)]

    def paged(self, threads=1, first_block=0):
        p = Paged(threads, first_block)
        self.addCleanup(p.close)
        return p

    def test_one_sequence_then_beams_equal_the_beam_decoder(self):
        old = abi.Handle(lib("decoder"), ARGS["weights"])
        self.addCleanup(old.close)
        new = self.paged()
        memory, prompt, stream = self.memories[0], self.prompts[1], self.streams[0]
        old("set_encoder_memory", memory)
        want = np.empty((1, self.vocab), np.float32)
        old("prefill", prompt, np.array([prompt.size - 1], np.int32), 1, prompt.size, None, want)
        new.set_memory(0, memory)
        seq = new.pool.new_seq()
        self.assertEqual(new.prefill(seq, 0, prompt).tobytes(), want[0].tobytes(), "prompt logits")
        for t in stream[:3]:  # greedy-style steps of one sequence
            old("decode", np.array([t], np.int32), 1, want)
            got = new.decode([seq], [0], [t])
            self.assertEqual(got.tobytes(), want.tobytes(), f"one sequence, token {t}")
        # Five beams from it (old: reorder copies the K/V; new: forks share the blocks), then a
        # reorder that drops two beams and doubles others.
        old("reorder", np.zeros(5, np.int32), 5)
        beams = [seq.fork() for _ in range(5)]
        seq.free()
        want5 = np.empty((5, self.vocab), np.float32)
        for step, source in enumerate(([0, 1, 2, 3, 4], [0, 0, 1, 3, 3], [4, 2, 2, 0, 1])):
            if step:
                old("reorder", np.array(source, np.int32), 5)
                beams = new.pool.reorder(beams, source)
            tokens = self.streams[1 + step][:5]
            old("decode", tokens, 5, want5)
            got = new.decode(beams, [0] * 5, tokens)
            self.assertEqual(got.tobytes(), want5.tobytes(), f"five beams, step {step}")

    def test_the_rank_phase_ranks_as_numpy(self):
        p = self.paged()
        p.set_memory(0, self.memories[0])
        seq = p.pool.new_seq()
        p.prefill(seq, 0, self.prompts[0])
        beams = [seq.fork() for _ in range(5)]
        seq.free()
        logits = p.decode(beams, [0] * 5, self.streams[2][:5])
        scores = np.array(logits, copy=True)
        scores[1, ::7] = -np.inf  # a suppress list
        scores[2, self.vocab // 2 :] = -np.inf  # text only
        scores[3, : self.vocab - 10] = -np.inf  # ten tokens left
        for k in (1, 6, 9):
            tokens, logprobs = np.empty((5, k), np.int32), np.empty((5, k), np.float32)
            p.h.call_named("rank", scores=scores, n_seqs=5, n_top=k, top_tokens=tokens, top_logprobs=logprobs)
            want_t, want_lp = token_choice.top_log_probs_rows(scores, k)
            np.testing.assert_array_equal(tokens, want_t, err_msg=f"k={k}")
            np.testing.assert_array_equal(logprobs.view(np.uint32), want_lp.view(np.uint32), err_msg=f"k={k}")
        scores[4] = -np.inf
        tokens, logprobs = np.empty((5, 6), np.int32), np.empty((5, 6), np.float32)
        with self.assertRaises(abi.AbiError) as caught:
            p.h.call_named("rank", scores=scores, n_seqs=5, n_top=6, top_tokens=tokens, top_logprobs=logprobs)
        self.assertIn("masked", str(caught.exception))

    BEAMS = (1, 5, 5)  # up to 11 rows a step: past the 8 rows the GEMMs' blocked path starts at

    def run_requests(self, p, schedule, rng=None):
        """Each request r: memory r in entry 2 - r, prompt r, then its sequences (requests 1 and 2
        fork into BEAMS[r] beams after 2 steps) take their token streams; `schedule` lists which
        requests advance at each step (in that order; None: a random subset)."""
        logits = {}
        seqs, steps = {}, {}
        for r in range(3):
            p.set_memory(2 - r, self.memories[r])
            seqs[r] = [p.pool.new_seq()]
            logits[(r, 0, "prompt")] = p.prefill(seqs[r][0], 2 - r, self.prompts[r])
            steps[r] = 0
        for order in schedule:
            if order is None:
                order = [int(r) for r in rng.permutation(3)[: rng.integers(1, 4)]]
            rows, entries, tokens, who = [], [], [], []
            for r in order:
                if steps[r] == 2 and len(seqs[r]) < self.BEAMS[r]:
                    seqs[r] = p.pool.reorder(seqs[r], [0] * self.BEAMS[r])
                elif steps[r] == 4 and r == 2:  # a reorder that drops beams and doubles others
                    seqs[r] = p.pool.reorder(seqs[r], [1, 1, 0, 4, 2])
                for b, s in enumerate(seqs[r]):
                    rows.append(s)
                    entries.append(2 - r)
                    tokens.append(self.streams[5 * r + b][steps[r]])
                    who.append((r, b, steps[r]))
                steps[r] += 1
            out = p.decode(rows, entries, tokens)
            for key, row in zip(who, out):
                logits[key] = row.copy()
        return logits

    def test_batched_sequences_get_their_solo_bits(self):
        solo = {}
        for r in range(3):  # each request alone in a fresh handle, 1 thread, other block ids
            p = self.paged(threads=1, first_block=5 + r)
            got = self.run_requests(p, [[r]] * 6)
            solo.update({k: v for k, v in got.items() if k[0] == r})
        for seed in (0, 1):
            rng = np.random.default_rng(seed)
            p = self.paged(threads=2)
            batched = self.run_requests(p, [None] * 14, rng)
            compared = 0
            for key, row in batched.items():
                if key in solo:
                    self.assertEqual(row.tobytes(), solo[key].tobytes(), f"seed {seed}: request/beam/step {key}")
                    compared += 1
            self.assertGreater(compared, 10)

    def test_the_cache_facts_per_entry(self):
        p = self.paged()
        a, b = p.pool.new_seq(), p.pool.new_seq()
        self.assertEqual(p.h.query("cross_kv_projections"), 0)
        p.set_memory(0, self.memories[0])
        p.prefill(a, 0, self.prompts[0])
        p.set_memory(1, self.memories[1])
        p.prefill(b, 1, self.prompts[0])
        self.assertEqual(p.h.query("cross_kv_projections"), 2, "one projection per entry")
        c = p.pool.new_seq()  # a second sequence on entry 0: no projection, no memory needed
        p.prefill(c, 0, self.prompts[0])
        p.decode([a, b, c], [0, 1, 0], [5, 6, 7])
        self.assertEqual(p.h.query("cross_kv_projections"), 2, "decode steps and later prefills reuse entries")

        # Setting entry 1's memory invalidates entry 1 only.
        p.set_memory(1, self.memories[2])
        p.decode([a, c], [0, 0], [8, 9])
        self.assert_refused(p, [a, b], [0, 1], abi.E_CROSS_KV_INVALID)
        # A prefill of entry 0 once dropped, while the staged memory is entry 1's: memory missing.
        p.h("cross_kv_invalidate", 0)
        self.assert_refused(p, [a], [0], abi.E_CROSS_KV_INVALID)
        with self.assertRaises(abi.AbiError) as e:
            p.prefill(p.pool.new_seq(), 0, self.prompts[0])
        self.assertEqual(e.exception.code, abi.E_MISSING_INPUT)
        self.assert_refused(p, [a], [16], abi.E_ARGUMENT)  # an entry out of range
        with self.assertRaises(abi.AbiError) as e:
            p.h("cross_kv_invalidate", 16)
        self.assertEqual(e.exception.code, abi.E_ARGUMENT)

    def assert_refused(self, p, seqs, entries, code):
        lengths = [s.length for s in seqs]
        with self.assertRaises(abi.AbiError) as e:
            p.decode(seqs, entries, [1] * len(seqs))
        self.assertEqual(e.exception.code, code, e.exception)
        self.assertEqual([s.length for s in seqs], lengths)

    def test_refused_calls_change_nothing(self):
        ref = self.paged()
        p = self.paged()
        for q in (ref, p):
            q.set_memory(0, self.memories[0])
            q.seq = q.pool.new_seq()
            q.prefill(q.seq, 0, self.prompts[2])
        pos, table = p.pool.tables([p.seq])
        logits = np.full((1, self.vocab), np.nan, np.float32)
        bad = [
            ("a position past the context", dict(seq_pos=np.array([448], np.int32)), abi.E_CONTEXT_FULL),
            ("a negative position", dict(seq_pos=np.array([-1], np.int32)), abi.E_CONTEXT_FULL),
            (
                "a block id outside the pool",
                dict(block_table=np.where(table == table[0, 0], 2048, table)),
                abi.E_ARGUMENT,
            ),
            ("an entry out of range", dict(seq_entry=np.array([[-1]], np.int32)), abi.E_ARGUMENT),
        ]
        for what, change, code in bad:
            args = dict(
                seq_pos=pos,
                tokens=np.array([3], np.int32),
                block_table=table,
                seq_entry=np.array([[0]], np.int32),
                n_seqs=1,
                logits=logits,
            )
            args.update(change)
            with self.assertRaises(abi.AbiError, msg=what) as e:
                p.h.call_named("decode", **args)
            self.assertEqual(e.exception.code, code, what)
            self.assertTrue(np.isnan(logits).all(), f"{what}: logits written")
        for t in self.streams[4][:3]:  # the refusals left the cache as it was
            self.assertEqual(p.decode([p.seq], [0], [t]).tobytes(), ref.decode([ref.seq], [0], [t]).tobytes())


if __name__ == "__main__":
    only = ARGS.get("only")
    unittest.main(argv=[sys.argv[0]] + ([f"PagedDecoderTest.{only}"] if only else []))
