"""ckw/runtime/kv_pool.py: the paged self-K/V pool's bookkeeping and the cross-K/V entries.

The property test drives a pool through random operations (new, fork, free, append with commit or
abort, reorder) next to a model that keeps each sequence's rows as the values written, and a
simulated pool of rows that the append writes the way the C decoder will (copies first, then each
sequence's new rows at its table position). It checks, the numbers used in the comments below:
(1) every block a sequence writes in a step is held by that sequence alone; (2) every sequence
reads its own history back through its table, after forks, reorders and aborted appends (the
proof that the copy-on-write is right); (3) refcounts equal the live holders, free + used ==
n_blocks; (4) a refused append (OutOfBlocks, the context capacity, an aborted C call) leaves the
pool and every sequence as they were; (5) freeing everything returns every block.
"""

import collections

import numpy as np
import pytest
from hypothesis import settings
from hypothesis import strategies as st
from hypothesis.stateful import RuleBasedStateMachine, initialize, invariant, precondition, rule

from ckw.runtime.kv_pool import BlockPool, EntryPool, OutOfBlocks, OutOfEntries, Seq, bytes_per_block


def expected_blocks(pool: BlockPool, seqs: list[Seq], n: int) -> int:
    """Blocks an append must take, counted another way: the new slots, plus one copy per holder
    of a shared partial last block in the call, less one when every holder is in the call."""
    R = pool.block_rows
    slots = sum(-(-(s.length + n) // R) - len(s.blocks) for s in seqs)
    in_call = collections.Counter(s.blocks[-1] for s in seqs if s.length % R)
    refs = pool.refcounts()
    copies = sum(c - (c == refs[b]) for b, c in in_call.items())
    return slots + copies


def snapshot(pool: BlockPool, seqs) -> tuple:
    return pool.refcounts().tolist(), pool.n_free, [(s.length, s.blocks, s.live) for s in seqs]


class PoolMachine(RuleBasedStateMachine):
    @initialize(
        n_blocks=st.integers(1, 16),
        block_rows=st.integers(1, 4),
        seq_blocks=st.integers(1, 6),
        prompt=st.integers(0, 7),
        beams=st.integers(0, 4),
    )
    def make_pool(self, n_blocks, block_rows, seq_blocks, prompt, beams):
        self.pool = BlockPool(n_blocks, block_rows, seq_blocks)
        self.rows = np.full((n_blocks, block_rows), -1, np.int64)  # the simulated K/V pool: one value a row
        self.model: dict[Seq, list[int]] = {}  # live sequence -> the values of its rows, in order
        self.next_value = 0
        # Start most runs from beams sharing a prompt, where copy-on-write has work to do.
        root = self.pool.new_seq()
        self.model[root] = []
        prompt = min(prompt, self.pool.capacity, n_blocks * block_rows)
        if prompt:
            self.append_rows([root], prompt, "commit")
        for _ in range(beams):
            self.model[root.fork()] = list(self.model[root])

    def pick(self, data, min_size=1):
        return data.draw(st.lists(st.sampled_from(list(self.model)), min_size=min_size, unique_by=id))

    @rule()
    def new(self):
        self.model[self.pool.new_seq()] = []

    @precondition(lambda self: self.model)
    @rule(data=st.data())
    def fork(self, data):
        seq = data.draw(st.sampled_from(list(self.model)))
        self.model[seq.fork()] = list(self.model[seq])

    @precondition(lambda self: self.model)
    @rule(data=st.data())
    def free(self, data):
        seq = data.draw(st.sampled_from(list(self.model)))
        seq.free()
        del self.model[seq]
        with pytest.raises(ValueError, match="was freed"):
            seq.free()

    @precondition(lambda self: self.model)
    @rule(data=st.data())
    def reorder(self, data):
        seqs = self.pick(data)
        self.reorder_seqs(seqs, data.draw(st.lists(st.integers(0, len(seqs) - 1), max_size=len(seqs) + 2)))

    @precondition(lambda self: self.model)
    @rule(data=st.data())
    def beam_step(self, data):
        # Beam search: every beam takes a row, then the best ones go on (and share their blocks).
        beams = self.pick(data)
        if self.append_rows(beams, 1, "commit"):
            self.reorder_seqs(
                beams, data.draw(st.lists(st.integers(0, len(beams) - 1), min_size=1, max_size=len(beams)))
            )

    def reorder_seqs(self, seqs, source):
        new = self.pool.reorder(seqs, source)
        assert len(new) == len(source) and all(s.live for s in new)
        assert not any(s.live for s in seqs)
        histories = [self.model.pop(s) for s in seqs]
        for s, i in zip(new, source):
            self.model[s] = list(histories[i])

    @precondition(lambda self: self.model)
    @rule(data=st.data(), outcome=st.sampled_from(["commit"] * 4 + ["refused before the copies", "refused after"]))
    def append(self, data, outcome):
        seqs = self.pick(data, min_size=0)
        n = data.draw(st.just(1) | st.integers(1, self.pool.capacity + 1))  # mostly decode steps
        self.append_rows(seqs, n, outcome)

    def append_rows(self, seqs, n, outcome) -> bool:
        """Appends n rows to each of seqs as the decoder will; True if they were written."""
        pool = self.pool
        before = snapshot(pool, self.model)
        refs_before = pool.refcounts()
        needed = expected_blocks(pool, seqs, n)

        if any(s.length + n > pool.capacity for s in seqs):
            with pytest.raises(ValueError, match="the context holds"):
                pool.prepare_append(seqs, n)
            assert snapshot(pool, self.model) == before  # (4) refused: nothing changed
            return False
        if needed > pool.n_free:
            with pytest.raises(OutOfBlocks) as refused:
                pool.prepare_append(seqs, n)
            assert (refused.value.needed, refused.value.free) == (needed, pool.n_free)
            assert snapshot(pool, self.model) == before  # (4)
            return False
        src, dst = pool.prepare_append(seqs, n)
        assert src.dtype == dst.dtype == np.int32 and len(src) == len(dst)
        refs = pool.refcounts()

        # The new blocks are the lowest free ids, exactly as many as needed.
        taken = np.flatnonzero((refs_before == 0) & (refs > 0))
        assert taken.tolist() == np.flatnonzero(refs_before == 0)[:needed].tolist()

        # (1) Every block a sequence writes in this step is held by it alone; so no pool row is written
        # twice. The copies go to fresh blocks, from blocks someone still holds, never onto a source.
        pos, table = pool.tables(seqs)
        assert pos.tolist() == [s.length for s in seqs]  # lengths advance only at commit
        R = pool.block_rows
        written = [(table[b, p // R], p % R) for b in range(len(seqs)) for p in range(pos[b], pos[b] + n)]
        assert all(refs[block] == 1 for block, _ in written), (written, refs)
        assert len(set(written)) == len(written)
        assert len(set(dst.tolist())) == len(dst) and not set(dst.tolist()) & set(src.tolist())
        assert all(refs[new] == 1 and refs_before[new] == 0 and refs[old] >= 1 for old, new in zip(src, dst))

        # The C side: the copies (all read before any is written), then each sequence's rows.
        if outcome != "refused before the copies":
            self.rows[dst] = self.rows[src]
        if outcome != "commit":  # a refused decode call writes nothing
            pool.abort_append()
            assert snapshot(pool, self.model) == before
            return False
        for b, s in enumerate(seqs):
            for t in range(n):
                p = pos[b] + t
                self.rows[table[b, p // R], p % R] = self.next_value
                self.model[s].append(self.next_value)
                self.next_value += 1
        pool.commit_append(seqs, n)
        return True

    @invariant()
    def refcounts_count_holders(self):
        # (3) A block's refcount is the number of live sequences holding it; free + used == n_blocks.
        pool = self.pool
        holders = collections.Counter(b for s in self.model for b in s.blocks)
        refs = pool.refcounts()
        assert refs.tolist() == [holders[b] for b in range(pool.n_blocks)]
        assert pool.n_free + pool.n_used == pool.n_blocks and pool.n_used == len(holders)
        assert sorted(pool._free) == [b for b in range(pool.n_blocks) if not holders[b]]
        for s, history in self.model.items():
            assert s.length == len(history) and len(s.blocks) == -(-s.length // pool.block_rows)
            assert len(set(s.blocks)) == len(s.blocks)

    @invariant()
    def every_sequence_reads_its_history(self):
        # (2) Through its table, each sequence reads exactly the rows it wrote, forks and reorders included.
        if not self.model:
            return
        seqs = list(self.model)
        pos, table = self.pool.tables(seqs)
        R = self.pool.block_rows
        for b, s in enumerate(seqs):
            assert np.array_equal(table[b], s.table_row())
            assert not table[b, len(s.blocks) :].any()  # unused slots padded with 0
            j = np.arange(pos[b])
            assert self.rows[table[b, j // R], j % R].tolist() == self.model[s], f"{s!r} wrote {self.model[s]}"

    def teardown(self):
        # (5) Freeing everything returns every block, and the lowest ids are handed out first again.
        if not hasattr(self, "pool"):
            return
        if self.pool._pending is not None:  # a failed check mid-append: keep that failure the one reported
            self.pool.abort_append()
        for s in self.model:
            s.free()
        assert self.pool.n_free == self.pool.n_blocks and not self.pool.refcounts().any()
        k = min(self.pool.seq_blocks, self.pool.n_blocks)
        s = self.pool.new_seq()
        self.pool.prepare_append([s], k * self.pool.block_rows)
        assert s.blocks == list(range(k))


PoolMachine.TestCase.settings = settings(
    max_examples=300, stateful_step_count=50, deadline=None, database=None, derandomize=True
)
TestPoolMachine = PoolMachine.TestCase


def test_fork_then_append_copies_the_shared_partial_block_once():
    pool = BlockPool(n_blocks=8, block_rows=4, seq_blocks=4)
    a = pool.new_seq()
    src, dst = pool.prepare_append([a], 5)  # a prefill of 5 rows: blocks 0 and 1 (1 row in block 1)
    assert (src.size, dst.size) == (0, 0) and a.blocks == [0, 1]
    pool.commit_append([a], 5)
    b = a.fork()
    assert pool.refcounts()[:2].tolist() == [2, 2]
    src, dst = pool.prepare_append([a, b], 1)  # both write row 5: a copies block 1, b (the last holder) writes it
    assert (src.tolist(), dst.tolist()) == ([1], [2])
    pos, table = pool.tables([a, b])
    assert pos.tolist() == [5, 5]
    assert table.tolist() == [[0, 2, 0, 0], [0, 1, 0, 0]]
    pool.commit_append([a, b], 1)
    assert (a.length, b.length) == (6, 6) and pool.refcounts()[:3].tolist() == [2, 1, 1]


def test_a_shared_block_held_outside_the_call_is_always_copied():
    pool = BlockPool(n_blocks=8, block_rows=4, seq_blocks=4)
    a = pool.new_seq()
    pool.prepare_append([a], 2)
    pool.commit_append([a], 2)
    b = a.fork()
    src, dst = pool.prepare_append([b], 1)
    assert (src.tolist(), dst.tolist()) == ([0], [1]) and b.blocks == [1] and a.blocks == [0]
    pool.abort_append()  # refused: b holds block 0 again and block 1 is free
    assert b.blocks == [0] and pool.refcounts()[:2].tolist() == [2, 0] and pool.n_free == 7


def test_reorder_moves_references_and_copies_nothing():
    pool = BlockPool(n_blocks=8, block_rows=4, seq_blocks=4)
    beams = [pool.new_seq()]
    pool.prepare_append(beams, 6)
    pool.commit_append(beams, 6)
    beams = pool.reorder(beams, [0, 0, 0])
    assert [s.blocks for s in beams] == [[0, 1]] * 3 and pool.refcounts()[:2].tolist() == [3, 3]
    beams = pool.reorder(beams, [2, 2])
    assert pool.refcounts()[:2].tolist() == [2, 2] and pool.n_used == 2
    src, dst = pool.prepare_append(beams, 1)
    assert (src.tolist(), dst.tolist()) == ([1], [2])  # one copy for two holders of the partial block


def test_out_of_blocks_says_how_many_and_changes_nothing():
    pool = BlockPool(n_blocks=2, block_rows=4, seq_blocks=4)
    s = pool.new_seq()
    with pytest.raises(OutOfBlocks, match="needs 3 free blocks and has 2; nothing was changed") as refused:
        pool.prepare_append([s], 9)
    assert (refused.value.needed, refused.value.free) == (3, 2)
    assert s.blocks == [] and pool.n_free == 2
    pool.prepare_append([s], 8)  # not in flight after the refusal


def test_the_context_capacity_is_refused_before_anything_changes():
    pool = BlockPool(n_blocks=8, block_rows=4, seq_blocks=2)
    a, b = pool.new_seq(), pool.new_seq()
    pool.prepare_append([a], 7)
    pool.commit_append([a], 7)
    with pytest.raises(
        ValueError,
        match=r"a sequence of 7 rows cannot take 2 more: the context holds 8 rows "
        r"\(2 blocks of 4\); nothing was changed",
    ):
        pool.prepare_append([b, a], 2)
    assert b.blocks == [] and a.length == 7 and pool.n_free == 6


def test_misuse_is_refused_with_a_clear_message():
    pool = BlockPool(n_blocks=8, block_rows=4, seq_blocks=4)
    a = pool.new_seq()
    with pytest.raises(ValueError, match="a sequence appears twice in one call"):
        pool.prepare_append([a, a], 1)
    with pytest.raises(ValueError, match="n must be a positive integer, got 0"):
        pool.prepare_append([a], 0)
    with pytest.raises(ValueError, match="is not a sequence of this pool"):
        BlockPool(4, 4, 4).tables([a])
    with pytest.raises(ValueError, match="commit_append without prepare_append"):
        pool.commit_append([a], 1)
    with pytest.raises(ValueError, match="abort_append without prepare_append"):
        pool.abort_append()
    with pytest.raises(ValueError, match=r"reorder source \[0, 1\] has an index outside 0..0"):
        pool.reorder([a], [0, 1])
    assert a.live and pool.n_free == 8

    pool.prepare_append([a], 1)
    with pytest.raises(
        ValueError,
        match=r"commit_append\(1 sequences, 2 rows\) does not match the prepared "
        r"append \(1 sequences, 1 rows\)",
    ):
        pool.commit_append([a], 2)
    for call in (lambda: pool.prepare_append([a], 1), a.fork, a.free, lambda: pool.reorder([a], [0])):
        with pytest.raises(ValueError, match="while an append is in flight: call commit_append or abort_append"):
            call()
    pool.commit_append([a], 1)

    a.free()
    for call in (a.free, a.fork, a.table_row, lambda: pool.tables([a])):
        with pytest.raises(ValueError, match=r"Seq\(length=1, blocks=\[\], freed\) was freed"):
            call()
    with pytest.raises(ValueError, match="block_rows must be a positive integer, got 0"):
        BlockPool(4, 0, 4)


def test_entries_go_lowest_first_and_run_out_cleanly():
    entries = EntryPool(3)
    assert [entries.acquire() for _ in range(3)] == [0, 1, 2]
    with pytest.raises(OutOfEntries, match="all 3 cross-K/V entries are in use"):
        entries.acquire()
    entries.release(2)
    entries.release(0)
    assert (entries.n_free, entries.n_used) == (2, 1)
    assert entries.acquire() == 0
    with pytest.raises(ValueError, match=r"cross-K/V entry 2 is not in use \(entries are 0..2\)"):
        entries.release(2)
    with pytest.raises(ValueError, match="entry 7 is not in use"):
        entries.release(7)
    with pytest.raises(ValueError, match="max_entries must be a positive integer"):
        EntryPool(0)


def test_bytes_per_block_matches_the_design_figures():
    # docs/multi-stream.md: tiny (4 layers, 6 heads of 64, f32) has 196 KB per 16-row self-K/V block
    # and 18.4 MB per 1500-row cross-K/V entry.
    assert bytes_per_block(16, n_layers=4, n_heads=6, head_dim=64, itemsize=4) == 196_608
    assert bytes_per_block(1500, n_layers=4, n_heads=6, head_dim=64, itemsize=4) == 18_432_000
