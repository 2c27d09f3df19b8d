"""Host-side bookkeeping of the paged self-K/V pool and the cross-K/V entries (docs/multi-stream.md §6).

The paged decoder keeps every sequence's self-K/V rows in one pool of fixed-size blocks: row j of a
sequence is row j % block_rows of block table[j // block_rows]. Forked sequences (beams) share
blocks by reference. A block is written only by a sequence that holds it alone, so a shared
partial last block is first copied into a fresh block (copy-on-write). This module never touches
rows: it hands the C decoder positions, block tables and a list of block copies.

The append protocol (one append in flight per pool):

    src, dst = pool.prepare_append(seqs, n)  # blocks allocated, shared last blocks swapped; lengths unchanged
    pos, table = pool.tables(seqs)           # pos[b]: rows already cached, where the n new rows go
    # C: copy_blocks(src, dst), then the call that writes rows pos[b] .. pos[b] + n - 1
    pool.commit_append(seqs, n)              # the rows are written: the lengths advance
    # or, if the C call was refused: pool.abort_append() restores the state before prepare_append

Lengths advance only at commit, so `tables` gives the C call the positions it needs. Between
prepare and commit/abort the pool refuses every other change but `new_seq` (another append,
fork, free, reorder), so a copy source is never freed and reused before the copy has run.
The pool is not thread-safe: one owner (the scheduler) drives it.
"""

import heapq

import numpy as np


class OutOfBlocks(RuntimeError):
    """The pool cannot supply the blocks an append needs. Nothing was changed: the scheduler can
    wait for sequences to finish, or preempt some, and try again."""

    def __init__(self, needed: int, free: int):
        super().__init__(
            f"the K/V block pool cannot supply this append: it needs {needed} free blocks "
            f"and has {free}; nothing was changed (wait for sequences to finish or preempt some)"
        )
        self.needed = needed
        self.free = free


class OutOfEntries(RuntimeError):
    """Every cross-K/V entry is in use."""

    def __init__(self, max_entries: int):
        super().__init__(
            f"all {max_entries} cross-K/V entries are in use; release one (finish or "
            f"cancel a request) before starting another"
        )
        self.max_entries = max_entries


def bytes_per_block(rows: int, n_layers: int, n_heads: int, head_dim: int, itemsize: int) -> int:
    """Bytes of K and V over all layers in one block of `rows` rows: a self-K/V block has
    block_rows rows, a cross-K/V entry is one block of n_audio rows."""
    return 2 * n_layers * n_heads * rows * head_dim * itemsize


def _positive(**values: int) -> None:
    for name, value in values.items():
        if not isinstance(value, (int, np.integer)) or isinstance(value, bool) or value < 1:
            raise ValueError(f"{name} must be a positive integer, got {value!r}")


class Seq:
    """One sequence's cached rows: `length` rows in `blocks` (block i holds rows i*R .. i*R + R - 1).
    Made by BlockPool.new_seq, fork or reorder; freeing it twice, or using it once freed, is an error."""

    def __init__(self, pool: "BlockPool", blocks: list[int], length: int):
        self._pool = pool
        self._blocks = blocks
        self._length = length
        self._live = True

    @property
    def live(self) -> bool:
        return self._live

    @property
    def length(self) -> int:
        return self._length

    @property
    def blocks(self) -> list[int]:
        return list(self._blocks)

    def fork(self) -> "Seq":
        """A new sequence with the same rows, sharing every block (no rows are copied)."""
        self._pool._check_idle("fork")
        self._pool._check_seqs([self])
        for b in self._blocks:
            self._pool._refs[b] += 1
        return Seq(self._pool, list(self._blocks), self._length)

    def free(self) -> None:
        """Drops this sequence's references; a block no one holds goes back to the free list."""
        self._pool._check_idle("free")
        self._pool._check_seqs([self])
        self._live = False
        for b in self._blocks:
            self._pool._release(b)
        self._blocks = []

    def table_row(self) -> np.ndarray:
        """The block table row the C call reads: int32 [seq_blocks], unused slots 0."""
        self._pool._check_seqs([self])
        row = np.zeros(self._pool.seq_blocks, np.int32)
        row[: len(self._blocks)] = self._blocks
        return row

    def __repr__(self) -> str:
        return f"Seq(length={self._length}, blocks={self._blocks}{'' if self._live else ', freed'})"


class BlockPool:
    """`n_blocks` blocks of `block_rows` rows; a sequence holds at most `seq_blocks` of them."""

    def __init__(self, n_blocks: int, block_rows: int, seq_blocks: int):
        _positive(n_blocks=n_blocks, block_rows=block_rows, seq_blocks=seq_blocks)
        self.n_blocks, self.block_rows, self.seq_blocks = int(n_blocks), int(block_rows), int(seq_blocks)
        self.capacity = self.seq_blocks * self.block_rows  # rows per sequence: the decoder's n_ctx
        self._refs = [0] * self.n_blocks
        self._free = list(range(self.n_blocks))  # a heap: the lowest id first, so runs are reproducible
        self._pending = None  # (seqs, n, undo steps) of the append between prepare and commit/abort

    @property
    def n_free(self) -> int:
        return len(self._free)

    @property
    def n_used(self) -> int:
        return self.n_blocks - len(self._free)

    def refcounts(self) -> np.ndarray:
        """int32 [n_blocks]: how many sequences hold each block (0: free)."""
        return np.array(self._refs, np.int32)

    def new_seq(self) -> Seq:
        return Seq(self, [], 0)

    def prepare_append(self, seqs: list[Seq], n: int) -> tuple[np.ndarray, np.ndarray]:
        """Makes room for n new rows in each of `seqs` (1 for a decode step, the prompt for a
        prefill) and returns the copies (src, dst), int32 arrays, to run before the C call writes
        them. All or nothing: on ValueError or OutOfBlocks no sequence and no block changed."""
        self._check_idle("prepare_append")
        self._check_seqs(seqs)
        _positive(n=n)
        for s in seqs:
            if s._length + n > self.capacity:
                raise ValueError(
                    f"a sequence of {s._length} rows cannot take {n} more: the context holds "
                    f"{self.capacity} rows ({self.seq_blocks} blocks of {self.block_rows}); "
                    f"nothing was changed"
                )
        # Plan before changing anything. A shared partial last block gets a fresh block and a copy,
        # except for the last of its holders in this call: once the others have left, it writes in
        # place (the copies run before the writes, so they still see the old rows).
        R = self.block_rows
        holders = {}  # block -> holders left as the plan moves the earlier ones away
        plan = []  # (seq, slot, block it replaces or None for a new slot)
        for s in seqs:
            if s._length % R:
                last = s._blocks[-1]
                left = holders.setdefault(last, self._refs[last])
                if left > 1:
                    holders[last] = left - 1
                    plan.append((s, len(s._blocks) - 1, last))
            plan.extend((s, slot, None) for slot in range(len(s._blocks), -(-(s._length + n) // R)))
        if len(plan) > len(self._free):
            raise OutOfBlocks(len(plan), len(self._free))

        undo, src, dst = [], [], []
        for s, slot, old in plan:
            new = heapq.heappop(self._free)
            self._refs[new] = 1
            if old is None:
                s._blocks.append(new)
            else:
                s._blocks[slot] = new
                self._refs[old] -= 1  # stays >= 1: another holder keeps the rows the copy reads
                src.append(old)
                dst.append(new)
            undo.append((s, slot, old, new))
        self._pending = (list(seqs), n, undo)
        return np.array(src, np.int32), np.array(dst, np.int32)

    def commit_append(self, seqs: list[Seq], n: int) -> None:
        """The C call wrote the n rows of the prepared append: the lengths advance."""
        pending = self._pending
        if pending is None:
            raise ValueError("commit_append without prepare_append")
        if n != pending[1] or len(seqs) != len(pending[0]) or any(a is not b for a, b in zip(seqs, pending[0])):
            raise ValueError(
                f"commit_append({len(seqs)} sequences, {n} rows) does not match the prepared "
                f"append ({len(pending[0])} sequences, {pending[1]} rows)"
            )
        for s in seqs:
            s._length += n
        self._pending = None

    def abort_append(self) -> None:
        """The C call was refused: every block and sequence goes back to its state before prepare."""
        if self._pending is None:
            raise ValueError("abort_append without prepare_append")
        for s, slot, old, new in reversed(self._pending[2]):
            if old is None:
                s._blocks.pop()
            else:
                s._blocks[slot] = old
                self._refs[old] += 1
            self._release(new)
        self._pending = None

    def tables(self, seqs: list[Seq]) -> tuple[np.ndarray, np.ndarray]:
        """(pos int32 [S], table int32 [S, seq_blocks]) for a C call over `seqs`."""
        self._check_seqs(seqs)
        pos = np.array([s._length for s in seqs], np.int32)
        table = np.zeros((len(seqs), self.seq_blocks), np.int32)
        for row, s in zip(table, seqs):
            row[: len(s._blocks)] = s._blocks
        return pos, table

    def reorder(self, seqs: list[Seq], source) -> list[Seq]:
        """Beam reorder: new[i] = seqs[source[i]].fork(), then the old sequences are freed. Blocks
        are shared by reference: no rows are copied here (copy-on-write does it at the next append)."""
        self._check_idle("reorder")
        self._check_seqs(seqs)
        source = [int(i) for i in source]
        if any(not 0 <= i < len(seqs) for i in source):
            raise ValueError(f"reorder source {source} has an index outside 0..{len(seqs) - 1}")
        new = [seqs[i].fork() for i in source]
        for s in seqs:
            s.free()
        return new

    def _release(self, b: int) -> None:
        self._refs[b] -= 1
        if self._refs[b] == 0:
            heapq.heappush(self._free, b)

    def _check_idle(self, what: str) -> None:
        if self._pending is not None:
            raise ValueError(f"{what} while an append is in flight: call commit_append or abort_append first")

    def _check_seqs(self, seqs: list[Seq]) -> None:
        for s in seqs:
            if not isinstance(s, Seq) or s._pool is not self:
                raise ValueError(f"{s!r} is not a sequence of this pool")
            if not s._live:
                raise ValueError(f"{s!r} was freed")
        if len({id(s) for s in seqs}) != len(seqs):
            raise ValueError("a sequence appears twice in one call")


class EntryPool:
    """Cross-K/V entry indices, one per request (all its beams read it). The request acquires one
    for its encoder memory and releases it when it finishes or is cancelled, after the decoder
    invalidated the entry, so a reused index never reads stale K/V."""

    def __init__(self, max_entries: int):
        _positive(max_entries=max_entries)
        self.max_entries = int(max_entries)
        self._free = list(range(self.max_entries))  # a heap, as BlockPool's
        self._used = set()

    @property
    def n_free(self) -> int:
        return len(self._free)

    @property
    def n_used(self) -> int:
        return len(self._used)

    def acquire(self) -> int:
        """The lowest free entry; OutOfEntries when all are in use."""
        if not self._free:
            raise OutOfEntries(self.max_entries)
        e = heapq.heappop(self._free)
        self._used.add(e)
        return e

    def release(self, e: int) -> None:
        if e not in self._used:
            raise ValueError(f"cross-K/V entry {e!r} is not in use (entries are 0..{self.max_entries - 1})")
        self._used.remove(e)
        heapq.heappush(self._free, e)
